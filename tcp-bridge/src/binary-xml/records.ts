/**
 * MC-NBFX record types (section 2.2; XmlBinaryNodeType.cs in referencesource). Text records are even; the odd value
 * after each is the same record followed by an implied EndElement. StartListText and EndListText (0xA4, 0xA6) have no
 * such variant: 0xA5 and 0xA7 are not records (the spec lists none, and .NET's reader refuses them).
 */

export const Record = {
  EndElement: 0x01,
  Comment: 0x02,
  Array: 0x03,
  ShortAttribute: 0x04,
  Attribute: 0x05,
  ShortDictionaryAttribute: 0x06,
  DictionaryAttribute: 0x07,
  ShortXmlnsAttribute: 0x08,
  XmlnsAttribute: 0x09,
  ShortDictionaryXmlnsAttribute: 0x0a,
  DictionaryXmlnsAttribute: 0x0b,
  /** PrefixDictionaryAttributeA..Z: 0x0C..0x25. */
  PrefixDictionaryAttributeA: 0x0c,
  /** PrefixAttributeA..Z: 0x26..0x3F. */
  PrefixAttributeA: 0x26,
  ShortElement: 0x40,
  Element: 0x41,
  ShortDictionaryElement: 0x42,
  DictionaryElement: 0x43,
  /** PrefixDictionaryElementA..Z: 0x44..0x5D. */
  PrefixDictionaryElementA: 0x44,
  /** PrefixElementA..Z: 0x5E..0x77. */
  PrefixElementA: 0x5e,
  StartListText: 0xa4,
  EndListText: 0xa6,
} as const;

/**
 * Element and attribute records spell a qualified name in the same six forms: no prefix, a prefix string, each with a
 * literal or a dictionary local name, and a one-letter prefix carried in the record type (26 records each).
 */
export interface NameRecords {
  short: number;
  general: number;
  shortDictionary: number;
  dictionary: number;
  prefixDictionaryA: number;
  prefixA: number;
}

export const ELEMENT_RECORDS: NameRecords = {
  short: Record.ShortElement,
  general: Record.Element,
  shortDictionary: Record.ShortDictionaryElement,
  dictionary: Record.DictionaryElement,
  prefixDictionaryA: Record.PrefixDictionaryElementA,
  prefixA: Record.PrefixElementA,
};

export const ATTRIBUTE_RECORDS: NameRecords = {
  short: Record.ShortAttribute,
  general: Record.Attribute,
  shortDictionary: Record.ShortDictionaryAttribute,
  dictionary: Record.DictionaryAttribute,
  prefixDictionaryA: Record.PrefixDictionaryAttributeA,
  prefixA: Record.PrefixAttributeA,
};

export const MIN_ATTRIBUTE = 0x04;
export const MAX_ATTRIBUTE = 0x3f;
export const MIN_ELEMENT = 0x40;
export const MAX_ELEMENT = 0x77;
export const MIN_TEXT = 0x80;
export const MAX_TEXT = 0xbd;

/** Text record types by their (even) record value; the tree's "List" stands for StartListText … EndListText. */
export const TEXT_RECORDS = {
  Zero: 0x80,
  One: 0x82,
  False: 0x84,
  True: 0x86,
  Int8: 0x88,
  Int16: 0x8a,
  Int32: 0x8c,
  Int64: 0x8e,
  Float: 0x90,
  Double: 0x92,
  Decimal: 0x94,
  DateTime: 0x96,
  Chars8: 0x98,
  Chars16: 0x9a,
  Chars32: 0x9c,
  Bytes8: 0x9e,
  Bytes16: 0xa0,
  Bytes32: 0xa2,
  List: 0xa4,
  Empty: 0xa8,
  Dictionary: 0xaa,
  UniqueId: 0xac,
  TimeSpan: 0xae,
  Uuid: 0xb0,
  UInt64: 0xb2,
  Bool: 0xb4,
  UnicodeChars8: 0xb6,
  UnicodeChars16: 0xb8,
  UnicodeChars32: 0xba,
  QNameDictionary: 0xbc,
} as const;

export type TextType = keyof typeof TEXT_RECORDS;

export const TEXT_TYPE_BY_RECORD: ReadonlyMap<number, TextType> = new Map(
  (Object.entries(TEXT_RECORDS) as [TextType, number][]).map(([name, value]) => [value, name]),
);

/** Item types an Array record may carry (the WithEndElement record of each), and each item's size in bytes. */
export const ARRAY_ITEMS = {
  Bool: { record: 0xb5, size: 1 },
  Int16: { record: 0x8b, size: 2 },
  Int32: { record: 0x8d, size: 4 },
  Int64: { record: 0x8f, size: 8 },
  Float: { record: 0x91, size: 4 },
  Double: { record: 0x93, size: 8 },
  Decimal: { record: 0x95, size: 16 },
  DateTime: { record: 0x97, size: 8 },
  TimeSpan: { record: 0xaf, size: 8 },
  Uuid: { record: 0xb1, size: 16 },
} as const;

export type ArrayItemType = keyof typeof ARRAY_ITEMS;

export const ARRAY_ITEM_BY_RECORD: ReadonlyMap<number, ArrayItemType> = new Map(
  (Object.entries(ARRAY_ITEMS) as [ArrayItemType, { record: number }][]).map(([name, v]) => [v.record, name]),
);

export const XML_NAMESPACE = 'http://www.w3.org/XML/1998/namespace';
export const XMLNS_NAMESPACE = 'http://www.w3.org/2000/xmlns/';

/** a..z: the prefixes the PrefixElement / PrefixAttribute records carry in their record type. */
export function letterPrefixIndex(prefix: string): number {
  if (prefix.length !== 1) return -1;
  const c = prefix.charCodeAt(0) - 0x61;
  return c >= 0 && c < 26 ? c : -1;
}
