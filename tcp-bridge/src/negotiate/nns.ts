/**
 * MS-NNS (.NET NegotiateStream) framing, server side: an incremental decoder fed chunks of any size, and the writers.
 *
 * Handshake messages (MS-NNS 2.2.1): `id, 1, 0, size-hi, size-lo` then the token. The size is big-endian although
 * MS-NNS says "little-endian" for multi-byte fields: it is written as two named bytes, high first, and that is what
 * .NET and the captures in test/fixtures/nettcp show. Ids: 0x16 in progress, 0x14 done, 0x15 error.
 * Data messages (MS-NNS 2.2.2): a 4-byte little-endian length, then the wrapped payload. .NET sends at most 63 KiB of
 * plaintext per frame and refuses frames over 64 KiB; this side sends at most 0xFC30 payload bytes and accepts up to
 * 65 536 (a Kerberos wrap of 63 KiB is 64 572 bytes).
 *
 * Decisions:
 * - The decoder reads one frame at a time (`next()`) in the current mode, so the caller can switch from handshake to
 *   data framing exactly after the last handshake frame, whatever else the chunk held.
 * - The major and minor version bytes are checked (1.0): MS-NNS says to ignore them, but nothing else sends other
 *   values and a stray byte stream is better refused early.
 * - Sizes are checked as soon as the header is complete, before any payload is buffered; what the decoder buffers
 *   is bounded by one frame plus one chunk (`maxBuffered`).
 * - The error payload is 8 bytes holding the HRESULT, and .NET has read it both ways: the .NET Framework (the legacy
 *   WCF clients) as a big-endian 64-bit integer, .NET Core 7 and later as little-endian; both keep the low 32 bits.
 *   `0C 03 09 80 80 09 03 0C` reads as 0x8009030C either way, so every client shows "logon denied".
 */

import { LOGON_DENIED } from './security-context.ts';

export const HandshakeId = {
  Done: 0x14,
  Error: 0x15,
  InProgress: 0x16,
} as const;

/** The most payload bytes this side puts in one data frame. */
export const MAX_DATA_SEND = 0xfc30;
/** The largest data frame payload accepted (what .NET accepts). */
export const MAX_DATA_ACCEPT = 0x10000;
/** The 16-bit size field's limit. */
export const MAX_HANDSHAKE_PAYLOAD = 0xffff;

export type NnsFrame = { kind: 'handshake'; id: number; payload: Uint8Array } | { kind: 'data'; payload: Uint8Array };

export type NnsErrorCode = 'BadVersion' | 'BadMessageId' | 'TokenTooLarge' | 'FrameSize' | 'BufferOverflow';

/** Bytes that are not NegotiateStream framing: the connection is dropped. */
export class NnsError extends Error {
  override name = 'NnsError';

