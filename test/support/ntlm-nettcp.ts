/**
 * A net.tcp client socket with Windows security over NTLM that behaves like .NET's connection pool: one socket, many
 * sessions. Each session writes the plaintext preamble up to the `application/negotiate` UpgradeRequest, runs the
 * MS-NNS handshake (SPNEGO around NTLMv2 from support/ntlm-client.ts), seals PreambleEnd and its calls, and ends with
 * End inside the sealed stream; the socket then carries the next session's plaintext preamble, as WCF's
 * ConnectionPoolHelper returns the raw connection (not the upgraded one) to the pool.
 */
import { connect, type Socket } from 'node:net';
import { decodeEnvelope, encodeEnvelope, ReaderSession, WriterSession, textToString, type XmlElement } from '../../tcp-bridge/src/binary-xml/index.ts';
import { concatBytes, readInt31 } from '../../tcp-bridge/src/bytes.ts';
import { clientPreamble, END_RECORD, framing, NEGOTIATE_UPGRADE, RecordType, sizedEnvelope } from '../../tcp-bridge/src/framing/index.ts';
import { dataFrame, errorStatus, HandshakeId, handshakeFrame } from '../../tcp-bridge/src/negotiate/nns.ts';
import { OID } from '../../tcp-bridge/src/negotiate/security-context.ts';
import { decodeNegTokenResp, encodeMechTypes, encodeNegTokenInit, encodeNegTokenResp, NegState } from '../../tcp-bridge/src/negotiate/spnego.ts';
import { TestNtlmClient } from './ntlm-client.ts';
import { request } from './soap.ts';

type Sealing = NonNullable<TestNtlmClient['security']>;

/** Exact byte counts from a socket, one read pending at a time. */
class Reader {
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
      const all = this.chunks.length === 1 ? this.chunks[0]! : concatBytes(this.chunks);
      this.chunks = all.length > p.n ? [all.subarray(p.n)] : [];
      this.buffered -= p.n;
      p.resolve(all.subarray(0, p.n));
    } else if (this.failure) {
      this.pending = undefined;
      p.reject(this.failure);
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.serve();
  }
}

export interface NtlmAccount {
  domain: string;
  user: string;
  password: string;
}

/** One session on the socket: sealed calls, then End. */
export class SealedSession {
  private readonly writer = new WriterSession();
  private readonly reader = new ReaderSession();
  private plain: Uint8Array = new Uint8Array(0);

  constructor(
    private readonly socket: Socket,
    private readonly input: Reader,
    private readonly sealing: Sealing,
  ) {}

  /** The result element's text of a call without parameters (`Heartbeat` answers `true`). */
  async call(operation: string): Promise<string> {
    this.send(sizedEnvelope(encodeEnvelope(request(operation, []), this.writer)));
    await this.expect(RecordType.SizedEnvelope);
    const { document } = decodeEnvelope(await this.readPlain(await this.readSize()), this.reader);
    const find = (e: XmlElement | undefined, name?: string) => e?.children.find((c): c is XmlElement => c.kind === 'element' && (name === undefined || c.localName === name));
    const envelope = document.children.find((c): c is XmlElement => c.kind === 'element');
    const result = find(find(find(envelope, 'Body')), `${operation}Result`);
    if (!result) throw new Error(`${operation} answered no ${operation}Result`);
    return result.children.map((c) => (c.kind === 'text' ? textToString(c) : '')).join('');
  }

  /** End inside the sealed stream, and the server's End back; the socket is the pool's again. */
  async end(): Promise<void> {
    this.send(END_RECORD);
    await this.expect(RecordType.End);
  }

  async preamble(): Promise<void> {
    this.send(framing().preambleEnd().finish());
    await this.expect(RecordType.PreambleAck);
  }

  private async expect(type: number): Promise<void> {
    const got = (await this.readPlain(1))[0]!;
    if (got !== type) throw new Error(`record 0x${got.toString(16)} instead of 0x${type.toString(16)}`);
  }

