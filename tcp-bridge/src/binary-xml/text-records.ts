/**
 * MC-NBFX reader, the byte level under the element reader (reader.ts): the cursor over the bytes with its length
 * checks and the record quota, and the text records, lists and arrays a document holds. Every declared length is
 * checked against the bytes that remain before anything is allocated for it. Throws only BinaryXmlError.
 */
import { decodeUtf8, readInt31 } from '../bytes.ts';
import { resolveKey, type SessionStrings } from './dictionary.ts';
import { BinaryXmlError } from './errors.ts';
import type { DateTimeKind, DateTimeValue, XmlElement, XmlNamespaceDeclaration, XmlText } from './nodes.ts';
import {
  letterPrefixIndex,
  MAX_TEXT,
  MIN_TEXT,
  Record,
  TEXT_TYPE_BY_RECORD,
  type ArrayItemType,
  type NameRecords,
} from './records.ts';
import { decimalFromBytes, guidFromBytes, UNIQUE_ID_PREFIX } from './values.ts';

export interface DecodeOptions {
  /** Resolves odd (session) dictionary keys; without it they are unknown strings. */
  session?: SessionStrings;
  /** Deepest element nesting, WCF's XmlDictionaryReaderQuotas.MaxDepth default. Default 32. */
  maxDepth?: number;
  /**
   * Most records (and array items) in one document. The tree costs far more memory than the bytes, so this bounds
   * what a hostile message of the maximum size can make the reader build. Default 262 144.
   */
  maxRecords?: number;
  /** Added to the offsets errors report (where the document starts in a larger buffer). */
  offsetBase?: number;
}

export const DEFAULT_MAX_RECORDS = 1 << 18;

/** What an element or attribute record names: an element or attribute node, or a reader's scratch copy. */
export type NamedNode = Pick<XmlElement, 'prefix' | 'localName' | 'localNameKey' | 'longForm'>;

/** The bytes, the offset reached and the records counted; names, the text, list and array records. */
export abstract class RecordReader {
  protected at = 0;
  /** The key of the DictionaryString read last. */
  protected dictionaryKey = 0;
  private records = 0;
  private readonly view: DataView;
  private readonly maxRecords: number;

  constructor(
    protected readonly bytes: Uint8Array,
    protected readonly options: DecodeOptions,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.maxRecords = options.maxRecords ?? DEFAULT_MAX_RECORDS;
  }

  /** The prefix and local name of an element or attribute record whose type byte has been read. */
  protected qualifiedName(type: number, forms: NameRecords, into: NamedNode): void {
    const prefixDictionary = type >= forms.prefixDictionaryA && type < forms.prefixDictionaryA + 26;
    if (type === forms.general || type === forms.dictionary) {
      into.prefix = this.string();
      // The writer would have used a shorter record for these prefixes: remember that it did not.
      if (into.prefix === '' || letterPrefixIndex(into.prefix) >= 0) into.longForm = true;
    } else if (prefixDictionary) {
      into.prefix = letter(type - forms.prefixDictionaryA);
    } else if (type >= forms.prefixA) {
      into.prefix = letter(type - forms.prefixA);
    } else {
      into.prefix = '';
    }
    if (prefixDictionary || type === forms.shortDictionary || type === forms.dictionary) {
      into.localName = this.dictionaryString();
      into.localNameKey = this.dictionaryKey;
    } else {
      into.localName = this.string();
    }
  }

  /** The prefix and URI of an xmlns record whose type byte has been read. */
  protected namespaceDeclaration(type: number, into: XmlNamespaceDeclaration): void {
    into.prefix = '';
    if (type === Record.XmlnsAttribute || type === Record.DictionaryXmlnsAttribute) {
      into.prefix = this.string();
      if (into.prefix === '') into.longForm = true;
    }
    if (type === Record.ShortXmlnsAttribute || type === Record.XmlnsAttribute) into.uri = this.string();
    else {
      into.uri = this.dictionaryString();
      into.uriKey = this.dictionaryKey;
    }
  }

  /** One text record, without EndElement (a list counts as one). */
  protected attributeValue(attributeStart: number): XmlText {
    const start = this.at;
    const type = this.u8();
    this.count(1);
    if (type === Record.StartListText) return this.list();
    if (type < MIN_TEXT || type > MAX_TEXT || (type & 1) !== 0 || type === Record.EndListText) {
      throw this.fail(
        'InvalidRecord',
        `record 0x${hex(type)} as the value of the attribute at ${attributeStart}`,
        start,
      );
    }
    return this.text(type, start);
  }

  /**
   * A text record of an element's content, `type` (MIN_TEXT to MAX_TEXT) read at `start`: a list, or one text. Its
   * WithEndElement form (an odd `type`) is the caller's to act on.
   */
  protected contentText(type: number, start: number): XmlText {
    const even = type & ~1;
    if (even === Record.StartListText && type === even) return this.list();
    if (even === Record.StartListText || even === Record.EndListText) {
      throw this.fail(
        'InvalidRecord',
        `record 0x${hex(type)}: lists have no WithEndElement form, EndListText no list to end`,
        start,
      );
    }
    return this.text(even, start);
  }

