/**
 * MC-NBFX writer: document tree → bytes. What the tree records (dictionary keys, long forms, text record types,
 * foldEnd) is written as recorded, so a decoded document writes back to its bytes. What it leaves open is decided as
 * XmlBinaryWriter decides: the shortest record form for each name, a text record just before its element's end takes
 * the WithEndElement form, and, with `useDictionaries`, a name is written as a static dictionary reference when
 * MC-NBFS has it, else as a session string while the session's quota lasts, else literally.
 *
 * Throws BinaryXmlError('InvalidDocument') for a tree the records cannot carry (a Chars8 of 300 bytes, a key the
 * dictionaries do not hold, a folded end after an element, …).
 */

import { concatBytes } from '#idb';
import { ByteWriter, INT31_MAX, utf8Length } from '../bytes.ts';
import { resolveKey, staticKey, type WriterSession } from './dictionary.ts';
import type {
  XmlArray,
  XmlAttribute,
  XmlAttributeNode,
  XmlContent,
  XmlDocument,
  XmlElement,
  XmlEvents,
  XmlText,
} from './nodes.ts';
import { splitName, stringText, stringTextType, xmlns } from './nodes.ts';
import {
  ARRAY_ITEMS,
  ATTRIBUTE_RECORDS,
  ELEMENT_RECORDS,
  letterPrefixIndex,
  Record,
  TEXT_RECORDS,
  type NameRecords,
} from './records.ts';
import { decimalToBytes, guidToBytes, invalidDocument, UNIQUE_ID_PREFIX } from './values.ts';

export interface EncodeOptions {
  /** This side's session dictionary: needed for odd keys in the tree, and to add strings with useDictionaries. */
  session?: WriterSession;
  /**
   * Names without a key (and Dictionary / QNameDictionary texts without one) are looked up in the static dictionary,
   * then added to the session. Default true; false writes them literally, which a decoded tree needs to come back
   * byte for byte.
   */
  useDictionaries?: boolean;
}

export function encodeDocument(document: XmlDocument, options: EncodeOptions = {}): Uint8Array {
  return concatBytes(encodeDocumentParts(document, options));
}

/**
 * The document's bytes as consecutive parts: a bytes value of SPLICED_BYTES or more (a file's content) is a part of
 * its own, the caller's array itself, not copied (measured: copying a 16 MiB GetFile's content into the reply, and
 * collecting the copy, was half of the bridge's time for it). The parts must be sent before that array changes.
 */
export function encodeDocumentParts(document: XmlDocument, options: EncodeOptions = {}): Uint8Array[] {
  const writer = new Writer(options);
  for (const child of document.children) writer.content(child);
  return writer.parts();
}

/**
 * The document's bytes around `slots` (elements of it, left out): `slots.length + 1` pieces, the bytes before the
 * first slot, between each two and after the last, each a copy of its own; undefined unless the slots were met once
 * each, in their order, and no bytes value was spliced. Later, with the same session, encodeBetween writes the pieces
 * with other elements in the slots, and that is the document with those elements, byte for byte: an element's records
 * depend on nothing outside it but the session's strings, and every string of the pieces is in the session by then
 * (or refused for good, the quota being spent) when the document was written once before the pieces were made.
 */
export function encodeAround(
  document: XmlDocument,
  slots: readonly XmlElement[],
  options: EncodeOptions = {},
): Uint8Array[] | undefined {
  const writer = new Writer(options, new Set(slots));
  for (const child of document.children) writer.content(child);
  return writer.around(slots);
}

/**
 * encodeAround's other half: `pieces` with the `slots` written between them (pieces[0], slots[0], pieces[1], …), as
 * the document they came from is written with these slots, in parts as encodeDocumentParts gives them.
 */
