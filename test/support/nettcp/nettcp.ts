/**
 * A net.tcp client for tests that speaks the protocol itself (framing + binary session encoding), so the bridge's
 * answers to well-formed and malformed streams can be checked byte by byte without a WCF client.
 */
import { connect, type Socket } from 'node:net';
import type { XmlDocument } from '../../../tcp-bridge/src/binary-xml/index.ts';
import { type ClientEvent, NetTcpClientSession } from '../../../tcp-bridge/src/client/session.ts';

export type ServerRecord =
  | { type: 'ack' }
  | { type: 'end' }
  | { type: 'fault'; fault: string }
  | { type: 'envelope'; document: XmlDocument }
  | { type: 'closed' };

export class NetTcpTestClient {
  private readonly records: ServerRecord[] = [];
  private failure: Error | undefined;
  private waiting: (() => void) | undefined;
  private ended = false;
  private session = new NetTcpClientSession('net.tcp://localhost/IDBService');

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const event of this.session.push(chunk)) this.records.push(record(event));
      } catch (error) {
        this.failure ??= error instanceof Error ? error : new Error(String(error));
      }
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
    this.session = new NetTcpClientSession(via);
    this.send(this.session.preamble());
    return this.next();
  }

  send(bytes: Uint8Array): void {
    this.socket.write(bytes);
  }

  /** Sends one request envelope and resolves with the next record (the reply). */
  async call(document: XmlDocument): Promise<ServerRecord> {
    this.send(this.session.envelope(document));
    return this.next();
  }

  end(): void {
    this.send(this.session.end());
  }

  /** The next record the server sent, or `closed`; throws on bytes no server may send. */
  async next(): Promise<ServerRecord> {
    for (;;) {
      const record = this.records.shift();
      if (record) return record;
      if (this.failure) throw this.failure;
      if (this.ended) return { type: 'closed' };
      await new Promise<void>((resolve) => (this.waiting = resolve));
      this.waiting = undefined;
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

function record(event: ClientEvent): ServerRecord {
  switch (event.type) {
    case 'preambleAck':
      return { type: 'ack' };
    case 'envelope':
      return { type: 'envelope', document: event.document };
    case 'fault':
    case 'end':
      return event;
    default:
      throw new Error(`unexpected ${event.type} from the server`);
  }
}
