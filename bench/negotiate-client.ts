/**
 * A net.tcp client with Windows security for the negotiate benchmark, in TypeScript so that sealed calls are measured
 * at the bridge's speed rather than an initiator's (a python3-gssapi client spends more per call than the bridge).
 *
 * With credentials it does what a WCF client with NetTcpBinding, SecurityMode.Transport and
 * TcpClientCredentialType.Windows does over NTLM: the MC-NMF preamble up to the `application/negotiate`
 * UpgradeRequest, the MS-NNS handshake with SPNEGO around NTLMv2 (NEGOTIATE, AUTHENTICATE with the MIC, both
 * mechListMICs; the NTLM messages come from test/support/ntlm-client.ts, the session security is the bridge's own
 * NtlmSessionSecurity in the client role), then PreambleEnd and every record sealed in NNS data frames. Without
 * credentials the same channel speaks SecurityMode.None, so both rows of the benchmark run the same client code and
 * differ only by the security layer.
 */
import { connect, type Socket } from 'node:net';
import { decodeEnvelope, encodeEnvelope, ReaderSession, WriterSession, type XmlContent, type XmlElement } from '../tcp-bridge/src/binary-xml/index.ts';
import { concatBytes, readInt31 } from '../tcp-bridge/src/bytes.ts';
import { clientPreamble, END_RECORD, framing, NEGOTIATE_UPGRADE, RecordType, sizedEnvelope } from '../tcp-bridge/src/framing/index.ts';
import { dataFrame, errorStatus, HandshakeId, handshakeFrame } from '../tcp-bridge/src/negotiate/nns.ts';
import type { NtlmSessionSecurity } from '../tcp-bridge/src/negotiate/ntlm/index.ts';
import { OID } from '../tcp-bridge/src/negotiate/security-context.ts';
import { decodeNegTokenResp, encodeMechTypes, encodeNegTokenInit, encodeNegTokenResp, NegState } from '../tcp-bridge/src/negotiate/spnego.ts';
import { TestNtlmClient } from '../test/support/ntlm-client.ts';
import { request } from '../test/support/soap.ts';
import { elementText } from './nettcp-client.ts';

export interface NtlmCredentials {
  domain: string;
  user: string;
  password: string;
}

/** What .NET puts in one NNS data frame at most. */
const MAX_PLAIN_PER_FRAME = 63 * 1024;
const MECH_TYPES = [OID.ntlm];

/** Reads exact byte counts from a socket as promises; one read pending at a time. */
class SocketReader {
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

/** One net.tcp session to an IIDBService endpoint, one call at a time. */
export class BenchChannel {
  private readonly writer = new WriterSession();
  private readonly reader = new ReaderSession();
  private plain: Uint8Array = new Uint8Array(0);

  private constructor(
    private readonly socket: Socket,
    private readonly input: SocketReader,
    private readonly security: NtlmSessionSecurity | undefined,
  ) {}

