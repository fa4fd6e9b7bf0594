/**
 * NTLMv2 acceptor over local accounts (BRIDGE_NTLM_USERS), in TypeScript: MS-NLMP 3.2.5 (server), 3.3.2 (NTLMv2),
 * 3.4 (session security), with the rules of ../shared/notes/windows-auth.md ("Security rules").
 *
 * Handshake: NEGOTIATE → CHALLENGE (random server challenge, MsvAvTimestamp and both NetBIOS names in the target info:
 * the timestamp makes Windows and .NET send a MIC, and .NET refuses a CHALLENGE without the two NetBIOS names) →
 * AUTHENTICATE, checked in this order, each failure the same NegotiateError to the client:
 *   structure and flags · challenge age (60 s) · anonymous and NTLMv1/LM refused · throttling (per claimed user and per
 *   source address) · NTProofStr against the account (constant time; the same work for an unknown user) · the blob's
 *   time and its MsvAvTimestamp equal to ours · MIC present (MsvAvFlags bit 2) and correct · MsvAvTargetName, when
 *   the client names one, among the configured SPNs · channel bindings absent or zero (raw TCP has none).
 *
 * Flags: EXTENDED_SESSIONSECURITY, 128, KEY_EXCH, SIGN and UNICODE are required of every client; SEAL too when the
 * protection level is EncryptAndSign. Under `Sign`, a client that does not ask for SEAL is accepted and its frames are
 * signed only: that is how NegotiateStream expresses ProtectionLevel.Sign (the SSPI/GSSAPI context is opened with
 * integrity but without confidentiality, so the NTLM NEGOTIATE lacks SEAL; NegotiateStream then compares the context's
 * flags with the level it requires). LM_KEY, DATAGRAM and anonymous logons are never granted.
 *
 * Sign-only frames. MS-NLMP's signed-only payload is `signature ‖ plaintext` (what Windows SSPI sends with
 * SECQOP_WRAP_NO_ENCRYPT), but gss-ntlmssp's gss_wrap and .NET's managed NTLM seal whenever they wrap, SEAL
 * negotiated or not. Without SEAL the acceptor therefore takes the first frame either way (the signature decides,
 * over the plaintext in both cases) and from then on expects, and itself sends, the form the client used. A client
 * that negotiated SEAL always gets and must send sealed frames.
 *
 * Accounts file (RUN.md): lines `DOMAIN:user:password`, or `DOMAIN:user:{NT}` + 32 hex digits (the NT hash); `#`
 * starts a comment line; everything after the second colon is the password. The file must not be readable, writable
 * or executable by group or others (mode & 0o077 == 0), else the bridge refuses to start: an NT hash is as good as the
 * password. Matching follows gss-ntlmssp (its NTLM_USER_FILE): user names compare case-insensitively; a client that
 * sends a domain only matches lines with that domain (case-insensitive), a client that sends no domain matches the
 * first line with its user name; the NTProofStr is accepted when computed with the domain the client sent (MS-NLMP
 * 3.3.2), the line's domain, or no domain (gss-ntlmssp's two tries). The identity is the line's `DOMAIN\user` (the
 * NetBIOS computer name for a line with an empty domain, as Windows names local accounts).
 */

import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { ConfigError } from '#idb';
import { md4 } from './md4.ts';
import { Rc4, rc4k } from './rc4.ts';
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
const MIC_OFFSET = 72;
const AUTHENTICATE_HEADER = 88;
/** 100 ns intervals from 1601-01-01 to 1970-01-01. */
const FILETIME_UNIX_EPOCH = 116444736000000000n;

// ---- primitives (MS-NLMP 3.3.2, 3.4.5, 6) ----

const hmacMd5 = (key: Uint8Array, ...parts: Uint8Array[]): Uint8Array => {
  const hmac = createHmac('md5', key);
  for (const part of parts) hmac.update(part);
  return new Uint8Array(hmac.digest());
};

const md5 = (...parts: Uint8Array[]): Uint8Array => {
  const hash = createHash('md5');
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
};

export function utf16le(text: string): Uint8Array {
  const out = new Uint8Array(text.length * 2);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    out[i * 2] = code & 0xff;
    out[i * 2 + 1] = code >> 8;
  }
  return out;
}

function fromUtf16le(bytes: Uint8Array): string | undefined {
  if (bytes.length % 2 !== 0) return undefined;
  let out = '';
  for (let i = 0; i < bytes.length; i += 2) out += String.fromCharCode(bytes[i]! | (bytes[i + 1]! << 8));
  return out;
}

