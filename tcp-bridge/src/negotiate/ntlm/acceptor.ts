/**
 * The NTLMv2 acceptor over local accounts (accounts.ts), in TypeScript: MS-NLMP 3.2.5 (server), 3.3.2 (NTLMv2), 3.4
 * (session security, session-security.ts), with the rules of docs/contract/windows-security.md.
 *
 * Handshake: NEGOTIATE → CHALLENGE (random server challenge, MsvAvTimestamp and both NetBIOS names in the target info:
 * the timestamp makes Windows and .NET send a MIC, and .NET refuses a CHALLENGE without the two NetBIOS names) →
 * AUTHENTICATE, checked in this order, each failure the same NegotiateError to the client:
 *   the key-free checks of checks.ts on the message (structure, flags, challenge age, anonymous and NTLMv1/LM
 *   refused) · throttling (throttle.ts) · NTProofStr against the account (constant time; the same work for an
 *   unknown user) · the key-free checks of checks.ts on the AV pairs (timestamps, MIC announced, target name, channel
 *   bindings) · the MIC's value, with the exported session key.
 *
 * The CHALLENGE grants what checks.ts requires and, of the rest, only what the client asked among REQUEST_TARGET,
 * SEAL and 56: LM_KEY, DATAGRAM and anonymous logons are never granted. The proof is accepted when computed with the
 * domain the client sent (MS-NLMP 3.3.2), the account line's domain, or no domain (gss-ntlmssp's two tries).
 *
 * Domain accounts (`domain`, BRIDGE_NTLM_DOMAIN; pass-through through ../winbind.ts): an AUTHENTICATE that names no
 * local account and whose domain is that domain's NetBIOS name (or empty) is checked by the domain controller, in
 * this order after the same message checks and throttling: the AV pairs first (the DC is only asked about a response
 * the bridge would accept, so a relayed or replayed message costs it nothing) · the DC's verdict on the NTProofStr,
 * which answers the SessionBaseKey (= KeyExchangeKey for NTLMv2) · the MIC, with the exported session key derived
 * from it, and the session keys, as for a local account. Local accounts are looked up first, so a users-file line
 * wins over a domain account of the same name. The identity is the account as the domain spells it (`CORP\alice`),
 * the SIDs winbind's (the user's, then the groups'). A refusal of the DC counts as a failed logon for the throttle;
 * a DC or winbind that cannot be reached (`winbind.unavailable`) is refused without counting against the user. The
 * CHALLENGE must then carry the member's NetBIOS names (`netbiosComputerName` from smb.conf's `netbios name`,
 * `netbiosDomainName` the domain's): the DC refuses a response made for another computer (see ../winbind.ts).
 */

import { randomBytes } from 'node:crypto';
import {
  IntegrityError,
  NegotiateError,
  normalizePeerName,
  OID,
  type AcceptorInfo,
  type MechanismContext,
  type MicOptions,
  type SecurityBackend,
  type StepResult,
} from '../security-context.ts';
import { WinbindError, type DomainLogon, type WinbindAuthenticator } from '../winbind.ts';
import { accountIdentity, type NtlmAccounts } from './accounts.ts';
import { admitAuthenticate, admitNegotiate, checkNtlmV2Pairs, NTLM_LIMITS } from './checks.ts';
import {
  computeMic,
  constantTimeEqual,
  exportedSessionKey,
  ntowfv2,
  ntProofStr,
  sessionBaseKey,
  upperInvariant,
} from './crypto.ts';
import {
  AvId,
  encodeChallenge,
  encodeFiletime,
  NtlmFlag,
  utf16le,
  type AuthenticateMessage,
  type AvPair,
  type NtlmV2Response,
} from './messages.ts';
import { NtlmSessionSecurity } from './session-security.ts';
import { LogonThrottle } from './throttle.ts';

/** Who checks a domain account's response: the domain controller through winbind (../winbind.ts). */
export type DomainLogons = Pick<WinbindAuthenticator, 'domain' | 'authenticate' | 'close'>;

