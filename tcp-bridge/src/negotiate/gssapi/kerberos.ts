/**
 * Kerberos through the GSSAPI backend (GssapiKerberosContext): it offers `1.2.840.48018.1.2.2` (Microsoft's OID,
 * which Windows lists first) and `1.2.840.113554.1.2.2`, and SPNEGO answers with the OID the client chose. It takes
 * the RFC 2743 framed AP-REQ (from SPNEGO, or raw) and answers with the AP-REP; the acceptor credential and the
 * keytab are backend.ts's.
 *
 * - What Kerberos enforces, the library does: ticket and authenticator decryption, clock skew (krb5.conf
 *   `clockskew`, 300 s by default: keep the host's clock in sync with the domain), ticket times, the replay cache
 *   (MIT's; refused at start when switched off, see backend.ts), the wrap tokens' checksums, direction flag and, when
 *   the client asked for them, sequence and replay detection. On top of that the context requires:
 *   - mutual authentication (GSS_C_MUTUAL_FLAG), which .NET's NegotiateStream always requests unless
 *     ProtectionLevel.None: the client thus verifies the bridge through the AP-REP (`requireMutualAuth: false`
 *     lifts this);
 *   - no anonymous principal (GSS_C_ANON_FLAG), a Kerberos mechanism as the result, a peer name;
 *   - strict ordering of what the client protects. .NET asks for sequence detection only under Sign (EncryptAndSign
 *     sets Confidentiality alone), so MIT would otherwise let a replayed or reordered frame of the same session
 *     through. Every RFC 4121 wrap token carries SND_SEQ in a header the library authenticates; after a successful
 *     gss_unwrap the next data frame must carry exactly the previous + 1 (the first data frame sets the start; see
 *     checkSequence). Older RFC 1964 tokens (RC4-HMAC, DES keys) encrypt their sequence number: for those only the
 *     library's own detection applies, when the client asked for it.
 * - The protection level is the context's flags, as .NET reads them: confidentiality = GSS_C_CONF_FLAG (MIT and
 *   Windows initiators set it whenever they can seal). Under EncryptAndSign every incoming frame must be sealed
 *   (conf_state); under Sign signed-only frames are accepted too. Outgoing frames are sealed when the context has
 *   confidentiality, as a .NET server on Linux does.
 * - Wrap tokens: MIT writes RRC 0; gss_unwrap takes any RRC, so Windows' rotated tokens (RRC 28 sealed) are read as
 *   they are. The largest frame .NET sends (63 KiB of plaintext) wraps to 64 572 bytes, within the 64 KiB NNS
 *   accepts; `wrapOverhead` is gss_wrap_size_limit's figure, but at least 72 bytes (see computeOverhead).
 * - Peer names are `user@REALM` (kerberosPeerName), with or without a PAC: an identity in the roles file does not
 *   change when the KDC is Active Directory. Refusal reasons in the log: `gssapi.replay`, `gssapi.clock-skew`,
 *   `gssapi.ticket-expired`, `gssapi.wrong-service`, `gssapi.wrong-key`, `gssapi.not-mutual`, `gssapi.anonymous`,
 *   `gssapi.bad-pac`, `gssapi.refused`.
 * - Groups (peerSids) come from the ticket's PAC as MIT exposes it on the peer's name (RFC 6680 naming extensions,
 *   read before the name is released): `urn:mspac:logon-info`, the KERB_VALIDATION_INFO that ../pac.ts decodes into
 *   the user's SID and the enabled group SIDs, nested groups expanded by the KDC. The library verifies the PAC's
 *   server checksum with the service key and that it names the ticket's client; it hides a PAC that fails
 *   (GSS_S_UNAVAILABLE) and says `authenticated` for one that passes. So: no attribute (an MIT KDC's ticket, or an
 *   unverified PAC) means no SIDs, and a value that is not `authenticated` is not used either (fail closed: name-only
 *   roles still apply). A verified PAC that pac.ts cannot decode refuses the logon (`gssapi.bad-pac`), so a decoding
 *   gap shows in the log instead of silently taking a user's groups away.
 */

import { decodeLogonInfo, PacError, pacIdentity } from '../pac.ts';
import { NegotiateError, OID, type AcceptorInfo, type MicOptions, type StepResult } from '../security-context.ts';
import { GssapiContext, type Accepted } from './context.ts';
import {
  GSS_S_CONTINUE_NEEDED,
  GssFlag,
  isError,
  nameAttribute,
  NativeBlock,
  SEQUENCE_PROBLEMS,
  type GssLibrary,
  type Ptr,
} from './ffi.ts';

