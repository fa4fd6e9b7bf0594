/**
 * net.tcp client sessions with Windows security over NTLM, in TypeScript: the MC-NMF preamble up to the
 * `application/negotiate` UpgradeRequest, the MS-NNS handshake with SPNEGO around NTLMv2 (NEGOTIATE, AUTHENTICATE with
 * the MIC, both mechListMICs; the NTLM messages from support/ntlm-client.ts, the session security the bridge's own
 * NtlmSessionSecurity in the client role), then PreambleEnd and every record sealed in NNS data frames.
 *
 * - NetTcpSession: one session's records, in the clear or sealed, one call at a time (bench/negotiate-client.ts
 *   builds the benchmark's channel on it);
 * - PooledNtlmSocket: a client socket that behaves like .NET's connection pool, one socket, many sessions. Each
 *   session writes the plaintext preamble up to the UpgradeRequest, logs on, seals PreambleEnd and its calls, and ends
 *   with End inside the sealed stream; the socket then carries the next session's plaintext preamble, as WCF's
 *   ConnectionPoolHelper returns the raw connection (not the upgraded one) to the pool.
 */
import { connect, type Socket } from 'node:net';
import {
  decodeEnvelope,
  encodeEnvelope,
  ReaderSession,
  WriterSession,
  textToString,
  type XmlContent,
  type XmlElement,
} from '../../tcp-bridge/src/binary-xml/index.ts';
import { concatBytes, readInt31 } from '../../tcp-bridge/src/bytes.ts';
import {
  clientPreamble,
  END_RECORD,
  framing,
  NEGOTIATE_UPGRADE,
  RecordType,
  sizedEnvelope,
} from '../../tcp-bridge/src/framing/index.ts';
import { dataFrame, errorStatus, HandshakeId, handshakeFrame } from '../../tcp-bridge/src/negotiate/nns.ts';
import type { NtlmSessionSecurity } from '../../tcp-bridge/src/negotiate/ntlm/index.ts';
import { OID } from '../../tcp-bridge/src/negotiate/security-context.ts';
import {
  decodeNegTokenResp,
  encodeMechTypes,
  encodeNegTokenInit,
  encodeNegTokenResp,
  NegState,
} from '../../tcp-bridge/src/negotiate/spnego.ts';
import { TestNtlmClient } from './ntlm-client.ts';
import { request } from './soap.ts';

export interface NtlmAccount {
  domain: string;
  user: string;
  password: string;
}

/** What .NET puts in one NNS data frame at most. */
const MAX_PLAIN_PER_FRAME = 63 * 1024;
const MECH_TYPES = [OID.ntlm];

/** Reads exact byte counts from a socket as promises; one read pending at a time. */
export class SocketReader {
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  private pending: { n: number; resolve: (bytes: Uint8Array) => void; reject: (error: Error) => void } | undefined;
  private failure: Error | undefined;

  constructor(socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.chunks.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      this.buffered += chunk.length;
      this.serve();
    });
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('the connection closed')));
  }

  get closed(): boolean {
    return this.failure !== undefined;
  }

  read(n: number): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      this.pending = { n, resolve, reject };
      this.serve();
    });
  }

  private serve(): void {
    const p = this.pending;
    if (!p) return;
    if (this.buffered >= p.n) {
      this.pending = undefined;
      p.resolve(this.take(p.n));
    } else if (this.failure) {
      this.pending = undefined;
      p.reject(this.failure);
    }
  }

  private take(n: number): Uint8Array {
    const all = this.chunks.length === 1 ? this.chunks[0]! : concatBytes(this.chunks);
    this.chunks = all.length > n ? [all.subarray(n)] : [];
    this.buffered -= n;
    return all.subarray(0, n);
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.serve();
  }
}

/** A socket to host:port (no Nagle) with its reader; resolves once connected. */
export async function connectSocket(host: string, port: number): Promise<{ socket: Socket; input: SocketReader }> {
  const socket = connect({ host, port, noDelay: true });
  const input = new SocketReader(socket);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
  } catch (error) {
    socket.destroy();
    throw error;
  }
  return { socket, input };
}

/** Writes the plaintext preamble with the negotiate upgrade and reads the UpgradeResponse. */
export async function upgrade(socket: Socket, input: SocketReader, via: string): Promise<void> {
  socket.write(clientPreamble(via, NEGOTIATE_UPGRADE));
  const answer = await input.read(1);
  if (answer[0] !== RecordType.UpgradeResponse)
    throw new Error(`record 0x${answer[0]!.toString(16)} instead of UpgradeResponse`);
}

/** NegTokenInit(NEGOTIATE) → CHALLENGE → AUTHENTICATE + mechListMIC → accept-completed + mechListMIC; the sealing. */
export async function ntlmHandshake(
  socket: Socket,
  input: SocketReader,
  account: NtlmAccount,
): Promise<NtlmSessionSecurity> {
  const readToken = async (expected: number): Promise<Uint8Array> => {
    const header = await input.read(5);
    const payload = await input.read((header[3]! << 8) | header[4]!);
    if (header[0] === HandshakeId.Error)
      throw new Error(`logon denied (HandshakeError 0x${errorStatus(payload)?.littleEndian.toString(16)})`);
    if (header[0] !== expected)
      throw new Error(`handshake message 0x${header[0]!.toString(16)} instead of 0x${expected.toString(16)}`);
    return payload;
  };
  const ntlm = new TestNtlmClient(account.user, account.domain, account.password);
  socket.write(
    handshakeFrame(HandshakeId.InProgress, encodeNegTokenInit({ mechTypes: MECH_TYPES, mechToken: ntlm.negotiate() })),
  );
  const challenge = decodeNegTokenResp(await readToken(HandshakeId.InProgress));
  if (challenge.responseToken === undefined) throw new Error('no CHALLENGE in the answer');
  const authenticate = ntlm.authenticate(challenge.responseToken);
  const security = ntlm.security!;
  const mechList = encodeMechTypes(MECH_TYPES);
  socket.write(
    handshakeFrame(
      HandshakeId.InProgress,
      encodeNegTokenResp({
        responseToken: authenticate,
        mechListMIC: security.getMic(mechList, { mechListMic: true }),
      }),
    ),
  );
  const done = decodeNegTokenResp(await readToken(HandshakeId.Done));
  if (done.negState !== NegState.AcceptCompleted || done.mechListMIC === undefined)
    throw new Error('the handshake did not complete');
  security.verifyMic(mechList, done.mechListMIC, { mechListMic: true });
  if (!security.sealing) throw new Error('the context does not seal');
  return security;
}