export interface NtlmBackendOptions {
  accounts: NtlmAccounts;
  /** BRIDGE_NTLM_DOMAIN: pass-through for that domain's accounts; closed with the backend. */
  domain?: DomainLogons;
  /** BRIDGE_DNS_IDENTITY: the server's DNS name; the default SPN is `host/<dnsIdentity>`. */
  dnsIdentity: string;
  /** Target names (SPNs) a client may name in MsvAvTargetName; compared case-insensitively. */
  targetNames?: readonly string[];
  /** Default: the first label of dnsIdentity, upper-cased, at most 15 characters. */
  netbiosComputerName?: string;
  /** Default: the domain's with `domain`, else WORKGROUP (a stand-alone server's local accounts). */
  netbiosDomainName?: string;
  dnsDomainName?: string;
  /** How long a CHALLENGE stays answerable. Default 60 s (NTLM_LIMITS). */
  challengeLifetimeMs?: number;
  throttle?: LogonThrottle;
  /** Largest NEGOTIATE / AUTHENTICATE accepted. Defaults 1 KiB / 8 KiB (NTLM_LIMITS). */
  maxNegotiateBytes?: number;
  maxAuthenticateBytes?: number;
  /** For tests: the clock and the randomness. */
  now?: () => number;
  random?: (size: number) => Uint8Array;
}

export class NtlmBackend implements SecurityBackend {
  readonly name = 'ntlm-local';
  readonly mechanisms = [OID.ntlm] as const;
  readonly throttle: LogonThrottle;
  readonly settings: Required<Omit<NtlmBackendOptions, 'dnsDomainName' | 'domain'>> & {
    dnsDomainName: string | undefined;
    domain: DomainLogons | undefined;
  };
  /** Stands in for an unknown user so that the proof is computed all the same. */
  private readonly decoyHash: Uint8Array;

  constructor(options: NtlmBackendOptions) {
    const random = options.random ?? ((size: number) => new Uint8Array(randomBytes(size)));
    this.throttle = options.throttle ?? new LogonThrottle({ now: options.now });
    this.settings = {
      accounts: options.accounts,
      domain: options.domain,
      dnsIdentity: options.dnsIdentity,
      targetNames: options.targetNames ?? [`host/${options.dnsIdentity}`],
      netbiosComputerName:
        options.netbiosComputerName ??
        upperInvariant(options.dnsIdentity.split('.')[0] ?? options.dnsIdentity).slice(0, 15),
      netbiosDomainName: options.netbiosDomainName ?? options.domain?.domain ?? 'WORKGROUP',
      dnsDomainName: options.dnsDomainName,
      challengeLifetimeMs: options.challengeLifetimeMs ?? NTLM_LIMITS.challengeLifetimeMs,
      throttle: this.throttle,
      maxNegotiateBytes: options.maxNegotiateBytes ?? NTLM_LIMITS.maxNegotiateBytes,
      maxAuthenticateBytes: options.maxAuthenticateBytes ?? NTLM_LIMITS.maxAuthenticateBytes,
      now: options.now ?? Date.now,
      random,
    };
    this.decoyHash = random(16);
  }

  createContext(mechanism: string, info: AcceptorInfo): NtlmAcceptor {
    if (mechanism !== OID.ntlm) throw new NegotiateError('ntlm.mechanism', `${mechanism} is not NTLM`);
    return new NtlmAcceptor(this.settings, this.decoyHash, info);
  }

  /** The accounts and the throttle's counts are plain memory; pass-through's helper process is ended. */
  close(): void {
    this.settings.domain?.close();
  }
}

type AcceptorState = 'negotiate' | 'authenticate' | 'done' | 'failed';

export class NtlmAcceptor implements MechanismContext {
  readonly mechanism = OID.ntlm;
  readonly requireMechListMic = true;
  readonly wrapOverhead = 16;
  private state: AcceptorState = 'negotiate';
  private negotiateBytes: Uint8Array | undefined;
  private challengeBytes: Uint8Array | undefined;
  private serverChallenge: Uint8Array | undefined;
  private timestamp: Uint8Array | undefined;
  private issuedAt = 0;
  private flags = 0;
  private security: NtlmSessionSecurity | undefined;
  private name: string | undefined;
  private sids: readonly string[] = [];

  constructor(
    private readonly settings: NtlmBackend['settings'],
    private readonly decoyHash: Uint8Array,
    private readonly info: AcceptorInfo,
  ) {}

  get established(): boolean {
    return this.state === 'done';
  }

  get peerName(): string | undefined {
    return this.established ? this.name : undefined;
  }

  /** A domain account's SIDs from winbind; none for a local account. */
  get peerSids(): readonly string[] {
    return this.established ? this.sids : [];
  }

