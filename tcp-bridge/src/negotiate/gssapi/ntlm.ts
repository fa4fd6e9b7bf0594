/**
 * NTLM through gss-ntlmssp (GssapiNtlmContext, BRIDGE_NTLM_BACKEND=gssapi): the MIT mechanism plugin (Debian package
 * gss-ntlmssp) checks the logons against the users file, behind a gate that applies the rules the library lacks.
 * Measured against Debian 12's gss-ntlmssp 1.2.0 (`/usr/lib/x86_64-linux-gnu/gssntlmssp/gssntlmssp.so`, loaded by
 * MIT through `/etc/gss/mech.d/mech.ntlmssp.conf`), its source read at tag v1.2.0 and compared with master. How the
 * library is handed the accounts (the credential store) is backend.ts's.
 *
 * What the library enforces (`gss_sec_ctx.c`, `gss_auth.c`, `ntlm_crypto.c`): the NTLMv2 proof against the file's
 * password (user name case-insensitive; NTOWFv2 with the file's domain, then with none, so a client that types the
 * domain in another case than the file is refused, where ../ntlm/acceptor.ts also tries the client's spelling);
 * NTLMv1 refused at the default `LM_COMPAT_LEVEL` 3 in the stand-alone server role; anonymous logons refused; the MIC
 * *when MsvAvFlags announces one*; session keys, RC4 sealing and signatures with sequence numbers (a tampered or
 * reordered frame fails). It reads the users file again at each logon (a changed password counts at once).
 *
 * What it does not, and the gate adds, on each message before the library sees it:
 * - the key-free rules of ../ntlm/checks.ts, through its functions, so the reasons in the log are the same as the
 *   TypeScript acceptor's. Of these the library lacks: the flags a client must offer (it has no minimum), the MIC
 *   required (impacket sends none and the library would accept that), the client's timestamp equal to the
 *   CHALLENGE's (the library never looks at it) and the CHALLENGE expiring after 60 s, MsvAvTargetName among our
 *   SPNs, channel bindings absent or zero, NTLMv1 refused in every role (as a domain member, `NETBIOS_DOMAIN_NAME` set
 *   or winbindd running, the library "defers to the DC" and takes v1 and LMv2), a 16-byte EncryptedRandomSessionKey
 *   (see "Found here");
 * - throttling per claimed user and per source address (../ntlm/throttle.ts);
 * - the CHALLENGE the library wrote must grant the required flags whatever `LM_COMPAT_LEVEL` says, and carry the
 *   MsvAvTimestamp the client must echo (checkChallenge);
 * - LmChallengeResponse all zero (`ntlm.lm-response`): otherwise a domain member falls back to LMv2, whose proof covers
 *   neither MsvAvFlags nor the timestamp, so the MIC could be stripped;
 * - a 32-byte NEGOTIATE (no Version field: impacket, older clients) is refused as `ntlm.negotiate-no-version`: 1.2.0
 *   cannot read it (it requires 40 bytes), and padding it is no way out, the client's MIC covers the NEGOTIATE as sent;
 * - the sequence number of each frame compared before the library is asked, so a reordered frame is told
 *   (`OutOfSequence`) from a forged one.
 *
 * What stays the library's, documented not enforced: its comparisons of proofs, MICs and signatures are memcmp, not
 * constant-time; an unknown user costs less than a wrong password (no NTOWFv2 is computed); a context expires 36 hours
 * after logon (gss_wrap then fails and the connection is dropped; the client reconnects).
 *
 * Found here. 1.2.0 (and master) copies 16 bytes from the AUTHENTICATE's EncryptedRandomSessionKey field whatever its
 * length, once the proof is right: a zero-length field is a NULL dereference that killed the test process. Only a
 * client that knows a password, or a man in the middle of such a client's logon (the field is outside the proof; the
 * MIC that covers it is checked only afterwards), can send it, but it takes every connection down: the gate refuses
 * any length but 16 (test/bridge/negotiate/gss-ntlm.peers.test.ts fuzzes 400 mutated NEGOTIATE/AUTHENTICATE messages
 * through the backend with no crash; 6000 ran clean while writing it).
 *
 * Interoperability of 1.2.0: its CHALLENGE carries an empty MsvAvFlags pair (1.3.1 stopped sending it; the notes
 * advise against it) and an MsvAvTargetName, so initiators that append their own pairs instead of replacing the
 * server's are refused by the gate for a repeated pair. Peer names come from gss_display_name as the client typed
 * them, with a trailing NUL: the NUL is dropped and the name mapped to the users file's line, as the TypeScript
 * acceptor names it (../ntlm/accounts.ts); a name the file read at start does not hold (a line added since) is taken
 * as sent, normalized.
 *
 * Protection:
 * - mechListMIC: gss_get_mic / gss_verify_mic with sequence number 0, then the RC4 handle of that direction is reset
 *   through gss_set_sec_context_option with gss-ntlmssp's reset-crypto OID (1.3.6.1.4.1.7165.655.1.3), as MIT's
 *   SPNEGO does, so the first data frame carries sequence number 1 and the keystream starts afresh (MS-SPNG 3.3.5.1).
 * - Data frames: gss_wrap always seals, even without SEAL; signed-only frames in MS-NLMP's form (signature ‖
 *   plaintext, what Windows SSPI sends under ProtectionLevel.Sign) are gss_get_mic / gss_verify_mic over the
 *   plaintext. Without SEAL the first frame tells which form the client uses, as in ../ntlm/session-security.ts: the
 *   context is exported and imported twice (gss_export_sec_context) to try both forms on copies, since a failed try
 *   moves the library's RC4 handle and sequence number; the token holding the keys is zeroed before it is freed. The
 *   form that verified is kept for the session.
 */

