/**
 * fast-check arbitraries for MC-NBFX document trees that the writer can encode and the reader gives back unchanged:
 * every text record type (each of the three sizes of Chars, Bytes and UnicodeChars), every element, attribute and
 * xmlns record form (long forms included), static and session dictionary names, lists, comments and arrays of every
 * item type. Prefixes are declared on the root, so every name resolves.
 */

import fc from 'fast-check';
import {
  ARRAY_ITEMS,
  guidFromBytes,
  STATIC_DICTIONARY,
  type ArrayItemType,
  type XmlArray,
  type XmlAttributeNode,
  type XmlContent,
  type XmlDocument,
  type XmlElement,
  type XmlText,
} from '../../../tcp-bridge/src/binary-xml/index.ts';

/** Session strings both sides of a generated document know (reader session = writer session). */
export const SESSION_STRINGS = ['HeartbeatResult', 'http://tempuri.org/', 'sql', 'item', 'Ünïcödé'];

/** Prefixes the root declares: letters (Prefix… records), longer ones (general records) and the default namespace. */
const PREFIXES = ['', 'a', 's', 'z', 'pre', 'ns0'];

const utf8Length = (s: string): number => new TextEncoder().encode(s).length;

/** A name: literal, or a static or session dictionary string with its key. */
const nameArb: fc.Arbitrary<{ value: string; key?: number }> = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }).map((value) => ({ value })),
  fc
    .integer({ min: 0, max: STATIC_DICTIONARY.length - 1 })
    .map((id) => ({ value: STATIC_DICTIONARY[id]!, key: id * 2 })),
  fc
    .integer({ min: 0, max: SESSION_STRINGS.length - 1 })
    .map((id) => ({ value: SESSION_STRINGS[id]!, key: id * 2 + 1 })),
);
const dictionaryNameArb = nameArb.filter((n) => n.key !== undefined) as fc.Arbitrary<{ value: string; key: number }>;

const guidArb = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => guidFromBytes(b));

const decimalArb = fc
  .tuple(fc.bigInt({ min: 0n, max: (1n << 96n) - 1n }), fc.integer({ min: 0, max: 28 }), fc.boolean())
  .map(([mantissa, scale, negative]) => {
    let digits = mantissa.toString().padStart(scale + 1, '0');
    if (scale > 0) digits = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
    return negative ? `-${digits}` : digits;
  });

const dateTimeArb = fc.record({
  ticks: fc.bigInt({ min: 0n, max: (1n << 62n) - 1n }),
  dateKind: fc.constantFrom(0 as const, 1 as const, 2 as const, 3 as const),
});

const int64 = fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n });

/** Strings in the smallest to largest record that holds them. */
function sizedStrings(
  types: readonly [string, string, string],
  length: (s: string) => number,
  strings: fc.Arbitrary<string>,
) {
  return strings.chain((value) => {
    const n = length(value);
    const fits = types.filter((_, i) => (i === 0 ? n < 0x100 : i === 1 ? n < 0x10000 : true));
    return fc.constantFrom(...fits).map((type) => ({ kind: 'text', type, value }) as XmlText);
  });
}

const utf16Strings = fc
  .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 140 })
  .map((units) => String.fromCharCode(...units));

