/**
 * The NTLM rules that need no key, stated once, from docs/contract/windows-security.md: both NTLM
 * acceptors apply them, acceptor.ts (TypeScript) and the gate of ../gssapi/ntlm.ts in front of gss-ntlmssp, so the
 * two refuse the same messages for the same `ntlm.*` reasons in the log. The client sees the same logon-denied
 * status whatever failed.
 *
 * - NEGOTIATE (admitNegotiate): at most 1 KiB, and the client offers EXTENDED_SESSIONSECURITY, 128, KEY_EXCH, SIGN and
 *   UNICODE (REQUIRED_NTLM_FLAGS), SEAL too when the protection level is EncryptAndSign (requiredFlags). Under `Sign` a
 *   client that does not ask for SEAL is accepted and its frames are signed only: that is how NegotiateStream
 *   expresses ProtectionLevel.Sign (the SSPI/GSSAPI context is opened with integrity but without confidentiality, so
 *   the NTLM NEGOTIATE lacks SEAL; NegotiateStream then compares the context's flags with the level it requires).
 * - AUTHENTICATE (admitAuthenticate), in this order: at most 8 KiB and well-formed; within 60 s of the CHALLENGE;
 *   not anonymous; not NTLMv1 or LM (an NT response of 24 bytes or less); the required flags again, SEAL when the
 *   CHALLENGE granted it, never DATAGRAM; an NTLMv2 response; a 16-byte EncryptedRandomSessionKey (KEY_EXCH).
 * - The NTLMv2 response's AV pairs (checkNtlmV2Pairs), which the proof covers so that a client cannot change them:
 *   MsvAvFlags, MsvAvTimestamp, MsvAvTargetName and MsvAvChannelBindings at most once each; the blob's time and its
 *   MsvAvTimestamp both the CHALLENGE's; the MIC announced (MsvAvFlags bit 2) and present; MsvAvTargetName, when the
 *   client names one, among the configured SPNs (relaying); channel bindings absent or zero (raw TCP has none).
 *
 * What needs the key (the NTProofStr, the MIC's value) is the acceptor's: acceptor.ts, or gss-ntlmssp behind the gate;
 * so is throttling (throttle.ts), which comes after admitAuthenticate and before the proof.
 */

import { NegotiateError, type ProtectionLevel } from '../security-context.ts';
import { constantTimeEqual, upperInvariant } from './crypto.ts';
import {
  AV_FLAG_MIC_PRESENT,
  AvId,
  fromUtf16le,
  NtlmFlag,
  parseAuthenticate,
  parseNegotiate,
  parseNtlmV2Response,
  u32le,
  type AuthenticateMessage,
  type NegotiateMessage,
  type NtlmV2Response,
} from './messages.ts';

/** The defaults of both acceptors: the largest NEGOTIATE and AUTHENTICATE read, how long a CHALLENGE stays answerable. */
export const NTLM_LIMITS = {
  maxNegotiateBytes: 1024,
  maxAuthenticateBytes: 8192,
  challengeLifetimeMs: 60_000,
} as const;

/** What every client must offer, and agree to in AUTHENTICATE (SEAL too under EncryptAndSign). */
export const REQUIRED_NTLM_FLAGS =
  NtlmFlag.Unicode | NtlmFlag.Sign | NtlmFlag.ExtendedSessionSecurity | NtlmFlag.N128 | NtlmFlag.KeyExchange;

/** The flags a client must offer, and a CHALLENGE must grant, at `protectionLevel`. */
export function requiredFlags(protectionLevel: ProtectionLevel): number {
  return REQUIRED_NTLM_FLAGS | (protectionLevel === 'EncryptAndSign' ? NtlmFlag.Seal : 0);
}

/** AV pairs whose repetition would make the checks ambiguous. */
const SINGLE_AV_PAIRS = new Set<number>([AvId.Flags, AvId.Timestamp, AvId.TargetName, AvId.ChannelBindings]);

/** A refusal found by one of the checks below, for a NegotiateError. */
export interface NtlmRefusal {
  reason: string;
  detail?: string;
}

/** The NEGOTIATE checks: size, form, the flags a client must offer. Throws NegotiateError. */
export function admitNegotiate(
  token: Uint8Array,
  maxBytes: number,
  protectionLevel: ProtectionLevel,
): NegotiateMessage {
  if (token.length > maxBytes) throw new NegotiateError('ntlm.too-large', `NEGOTIATE of ${token.length} bytes`);
  const negotiate = parseNegotiate(token);
  if (!negotiate) throw new NegotiateError('ntlm.malformed', 'not an NTLM NEGOTIATE message');
  const missing = requiredFlags(protectionLevel) & ~negotiate.flags;
  if (missing !== 0)
    throw new NegotiateError('ntlm.weak-flags', `the client does not offer flags 0x${(missing >>> 0).toString(16)}`);
  return negotiate;
}