/**
 * Upper case as .NET's ToUpperInvariant and Windows do it for NTOWFv2: one character to one character (simple case
 * mapping), so `ß` stays `ß` where JavaScript's full mapping would give `SS`.
 */
export function upperInvariant(text: string): string {
  let out = '';
  for (const ch of text) {
    const upper = ch.toUpperCase();
    out += upper.length === ch.length ? upper : ch;
  }
  return out;
}

/** NTOWFv1 = MD4(UNICODE(Passwd)): the NT hash. */
export function ntHash(password: string): Uint8Array {
  return md4(utf16le(password));
}

/** NTOWFv2 = HMAC_MD5(NTOWFv1, UNICODE(Uppercase(User) ‖ UserDom)). */
export function ntowfv2(hash: Uint8Array, user: string, domain: string): Uint8Array {
  return hmacMd5(hash, utf16le(upperInvariant(user) + domain));
}

/** NTProofStr = HMAC_MD5(ResponseKeyNT, ServerChallenge ‖ temp), temp being the NTLMv2 client challenge blob. */
export function ntProofStr(responseKeyNt: Uint8Array, serverChallenge: Uint8Array, blob: Uint8Array): Uint8Array {
  return hmacMd5(responseKeyNt, serverChallenge, blob);
}

/** SessionBaseKey = HMAC_MD5(ResponseKeyNT, NTProofStr); for NTLMv2 it is also the KeyExchangeKey. */
export function sessionBaseKey(responseKeyNt: Uint8Array, proof: Uint8Array): Uint8Array {
  return hmacMd5(responseKeyNt, proof);
}

/** With KEY_EXCH: ExportedSessionKey = RC4K(KeyExchangeKey, EncryptedRandomSessionKey) (RC4 is its own inverse). */
export function exportedSessionKey(keyExchangeKey: Uint8Array, encryptedRandomSessionKey: Uint8Array): Uint8Array {
  return rc4k(keyExchangeKey, encryptedRandomSessionKey);
}

/** MIC = HMAC_MD5(ExportedSessionKey, NEGOTIATE ‖ CHALLENGE ‖ AUTHENTICATE with its MIC field zeroed). */
export function computeMic(exported: Uint8Array, negotiate: Uint8Array, challenge: Uint8Array, authenticate: Uint8Array): Uint8Array {
  const zeroed = authenticate.slice();
  zeroed.fill(0, MIC_OFFSET, MIC_OFFSET + 16);
  return hmacMd5(exported, negotiate, challenge, zeroed);
}

const MAGIC = {
  clientSign: 'session key to client-to-server signing key magic constant\0',
  serverSign: 'session key to server-to-client signing key magic constant\0',
  clientSeal: 'session key to client-to-server sealing key magic constant\0',
  serverSeal: 'session key to server-to-client sealing key magic constant\0',
} as const;

/** SIGNKEY and SEALKEY (MS-NLMP 3.4.5.2, 3.4.5.3) with extended session security and 128-bit keys. */
export function sessionKeys(exported: Uint8Array): { clientSign: Uint8Array; serverSign: Uint8Array; clientSeal: Uint8Array; serverSeal: Uint8Array } {
  const derive = (magic: string): Uint8Array => md5(exported, new TextEncoder().encode(magic));
  return { clientSign: derive(MAGIC.clientSign), serverSign: derive(MAGIC.serverSign), clientSeal: derive(MAGIC.clientSeal), serverSeal: derive(MAGIC.serverSeal) };
}

export function filetime(ms: number): bigint {
  return BigInt(Math.floor(ms)) * 10000n + FILETIME_UNIX_EPOCH;
}

const u16 = (b: Uint8Array, at: number): number => b[at]! | (b[at + 1]! << 8);
const u32 = (b: Uint8Array, at: number): number => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
const le32 = (value: number): Uint8Array => Uint8Array.of(value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, (value >>> 24) & 0xff);

function le64(value: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, value, true);
  return out;
}

/** Constant-time equality of two byte strings (their lengths are not secret). */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

// ---- session security (MS-NLMP 3.4.3, 3.4.4.2 with ESS and KEY_EXCH) ----

/** One direction's signing key, RC4 handle and sequence number. */
class Direction {
  seq = 0;

  constructor(
    readonly signKey: Uint8Array,
    readonly rc4: Rc4,
  ) {}

