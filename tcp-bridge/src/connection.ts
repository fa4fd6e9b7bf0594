/**
 * One net.tcp connection: the framing state machine fed with the connection's bytes (or, after the Windows security
 * upgrade, with the upgraded stream's plaintext), the binary session dictionaries of each direction, and calls handed to
 * `dispatch` with the connection's caller. Knows nothing of sockets: a ByteStream is anything that writes bytes.
 *
 * Decisions:
 * - Envelopes are decoded in arrival order (the session dictionary is stateful) and dispatched at once: a client may
 *   pipeline calls on one channel, and replies go out as they finish, matched by RelatesTo. Each reply is encoded and
 *   written in one step, so the writer's session strings reach the client in the order they were added. More than
 *   `maxCallsInFlight` calls pause reading.
 * - A framing refusal with a fault string is written as a Fault record, then the stream ends; one without (a record
 *   out of place, a bad size) and a broken session dictionary abort it, as WCF does.
 * - "Clean" for the database requests opened on this connection (spec: a clean channel close keeps them) means the
 *   client ended its session with an End record and nothing of a new session had begun when the stream closed. Any
 *   other end (reset, time-out, framing or dictionary error) rolls them back.
 * - Time-outs: until PreambleEnd, the init time-out (WCF's ChannelInitializationTimeout); afterwards the idle time-out
 *   runs whenever no call is in flight. Each envelope must arrive whole within the message time-out from its size
 *   on, or the connection is aborted (a sender that stalls mid-message holds its bytes no longer than that).
 * - Memory: an envelope's declared size is reserved in the server's ByteBudget before its bytes are read; when
 *   the budget is spent, reading stops until it is granted (the sender waits). A reservation still waiting when the
 *   message time-out ends answers the ServerTooBusy framing fault.
 * - The server sends End in answer to the client's End (WCF does; Mono's server just closes) and keeps reading: .NET
 *   pools connections and may start a new session on the same socket.
 * - With Windows security the pool holds the raw socket, not the upgraded stream (ConnectionPoolHelper in dotnet/wcf
 *   and referencesource keeps the connection from before the upgrade): after the End exchanged inside NegotiateStream
 *   the next session starts with a plaintext preamble and a new upgrade and logon. So the End ends the upgraded
 *   stream (its keys are forgotten) and the caller; the socket is read as raw framing again.
 */
import type { ByteBudget, Caller, Logger } from '#idb';
import {
  BinaryXmlError,
  decodeEnvelope,
  encodeEnvelopeParts,
  ReaderSession,
  WriterSession,
  type XmlDocument,
} from './binary-xml/index.ts';
import {
  END_RECORD,
  FramingFault,
  faultRecord,
  PREAMBLE_ACK,
  ServerFramingDecoder,
  sizedEnvelopeParts,
  UPGRADE_RESPONSE,
  type FramingEvent,
  type FramingFaultName,
  type ServerDecoderOptions,
} from './framing/index.ts';
import type { BridgeObserver, ByteStream, Dispatch, StreamUpgrade, StreamUpgradeAcceptor } from './streams.ts';

export interface ConnectionOptions {
  connectionId: string;
  /** The client's address, for the upgrade (throttling failed logons) and logs. */
  remoteAddress: string;
  /**
   * Transport security (Windows: NegotiateStream, application/negotiate): the client must upgrade before
   * PreambleEnd, and the identity it authenticates as is the caller. Without it (security mode None) every caller
   * is anonymous.
   */
  upgrade?: StreamUpgradeAcceptor;
  dispatch: Dispatch;
  decoder: ServerDecoderOptions;
  initTimeoutMs: number;
  idleTimeoutMs: number;
  /** How long one envelope may take to arrive, from its size to its last byte (budget wait included). */
  messageTimeoutMs: number;
  /** The bytes of partly received envelopes, shared by the server's connections. */
  budget: ByteBudget;
  maxCallsInFlight: number;
  /** Answer this framing fault at PreambleEnd instead of serving (ServerTooBusy when over the connection cap). */
  refuseWith?: FramingFaultName;
  logger: Logger;
  /** Handshakes and refusals, for metrics. */
  observer: BridgeObserver;
  /** Called once when the connection is over; `clean` as described above. */
  onClosed: (clean: boolean) => void;
}

