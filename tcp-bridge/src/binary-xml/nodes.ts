/**
 * The document tree the binary XML reader produces and the writer consumes. It keeps every choice the wire made (the
 * record form of each name, dictionary references, the text record type, whether a text record closed its element)
 * so that decode → encode reproduces the bytes; a tree built for a reply may leave those choices out and the writer
 * makes them as .NET's XmlBinaryWriter would.
 *
 * Encoding hints, all optional:
 * - `…Key`: the DictionaryString the name was written as (even: static dictionary string key/2, odd: session string
 *   (key-1)/2). Absent: a literal string, unless the writer is told to use the dictionaries.
 * - `longForm`: the name was written with the general record (Element, Attribute, XmlnsAttribute with its prefix
 *   spelled out) although a shorter one (Short…, Prefix…A-Z) could carry it.
 * - `foldEnd` on an element: true when its last text record was the …WithEndElement variant, false when an
 *   EndElement record closed it; absent: the writer folds when it can, as .NET does.
 */

import { utf8Length } from '../bytes.ts';
import type { ArrayItemType } from './records.ts';

export interface XmlDocument {
  /** Top-level nodes: in a SOAP message, the one Envelope element. */
  children: XmlContent[];
}

export type XmlContent = XmlElement | XmlText | XmlComment | XmlArray | XmlEvents;

/**
 * Elements as replayed events (src/idb/xml-events.ts: a DataTable's, an XmlTape), written by the writer as it
 * replays them, with no node made per element: a 2 000-row DataTable is ~40 000 of them. Names are qualified names
 * as written (`xs:element`); attributes are name, value, … with namespace declarations among them; every prefix must
 * be declared; text is written as stringText chooses, an empty one not at all.
 */
export interface XmlEvents {
  kind: 'events';
  replay(sink: XmlEventSink): void;
}

export interface XmlEventSink {
  start(name: string, attributes: readonly string[]): void;
  text(value: string): void;
  end(): void;
  /** start(name, []), text(value), end() in one: a DataTable's cell. */
  leaf(name: string, value: string): void;
}

export interface XmlElement {
  kind: 'element';
  prefix: string;
  localName: string;
  localNameKey?: number;
  /** The namespace the prefix resolves to; set by the reader, ignored by the writer (declare it with xmlns). */
  namespace?: string;
  /** Attributes and namespace declarations in wire order (writers interleave them: Mono puts xmlns last). */
  attributes: XmlAttributeNode[];
  children: XmlContent[];
  foldEnd?: boolean;
  longForm?: boolean;
}

export type XmlAttributeNode = XmlAttribute | XmlNamespaceDeclaration;

export interface XmlAttribute {
  kind: 'attribute';
  prefix: string;
  localName: string;
  localNameKey?: number;
  /** Set by the reader: '' for an unprefixed attribute. */
  namespace?: string;
  /** An attribute's value is one text record (a List for several). */
  value: XmlText;
  longForm?: boolean;
}

export interface XmlNamespaceDeclaration {
  kind: 'xmlns';
  /** '' declares the default namespace. */
  prefix: string;
  uri: string;
  uriKey?: number;
  longForm?: boolean;
}

export interface XmlComment {
  kind: 'comment';
  value: string;
}

/** DateTime.ToBinary's top two bits. */
export const DateTimeKind = { Unspecified: 0, Utc: 1, Local: 2, LocalAmbiguousDst: 3 } as const;
export type DateTimeKind = (typeof DateTimeKind)[keyof typeof DateTimeKind];

/**
 * A .NET DateTime as MC-NBFX carries it: 100 ns ticks since 0001-01-01 and the kind. For Local the ticks are the
 * UTC instant (ToBinary converts), for Utc and Unspecified the clock reading as written.
 */
export interface DateTimeValue {
  ticks: bigint;
  dateKind: DateTimeKind;
}

export type XmlText = { kind: 'text' } & (
  | { type: 'Zero' | 'One' | 'False' | 'True' | 'Empty' }
  | { type: 'Int8' | 'Int16' | 'Int32'; value: number }
  | { type: 'Int64' | 'UInt64'; value: bigint }
  /** Float values are float32 numbers; a NaN is written back as the canonical NaN. */
  | { type: 'Float' | 'Double'; value: number }
  /** Decimal as its invariant text with the scale kept ("1.50" ≠ "1.5"; "-0" keeps a negative zero's sign bit). */
  | { type: 'Decimal'; value: string }
  | ({ type: 'DateTime' } & DateTimeValue)
  /** TimeSpan ticks (100 ns). */
  | { type: 'TimeSpan'; value: bigint }
  | { type: 'Chars8' | 'Chars16' | 'Chars32' | 'UnicodeChars8' | 'UnicodeChars16' | 'UnicodeChars32'; value: string }
  | { type: 'Bytes8' | 'Bytes16' | 'Bytes32'; value: Uint8Array }
  | { type: 'Dictionary'; value: string; key?: number }
  /** UniqueId as "urn:uuid:…", Uuid (a Guid) as "xxxxxxxx-xxxx-…", lower case. */
  | { type: 'UniqueId' | 'Uuid'; value: string }
  | { type: 'Bool'; value: boolean }
  /** prefix is one letter a-z; the local name is a dictionary string. */
  | { type: 'QNameDictionary'; prefix: string; localName: string; key?: number }
  /** StartListText, the items, EndListText: the items' texts separated by one space. */
  | { type: 'List'; items: XmlText[] }
);

/** The text node of one record type (members listing several types narrow to the one asked for). */
export type TextOf<T extends XmlText['type']> = XmlText & { type: T };

