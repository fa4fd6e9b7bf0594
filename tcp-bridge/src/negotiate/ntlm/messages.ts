/**
 * The NTLM messages of MS-NLMP 2.2, read and written, nothing decided: NEGOTIATE, CHALLENGE, AUTHENTICATE, the
 * NTLMv2 response, AV pairs, FILETIME and the message signature. What a message must hold to be accepted is
 * checks.ts's. Strings are UTF-16LE (NTLMSSP_NEGOTIATE_UNICODE); OEM strings are not read.
 */

import { ByteWriter } from '../../bytes.ts';

export const NtlmFlag = {
  Unicode: 0x00000001,
  Oem: 0x00000002,
  RequestTarget: 0x00000004,
  Sign: 0x00000010,
  Seal: 0x00000020,
  Datagram: 0x00000040,
  LmKey: 0x00000080,
  Ntlm: 0x00000200,
  Anonymous: 0x00000800,
  AlwaysSign: 0x00008000,
  TargetTypeDomain: 0x00010000,
  TargetTypeServer: 0x00020000,
  ExtendedSessionSecurity: 0x00080000,
  Identify: 0x00100000,
  TargetInfo: 0x00800000,
  Version: 0x02000000,
  N128: 0x20000000,
  KeyExchange: 0x40000000,
  N56: 0x80000000,
} as const;

export const AvId = {
  Eol: 0,
  NbComputerName: 1,
  NbDomainName: 2,
  DnsComputerName: 3,
  DnsDomainName: 4,
  DnsTreeName: 5,
  Flags: 6,
  Timestamp: 7,
  SingleHost: 8,
  TargetName: 9,
  ChannelBindings: 10,
} as const;

/** MsvAvFlags bit: the AUTHENTICATE message carries a MIC. */
export const AV_FLAG_MIC_PRESENT = 0x2;

const SIGNATURE = Uint8Array.of(0x4e, 0x54, 0x4c, 0x4d, 0x53, 0x53, 0x50, 0x00);
/** 10.0 build 20348, NTLM revision 15: the Version field of our CHALLENGE (informational). */
const SERVER_VERSION = Uint8Array.of(10, 0, 0x7c, 0x4f, 0, 0, 0, 15);
/** The CHALLENGE's fixed part, Version included: its payload (target name, then target info) starts here. */
const CHALLENGE_HEADER = 56;
/** Where the AUTHENTICATE message's MIC lies (16 bytes), when its payload leaves room for it. */
export const MIC_OFFSET = 72;
const AUTHENTICATE_HEADER = 88;
/** 100 ns intervals from 1601-01-01 to 1970-01-01. */
const FILETIME_UNIX_EPOCH = 116444736000000000n;

const u16 = (b: Uint8Array, at: number): number => b[at]! | (b[at + 1]! << 8);

/** The little-endian 32-bit number at `at`. */
export const u32le = (b: Uint8Array, at: number): number =>
  (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;

export function utf16le(text: string): Uint8Array {
  const out = new Uint8Array(text.length * 2);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    out[i * 2] = code & 0xff;
    out[i * 2 + 1] = code >> 8;
  }
  return out;
}

export function fromUtf16le(bytes: Uint8Array): string | undefined {
  if (bytes.length % 2 !== 0) return undefined;
  let out = '';
  for (let i = 0; i < bytes.length; i += 2) out += String.fromCharCode(bytes[i]! | (bytes[i + 1]! << 8));
  return out;
}

/** A time in milliseconds since 1970 as a FILETIME (100 ns intervals since 1601). */
export function filetime(ms: number): bigint {
  return BigInt(Math.floor(ms)) * 10000n + FILETIME_UNIX_EPOCH;
}

/** The 8 bytes of an MsvAvTimestamp for a time in milliseconds since 1970. */
export function encodeFiletime(ms: number): Uint8Array {
  return new ByteWriter(8).uint64(filetime(ms)).finish();
}

// ---- AV pairs (MS-NLMP 2.2.2.1) ----

