/**
 * MC-NBFX reader: bytes → document tree. Iterative (an explicit element stack), so hostile nesting meets the depth
 * quota instead of the call stack; every declared length is checked against the bytes that remain before anything
 * is allocated for it. Throws only BinaryXmlError.
 *
 * Strictness beyond .NET's reader, so that what is read writes back to the same bytes: strings must be UTF-8, a Bool
 * byte 0 or 1 (arrays too), a Decimal what System.Decimal accepts. Like .NET: a prefix must be declared, EndListText
 * and the WithEndElement forms of the list records are refused, an Array holds at least one item, and elements left
 * open at the end are an error.
 */

import { decodeUtf8, readInt31 } from '../bytes.ts';
import { resolveKey, type SessionStrings } from './dictionary.ts';
import { BinaryXmlError } from './errors.ts';
import type {
  DateTimeKind,
  DateTimeValue,
  XmlArray,
  XmlAttribute,
  XmlAttributeNode,
  XmlContent,
  XmlDocument,
  XmlElement,
  XmlNamespaceDeclaration,
  XmlText,
} from './nodes.ts';
import {
  ARRAY_ITEM_BY_RECORD,
  ARRAY_ITEMS,
  ATTRIBUTE_RECORDS,
  ELEMENT_RECORDS,
  MAX_ATTRIBUTE,
  MAX_ELEMENT,
  MAX_TEXT,
  MIN_ATTRIBUTE,
  MIN_ELEMENT,
  MIN_TEXT,
  Record,
  TEXT_TYPE_BY_RECORD,
  XML_NAMESPACE,
  XMLNS_NAMESPACE,
  letterPrefixIndex,
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

export const DEFAULT_MAX_DEPTH = 32;
export const DEFAULT_MAX_RECORDS = 1 << 18;

interface Frame {
  element: XmlElement;
  /** Prefixes this element declared, to unbind when it closes. */
  declared: string[];
}

export function decodeDocument(bytes: Uint8Array, options: DecodeOptions = {}): XmlDocument {
  return new Reader(bytes, options).document();
}

class Reader {
  private at = 0;
  private records = 0;
  private readonly view: DataView;
  private readonly stack: Frame[] = [];
  /** Prefix → the URIs bound to it by the open elements, innermost last: lookups stay O(1) at any depth. */
  private readonly bindings = new Map<string, string[]>();
  private readonly maxDepth: number;
  private readonly maxRecords: number;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly options: DecodeOptions,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.maxRecords = options.maxRecords ?? DEFAULT_MAX_RECORDS;
  }

  document(): XmlDocument {
    const top: XmlContent[] = [];
    while (this.at < this.bytes.length) {
      const start = this.at;
      const type = this.u8();
      this.count(1);
      const children = this.stack.length > 0 ? this.stack[this.stack.length - 1]!.element.children : top;
      if (type === Record.EndElement) {
        this.close(false, start);
      } else if (type === Record.Comment) {
        children.push({ kind: 'comment', value: this.string() });
      } else if (type === Record.Array) {
        children.push(this.array());
      } else if (type >= MIN_ELEMENT && type <= MAX_ELEMENT) {
        const frame = this.element(type, start);
        children.push(frame.element);
        this.stack.push(frame);
      } else if (type >= MIN_TEXT && type <= MAX_TEXT) {
        const even = type & ~1;
        if (even === Record.StartListText && type === even) {
          children.push(this.list());
        } else if (even === Record.StartListText || even === Record.EndListText) {
          throw this.fail(
            'InvalidRecord',
            `record 0x${hex(type)}: lists have no WithEndElement form, EndListText no list to end`,
            start,
          );
        } else {
          children.push(this.text(even, start));
          if (type !== even) this.close(true, start);
        }
      } else {
        throw this.fail('InvalidRecord', `record 0x${hex(type)} where content belongs`, start);
      }
    }
    if (this.stack.length > 0) {
      throw this.fail('Truncated', `${this.stack.length} element(s) still open at the end`, this.at);
    }
    return { children: top };
  }

  private close(folded: boolean, start: number): void {
    const frame = this.stack.pop();
    if (!frame) throw this.fail('InvalidRecord', 'an end element with no element open', start);
    frame.element.foldEnd = folded;
    this.unbind(frame.declared);
  }

  private unbind(prefixes: string[]): void {
    for (const prefix of prefixes) this.bindings.get(prefix)!.pop();
  }

  /** An element record and the attribute records after it; namespaces resolved against the open elements. */
  private element(type: number, start: number): Frame {
    if (this.stack.length >= this.maxDepth) {
      throw this.fail('QuotaExceeded', `elements nested deeper than ${this.maxDepth}`, start);
    }
    const element: XmlElement = { kind: 'element', prefix: '', localName: '', attributes: [], children: [] };
    this.qualifiedName(type, ELEMENT_RECORDS, element);
    const declared = this.attributes(element.attributes);
    const frame: Frame = { element, declared };
    try {
      element.namespace = this.lookup(element.prefix, start) ?? '';
      for (const attribute of element.attributes) {
        if (attribute.kind === 'attribute')
          attribute.namespace = attribute.prefix === '' ? '' : this.lookup(attribute.prefix, start);
      }
    } catch (error) {
      this.unbind(declared);
      throw error;
    }
    return frame;
  }

  /** The prefix and local name of an element or attribute record whose type byte has been read. */
  private qualifiedName(type: number, forms: NameRecords, into: XmlElement | XmlAttribute): void {
    const prefixDictionary = type >= forms.prefixDictionaryA && type < forms.prefixDictionaryA + 26;
    if (type === forms.general || type === forms.dictionary) {
      into.prefix = this.string();
      // The writer would have used a shorter record for these prefixes: remember that it did not.
      if (into.prefix === '' || letterPrefixIndex(into.prefix) >= 0) into.longForm = true;
    } else if (prefixDictionary) {
      into.prefix = letter(type - forms.prefixDictionaryA);
    } else if (type >= forms.prefixA) {
      into.prefix = letter(type - forms.prefixA);
    }
    if (prefixDictionary || type === forms.shortDictionary || type === forms.dictionary) {
      [into.localName, into.localNameKey] = this.dictionaryString();
    } else {
      into.localName = this.string();
    }
  }

  /** Reads the attribute records and binds the prefixes they declare; returns those prefixes. */
  private attributes(into: XmlAttributeNode[]): string[] {
    const declared: string[] = [];
    while (this.at < this.bytes.length) {
      const type = this.bytes[this.at]!;
      if (type < MIN_ATTRIBUTE || type > MAX_ATTRIBUTE) break;
      const start = this.at;
      this.at++;
      this.count(1);
      if (type >= Record.ShortXmlnsAttribute && type <= Record.DictionaryXmlnsAttribute) {
        const declaration: XmlNamespaceDeclaration = { kind: 'xmlns', prefix: '', uri: '' };
        if (type === Record.XmlnsAttribute || type === Record.DictionaryXmlnsAttribute) {
          declaration.prefix = this.string();
          if (declaration.prefix === '') declaration.longForm = true;
        }
        if (type === Record.ShortXmlnsAttribute || type === Record.XmlnsAttribute) declaration.uri = this.string();
        else [declaration.uri, declaration.uriKey] = this.dictionaryString();
        let uris = this.bindings.get(declaration.prefix);
        if (!uris) {
          uris = [];
          this.bindings.set(declaration.prefix, uris);
        }
        uris.push(declaration.uri);
        declared.push(declaration.prefix);
        into.push(declaration);
        continue;
      }
      const attribute: XmlAttribute = { kind: 'attribute', prefix: '', localName: '', value: EMPTY };
      this.qualifiedName(type, ATTRIBUTE_RECORDS, attribute);
      attribute.value = this.attributeValue(start);
      into.push(attribute);
    }
    return declared;
  }

  /** One text record, without EndElement (a list counts as one). */
  private attributeValue(attributeStart: number): XmlText {
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

  /** After StartListText: text records up to EndListText. */
  private list(): XmlText {
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
  private text(type: number, start: number): XmlText {
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
        const [value, key] = this.dictionaryString();
        return { kind: 'text', type: name, value, key };
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
        const [localName, key] = this.dictionaryString();
        return { kind: 'text', type: name, prefix: letter(index), localName, key };
      }
      default:
        throw this.fail('InvalidRecord', `record 0x${hex(type)} is not a text record`, start);
    }
  }

  /** Array: an element record (attributes allowed), EndElement, the item record type, the count, the items. */
  private array(): XmlArray {
    const elementStart = this.at;
    const type = this.u8();
    this.count(1);
    if (type < MIN_ELEMENT || type > MAX_ELEMENT) {
      throw this.fail('InvalidRecord', `record 0x${hex(type)} where an array's element belongs`, elementStart);
    }
    const frame = this.element(type, elementStart);
    // The array's element is never on the stack: its declarations end with it.
    this.unbind(frame.declared);
    const endAt = this.at;
    if (this.u8() !== Record.EndElement) throw this.fail('InvalidRecord', "an array's element must be empty", endAt);
    const itemAt = this.at;
    const itemRecord = this.u8();
    const itemType = ARRAY_ITEM_BY_RECORD.get(itemRecord);
    if (itemType === undefined) throw this.fail('InvalidRecord', `record 0x${hex(itemRecord)} as array items`, itemAt);
    const countAt = this.at;
    const count = this.int31();
    if (count === 0) throw this.fail('InvalidValue', 'an array of no items', countAt);
    const size = ARRAY_ITEMS[itemType].size;
    if (count * size > this.bytes.length - this.at) {
      throw this.fail('Truncated', `${count} array items of ${size} bytes run past the end`, countAt);
    }
    this.count(count);
    return { kind: 'array', element: frame.element, ...this.items(itemType, count) } as XmlArray;
  }

  private items(itemType: ArrayItemType, count: number): { itemType: ArrayItemType; items: unknown[] } {
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

  private lookup(prefix: string, start: number): string | undefined {
    const uris = this.bindings.get(prefix);
    if (uris && uris.length > 0) return uris[uris.length - 1];
    if (prefix === '') return undefined;
    if (prefix === 'xml') return XML_NAMESPACE;
    if (prefix === 'xmlns') return XMLNS_NAMESPACE;
    throw this.fail('UndeclaredPrefix', `prefix ${JSON.stringify(prefix)} is not declared`, start);
  }

  private count(records: number): void {
    this.records += records;
    if (this.records > this.maxRecords) {
      throw this.fail('QuotaExceeded', `more than ${this.maxRecords} records`, this.at);
    }
  }

  /** Advances over n bytes and returns where they start; Truncated when fewer remain. */
  private take(n: number): number {
    const at = this.at;
    if (n > this.bytes.length - at)
      throw this.fail('Truncated', `${n} bytes needed, ${this.bytes.length - at} left`, at);
    this.at = at + n;
    return at;
  }

  private u8(): number {
    return this.bytes[this.take(1)]!;
  }

  private int31(): number {
    const r = readInt31(this.bytes, this.at);
    if (r === 'short') throw this.fail('Truncated', 'the input ends inside a MultiByteInt31', this.at);
    if (r === 'invalid') throw this.fail('InvalidValue', 'a MultiByteInt31 with more than 31 bits', this.at);
    this.at += r.size;
    return r.value;
  }

  /** The length of a …32 record: a non-negative Int32. */
  private length32(): number {
    const at = this.at;
    const n = this.view.getInt32(this.take(4), true);
    if (n < 0) throw this.fail('InvalidValue', `negative length ${n}`, at);
    return n;
  }

  private slice(length: number): Uint8Array {
    const at = this.take(length);
    return this.bytes.slice(at, at + length);
  }

  private utf8(length: number): string {
    const at = this.take(length);
    const value = decodeUtf8(this.bytes.subarray(at, at + length));
    if (value === undefined) throw this.fail('InvalidUtf8', 'text that is not UTF-8', at);
    return value;
  }

  private utf16(length: number): string {
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
  private string(): string {
    return this.utf8(this.int31());
  }

  /** A DictionaryString: [the string, its key]. */
  private dictionaryString(): [string, number] {
    const at = this.at;
    const key = this.int31();
    const value = resolveKey(key, this.options.session);
    if (value === undefined) {
      const where = key % 2 === 0 ? `static string ${key / 2}` : `session string ${(key - 1) / 2}`;
      throw this.fail('UnknownDictionaryString', `dictionary key ${key} (${where}) is not defined`, at);
    }
    return [value, key];
  }

  private bool(): boolean {
    const at = this.at;
    const b = this.u8();
    if (b > 1) throw this.fail('InvalidValue', `Bool byte ${b}`, at);
    return b === 1;
  }

  private decimal(): string {
    const at = this.take(16);
    const value = decimalFromBytes(this.bytes, at);
    if (value === undefined) throw this.fail('InvalidValue', 'a Decimal System.Decimal would refuse', at);
    return value;
  }

  private dateTime(): DateTimeValue {
    const raw = this.view.getBigUint64(this.take(8), true);
    return { ticks: raw & 0x3fffffffffffffffn, dateKind: Number(raw >> 62n) as DateTimeKind };
  }

  private fail(code: BinaryXmlError['code'], message: string, offset: number): BinaryXmlError {
    return new BinaryXmlError(code, message, offset + (this.options.offsetBase ?? 0));
  }
}

const EMPTY: XmlText = { kind: 'text', type: 'Empty' };

function letter(index: number): string {
  return String.fromCharCode(0x61 + index);
}

function hex(b: number): string {
  return b.toString(16).padStart(2, '0');
}