import { ConfigError } from '#idb';
import {
  accountIdentity,
  admitAuthenticate,
  admitNegotiate,
  AvId,
  checkNtlmV2Pairs,
  NTLM_LIMITS,
  NtlmAccounts,
  NtlmFlag,
  parseChallenge,
  requiredFlags,
  SIGNATURE_SIZE,
  signatureProblem,
  type LogonThrottle,
  type SignOnlyForm,
} from '../ntlm/index.ts';
import {
  NegotiateError,
  normalizePeerName,
  OID,
  type AcceptorInfo,
  type MicOptions,
  type StepResult,
} from '../security-context.ts';
import { GssapiContext, type Accepted } from './context.ts';
import {
  deleteContext,
  GSS_S_CONTINUE_NEEDED,
  GssFlag,
  isError,
  NativeBlock,
  type GssLibrary,
  type Ptr,
} from './ffi.ts';

/** gss-ntlmssp's minor codes (errno values) behind the NTLM refusals of gss_accept_sec_context. */
const NTLM_MINOR = { noAccount: 2 /* ENOENT */, badMic: 13 /* EACCES */, badProof: 22 /* EINVAL */ } as const;

/** What the NTLM gate of each context needs from its backend. */
export interface NtlmGateSettings {
  accounts: NtlmAccounts;
  targetNames: readonly string[];
  throttle: LogonThrottle;
  challengeLifetimeMs: number;
  now: () => number;
}

/**
 * BRIDGE_NTLM_USERS for gss-ntlmssp: the checks of NtlmAccounts.load (a secret file of `DOMAIN:user:password` lines),
 * and a ConfigError for lines gss-ntlmssp 1.2 reads otherwise than ../ntlm/accounts.ts does: `{NT}` hashes (taken for
 * passwords), passwords with `:` (read as smbpasswd format, or skipped) and lines over 1000 bytes (read through a
 * 1 KiB buffer).
 */
export function loadGssNtlmUsers(path: string): NtlmAccounts {
  return NtlmAccounts.load(path, ({ number, text, secret }) => {
    const where = `BRIDGE_NTLM_USERS line ${number}`;
    if (secret.startsWith('{NT}')) {
      throw new ConfigError(
        `${where}: gss-ntlmssp reads {NT} hashes as passwords; write the password, or keep BRIDGE_NTLM_BACKEND=typescript`,
      );
    }
    if (secret.includes(':'))
      throw new ConfigError(
        `${where}: gss-ntlmssp cannot read a password with ":"; keep BRIDGE_NTLM_BACKEND=typescript for it`,
      );
    if (Buffer.byteLength(text) > 1000) throw new ConfigError(`${where}: longer than gss-ntlmssp reads (1000 bytes)`);
  });
}

