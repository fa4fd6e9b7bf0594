/**
 * The strings DictionaryString records point at: the MC-NBFS static dictionary (even keys) and the MC-NBFSE session
 * dictionary (odd keys).
 *
 * The session dictionary lives per connection and per direction. Each sized-envelope payload starts with a string
 * table (a MultiByteInt31 byte count, then that many bytes of MultiByteInt31-length-prefixed UTF-8 strings) that
 * appends to the sender's list; ids count on across the messages of the session, so session string N is key 2N+1.
 * WCF bounds a session's strings to MaxSessionSize bytes (2048 by default, BinaryMessageEncodingBindingElement),
 * counted as the table bytes, length prefixes included:
 * - reading, a table that would pass the bound is refused (BinaryMessageEncoder raises QuotaExceeded), and after
 *   any bad table the session is spoiled for good, as BinaryMessageEncoder marks its reader session invalid;
 * - writing, a string that does not fit is written literally, and from then on no string is added
 *   (XmlBinaryWriterSessionWithQuota sets its remaining bytes to 0).
 */

import { decodeUtf8, int31Size, readInt31, utf8Length } from '../bytes.ts';
import { BinaryXmlError } from './errors.ts';
import { STATIC_DICTIONARY } from './static-dictionary.ts';

export { STATIC_DICTIONARY };

export const DEFAULT_MAX_SESSION_SIZE = 2048;

const STATIC_IDS: ReadonlyMap<string, number> = new Map(STATIC_DICTIONARY.map((value, id) => [value, id]));

/** The key (2 × id) of a static dictionary string, or undefined. */
export function staticKey(value: string): number | undefined {
  const id = STATIC_IDS.get(value);
  return id === undefined ? undefined : id * 2;
}

/** Session strings by id: what the reader needs to resolve odd keys. */
export interface SessionStrings {
  get(id: number): string | undefined;
}

/** The string a DictionaryString key names, or undefined when neither dictionary holds it. */
export function resolveKey(key: number, session: SessionStrings | undefined): string | undefined {
  return key % 2 === 0 ? STATIC_DICTIONARY[key / 2] : session?.get((key - 1) / 2);
}

/** Bytes a string takes in a string table. */
export function tableEntrySize(value: string): number {
  const length = utf8Length(value);
  return int31Size(length) + length;
}

/** The strings the peer announced, in the order (and with the ids) it announced them. */
export class ReaderSession implements SessionStrings {
  private readonly strings: string[] = [];
  private used = 0;
  private spoiled = false;

  constructor(readonly maxSize = DEFAULT_MAX_SESSION_SIZE) {}

  get(id: number): string | undefined {
    return this.strings[id];
  }

  get count(): number {
    return this.strings.length;
  }

  get bytesUsed(): number {
    return this.used;
  }

  /**
   * Reads the string table that opens an envelope payload and appends its strings. Returns them and the offset of the
   * NBFX document that follows.
   */
  readTable(payload: Uint8Array): { strings: string[]; documentOffset: number } {
    if (this.spoiled) throw new BinaryXmlError('InvalidSession', 'an earlier string table was refused', 0);
    try {
      return this.readTableUnchecked(payload);
    } catch (error) {
      this.spoiled = true;
      throw error;
    }
  }

  private readTableUnchecked(payload: Uint8Array): { strings: string[]; documentOffset: number } {
    const header = readInt31(payload, 0);
    if (typeof header === 'string') throw new BinaryXmlError('InvalidSession', 'no string table size', 0);
    const start = header.size;
    const end = start + header.value;
    if (end > payload.length) {
      throw new BinaryXmlError(
        'InvalidSession',
        `a string table of ${header.value} bytes in a ${payload.length}-byte envelope`,
        0,
      );
    }
    if (header.value > this.maxSize - this.used) {
      throw new BinaryXmlError(
        'SessionQuotaExceeded',
        `session strings would take ${this.used + header.value} bytes, more than the ${this.maxSize} allowed`,
        0,
      );
    }
    const strings: string[] = [];
    let at = start;
    while (at < end) {
      const length = readInt31(payload, at);
      if (typeof length === 'string' || at + length.size + length.value > end) {
        throw new BinaryXmlError('InvalidSession', 'a session string runs past its table', at);
      }
      const value = decodeUtf8(payload.subarray(at + length.size, at + length.size + length.value));
      if (value === undefined) throw new BinaryXmlError('InvalidUtf8', 'a session string is not UTF-8', at);
      strings.push(value);
      at += length.size + length.value;
    }
    this.used += header.value;
    this.strings.push(...strings);
    return { strings, documentOffset: end };
  }
}

/** The strings this side announced; new ones go into the next envelope's table. */
export class WriterSession implements SessionStrings {
  private readonly strings: string[] = [];
  private readonly ids = new Map<string, number>();
  private remaining: number;
  private fresh: string[] = [];

  constructor(readonly maxSize = DEFAULT_MAX_SESSION_SIZE) {
    this.remaining = maxSize;
  }

  get(id: number): string | undefined {
    return this.strings[id];
  }

  idOf(value: string): number | undefined {
    return this.ids.get(value);
  }

  get count(): number {
    return this.strings.length;
  }

  get bytesUsed(): number {
    return this.maxSize - this.remaining;
  }

  /** Adds a string if the quota allows, as WCF does: the first refusal closes the session to new strings. */
  tryAdd(value: string): number | undefined {
    const existing = this.ids.get(value);
    if (existing !== undefined) return existing;
    if (this.remaining === 0) return undefined;
    const size = tableEntrySize(value);
    if (size > this.remaining) {
      this.remaining = 0;
      return undefined;
    }
    return this.append(value, size);
  }

  /** Announces a string whatever the strings before it (to replay a table); refuses with SessionQuotaExceeded. */
  add(value: string): number {
    const size = tableEntrySize(value);
    if (size > this.remaining) {
      throw new BinaryXmlError(
        'SessionQuotaExceeded',
        `session string ${JSON.stringify(value)} does not fit the session`,
      );
    }
    return this.append(value, size);
  }

  /** The strings added since the last call: the next envelope's table. */
  takeNew(): readonly string[] {
    const fresh = this.fresh;
    // Nothing new is the usual case: keep the empty array instead of making one per envelope.
    if (fresh.length > 0) this.fresh = [];
    return fresh;
  }

  private append(value: string, size: number): number {
    const id = this.strings.length;
    this.strings.push(value);
    if (!this.ids.has(value)) this.ids.set(value, id);
    this.fresh.push(value);
    this.remaining -= size;
    return id;
  }
}