/**
 * The AUTHENTICATE checks before any key is involved: size, form, the challenge's age, anonymous, NTLMv1/LM, the
 * flags (`sealing`: SEAL was granted in the CHALLENGE), an NTLMv2 response, a 16-byte EncryptedRandomSessionKey.
 * `claimed` (`DOMAIN\user` as sent) is there whenever the message could be read, for throttling.
 */
export function admitAuthenticate(
  token: Uint8Array,
  limits: { maxBytes: number; ageMs: number; lifetimeMs: number; sealing: boolean },
): { auth: AuthenticateMessage; response: NtlmV2Response; claimed: string } | (NtlmRefusal & { claimed?: string }) {
  if (token.length > limits.maxBytes)
    return { reason: 'ntlm.too-large', detail: `AUTHENTICATE of ${token.length} bytes` };
  const auth = parseAuthenticate(token);
  if (!auth) return { reason: 'ntlm.malformed', detail: 'not an NTLM AUTHENTICATE message' };
  const claimed = `${auth.domain}\\${auth.user}`;
  if (limits.ageMs > limits.lifetimeMs)
    return { reason: 'ntlm.challenge-expired', detail: `after ${limits.ageMs} ms`, claimed };
  if (auth.user === '' || (auth.flags & NtlmFlag.Anonymous) !== 0) return { reason: 'ntlm.anonymous' };
  if (auth.ntResponse.length <= 24)
    return { reason: 'ntlm.v1', detail: `NT response of ${auth.ntResponse.length} bytes (NTLMv1 or LM)`, claimed };
  const required = REQUIRED_NTLM_FLAGS | (limits.sealing ? NtlmFlag.Seal : 0);
  if ((auth.flags & required) !== required || (auth.flags & NtlmFlag.Datagram) !== 0) {
    return { reason: 'ntlm.weak-flags', detail: `AUTHENTICATE flags 0x${(auth.flags >>> 0).toString(16)}`, claimed };
  }
  const response = parseNtlmV2Response(auth.ntResponse);
  if (!response) return { reason: 'ntlm.malformed', detail: 'not an NTLMv2 response', claimed };
  // KEY_EXCH is required: the key is 16 bytes (gss-ntlmssp copies 16 whatever the field's length, and crashes on 0).
  if (auth.encryptedRandomSessionKey.length !== 16)
    return { reason: 'ntlm.malformed', detail: 'no 16-byte EncryptedRandomSessionKey', claimed };
  return { auth, response, claimed };
}

/**
 * The checks on the NTLMv2 response's AV pairs against the CHALLENGE's MsvAvTimestamp and the SPNs a client may name
 * (`targetNames`). The MIC's value needs the session key: its checker's job.
 */
export function checkNtlmV2Pairs(
  auth: AuthenticateMessage,
  response: NtlmV2Response,
  expected: { timestamp: Uint8Array; targetNames: readonly string[] },
): NtlmRefusal | undefined {
  const pairs = new Map<number, Uint8Array>();
  for (const pair of response.avPairs) {
    if (pairs.has(pair.id) && SINGLE_AV_PAIRS.has(pair.id))
      return { reason: 'ntlm.malformed', detail: `AV pair ${pair.id} twice` };
    pairs.set(pair.id, pair.value);
  }
  const ours = new DataView(expected.timestamp.buffer, expected.timestamp.byteOffset, 8).getBigUint64(0, true);
  const avTimestamp = pairs.get(AvId.Timestamp);
  if (response.time !== ours || !avTimestamp || !constantTimeEqual(avTimestamp, expected.timestamp)) {
    return { reason: 'ntlm.timestamp', detail: 'the client timestamp is not the server timestamp' };
  }
  const avFlags = pairs.get(AvId.Flags);
  if (avFlags?.length !== 4 || (u32le(avFlags, 0) & AV_FLAG_MIC_PRESENT) === 0 || auth.mic === undefined)
    return { reason: 'ntlm.mic-missing' };
  const target = pairs.get(AvId.TargetName);
  const targetName = target === undefined ? '' : (fromUtf16le(target) ?? '\uFFFD');
  if (targetName !== '' && !expected.targetNames.some((spn) => upperInvariant(spn) === upperInvariant(targetName))) {
    return { reason: 'ntlm.target-name', detail: `the client meant ${targetName}` };
  }
  const bindings = pairs.get(AvId.ChannelBindings);
  if (bindings?.some((b) => b !== 0))
    return { reason: 'ntlm.channel-bindings', detail: 'channel bindings on a raw TCP connection' };
  return undefined;
}