  /** `01000000 ‖ RC4(HMAC_MD5(SignKey, seq ‖ message)[0..8]) ‖ seq`: the RC4 handle moves on by 8 bytes. */
  signature(seq: number, message: Uint8Array): Uint8Array {
    const out = new Uint8Array(16);
    out[0] = 1;
    out.set(this.rc4.process(hmacMd5(this.signKey, le32(seq), message).subarray(0, 8)), 4);
    out.set(le32(seq), 12);
    return out;
  }
}

export type SignOnlyForm = 'sealed' | 'plain';

/**
 * NTLM session security for one context: sealing and signing in both directions, one RC4 stream per direction for
 * the whole session. `role` says which keys send: the acceptor sends with the server keys.
 */
export class NtlmSessionSecurity {
  private readonly send: Direction;
  private readonly receive: Direction;
  private broken = false;
  /** Without SEAL: the payload form the client uses (undefined until its first frame). */
  private signOnlyForm: SignOnlyForm | undefined;

  constructor(
    exported: Uint8Array,
    role: 'server' | 'client',
    readonly sealing: boolean,
  ) {
    const keys = sessionKeys(exported);
    const client = new Direction(keys.clientSign, new Rc4(keys.clientSeal));
    const server = new Direction(keys.serverSign, new Rc4(keys.serverSeal));
    this.send = role === 'server' ? server : client;
    this.receive = role === 'server' ? client : server;
  }

  /** The form of sign-only payloads, once known. */
  get form(): SignOnlyForm | undefined {
    return this.sealing ? 'sealed' : this.signOnlyForm;
  }

  /** Fixes the sign-only form before any frame arrived (a client role that chooses). */
  useForm(form: SignOnlyForm): void {
    if (!this.sealing) this.signOnlyForm = form;
  }

  getMic(message: Uint8Array, options?: MicOptions): Uint8Array {
    this.check();
    const saved = options?.mechListMic ? this.send.rc4.clone() : undefined;
    const signature = this.send.signature(this.send.seq++, message);
    if (saved) this.send.rc4.restore(saved);
    return signature;
  }

  verifyMic(message: Uint8Array, mic: Uint8Array, options?: MicOptions): void {
    this.check();
    const saved = options?.mechListMic ? this.receive.rc4.clone() : undefined;
    const error = this.verify(this.receive, mic, () => message);
    if (error) throw this.breakWith(error);
    this.receive.seq++;
    if (saved) this.receive.rc4.restore(saved);
  }

  wrap(plain: Uint8Array): Uint8Array {
    this.check();
    const out = new Uint8Array(16 + plain.length);
    // Sign-only before the client's first frame (NMF never has the server write first): MS-NLMP's form.
    if ((this.form ?? 'plain') === 'plain') {
      out.set(this.send.signature(this.send.seq++, plain));
      out.set(plain, 16);
    } else {
      // MS-NLMP 3.4.3 SEAL: the data is encrypted first, then the checksum with the same handle.
      out.set(this.send.rc4.process(plain), 16);
      out.set(this.send.signature(this.send.seq++, plain));
    }
    return out;
  }

  unwrap(payload: Uint8Array): Uint8Array {
    this.check();
    if (payload.length < 16) throw this.breakWith(new IntegrityError('Malformed', `a ${payload.length}-byte payload has no NTLM signature`));
    const signature = payload.subarray(0, 16);
    const body = payload.subarray(16);
    const form = this.form;
    if (form !== undefined) {
      const plain = form === 'sealed' ? this.receive.rc4.process(body) : body.slice();
      const error = this.verify(this.receive, signature, () => plain);
      if (error) throw this.breakWith(error);
      this.receive.seq++;
      return plain;
    }
    // Sign-only, first frame: try the plaintext form (MS-NLMP), then the sealed one (gss-ntlmssp, .NET managed).
    const start = this.receive.rc4.clone();
    if (this.verify(this.receive, signature, () => body) === undefined) {
      this.signOnlyForm = 'plain';
      this.receive.seq++;
      return body.slice();
    }
    this.receive.rc4.restore(start);
    const plain = this.receive.rc4.process(body);
    const error = this.verify(this.receive, signature, () => plain);
    if (error) throw this.breakWith(error);
    this.signOnlyForm = 'sealed';
    this.receive.seq++;
    return plain;
  }

  /** Forgets the keystreams: every later call throws. */
  dispose(): void {
    this.broken = true;
  }