  get confidentiality(): boolean {
    return this.established && (this.flags & NtlmFlag.Seal) !== 0;
  }

  get integrity(): boolean {
    return this.established;
  }

  async step(token: Uint8Array): Promise<StepResult> {
    try {
      if (this.state === 'negotiate') return { token: this.challenge(token), done: false };
      if (this.state === 'authenticate') {
        await this.authenticate(token);
        return { done: true };
      }
      throw new NegotiateError('ntlm.state', `no token expected in state ${this.state}`);
    } catch (error) {
      this.state = 'failed';
      this.forget();
      throw error instanceof NegotiateError ? error : new NegotiateError('ntlm.failed', String(error));
    }
  }

  private challenge(token: Uint8Array): Uint8Array {
    const s = this.settings;
    const negotiate = admitNegotiate(token, s.maxNegotiateBytes, this.info.protectionLevel);

    this.flags =
      (NtlmFlag.Unicode |
        NtlmFlag.Ntlm |
        NtlmFlag.Sign |
        NtlmFlag.AlwaysSign |
        NtlmFlag.TargetTypeServer |
        NtlmFlag.ExtendedSessionSecurity |
        NtlmFlag.TargetInfo |
        NtlmFlag.Version |
        NtlmFlag.N128 |
        NtlmFlag.KeyExchange |
        (negotiate.flags & (NtlmFlag.RequestTarget | NtlmFlag.Seal | NtlmFlag.N56))) >>>
      0;
    this.serverChallenge = s.random(8);
    this.issuedAt = s.now();
    this.timestamp = encodeFiletime(this.issuedAt);
    const targetInfo: AvPair[] = [
      { id: AvId.NbDomainName, value: utf16le(s.netbiosDomainName) },
      { id: AvId.NbComputerName, value: utf16le(s.netbiosComputerName) },
      ...(s.dnsDomainName ? [{ id: AvId.DnsDomainName, value: utf16le(s.dnsDomainName) }] : []),
      { id: AvId.DnsComputerName, value: utf16le(s.dnsIdentity) },
      { id: AvId.Timestamp, value: this.timestamp },
    ];
    this.negotiateBytes = token.slice();
    this.challengeBytes = encodeChallenge({
      flags: this.flags,
      serverChallenge: this.serverChallenge,
      targetName: s.netbiosComputerName,
      targetInfo,
    });
    this.state = 'authenticate';
    return this.challengeBytes;
  }

  private async authenticate(token: Uint8Array): Promise<void> {
    const s = this.settings;
    const admitted = admitAuthenticate(token, {
      maxBytes: s.maxAuthenticateBytes,
      ageMs: s.now() - this.issuedAt,
      lifetimeMs: s.challengeLifetimeMs,
      sealing: (this.flags & NtlmFlag.Seal) !== 0,
    });
    if ('reason' in admitted) return this.fail(admitted.reason, admitted.detail, admitted.claimed);
    const { auth, response, claimed } = admitted;
    s.throttle.refuseBlocked(claimed, this.info.remoteAddress);

    const account = s.accounts.find(auth.user, auth.domain);
    if (
      account === undefined &&
      s.domain !== undefined &&
      (auth.domain === '' || upperInvariant(auth.domain) === s.domain.domain)
    ) {
      return this.passThrough(s.domain, auth, response, claimed, token);
    }

    // The proof, with the same work whether or not the account exists (three candidate keys each time).
    const hash = account?.ntHash ?? this.decoyHash;
    const candidates: Array<[string, string]> = account
      ? [
          [auth.user, auth.domain],
          [account.user, account.domain],
          [account.user, ''],
        ]
      : [
          [auth.user, auth.domain],
          [auth.user, auth.domain],
          [auth.user, ''],
        ];
    let responseKey: Uint8Array | undefined;
    for (const [user, domain] of candidates) {
      const key = ntowfv2(hash, user, domain);
      const matches = constantTimeEqual(ntProofStr(key, this.serverChallenge!, response.blob), response.proof);
      if (matches && responseKey === undefined) responseKey = key;
    }
    if (!account || !responseKey)
      return this.fail(
        'ntlm.bad-proof',
        account ? `wrong password for ${claimed}` : `unknown user ${claimed}`,
        claimed,
      );

    // The AV pairs, which the proof just verified (checks.ts): our timestamp, the MIC announced, no relaying.
    const refusal = checkNtlmV2Pairs(auth, response, { timestamp: this.timestamp!, targetNames: s.targetNames });
    if (refusal) this.fail(refusal.reason, refusal.detail, claimed);

    this.establish(sessionBaseKey(responseKey, response.proof), auth, token, claimed, undefined);
    this.name = accountIdentity(account, s.netbiosComputerName);
  }