/**
 * NTLM through gss-ntlmssp, behind the gate described at the top of this file. Its states: `negotiate` (the next
 * token is the NEGOTIATE), `authenticate` (the library answered with a CHALLENGE), then established.
 */
export class GssapiNtlmContext extends GssapiContext {
  readonly requireMechListMic = true;
  readonly wrapOverhead = SIGNATURE_SIZE;
  private leg: 'negotiate' | 'authenticate' = 'negotiate';
  private issuedAt = 0;
  /** The CHALLENGE's MsvAvTimestamp, its SEAL flag and NetBIOS computer name. */
  private challenge: { timestamp: Uint8Array; sealing: boolean; netbiosName: string } | undefined;
  /** `DOMAIN\user` as the AUTHENTICATE claims it, for throttling. */
  private claimed: string | undefined;
  /** The sequence number the client's next signature must carry. */
  private receiveSeq = 0;
  /** Without SEAL: the form of the client's frames, once its first frame told (see unwrap). */
  private form: SignOnlyForm | undefined;

  constructor(
    lib: GssLibrary,
    cred: Ptr,
    info: AcceptorInfo,
    private readonly gate: NtlmGateSettings,
    onRelease: () => void,
  ) {
    super(lib, cred, OID.ntlm, info, 'NTLM', onRelease);
  }

  get confidentiality(): boolean {
    return this.established && (this.flags & GssFlag.Conf) !== 0;
  }

  protected override admit(token: Uint8Array): void {
    const gate = this.gate;
    if (this.leg === 'negotiate') {
      admitNegotiate(token, NTLM_LIMITS.maxNegotiateBytes, this.info.protectionLevel);
      if (token.length < 40)
        throw new NegotiateError(
          'ntlm.negotiate-no-version',
          `a ${token.length}-byte NEGOTIATE, which gss-ntlmssp 1.2 cannot read`,
        );
      return;
    }
    const admitted = admitAuthenticate(token, {
      maxBytes: NTLM_LIMITS.maxAuthenticateBytes,
      ageMs: gate.now() - this.issuedAt,
      lifetimeMs: gate.challengeLifetimeMs,
      sealing: this.challenge!.sealing,
    });
    this.claimed = admitted.claimed;
    if ('reason' in admitted) throw new NegotiateError(admitted.reason, admitted.detail);
    gate.throttle.refuseBlocked(admitted.claimed, this.info.remoteAddress);
    const refusal = checkNtlmV2Pairs(admitted.auth, admitted.response, {
      timestamp: this.challenge!.timestamp,
      targetNames: gate.targetNames,
    });
    if (refusal) throw new NegotiateError(refusal.reason, refusal.detail);
    // With MsvAvTimestamp in the CHALLENGE a client sends Z(24) as LmChallengeResponse (MS-NLMP 3.1.5.1.2).
    if (admitted.auth.lmResponse.some((b) => b !== 0))
      throw new NegotiateError('ntlm.lm-response', 'an LMv2 response beside the NTLMv2 one');
  }

  protected override failedStep(error: NegotiateError): void {
    if (this.leg !== 'authenticate' || error.reason === 'ntlm.throttled' || error.reason === 'gssapi.disposed') return;
    this.gate.throttle.failed(this.claimed, this.info.remoteAddress);
  }

  protected refusal(major: number, minor: number): NegotiateError {
    const detail = this.statusText(major, minor);
    if (this.leg === 'authenticate') {
      if (minor === NTLM_MINOR.noAccount)
        return new NegotiateError('gssapi.bad-proof', `unknown user ${this.claimed}: ${detail}`);
      if (minor === NTLM_MINOR.badProof)
        return new NegotiateError('gssapi.bad-proof', `wrong password for ${this.claimed}: ${detail}`);
      if (minor === NTLM_MINOR.badMic) return new NegotiateError('gssapi.bad-mic', `${this.claimed}: ${detail}`);
    }
    return new NegotiateError('gssapi.refused', detail);
  }