export class BridgeConnection {
  private readonly decoder: ServerFramingDecoder;
  /** Where replies go: the socket, or the upgraded stream over it once established. */
  private out: ByteStream;
  private upgraded: StreamUpgrade | undefined;
  private caller: Caller | undefined;
  private readerSession = new ReaderSession();
  private writerSession = new WriterSession();
  private inFlight = 0;
  /** Reading stopped: too many calls in flight, or an envelope waits for the budget. */
  private pausedForCalls = false;
  private pausedForBudget = false;
  /** The envelope being received: its reservation (0 while waiting for one), time-out, and withdrawal of a wait. */
  private envelope: { reserved: number; timer: ReturnType<typeof setTimeout>; withdraw?: () => void } | undefined;
  private sessionOpen = false;
  private closed = false;
  private draining = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly stream: ByteStream,
    private readonly options: ConnectionOptions,
  ) {
    const upgrade = options.upgrade;
    const secured = upgrade !== undefined;
    this.decoder = new ServerFramingDecoder({
      ...options.decoder,
      requireUpgrade: secured,
      acceptUpgrade: (type) => type === upgrade?.contentType,
    });
    this.out = stream;
    if (!secured) this.caller = { name: 'anonymous', anonymous: true, connectionId: options.connectionId };
    this.arm(options.initTimeoutMs, 'init');
  }

  /** Bytes from the socket. */
  receive(chunk: Uint8Array): void {
    if (this.closed) return;
    if (this.upgraded !== undefined) this.upgraded.receive(chunk);
    else this.framed(chunk);
  }

  /** Bytes of the framing stream: the socket's, or the upgraded stream's plaintext. */
  private framed(chunk: Uint8Array): void {
    if (this.closed) return;
    let events: FramingEvent[];
    try {
      events = this.decoder.push(chunk);
    } catch (error) {
      this.refuse(error);
      return;
    }
    for (const event of events) {
      if (this.closed) return;
      this.handle(event);
    }
    if (this.closed) return;
    this.budgetEnvelope();
    if (this.decoder.state === 'envelopes' && this.inFlight === 0) this.arm(this.options.idleTimeoutMs, 'idle');
  }

  /** Reserves the bytes of an envelope whose size has just been read, or waits for them with reading stopped. */
  private budgetEnvelope(): void {
    const partial = this.decoder.partialEnvelope;
    if (partial === undefined || this.envelope !== undefined) return;
    const { budget, messageTimeoutMs, logger, connectionId } = this.options;
    const timer = setTimeout(() => {
      if (this.envelope?.reserved === 0) {
        logger.log('warn', 'connection refused', {
          connectionId,
          reason: 'ServerTooBusy',
          waitedForBytes: partial.size,
        });
        this.options.observer.refusal('ServerTooBusy');
        this.out.write(faultRecord('ServerTooBusy'));
        this.close(false);
      } else {
        logger.log('warn', 'message timed out, connection aborted', {
          connectionId,
          size: partial.size,
          received: this.decoder.partialEnvelope?.received,
        });
        this.options.observer.refusal('MessageTimeout');
        this.abort();
      }
    }, messageTimeoutMs);
    timer.unref?.();
    const envelope: NonNullable<BridgeConnection['envelope']> = { reserved: 0, timer };
    this.envelope = envelope;
    if (budget.tryReserve(partial.size)) {
      envelope.reserved = partial.size;
      return;
    }
    this.setPaused('budget', true);
    envelope.withdraw = budget.wait(partial.size, () => {
      envelope.reserved = partial.size;
      envelope.withdraw = undefined;
      this.setPaused('budget', false);
    });
  }

  /** The envelope arrived whole, or the connection is over: its reservation goes back to the budget. */
  private endEnvelope(): void {
    const envelope = this.envelope;
    if (envelope === undefined) return;
    this.envelope = undefined;
    clearTimeout(envelope.timer);
    envelope.withdraw?.();
    if (envelope.reserved > 0) this.options.budget.release(envelope.reserved);
    this.setPaused('budget', false);
  }

  private setPaused(reason: 'calls' | 'budget', paused: boolean): void {
    const before = this.pausedForCalls || this.pausedForBudget;
    if (reason === 'calls') this.pausedForCalls = paused;
    else this.pausedForBudget = paused;
    const after = this.pausedForCalls || this.pausedForBudget;
    if (this.closed || this.draining || before === after) return;
    if (after) this.stream.pause();
    else this.stream.resume();
  }

  /** The stream closed under us (the client closed or reset it). */
  streamClosed(): void {
    this.upgraded?.transportClosed();
    this.finish(!this.sessionOpen && this.decoder.state === 'version');
  }

  /** Graceful shutdown: no new calls; the stream closes once the calls in flight have answered. */
  drain(): void {
    this.draining = true;
    this.stream.pause();
    if (this.inFlight === 0) this.close(false);
  }

  /** Closes now; the database requests opened here are rolled back. */
  abort(): void {
    if (this.closed) return;
    this.stream.destroy();
    this.finish(false);
  }

  private handle(event: FramingEvent): void {
    switch (event.type) {
      case 'version':
        // A new session: both dictionaries start empty, as WCF makes a new session encoder per preamble.
        this.sessionOpen = true;
        this.readerSession = new ReaderSession();
        this.writerSession = new WriterSession();
        return;
      case 'mode':
      case 'via':
      case 'encoding':
        return;
      case 'upgradeRequest':
        this.upgrade(event.rest);
        return;
      case 'preambleEnd':
        if (this.options.refuseWith !== undefined) {
          this.options.logger.log('warn', 'connection refused', { reason: this.options.refuseWith });
          this.options.observer.refusal(this.options.refuseWith);
          this.out.write(faultRecord(this.options.refuseWith));
          this.close(false);
          return;
        }
        this.out.write(PREAMBLE_ACK);
        this.arm(this.options.idleTimeoutMs, 'idle');
        return;
      case 'sizedEnvelope':
        this.endEnvelope();
        this.call(event.payload);
        return;
      case 'end':
        this.sessionOpen = false;
        this.out.write(END_RECORD);
        if (this.upgraded !== undefined) this.endUpgrade();
        return;
    }
  }

  /** The session inside the upgraded stream ended: the socket goes back to raw framing (see the decisions above). */
  private endUpgrade(): void {
    const upgraded = this.upgraded!;
    this.upgraded = undefined;
    this.out = this.stream;
    this.caller = undefined;
    upgraded.transportClosed();
  }

  private call(payload: Uint8Array): void {
    let request: XmlDocument;
    try {
      request = decodeEnvelope(payload, this.readerSession).document;
    } catch (error) {
      // Nothing to relate a reply to, and a broken session table spoils every later message: WCF aborts too.
      this.options.logger.log('warn', 'unreadable message, connection aborted', {
        error: error instanceof BinaryXmlError ? error.code : String(error),
      });
      this.options.observer.refusal('UnreadableMessage');
      this.abort();
      return;
    }
    this.inFlight++;
    this.disarm();
    if (this.inFlight >= this.options.maxCallsInFlight) this.setPaused('calls', true);
    void this.options.dispatch(request, this.caller!).then(
      (reply) => this.reply(reply),
      (error: unknown) => {
        // dispatch answers faults itself; reaching here is a bug, and the client would wait for its reply forever.
        this.options.logger.log('error', 'dispatch failed, connection aborted', { error: String(error) });
        this.abort();
      },
    );
  }

  private reply(reply: XmlDocument): void {
    this.inFlight--;
    if (this.closed) return;
    try {
      for (const part of sizedEnvelopeParts(encodeEnvelopeParts(reply, this.writerSession))) this.out.write(part);
    } catch (error) {
      this.options.logger.log('error', 'reply could not be encoded, connection aborted', { error: String(error) });
      this.abort();
      return;
    }
    if (this.draining) {
      if (this.inFlight === 0) this.close(false);
      return;
    }
    if (this.inFlight < this.options.maxCallsInFlight) this.setPaused('calls', false);
    if (this.inFlight === 0) this.arm(this.options.idleTimeoutMs, 'idle');
  }

  private refuse(error: unknown): void {
    if (error instanceof FramingFault) {
      this.options.logger.log('warn', 'framing refused', { code: error.code, position: error.position });
      this.options.observer.refusal(error.code);
      if (error.faultString !== undefined) {
        this.out.write(faultRecord(error.faultString));
        this.close(false);
        return;
      }
    } else {
      this.options.logger.log('error', 'framing failed', { error: String(error) });
    }
    this.abort();
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
          if (this.caller === undefined) observer.handshake(mechanismName ?? 'unknown', 'refused');
          else observer.refusal('IntegrityError');
          this.finish(false);
        },
      },
    );
    this.upgraded.receive(rest);
  }

  private arm(ms: number, reason: 'init' | 'idle'): void {
    this.disarm();
    this.timer = setTimeout(() => {
      this.options.logger.log('info', 'connection timed out', { reason });
      this.abort();
    }, ms);
    this.timer.unref?.();
  }

  private disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Ends the stream after what was written. */
  private close(clean: boolean): void {
    if (this.closed) return;
    this.stream.end();
    this.finish(clean);
  }

  private finish(clean: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.disarm();
    this.endEnvelope();
    this.options.onClosed(clean);
  }
}
