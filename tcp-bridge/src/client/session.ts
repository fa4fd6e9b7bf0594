/**
 * One net.tcp session as a client speaks it, bytes in and bytes out, no socket: the preamble (with an
 * `application/negotiate` upgrade when asked), the MS-NNS handshake frames, then the framing records, sealed in NNS data
 * frames once a security context is set, and the binary XML session dictionaries of both directions. The project's
 * own clients (bench/nettcp-client.ts, test/support/nettcp/nettcp.ts, test/support/nettcp/ntlm-nettcp.ts) are this
 * codec plus a socket; the records themselves are read by ClientFramingDecoder (framing/client-decoder.ts).
 */
import { decodeEnvelope, encodeEnvelope, ReaderSession, WriterSession, type XmlDocument } from '../binary-xml/index.ts';
import { concatBytes } from '#idb';
import { ClientFramingDecoder, type ClientFramingEvent } from '../framing/client-decoder.ts';
import { clientPreamble, END_RECORD, framing, sizedEnvelope } from '../framing/writer.ts';
import { dataFrame, HandshakeId, handshakeFrame, NnsDecoder } from '../negotiate/nns.ts';

export type ClientEvent =
  | { type: 'preambleAck' }
  /** The server took the upgrade: the NegotiateStream handshake comes next (handshake events). */
  | { type: 'upgradeResponse' }
  | { type: 'handshake'; id: number; payload: Uint8Array }
  | { type: 'envelope'; document: XmlDocument; strings: string[] }
  | { type: 'fault'; fault: string }
  | { type: 'end' };

/** The established context's message protection (NtlmSessionSecurity has it). */
export interface SessionSecurity {
  wrap(plain: Uint8Array): Uint8Array;
  unwrap(sealed: Uint8Array): Uint8Array;
}

export interface ClientSessionOptions {
  /** The upgrade to ask for in the preamble (`application/negotiate`); none by default. */
  upgrade?: string;
  /** Largest envelope accepted from the server (default 64 MiB). */
  maxMessageSize?: number;
}

/** What .NET puts in one NNS data frame at most. */
const MAX_PLAIN_PER_FRAME = 63 * 1024;

export class NetTcpClientSession {
  private readonly framing: ClientFramingDecoder;
  private readonly reader = new ReaderSession();
  private readonly writer = new WriterSession();
  private nns: NnsDecoder | undefined;
  private security: SessionSecurity | undefined;
  private handshakeOver = false;

  constructor(
    readonly via: string,
    private readonly options: ClientSessionOptions = {},
  ) {
    this.framing = new ClientFramingDecoder({ maxMessageSize: options.maxMessageSize });
  }

  /** Version, mode, via and encoding, then the UpgradeRequest when one is asked for, else PreambleEnd. */
  preamble(): Uint8Array {
    return clientPreamble(this.via, this.options.upgrade);
  }

  /** A NegotiateStream handshake frame carrying `token`. */
  handshake(id: number, token: Uint8Array): Uint8Array {
    return handshakeFrame(id, token);
  }

  /**
   * The handshake is done: records go out sealed from now on, and what the server sends is data frames. Returns the
   * events of data frames that already arrived with the last handshake frame.
   */
  secure(security: SessionSecurity): ClientEvent[] {
    if (!this.nns) throw new Error('secure() before the UpgradeResponse');
    this.security = security;
    this.nns.startData();
    this.framing.upgradeComplete();
    return this.drain();
  }

  /** PreambleEnd after an upgrade (sealed). */
  preambleEnd(): Uint8Array {
    return this.seal(framing().preambleEnd().finish());
  }

  /** One request, encoded with this session's dictionary and framed as a sized envelope. */
  envelope(document: XmlDocument): Uint8Array {
    return this.seal(sizedEnvelope(encodeEnvelope(document, this.writer)));
  }

  end(): Uint8Array {
    return this.seal(END_RECORD);
  }

  /** Reads what the server sent; throws ClientFramingError, NnsError or the security's error on a bad stream. */
  push(chunk: Uint8Array): ClientEvent[] {
    if (this.nns) {
      this.nns.push(chunk);
      return this.drain();
    }
    const events: ClientEvent[] = [];
    for (const event of this.framing.push(chunk)) {
      if (event.type === 'upgradeResponse') {
        events.push({ type: 'upgradeResponse' });
        this.nns = new NnsDecoder({
          maxBuffered: 4 * (MAX_PLAIN_PER_FRAME + 1024) + (this.options.maxMessageSize ?? 0),
        });
        this.nns.push(event.rest);
        events.push(...this.drain());
      } else events.push(this.record(event));
    }
    return events;
  }

  private drain(): ClientEvent[] {
    const nns = this.nns!;
    const events: ClientEvent[] = [];
    if (this.handshakeOver && !this.security) return events;
    for (let frame = nns.next(); frame; frame = nns.next()) {
      if (frame.kind === 'handshake') {
        events.push({ type: 'handshake', id: frame.id, payload: frame.payload });
        // What follows the last handshake frame is data frames, read once secure() says the context is there.
        if (frame.id !== HandshakeId.InProgress) {
          this.handshakeOver = true;
          return events;
        }
        continue;
      }
      if (!this.security) throw new Error('a data frame before the handshake completed');
      for (const event of this.framing.push(this.security.unwrap(frame.payload))) events.push(this.record(event));
    }
    return events;
  }

  private record(event: ClientFramingEvent): ClientEvent {
    if (event.type !== 'sizedEnvelope') return event.type === 'upgradeResponse' ? { type: 'upgradeResponse' } : event;
    const { document, strings } = decodeEnvelope(event.payload, this.reader);
    return { type: 'envelope', document, strings };
  }

  private seal(record: Uint8Array): Uint8Array {
    const security = this.security;
    if (!security) return record;
    const frames: Uint8Array[] = [];
    for (let at = 0; at < record.length; at += MAX_PLAIN_PER_FRAME)
      frames.push(dataFrame(security.wrap(record.subarray(at, at + MAX_PLAIN_PER_FRAME))));
    return frames.length === 1 ? frames[0]! : concatBytes(frames);
  }
}