export function encodeBetween(
  pieces: readonly Uint8Array[],
  slots: readonly XmlElement[],
  options: EncodeOptions = {},
): Uint8Array[] {
  if (pieces.length !== slots.length + 1) throw new RangeError(`${slots.length} slots need ${slots.length + 1} pieces`);
  let size = 0;
  for (const piece of pieces) size += piece.length;
  // Room for the pieces and a small value: a reply's usual bytes in one allocation.
  const writer = new Writer(options, undefined, size + 128);
  for (let i = 0; i < slots.length; i++) {
    writer.out.bytes(pieces[i]!);
    writer.content(slots[i]!);
  }
  writer.out.bytes(pieces[slots.length]!);
  return writer.parts();
}

const SPLICED_BYTES = 64 * 1024;

/** The width in bits of a sized text record's length field. */
const SIZE_WIDTHS = {
  Chars8: 8,
  Chars16: 16,
  Chars32: 32,
  UnicodeChars8: 8,
  UnicodeChars16: 16,
  UnicodeChars32: 32,
  Bytes8: 8,
  Bytes16: 16,
  Bytes32: 32,
} as const;
type SizedTextType = keyof typeof SIZE_WIDTHS;

type NameRef = { key: number } | { literal: string };

/** A qualified name of replayed events: its parts, and its name record's bytes as an element and as an attribute. */
interface KnownName {
  prefix: string;
  localName: string;
  ref: NameRef | undefined;
  element: Uint8Array | undefined;
  attribute: Uint8Array | undefined;
}

class Writer {
  /** The writer of the current part; replaced after a spliced block (see encodeDocumentParts). */
  out: ByteWriter;
  private readonly done: Uint8Array[] = [];
  private readonly auto: boolean;
  /** The slots met so far (encodeAround), the pieces before each, and whether a bytes value was spliced. */
  private readonly met: XmlElement[] = [];
  private readonly pieces: Uint8Array[] = [];
  private spliced = false;

  constructor(
    private readonly options: EncodeOptions,
    private readonly slots?: ReadonlySet<XmlElement>,
    capacity = 1024,
  ) {
    this.out = new ByteWriter(capacity);
    this.auto = options.useDictionaries ?? true;
  }

  content(node: XmlContent): void {
    switch (node.kind) {
      case 'element':
        this.element(node);
        return;
      case 'text':
        this.text(node, false);
        return;
      case 'comment':
        this.out.u8(Record.Comment).string(node.value);
        return;
      case 'array':
        this.array(node);
        return;
      case 'events':
        this.events(node);
        return;
    }
  }