/** krb5 com_err codes (krb5_err.et: ERROR_TABLE_BASE_krb5 + index) behind the refusal reasons. */
const KRB5_BASE = -1765328384;
const KRB5_REASONS = new Map<number, string>([
  [KRB5_BASE + 31, 'gssapi.wrong-key'], // KRB5KRB_AP_ERR_BAD_INTEGRITY
  [KRB5_BASE + 32, 'gssapi.ticket-expired'], // KRB5KRB_AP_ERR_TKT_EXPIRED
  [KRB5_BASE + 33, 'gssapi.ticket-expired'], // KRB5KRB_AP_ERR_TKT_NYV
  [KRB5_BASE + 34, 'gssapi.replay'], // KRB5KRB_AP_ERR_REPEAT
  [KRB5_BASE + 35, 'gssapi.wrong-service'], // KRB5KRB_AP_ERR_NOT_US
  [KRB5_BASE + 36, 'gssapi.wrong-service'], // KRB5KRB_AP_ERR_BADMATCH
  [KRB5_BASE + 37, 'gssapi.clock-skew'], // KRB5KRB_AP_ERR_SKEW
  [KRB5_BASE + 41, 'gssapi.wrong-key'], // KRB5KRB_AP_ERR_MODIFIED
  [KRB5_BASE + 44, 'gssapi.wrong-key'], // KRB5KRB_AP_ERR_BADKEYVER
  [KRB5_BASE + 45, 'gssapi.wrong-key'], // KRB5KRB_AP_ERR_NOKEY
]);

/**
 * `user@REALM` as gss_display_name writes a principal, with the realm upper-cased (as normalizePeerName does). Never
 * read as `DOMAIN\user`: a backslash in a Kerberos name escapes the next character (`user\@upn.example@REALM`, an
 * enterprise principal), so the realm follows the last unescaped `@`.
 */
export function kerberosPeerName(display: string): string {
  const name = display.replace(/\0+$/, '').trim();
  let at = -1;
  for (let i = 0; i < name.length; i++) {
    if (name[i] === '\\') i++;
    else if (name[i] === '@') at = i;
  }
  return at > 0 ? `${name.slice(0, at)}@${name.slice(at + 1).toUpperCase()}` : name;
}

/**
 * The SIDs of a verified PAC on the peer's name `name`: the user's, then the enabled groups' (see the header). Empty
 * without a verified PAC; NegotiateError `gssapi.bad-pac` for one pac.ts cannot read.
 */
function pacSids(lib: GssLibrary, name: Ptr): readonly string[] {
  const logonInfo = nameAttribute(lib, name, 'urn:mspac:logon-info');
  if (!logonInfo.found || !logonInfo.authenticated) return [];
  try {
    const identity = pacIdentity(decodeLogonInfo(logonInfo.value));
    return [identity.userSid, ...identity.groupSids.filter((sid) => sid !== identity.userSid)];
  } catch (error) {
    if (error instanceof PacError) throw new NegotiateError('gssapi.bad-pac', error.message);
    throw error;
  }
}

/** RFC 4121 wrap token id: its header carries SND_SEQ (big-endian) at bytes 8..15. */
const CFX_WRAP = 0x0504;
const CFX_SENT_BY_ACCEPTOR = 0x01;
/** See computeOverhead. */
const MIN_WRAP_OVERHEAD = 72;

export class GssapiKerberosContext extends GssapiContext {
  readonly requireMechListMic = false;
  private overhead = 0;
  /** The SND_SEQ the client's next token must carry (undefined until the first verified token). */
  private nextSeq: bigint | undefined;

  constructor(
    lib: GssLibrary,
    cred: Ptr,
    mechanism: string,
    info: AcceptorInfo,
    private readonly requireMutualAuth: boolean,
    onRelease: () => void,
  ) {
    super(lib, cred, mechanism, info, 'Kerberos', onRelease);
  }

  get confidentiality(): boolean {
    return this.established && (this.flags & GssFlag.Conf) !== 0;
  }

  get wrapOverhead(): number {
    return this.overhead;
  }

  protected override peerSidsOf(name: Ptr): readonly string[] {
    return pacSids(this.lib, name);
  }

  protected refusal(major: number, minor: number): NegotiateError {
    return new NegotiateError(KRB5_REASONS.get(minor | 0) ?? 'gssapi.refused', this.statusText(major, minor));
  }

