/**
 * One net.tcp connection: the framing state machine fed with the connection's bytes (or, after the Windows security
 * upgrade, with the upgraded stream's plaintext), the binary session dictionaries of each direction, and calls handed to
 * `dispatch` with the connection's caller. Knows nothing of sockets: a ByteStream is anything that writes bytes.
 *
 * Its life is an explicit state machine (the framing decoder has the finer state of the bytes):
 *   opening ─(PreambleEnd: PreambleAck)─▶ serving ─(End)─▶ pooled ─(a new preamble's version)─▶ opening …
 *      │ any phase: drain() ─▶ draining ─(last reply written)─┐
 *      └──── any phase: the stream closed, a time-out, a refusal ───────────────────────────────┴─▶ closed
 *
 * and every way to close an unhappy connection goes through `refuse` (log, metric, fault record or abort).
 *
 * Decisions:
 * - Envelopes are decoded in arrival order (the session dictionary is stateful) and answered one at a time, in
 *   order, as WCF's default (ConcurrencyMode.Single) serves a session channel: a client may pipeline calls; they
 *   queue, and more than `maxCallsAhead` received calls not yet answered pause reading. One call at a time is what
 *   bounds the memory on the way out (below): a reply's size is known only once it is made.
 * - Memory on the way out: each reply is encoded and written whole, once. While the stream holds more than
 *   `maxUnsentBytes` unsent (a client that reads slowly or not at all), no call is dispatched and nothing is read;
 *   both resume on drain. So a connection holds at most one reply plus that limit, whatever it pipelines.
 * - A stream that stops taking bytes (a write did not fit its buffer and no drain followed) for `sendTimeoutMs`
 *   (.NET's SendTimeout) is aborted, which rolls its database requests back as for any broken connection.
 * - A framing refusal with a fault string is written as a Fault record, then the stream ends; one without (a record
 *   out of place, a bad size) and a broken session dictionary abort it, as WCF does.
 * - "Clean" for the database requests opened on this connection (spec: a clean channel close keeps them) means the
 *   client ended its session with an End record and nothing of a new session had begun when the stream closed. Any
 *   other end (reset, time-out, framing or dictionary error) rolls them back.
 * - Time-outs: while opening, the init time-out (WCF's ChannelInitializationTimeout), from the connection's accept
 *   or a pooled socket's new preamble; while serving or pooled with nothing to answer, the idle time-out
 *   (restarted by every chunk and reply); while the stream does not take bytes, the send time-out. Each envelope must
 *   arrive whole within the message time-out from its size on (envelope-budget.ts).
 * - Memory on the way in: an envelope's declared size is reserved in the server's ByteBudget before its bytes are read
 *   (envelope-budget.ts); reading stops while the reservation waits.
 * - The server sends End in answer to the client's End (WCF does; Mono's server just closes), after the replies to
 *   the calls before it, and keeps reading: .NET pools connections and may start a new session on the same socket.
 * - With Windows security the pool holds the raw socket, not the upgraded stream (ConnectionPoolHelper in dotnet/wcf
 *   and referencesource keeps the connection from before the upgrade): after the End exchanged inside NegotiateStream
 *   the next session starts with a plaintext preamble and a new upgrade and logon. So the End ends the upgraded
 *   stream (its keys are forgotten) and the caller; the socket is read as raw framing again.
 */
import type { Caller } from '#idb';
import {
  BinaryXmlError,
  decodeDocument,
  encodeEnvelopeOf,
  ReaderSession,
  WriterSession,
  type XmlDocument,
} from './binary-xml/index.ts';
import {
  END_RECORD,
  faultRecord,
  PREAMBLE_ACK,
  ServerFramingDecoder,
  sizedEnvelopeParts,
  UPGRADE_RESPONSE,
  type FramingEvent,
} from './framing/index.ts';
import type { ConnectionOptions } from './connection-options.ts';
import { EnvelopeBudget } from './envelope-budget.ts';
import {
  type Deadline,
  deadlineMs,
  deadlineRefusal,
  envelopeRefusal,
  framingRefusal,
  type Refusal,
} from './connection-refusals.ts';
import type { ByteStream, StreamUpgrade } from './streams.ts';
import { anonymousCaller, END, ENDPOINT, METADATA, type Queued } from './connection-queue.ts';

export type { ConnectionOptions };

/** Where a connection is in its life (see the diagram above). */
export type ConnectionPhase = 'opening' | 'serving' | 'pooled' | 'draining' | 'closed';

