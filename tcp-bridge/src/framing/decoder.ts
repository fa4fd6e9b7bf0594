/**
 * Server side of MC-NMF for NetTcpBinding (duplex session mode), as an explicit state machine fed arbitrary chunks:
 * a record may span chunks and a chunk may hold several records, because after a NegotiateStream upgrade the framing
 * bytes arrive in whatever pieces the NNS frames cut them into.
 *
 *   version ─▶ mode ─▶ via ─▶ encoding ─▶ upgradeOrPreambleEnd ─(PreambleEnd)─▶ envelopes ─(End)─▶ version …
 *                                              ▲        │ UpgradeRequest
 *                                              │        ▼
 *                                      upgradeComplete()  upgrading
 *
 * After End the client may open a new session on the same socket (.NET pools
 * connections), so the decoder goes back to `version`. A refusal moves it to `closed` for good.
 *
 * Only duplex mode with the binary session encoding is served, which is all NetTcpBinding sends. Checks happen in the
 * order WCF makes them (ServerModeDecoder, ServerSessionDecoder and SessionConnectionReader in referencesource), each
 * as soon as the bytes that decide it have arrived: a declared size is refused before any of its bytes are waited for,
 * so nothing larger than the limits is ever allocated. A record's buffer is allocated at its declared size when the
 * size is read and filled in place (no copy at the end); the operating system backs such a buffer with memory only
 * as bytes are written into it, so a sender that stalls holds what it sent, not what it declared. `partialEnvelope`
 * tells the owner the size of an envelope being received, so it can budget and time it.
 *
 * Deliberate difference from WCF: a server that requires an upgrade (Windows security) refuses a PreambleEnd that
 * comes without one with the UpgradeInvalid fault where WCF just aborts; the client then reports the binding mismatch
 * ("security enabled on the client and not on the server") instead of a reset socket.
 */

import { FramingFault, type FramingFaultCode } from './faults.ts';
import {
  BINARY_SESSION_CONTENT_TYPE,
  DEFAULT_MAX_CONTENT_TYPE_LENGTH,
  DEFAULT_MAX_MESSAGE_SIZE,
  DEFAULT_MAX_VIA_LENGTH,
  FRAMING_MAJOR_VERSION,
  FramingMode,
  KNOWN_ENCODINGS,
  RecordType,
} from './records.ts';
import { allocate, decodeUtf8, readInt31 } from '../bytes.ts';

export type FramingEvent =
  | { type: 'version'; major: number; minor: number }
  | { type: 'mode'; mode: number }
  | { type: 'via'; via: string }
  /** knownEncoding is set when the client used a KnownEncoding record rather than an extensible one. */
  | { type: 'encoding'; contentType: string; knownEncoding?: number }
  /**
   * The client asks to upgrade the stream (`application/negotiate` for Windows security). The decoder stops here:
   * `rest` holds the bytes of the pushed chunk that followed the record, which belong to the upgraded stream. Answer
   * with UpgradeResponse, run the upgrade on rest + the socket, call upgradeComplete(), then push what the upgraded
   * stream yields.
   */
  | { type: 'upgradeRequest'; contentType: string; rest: Uint8Array }
  /** The preamble is complete: answer with PreambleAck. */
  | { type: 'preambleEnd' }
  | { type: 'sizedEnvelope'; payload: Uint8Array }
  /** The client ended the session: answer with End. A new preamble may follow on the same stream. */
  | { type: 'end' };

export type ServerDecoderState =
  | 'version'
  | 'mode'
  | 'via'
  | 'encoding'
  | 'upgradeOrPreambleEnd'
  | 'upgrading'
  | 'envelopes'
  | 'closed';

export interface ServerDecoderOptions {
  /** Largest envelope accepted; a larger declared size is refused with MaxMessageSizeExceededFault. Default 64 MiB. */
  maxMessageSize?: number;
  /** Longest via in UTF-8 bytes (ViaTooLong). Default 2048, WCF's. */
  maxViaLength?: number;
  /** Longest content type of an extensible encoding or an upgrade (ContentTypeTooLong). Default 256, WCF's. */
  maxContentTypeLength?: number;
  /** Whether a via names this endpoint; false refuses with EndpointNotFound. Default: every via. */
  acceptVia?: (via: string) => boolean;
  /** Whether the message encoding is served; false refuses with ContentTypeInvalid. Default: binary session only. */
  acceptContentType?: (contentType: string) => boolean;
  /** Whether an upgrade is offered; false refuses with UpgradeInvalid. Default: none. */
  acceptUpgrade?: (contentType: string) => boolean;
  /**
   * Refuse a PreambleEnd that no completed upgrade preceded (UpgradeInvalid); a function is asked at PreambleEnd (the
   * connection's answer may depend on the via). Default false.
   */
  requireUpgrade?: boolean | (() => boolean);
}

