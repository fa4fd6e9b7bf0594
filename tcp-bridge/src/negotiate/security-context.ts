/**
 * What every acceptor backend implements, so that NegotiateStream (stream.ts) and SPNEGO (spnego.ts) stay the same
 * whichever mechanism runs underneath: the TypeScript NTLMv2 acceptor over local accounts (ntlm/), and the system
 * GSSAPI through koffi for Kerberos and, with BRIDGE_NTLM_BACKEND=gssapi, NTLM through gss-ntlmssp (gssapi/).
 *
 * A backend hands out one `MechanismContext` per handshake; SPNEGO drives it with the inner mechanism tokens and uses
 * `getMic`/`verifyMic` for the mechListMIC; once established, NegotiateStream protects every data frame with `wrap`
 * and checks every incoming one with `unwrap`.
 *
 * Contract for implementations:
 * - `step` is async so a backend may leave the event loop (gss_accept_sec_context can read a keytab and a replay
 *   cache). `getMic`, `verifyMic`, `wrap` and `unwrap` are synchronous: they are pure computations in every backend
 *   (gss_wrap/gss_unwrap do no I/O), and keeping them synchronous keeps the frames of one connection in order.
 * - A refused handshake rejects `step` with `NegotiateError`. Its `reason` is for the server's log only: the client
 *   gets the same logon-denied status (`LOGON_DENIED`) whatever went wrong, so a failure tells an attacker nothing.
 * - `unwrap` and `verifyMic` throw `IntegrityError` on a bad signature, a sequence number out of order or a malformed
 *   token. After one, the context is broken for good (its keystream or sequence state is no longer trustworthy):
 *   every later call throws, and the caller drops the connection.
 * - `wrap` protects as negotiated: sealed (encrypted and signed) when `confidentiality` is true, otherwise signed.
 * - `peerName` is normalized: `DOMAIN\user` for NTLM accounts, `user@REALM` for Kerberos principals.
 * - `peerSids` are what the domain vouched for at this logon, the user's SID first, then the enabled groups' (nested
 *   ones included): the verified PAC of a Kerberos ticket, winbind's answer for a domain account over NTLM. Empty for
 *   local accounts and tickets without a (verified) PAC: no groups rather than guessed ones.
 */

/** The protection NegotiateStream asks of a client (WCF's ProtectionLevel, BRIDGE_PROTECTION_LEVEL). */
export type ProtectionLevel = 'Sign' | 'EncryptAndSign';

export const OID = {
  spnego: '1.3.6.1.5.5.2',
  ntlm: '1.3.6.1.4.1.311.2.2.10',
  kerberos: '1.2.840.113554.1.2.2',
  /** The Kerberos OID with the historical Microsoft typo that Windows lists first; the same mechanism. */
  kerberosMicrosoft: '1.2.840.48018.1.2.2',
} as const;

/** SEC_E_LOGON_DENIED: the one status a refused client is told (MS-NNS HandshakeError payload). */
export const LOGON_DENIED = 0x8009030c;

export interface StepResult {
  /** The token to send back, if the mechanism produced one. */
  token?: Uint8Array;
  /** The context is established (on this side). */
  done: boolean;
}

export interface MicOptions {
  /**
   * The MIC is SPNEGO's mechListMIC. NTLM restores its RC4 handle around it (MS-SPNG 3.3.5.1), so the first
   * application message sees the same keystream as the mechListMIC while its sequence number goes on counting.
   */
  mechListMic?: boolean;
}

/** A security context on the acceptor side: SPNEGO, or one mechanism under it (or raw, without SPNEGO). */
export interface SecurityContext {
  /** The mechanism's OID (for SPNEGO: the negotiated mechanism's, once chosen; undefined before). */
  readonly mechanism: string | undefined;
  /** Feeds the client's next token; resolves with the answer, rejects with NegotiateError. */
  step(token: Uint8Array): Promise<StepResult>;
  readonly established: boolean;
  /** The authenticated peer, normalized (`DOMAIN\user`, `user@REALM`); undefined until established. */
  readonly peerName: string | undefined;
  /** The peer's SIDs from the domain (see above); absent or empty when there are none. */
  readonly peerSids?: readonly string[];
  /** Sealing (encryption) was negotiated: `wrap` encrypts and `unwrap` expects encrypted payloads. */
  readonly confidentiality: boolean;
  /** Signing was negotiated. */
  readonly integrity: boolean;
  /** The most bytes `wrap` adds to its input (NTLM: the 16-byte signature). */
  readonly wrapOverhead: number;
  getMic(message: Uint8Array, options?: MicOptions): Uint8Array;
  /** Throws IntegrityError when `mic` does not sign `message`. */
  verifyMic(message: Uint8Array, mic: Uint8Array, options?: MicOptions): void;
  wrap(plain: Uint8Array): Uint8Array;
  /** Throws IntegrityError; the connection must then be dropped. */
  unwrap(payload: Uint8Array): Uint8Array;
  /** Forgets the keys. */
  dispose(): void;
}