export class BridgeConnection {
  private readonly decoder: ServerFramingDecoder;
  private readonly envelopes: EnvelopeBudget;
  private lifecycle: ConnectionPhase = 'opening';
  /** Where replies go: the socket, or the upgraded stream over it once established. */
  private out: ByteStream;
  private upgraded: StreamUpgrade | undefined;
  private caller: Caller | undefined;
  /** The via being decoded is the metadata via (no upgrade), and the session being dispatched is a metadata one. */
  private metadataVia = false;
  private metadataSession = false;
  private readerSession = new ReaderSession();
  private writerSession = new WriterSession();
  /** Calls (and an End) received and not yet dispatched, in order; `busy` while one is dispatched. */
  private readonly queue: Queued[] = [];
  private busy = false;
  /** A write did not fit the stream's buffer and no drain has followed. */
  private sendStalled = false;
  private waitingForBudget = false;
  private readingStopped = false;
  private deadline: Deadline | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly stream: ByteStream,
    private readonly options: ConnectionOptions,
  ) {
    const upgrade = options.upgrade;
    const secured = upgrade !== undefined;
    this.decoder = new ServerFramingDecoder({
      ...options.decoder,
      acceptVia: (via) => {
        this.metadataVia = options.metadata?.accepts(via) === true;
        return this.metadataVia || (options.decoder.acceptVia?.(via) ?? true);
      },
      requireUpgrade: () => secured && !this.metadataVia,
      acceptUpgrade: (type) => type === upgrade?.contentType && !this.metadataVia,
    });
    this.envelopes = new EnvelopeBudget({
      budget: options.budget,
      messageTimeoutMs: options.messageTimeoutMs,
      waiting: (waiting) => {
        this.waitingForBudget = waiting;
        this.flow();
      },
      timedOut: (timeout) => this.refuse(envelopeRefusal(timeout, this.decoder.partialEnvelope?.received)),
    });
    this.out = stream;
    if (!secured) this.caller = anonymousCaller(options.connectionId);
    // An upgraded stream's unsent bytes are its transport's: the raw stream's drain stands for both.
    stream.onDrain(() => this.drained());
    this.retime();
  }

  get phase(): ConnectionPhase {
    return this.lifecycle;
  }

  /** A method, not a field read, so that TypeScript does not narrow the phase across calls that change it. */
  private closed(): boolean {
    return this.lifecycle === 'closed';
  }

  /** Bytes from the socket. */
  receive(chunk: Uint8Array): void {
    if (this.lifecycle === 'closed') return;
    if (this.upgraded !== undefined) this.upgraded.receive(chunk);
    else this.framed(chunk);
  }

  /** The stream closed under us (the client closed or reset it). */
  streamClosed(): void {
    this.upgraded?.transportClosed();
    const between = this.lifecycle === 'opening' || this.lifecycle === 'pooled';
    this.finish(between && this.decoder.state === 'version');
  }

  /** Graceful shutdown: nothing more is read; the stream closes once the calls received have been answered. */
  drain(): void {
    if (this.lifecycle === 'closed') return;
    this.lifecycle = 'draining';
    this.flow();
    this.retime();
    if (!this.busy && this.queue.length === 0) this.close(false);
  }

  /** Closes now; the database requests opened here are rolled back. */
  abort(): void {
    if (this.lifecycle === 'closed') return;
    this.stream.destroy();
    this.finish(false);
  }

  /** Bytes of the framing stream: the socket's, or the upgraded stream's plaintext. */
  private framed(chunk: Uint8Array): void {
    if (this.lifecycle === 'closed') return;
    let events: FramingEvent[];
    try {
      events = this.decoder.push(chunk);
    } catch (error) {
      this.refuse(framingRefusal(error));
      return;
    }
    for (const event of events) {
      if (this.closed()) return;
      this.handle(event);
    }
    if (this.closed()) return;
    const partial = this.decoder.partialEnvelope;
    if (partial !== undefined) this.envelopes.begin(partial.size);
    this.retime(true);
  }

  private handle(event: FramingEvent): void {
    switch (event.type) {
      case 'version':
        // A new session: both dictionaries start empty, as WCF makes a new session encoder per preamble.
        this.lifecycle = 'opening';
        this.readerSession = new ReaderSession();
        this.writerSession = new WriterSession();
        return;
      case 'via':
        if (this.options.metadata !== undefined) this.enqueue(this.metadataVia ? METADATA : ENDPOINT);
        return;
      case 'mode':
      case 'encoding':
        return;
      case 'upgradeRequest':
        this.upgrade(event.rest);
        return;
      case 'preambleEnd': {
        const refuseWith = this.options.refuseWith;
        if (refuseWith !== undefined) {
          this.refuse({ reason: refuseWith, message: 'connection refused', fault: refuseWith });
          return;
        }
        this.lifecycle = 'serving';
        this.out.write(PREAMBLE_ACK);
        return;
      }
      case 'sizedEnvelope':
        this.envelopes.end();
        this.received(event.payload);
        return;
      case 'end':
        if (this.lifecycle === 'serving') this.lifecycle = 'pooled';
        this.enqueue(END);
        return;
    }
  }

  /**
   * A request envelope: read now (the dictionary is stateful), dispatched when its turn comes. The dispatch that will
   * answer it (the via's: a preamble's via comes before its envelopes) reads it itself where it can, else it is
   * decoded into a tree.
   */
  private received(payload: Uint8Array): void {
    const dispatch = this.metadataVia ? this.options.metadata!.dispatch : this.options.dispatch;
    let request: XmlDocument | object;
    try {
      const session = this.readerSession;
      const { documentOffset } = session.readTable(payload);
      const document = payload.subarray(documentOffset);
      request = dispatch.read?.(document, session) ?? decodeDocument(document, { session, offsetBase: documentOffset });
    } catch (error) {
      // Nothing to relate a reply to, and a broken session table spoils every later message: WCF aborts too.
      this.refuse({
        reason: 'UnreadableMessage',
        message: 'unreadable message, connection aborted',
        fields: { error: error instanceof BinaryXmlError ? error.code : String(error) },
      });
      return;
    }
    this.enqueue(request);
  }

  private enqueue(item: Queued): void {
    // The hot path (one call at a time, the writer keeping up) dispatches without queueing.
    if (this.queue.length === 0 && this.mayDispatch()) this.dispatch(item);
    else {
      this.queue.push(item);
      this.flow();
    }
  }

  private mayDispatch(): boolean {
    return !this.busy && this.stream.unsent <= this.options.maxUnsentBytes;
  }

  /** Dispatches what the queue holds, in order, while the connection may. */
  private pump(): void {
    while (this.queue.length > 0 && this.mayDispatch() && this.lifecycle !== 'closed')
      this.dispatch(this.queue.shift()!);
    if (this.lifecycle === 'draining' && !this.busy && this.queue.length === 0) {
      this.close(false);
      return;
    }
    this.flow();
    this.retime();
  }

  private dispatch(item: Queued): void {
    if (item === END || item === METADATA || item === ENDPOINT) {
      if (item === END) this.answerEnd();
      else this.metadataSession = item === METADATA;
      return;
    }
    this.busy = true;
    this.retime();
    // The metadata via is served anonymously, as WCF serves mexTcpBinding.
    const [dispatch, caller] = this.metadataSession
      ? [this.options.metadata!.dispatch, anonymousCaller(this.options.connectionId)]
      : [this.options.dispatch, this.caller!];
    void dispatch.answer(item, caller).then(
      (reply) => this.answer(reply),
      (error: unknown) =>
        // dispatch answers faults itself; reaching here is a bug, and the client would wait for its reply forever.
        this.refuse({
          reason: 'DispatchFailed',
          message: 'dispatch failed, connection aborted',
          fields: { error: String(error) },
          level: 'error',
        }),
    );
  }

  private answer(reply: XmlDocument): void {
    this.busy = false;
    if (this.lifecycle === 'closed') return;
    let record: Uint8Array[];
    try {
      // A large reply goes out as its record header and the document's parts as written: a file's bytes are not
      // copied into one buffer (sizedEnvelopeParts).
      record = sizedEnvelopeParts(encodeEnvelopeOf(reply, this.writerSession));
    } catch (error) {
      this.refuse({
        reason: 'UnencodableReply',
        message: 'reply could not be encoded, connection aborted',
        fields: { error: String(error) },
        level: 'error',
      });
      return;
    }
    for (const part of record) this.send(part);
    this.pump();
  }

  /** The End in its turn: End back (WCF does), and an upgraded stream's session is over. */
  private answerEnd(): void {
    this.send(END_RECORD);
    if (this.upgraded === undefined) return;
    // The socket goes back to raw framing (see the decisions above).
    const upgraded = this.upgraded;
    this.upgraded = undefined;
    this.out = this.stream;
    this.caller = undefined;
    upgraded.transportClosed();
  }

  /** Writes to the current stream; a write that does not fit starts the send time-out. */
  private send(bytes: Uint8Array): void {
    if (this.out.write(bytes) || this.sendStalled) return;
    this.sendStalled = true;
    this.retime();
  }

  /** Everything written has gone out. */
  private drained(): void {
    if (!this.sendStalled || this.lifecycle === 'closed') return;
    this.sendStalled = false;
    this.pump();
  }

  /** Stops or resumes reading: one place decides, from every reason to stop. */
  private flow(): void {
    if (this.lifecycle === 'closed') return;
    const stop =
      this.lifecycle === 'draining' ||
      this.waitingForBudget ||
      this.queue.length + (this.busy ? 1 : 0) >= this.options.maxCallsAhead ||
      this.queue[this.queue.length - 1] === END ||
      this.stream.unsent > this.options.maxUnsentBytes;
    if (stop === this.readingStopped) return;
    this.readingStopped = stop;
    if (stop) this.stream.pause();
    else this.stream.resume();
  }

  /** Starts the time-out the state calls for: init and send from their start, idle anew on `activity` (read, reply). */
  private retime(activity = false): void {
    const phase = this.lifecycle;
    let deadline: Deadline | undefined;
    if (phase === 'closed') deadline = undefined;
    else if (this.sendStalled) deadline = 'send';
    else if (phase === 'opening') deadline = 'init';
    else if ((phase === 'serving' || phase === 'pooled') && !this.busy && this.queue.length === 0) deadline = 'idle';
    if (deadline === this.deadline && (deadline !== 'idle' || !activity)) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.deadline = deadline;
    if (deadline === undefined) return;
    const ms = deadlineMs(deadline, this.options);
    this.timer = setTimeout(() => this.refuse(deadlineRefusal(deadline, this.stream.unsent)), ms);
    this.timer.unref?.();
  }

  /** The one way an unhappy connection ends: logged, counted, then a fault record and the end, or an abort. */
  private refuse(refusal: Refusal): void {
    if (this.lifecycle === 'closed') return;
    const { connectionId, logger, observer } = this.options;
    logger.log(refusal.level ?? 'warn', refusal.message, { connectionId, reason: refusal.reason, ...refusal.fields });
    if (refusal.counted !== false) observer.refusal(refusal.reason);
    if (refusal.fault === undefined) {
      this.abort();
      return;
    }
    this.out.write(faultRecord(refusal.fault));
    this.close(false);
  }

  /**
   * The upgrade over the socket (NegotiateStream): its handshake, then the framing stream continues as its
   * plaintext. The init time-out keeps running through the handshake until PreambleEnd.
   */
  private upgrade(rest: Uint8Array): void {
    const { connectionId, remoteAddress, logger, observer } = this.options;
    this.stream.write(UPGRADE_RESPONSE);
    this.upgraded = this.options.upgrade!.accept(
      this.stream,
      { connectionId, remoteAddress, logger },
      {
        established: (peer, plaintext) => {
          this.caller = { name: peer.name, anonymous: false, connectionId, sids: peer.sids };
          this.out = plaintext;
          // The SIDs, when the domain gave any: what an operator needs to see why a role was (not) granted.
          const sids = peer.sids.length > 0 ? { sids: peer.sids } : {};
          logger.log('info', 'authenticated', {
            connectionId,
            caller: peer.name,
            mechanism: peer.mechanismName,
            protection: peer.protectionLevel,
            ...sids,
          });
          observer.handshake(peer.mechanismName, 'established');
          this.decoder.upgradeComplete();
        },
        data: (plain) => this.framed(plain),
        failed: (_error, mechanismName) => {
          // The upgrade has ended or destroyed the raw stream itself (and logged why).
          if (this.caller === undefined) observer.handshake(mechanismName ?? 'unknown', 'refused');
          else observer.refusal('IntegrityError');
          this.finish(false);
        },
      },
    );
    this.upgraded.receive(rest);
  }

  /** Ends the stream after what was written. */
  private close(clean: boolean): void {
    if (this.lifecycle === 'closed') return;
    this.stream.end();
    this.finish(clean);
  }

  private finish(clean: boolean): void {
    if (this.lifecycle === 'closed') return;
    this.lifecycle = 'closed';
    this.retime();
    this.envelopes.end();
    this.queue.length = 0;
    this.options.onClosed(clean);
  }
}