type Field = 'via' | 'contentType' | 'upgrade' | 'envelope';

/** What the decoder waits for inside the current state. */
type Step =
  | { kind: 'recordType' }
  | { kind: 'versionMajor' }
  | { kind: 'versionMinor'; major: number }
  | { kind: 'modeValue' }
  | { kind: 'knownEncodingValue' }
  | { kind: 'size'; field: Field; value: number; count: number }
  | { kind: 'data'; field: Field; buffer: Uint8Array; received: number };

const RECORD_TYPE: Step = { kind: 'recordType' };

export class ServerFramingDecoder {
  private phase: ServerDecoderState = 'version';
  private step: Step = RECORD_TYPE;
  private consumed = 0;
  private upgraded = false;
  private refusal: FramingFault | undefined;
  private readonly maxMessageSize: number;
  private readonly maxViaLength: number;
  private readonly maxContentTypeLength: number;

  constructor(private readonly options: ServerDecoderOptions = {}) {
    this.maxMessageSize = options.maxMessageSize ?? DEFAULT_MAX_MESSAGE_SIZE;
    this.maxViaLength = options.maxViaLength ?? DEFAULT_MAX_VIA_LENGTH;
    this.maxContentTypeLength = options.maxContentTypeLength ?? DEFAULT_MAX_CONTENT_TYPE_LENGTH;
  }

  get state(): ServerDecoderState {
    return this.phase;
  }

  /** The envelope being received, between its size and its last byte: its declared size and the bytes so far. */
  get partialEnvelope(): { size: number; received: number } | undefined {
    const step = this.step;
    return step.kind === 'data' && step.field === 'envelope'
      ? { size: step.buffer.length, received: step.received }
      : undefined;
  }

  /** Bytes consumed so far (what FramingFault.position counts). */
  get position(): number {
    return this.consumed;
  }

  /**
   * Decodes as much of `chunk` as the protocol allows and returns the completed records' events. Throws only
   * FramingFault; after one, the decoder is closed.
   */
  push(chunk: Uint8Array): FramingEvent[] {
    if (this.phase === 'closed') {
      throw this.refusal ?? new FramingFault('NotReading', 'the decoder refused the stream earlier', this.consumed);
    }
    if (this.phase === 'upgrading') {
      throw this.refuse('NotReading', 'the stream belongs to the upgrade until upgradeComplete() is called');
    }
    const events: FramingEvent[] = [];
    let offset = 0;
    while (offset < chunk.length) {
      const step = this.step;
      if (step === RECORD_TYPE && this.phase === 'envelopes') {
        const end = this.wholeEnvelope(chunk, offset, events);
        if (end >= 0) {
          offset = end;
          continue;
        }
      }
      if (step.kind === 'data') {
        const take = Math.min(step.buffer.length - step.received, chunk.length - offset);
        step.buffer.set(chunk.subarray(offset, offset + take), step.received);
        step.received += take;
        offset += take;
        this.consumed += take;
        if (step.received === step.buffer.length) this.completeField(step.field, step.buffer, events);
      } else {
        const byte = chunk[offset]!;
        offset++;
        this.consumed++;
        this.onByte(step, byte, events);
      }
      const last = events[events.length - 1];
      if (last?.type === 'upgradeRequest') {
        // The rest of the chunk is the upgrade's (the NNS handshake), not framing.
        last.rest = chunk.subarray(offset);
        break;
      }
    }
    return events;
  }