export interface AvPair {
  id: number;
  value: Uint8Array;
}

export function parseAvPairs(bytes: Uint8Array): AvPair[] | undefined {
  const pairs: AvPair[] = [];
  let at = 0;
  while (at + 4 <= bytes.length) {
    const id = u16(bytes, at);
    const length = u16(bytes, at + 2);
    if (at + 4 + length > bytes.length) return undefined;
    if (id === AvId.Eol) return length === 0 ? pairs : undefined;
    pairs.push({ id, value: bytes.subarray(at + 4, at + 4 + length) });
    at += 4 + length;
  }
  return undefined; // no MsvAvEOL
}

export function encodeAvPairs(pairs: readonly AvPair[]): Uint8Array {
  const out = new ByteWriter();
  for (const pair of pairs) out.uint16(pair.id).uint16(pair.value.length).bytes(pair.value);
  return out.uint16(AvId.Eol).uint16(0).finish();
}

// ---- messages (MS-NLMP 2.2.1) ----

function messageType(bytes: Uint8Array): number | undefined {
  if (bytes.length < 12 || !SIGNATURE.every((b, i) => bytes[i] === b)) return undefined;
  return u32le(bytes, 8);
}

/** A (length, max length, offset) field; undefined when it points outside the message or into its header. */
function readField(bytes: Uint8Array, at: number, headerEnd: number): Uint8Array | undefined {
  const length = u16(bytes, at);
  const offset = u32le(bytes, at + 4);
  if (length === 0) return new Uint8Array(0);
  if (offset < headerEnd || offset + length > bytes.length) return undefined;
  return bytes.subarray(offset, offset + length);
}

/** Writes a (length, max length, offset) field. */
const field = (out: ByteWriter, length: number, offset: number): ByteWriter =>
  out.uint16(length).uint16(length).uint32(offset);

export interface NegotiateMessage {
  flags: number;
}

export function parseNegotiate(bytes: Uint8Array): NegotiateMessage | undefined {
  // 16 bytes minimum (older clients send no domain/workstation fields), usually 32 or 40 (with Version).
  if (messageType(bytes) !== 1 || bytes.length < 16) return undefined;
  return { flags: u32le(bytes, 12) };
}

export interface ChallengeMessage {
  flags: number;
  serverChallenge: Uint8Array;
  targetName: Uint8Array;
  targetInfo: AvPair[];
}

export function parseChallenge(bytes: Uint8Array): ChallengeMessage | undefined {
  if (messageType(bytes) !== 2 || bytes.length < 48) return undefined;
  const targetName = readField(bytes, 12, 48);
  const targetInfoBytes = readField(bytes, 40, 48);
  const targetInfo = targetInfoBytes && parseAvPairs(targetInfoBytes);
  if (!targetName || !targetInfo) return undefined;
  return { flags: u32le(bytes, 20), serverChallenge: bytes.slice(24, 32), targetName, targetInfo };
}

/** A CHALLENGE with our Version; `serverChallenge` is 8 bytes. */
export function encodeChallenge(message: {
  flags: number;
  serverChallenge: Uint8Array;
  targetName: string;
  targetInfo: readonly AvPair[];
}): Uint8Array {
  const name = utf16le(message.targetName);
  const info = encodeAvPairs(message.targetInfo);
  const out = new ByteWriter(CHALLENGE_HEADER + name.length + info.length).bytes(SIGNATURE).uint32(2);
  field(out, name.length, CHALLENGE_HEADER).uint32(message.flags).bytes(message.serverChallenge).uint64(0n); // Reserved
  field(out, info.length, CHALLENGE_HEADER + name.length).bytes(SERVER_VERSION);
  return out.bytes(name).bytes(info).finish();
}

export interface AuthenticateMessage {
  flags: number;
  lmResponse: Uint8Array;
  ntResponse: Uint8Array;
  domain: string;
  user: string;
  workstation: string;
  encryptedRandomSessionKey: Uint8Array;
  /** The 16 bytes at offset 72, when the payload leaves room for them (a MIC, if MsvAvFlags says so). */
  mic: Uint8Array | undefined;
}

