/**
 * Byte helpers shared by the wire layers: the MultiByteInt31 both MC-NMF and MC-NBFX use for lengths, a small
 * growable writer in the fluent style of postgres.js's protocol writer, and strict UTF-8.
 *
 * MultiByteInt31 (MC-NMF 2.2.2, MC-NBFX 2.1.2): 7 bits a byte, least significant group first, high bit = another byte
 * follows. At most 5 bytes; the fifth may only carry the top 3 bits of a 31-bit value, so `(b & 0xF8) !== 0` there is
 * invalid (what FramingDecoders.cs and XmlBufferReader.cs reject). Non-minimal encodings (`80 00` for 0) are read as
 * .NET reads them; writers here always produce the minimal form.
 */

export const INT31_MAX = 0x7fffffff;

/** Result of reading a MultiByteInt31: the value and its byte count, or why not. */
export type Int31Read = { value: number; size: number } | 'short' | 'invalid';

export function readInt31(bytes: Uint8Array, offset: number): Int31Read {
  let value = 0;
  for (let i = 0; i < 5; i++) {
    if (offset + i >= bytes.length) return 'short';
    const b = bytes[offset + i]!;
    if (i === 4) {
      if ((b & 0xf8) !== 0) return 'invalid';
      // Multiplication, not <<: the fifth group lands on bits 28..30 and must not turn the number negative.
      return { value: value + b * 0x10000000, size: 5 };
    }
    value |= (b & 0x7f) << (7 * i);
    if ((b & 0x80) === 0) return { value, size: i + 1 };
  }
  return 'invalid';
}

export function int31Size(value: number): number {
  checkInt31(value);
  if (value < 0x80) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x200000) return 3;
  if (value < 0x10000000) return 4;
  return 5;
}

export function encodeInt31(value: number): Uint8Array {
  return new ByteWriter(5).int31(value).finish();
}

function checkInt31(value: number): void {
  if (!Number.isInteger(value) || value < 0 || value > INT31_MAX) {
    throw new RangeError(`${value} is not a MultiByteInt31 (0 to 2^31-1)`);
  }
}

const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8Encoder = new TextEncoder();

/**
 * Strict UTF-8: undefined for ill-formed input instead of U+FFFD, so a decoded string always re-encodes to the same
 * bytes (a leading BOM is kept as U+FEFF for the same reason).
 */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return utf8Decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

export function encodeUtf8(value: string): Uint8Array {
  return utf8Encoder.encode(value);
}

/**
 * The UTF-8 length of `value` as TextEncoder encodes it (a lone surrogate as U+FFFD, 3 bytes), without encoding it:
 * sizing a text record used to encode every string twice (profile: TextEncoder.encode was 16% of a 2 000-row
 * ReturnDatatable).
 */
export function utf8Length(value: string): number {
  let length = value.length;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) length += 1;
    else if (code >= 0xd800 && code <= 0xdbff && (value.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      length += 2; // a pair: two units, four bytes
      i++;
    } else length += 2;
  }
  return length;
}

/**
 * Room that is filled before it is read, not zeroed: a writer hands out only bytes it has written, a received
 * envelope is copied in whole. Small sizes are carved from Node's shared 8 KiB pool (Buffer.allocUnsafe), as a plain
 * Uint8Array so that `slice` copies; a new ArrayBuffer per writer was 7-10% of a Heartbeat's time in the bridge (a
 * reply makes two writers, a request's framing more).
 */
export function allocate(size: number): Uint8Array {
  const pooled = Buffer.allocUnsafe(size);
  return new Uint8Array(pooled.buffer, pooled.byteOffset, size);
}

/** Growable little-endian byte writer; every method returns the writer so records read as one chain. */
export class ByteWriter {
  private buffer: Uint8Array;
  /** Made on the first fixed-size number: most writers (an envelope's, a record header's) never need one. */
  private view: DataView | undefined;
  private length = 0;

  constructor(initialCapacity = 256) {
    this.buffer = allocate(Math.max(16, initialCapacity));
  }

  get size(): number {
    return this.length;
  }

