/**
 * A net.tcp client of IIDBService written here, for the benchmark: Mono's WCF client spends about 50 ms per call
 * whatever the server does (../shared/notes/nettcp-wire.md), so throughput is measured with this one instead. It speaks
 * what NetTcpBinding with SecurityMode.None speaks:
 * - MC-NMF: `Version 1.0 | Mode duplex | Via | KnownEncoding 8 | PreambleEnd`, the server's PreambleAck, then
 *   SizedEnvelopes both ways and End;
 * - each envelope: an MC-NBFSE string table and an MC-NBFX SOAP 1.2 document with WS-Addressing 1.0 headers, names
 *   going out as session strings the way a .NET client sends them.
 * Both are the client codec's (tcp-bridge/src/client/session.ts: the framing records in, the session dictionaries);
 * this module is the socket, the calls and their pairing; the values a call writes are nettcp-values.ts's.
 *
 * A channel is one connection; calls on it may overlap and are matched to replies by RelatesTo (in order when a reply
 * carries none, as Mono's faults do). `runLoad` (nettcp-load.ts) drives N channels in parallel, one call in flight
 * each, and reports calls/s and latency percentiles.
 *
 * Run directly for a quick measurement:
 *   npx tsx bench/nettcp-client.ts net.tcp://127.0.0.1:8808/IDBService [--channels 8] [--seconds 5] [--op Heartbeat|ReturnScalar] [--sql "SELECT 42"]
 */
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { EMPTY_GUID } from '#idb';
import {
  element,
  stringText,
  textToString,
  uuidText,
  type XmlContent,
  type XmlDocument,
  type XmlElement,
} from '../tcp-bridge/src/binary-xml/index.ts';
import { NetTcpClientSession } from '../tcp-bridge/src/client/session.ts';
import { SOAP_NS as SOAP12, WSA_NS as WSA10, XSI_NS as XSI } from '../tcp-bridge/src/soap/names.ts';
import { isMainModule } from './main-module.ts';
import { parametersElement, requestEnvelope, type QueryParameterValue } from './nettcp-values.ts';
export type { QueryParameterValue } from './nettcp-values.ts';

export interface NetTcpChannelOptions {
  /** The service namespace of actions and body elements (default `http://tempuri.org/`). */
  serviceNamespace?: string;
  /** Connect plus PreambleAck (default 10 s). */
  openTimeoutMs?: number;
  /** Per call (default 60 s); a call that times out ends the channel, as WCF faults it. */
  callTimeoutMs?: number;
  /** Largest reply accepted (default 64 MiB, the binding's MaxReceivedMessageSize). */
  maxMessageBytes?: number;
}

/** A SOAP 1.2 fault reply: `code` Sender/Receiver, `subcode` the contract's name (FileNotFound, SqlError, …). */
export class SoapFaultError extends Error {
  override name = 'SoapFaultError';
  constructor(
    readonly code: string,
    readonly subcode: string | undefined,
    readonly reason: string,
    readonly action: string | undefined,
  ) {
    super(`${code}${subcode ? `/${subcode}` : ''}: ${reason}`);
  }
}

/** The channel failed: framing fault record, closed connection, time-out, unreadable reply. */
export class NetTcpChannelError extends Error {
  override name = 'NetTcpChannelError';
}

export interface SoapReply {
  action: string | undefined;
  relatesTo: string | undefined;
  /** The Body's one element (`<HeartbeatResponse>`). */
  body: XmlElement;
}

/** ReturnScalar's object: its `i:type` local name (int, long, string, …) and the value's XML text; null for nil. */
export interface ScalarValue {
  type: string;
  text: string;
}

interface Pending {
  messageId: string;
  resolve: (reply: SoapReply) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** One net.tcp session (one TCP connection) to an IIDBService endpoint. */
export class NetTcpChannel {
  private readonly session: NetTcpClientSession;
  private readonly pending = new Map<string, Pending>();
  private failure: Error | undefined;
  private ended: (() => void) | undefined;
  private readonly namespace: string;
  private readonly callTimeoutMs: number;