/** An Array record: `element` (without children) repeated once per item, each holding one value. */
export type XmlArray = { kind: 'array'; element: XmlElement } & (
  | { itemType: 'Bool'; items: boolean[] }
  | { itemType: 'Int16' | 'Int32' | 'Float' | 'Double'; items: number[] }
  | { itemType: 'Int64' | 'TimeSpan'; items: bigint[] }
  | { itemType: 'Decimal' | 'Uuid'; items: string[] }
  | { itemType: 'DateTime'; items: DateTimeValue[] }
);

export type ArrayOf<T extends ArrayItemType> = XmlArray & { itemType: T };

// Builders for replies. They choose records the way XmlBinaryWriter does, so a reply looks like .NET wrote it.

export function element(
  prefix: string,
  localName: string,
  attributes: XmlAttributeNode[] = [],
  children: XmlContent[] = [],
): XmlElement {
  return { kind: 'element', prefix, localName, attributes, children };
}

export function xmlns(prefix: string, uri: string): XmlNamespaceDeclaration {
  return { kind: 'xmlns', prefix, uri };
}

export function attribute(prefix: string, localName: string, value: XmlText | string): XmlAttribute {
  return { kind: 'attribute', prefix, localName, value: typeof value === 'string' ? stringText(value) : value };
}

/** A qualified name as written (`xs:element`, `Table`) split at its colon: the prefix ('' for none) and the local name. */
export function splitName(qname: string): [prefix: string, localName: string] {
  const colon = qname.indexOf(':');
  return colon < 0 ? ['', qname] : [qname.slice(0, colon), qname.slice(colon + 1)];
}

/** A string as WriteText(string) writes it: "" Empty, "0" Zero, "1" One, else UTF-8 Chars (or UTF-16 when shorter). */
export function stringText(value: string): XmlText {
  const type = stringTextType(value, utf8Length(value));
  return type === 'Empty' || type === 'Zero' || type === 'One' ? { kind: 'text', type } : { kind: 'text', type, value };
}

/** The record type stringText gives `value`, whose UTF-8 length `bytes8` (utf8Length) the caller has. */
export function stringTextType(
  value: string,
  bytes8: number,
): 'Empty' | 'Zero' | 'One' | 'Chars8' | 'Chars16' | 'Chars32' | 'UnicodeChars8' | 'UnicodeChars16' | 'UnicodeChars32' {
  if (value === '') return 'Empty';
  if (value === '0') return 'Zero';
  if (value === '1') return 'One';
  if (bytes8 / 2 > value.length) {
    const bytes = value.length * 2;
    return bytes < 0x100 ? 'UnicodeChars8' : bytes < 0x10000 ? 'UnicodeChars16' : 'UnicodeChars32';
  }
  return bytes8 < 0x100 ? 'Chars8' : bytes8 < 0x10000 ? 'Chars16' : 'Chars32';
}

/** An integer in the smallest record that holds it (Zero, One, Int8, Int16, Int32, Int64, UInt64). */
export function intText(value: number | bigint): XmlText {
  const n = BigInt(value);
  if (n === 0n) return { kind: 'text', type: 'Zero' };
  if (n === 1n) return { kind: 'text', type: 'One' };
  if (n >= -128n && n < 128n) return { kind: 'text', type: 'Int8', value: Number(n) };
  if (n >= -32768n && n < 32768n) return { kind: 'text', type: 'Int16', value: Number(n) };
  if (n >= -2147483648n && n < 2147483648n) return { kind: 'text', type: 'Int32', value: Number(n) };
  if (n >= -(2n ** 63n) && n < 2n ** 63n) return { kind: 'text', type: 'Int64', value: n };
  return { kind: 'text', type: 'UInt64', value: n };
}

export const boolText = (value: boolean): XmlText => ({ kind: 'text', type: value ? 'True' : 'False' });

/** A double as WriteDoubleText: integral values as integers, float-exact ones as Float. */
export function doubleText(value: number): XmlText {
  if (Number.isInteger(value) && Math.abs(value) <= 2 ** 63 && !Object.is(value, -0)) {
    const n = BigInt(value);
    if (n < 2n ** 63n) return intText(n);
  }
  // NaN fails the float test in .NET too and goes out as a Double.
  if (Math.fround(value) === value) return { kind: 'text', type: 'Float', value };
  return { kind: 'text', type: 'Double', value };
}

export function bytesText(value: Uint8Array): XmlText {
  if (value.length === 0) return { kind: 'text', type: 'Empty' };
  const type = value.length < 0x100 ? 'Bytes8' : value.length < 0x10000 ? 'Bytes16' : 'Bytes32';
  return { kind: 'text', type, value };
}

export const decimalText = (value: string): XmlText => ({ kind: 'text', type: 'Decimal', value });
export const uuidText = (value: string): XmlText => ({ kind: 'text', type: 'Uuid', value: value.toLowerCase() });
export const uniqueIdText = (value: string): XmlText => ({
  kind: 'text',
  type: 'UniqueId',
  value: value.toLowerCase(),
});
export const timeSpanText = (ticks: bigint): XmlText => ({ kind: 'text', type: 'TimeSpan', value: ticks });
export const dateTimeText = (ticks: bigint, dateKind: DateTimeKind): XmlText => ({
  kind: 'text',
  type: 'DateTime',
  ticks,
  dateKind,
});
/** A dictionary string as text; the writer finds its key (or falls back to Chars when no dictionary holds it). */
export const dictionaryText = (value: string): XmlText => ({ kind: 'text', type: 'Dictionary', value });
/** `prefix:localName` as a QNameDictionary record when a dictionary holds localName, else as Chars. */
export const qnameText = (prefix: string, localName: string): XmlText => ({
  kind: 'text',
  type: 'QNameDictionary',
  prefix,
  localName,
});