/** One text record of any type but List. */
export const atomicTextArb: fc.Arbitrary<XmlText> = fc.oneof(
  fc.constantFrom('Zero', 'One', 'False', 'True', 'Empty').map((type) => ({ kind: 'text', type }) as XmlText),
  fc.integer({ min: -128, max: 127 }).map((value) => ({ kind: 'text', type: 'Int8', value }) as XmlText),
  fc.integer({ min: -32768, max: 32767 }).map((value) => ({ kind: 'text', type: 'Int16', value }) as XmlText),
  fc.integer().map((value) => ({ kind: 'text', type: 'Int32', value }) as XmlText),
  int64.map((value) => ({ kind: 'text', type: 'Int64', value }) as XmlText),
  fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map((value) => ({ kind: 'text', type: 'UInt64', value }) as XmlText),
  int64.map((value) => ({ kind: 'text', type: 'TimeSpan', value }) as XmlText),
  fc.float({ noNaN: true }).map((value) => ({ kind: 'text', type: 'Float', value }) as XmlText),
  fc.double({ noNaN: true }).map((value) => ({ kind: 'text', type: 'Double', value }) as XmlText),
  decimalArb.map((value) => ({ kind: 'text', type: 'Decimal', value }) as XmlText),
  dateTimeArb.map((v) => ({ kind: 'text', type: 'DateTime', ...v }) as XmlText),
  sizedStrings(['Chars8', 'Chars16', 'Chars32'], utf8Length, fc.string({ unit: 'binary', maxLength: 90 })),
  sizedStrings(['UnicodeChars8', 'UnicodeChars16', 'UnicodeChars32'], (s) => s.length * 2, utf16Strings),
  fc
    .uint8Array({ maxLength: 300 })
    .chain((value) =>
      fc
        .constantFrom(
          ...(['Bytes8', 'Bytes16', 'Bytes32'] as const).filter((t) => t !== 'Bytes8' || value.length < 0x100),
        )
        .map((type) => ({ kind: 'text', type, value }) as XmlText),
    ),
  dictionaryNameArb.map(({ value, key }) => ({ kind: 'text', type: 'Dictionary', value, key }) as XmlText),
  guidArb.map((g) => ({ kind: 'text', type: 'UniqueId', value: `urn:uuid:${g}` }) as XmlText),
  guidArb.map((value) => ({ kind: 'text', type: 'Uuid', value }) as XmlText),
  fc.boolean().map((value) => ({ kind: 'text', type: 'Bool', value }) as XmlText),
  fc.tuple(fc.integer({ min: 0, max: 25 }), dictionaryNameArb).map(
    ([p, n]) =>
      ({
        kind: 'text',
        type: 'QNameDictionary',
        prefix: String.fromCharCode(0x61 + p),
        localName: n.value,
        key: n.key,
      }) as XmlText,
  ),
);

export const textArb: fc.Arbitrary<XmlText> = fc.oneof(
  { weight: 6, arbitrary: atomicTextArb },
  {
    weight: 1,
    arbitrary: fc
      .array(atomicTextArb, { maxLength: 4 })
      .map((items) => ({ kind: 'text', type: 'List', items }) as XmlText),
  },
);

const prefixArb = fc.constantFrom(...PREFIXES);

const attributeArb: fc.Arbitrary<XmlAttributeNode> = fc.oneof(
  fc.tuple(prefixArb, nameArb, textArb, fc.boolean()).map(([prefix, name, value, long]) => ({
    kind: 'attribute' as const,
    prefix,
    localName: name.value,
    ...(name.key === undefined ? {} : { localNameKey: name.key }),
    value,
    ...(long && (prefix === '' || prefix.length === 1) ? { longForm: true } : {}),
  })),
  fc.tuple(fc.constantFrom('', 'q', 'xyz'), nameArb, fc.boolean()).map(([prefix, uri, long]) => ({
    kind: 'xmlns' as const,
    prefix,
    uri: uri.value,
    ...(uri.key === undefined ? {} : { uriKey: uri.key }),
    ...(long && prefix === '' ? { longForm: true } : {}),
  })),
);

function elementShell(
  prefix: string,
  name: { value: string; key?: number },
  long: boolean,
  attributes: XmlAttributeNode[],
): XmlElement {
  return {
    kind: 'element',
    prefix,
    localName: name.value,
    ...(name.key === undefined ? {} : { localNameKey: name.key }),
    attributes,
    children: [],
    ...(long && (prefix === '' || prefix.length === 1) ? { longForm: true } : {}),
  };
}