  private constructor(
    private readonly socket: Socket,
    readonly endpoint: string,
    options: NetTcpChannelOptions,
  ) {
    this.namespace = options.serviceNamespace ?? 'http://tempuri.org/';
    this.callTimeoutMs = options.callTimeoutMs ?? 60_000;
    this.session = new NetTcpClientSession(endpoint, { maxMessageSize: options.maxMessageBytes ?? 64 * 1024 * 1024 });
  }

  /** Connects, sends the preamble and waits for PreambleAck. */
  static open(endpoint: string, options: NetTcpChannelOptions = {}): Promise<NetTcpChannel> {
    const url = new URL(endpoint);
    if (url.protocol !== 'net.tcp:') throw new TypeError(`${endpoint} is not a net.tcp URL`);
    const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 808) });
    socket.setNoDelay(true);
    const channel = new NetTcpChannel(socket, endpoint, options);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          fail(new NetTcpChannelError(`no PreambleAck from ${endpoint} within ${options.openTimeoutMs ?? 10_000} ms`)),
        options.openTimeoutMs ?? 10_000,
      );
      const fail = (error: Error) => {
        clearTimeout(timer);
        channel.fail(error);
        reject(error);
      };
      channel.onAck = () => {
        clearTimeout(timer);
        resolve(channel);
      };
      channel.onOpenFailure = fail;
      socket.on('connect', () => socket.write(channel.session.preamble()));
      socket.on('data', (chunk) => channel.receive(chunk));
      socket.on('error', (error) => channel.fail(new NetTcpChannelError(`${endpoint}: ${error.message}`)));
      socket.on('close', () => {
        channel.fail(new NetTcpChannelError(`${endpoint}: the connection closed`));
        channel.ended?.();
      });
    });
  }

  private onAck: (() => void) | undefined;
  private onOpenFailure: ((error: Error) => void) | undefined;

  get closed(): boolean {
    return this.failure !== undefined;
  }

  /**
   * Sends one request: `<operation xmlns="{ns}">children</operation>` with Action `{ns}IIDBService/{operation}`.
   * Resolves with the reply; rejects with SoapFaultError for a fault reply, NetTcpChannelError when the channel fails.
   */
  call(operation: string, children: XmlContent[] = []): Promise<SoapReply> {
    if (this.failure) return Promise.reject(this.failure);
    const messageId = `urn:uuid:${randomUUID()}`;
    const envelope = requestEnvelope(this.namespace, this.endpoint, operation, children, messageId);
    const record = this.session.envelope({ children: [envelope] });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => this.fail(new NetTcpChannelError(`${operation}: no reply within ${this.callTimeoutMs} ms`)),
        this.callTimeoutMs,
      );
      this.pending.set(messageId, { messageId, resolve, reject, timer });
      this.socket.write(record);
    });
  }

  async heartbeat(): Promise<boolean> {
    const reply = await this.call('Heartbeat');
    return elementText(child(reply.body, 'HeartbeatResult')) === 'true';
  }

  /** ReturnScalar(requestId, sql, parameters): nil parameters when none are given, as a .NET client sends null. */
  async returnScalar(
    sql: string,
    parameters?: readonly QueryParameterValue[],
    requestId = EMPTY_GUID,
  ): Promise<ScalarValue | null> {
    const reply = await this.call('ReturnScalar', [
      element('', 'requestId', [], [uuidText(requestId)]),
      element('', 'sql', [], [stringText(sql)]),
      parametersElement(parameters),
    ]);
    const result = child(reply.body, 'ReturnScalarResult');
    const attr = (name: string) =>
      result.attributes.find((a) => a.kind === 'attribute' && a.localName === name && a.namespace === XSI);
    const nil = attr('nil');
    if (nil?.kind === 'attribute' && textToString(nil.value) === 'true') return null;
    const type = attr('type');
    const typeName = type?.kind === 'attribute' ? textToString(type.value) : 'string';
    return {
      type: typeName.includes(':') ? typeName.slice(typeName.indexOf(':') + 1) : typeName,
      text: elementText(result),
    };
  }

  /** Sends End and waits for the server's End (or the close); a clean close keeps the session's database requests. */
  async close(timeoutMs = 5000): Promise<void> {
    if (this.failure) return;
    const done = new Promise<void>((resolve) => {
      this.ended = resolve;
    });
    this.socket.write(this.session.end());
    const timer = setTimeout(() => this.socket.destroy(), timeoutMs);
    await done;
    clearTimeout(timer);
  }

  /** Drops the connection at once (a client crash, as far as the server can tell). */
  destroy(): void {
    this.fail(new NetTcpChannelError('the channel was destroyed'));
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(error);
    }
    this.pending.clear();
    this.onOpenFailure?.(error);
    this.socket.destroy();
  }

  /** The server's records, through the client codec; anything but an ack, a reply or End fails the channel. */
  private receive(chunk: Buffer): void {
    try {
      for (const event of this.session.push(chunk)) {
        if (this.failure) return;
        if (event.type === 'envelope') this.reply(event.document);
        else if (event.type === 'preambleAck') {
          this.onOpenFailure = undefined;
          this.onAck?.();
        } else {
          if (event.type === 'end') this.ended?.();
          throw new NetTcpChannelError(
            event.type === 'end'
              ? 'the server ended the session'
              : event.type === 'fault'
                ? `framing fault ${event.fault}`
                : `an unexpected ${event.type} from the server`,
          );
        }
      }
    } catch (error) {
      this.fail(
        error instanceof NetTcpChannelError
          ? error
          : new NetTcpChannelError(error instanceof Error ? error.message : String(error)),
      );
    }
  }

  private reply(document: XmlDocument): void {
    const envelope = document.children.find((c): c is XmlElement => c.kind === 'element');
    if (envelope?.localName !== 'Envelope' || envelope.namespace !== SOAP12)
      throw new NetTcpChannelError('a reply that is no SOAP 1.2 envelope');
    const header = envelope.children.find((c): c is XmlElement => c.kind === 'element' && c.localName === 'Header');
    const headerText = (name: string) => {
      const h = header?.children.find(
        (c): c is XmlElement => c.kind === 'element' && c.localName === name && c.namespace === WSA10,
      );
      return h ? elementText(h) : undefined;
    };
    const action = headerText('Action');
    const relatesTo = headerText('RelatesTo');
    const bodyElement = envelope.children.find((c): c is XmlElement => c.kind === 'element' && c.localName === 'Body');
    const body = bodyElement?.children.find((c): c is XmlElement => c.kind === 'element');
    if (!body) throw new NetTcpChannelError('a reply without a body element');
    // By RelatesTo; a reply without one (Mono's faults) answers the oldest call.
    const pending = relatesTo !== undefined ? this.pending.get(relatesTo) : this.pending.values().next().value;
    if (!pending) throw new NetTcpChannelError(`a reply to no call in flight (RelatesTo ${relatesTo ?? 'missing'})`);
    this.pending.delete(pending.messageId);
    clearTimeout(pending.timer);
    if (body.localName === 'Fault' && body.namespace === SOAP12) pending.reject(readFault(body, action));
    else pending.resolve({ action, relatesTo, body });
  }
}