  /**
   * Replayed events written as the elements they record would be (element(): attributes first, then declarations
   * with the element's own prefix's first; a text followed by its element's end carries the end).
   */
  private events(node: XmlEvents): void {
    const scopes: ReadonlySet<string>[] = [new Set(['xml'])];
    let text: string | undefined; // waits for the next event: an end folds into it
    const flush = (): void => {
      if (text !== undefined) this.stringRecord(text, false);
      text = undefined;
    };
    const declared = (prefix: string, scope: ReadonlySet<string>): void => {
      if (prefix !== '' && !scope.has(prefix)) throw invalidDocument(`the prefix "${prefix}" is not declared`);
    };
    // A name's prefix and records, once per distinct name: a table repeats its few names thousands of times.
    const names = new Map<string, KnownName>();
    const nameOf = (qname: string): KnownName => {
      let known = names.get(qname);
      if (known === undefined) {
        const [prefix, localName] = splitName(qname);
        known = { prefix, localName, ref: undefined, element: undefined, attribute: undefined };
        names.set(qname, known);
      }
      return known;
    };
    // Made on a name's first use as an element or attribute, so that session strings are added in writing order.
    const recorded = (known: KnownName, forms: NameRecords): Uint8Array => {
      const out = new ByteWriter(16);
      known.ref ??= this.name(known.localName, undefined);
      this.nameRecord(forms, known.prefix, known.ref, false, out);
      return out.finish();
    };
    const elementRecord = (known: KnownName): Uint8Array => (known.element ??= recorded(known, ELEMENT_RECORDS));
    const attributeRecord = (known: KnownName): Uint8Array => (known.attribute ??= recorded(known, ATTRIBUTE_RECORDS));
    // An element without attributes (a table's cells): no declarations, its name in the scope as it is.
    const startBare = (name: string): void => {
      const known = nameOf(name);
      declared(known.prefix, scopes[scopes.length - 1]!);
      this.out.bytes(elementRecord(known));
    };
    // An element's end, folded into its last text when it has one.
    const close = (last: string | undefined): void => {
      if (last !== undefined) this.stringRecord(last, true);
      else this.out.u8(Record.EndElement);
    };
    node.replay({
      start: (name, attributes) => {
        flush();
        if (attributes.length === 0) {
          startBare(name);
          scopes.push(scopes[scopes.length - 1]!);
          return;
        }
        const known = nameOf(name);
        const prefix = known.prefix;
        let scope = scopes[scopes.length - 1]!;
        let own: number | undefined; // the declaration of the element's own prefix
        let declarations = 0; // most elements with attributes (a table's rows) declare nothing
        for (let i = 0; i < attributes.length; i += 2) {
          const declares = declaredPrefix(attributes[i]!);
          if (declares === undefined) continue;
          declarations++;
          if (scope === scopes[scopes.length - 1]) scope = new Set(scope);
          (scope as Set<string>).add(declares);
          if (declares === prefix && own === undefined) own = i;
        }
        declared(prefix, scope);
        this.out.bytes(elementRecord(known));
        for (let i = 0; i < attributes.length; i += 2) {
          const name = attributes[i]!;
          if (declarations > 0 && declaredPrefix(name) !== undefined) continue;
          const attribute = nameOf(name);
          declared(attribute.prefix, scope);
          this.out.bytes(attributeRecord(attribute));
          this.stringRecord(attributes[i + 1]!, false);
        }
        if (own !== undefined) this.attribute(xmlns(prefix, attributes[own + 1]!));
        for (let i = 0; declarations > 0 && i < attributes.length; i += 2) {
          const declares = declaredPrefix(attributes[i]!);
          if (declares !== undefined && i !== own) this.attribute(xmlns(declares, attributes[i + 1]!));
        }
        scopes.push(scope);
      },
      text: (value) => {
        flush();
        if (value !== '') text = value;
      },
      end: () => {
        close(text);
        text = undefined;
        scopes.pop();
      },
      // start(name, []), text(value) and end() with nothing kept between them: no scope pushed, no text pending.
      leaf: (name, value) => {
        flush();
        startBare(name);
        close(value === '' ? undefined : value);
      },
    });
    flush();
  }

  private element(element: XmlElement): void {
    if (this.slots?.has(element)) {
      this.met.push(element);
      this.pieces.push(this.out.finish());
      this.out = new ByteWriter(1024);
      return;
    }
    this.startElement(element);
    const children = element.children;
    const last = children[children.length - 1];
    const foldable = last?.kind === 'text' && last.type !== 'List';
    if (element.foldEnd === true && !foldable) {
      throw invalidDocument(
        `<${element.localName}> cannot end with its last text record: it has none that can carry the end`,
      );
    }
    const fold = foldable && element.foldEnd !== false;
    for (let i = 0; i < children.length; i++) {
      const child = children[i]!;
      if (fold && i === children.length - 1) this.text(child as XmlText, true);
      else this.content(child);
    }
    if (!fold) this.out.u8(Record.EndElement);
  }

  private startElement(element: XmlElement): void {
    this.qualifiedName(ELEMENT_RECORDS, element);
    for (const attribute of element.attributes) this.attribute(attribute);
  }

  private attribute(node: XmlAttributeNode): void {
    if (node.kind === 'attribute') {
      this.qualifiedName(ATTRIBUTE_RECORDS, node);
      this.text(node.value, false);
      return;
    }
    const uri = this.name(node.uri, node.uriKey);
    const short = node.prefix === '' && !node.longForm;
    if ('key' in uri) {
      if (short) this.out.u8(Record.ShortDictionaryXmlnsAttribute);
      else this.out.u8(Record.DictionaryXmlnsAttribute).string(node.prefix);
      this.out.int31(uri.key);
    } else {
      if (short) this.out.u8(Record.ShortXmlnsAttribute);
      else this.out.u8(Record.XmlnsAttribute).string(node.prefix);
      this.out.string(uri.literal);
    }
  }