  /** After StartListText: text records up to EndListText. */
  protected list(): XmlText {
    const items: XmlText[] = [];
    for (;;) {
      const start = this.at;
      const type = this.u8();
      this.count(1);
      if (type === Record.EndListText) return { kind: 'text', type: 'List', items };
      if (type < MIN_TEXT || type > MAX_TEXT || (type & 1) !== 0 || type === Record.StartListText) {
        throw this.fail('InvalidRecord', `record 0x${hex(type)} inside a list`, start);
      }
      items.push(this.text(type, start));
    }
  }

  /** The value of an (even) text record whose type byte has been read. */
  protected text(type: number, start: number): XmlText {
    const name = TEXT_TYPE_BY_RECORD.get(type);
    switch (name) {
      case 'Zero':
      case 'One':
      case 'False':
      case 'True':
      case 'Empty':
        return { kind: 'text', type: name };
      case 'Int8':
        return { kind: 'text', type: name, value: this.view.getInt8(this.take(1)) };
      case 'Int16':
        return { kind: 'text', type: name, value: this.view.getInt16(this.take(2), true) };
      case 'Int32':
        return { kind: 'text', type: name, value: this.view.getInt32(this.take(4), true) };
      case 'Int64':
        return { kind: 'text', type: name, value: this.view.getBigInt64(this.take(8), true) };
      case 'UInt64':
        return { kind: 'text', type: name, value: this.view.getBigUint64(this.take(8), true) };
      case 'TimeSpan':
        return { kind: 'text', type: name, value: this.view.getBigInt64(this.take(8), true) };
      case 'Float':
        return { kind: 'text', type: name, value: this.view.getFloat32(this.take(4), true) };
      case 'Double':
        return { kind: 'text', type: name, value: this.view.getFloat64(this.take(8), true) };
      case 'Decimal':
        return { kind: 'text', type: name, value: this.decimal() };
      case 'DateTime':
        return { kind: 'text', type: name, ...this.dateTime() };
      case 'Chars8':
        return { kind: 'text', type: name, value: this.utf8(this.bytes[this.take(1)]!) };
      case 'Chars16':
        return { kind: 'text', type: name, value: this.utf8(this.view.getUint16(this.take(2), true)) };
      case 'Chars32':
        return { kind: 'text', type: name, value: this.utf8(this.length32()) };
      case 'UnicodeChars8':
        return { kind: 'text', type: name, value: this.utf16(this.bytes[this.take(1)]!) };
      case 'UnicodeChars16':
        return { kind: 'text', type: name, value: this.utf16(this.view.getUint16(this.take(2), true)) };
      case 'UnicodeChars32':
        return { kind: 'text', type: name, value: this.utf16(this.length32()) };
      case 'Bytes8':
        return { kind: 'text', type: name, value: this.slice(this.bytes[this.take(1)]!) };
      case 'Bytes16':
        return { kind: 'text', type: name, value: this.slice(this.view.getUint16(this.take(2), true)) };
      case 'Bytes32':
        return { kind: 'text', type: name, value: this.slice(this.length32()) };
      case 'Dictionary': {
        const value = this.dictionaryString();
        return { kind: 'text', type: name, value, key: this.dictionaryKey };
      }
      case 'UniqueId':
        return { kind: 'text', type: name, value: UNIQUE_ID_PREFIX + guidFromBytes(this.bytes, this.take(16)) };
      case 'Uuid':
        return { kind: 'text', type: name, value: guidFromBytes(this.bytes, this.take(16)) };
      case 'Bool':
        return { kind: 'text', type: name, value: this.bool() };
      case 'QNameDictionary': {
        const prefixAt = this.at;
        const index = this.bytes[this.take(1)]!;
        if (index >= 26) throw this.fail('InvalidValue', `QName prefix index ${index} (a-z is 0-25)`, prefixAt);
        const localName = this.dictionaryString();
        return { kind: 'text', type: name, prefix: letter(index), localName, key: this.dictionaryKey };
      }
      default:
        throw this.fail('InvalidRecord', `record 0x${hex(type)} is not a text record`, start);
    }
  }

  protected items(itemType: ArrayItemType, count: number): { itemType: ArrayItemType; items: unknown[] } {
    const items: unknown[] = [];
    for (let i = 0; i < count; i++) {
      switch (itemType) {
        case 'Bool':
          items.push(this.bool());
          break;
        case 'Int16':
          items.push(this.view.getInt16(this.take(2), true));
          break;
        case 'Int32':
          items.push(this.view.getInt32(this.take(4), true));
          break;
        case 'Int64':
        case 'TimeSpan':
          items.push(this.view.getBigInt64(this.take(8), true));
          break;
        case 'Float':
          items.push(this.view.getFloat32(this.take(4), true));
          break;
        case 'Double':
          items.push(this.view.getFloat64(this.take(8), true));
          break;
        case 'Decimal':
          items.push(this.decimal());
          break;
        case 'DateTime':
          items.push(this.dateTime());
          break;
        case 'Uuid':
          items.push(guidFromBytes(this.bytes, this.take(16)));
          break;
      }
    }
    return { itemType, items };
  }