function child(parent: XmlElement, localName: string): XmlElement {
  const found = parent.children.find((c): c is XmlElement => c.kind === 'element' && c.localName === localName);
  if (!found) throw new NetTcpChannelError(`<${parent.localName}> has no <${localName}>`);
  return found;
}

/** The text an element holds directly (consecutive text records concatenate). */
export function elementText(e: XmlElement): string {
  return e.children.map((c) => (c.kind === 'text' ? textToString(c) : '')).join('');
}

function readFault(fault: XmlElement, action: string | undefined): SoapFaultError {
  const find = (parent: XmlElement | undefined, name: string) =>
    parent?.children.find((c): c is XmlElement => c.kind === 'element' && c.localName === name);
  const localPart = (qname: string) => qname.slice(qname.indexOf(':') + 1);
  const code = find(fault, 'Code');
  const value = find(code, 'Value');
  const subcode = find(find(code, 'Subcode'), 'Value');
  const reason = find(find(fault, 'Reason'), 'Text');
  return new SoapFaultError(
    value ? localPart(elementText(value)) : '?',
    subcode ? localPart(elementText(subcode)) : undefined,
    reason ? elementText(reason) : '',
    action,
  );
}

// Run directly: the load and its command line are in nettcp-load.ts, imported only then (it imports this module).
if (isMainModule(import.meta)) {
  import('./nettcp-load.ts')
    .then(({ main }) => main(process.argv.slice(2)))
    .catch((error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    });
}