  private async readSize(): Promise<number> {
    const bytes: number[] = [];
    for (;;) {
      bytes.push((await this.readPlain(1))[0]!);
      const size = readInt31(Uint8Array.from(bytes), 0);
      if (size === 'invalid') throw new Error('an invalid record size');
      if (size !== 'short') return size.value;
    }
  }

  private send(record: Uint8Array): void {
    this.socket.write(dataFrame(this.sealing.wrap(record)));
  }

  private async readPlain(n: number): Promise<Uint8Array> {
    while (this.plain.length < n) {
      const header = await this.input.read(4);
      const size = new DataView(header.buffer, header.byteOffset, 4).getUint32(0, true);
      const opened = this.sealing.unwrap(await this.input.read(size));
      this.plain = this.plain.length === 0 ? opened : concatBytes([this.plain, opened]);
    }
    const out = this.plain.subarray(0, n);
    this.plain = this.plain.subarray(n);
    return out;
  }
}

/** A client socket that opens sessions one after another, each with its own upgrade and NTLM logon. */
export class PooledNtlmSocket {
  private constructor(
    readonly socket: Socket,
    private readonly input: Reader,
  ) {}

  static async connect(port: number): Promise<PooledNtlmSocket> {
    const socket = connect({ host: '127.0.0.1', port, noDelay: true });
    const pooled = new PooledNtlmSocket(socket, new Reader(socket));
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return pooled;
  }

  /** A new session: plaintext preamble with the upgrade, NTLM logon, sealed PreambleEnd. */
  async session(via: string, account: NtlmAccount): Promise<SealedSession> {
    this.socket.write(clientPreamble(via, NEGOTIATE_UPGRADE));
    const upgrade = await this.input.read(1);
    if (upgrade[0] !== RecordType.UpgradeResponse) throw new Error(`record 0x${upgrade[0]!.toString(16)} instead of UpgradeResponse`);
    const session = new SealedSession(this.socket, this.input, await this.handshake(account));
    await session.preamble();
    return session;
  }

  close(): void {
    this.socket.destroy();
  }

  /** NegTokenInit(NEGOTIATE) → CHALLENGE → AUTHENTICATE + mechListMIC → accept-completed + mechListMIC. */
  private async handshake(account: NtlmAccount): Promise<Sealing> {
    const readToken = async (expected: number): Promise<Uint8Array> => {
      const header = await this.input.read(5);
      const payload = await this.input.read((header[3]! << 8) | header[4]!);
      if (header[0] === HandshakeId.Error) throw new Error(`logon denied (0x${errorStatus(payload)?.littleEndian.toString(16)})`);
      if (header[0] !== expected) throw new Error(`handshake message 0x${header[0]!.toString(16)} instead of 0x${expected.toString(16)}`);
      return payload;
    };
    const mechTypes = [OID.ntlm];
    const ntlm = new TestNtlmClient(account.user, account.domain, account.password);
    this.socket.write(handshakeFrame(HandshakeId.InProgress, encodeNegTokenInit({ mechTypes, mechToken: ntlm.negotiate() })));
    const challenge = decodeNegTokenResp(await readToken(HandshakeId.InProgress));
    if (challenge.responseToken === undefined) throw new Error('no CHALLENGE in the answer');
    const authenticate = ntlm.authenticate(challenge.responseToken);
    const sealing = ntlm.security!;
    const mechList = encodeMechTypes(mechTypes);
    this.socket.write(handshakeFrame(HandshakeId.InProgress, encodeNegTokenResp({ responseToken: authenticate, mechListMIC: sealing.getMic(mechList, { mechListMic: true }) })));
    const done = decodeNegTokenResp(await readToken(HandshakeId.Done));
    if (done.negState !== NegState.AcceptCompleted || done.mechListMIC === undefined) throw new Error('the handshake did not complete');
    sealing.verifyMic(mechList, done.mechListMIC, { mechListMic: true });
    return sealing;
  }
}