  /** The record of an element or attribute name, in the shortest form unless the node asks for the long one. */
  private qualifiedName(forms: NameRecords, node: XmlElement | XmlAttribute): void {
    this.nameRecord(forms, node.prefix, this.name(node.localName, node.localNameKey), node.longForm === true);
  }

  private nameRecord(forms: NameRecords, prefix: string, name: NameRef, longForm: boolean, out = this.out): void {
    const dictionary = 'key' in name;
    const letter = longForm ? -1 : letterPrefixIndex(prefix);
    if (prefix === '' && !longForm) out.u8(dictionary ? forms.shortDictionary : forms.short);
    else if (letter >= 0) out.u8((dictionary ? forms.prefixDictionaryA : forms.prefixA) + letter);
    else out.u8(dictionary ? forms.dictionary : forms.general).string(prefix);
    if ('key' in name) out.int31(name.key);
    else out.string(name.literal);
  }

  private array(node: XmlArray): void {
    if (node.items.length === 0) throw invalidDocument('an Array record needs at least one item');
    if (node.element.children.length > 0) throw invalidDocument("an array's element has no children of its own");
    this.out.u8(Record.Array);
    this.startElement(node.element);
    this.out.u8(Record.EndElement).u8(ARRAY_ITEMS[node.itemType].record).int31(node.items.length);
    const out = this.out;
    switch (node.itemType) {
      case 'Bool':
        for (const v of node.items) out.u8(v ? 1 : 0);
        return;
      case 'Int16':
        for (const v of node.items) out.int16(checkInt(v, -0x8000, 0x7fff, 'Int16'));
        return;
      case 'Int32':
        for (const v of node.items) out.int32(checkInt(v, -0x80000000, 0x7fffffff, 'Int32'));
        return;
      case 'Float':
        for (const v of node.items) out.float32(v);
        return;
      case 'Double':
        for (const v of node.items) out.float64(v);
        return;
      case 'Int64':
      case 'TimeSpan':
        for (const v of node.items) out.int64(checkBig(v, -(2n ** 63n), 2n ** 63n - 1n, node.itemType));
        return;
      case 'Decimal':
        for (const v of node.items) out.bytes(decimal(v));
        return;
      case 'Uuid':
        for (const v of node.items) out.bytes(guid(v));
        return;
      case 'DateTime':
        for (const v of node.items) out.uint64(dateTimeBits(v.ticks, v.dateKind));
        return;
    }
  }

  /**
   * The record stringText(value) makes, written without making it: replayed events are strings, a table's every cell
   * and row attribute one, and the node and a second pass over the string for its length were a tenth of writing a
   * 2 000-row table.
   */
  private stringRecord(value: string, end: boolean): void {
    // The commonest case first, in one pass: a cell's text, ASCII of 2 to 255 characters (not Empty, Zero or One).
    if (value.length > 1 && this.out.ascii8(TEXT_RECORDS.Chars8 + (end ? 1 : 0), value)) return;
    const length = utf8Length(value);
    const type = stringTextType(value, length);
    const withEnd = end ? 1 : 0;
    switch (type) {
      case 'Empty':
      case 'Zero':
      case 'One':
        this.out.u8(TEXT_RECORDS[type] + withEnd);
        return;
      case 'Chars8':
      case 'Chars16':
      case 'Chars32':
        this.sizedUtf8(this.out.u8(TEXT_RECORDS[type] + withEnd), type, value, length);
        return;
      default:
        // Shorter as UTF-16 (mostly CJK text): the general path.
        this.text(stringText(value), end);
    }
  }

