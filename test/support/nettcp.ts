/**
 * A net.tcp client for tests that speaks the protocol itself (framing + binary session encoding), so the bridge's
 * answers to well-formed and malformed streams can be checked byte by byte without a WCF client.
 */
import { connect, type Socket } from 'node:net';
import {
  decodeEnvelope,
  encodeEnvelope,
  ReaderSession,
  WriterSession,
  type XmlDocument,
} from '../../tcp-bridge/src/binary-xml/index.ts';
import { clientPreamble, END_RECORD, RecordType, sizedEnvelope } from '../../tcp-bridge/src/framing/index.ts';
import { readInt31 } from '../../tcp-bridge/src/bytes.ts';

export type ServerRecord =
  | { type: 'ack' }
  | { type: 'end' }
  | { type: 'fault'; fault: string }
  | { type: 'envelope'; document: XmlDocument }
  | { type: 'closed' };

export class NetTcpTestClient {
  private buffer = new Uint8Array(0);
  private waiting: (() => void) | undefined;
  private ended = false;
  private reader = new ReaderSession();
  private writer = new WriterSession();

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      const next = new Uint8Array(this.buffer.length + chunk.length);
      next.set(this.buffer);
      next.set(chunk, this.buffer.length);
      this.buffer = next;
      this.waiting?.();
    });
    const done = () => {
      this.ended = true;
      this.waiting?.();
    };
    socket.on('close', done);
    socket.on('error', done);
  }

  static async open(port: number): Promise<NetTcpTestClient> {
    const socket = connect({ port, host: '127.0.0.1' });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new NetTcpTestClient(socket);
  }

  /** Opens a session: preamble with the via, then PreambleEnd; resolves with the server's answer. */
  async preamble(via = 'net.tcp://localhost/IDBService'): Promise<ServerRecord> {
    // Each session has its own dictionaries, on both sides.
    this.reader = new ReaderSession();
    this.writer = new WriterSession();
    this.send(clientPreamble(via));
    return this.next();
  }

  send(bytes: Uint8Array): void {
    this.socket.write(bytes);
  }

  /** Sends one request envelope and resolves with the next record (the reply). */
  async call(document: XmlDocument): Promise<ServerRecord> {
    this.send(sizedEnvelope(encodeEnvelope(document, this.writer)));
    return this.next();
  }

  end(): void {
    this.send(END_RECORD);
  }

  /** The next record the server sent, or `closed`. */
  async next(): Promise<ServerRecord> {
    for (;;) {
      const record = this.take();
      if (record) return record;
      if (this.ended) return { type: 'closed' };
      await new Promise<void>((resolve) => (this.waiting = resolve));
      this.waiting = undefined;
    }
  }

  close(): void {
    this.socket.destroy();
  }

  private take(): ServerRecord | undefined {
    const b = this.buffer;
    if (b.length === 0) return undefined;
    const consume = (n: number) => (this.buffer = b.slice(n));
    switch (b[0]) {
      case RecordType.PreambleAck:
        consume(1);
        return { type: 'ack' };
      case RecordType.End:
        consume(1);
        return { type: 'end' };
      case RecordType.Fault:
      case RecordType.SizedEnvelope: {
        const size = readInt31(b, 1);
        if (typeof size !== 'object' || b.length < 1 + size.size + size.value) return undefined;
        const body = b.slice(1 + size.size, 1 + size.size + size.value);
        consume(1 + size.size + size.value);
        return b[0] === RecordType.Fault
          ? { type: 'fault', fault: new TextDecoder().decode(body) }
          : { type: 'envelope', document: decodeEnvelope(body, this.reader).document };
      }
      default:
        throw new Error(`unexpected record 0x${b[0]!.toString(16)}`);
    }
  }
}