  private reserve(extra: number): number {
    const at = this.length;
    const needed = at + extra;
    if (needed > this.buffer.length) {
      // Doubling, or room for a large block (a file's bytes) and the few records after it: doubling past a 1 MiB
      // block would copy it again for the end tags.
      const capacity = Math.max(this.buffer.length * 2, needed + 65_536);
      const grown = allocate(capacity);
      grown.set(this.buffer.subarray(0, at));
      this.buffer = grown;
      this.view = undefined;
    }
    this.length = needed;
    return at;
  }

  // Each method reserves before it touches this.buffer / this.view: reserve() may replace them.

  u8(value: number): this {
    const at = this.reserve(1);
    this.buffer[at] = value;
    return this;
  }

  /**
   * `type`, a one-byte length and the bytes of `value`, if it is ASCII of at most 255 characters, in one pass (the
   * commonest text record, a table's cell: measuring it first was a second pass over every character). Else false,
   * and nothing written.
   */
  ascii8(type: number, value: string): boolean {
    const length = value.length;
    if (length > 0xff) return false;
    const at = this.reserve(2 + length);
    const buffer = this.buffer;
    for (let i = 0; i < length; i++) {
      const code = value.charCodeAt(i);
      if (code >= 0x80) {
        this.length = at;
        return false;
      }
      buffer[at + 2 + i] = code;
    }
    buffer[at] = type;
    buffer[at + 1] = length;
    return true;
  }

  bytes(value: Uint8Array): this {
    const at = this.reserve(value.length);
    // A few bytes (a kept name record): a loop beats set's call by far.
    if (value.length <= 16) for (let i = 0; i < value.length; i++) this.buffer[at + i] = value[i]!;
    else this.buffer.set(value, at);
    return this;
  }

  int31(value: number): this {
    checkInt31(value);
    let rest = value;
    while (rest >= 0x80) {
      this.u8((rest & 0x7f) | 0x80);
      rest = Math.floor(rest / 128);
    }
    return this.u8(rest);
  }

  /** MultiByteInt31 byte count, then the UTF-8 bytes: the String of MC-NBFX and the string records of MC-NMF. */
  string(value: string): this {
    const length = utf8Length(value);
    return this.int31(length).utf8(value, length);
  }

  /** The UTF-8 bytes of `value`, `length` of them (utf8Length), encoded in place. */
  utf8(value: string, length: number): this {
    const at = this.reserve(length);
    if (length === value.length) {
      // ASCII: a loop beats encodeInto's call and view for the short strings of an envelope.
      const buffer = this.buffer;
      for (let i = 0; i < length; i++) buffer[at + i] = value.charCodeAt(i);
    } else {
      utf8Encoder.encodeInto(value, this.buffer.subarray(at, at + length));
    }
    return this;
  }

  int16(value: number): this {
    return this.put(2, (view, at) => view.setInt16(at, value, true));
  }

  uint16(value: number): this {
    return this.put(2, (view, at) => view.setUint16(at, value, true));
  }

  int32(value: number): this {
    return this.put(4, (view, at) => view.setInt32(at, value, true));
  }

  uint32(value: number): this {
    return this.put(4, (view, at) => view.setUint32(at, value, true));
  }

  int64(value: bigint): this {
    return this.put(8, (view, at) => view.setBigInt64(at, value, true));
  }

  uint64(value: bigint): this {
    return this.put(8, (view, at) => view.setBigUint64(at, value, true));
  }

  float32(value: number): this {
    return this.put(4, (view, at) => view.setFloat32(at, value, true));
  }

  float64(value: number): this {
    return this.put(8, (view, at) => view.setFloat64(at, value, true));
  }

  private put(size: number, write: (view: DataView, at: number) => void): this {
    const at = this.reserve(size);
    this.view ??= new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.byteLength);
    write(this.view, at);
    return this;
  }

  /** The bytes written so far, as a copy the writer no longer touches. */
  finish(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }

  /** The bytes written so far without copying them: the writer must not be used afterwards. */
  written(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }
}