  /** A text record; `end` selects its WithEndElement form. */
  private text(text: XmlText, end: boolean): void {
    const out = this.out;
    const record = (type: keyof typeof TEXT_RECORDS): ByteWriter => out.u8(TEXT_RECORDS[type] + (end ? 1 : 0));
    switch (text.type) {
      case 'Zero':
      case 'One':
      case 'False':
      case 'True':
      case 'Empty':
        record(text.type);
        return;
      case 'Int8':
        record(text.type).u8(checkInt(text.value, -0x80, 0x7f, 'Int8') & 0xff);
        return;
      case 'Int16':
        record(text.type).int16(checkInt(text.value, -0x8000, 0x7fff, 'Int16'));
        return;
      case 'Int32':
        record(text.type).int32(checkInt(text.value, -0x80000000, 0x7fffffff, 'Int32'));
        return;
      case 'Int64':
      case 'TimeSpan':
        record(text.type).int64(checkBig(text.value, -(2n ** 63n), 2n ** 63n - 1n, text.type));
        return;
      case 'UInt64':
        record(text.type).uint64(checkBig(text.value, 0n, 2n ** 64n - 1n, 'UInt64'));
        return;
      case 'Float':
        record(text.type).float32(text.value);
        return;
      case 'Double':
        record(text.type).float64(text.value);
        return;
      case 'Decimal':
        record(text.type).bytes(decimal(text.value));
        return;
      case 'DateTime':
        record(text.type).uint64(dateTimeBits(text.ticks, text.dateKind));
        return;
      case 'Chars8':
        // ASCII (a reply's Action, most values) in one pass, as stringRecord writes it; else on to the general path.
        if (out.ascii8(TEXT_RECORDS.Chars8 + (end ? 1 : 0), text.value)) return;
        this.sizedUtf8(record(text.type), text.type, text.value);
        return;
      case 'Chars16':
      case 'Chars32':
        this.sizedUtf8(record(text.type), text.type, text.value);
        return;
      case 'UnicodeChars8':
      case 'UnicodeChars16':
      case 'UnicodeChars32':
        this.sized(record(text.type), text.type, utf16(text.value));
        return;
      case 'Bytes8':
      case 'Bytes16':
      case 'Bytes32':
        this.sized(record(text.type), text.type, text.value);
        return;
      case 'Dictionary': {
        const name = this.name(text.value, text.key);
        if ('key' in name) record('Dictionary').int31(name.key);
        else this.text(charsText(text.value), end);
        return;
      }
      case 'UniqueId': {
        const bytes = text.value.startsWith(UNIQUE_ID_PREFIX)
          ? guidToBytes(text.value, UNIQUE_ID_PREFIX.length)
          : undefined;
        if (!bytes) throw invalidDocument(`UniqueId ${JSON.stringify(text.value)} is not urn:uuid:<guid>`);
        record(text.type).bytes(bytes);
        return;
      }
      case 'Uuid':
        record(text.type).bytes(guid(text.value));
        return;
      case 'Bool':
        record(text.type).u8(text.value ? 1 : 0);
        return;
      case 'QNameDictionary': {
        const letter = letterPrefixIndex(text.prefix);
        if (letter < 0) throw invalidDocument(`QName prefix ${JSON.stringify(text.prefix)} is not one letter a-z`);
        const name = this.name(text.localName, text.key);
        if ('key' in name) record('QNameDictionary').u8(letter).int31(name.key);
        else this.text(charsText(`${text.prefix}:${text.localName}`), end);
        return;
      }
      case 'List':
        if (end) throw invalidDocument('a list cannot carry its element end');
        out.u8(Record.StartListText);
        for (const item of text.items) {
          if (item.type === 'List') throw invalidDocument('a list inside a list');
          this.text(item, false);
        }
        out.u8(Record.EndListText);
        return;
    }
  }

  private sized(out: ByteWriter, type: SizedTextType, bytes: Uint8Array): void {
    this.size(out, type, bytes.length);
    if (bytes.length < SPLICED_BYTES || out !== this.out) {
      out.bytes(bytes);
      return;
    }
    this.done.push(out.written(), bytes);
    this.out = new ByteWriter(1024);
    this.spliced = true;
  }