const arrayItemsArb: Record<ArrayItemType, fc.Arbitrary<unknown>> = {
  Bool: fc.boolean(),
  Int16: fc.integer({ min: -32768, max: 32767 }),
  Int32: fc.integer(),
  Int64: int64,
  TimeSpan: int64,
  Float: fc.float({ noNaN: true }),
  Double: fc.double({ noNaN: true }),
  Decimal: decimalArb,
  DateTime: dateTimeArb,
  Uuid: guidArb,
};

const arrayArb: fc.Arbitrary<XmlArray> = fc
  .tuple(
    prefixArb,
    nameArb,
    fc.boolean(),
    fc.array(attributeArb, { maxLength: 2 }),
    fc.constantFrom(...(Object.keys(ARRAY_ITEMS) as ArrayItemType[])),
  )
  .chain(([prefix, name, long, attributes, itemType]) =>
    fc
      .array(arrayItemsArb[itemType], { minLength: 1, maxLength: 5 })
      .map(
        (items) =>
          ({ kind: 'array', element: elementShell(prefix, name, long, attributes), itemType, items }) as XmlArray,
      ),
  );

/** Whether the reader will see the last child as a text record that could carry the end. */
function foldable(children: XmlContent[]): boolean {
  const last = children[children.length - 1];
  return last?.kind === 'text' && last.type !== 'List';
}

const elementArb: fc.Arbitrary<XmlElement> = fc.letrec<{ element: XmlElement; content: XmlContent }>((tie) => ({
  element: fc
    .tuple(
      prefixArb,
      nameArb,
      fc.boolean(),
      fc.array(attributeArb, { maxLength: 3 }),
      fc.array(tie('content'), { maxLength: 4, depthIdentifier: 'tree' }),
      fc.boolean(),
    )
    .map(([prefix, name, long, attributes, children, fold]) => ({
      ...elementShell(prefix, name, long, attributes),
      children,
      foldEnd: fold && foldable(children),
    })),
  content: fc.oneof(
    { depthSize: 'small', depthIdentifier: 'tree', withCrossShrink: true },
    { weight: 4, arbitrary: textArb },
    { weight: 3, arbitrary: tie('element') },
    {
      weight: 1,
      arbitrary: fc
        .string({ unit: 'binary', maxLength: 20 })
        .map((value) => ({ kind: 'comment', value }) as XmlContent),
    },
    { weight: 1, arbitrary: arrayArb },
  ),
})).element;

/** A document: one root that declares every prefix the generated names use, around generated content. */
export const documentArb: fc.Arbitrary<XmlDocument> = fc.array(elementArb, { maxLength: 3 }).map((children) => ({
  children: [
    {
      kind: 'element',
      prefix: 's',
      localName: 'Envelope',
      localNameKey: 2,
      attributes: [
        { kind: 'xmlns', prefix: 's', uri: STATIC_DICTIONARY[2]!, uriKey: 4 },
        ...PREFIXES.filter((p) => p !== 's').map((p, i) => ({
          kind: 'xmlns' as const,
          prefix: p,
          uri: `urn:test:${i}`,
        })),
      ],
      children,
      foldEnd: false,
    },
  ],
}));

/**
 * The tree without what the reader adds (resolved namespaces, foldEnd where a built tree left it to the writer), in a
 * form toEqual compares exactly (bigint, bytes, -0, infinities). Whether ends were folded shows in the bytes.
 */
export function comparable<T>(node: T): T {
  return JSON.parse(
    JSON.stringify(node, (key, value: unknown) => {
      if (key === 'namespace' || key === 'foldEnd') return undefined;
      if (typeof value === 'bigint') return `${value}n`;
      if (value instanceof Uint8Array) return [...value];
      if (typeof value === 'number' && (Object.is(value, -0) || !Number.isFinite(value)))
        return `${Object.is(value, -0) ? '-0' : value}`;
      return value;
    }),
  ) as T;
}
