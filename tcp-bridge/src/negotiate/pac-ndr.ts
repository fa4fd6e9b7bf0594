/**
 * The NDR reading under a PAC (MS-RPCE 2.2.6, type serialization version 1, little-endian): aligned integers, unique
 * pointers, conformant arrays, RPC_UNICODE_STRING and RPC_SID, each bounds-checked against the buffer. pac.ts lays
 * the PAC's structures over it. No maintained npm package reads NDR.
 */
import { readSid } from './sid.ts';

export class PacError extends Error {
  override readonly name = 'PacError';
}

/** Most entries a count in a PAC may announce. */
const MAX_ENTRIES = 4096;

export class NdrReader {
  private offset: number;
  private readonly view: DataView;

  constructor(
    private readonly bytes: Uint8Array,
    start: number,
    private readonly end: number,
  ) {
    this.offset = start;
    this.view = dataView(bytes);
  }

  /** Alignment is relative to the start of the serialized data, which type serialization puts at offset 16. */
  align(n: number): void {
    const rel = (this.offset - 16) % n;
    if (rel !== 0) this.skip(n - rel);
  }

  skip(n: number): void {
    this.need(n);
    this.offset += n;
  }

  u8(): number {
    this.need(1);
    return this.bytes[this.offset++]!;
  }

  u16(): number {
    this.align(2);
    this.need(2);
    const v = this.view.getUint16(this.offset, true);
    this.offset += 2;
    return v;
  }

  u32(): number {
    this.align(4);
    this.need(4);
    const v = this.view.getUint32(this.offset, true);
    this.offset += 4;
    return v;
  }

  /** A unique or full pointer's referent ID: 0 is NULL. */
  pointer(): number {
    return this.u32();
  }

  /** A conformant array's maximum count, checked against the count the structure announced. */
  conformance(expected: number, what: string): void {
    const max = this.u32();
    if (max !== expected) throw new PacError(`logon info: ${what} announces ${expected} entries, its array ${max}`);
  }

  count(value: number, what: string, entrySize: number): number {
    if (value > MAX_ENTRIES || value * entrySize > this.end - this.offset)
      throw new PacError(`logon info: ${what} count ${value} does not fit`);
    return value;
  }

  /** RPC_UNICODE_STRING's deferred buffer: conformant varying array of WCHAR. */
  string(header: UnicodeStringHeader, what: string): string {
    if (header.pointer === 0) {
      if (header.length !== 0) throw new PacError(`logon info: ${what} has a length and no buffer`);
      return '';
    }
    const max = this.u32();
    const first = this.u32();
    const actual = this.u32();
    if (
      first !== 0 ||
      actual > max ||
      header.length % 2 !== 0 ||
      header.length / 2 > actual ||
      header.maximumLength / 2 > max
    ) {
      throw new PacError(`logon info: ${what} is malformed`);
    }
    this.count(actual, what, 2);
    this.need(2 * actual);
    const text = new TextDecoder('utf-16le').decode(this.bytes.subarray(this.offset, this.offset + header.length));
    this.offset += 2 * actual;
    return text;
  }

  /** RPC_SID (MS-DTYP 2.4.2.3) as the deferred data of a PISID: conformant, its SubAuthorityCount first. */
  sid(what: string): string {
    const max = this.u32();
    if (max > 15) throw new PacError(`logon info: ${what} has ${max} sub-authorities`);
    this.need(8 + 4 * max);
    if (this.bytes[this.offset + 1] !== max)
      throw new PacError(`logon info: ${what} sub-authority count disagrees with its array`);
    let result: { sid: string; length: number };
    try {
      result = readSid(this.bytes.subarray(0, this.end), this.offset);
    } catch (error) {
      throw new PacError(`logon info: ${what}: ${(error as Error).message}`);
    }
    this.offset += result.length;
    return result.sid;
  }

  unicodeStringHeader(): UnicodeStringHeader {
    const length = this.u16();
    const maximumLength = this.u16();
    const pointer = this.pointer();
    if (length > maximumLength) throw new PacError('logon info: a string is longer than its maximum');
    return { length, maximumLength, pointer };
  }

  private need(n: number): void {
    if (this.offset + n > this.end) throw new PacError('logon info: truncated');
  }
}

export interface UnicodeStringHeader {
  length: number;
  maximumLength: number;
  pointer: number;
}

export function dataView(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