/** What a backend implements for each mechanism it offers. */
export interface MechanismContext extends SecurityContext {
  readonly mechanism: string;
  /**
   * SPNEGO must exchange mechListMICs even when this mechanism was the initiator's first choice: true for NTLM with
   * its MIC (MS-SPNG 3.1.5.1: the AUTHENTICATE message's MIC makes the mechListMIC mandatory).
   */
  readonly requireMechListMic: boolean;
}

/** Facts about the connection a context is made for. */
export interface AcceptorInfo {
  /** The client's address as the socket reports it: failed logons are throttled per address. */
  remoteAddress: string;
  /**
   * What the connection requires. A mechanism that can tell early (NTLM: SEAL missing from NEGOTIATE) refuses at once;
   * NegotiateStream checks the established context's flags against it in any case.
   */
  protectionLevel: ProtectionLevel;
  /** For log lines. */
  connectionId?: string;
}

/** Creates contexts, one per handshake, for the mechanisms it offers. */
export interface SecurityBackend {
  /** For log lines ("ntlm-local", "gssapi"). */
  readonly name: string;
  /** The mechanism OIDs this backend accepts, in the server's order of preference. */
  readonly mechanisms: readonly string[];
  createContext(mechanism: string, info: AcceptorInfo): MechanismContext;
  /** At shutdown: releases what the backend holds (GSSAPI: its credentials, once its contexts are released). */
  close(): void;
}

/**
 * A refused handshake. `reason` (a short code such as `ntlm.bad-proof`) and `detail` go to the server's log only;
 * `status` is what the client is told, always LOGON_DENIED.
 */
export class NegotiateError extends Error {
  override name = 'NegotiateError';
  readonly status = LOGON_DENIED;

  constructor(
    readonly reason: string,
    readonly detail?: string,
  ) {
    super(detail === undefined ? `logon denied (${reason})` : `logon denied (${reason}: ${detail})`);
  }
}

export type IntegrityErrorKind = 'BadSignature' | 'OutOfSequence' | 'Malformed' | 'Broken';

/** A data frame or MIC that does not verify: the connection must be dropped. */
export class IntegrityError extends Error {
  override name = 'IntegrityError';

  constructor(
    readonly kind: IntegrityErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/** A readable name of a mechanism OID for logs and identities. */
export function mechanismName(oid: string | undefined): string {
  switch (oid) {
    case OID.ntlm:
      return 'NTLM';
    case OID.kerberos:
    case OID.kerberosMicrosoft:
      return 'Kerberos';
    case OID.spnego:
      return 'SPNEGO';
    default:
      return oid ?? 'none';
  }
}

/**
 * Normalizes a peer name the way identities are written in BRIDGE_ROLES_FILE: `DOMAIN\user` (an NTLM account; the
 * domain upper-cased as Windows shows NetBIOS domains) or `user@REALM` (a Kerberos principal; the realm upper-cased as
 * realms are). A trailing NUL (gss-ntlmssp 1.2 appends one) and surrounding blanks are dropped.
 */
export function normalizePeerName(name: string): string {
  const trimmed = name.replace(/\0+$/, '').trim();
  const backslash = trimmed.indexOf('\\');
  if (backslash > 0) return `${trimmed.slice(0, backslash).toUpperCase()}\\${trimmed.slice(backslash + 1)}`;
  const at = trimmed.lastIndexOf('@');
  if (at > 0 && backslash < 0) return `${trimmed.slice(0, at)}@${trimmed.slice(at + 1).toUpperCase()}`;
  return trimmed;
}