  /** Connects and runs the preamble (and with credentials the upgrade and the NTLM handshake) up to PreambleAck. */
  static async open(endpoint: string, credentials?: NtlmCredentials): Promise<BenchChannel> {
    const url = new URL(endpoint);
    const socket = connect({ host: url.hostname, port: Number(url.port || 808), noDelay: true });
    const input = new SocketReader(socket);
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      });
      if (!credentials) {
        socket.write(clientPreamble(endpoint));
        const channel = new BenchChannel(socket, input, undefined);
        await channel.expectRecord(RecordType.PreambleAck);
        return channel;
      }
      socket.write(clientPreamble(endpoint, NEGOTIATE_UPGRADE));
      const upgrade = await input.read(1);
      if (upgrade[0] !== RecordType.UpgradeResponse) throw new Error(`record 0x${upgrade[0]!.toString(16)} instead of UpgradeResponse`);
      const channel = new BenchChannel(socket, input, await ntlmHandshake(socket, input, credentials));
      channel.send(framing().preambleEnd().finish());
      await channel.expectRecord(RecordType.PreambleAck);
      return channel;
    } catch (error) {
      socket.destroy();
      throw error;
    }
  }

  /** Heartbeat(); throws unless the answer is HeartbeatResult true. */
  async heartbeat(): Promise<void> {
    const body = await this.call('Heartbeat', []);
    const result = body.children.find((c): c is XmlElement => c.kind === 'element' && c.localName === 'HeartbeatResult');
    if (!result || elementText(result) !== 'true') throw new Error(`Heartbeat answered <${body.localName}>`);
  }

  /** Sends End and waits for the server's End or the close (at most 2 s). */
  async close(): Promise<void> {
    if (this.input.closed) return;
    try {
      this.send(END_RECORD);
      await Promise.race([this.expectRecord(RecordType.End), new Promise((r) => setTimeout(r, 2000))]);
    } catch {
      // the server closed first: as good
    } finally {
      this.socket.destroy();
    }
  }

  private async call(operation: string, params: XmlContent[]): Promise<XmlElement> {
    this.send(sizedEnvelope(encodeEnvelope(request(operation, params), this.writer)));
    const type = (await this.readPlain(1))[0]!;
    if (type !== RecordType.SizedEnvelope) throw new Error(`record 0x${type.toString(16)} instead of a SizedEnvelope`);
    const { document } = decodeEnvelope(await this.readPlain(await this.readSize()), this.reader);
    const envelope = document.children.find((c): c is XmlElement => c.kind === 'element');
    const body = envelope?.children.find((c): c is XmlElement => c.kind === 'element' && c.localName === 'Body');
    const answer = body?.children.find((c): c is XmlElement => c.kind === 'element');
    if (!answer) throw new Error('a reply without a body element');
    return answer;
  }

  private async expectRecord(expected: number): Promise<void> {
    const type = (await this.readPlain(1))[0]!;
    if (type === expected) return;
    const detail = type === RecordType.Fault ? new TextDecoder().decode(await this.readPlain(await this.readSize())) : `0x${type.toString(16)}`;
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

  private send(record: Uint8Array): void {
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

/** NegTokenInit(NEGOTIATE) → CHALLENGE → AUTHENTICATE + mechListMIC → accept-completed + mechListMIC. */
async function ntlmHandshake(socket: Socket, input: SocketReader, credentials: NtlmCredentials): Promise<NtlmSessionSecurity> {
  const readToken = async (expected: number): Promise<Uint8Array> => {
    const header = await input.read(5);
    const payload = await input.read((header[3]! << 8) | header[4]!);
    if (header[0] === HandshakeId.Error) throw new Error(`logon denied (HandshakeError 0x${errorStatus(payload)?.littleEndian.toString(16)})`);
    if (header[0] !== expected) throw new Error(`handshake message 0x${header[0]!.toString(16)} instead of 0x${expected.toString(16)}`);
    return payload;
  };
  const ntlm = new TestNtlmClient(credentials.user, credentials.domain, credentials.password);
  socket.write(handshakeFrame(HandshakeId.InProgress, encodeNegTokenInit({ mechTypes: MECH_TYPES, mechToken: ntlm.negotiate() })));
  const challenge = decodeNegTokenResp(await readToken(HandshakeId.InProgress));
  if (challenge.responseToken === undefined) throw new Error('no CHALLENGE in the answer');
  const authenticate = ntlm.authenticate(challenge.responseToken);
  const security = ntlm.security!;
  const mechList = encodeMechTypes(MECH_TYPES);
  socket.write(handshakeFrame(HandshakeId.InProgress, encodeNegTokenResp({ responseToken: authenticate, mechListMIC: security.getMic(mechList, { mechListMic: true }) })));
  const done = decodeNegTokenResp(await readToken(HandshakeId.Done));
  if (done.negState !== NegState.AcceptCompleted || done.mechListMIC === undefined) throw new Error('the handshake did not complete');
  security.verifyMic(mechList, done.mechListMIC, { mechListMic: true });
  if (!security.sealing) throw new Error('the context does not seal');
  return security;
}