  /** Checks `signature` over the message (computed lazily: unsealing must come first) at the expected sequence number. */
  private verify(direction: Direction, signature: Uint8Array, message: () => Uint8Array): IntegrityError | undefined {
    if (signature.length !== 16 || u32(signature, 0) !== 1) return new IntegrityError('Malformed', 'not an NTLM signature (version 1, 16 bytes)');
    const seq = u32(signature, 12);
    if (seq !== direction.seq) return new IntegrityError('OutOfSequence', `sequence number ${seq} where ${direction.seq} was due`);
    const expected = direction.signature(direction.seq, message());
    if (!constantTimeEqual(expected.subarray(4, 12), signature.subarray(4, 12))) return new IntegrityError('BadSignature', 'the NTLM signature does not match');
    return undefined;
  }

  private check(): void {
    if (this.broken) throw new IntegrityError('Broken', 'the NTLM context failed earlier and is closed');
  }

  private breakWith(error: IntegrityError): IntegrityError {
    this.broken = true;
    return error;
  }
}

// ---- messages (MS-NLMP 2.2) ----

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
  const size = pairs.reduce((n, p) => n + 4 + p.value.length, 4);
  const out = new Uint8Array(size);
  let at = 0;
  for (const pair of pairs) {
    out.set([pair.id & 0xff, pair.id >> 8, pair.value.length & 0xff, pair.value.length >> 8], at);
    out.set(pair.value, at + 4);
    at += 4 + pair.value.length;
  }
  return out; // ends with the zeroed MsvAvEOL
}

function messageType(bytes: Uint8Array): number | undefined {
  if (bytes.length < 12 || !SIGNATURE.every((b, i) => bytes[i] === b)) return undefined;
  return u32(bytes, 8);
}

/** A (length, max length, offset) field; undefined when it points outside the message or into its header. */
function readField(bytes: Uint8Array, at: number, headerEnd: number): Uint8Array | undefined {
  const length = u16(bytes, at);
  const offset = u32(bytes, at + 4);
  if (length === 0) return new Uint8Array(0);
  if (offset < headerEnd || offset + length > bytes.length) return undefined;
  return bytes.subarray(offset, offset + length);
}

export interface NegotiateMessage {
  flags: number;
}

export function parseNegotiate(bytes: Uint8Array): NegotiateMessage | undefined {
  // 16 bytes minimum (older clients send no domain/workstation fields), usually 32 or 40 (with Version).
  if (messageType(bytes) !== 1 || bytes.length < 16) return undefined;
  return { flags: u32(bytes, 12) };
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
  return { flags: u32(bytes, 20), serverChallenge: bytes.slice(24, 32), targetName, targetInfo };
}