export function parseAuthenticate(bytes: Uint8Array): AuthenticateMessage | undefined {
  if (messageType(bytes) !== 3 || bytes.length < 64) return undefined;
  const flags = u32le(bytes, 60);
  const fieldsAt = [12, 20, 28, 36, 44, 52];
  // Where the payload starts: the MIC (offset 72) exists only when no field starts before 88.
  const payloadStart = Math.min(...fieldsAt.map((at) => (u16(bytes, at) === 0 ? Infinity : u32le(bytes, at + 4))));
  const [lm, nt, domain, user, workstation, key] = fieldsAt.map((at) => readField(bytes, at, 64));
  if (!lm || !nt || !domain || !user || !workstation || !key) return undefined;
  if ((flags & NtlmFlag.Unicode) === 0) return undefined; // OEM strings are not accepted
  const [domainName, userName, workstationName] = [domain, user, workstation].map(fromUtf16le);
  if (domainName === undefined || userName === undefined || workstationName === undefined) return undefined;
  const mic =
    payloadStart >= AUTHENTICATE_HEADER && bytes.length >= AUTHENTICATE_HEADER
      ? bytes.slice(MIC_OFFSET, MIC_OFFSET + 16)
      : undefined;
  return {
    flags,
    lmResponse: lm,
    ntResponse: nt,
    domain: domainName,
    user: userName,
    workstation: workstationName,
    encryptedRandomSessionKey: key,
    mic,
  };
}

export interface NtlmV2Response {
  proof: Uint8Array;
  /** The NTLMv2_CLIENT_CHALLENGE ("temp"): what the proof signs after the server challenge. */
  blob: Uint8Array;
  time: bigint;
  clientChallenge: Uint8Array;
  avPairs: AvPair[];
}

/** An NTLMv2_RESPONSE (MS-NLMP 2.2.2.8): NTProofStr, then RespType 1, HiRespType 1, Z(6), time, challenge, Z(4), AV pairs. */
export function parseNtlmV2Response(nt: Uint8Array): NtlmV2Response | undefined {
  if (nt.length < 16 + 28 + 4) return undefined;
  const blob = nt.subarray(16);
  if (blob[0] !== 1 || blob[1] !== 1) return undefined;
  const avPairs = parseAvPairs(blob.subarray(28));
  if (!avPairs) return undefined;
  return {
    proof: nt.subarray(0, 16),
    blob,
    time: new DataView(blob.buffer, blob.byteOffset + 8, 8).getBigUint64(0, true),
    clientChallenge: blob.subarray(16, 24),
    avPairs,
  };
}

// ---- the message signature (MS-NLMP 2.2.2.9.1, with extended session security) ----

/** An NTLM message signature (NTLMSSP_MESSAGE_SIGNATURE) is 16 bytes. */
export const SIGNATURE_SIZE = 16;

/** Version 1, the 8-byte checksum, the sequence number. */
export function encodeSignature(checksum: Uint8Array, seq: number): Uint8Array {
  return new ByteWriter(SIGNATURE_SIZE).uint32(1).bytes(checksum).uint32(seq).finish();
}

/**
 * What makes `signature` other than a signature for sequence number `seq`, before its checksum is looked at: not 16
 * bytes of version 1 (`Malformed`), or another sequence number (`OutOfSequence`, so that a frame out of order is told
 * from a forged one). Undefined when it may be the one.
 */
export function signatureProblem(
  signature: Uint8Array,
  seq: number,
): { kind: 'Malformed' | 'OutOfSequence'; message: string } | undefined {
  if (signature.length !== SIGNATURE_SIZE || u32le(signature, 0) !== 1)
    return { kind: 'Malformed', message: 'not an NTLM signature (version 1, 16 bytes)' };
  const carried = u32le(signature, 12);
  if (carried !== seq) return { kind: 'OutOfSequence', message: `sequence number ${carried} where ${seq} was due` };
  return undefined;
}