  /**
   * A session's steady state: a SizedEnvelope whose size and payload are all in the chunk is read in one go (its
   * payload copied once), not byte by byte through the steps (onByte and a step object per byte of the record type
   * and size were 3.5% of a Heartbeat's time in the bridge). Returns where the record ends, or -1 to leave it to the
   * steps: another record, a size or payload going on in the next chunk, an invalid size (the steps refuse it).
   */
  private wholeEnvelope(chunk: Uint8Array, offset: number, events: FramingEvent[]): number {
    if (chunk[offset] !== RecordType.SizedEnvelope) return -1;
    const size = readInt31(chunk, offset + 1);
    if (typeof size === 'string') return -1;
    const start = offset + 1 + size.size;
    const end = start + size.value;
    if (end > chunk.length) return -1;
    this.consumed += 1 + size.size;
    this.checkSize('envelope', size.value);
    this.consumed += size.value;
    // A copy, as the steps make: a chunk may be a Buffer (whose slice is a view) or a buffer its sender reuses.
    const payload = allocate(size.value);
    payload.set(chunk.subarray(start, end));
    this.completeField('envelope', payload, events);
    return end;
  }

  /** The upgrade (NegotiateStream) is established: further pushes carry the upgraded stream's plaintext. */
  upgradeComplete(): void {
    if (this.phase !== 'upgrading') {
      throw this.refuse('NotReading', `upgradeComplete() in state ${this.phase}, not after an upgrade request`);
    }
    this.upgraded = true;
    this.phase = 'upgradeOrPreambleEnd';
    this.step = RECORD_TYPE;
  }

  /**
   * The transport ended. Fine between envelopes or sessions (WCF also accepts a close without End there); inside a
   * record or before the preamble is complete it is a PrematureEnd refusal.
   */
  end(): void {
    if (this.phase === 'closed') return;
    const atBoundary = this.step.kind === 'recordType' && (this.phase === 'version' || this.phase === 'envelopes');
    if (!atBoundary) throw this.refuse('PrematureEnd', `the stream ended in state ${this.phase} (${this.step.kind})`);
    this.phase = 'closed';
  }

  private onByte(step: Exclude<Step, { kind: 'data' }>, byte: number, events: FramingEvent[]): void {
    switch (step.kind) {
      case 'recordType':
        this.onRecordType(byte, events);
        return;
      case 'versionMajor':
        if (byte !== FRAMING_MAJOR_VERSION) {
          throw this.refuse('UnsupportedVersion', `framing version ${byte}.x is not supported (1.0 is)`);
        }
        this.step = { kind: 'versionMinor', major: byte };
        return;
      case 'versionMinor':
        // WCF accepts any minor version of major version 1.
        events.push({ type: 'version', major: step.major, minor: byte });
        this.enter('mode');
        return;
      case 'modeValue':
        if (byte !== FramingMode.Duplex) {
          throw this.refuse('UnsupportedMode', `framing mode ${byte} is not served (only duplex, 2)`);
        }
        events.push({ type: 'mode', mode: byte });
        this.enter('via');
        return;
      case 'knownEncodingValue': {
        const contentType = KNOWN_ENCODINGS[byte] ?? `unknown${byte}`;
        this.checkContentType(contentType);
        events.push({ type: 'encoding', contentType, knownEncoding: byte });
        this.enter('upgradeOrPreambleEnd');
        return;
      }
      case 'size': {
        // MultiByteInt31, read a byte at a time because a chunk may end inside it.
        if (step.count === 4 && (byte & 0xf8) !== 0) {
          throw this.refuse('InvalidSize', 'a size with more than 31 bits');
        }
        step.value += (byte & 0x7f) * 2 ** (7 * step.count);
        step.count++;
        if ((byte & 0x80) !== 0) return;
        this.checkSize(step.field, step.value);
        if (step.value === 0) {
          this.completeField(step.field, new Uint8Array(0), events);
        } else {
          this.step = { kind: 'data', field: step.field, buffer: new Uint8Array(step.value), received: 0 };
        }
        return;
      }
    }
  }