  protected count(records: number): void {
    this.records += records;
    if (this.records > this.maxRecords) {
      throw this.fail('QuotaExceeded', `more than ${this.maxRecords} records`, this.at);
    }
  }

  /** Advances over n bytes and returns where they start; Truncated when fewer remain. */
  protected take(n: number): number {
    const at = this.at;
    if (n > this.bytes.length - at)
      throw this.fail('Truncated', `${n} bytes needed, ${this.bytes.length - at} left`, at);
    this.at = at + n;
    return at;
  }

  protected u8(): number {
    return this.bytes[this.take(1)]!;
  }

  protected int31(): number {
    // One byte (a length or key below 128) is nearly every one a message holds: no result object for it.
    const first = this.bytes[this.at];
    if (first !== undefined && first < 0x80) {
      this.at++;
      return first;
    }
    const r = readInt31(this.bytes, this.at);
    if (r === 'short') throw this.fail('Truncated', 'the input ends inside a MultiByteInt31', this.at);
    if (r === 'invalid') throw this.fail('InvalidValue', 'a MultiByteInt31 with more than 31 bits', this.at);
    this.at += r.size;
    return r.value;
  }

  /** The length of a …32 record: a non-negative Int32. */
  protected length32(): number {
    const at = this.at;
    const n = this.view.getInt32(this.take(4), true);
    if (n < 0) throw this.fail('InvalidValue', `negative length ${n}`, at);
    return n;
  }

  protected slice(length: number): Uint8Array {
    const at = this.take(length);
    return this.bytes.slice(at, at + length);
  }

  protected utf8(length: number): string {
    const at = this.take(length);
    // A one-letter string (a prefix: WCF declares s, a, i, b, … in every request) without TextDecoder's ~0.1 µs.
    if (length === 1 && this.bytes[at]! < 0x80) return String.fromCharCode(this.bytes[at]!);
    const value = decodeUtf8(this.bytes.subarray(at, at + length));
    if (value === undefined) throw this.fail('InvalidUtf8', 'text that is not UTF-8', at);
    return value;
  }

  protected utf16(length: number): string {
    if (length % 2 !== 0) throw this.fail('InvalidValue', `UTF-16 text of an odd ${length} bytes`, this.at);
    const at = this.take(length);
    // By code unit rather than TextDecoder, which would replace a lone surrogate and break the round trip.
    let value = '';
    const units: number[] = [];
    for (let i = 0; i < length; i += 2) {
      units.push(this.view.getUint16(at + i, true));
      if (units.length === 0x2000) value += String.fromCharCode(...units.splice(0));
    }
    return value + String.fromCharCode(...units);
  }

  /** A String: MultiByteInt31 length, UTF-8. */
  protected string(): string {
    return this.utf8(this.int31());
  }

  /** A DictionaryString: the string; its key is left in `dictionaryKey` (no pair allocated per name). */
  protected dictionaryString(): string {
    const at = this.at;
    const key = this.int31();
    const value = resolveKey(key, this.options.session);
    if (value === undefined) {
      const where = key % 2 === 0 ? `static string ${key / 2}` : `session string ${(key - 1) / 2}`;
      throw this.fail('UnknownDictionaryString', `dictionary key ${key} (${where}) is not defined`, at);
    }
    this.dictionaryKey = key;
    return value;
  }

  protected bool(): boolean {
    const at = this.at;
    const b = this.u8();
    if (b > 1) throw this.fail('InvalidValue', `Bool byte ${b}`, at);
    return b === 1;
  }

  protected decimal(): string {
    const at = this.take(16);
    const value = decimalFromBytes(this.bytes, at);
    if (value === undefined) throw this.fail('InvalidValue', 'a Decimal System.Decimal would refuse', at);
    return value;
  }

  protected dateTime(): DateTimeValue {
    const raw = this.view.getBigUint64(this.take(8), true);
    return { ticks: raw & 0x3fffffffffffffffn, dateKind: Number(raw >> 62n) as DateTimeKind };
  }

  protected fail(code: BinaryXmlError['code'], message: string, offset: number): BinaryXmlError {
    return new BinaryXmlError(code, message, offset + (this.options.offsetBase ?? 0));
  }
}

export const EMPTY: XmlText = { kind: 'text', type: 'Empty' };

export function letter(index: number): string {
  return String.fromCharCode(0x61 + index);
}

export function hex(b: number): string {
  return b.toString(16).padStart(2, '0');
}