  constructor(
    readonly code: NnsErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface NnsDecoderOptions {
  /** Largest handshake token accepted (at most 65 535, the field's range). Default 65 535. */
  maxHandshakePayload?: number;
  /** Largest data frame payload accepted. Default 65 536. */
  maxDataPayload?: number;
  /** Most bytes held unread; more is refused (a client flooding while a handshake step runs). Default 2 frames. */
  maxBuffered?: number;
}

export class NnsDecoder {
  private chunks: Uint8Array[] = [];
  private total = 0;
  private mode: 'handshake' | 'data' = 'handshake';
  private readonly maxHandshake: number;
  private readonly maxData: number;
  private readonly maxBuffered: number;

  constructor(options: NnsDecoderOptions = {}) {
    this.maxHandshake = Math.min(options.maxHandshakePayload ?? MAX_HANDSHAKE_PAYLOAD, MAX_HANDSHAKE_PAYLOAD);
    this.maxData = options.maxDataPayload ?? MAX_DATA_ACCEPT;
    this.maxBuffered = options.maxBuffered ?? 2 * (Math.max(this.maxHandshake, this.maxData) + 5);
  }

  get phase(): 'handshake' | 'data' {
    return this.mode;
  }

  /** Bytes received and not yet returned in a frame. */
  get buffered(): number {
    return this.total;
  }

  /** The handshake is over: what follows (and what is already buffered) is data frames. */
  startData(): void {
    this.mode = 'data';
  }

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    if (this.total + chunk.length > this.maxBuffered) {
      throw new NnsError('BufferOverflow', `${this.total + chunk.length} bytes unread (at most ${this.maxBuffered})`);
    }
    this.chunks.push(chunk);
    this.total += chunk.length;
  }

  /** The next complete frame in the current mode, or undefined until more bytes arrive. Throws NnsError. */
  next(): NnsFrame | undefined {
    if (this.mode === 'handshake') {
      if (this.total < 5) return undefined;
      const header = this.peek(5);
      const id = header[0]!;
      if (id !== HandshakeId.Done && id !== HandshakeId.Error && id !== HandshakeId.InProgress) {
        throw new NnsError('BadMessageId', `handshake message id 0x${id.toString(16)} (0x14, 0x15 or 0x16 expected)`);
      }
      if (header[1] !== 1 || header[2] !== 0) {
        throw new NnsError('BadVersion', `NegotiateStream version ${header[1]}.${header[2]} (1.0 expected)`);
      }
      const size = (header[3]! << 8) | header[4]!;
      if (size > this.maxHandshake) {
        throw new NnsError('TokenTooLarge', `handshake token of ${size} bytes (at most ${this.maxHandshake})`);
      }
      if (this.total < 5 + size) return undefined;
      this.take(5);
      return { kind: 'handshake', id, payload: this.take(size) };
    }
    if (this.total < 4) return undefined;
    const header = this.peek(4);
    const size = (header[0]! | (header[1]! << 8) | (header[2]! << 16) | (header[3]! << 24)) >>> 0;
    if (size === 0 || size > this.maxData) {
      throw new NnsError('FrameSize', `data frame of ${size} bytes (1 to ${this.maxData})`);
    }
    if (this.total < 4 + size) return undefined;
    this.take(4);
    return { kind: 'data', payload: this.take(size) };
  }

  private peek(n: number): Uint8Array {
    const first = this.chunks[0]!;
    if (first.length >= n) return first.subarray(0, n);
    return this.gather(n, false);
  }

  private take(n: number): Uint8Array {
    if (n === 0) return new Uint8Array(0);
    const first = this.chunks[0]!;
    if (first.length > n) {
      this.chunks[0] = first.subarray(n);
      this.total -= n;
      return first.slice(0, n);
    }
    if (first.length === n) {
      this.chunks.shift();
      this.total -= n;
      return first.slice();
    }
    return this.gather(n, true);
  }

  private gather(n: number, consume: boolean): Uint8Array {
    const out = new Uint8Array(n);
    let at = 0;
    let index = 0;
    while (at < n) {
      const chunk = this.chunks[index]!;
      const use = Math.min(chunk.length, n - at);
      out.set(chunk.subarray(0, use), at);
      at += use;
      if (consume) {
        if (use === chunk.length) this.chunks.shift();
        else this.chunks[0] = chunk.subarray(use);
      } else {
        index++;
      }
    }
    if (consume) this.total -= n;
    return out;
  }
}

export function handshakeFrame(id: number, payload: Uint8Array): Uint8Array {
  if (payload.length > MAX_HANDSHAKE_PAYLOAD) throw new RangeError(`handshake token of ${payload.length} bytes`);
  const frame = new Uint8Array(5 + payload.length);
  frame.set([id, 1, 0, payload.length >> 8, payload.length & 0xff]);
  frame.set(payload, 5);
  return frame;
}

/** A HandshakeError frame whose 8-byte payload reads as `status` both big- and little-endian (see above). */
export function errorFrame(status: number = LOGON_DENIED): Uint8Array {
  const payload = new Uint8Array(8);
  const view = new DataView(payload.buffer);
  view.setUint32(0, status >>> 0, true);
  view.setUint32(4, status >>> 0, false);
  return handshakeFrame(HandshakeId.Error, payload);
}

/** Reads a HandshakeError payload the way .NET Framework does (big-endian) and the way .NET 7+ does (little-endian). */
export function errorStatus(payload: Uint8Array): { bigEndian: number; littleEndian: number } | undefined {
  if (payload.length < 8) return undefined;
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  return { bigEndian: view.getUint32(4, false), littleEndian: view.getUint32(0, true) };
}

export function dataFrame(payload: Uint8Array): Uint8Array {
  if (payload.length === 0 || payload.length > MAX_DATA_SEND)
    throw new RangeError(`data frame payload of ${payload.length} bytes`);
  const frame = new Uint8Array(4 + payload.length);
  new DataView(frame.buffer).setUint32(0, payload.length, true);
  frame.set(payload, 4);
  return frame;
}