export function encodeChallenge(message: { flags: number; serverChallenge: Uint8Array; targetName: string; targetInfo: readonly AvPair[] }): Uint8Array {
  const name = utf16le(message.targetName);
  const info = encodeAvPairs(message.targetInfo);
  const out = new Uint8Array(56 + name.length + info.length);
  out.set(SIGNATURE);
  out.set(le32(2), 8);
  out.set([name.length & 0xff, name.length >> 8, name.length & 0xff, name.length >> 8, ...le32(56)], 12);
  out.set(le32(message.flags), 20);
  out.set(message.serverChallenge, 24);
  out.set([info.length & 0xff, info.length >> 8, info.length & 0xff, info.length >> 8, ...le32(56 + name.length)], 40);
  out.set(SERVER_VERSION, 48);
  out.set(name, 56);
  out.set(info, 56 + name.length);
  return out;
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
  const flags = u32(bytes, 60);
  const fieldsAt = [12, 20, 28, 36, 44, 52];
  // Where the payload starts: the MIC (offset 72) exists only when no field starts before 88.
  const payloadStart = Math.min(...fieldsAt.map((at) => (u16(bytes, at) === 0 ? Infinity : u32(bytes, at + 4))));
  const [lm, nt, domain, user, workstation, key] = fieldsAt.map((at) => readField(bytes, at, 64));
  if (!lm || !nt || !domain || !user || !workstation || !key) return undefined;
  if ((flags & NtlmFlag.Unicode) === 0) return undefined; // OEM strings are not accepted
  const [domainName, userName, workstationName] = [domain, user, workstation].map(fromUtf16le);
  if (domainName === undefined || userName === undefined || workstationName === undefined) return undefined;
  const mic = payloadStart >= AUTHENTICATE_HEADER && bytes.length >= AUTHENTICATE_HEADER ? bytes.slice(MIC_OFFSET, MIC_OFFSET + 16) : undefined;
  return { flags, lmResponse: lm, ntResponse: nt, domain: domainName, user: userName, workstation: workstationName, encryptedRandomSessionKey: key, mic };
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

// ---- accounts ----

export interface NtlmAccount {
  domain: string;
  user: string;
  ntHash: Uint8Array;
}

export class NtlmAccounts {
  private constructor(private readonly accounts: readonly NtlmAccount[]) {}

  get size(): number {
    return this.accounts.length;
  }

  /**
   * Reads BRIDGE_NTLM_USERS. Throws ConfigError when the file is missing or unreadable, is accessible to group or
   * others, or has a line that is not `DOMAIN:user:password` / `DOMAIN:user:{NT}<32 hex>`.
   */
  static load(path: string): NtlmAccounts {
    let mode: number;
    let text: string;
    try {
      mode = statSync(path).mode;
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new ConfigError(`BRIDGE_NTLM_USERS: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
    if ((mode & 0o077) !== 0) {
      throw new ConfigError(
        `BRIDGE_NTLM_USERS: ${path} has mode ${(mode & 0o777).toString(8).padStart(3, '0')}; it holds password equivalents and must be accessible to its owner only (chmod 600)`,
      );
    }
    return NtlmAccounts.parse(text, path);
  }

  static parse(text: string, source = 'BRIDGE_NTLM_USERS'): NtlmAccounts {
    const accounts: NtlmAccount[] = [];
    text.split(/\r?\n/).forEach((line, index) => {
      if (line.trim() === '' || line.startsWith('#')) return;
      const where = `${source} line ${index + 1}`;
      const first = line.indexOf(':');
      const second = first < 0 ? -1 : line.indexOf(':', first + 1);
      if (second < 0) throw new ConfigError(`${where}: expected DOMAIN:user:password`);
      const domain = line.slice(0, first);
      const user = line.slice(first + 1, second);
      const secret = line.slice(second + 1);
      if (user === '') throw new ConfigError(`${where}: empty user name`);
      if (secret === '') throw new ConfigError(`${where}: empty password`);
      let hash: Uint8Array;
      if (secret.startsWith('{NT}')) {
        if (!/^\{NT\}[0-9a-fA-F]{32}$/.test(secret)) throw new ConfigError(`${where}: {NT} must be followed by 32 hex digits`);
        hash = Uint8Array.from(Buffer.from(secret.slice(4), 'hex'));
      } else {
        hash = ntHash(secret);
      }
      accounts.push({ domain, user, ntHash: hash });
    });
    return new NtlmAccounts(accounts);
  }

  /** The first line for `user` (case-insensitive) whose domain matches `domain` (any line when `domain` is empty). */
  find(user: string, domain: string): NtlmAccount | undefined {
    const wantedUser = upperInvariant(user);
    const wantedDomain = upperInvariant(domain);
    return this.accounts.find((a) => upperInvariant(a.user) === wantedUser && (domain === '' || upperInvariant(a.domain) === wantedDomain));
  }
}

// ---- throttling ----

export interface ThrottleOptions {
  /** Failed logons per claimed user within a window before that user is refused until the window ends. Default 5. */
  perUser?: number;
  /** Failed logons per source address (IPv6: per /64) within a window. Default 20. */
  perAddress?: number;
  windowMs?: number;
  /** Most keys remembered; the least recently failed are forgotten first. Default 10 000. */
  maxEntries?: number;
  now?: () => number;
}

/**
 * Counts failed logons per claimed user and per source address in fixed windows, in memory and bounded. Refusing a
 * throttled attempt happens before any password is checked, with the same error as a wrong password. A success clears
 * its user's count (not its address's: one valid account must not let an address keep guessing others).
 */
export class LogonThrottle {
  private readonly entries = new Map<string, { count: number; resetAt: number }>();
  private readonly perUser: number;
  private readonly perAddress: number;
  private readonly windowMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(options: ThrottleOptions = {}) {
    this.perUser = options.perUser ?? 5;
    this.perAddress = options.perAddress ?? 20;
    this.windowMs = options.windowMs ?? 5 * 60_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  blocked(user: string | undefined, address: string): boolean {
    return this.over(addressKey(address), this.perAddress) || (user !== undefined && this.over(userKey(user), this.perUser));
  }

  failed(user: string | undefined, address: string): void {
    this.bump(addressKey(address));
    if (user !== undefined) this.bump(userKey(user));
  }

  succeeded(user: string): void {
    this.entries.delete(userKey(user));
  }

  private over(key: string, limit: number): boolean {
    const entry = this.entries.get(key);
    return entry !== undefined && entry.count >= limit && this.now() < entry.resetAt;
  }

  private bump(key: string): void {
    const now = this.now();
    const entry = this.entries.get(key);
    const fresh = entry === undefined || now >= entry.resetAt ? { count: 0, resetAt: now + this.windowMs } : entry;
    fresh.count++;
    this.entries.delete(key);
    this.entries.set(key, fresh);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}

const userKey = (user: string): string => `u:${upperInvariant(user)}`;

/** IPv4 as is (also when mapped into IPv6), IPv6 by its /64: one host usually owns a whole /64. */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return `a:${mapped[1]}`;
  if (!address.includes(':')) return `a:${address}`;
  const [head = '', tail = ''] = address.split('%')[0]!.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `a:${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

// ---- the acceptor ----

export interface NtlmBackendOptions {
  accounts: NtlmAccounts;
  /** BRIDGE_DNS_IDENTITY: the server's DNS name; the default SPN is `host/<dnsIdentity>`. */
  dnsIdentity: string;
  /** Target names (SPNs) a client may name in MsvAvTargetName; compared case-insensitively. */
  targetNames?: readonly string[];
  /** Default: the first label of dnsIdentity, upper-cased, at most 15 characters. */
  netbiosComputerName?: string;
  /** Default: WORKGROUP (a stand-alone server's local accounts). */
  netbiosDomainName?: string;
  dnsDomainName?: string;
  /** How long a CHALLENGE stays answerable. Default 60 s. */
  challengeLifetimeMs?: number;
  throttle?: LogonThrottle;
  /** Largest NEGOTIATE / AUTHENTICATE accepted. Defaults 1 KiB / 8 KiB. */
  maxNegotiateBytes?: number;
  maxAuthenticateBytes?: number;
  /** For tests: the clock and the randomness. */
  now?: () => number;
  random?: (size: number) => Uint8Array;
}

/** AV pairs whose repetition would make the checks ambiguous. */
const SINGLE_AV_PAIRS = new Set<number>([AvId.Flags, AvId.Timestamp, AvId.TargetName, AvId.ChannelBindings]);

/** What every client must offer, and agree to in AUTHENTICATE (SEAL too under EncryptAndSign). */
export const REQUIRED_NTLM_FLAGS = NtlmFlag.Unicode | NtlmFlag.Sign | NtlmFlag.ExtendedSessionSecurity | NtlmFlag.N128 | NtlmFlag.KeyExchange;

/** A refusal found by one of the checks below, for a NegotiateError. */
export interface NtlmRefusal {
  reason: string;
  detail?: string;
}

/**
 * The NEGOTIATE checks (size, form, the flags a client must offer), shared by this acceptor and the gss-ntlmssp
 * gate in gssapi.ts. Throws NegotiateError.
 */
export function admitNegotiate(token: Uint8Array, maxBytes: number, protectionLevel: AcceptorInfo['protectionLevel']): NegotiateMessage {
  if (token.length > maxBytes) throw new NegotiateError('ntlm.too-large', `NEGOTIATE of ${token.length} bytes`);
  const negotiate = parseNegotiate(token);
  if (!negotiate) throw new NegotiateError('ntlm.malformed', 'not an NTLM NEGOTIATE message');
  const required = REQUIRED_NTLM_FLAGS | (protectionLevel === 'EncryptAndSign' ? NtlmFlag.Seal : 0);
  const missing = required & ~negotiate.flags;
  if (missing !== 0) throw new NegotiateError('ntlm.weak-flags', `the client does not offer flags 0x${(missing >>> 0).toString(16)}`);
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
  if (token.length > limits.maxBytes) return { reason: 'ntlm.too-large', detail: `AUTHENTICATE of ${token.length} bytes` };
  const auth = parseAuthenticate(token);
  if (!auth) return { reason: 'ntlm.malformed', detail: 'not an NTLM AUTHENTICATE message' };
  const claimed = `${auth.domain}\\${auth.user}`;
  if (limits.ageMs > limits.lifetimeMs) return { reason: 'ntlm.challenge-expired', detail: `after ${limits.ageMs} ms`, claimed };
  if (auth.user === '' || (auth.flags & NtlmFlag.Anonymous) !== 0) return { reason: 'ntlm.anonymous' };
  if (auth.ntResponse.length <= 24) return { reason: 'ntlm.v1', detail: `NT response of ${auth.ntResponse.length} bytes (NTLMv1 or LM)`, claimed };
  const required = REQUIRED_NTLM_FLAGS | (limits.sealing ? NtlmFlag.Seal : 0);
  if ((auth.flags & required) !== required || (auth.flags & NtlmFlag.Datagram) !== 0) {
    return { reason: 'ntlm.weak-flags', detail: `AUTHENTICATE flags 0x${(auth.flags >>> 0).toString(16)}`, claimed };
  }
  const response = parseNtlmV2Response(auth.ntResponse);
  if (!response) return { reason: 'ntlm.malformed', detail: 'not an NTLMv2 response', claimed };
  // KEY_EXCH is required: the key is 16 bytes (gss-ntlmssp copies 16 whatever the field's length, and crashes on 0).
  if (auth.encryptedRandomSessionKey.length !== 16) return { reason: 'ntlm.malformed', detail: 'no 16-byte EncryptedRandomSessionKey', claimed };
  return { auth, response, claimed };
}

/**
 * The checks on the NTLMv2 response's AV pairs, which need no key (the proof covers them, so a client cannot change
 * them): pairs that must be single, the client's timestamps equal to the CHALLENGE's MsvAvTimestamp, the MIC announced
 * in MsvAvFlags and present, MsvAvTargetName among `targetNames` when the client names one (relaying), channel
 * bindings absent or zero (raw TCP has none). The MIC's value needs the session key: its checker's job.
 */
export function checkNtlmV2Pairs(auth: AuthenticateMessage, response: NtlmV2Response, expected: { timestamp: Uint8Array; targetNames: readonly string[] }): NtlmRefusal | undefined {
  const pairs = new Map<number, Uint8Array>();
  for (const pair of response.avPairs) {
    if (pairs.has(pair.id) && SINGLE_AV_PAIRS.has(pair.id)) return { reason: 'ntlm.malformed', detail: `AV pair ${pair.id} twice` };
    pairs.set(pair.id, pair.value);
  }
  const ours = new DataView(expected.timestamp.buffer, expected.timestamp.byteOffset, 8).getBigUint64(0, true);
  const avTimestamp = pairs.get(AvId.Timestamp);
  if (response.time !== ours || !avTimestamp || !constantTimeEqual(avTimestamp, expected.timestamp)) {
    return { reason: 'ntlm.timestamp', detail: 'the client timestamp is not the server timestamp' };
  }
  const avFlags = pairs.get(AvId.Flags);
  if (!avFlags || avFlags.length !== 4 || (u32(avFlags, 0) & AV_FLAG_MIC_PRESENT) === 0 || auth.mic === undefined) return { reason: 'ntlm.mic-missing' };
  const target = pairs.get(AvId.TargetName);
  const targetName = target === undefined ? '' : (fromUtf16le(target) ?? '\uFFFD');
  if (targetName !== '' && !expected.targetNames.some((spn) => upperInvariant(spn) === upperInvariant(targetName))) {
    return { reason: 'ntlm.target-name', detail: `the client meant ${targetName}` };
  }
  const bindings = pairs.get(AvId.ChannelBindings);
  if (bindings !== undefined && bindings.some((b) => b !== 0)) return { reason: 'ntlm.channel-bindings', detail: 'channel bindings on a raw TCP connection' };
  return undefined;
}

export class NtlmBackend implements SecurityBackend {
  readonly name = 'ntlm-local';
  readonly mechanisms = [OID.ntlm] as const;
  readonly throttle: LogonThrottle;
  readonly settings: Required<Omit<NtlmBackendOptions, 'dnsDomainName'>> & { dnsDomainName: string | undefined };
  /** Stands in for an unknown user so that the proof is computed all the same. */
  private readonly decoyHash: Uint8Array;

  constructor(options: NtlmBackendOptions) {
    const random = options.random ?? ((size: number) => new Uint8Array(randomBytes(size)));
    this.throttle = options.throttle ?? new LogonThrottle({ now: options.now });
    this.settings = {
      accounts: options.accounts,
      dnsIdentity: options.dnsIdentity,
      targetNames: options.targetNames ?? [`host/${options.dnsIdentity}`],
      netbiosComputerName: options.netbiosComputerName ?? upperInvariant(options.dnsIdentity.split('.')[0] ?? options.dnsIdentity).slice(0, 15),
      netbiosDomainName: options.netbiosDomainName ?? 'WORKGROUP',
      dnsDomainName: options.dnsDomainName,
      challengeLifetimeMs: options.challengeLifetimeMs ?? 60_000,
      throttle: this.throttle,
      maxNegotiateBytes: options.maxNegotiateBytes ?? 1024,
      maxAuthenticateBytes: options.maxAuthenticateBytes ?? 8192,
      now: options.now ?? Date.now,
      random,
    };
    this.decoyHash = random(16);
  }

  createContext(mechanism: string, info: AcceptorInfo): NtlmAcceptor {
    if (mechanism !== OID.ntlm) throw new NegotiateError('ntlm.mechanism', `${mechanism} is not NTLM`);
    return new NtlmAcceptor(this.settings, this.decoyHash, info);
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

  get confidentiality(): boolean {
    return this.established && (this.flags & NtlmFlag.Seal) !== 0;
  }

  get integrity(): boolean {
    return this.established;
  }

  /** The negotiated flags (those of our CHALLENGE). */
  get negotiatedFlags(): number {
    return this.flags;
  }

  async step(token: Uint8Array): Promise<StepResult> {
    try {
      if (this.state === 'negotiate') return { token: this.challenge(token), done: false };
      if (this.state === 'authenticate') {
        this.authenticate(token);
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
    this.timestamp = le64(filetime(this.issuedAt));
    const targetInfo: AvPair[] = [
      { id: AvId.NbDomainName, value: utf16le(s.netbiosDomainName) },
      { id: AvId.NbComputerName, value: utf16le(s.netbiosComputerName) },
      ...(s.dnsDomainName ? [{ id: AvId.DnsDomainName, value: utf16le(s.dnsDomainName) }] : []),
      { id: AvId.DnsComputerName, value: utf16le(s.dnsIdentity) },
      { id: AvId.Timestamp, value: this.timestamp },
    ];
    this.negotiateBytes = token.slice();
    this.challengeBytes = encodeChallenge({ flags: this.flags, serverChallenge: this.serverChallenge, targetName: s.netbiosComputerName, targetInfo });
    this.state = 'authenticate';
    return this.challengeBytes;
  }

  private authenticate(token: Uint8Array): void {
    const s = this.settings;
    const address = this.info.remoteAddress;
    const fail = (reason: string, detail?: string, user?: string): never => {
      s.throttle.failed(user, address);
      throw new NegotiateError(reason, detail);
    };
    const admitted = admitAuthenticate(token, {
      maxBytes: s.maxAuthenticateBytes,
      ageMs: s.now() - this.issuedAt,
      lifetimeMs: s.challengeLifetimeMs,
      sealing: (this.flags & NtlmFlag.Seal) !== 0,
    });
    if ('reason' in admitted) return fail(admitted.reason, admitted.detail, admitted.claimed);
    const { auth, response, claimed } = admitted;
    if (s.throttle.blocked(claimed, address)) {
      // Refused before any password is looked at; the client sees the usual error.
      throw new NegotiateError('ntlm.throttled', `${claimed} from ${address}`);
    }

    // The proof, with the same work whether or not the account exists (three candidate keys each time).
    const account = s.accounts.find(auth.user, auth.domain);
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
    if (!account || !responseKey) return fail('ntlm.bad-proof', account ? `wrong password for ${claimed}` : `unknown user ${claimed}`, claimed);

    // The client's timestamps (the blob's and the copy of our MsvAvTimestamp must both be ours), the MIC announced,
    // and relaying: a client that says which service it meant must have meant us. Raw TCP has no channel binding.
    const refusal = checkNtlmV2Pairs(auth, response, { timestamp: this.timestamp!, targetNames: s.targetNames });
    if (refusal) fail(refusal.reason, refusal.detail, claimed);

    // The MIC over the three messages, keyed with the exported session key.
    const exported = exportedSessionKey(sessionBaseKey(responseKey, response.proof), auth.encryptedRandomSessionKey);
    if (!constantTimeEqual(computeMic(exported, this.negotiateBytes!, this.challengeBytes!, token), auth.mic!)) {
      fail('ntlm.bad-mic', undefined, claimed);
    }

    s.throttle.succeeded(claimed);
    this.security = new NtlmSessionSecurity(exported, 'server', (this.flags & NtlmFlag.Seal) !== 0);
    this.name = normalizePeerName(`${account.domain === '' ? s.netbiosComputerName : account.domain}\\${account.user}`);
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