  around(slots: readonly XmlElement[]): Uint8Array[] | undefined {
    if (this.spliced || this.met.length !== slots.length || this.met.some((slot, i) => slot !== slots[i]))
      return undefined;
    return [...this.pieces, this.out.finish()];
  }

  parts(): Uint8Array[] {
    const last = this.out.written();
    if (this.done.length === 0) return [last];
    return last.length > 0 ? [...this.done, last] : [...this.done];
  }

  /** Chars text: its UTF-8 encoded straight into the output (no intermediate copy). */
  private sizedUtf8(out: ByteWriter, type: SizedTextType, value: string, length = utf8Length(value)): void {
    this.size(out, type, length);
    out.utf8(value, length);
  }

  /** The length field of a sized text record (8, 16 or 32 bits by its type). */
  private size(out: ByteWriter, type: SizedTextType, length: number): void {
    const width = SIZE_WIDTHS[type];
    const max = width === 8 ? 0xff : width === 16 ? 0xffff : INT31_MAX;
    if (length > max) throw invalidDocument(`${type} of ${length} bytes (at most ${max})`);
    if (width === 8) out.u8(length);
    else if (width === 16) out.uint16(length);
    else out.int32(length);
  }

  /** How a name is written: a dictionary key (given, or found when allowed) or the literal string. */
  private name(value: string, key: number | undefined): NameRef {
    const session = this.options.session;
    if (key !== undefined) {
      if (!Number.isInteger(key) || key < 0 || key > INT31_MAX || resolveKey(key, session) !== value) {
        throw invalidDocument(`dictionary key ${key} does not name ${JSON.stringify(value)}`);
      }
      return { key };
    }
    if (!this.auto) return { literal: value };
    const fixed = staticKey(value);
    if (fixed !== undefined) return { key: fixed };
    const id = session?.tryAdd(value);
    return id === undefined ? { literal: value } : { key: id * 2 + 1 };
  }
}

/** The prefix an attribute named `name` declares ('' for xmlns), or undefined for a plain attribute. */
function declaredPrefix(name: string): string | undefined {
  if (name === 'xmlns') return '';
  return name.startsWith('xmlns:') ? name.slice(6) : undefined;
}

function charsText(value: string): XmlText {
  const length = utf8Length(value);
  return { kind: 'text', type: length < 0x100 ? 'Chars8' : length < 0x10000 ? 'Chars16' : 'Chars32', value };
}

function utf16(value: string): Uint8Array {
  const out = new Uint8Array(value.length * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < value.length; i++) view.setUint16(i * 2, value.charCodeAt(i), true);
  return out;
}

function checkInt(value: number, min: number, max: number, type: string): number {
  if (!Number.isInteger(value) || value < min || value > max) throw invalidDocument(`${value} does not fit ${type}`);
  return value;
}

function checkBig(value: bigint, min: bigint, max: bigint, type: string): bigint {
  if (typeof value !== 'bigint' || value < min || value > max) throw invalidDocument(`${value} does not fit ${type}`);
  return value;
}

function decimal(value: string): Uint8Array {
  const bytes = decimalToBytes(value);
  if (!bytes) throw invalidDocument(`${JSON.stringify(value)} is not a System.Decimal`);
  return bytes;
}

function guid(value: string): Uint8Array {
  const bytes = guidToBytes(value);
  if (!bytes) throw invalidDocument(`${JSON.stringify(value)} is not a Guid`);
  return bytes;
}

function dateTimeBits(ticks: bigint, dateKind: number): bigint {
  if (typeof ticks !== 'bigint' || ticks < 0n || ticks >= 1n << 62n || ![0, 1, 2, 3].includes(dateKind)) {
    throw invalidDocument(`DateTime ticks ${ticks} kind ${dateKind} do not fit 62 + 2 bits`);
  }
  return ticks | (BigInt(dateKind) << 62n);
}
