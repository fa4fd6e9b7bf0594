/**
 * Client side of MC-NMF (duplex session mode): what a server sends a NetTcpBinding client, as a state machine fed
 * arbitrary chunks, the mirror of decoder.ts (WCF keeps the two beside each other too: ClientFramingDecoders and
 * ServerFramingDecoders). Used by the project's own net.tcp clients (the benchmark driver, the test clients); the
 * bridge itself never reads these records.
 *
 *   preamble ─(PreambleAck)─▶ envelopes ─(End)─▶ ended
 *      │ UpgradeResponse
 *      ▼
 *   upgrading ─ upgradeComplete() ─▶ preamble
 *
 * A Fault record ends the stream wherever it comes (the server closes after it). An envelope's buffer is allocated at
 * its declared size when the size is read and filled in place; a declared size over `maxMessageSize` is refused before
 * any of its bytes are waited for.
 */
import { decodeUtf8 } from '../bytes.ts';
import { DEFAULT_MAX_MESSAGE_SIZE, RecordType } from './records.ts';

export type ClientFramingEvent =
  | { type: 'preambleAck' }
  /** The server takes the upgrade: `rest` is what followed in the chunk, the first bytes of the upgraded stream. */
  | { type: 'upgradeResponse'; rest: Uint8Array }
  | { type: 'sizedEnvelope'; payload: Uint8Array }
  /** A framing fault (`http://schemas.microsoft.com/ws/2006/05/framing/faults/...`); the server closes after it. */
  | { type: 'fault'; fault: string }
  | { type: 'end' };

export type ClientDecoderState = 'preamble' | 'upgrading' | 'envelopes' | 'ended' | 'closed';

export class ClientFramingError extends Error {
  override name = 'ClientFramingError';
}

type Step =
  | { kind: 'recordType' }
  | { kind: 'size'; record: 'fault' | 'envelope'; value: number; count: number }
  | { kind: 'data'; record: 'fault' | 'envelope'; buffer: Uint8Array; received: number };

const RECORD_TYPE: Step = { kind: 'recordType' };

export class ClientFramingDecoder {
  private phase: ClientDecoderState = 'preamble';
  private step: Step = RECORD_TYPE;
  private readonly maxMessageSize: number;

  constructor(options: { maxMessageSize?: number } = {}) {
    this.maxMessageSize = options.maxMessageSize ?? DEFAULT_MAX_MESSAGE_SIZE;
  }

  get state(): ClientDecoderState {
    return this.phase;
  }

  /** The upgrade (the NegotiateStream handshake) is done: what follows is the preamble's answer, in the new stream. */
  upgradeComplete(): void {
    if (this.phase !== 'upgrading') throw new ClientFramingError(`upgradeComplete() in state ${this.phase}`);
    this.phase = 'preamble';
  }

  /** Decodes what `chunk` completes; throws ClientFramingError on bytes no server may send here. */
  push(chunk: Uint8Array): ClientFramingEvent[] {
    const events: ClientFramingEvent[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.phase === 'upgrading')
        throw new ClientFramingError('bytes of the upgraded stream before upgradeComplete()');
      if (this.phase === 'ended' || this.phase === 'closed')
        throw this.refuse(`0x${chunk[at]!.toString(16)} after the ${this.phase === 'ended' ? 'End' : 'Fault'} record`);
      const step = this.step;
      if (step.kind === 'recordType') {
        const event = this.recordType(chunk[at++]!);
        if (event?.type === 'upgradeResponse') {
          events.push({ type: 'upgradeResponse', rest: chunk.subarray(at) });
          return events;
        }
        if (event) events.push(event);
      } else if (step.kind === 'size') {
        const byte = chunk[at++]!;
        step.value |= (byte & 0x7f) << (7 * step.count);
        step.count++;
        if (byte & 0x80) {
          if (step.count === 5) throw this.refuse('a record size longer than five bytes');
          continue;
        }
        const size = step.value >>> 0;
        if (step.count === 5 && byte > 0x07) throw this.refuse('a record size over 2^31 - 1');
        if (size > this.maxMessageSize) throw this.refuse(`a ${size}-byte record, more than ${this.maxMessageSize}`);
        this.step = { kind: 'data', record: step.record, buffer: new Uint8Array(size), received: 0 };
        if (size === 0) events.push(this.complete());
      } else {
        const n = Math.min(step.buffer.length - step.received, chunk.length - at);
        step.buffer.set(chunk.subarray(at, at + n), step.received);
        step.received += n;
        at += n;
        if (step.received === step.buffer.length) events.push(this.complete());
      }
    }
    return events;
  }

  private recordType(type: number): ClientFramingEvent | undefined {
    switch (type) {
      case RecordType.PreambleAck:
        if (this.phase !== 'preamble') throw this.refuse('a second PreambleAck');
        this.phase = 'envelopes';
        return { type: 'preambleAck' };
      case RecordType.UpgradeResponse:
        if (this.phase !== 'preamble') throw this.refuse('an UpgradeResponse after the preamble');
        this.phase = 'upgrading';
        return { type: 'upgradeResponse', rest: new Uint8Array(0) };
      case RecordType.SizedEnvelope:
        if (this.phase !== 'envelopes') throw this.refuse('an envelope before PreambleAck');
        this.step = { kind: 'size', record: 'envelope', value: 0, count: 0 };
        return undefined;
      case RecordType.Fault:
        this.step = { kind: 'size', record: 'fault', value: 0, count: 0 };
        return undefined;
      case RecordType.End:
        if (this.phase !== 'envelopes') throw this.refuse('End before PreambleAck');
        this.phase = 'ended';
        return { type: 'end' };
      default:
        throw this.refuse(`unexpected record type 0x${type.toString(16)} from the server`);
    }
  }

  private complete(): ClientFramingEvent {
    const step = this.step as Extract<Step, { kind: 'data' }>;
    this.step = RECORD_TYPE;
    if (step.record === 'envelope') return { type: 'sizedEnvelope', payload: step.buffer };
    this.phase = 'closed';
    return { type: 'fault', fault: decodeUtf8(step.buffer) ?? '(not UTF-8)' };
  }

  private refuse(message: string): ClientFramingError {
    this.phase = 'closed';
    return new ClientFramingError(message);
  }
}