  protected finish({ major, output, peer, mechanism, flags }: Accepted): StepResult {
    const more = (major & GSS_S_CONTINUE_NEEDED) !== 0;
    // MIT's mechanism glue names the mechanism once the context is complete (none with the CHALLENGE).
    if (mechanism !== OID.ntlm && (!more || mechanism !== undefined))
      throw new NegotiateError('gssapi.mechanism', `the library chose ${mechanism ?? 'no mechanism'}`);
    if (this.leg === 'negotiate') {
      if (!more || output.length === 0) throw new NegotiateError('gssapi.refused', 'no CHALLENGE after the NEGOTIATE');
      this.checkChallenge(output);
      this.issuedAt = this.gate.now();
      this.leg = 'authenticate';
      return { token: output, done: false };
    }
    if (more) throw new NegotiateError('gssapi.refused', 'continue needed after the AUTHENTICATE');
    if ((flags & GssFlag.Anon) !== 0) throw new NegotiateError('ntlm.anonymous', 'an anonymous logon');
    if (peer === undefined || peer === '') throw new NegotiateError('gssapi.refused', 'no peer name');
    this.flags = flags;
    this.name = this.identity(peer);
    this.gate.throttle.succeeded(this.claimed!);
    this.state = 'done';
    return output.length > 0 ? { token: output, done: true } : { done: true };
  }

  /**
   * The CHALLENGE the library wrote must grant what ../ntlm/checks.ts requires (LM_COMPAT_LEVEL below 3, or a client
   * that did not offer it, would make gss-ntlmssp settle for less) and carry the MsvAvTimestamp the client must echo.
   */
  private checkChallenge(bytes: Uint8Array): void {
    const challenge = parseChallenge(bytes);
    if (!challenge) throw new NegotiateError('gssapi.refused', 'the library wrote no readable CHALLENGE');
    const required = requiredFlags(this.info.protectionLevel);
    if ((challenge.flags & required) !== required) {
      throw new NegotiateError(
        'ntlm.weak-flags',
        `gss-ntlmssp granted flags 0x${(challenge.flags >>> 0).toString(16)} (LM_COMPAT_LEVEL below 3?)`,
      );
    }
    const pair = (id: number): Uint8Array | undefined => challenge.targetInfo.find((p) => p.id === id)?.value;
    const timestamp = pair(AvId.Timestamp);
    if (timestamp === undefined || timestamp.length !== 8)
      throw new NegotiateError('gssapi.refused', 'the CHALLENGE has no MsvAvTimestamp');
    const netbios = pair(AvId.NbComputerName);
    this.challenge = {
      timestamp: timestamp.slice(),
      sealing: (challenge.flags & NtlmFlag.Seal) !== 0,
      netbiosName: netbios === undefined ? '' : new TextDecoder('utf-16le').decode(netbios),
    };
  }

  /** `DOMAIN\user` from the library's name (trailing NUL dropped), as the users file's line writes it. */
  private identity(display: string): string {
    const shown = display.replace(/\0+$/, '').trim();
    const slash = shown.indexOf('\\');
    const account = this.gate.accounts.find(shown.slice(slash + 1), slash > 0 ? shown.slice(0, slash) : '');
    return account === undefined ? normalizePeerName(shown) : accountIdentity(account, this.challenge!.netbiosName);
  }

  /** SPNEGO's mechListMIC (sequence number 0), then the send handle's RC4 reset (MS-SPNG 3.3.5.1). */
  getMic(message: Uint8Array, options?: MicOptions): Uint8Array {
    const mic = this.gssGetMic(message);
    if (options?.mechListMic) this.resetCrypto('send');
    return mic;
  }

  verifyMic(message: Uint8Array, mic: Uint8Array, options?: MicOptions): void {
    this.checkSignature(mic);
    this.gssVerifyMic(message, mic);
    this.receiveSeq++;
    if (options?.mechListMic) this.resetCrypto('receive');
  }

  private resetCrypto(direction: 'send' | 'receive'): void {
    const context = this.ready();
    // minor 0 · context 8 · value desc 16 · value 32
    const block = new NativeBlock(this.lib.koffi, 40);
    try {
      block.setPtr(8, context);
      block.setBuffer(16, 32, Uint8Array.of(direction === 'receive' ? 1 : 0, 0, 0, 0)); // a uint32: 1 resets the verifier
      const status = this.lib.setSecContextOption(
        block.at(0),
        block.at(8),
        this.lib.oids.ntlmResetCrypto,
        block.at(16),
      );
      if (isError(status))
        throw this.broken(
          'Broken',
          `gss_set_sec_context_option (reset crypto): ${this.statusText(status, block.u32(0))}`,
        );
    } finally {
      block.free();
    }
  }