  private onRecordType(type: number, events: FramingEvent[]): void {
    const expect = (wanted: number, name: string): void => {
      if (type !== wanted) throw this.unexpected(type, name);
    };
    switch (this.phase) {
      case 'version':
        expect(RecordType.Version, 'Version');
        this.upgraded = false;
        this.step = { kind: 'versionMajor' };
        return;
      case 'mode':
        expect(RecordType.Mode, 'Mode');
        this.step = { kind: 'modeValue' };
        return;
      case 'via':
        expect(RecordType.Via, 'Via');
        this.step = { kind: 'size', field: 'via', value: 0, count: 0 };
        return;
      case 'encoding':
        if (type === RecordType.KnownEncoding) this.step = { kind: 'knownEncodingValue' };
        else if (type === RecordType.ExtensibleEncoding)
          this.step = { kind: 'size', field: 'contentType', value: 0, count: 0 };
        else throw this.unexpected(type, 'KnownEncoding or ExtensibleEncoding');
        return;
      case 'upgradeOrPreambleEnd':
        if (type === RecordType.UpgradeRequest) {
          this.step = { kind: 'size', field: 'upgrade', value: 0, count: 0 };
        } else if (type === RecordType.PreambleEnd) {
          const required = this.options.requireUpgrade;
          if (!this.upgraded && (typeof required === 'function' ? required() : required === true)) {
            throw this.refuse(
              'UpgradeInvalid',
              'this endpoint requires an upgrade (transport security) before PreambleEnd',
            );
          }
          events.push({ type: 'preambleEnd' });
          this.enter('envelopes');
        } else {
          throw this.unexpected(type, 'UpgradeRequest or PreambleEnd');
        }
        return;
      case 'envelopes':
        if (type === RecordType.SizedEnvelope) {
          this.step = { kind: 'size', field: 'envelope', value: 0, count: 0 };
        } else if (type === RecordType.End) {
          events.push({ type: 'end' });
          this.enter('version');
        } else {
          throw this.unexpected(type, 'SizedEnvelope or End');
        }
        return;
      case 'upgrading':
      case 'closed':
        // push() never decodes in these states.
        throw this.refuse('NotReading', `no record is read in state ${this.phase}`);
    }
  }

  private checkSize(field: Field, size: number): void {
    switch (field) {
      case 'via':
        if (size > this.maxViaLength)
          throw this.refuse('ViaTooLong', `via of ${size} bytes (at most ${this.maxViaLength})`);
        return;
      case 'contentType':
      case 'upgrade':
        if (size > this.maxContentTypeLength) {
          throw this.refuse(
            'ContentTypeTooLong',
            `content type of ${size} bytes (at most ${this.maxContentTypeLength})`,
          );
        }
        return;
      case 'envelope':
        if (size > this.maxMessageSize) {
          throw this.refuse(
            'MaxMessageSizeExceededFault',
            `envelope of ${size} bytes (at most ${this.maxMessageSize})`,
          );
        }
        return;
    }
  }

  private completeField(field: Field, bytes: Uint8Array, events: FramingEvent[]): void {
    if (field === 'envelope') {
      events.push({ type: 'sizedEnvelope', payload: bytes });
      this.enter('envelopes');
      return;
    }
    const value = decodeUtf8(bytes);
    if (value === undefined) throw this.refuse('InvalidString', `the ${field} is not UTF-8`);
    switch (field) {
      case 'via':
        if (this.options.acceptVia && !this.options.acceptVia(value)) {
          throw this.refuse('EndpointNotFound', `no endpoint listens at ${value}`);
        }
        events.push({ type: 'via', via: value });
        this.enter('encoding');
        return;
      case 'contentType':
        this.checkContentType(value);
        events.push({ type: 'encoding', contentType: value });
        this.enter('upgradeOrPreambleEnd');
        return;
      case 'upgrade':
        if (!this.options.acceptUpgrade?.(value))
          throw this.refuse('UpgradeInvalid', `upgrade ${value} is not offered`);
        events.push({ type: 'upgradeRequest', contentType: value, rest: new Uint8Array(0) });
        this.phase = 'upgrading';
        this.step = RECORD_TYPE;
        return;
    }
  }

  private checkContentType(contentType: string): void {
    const accept = this.options.acceptContentType ?? ((c: string) => c === BINARY_SESSION_CONTENT_TYPE);
    if (!accept(contentType)) throw this.refuse('ContentTypeInvalid', `message encoding ${contentType} is not served`);
  }

  private enter(phase: ServerDecoderState): void {
    this.phase = phase;
    this.step = RECORD_TYPE;
  }

  private unexpected(type: number, wanted: string): FramingFault {
    return this.refuse(
      'UnexpectedRecord',
      `record type 0x${type.toString(16).padStart(2, '0')} where ${wanted} belongs`,
    );
  }

  private refuse(code: FramingFaultCode, message: string): FramingFault {
    const fault = new FramingFault(code, message, this.consumed);
    this.refusal = fault;
    this.phase = 'closed';
    return fault;
  }
}
