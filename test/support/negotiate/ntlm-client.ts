/**
 * An NTLMv2 initiator for unit tests of the acceptor (tcp-bridge/src/negotiate/ntlm/), built on its exported
 * primitives: it writes NEGOTIATE and AUTHENTICATE messages as MS-NLMP 3.1.5 describes them (what .NET's managed NTLM
 * and gss-ntlmssp send), with knobs to break one rule at a time. The real initiators are in nns-client.py.
 */
import { randomBytes } from 'node:crypto';
import {
  AV_FLAG_MIC_PRESENT,
  AvId,
  computeMic,
  encodeAvPairs,
  NtlmFlag,
  NtlmSessionSecurity,
  ntHash,
  ntowfv2,
  ntProofStr,
  parseChallenge,
  sessionBaseKey,
  utf16le,
  type AvPair,
} from '../../../tcp-bridge/src/negotiate/ntlm/index.ts';
import { rc4k } from '../../../tcp-bridge/src/negotiate/ntlm/rc4.ts';

export const CLIENT_FLAGS =
  NtlmFlag.Unicode |
  NtlmFlag.RequestTarget |
  NtlmFlag.Sign |
  NtlmFlag.Seal |
  NtlmFlag.Ntlm |
  NtlmFlag.AlwaysSign |
  NtlmFlag.ExtendedSessionSecurity |
  NtlmFlag.TargetInfo |
  NtlmFlag.Version |
  NtlmFlag.N128 |
  NtlmFlag.KeyExchange |
  NtlmFlag.N56;

export interface AuthenticateTweaks {
  /** MsvAvTargetName to add (the SPN the client meant). */
  targetName?: string;
  /** MsvAvChannelBindings value (16 bytes). */
  channelBindings?: Uint8Array;
  /** No MsvAvFlags MIC bit and a zero MIC field. */
  noMic?: boolean;
  /** A MIC that is off by one bit. */
  badMic?: boolean;
  /** The blob's time instead of the server's timestamp. */
  time?: bigint;
  /** Drop the MsvAvTimestamp copied from the CHALLENGE. */
  dropTimestamp?: boolean;
  /** A 24-byte NTLMv1-style response instead of NTLMv2. */
  v1?: boolean;
  /** AUTHENTICATE flags (default: the CHALLENGE's). */
  flags?: number;
  /** Hash with this domain instead of the one sent. */
  hashDomain?: string;
  /** Send no user name (anonymous). */
  anonymous?: boolean;
}

const le32 = (v: number): number[] => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];

export class TestNtlmClient {
  negotiateMessage: Uint8Array | undefined;
  security: NtlmSessionSecurity | undefined;

  constructor(
    readonly user: string,
    readonly domain: string,
    readonly password: string,
  ) {}

  negotiate(flags: number = CLIENT_FLAGS): Uint8Array {
    const message = new Uint8Array(40);
    message.set([0x4e, 0x54, 0x4c, 0x4d, 0x53, 0x53, 0x50, 0x00, 1, 0, 0, 0, ...le32(flags >>> 0)]);
    message.set([6, 1, 0xb1, 0x1d, 0, 0, 0, 15], 32); // Version 6.1.7601, revision 15
    this.negotiateMessage = message;
    return message;
  }

  authenticate(challengeMessage: Uint8Array, tweaks: AuthenticateTweaks = {}): Uint8Array {
    const challenge = parseChallenge(challengeMessage);
    if (!challenge) throw new Error('not a CHALLENGE');
    const timestamp = challenge.targetInfo.find((p) => p.id === AvId.Timestamp);
    const serverTime = timestamp
      ? new DataView(timestamp.value.buffer, timestamp.value.byteOffset, 8).getBigUint64(0, true)
      : 0n;
    const pairs: AvPair[] = challenge.targetInfo.filter(
      (p) =>
        !(tweaks.dropTimestamp && p.id === AvId.Timestamp) &&
        p.id !== AvId.Flags &&
        !(tweaks.targetName !== undefined && p.id === AvId.TargetName),
    );
    // The server's MsvAvFlags (gss-ntlmssp 1.2 sends an empty one) taken over, as real initiators do, with the MIC bit.
    const serverFlags = challenge.targetInfo.find((p) => p.id === AvId.Flags);
    const avFlags =
      (serverFlags?.value.length === 4
        ? new DataView(serverFlags.value.buffer, serverFlags.value.byteOffset, 4).getUint32(0, true)
        : 0) | (tweaks.noMic ? 0 : AV_FLAG_MIC_PRESENT);
    if (serverFlags !== undefined || !tweaks.noMic)
      pairs.push({ id: AvId.Flags, value: Uint8Array.of(...le32(avFlags)) });
    if (tweaks.targetName !== undefined) pairs.push({ id: AvId.TargetName, value: utf16le(tweaks.targetName) });
    if (tweaks.channelBindings !== undefined) pairs.push({ id: AvId.ChannelBindings, value: tweaks.channelBindings });

    const blob = new Uint8Array(28 + encodeAvPairs(pairs).length + 4);
    blob.set([1, 1]);
    new DataView(blob.buffer).setBigUint64(8, tweaks.time ?? serverTime, true);
    blob.set(randomBytes(8), 16);
    blob.set(encodeAvPairs(pairs), 28);
    const key = ntowfv2(ntHash(this.password), this.user, tweaks.hashDomain ?? this.domain);
    const proof = ntProofStr(key, challenge.serverChallenge, blob);
    const nt = tweaks.v1 ? new Uint8Array(randomBytes(24)) : new Uint8Array([...proof, ...blob]);
    const exported = new Uint8Array(randomBytes(16));
    const encryptedKey = rc4k(sessionBaseKey(key, proof), exported);

    const user = utf16le(tweaks.anonymous ? '' : this.user);
    const domain = utf16le(this.domain);
    const workstation = utf16le('TESTHOST');
    const fields = [new Uint8Array(24), nt, domain, user, workstation, encryptedKey];
    const message = new Uint8Array(88 + fields.reduce((n, f) => n + f.length, 0));
    message.set([0x4e, 0x54, 0x4c, 0x4d, 0x53, 0x53, 0x50, 0x00, 3, 0, 0, 0]);
    let at = 88;
    fields.forEach((field, i) => {
      message.set(
        [field.length & 0xff, field.length >> 8, field.length & 0xff, field.length >> 8, ...le32(at)],
        12 + i * 8,
      );
      message.set(field, at);
      at += field.length;
    });
    const flags = tweaks.flags ?? challenge.flags;
    message.set(le32(flags >>> 0), 60);
    message.set([6, 1, 0xb1, 0x1d, 0, 0, 0, 15], 64);
    if (!tweaks.noMic) {
      const mic = computeMic(exported, this.negotiateMessage!, challengeMessage, message);
      if (tweaks.badMic) mic[0]! ^= 1;
      message.set(mic, 72);
    }
    this.security = new NtlmSessionSecurity(exported, 'client', (flags & NtlmFlag.Seal) !== 0);
    return message;
  }
}