  /** The sealed form when SEAL was negotiated or the client used it; MS-NLMP's signature ‖ plaintext otherwise. */
  wrap(plain: Uint8Array): Uint8Array {
    if (this.confidentiality || this.form === 'sealed') return this.gssWrap(plain, true);
    const signature = this.gssGetMic(plain);
    const out = new Uint8Array(signature.length + plain.length);
    out.set(signature);
    out.set(plain, signature.length);
    return out;
  }

  unwrap(payload: Uint8Array): Uint8Array {
    this.ready();
    if (payload.length <= SIGNATURE_SIZE)
      throw this.broken('Malformed', `a ${payload.length}-byte payload holds no NTLM signature and data`);
    const signature = payload.subarray(0, SIGNATURE_SIZE);
    this.checkSignature(signature);
    let plain: Uint8Array;
    if (this.confidentiality || this.form === 'sealed') plain = this.gssUnwrap(payload).plain;
    else if (this.form === 'plain') {
      this.gssVerifyMic(payload.subarray(SIGNATURE_SIZE), signature);
      plain = payload.slice(SIGNATURE_SIZE);
    } else plain = this.firstSignedFrame(payload);
    this.receiveSeq++;
    return plain;
  }

  /** Version 1 and the sequence number due, before the library is asked (it would only say "bad signature"). */
  private checkSignature(signature: Uint8Array): void {
    this.ready();
    const problem = signatureProblem(signature, this.receiveSeq);
    if (problem) throw this.broken(problem.kind, problem.message);
  }

  /**
   * A signing-only context's first frame: MS-NLMP's form (Windows SSPI) or sealed (gss-ntlmssp, .NET's managed NTLM).
   * Each try moves the library's RC4 handle and sequence number, so both run on copies of the context
   * (gss_export_sec_context, gss_import_sec_context twice) and the one whose form verified is kept.
   */
  private firstSignedFrame(payload: Uint8Array): Uint8Array {
    const [plainCopy, sealedCopy] = this.copies();
    const body = payload.subarray(SIGNATURE_SIZE);
    if (!isError(this.verifyMicStatus(plainCopy, body, payload.subarray(0, SIGNATURE_SIZE)).status)) {
      this.handle.context = plainCopy;
      deleteContext(this.lib, { context: sealedCopy });
      this.form = 'plain';
      return body.slice();
    }
    deleteContext(this.lib, { context: plainCopy });
    this.handle.context = sealedCopy;
    const { plain } = this.gssUnwrap(payload);
    this.form = 'sealed';
    return plain;
  }

  /** Two copies of the context through an exported token (the original is gone after the export). */
  private copies(): [Ptr, Ptr] {
    const lib = this.lib;
    // minor 0 · context 8 · token desc 16 · copy 32 · copy 40
    const block = new NativeBlock(lib.koffi, 48);
    try {
      block.setPtr(8, this.handle.context);
      const exported = lib.exportSecContext(block.at(0), block.at(8), block.at(16));
      this.handle.context = block.ptr(8);
      if (isError(exported))
        throw this.broken('Broken', `gss_export_sec_context: ${this.statusText(exported, block.u32(0))}`);
      const first = lib.importSecContext(block.at(0), block.at(16), block.at(32));
      const second = isError(first) ? first : lib.importSecContext(block.at(0), block.at(16), block.at(40));
      const minor = block.u32(0);
      // The token holds the session keys: zeroed before the library frees it.
      const length = Number(block.ptr(16));
      const value = block.ptr(24);
      if (value !== 0n && length > 0) new Uint8Array(lib.koffi.view(value, length)).fill(0);
      if (value !== 0n) lib.releaseBuffer(block.at(0), block.at(16));
      if (isError(first) || isError(second)) {
        deleteContext(lib, { context: block.ptr(32) });
        throw this.broken(
          'Broken',
          `gss_import_sec_context: ${this.statusText(isError(first) ? first : second, minor)}`,
        );
      }
      return [block.ptr(32), block.ptr(40)];
    } finally {
      block.free();
    }
  }
}
