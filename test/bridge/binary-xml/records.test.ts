/** MC-NBFX records byte for byte (and the generated MC-NBFS static dictionary they name strings from). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BinaryXmlError,
  element,
  encodeDocument,
  STATIC_DICTIONARY,
  staticKey,
  textToString,
  xmlns,
  attribute,
  type XmlContent,
  type XmlElement,
  type XmlText,
} from '../../../tcp-bridge/src/binary-xml/index.ts';
import { documentArb } from '../../support/nettcp/binary-xml-arbitrary.ts';
import { ascii, inX, roundTrip, str, text } from './documents.ts';

describe('MC-NBFS static dictionary (generated)', () => {
  it('has the 487 strings at the ids the captures show', () => {
    expect(STATIC_DICTIONARY).toHaveLength(487);
    expect(STATIC_DICTIONARY.slice(0, 4)).toEqual([
      'mustUnderstand',
      'Envelope',
      'http://www.w3.org/2003/05/soap-envelope',
      'http://www.w3.org/2005/08/addressing',
    ]);
    expect(staticKey('Envelope')).toBe(2);
    expect(staticKey('MessageID')).toBe(0x1a);
    expect(staticKey('RelatesTo')).toBe(0x12);
    expect(staticKey('http://www.w3.org/2005/08/addressing/anonymous')).toBe(0x14);
    expect(STATIC_DICTIONARY[486]).toBe('detail');
    expect(new Set(STATIC_DICTIONARY).size).toBe(487);
    expect(staticKey('HeartbeatResult')).toBeUndefined();
  });
});

describe('MC-NBFX records, byte for byte', () => {
  // [name, text node, value bytes after the record type]
  const texts: [string, XmlText, string][] = [
    ['ZeroText', text('Zero', {}), ''],
    ['OneText', text('One', {}), ''],
    ['FalseText', text('False', {}), ''],
    ['TrueText', text('True', {}), ''],
    ['Int8Text', text('Int8', { value: -2 }), 'fe'],
    ['Int16Text', text('Int16', { value: -32768 }), '0080'],
    ['Int32Text', text('Int32', { value: 0x12345678 }), '78563412'],
    ['Int64Text', text('Int64', { value: -2n }), 'feffffffffffffff'],
    ['FloatText', text('Float', { value: 1.5 }), '0000c03f'],
    ['DoubleText', text('Double', { value: 3.14 }), '1f85eb51b81e0940'],
    ['DecimalText', text('Decimal', { value: '-12.50' }), '00000280 00000000 e204000000000000'],
    ['DateTimeText', text('DateTime', { ticks: 0x08d9ccb9a7734000n, dateKind: 0 }), '004073a7b9ccd908'],
    ['Chars8Text', text('Chars8', { value: 'hello' }), `05${ascii('hello')}`],
    ['Chars8Text, not ASCII', text('Chars8', { value: 'héllo' }), `06${ascii('héllo')}`],
    ['Chars16Text', text('Chars16', { value: 'a'.repeat(300) }), `2c01${ascii('a'.repeat(300))}`],
    ['Chars32Text', text('Chars32', { value: 'hé' }), `03000000${ascii('hé')}`],
    ['Bytes8Text', text('Bytes8', { value: Uint8Array.of(1, 2, 3) }), '03010203'],
    ['Bytes16Text', text('Bytes16', { value: new Uint8Array(300).fill(9) }), `2c01${'09'.repeat(300)}`],
    ['Bytes32Text', text('Bytes32', { value: Uint8Array.of(0xff) }), '01000000ff'],
    ['EmptyText', text('Empty', {}), ''],
    ['DictionaryText', text('Dictionary', { value: 'Envelope', key: 2 }), '02'],
    ['DictionaryText (session)', text('Dictionary', { value: 'sql', key: 5 }), '05'],
    [
      'UniqueIdText',
      text('UniqueId', { value: 'urn:uuid:97e5954d-ddfb-4040-9aa3-bcb40df0750b' }),
      '4d95e597fbdd40409aa3bcb40df0750b',
    ],
    ['TimeSpanText', text('TimeSpan', { value: 36_000_000_000n }), '0068c46108000000'],
    ['UuidText', text('Uuid', { value: '97e5954d-ddfb-4040-9aa3-bcb40df0750b' }), '4d95e597fbdd40409aa3bcb40df0750b'],
    ['UInt64Text', text('UInt64', { value: 2n ** 64n - 1n }), 'ffffffffffffffff'],
    ['BoolText', text('Bool', { value: true }), '01'],
    ['UnicodeChars8Text', text('UnicodeChars8', { value: 'hé' }), '04 6800 e900'],
    ['UnicodeChars16Text', text('UnicodeChars16', { value: '\ud800' }), '0200 00d8'],
    ['UnicodeChars32Text', text('UnicodeChars32', { value: '€' }), '02000000 ac20'],
    ['QNameDictionaryText', text('QNameDictionary', { prefix: 'b', localName: 'Envelope', key: 2 }), '01 02'],
  ];
  const recordOf: Record<string, number> = {
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
  };

  it.each(texts)('%s and its WithEndElement form', (_, node, value) => {
    const record = recordOf[node.type]!;
    roundTrip(inX(node, false), `400178 ${record.toString(16)} ${value} 01`);
    roundTrip(inX(node, true), `400178 ${(record + 1).toString(16)} ${value}`);
    // As an attribute value (never with the end).
    roundTrip(
      { children: [element('', 'x', [attribute('', 'a', node)])] },
      `400178 0401${ascii('a')} ${record.toString(16)} ${value} 01`,
    );
  });

  it('StartListText … EndListText (the spec example: "true false 0 1")', () => {
    const list = text('List', { items: [text('True', {}), text('False', {}), text('Zero', {}), text('One', {})] });
    roundTrip(inX(list, false), '400178 a4 86 84 80 82 a6 01');
    expect(textToString(list)).toBe('true false 0 1');
    roundTrip(
      { children: [element('', 'x', [attribute('', 'a', list)])] },
      `400178 0401${ascii('a')} a4 86 84 80 82 a6 01`,
    );
    expect(() => encodeDocument(inX(list, true))).toThrow(BinaryXmlError);
  });

  it('every element record form', () => {
    const u = xmlns('pre', 'u');
    const cases: [XmlElement, string][] = [
      [element('', 'x'), `40 ${str('x')} 01`],
      [{ ...element('pre', 'x', [u]) }, `41 ${str('pre')} ${str('x')} 09 ${str('pre')} ${str('u')} 01`],
      [{ ...element('', 'Envelope'), localNameKey: 2 }, '42 02 01'],
      [{ ...element('pre', 'Envelope', [u]), localNameKey: 2 }, `43 ${str('pre')} 02 09 ${str('pre')} ${str('u')} 01`],
      [
        { ...element('s', 'Envelope', [{ ...xmlns('s', STATIC_DICTIONARY[2]!), uriKey: 4 }]), localNameKey: 2 },
        '56 02 0b 0173 04 01',
      ],
      [{ ...element('a', 'Body', [xmlns('a', 'u')]), localNameKey: 0x0e }, `44 0e 09 ${str('a')} ${str('u')} 01`],
      [element('z', 'x', [xmlns('z', 'u')]), `77 ${str('x')} 09 ${str('z')} ${str('u')} 01`],
      [element('a', 'x', [xmlns('a', 'u')]), `5e ${str('x')} 09 ${str('a')} ${str('u')} 01`],
      // Long forms a writer may choose though a shorter record exists.
      [{ ...element('', 'x'), longForm: true }, `41 00 ${str('x')} 01`],
      [
        { ...element('a', 'x', [xmlns('a', 'u')]), longForm: true },
        `41 ${str('a')} ${str('x')} 09 ${str('a')} ${str('u')} 01`,
      ],
      [{ ...element('', 'Envelope'), localNameKey: 2, longForm: true }, '43 00 02 01'],
    ];
    for (const [node, bytes] of cases) roundTrip({ children: [{ ...node, foldEnd: false }] }, bytes);
  });

  it('every attribute and xmlns record form', () => {
    const decl = xmlns('pre', 'u');
    const declHex = `09 ${str('pre')} ${str('u')}`;
    const one = text('One', {});
    const cases: [XmlElement['attributes'], string][] = [
      [[attribute('', 'a', one)], `04 ${str('a')} 82`],
      [[decl, attribute('pre', 'a', one)], `${declHex} 05 ${str('pre')} ${str('a')} 82`],
      [[{ ...attribute('', 'mustUnderstand', one), localNameKey: 0 }], '06 00 82'],
      [[decl, { ...attribute('pre', 'mustUnderstand', one), localNameKey: 0 }], `${declHex} 07 ${str('pre')} 00 82`],
      [
        [xmlns('a', 'u'), { ...attribute('a', 'mustUnderstand', one), localNameKey: 0 }],
        `09 ${str('a')} ${str('u')} 0c 00 82`,
      ],
      [
        [
          { ...xmlns('s', STATIC_DICTIONARY[2]!), uriKey: 4 },
          { ...attribute('s', 'mustUnderstand', one), localNameKey: 0 },
        ],
        '0b 0173 04 1e 00 82',
      ],
      [[xmlns('z', 'u'), { ...attribute('z', 'Id', one), localNameKey: 0x1c }], `09 ${str('z')} ${str('u')} 25 1c 82`],
      [[xmlns('a', 'u'), attribute('a', 'b', one)], `09 ${str('a')} ${str('u')} 26 ${str('b')} 82`],
      [[xmlns('z', 'u'), attribute('z', 'b', one)], `09 ${str('z')} ${str('u')} 3f ${str('b')} 82`],
      // Attribute before the declaration of its prefix, as Mono writes i:type.
      [[attribute('z', 'b', one), xmlns('z', 'u')], `3f ${str('b')} 82 09 ${str('z')} ${str('u')}`],
      [[xmlns('', 'u')], `08 ${str('u')}`],
      [[{ ...xmlns('', STATIC_DICTIONARY[3]!), uriKey: 6 }], '0a 06'],
      [[{ ...xmlns('', 'u'), longForm: true }], `09 00 ${str('u')}`],
      [[{ ...xmlns('', STATIC_DICTIONARY[3]!), uriKey: 6, longForm: true }], '0b 00 06'],
      [[{ ...attribute('', 'a', one), longForm: true }], `05 00 ${str('a')} 82`],
      [
        [xmlns('a', 'u'), { ...attribute('a', 'b', one), longForm: true }],
        `09 ${str('a')} ${str('u')} 05 ${str('a')} ${str('b')} 82`,
      ],
    ];
    for (const [attributes, bytes] of cases) {
      roundTrip({ children: [{ ...element('', 'x', attributes), foldEnd: false }] }, `40 ${str('x')} ${bytes} 01`);
    }
  });

  it('Comment and Array records', () => {
    roundTrip({ children: [{ kind: 'comment', value: 'hi' }] }, `02 ${str('hi')}`);
    roundTrip(
      { children: [{ kind: 'array', element: element('', 'a'), itemType: 'Int32', items: [1, 2] }] },
      `03 40 ${str('a')} 01 8d 02 01000000 02000000`,
    );
    const items: [XmlContent, string][] = [
      [{ kind: 'array', element: element('', 'a'), itemType: 'Bool', items: [true, false] }, 'b5 02 01 00'],
      [{ kind: 'array', element: element('', 'a'), itemType: 'Int16', items: [-1] }, '8b 01 ffff'],
      [{ kind: 'array', element: element('', 'a'), itemType: 'Int64', items: [1n] }, '8f 01 0100000000000000'],
      [{ kind: 'array', element: element('', 'a'), itemType: 'Float', items: [1.5] }, '91 01 0000c03f'],
      [{ kind: 'array', element: element('', 'a'), itemType: 'Double', items: [3.14] }, '93 01 1f85eb51b81e0940'],
      [
        { kind: 'array', element: element('', 'a'), itemType: 'Decimal', items: ['1'] },
        '95 01 00000000 00000000 0100000000000000',
      ],
      [
        { kind: 'array', element: element('', 'a'), itemType: 'DateTime', items: [{ ticks: 1n, dateKind: 1 }] },
        '97 01 0100000000000040',
      ],
      [{ kind: 'array', element: element('', 'a'), itemType: 'TimeSpan', items: [-1n] }, 'af 01 ffffffffffffffff'],
      [
        { kind: 'array', element: element('', 'a'), itemType: 'Uuid', items: ['00000000-0000-0000-0000-000000000001'] },
        `b1 01 ${'00'.repeat(15)}01`,
      ],
    ];
    for (const [node, tail] of items) roundTrip({ children: [node] }, `03 40 ${str('a')} 01 ${tail}`);
  });

  it('round-trips generated documents (every record type, both dictionaries) byte for byte', () => {
    fc.assert(
      fc.property(documentArb, (document) => {
        roundTrip(document);
      }),
      { seed: 20261122, numRuns: 300 },
    );
  });
});