/** One net.tcp session's records after the preamble: in the clear, or sealed in NNS data frames; one call at a time. */
export class NetTcpSession {
  protected readonly writer = new WriterSession();
  private readonly reader = new ReaderSession();
  private plain: Uint8Array = new Uint8Array(0);

  constructor(
    protected readonly socket: Socket,
    protected readonly input: SocketReader,
    private readonly security: NtlmSessionSecurity | undefined,
  ) {}

  /** PreambleEnd, and the PreambleAck back. */
  async preamble(): Promise<void> {
    this.send(framing().preambleEnd().finish());
    await this.expectRecord(RecordType.PreambleAck);
  }

  /** The reply's body element (`<HeartbeatResponse>`) of a call. */
  protected async exchange(operation: string, params: XmlContent[]): Promise<XmlElement> {
    this.send(sizedEnvelope(encodeEnvelope(request(operation, params), this.writer)));
    await this.expectRecord(RecordType.SizedEnvelope);
    const { document } = decodeEnvelope(await this.readPlain(await this.readSize()), this.reader);
    const envelope = document.children.find((c): c is XmlElement => c.kind === 'element');
    const body = envelope?.children.find((c): c is XmlElement => c.kind === 'element' && c.localName === 'Body');
    const answer = body?.children.find((c): c is XmlElement => c.kind === 'element');
    if (!answer) throw new Error('a reply without a body element');
    return answer;
  }

  protected async expectRecord(expected: number): Promise<void> {
    const type = (await this.readPlain(1))[0]!;
    if (type === expected) return;
    const detail =
      type === RecordType.Fault
        ? new TextDecoder().decode(await this.readPlain(await this.readSize()))
        : `0x${type.toString(16)}`;
    throw new Error(`record ${detail} instead of 0x${expected.toString(16)}`);
  }

  /** A MultiByteInt31 record size. */
  private async readSize(): Promise<number> {
    const bytes: number[] = [];
    for (;;) {
      bytes.push((await this.readPlain(1))[0]!);
      const size = readInt31(Uint8Array.from(bytes), 0);
      if (size === 'invalid') throw new Error('an invalid record size');
      if (size !== 'short') return size.value;
    }
  }

  protected send(record: Uint8Array): void {
    if (!this.security) {
      this.socket.write(record);
      return;
    }
    for (let at = 0; at < record.length; at += MAX_PLAIN_PER_FRAME) {
      this.socket.write(dataFrame(this.security.wrap(record.subarray(at, at + MAX_PLAIN_PER_FRAME))));
    }
  }

  /** `n` bytes of the (unsealed) NMF stream. */
  private async readPlain(n: number): Promise<Uint8Array> {
    if (!this.security) return this.input.read(n);
    while (this.plain.length < n) {
      const header = await this.input.read(4);
      const size = new DataView(header.buffer, header.byteOffset, 4).getUint32(0, true);
      const opened = this.security.unwrap(await this.input.read(size));
      this.plain = this.plain.length === 0 ? opened : concatBytes([this.plain, opened]);
    }
    const out = this.plain.subarray(0, n);
    this.plain = this.plain.subarray(n);
    return out;
  }
}

/** One session on a pooled socket: sealed calls, then End. */
export class SealedSession extends NetTcpSession {
  /** The result element's text of a call without parameters (`Heartbeat` answers `true`). */
  async call(operation: string): Promise<string> {
    const answer = await this.exchange(operation, []);
    const result = answer.children.find(
      (c): c is XmlElement => c.kind === 'element' && c.localName === `${operation}Result`,
    );
    if (!result) throw new Error(`${operation} answered no ${operation}Result`);
    return result.children.map((c) => (c.kind === 'text' ? textToString(c) : '')).join('');
  }

  /** End inside the sealed stream, and the server's End back; the socket is the pool's again. */
  async end(): Promise<void> {
    this.send(END_RECORD);
    await this.expectRecord(RecordType.End);
  }
}

/** A client socket that opens sessions one after another, each with its own upgrade and NTLM logon. */
export class PooledNtlmSocket {
  private constructor(
    readonly socket: Socket,
    private readonly input: SocketReader,
  ) {}

  static async connect(port: number): Promise<PooledNtlmSocket> {
    const { socket, input } = await connectSocket('127.0.0.1', port);
    return new PooledNtlmSocket(socket, input);
  }

  /** A new session: plaintext preamble with the upgrade, NTLM logon, sealed PreambleEnd. */
  async session(via: string, account: NtlmAccount): Promise<SealedSession> {
    await upgrade(this.socket, this.input, via);
    const session = new SealedSession(this.socket, this.input, await ntlmHandshake(this.socket, this.input, account));
    await session.preamble();
    return session;
  }

  close(): void {
    this.socket.destroy();
  }
}