  protected finish({ major, output, peer, sids, mechanism, flags }: Accepted): StepResult {
    if (mechanism !== OID.kerberos && mechanism !== OID.kerberosMicrosoft)
      throw new NegotiateError('gssapi.mechanism', `the library chose ${mechanism ?? 'no mechanism'}`);
    if ((major & GSS_S_CONTINUE_NEEDED) !== 0) {
      if (output.length === 0) throw new NegotiateError('gssapi.refused', 'continue needed without a token');
      return { token: output, done: false };
    }
    if ((flags & GssFlag.Anon) !== 0) throw new NegotiateError('gssapi.anonymous', 'an anonymous principal');
    if (this.requireMutualAuth && (flags & GssFlag.Mutual) === 0)
      throw new NegotiateError('gssapi.not-mutual', 'the client did not ask for mutual authentication');
    if (peer === undefined || peer === '') throw new NegotiateError('gssapi.refused', 'no peer name');
    this.flags = flags;
    this.name = kerberosPeerName(peer);
    this.sids = sids;
    this.state = 'done';
    this.overhead = this.computeOverhead();
    return output.length > 0 ? { token: output, done: true } : { done: true };
  }

  /**
   * What gss_wrap adds at most. MIT 1.20's gss_wrap_size_limit under-reports sealed RFC 4121 tokens (28 bytes for
   * AES, where a wrap adds 60: header, confounder, encrypted header copy, HMAC), so its figure is only taken when it
   * is larger than 72, the most an RFC 4121 or RFC 4757 token adds with any enctype MIT offers (AES-SHA2-384's
   * 24-byte HMAC included).
   */
  private computeOverhead(): number {
    const block = new NativeBlock(this.lib.koffi, 16);
    try {
      const limit = 0xfc30;
      const status = this.lib.wrapSizeLimit(
        block.at(0),
        this.handle.context,
        this.confidentiality ? 1 : 0,
        0,
        limit,
        block.at(8),
      );
      const max = block.u32(8);
      const reported = isError(status) || max > limit ? 0 : limit - max;
      return Math.max(reported, MIN_WRAP_OVERHEAD);
    } finally {
      block.free();
    }
  }

  getMic(message: Uint8Array, _options?: MicOptions): Uint8Array {
    return this.gssGetMic(message);
  }

  verifyMic(message: Uint8Array, mic: Uint8Array, _options?: MicOptions): void {
    const status = this.gssVerifyMic(message, mic);
    // The library's sequence bits only: our own order starts at the first data frame (see checkSequence).
    if ((status & SEQUENCE_PROBLEMS) !== 0)
      throw this.broken('OutOfSequence', `gss_verify_mic status 0x${(status >>> 0).toString(16)}`);
  }

  wrap(plain: Uint8Array): Uint8Array {
    return this.gssWrap(plain, this.confidentiality);
  }

  unwrap(payload: Uint8Array): Uint8Array {
    const { plain, conf, status } = this.gssUnwrap(payload);
    if (this.info.protectionLevel === 'EncryptAndSign' && !conf) {
      plain.fill(0);
      throw this.broken('Malformed', 'a signed-only frame where EncryptAndSign is required');
    }
    this.checkSequence(status, payload);
    return plain;
  }

  /**
   * After the library verified a data frame: its supplementary sequence bits (when the client asked for detection),
   * then our own strict order on the RFC 4121 SND_SEQ, which the library has authenticated by then (the checksum
   * covers the header of a signed token; for a sealed one the library compares it with the encrypted copy). The
   * first data frame sets the start: the mechListMIC does not, as initiators need not count it alike. An attacker
   * who withholds the first frames gains nothing either: the first frame holds the rest of the NMF preamble, without
   * which the framing layer faults.
   */
  private checkSequence(major: number, token: Uint8Array): void {
    if ((major & SEQUENCE_PROBLEMS) !== 0)
      throw this.broken(
        'OutOfSequence',
        `gss_unwrap status 0x${(major >>> 0).toString(16)} (duplicate, old, unsequenced or gap)`,
      );
    if (token.length < 16 || ((token[0]! << 8) | token[1]!) !== CFX_WRAP) return; // RFC 1964 token: the library's checks only
    if ((token[2]! & CFX_SENT_BY_ACCEPTOR) !== 0) throw this.broken('BadSignature', 'a token sent by the acceptor'); // the library refuses these too
    const seq = new DataView(token.buffer, token.byteOffset, 16).getBigUint64(8, false);
    if (this.nextSeq !== undefined && seq !== this.nextSeq)
      throw this.broken('OutOfSequence', `sequence number ${seq}, ${this.nextSeq} expected`);
    this.nextSeq = (seq + 1n) & 0xffffffffffffffffn;
  }
}