  /** A domain account: the DC checks the proof (see the header for the order). */
  private async passThrough(
    domain: DomainLogons,
    auth: AuthenticateMessage,
    response: NtlmV2Response,
    claimed: string,
    token: Uint8Array,
  ): Promise<void> {
    const refusal = checkNtlmV2Pairs(auth, response, {
      timestamp: this.timestamp!,
      targetNames: this.settings.targetNames,
    });
    if (refusal) this.fail(refusal.reason, refusal.detail, claimed);
    let logon: DomainLogon;
    try {
      logon = await domain.authenticate({
        user: auth.user,
        domain: auth.domain,
        serverChallenge: this.serverChallenge!,
        ntResponse: auth.ntResponse,
      });
    } catch (error) {
      const reason = error instanceof WinbindError ? error.reason : 'winbind.failed';
      const detail = `${claimed}: ${error instanceof WinbindError ? error.detail : String(error)}`;
      // The domain could not answer: nothing is known against the user.
      if (reason === 'winbind.unavailable') throw new NegotiateError(reason, detail);
      return this.fail(reason, detail, claimed);
    }
    try {
      // The connection may have closed while the DC was asked (dispose() forgot the handshake).
      if (this.state !== 'authenticate' || this.negotiateBytes === undefined)
        throw new NegotiateError('ntlm.disposed', 'the connection closed during the logon');
      this.establish(
        logon.sessionBaseKey,
        auth,
        token,
        claimed,
        `${claimed}: the domain's session key does not verify the MIC`,
      );
    } finally {
      logon.sessionBaseKey.fill(0);
    }
    this.name = normalizePeerName(logon.account);
    this.sids = [logon.userSid, ...logon.groupSids];
  }

  /** A refused AUTHENTICATE: counted against `user` (when known) and the address for the throttle. */
  private fail(reason: string, detail: string | undefined, user: string | undefined): never {
    this.settings.throttle.failed(user, this.info.remoteAddress);
    throw new NegotiateError(reason, detail);
  }

  /**
   * The last step of both paths, from the KeyExchangeKey (NTLMv2's SessionBaseKey): the MIC over the three messages,
   * keyed with the exported session key, then the session keys; the handshake is forgotten.
   */
  private establish(
    keyExchangeKey: Uint8Array,
    auth: AuthenticateMessage,
    token: Uint8Array,
    claimed: string,
    micDetail: string | undefined,
  ): void {
    const exported = exportedSessionKey(keyExchangeKey, auth.encryptedRandomSessionKey);
    try {
      if (!constantTimeEqual(computeMic(exported, this.negotiateBytes!, this.challengeBytes!, token), auth.mic!))
        this.fail('ntlm.bad-mic', micDetail, claimed);
      this.settings.throttle.succeeded(claimed);
      this.security = new NtlmSessionSecurity(exported, 'server', (this.flags & NtlmFlag.Seal) !== 0);
    } finally {
      exported.fill(0);
    }
    this.state = 'done';
    this.forgetHandshake();
  }

  getMic(message: Uint8Array, options?: MicOptions): Uint8Array {
    return this.session().getMic(message, options);
  }

  verifyMic(message: Uint8Array, mic: Uint8Array, options?: MicOptions): void {
    this.session().verifyMic(message, mic, options);
  }

  wrap(plain: Uint8Array): Uint8Array {
    return this.session().wrap(plain);
  }

  unwrap(payload: Uint8Array): Uint8Array {
    return this.session().unwrap(payload);
  }

  dispose(): void {
    this.forget();
    if (this.state !== 'done') this.state = 'failed';
  }

  private session(): NtlmSessionSecurity {
    if (!this.security) throw new IntegrityError('Broken', 'the NTLM context is not established');
    return this.security;
  }

  private forgetHandshake(): void {
    this.negotiateBytes = undefined;
    this.challengeBytes = undefined;
    this.serverChallenge = undefined;
  }

  private forget(): void {
    this.forgetHandshake();
    this.security?.dispose();
  }
}
