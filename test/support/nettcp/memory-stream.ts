/**
 * A ByteStream in memory with a peer that reads at once or not at all, for tests of the bridge's connections without
 * sockets: it keeps the socket's write contract (write() is false once `buffer` bytes wait; a drain follows when the
 * peer has read them all) and splits what the peer read into MC-NMF records.
 */
import { readInt31 } from '../../../tcp-bridge/src/bytes.ts';
import { RecordType } from '../../../tcp-bridge/src/framing/index.ts';
import type { ByteStream } from '../../../tcp-bridge/src/streams.ts';

export type MemoryRecord =
  | { type: 'ack' | 'end' | 'upgradeResponse' }
  | { type: 'fault'; fault: string }
  | { type: 'envelope'; payload: Uint8Array };

export class MemoryStream implements ByteStream {
  /** Bytes written and not read by the peer. */
  unsent = 0;
  paused = false;
  ended = false;
  destroyed = false;
  private reading = true;
  /** What the peer has read, chunk by chunk, until records() takes it. */
  received: Uint8Array[] = [];
  private waiting: Uint8Array[] = [];
  private owesDrain = false;
  private readonly drainListeners: (() => void)[] = [];

  /** `buffer`: what the stream takes before write() says false (a socket's highWaterMark is 16 KiB). */
  constructor(private readonly buffer = 16 * 1024) {}

  write(bytes: Uint8Array): boolean {
    if (this.reading) {
      this.received.push(bytes);
      return true;
    }
    this.waiting.push(bytes);
    this.unsent += bytes.length;
    if (this.unsent < this.buffer) return true;
    this.owesDrain = true;
    return false;
  }

  onDrain(listener: () => void): void {
    this.drainListeners.push(listener);
  }

  end(): void {
    this.ended = true;
  }

  destroy(): void {
    this.destroyed = true;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
  }

  /** The peer stops reading: writes wait in the stream. */
  stopReading(): void {
    this.reading = false;
  }

  /** The peer reads everything waiting, and keeps reading; a drain follows a write that did not fit. */
  readAll(): void {
    this.reading = true;
    this.received.push(...this.waiting);
    this.waiting = [];
    this.unsent = 0;
    if (!this.owesDrain) return;
    this.owesDrain = false;
    for (const listener of this.drainListeners) listener();
  }

  /** The records the peer has read since the last call (a record cut in two stays for the next). */
  records(): MemoryRecord[] {
    let bytes = Buffer.concat(this.received);
    const records: MemoryRecord[] = [];
    for (;;) {
      const type = bytes[0];
      if (type === undefined) break;
      if (type === RecordType.PreambleAck || type === RecordType.End || type === RecordType.UpgradeResponse) {
        records.push({
          type: type === RecordType.PreambleAck ? 'ack' : type === RecordType.End ? 'end' : 'upgradeResponse',
        });
        bytes = bytes.subarray(1);
        continue;
      }
      if (type !== RecordType.Fault && type !== RecordType.SizedEnvelope)
        throw new Error(`record 0x${type.toString(16)}`);
      const size = readInt31(bytes, 1);
      if (typeof size !== 'object' || bytes.length < 1 + size.size + size.value) break;
      const body = new Uint8Array(bytes.subarray(1 + size.size, 1 + size.size + size.value));
      records.push(
        type === RecordType.Fault
          ? { type: 'fault', fault: new TextDecoder().decode(body) }
          : { type: 'envelope', payload: body },
      );
      bytes = bytes.subarray(1 + size.size + size.value);
    }
    this.received = bytes.length > 0 ? [bytes] : [];
    return records;
  }
}
