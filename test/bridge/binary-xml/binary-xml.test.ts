import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BinaryXmlError,
  decodeDocument,
  decodeEnvelope,
  element,
  encodeDocument,
  encodeEnvelope,
  formatDateTime,
  formatFloat,
  formatTimeSpan,
  intText,
  doubleText,
  ReaderSession,
  STATIC_DICTIONARY,
  staticKey,
  stringText,
  textToString,
  WriterSession,
  xmlns,
  attribute,
  bytesText,
  type XmlContent,
  type XmlDocument,
  type XmlElement,
  type XmlText,
  type TextOf,
} from '../../../tcp-bridge/src/binary-xml/index.ts';
import { documentArb, SESSION_STRINGS, comparable } from '../../support/binary-xml-arbitrary.ts';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const unhex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h.replace(/\s+/g, ''), 'hex'));
const ascii = (s: string): string => Buffer.from(s, 'utf8').toString('hex');
/** A short MC-NBFX String: one length byte, UTF-8. */
const str = (s: string): string => Buffer.byteLength(s).toString(16).padStart(2, '0') + ascii(s);

function sessions(): { reader: ReaderSession; writer: WriterSession } {
  const writer = new WriterSession();
  for (const s of SESSION_STRINGS) writer.add(s);
  writer.takeNew();
  const reader = new ReaderSession();
  reader.readTable(encodeEnvelope({ children: [] }, new WriterSession(), { strings: SESSION_STRINGS }));
  return { reader, writer };
}

/** Encodes literally, checks the bytes, decodes them back to the same tree. */
function roundTrip(document: XmlDocument, expectedHex?: string): Uint8Array {
  const { reader, writer } = sessions();
  const bytes = encodeDocument(document, { session: writer, useDictionaries: false });
  if (expectedHex !== undefined) expect(hex(bytes)).toBe(expectedHex.replace(/\s+/g, ''));
  const decoded = decodeDocument(bytes, { session: reader });
  expect(comparable(decoded)).toEqual(comparable(document));
  expect(hex(encodeDocument(decoded, { session: writer, useDictionaries: false }))).toBe(hex(bytes));
  return bytes;
}

const text = <T extends XmlText['type']>(type: T, fields: Omit<TextOf<T>, 'kind' | 'type'>): XmlText =>
  ({ kind: 'text', type, ...fields }) as XmlText;

/** `<x>` around one text record, folded into the end or followed by EndElement. */
const inX = (t: XmlText, foldEnd: boolean): XmlDocument => ({
  children: [{ kind: 'element', prefix: '', localName: 'x', attributes: [], children: [t], foldEnd }],
});

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

describe('MC-NBFX reader refusals', () => {
  const refuse = (h: string, code: BinaryXmlError['code']): void => {
    expect(() => decodeDocument(unhex(h))).toThrow(expect.objectContaining({ name: 'BinaryXmlError', code }));
  };

  it('refuses malformed documents with typed errors', () => {
    refuse('40 01 78', 'Truncated'); // element never closed
    refuse('01', 'InvalidRecord'); // end with nothing open
    refuse('81', 'InvalidRecord'); // text carrying an end at the top
    refuse('40 01 78 a5', 'InvalidRecord'); // StartListTextWithEndElement is no record
    refuse('40 01 78 a6 01', 'InvalidRecord'); // EndListText without a list
    refuse('40 01 78 a4 a4 a6 a6 01', 'InvalidRecord'); // nested list
    refuse('40 01 78 a4 83 a6 01', 'InvalidRecord'); // WithEndElement inside a list
    refuse('40 01 78 04 01 61 83 01', 'InvalidRecord'); // attribute value with an end
    refuse('40 01 78 04 01 61 40 01', 'InvalidRecord'); // attribute value not text
    refuse('78', 'InvalidRecord'); // past the element records
    refuse('04 01 61 82', 'InvalidRecord'); // attribute with no element
    refuse('be', 'InvalidRecord');
    refuse('40 01 78 98 05 61', 'Truncated');
    refuse('40 01 78 9c ffffffff', 'InvalidValue'); // negative Chars32 length
    refuse('40 01 78 9c ffffff7f', 'Truncated'); // 2 GiB announced, nothing there: no allocation
    refuse('40 01 78 b6 03 610062', 'InvalidValue'); // odd UTF-16 length
    refuse('40 01 78 98 02 c328 01', 'InvalidUtf8');
    refuse('40 01 78 b4 02 01', 'InvalidValue'); // Bool byte 2
    refuse(`40 01 78 94 ${'00'.repeat(2)}1d00 ${'00'.repeat(12)} 01`, 'InvalidValue'); // scale 29
    refuse('40 01 78 bc 1a 02 01', 'InvalidValue'); // QName prefix past z
    refuse('42 80 80 80 80 10', 'InvalidValue'); // MultiByteInt31 over 31 bits
    refuse('42 d0 07 01', 'UnknownDictionaryString'); // static string 488
    refuse('42 01 01', 'UnknownDictionaryString'); // session string without a session
    refuse('5e 01 78 01', 'UndeclaredPrefix');
    refuse('03 03 40 01 61 01 8d 01 00000000', 'InvalidRecord'); // array of array
    refuse('03 40 01 61 82 01 8d 01 00000000', 'InvalidRecord'); // array element with content
    refuse('03 40 01 61 01 81 01', 'InvalidRecord'); // not an array item type
    refuse('03 40 01 61 01 8d 00', 'InvalidValue'); // no items
    refuse('03 40 01 61 01 8d ffffff7f 00', 'Truncated'); // 2^31-1 items announced
  });

  it('bounds nesting and record counts', () => {
    const deep = (n: number): string => '40 01 78'.repeat(n) + ' 01'.repeat(n);
    expect(() => decodeDocument(unhex(deep(32)))).not.toThrow();
    refuse(deep(33), 'QuotaExceeded');
    expect(() => decodeDocument(unhex(deep(40)), { maxDepth: 40 })).not.toThrow();
    expect(() => decodeDocument(unhex(`40 01 78 ${'80'.repeat(100)} 01`), { maxRecords: 50 })).toThrow(
      expect.objectContaining({ code: 'QuotaExceeded' }),
    );
    // A hostile nesting of many thousand levels meets the quota, not the call stack.
    expect(() => decodeDocument(unhex('40 01 78'.repeat(100_000)), { maxDepth: 1_000_000 })).toThrow(
      expect.objectContaining({ code: 'Truncated' }),
    );
  });
});

describe('MC-NBFSE session dictionary', () => {
  const table = (...strings: string[]): Uint8Array =>
    encodeEnvelope({ children: [] }, new WriterSession(4096), { strings });

  it('reads the table before the document and keeps counting ids across envelopes', () => {
    const session = new ReaderSession();
    expect(session.readTable(unhex('04 03 73716c 42 01 01'))).toEqual({ strings: ['sql'], documentOffset: 5 });
    const second = decodeEnvelope(unhex(`03 02 6964 42 03 01`), session);
    expect(second.strings).toEqual(['id']);
    expect(second.document.children[0]).toMatchObject({ localName: 'id', localNameKey: 3 });
    expect(decodeEnvelope(unhex('00 42 01 01'), session).document.children[0]).toMatchObject({ localName: 'sql' });
    expect(session.count).toBe(2);
    expect(session.bytesUsed).toBe(7);
  });

  it('refuses strings past 2048 bytes in total (MaxSessionSize), counting the length prefixes', () => {
    const exact = new ReaderSession();
    exact.readTable(table('x'.repeat(1021))); // 2 + 1021 bytes
    exact.readTable(table('y'.repeat(1022))); // 2 + 1022: 2047
    exact.readTable(table('')); // 1: 2048
    expect(exact.bytesUsed).toBe(2048);
    expect(() => exact.readTable(table(''))).toThrow(expect.objectContaining({ code: 'SessionQuotaExceeded' }));
    // The session is spoiled after a refusal, as WCF's encoder marks it invalid.
    expect(() => exact.readTable(unhex('00'))).toThrow(expect.objectContaining({ code: 'InvalidSession' }));

    expect(() => new ReaderSession().readTable(table('z'.repeat(2047)))).toThrow(
      expect.objectContaining({ code: 'SessionQuotaExceeded' }),
    );
    expect(() => new ReaderSession(4096).readTable(table('z'.repeat(2047)))).not.toThrow();
  });

  it('refuses malformed tables', () => {
    const refuse = (h: string, code: BinaryXmlError['code']): void => {
      expect(() => new ReaderSession().readTable(unhex(h))).toThrow(expect.objectContaining({ code }));
    };
    refuse('', 'InvalidSession');
    refuse('05 03 6162', 'InvalidSession'); // table longer than the payload
    refuse('03 05 6162', 'InvalidSession'); // string longer than the table
    refuse('03 02 c328', 'InvalidUtf8');
    refuse('ff ff ff ff 7f', 'InvalidSession');
  });

  it('writer: adds strings while the quota lasts, then none at all (as WCF does)', () => {
    const session = new WriterSession(10);
    expect(session.tryAdd('abc')).toBe(0); // 4 bytes
    expect(session.tryAdd('abc')).toBe(0);
    expect(session.tryAdd('defgh')).toBe(1); // 6 bytes: 10
    expect(session.tryAdd('')).toBeUndefined(); // 1 byte would pass 10
    expect(session.tryAdd('')).toBeUndefined();
    expect(session.takeNew()).toEqual(['abc', 'defgh']);
    const closing = new WriterSession(10);
    expect(closing.tryAdd('a'.repeat(20))).toBeUndefined();
    expect(closing.tryAdd('b')).toBeUndefined(); // closed by the first refusal
    expect(() => new WriterSession(3).add('abc')).toThrow(expect.objectContaining({ code: 'SessionQuotaExceeded' }));
  });

  it('writes replies with the static dictionary and session strings, announcing each string once', () => {
    const reply = (result: string): XmlDocument => ({
      children: [
        element(
          's',
          'Envelope',
          [xmlns('s', 'http://www.w3.org/2003/05/soap-envelope'), xmlns('a', 'http://www.w3.org/2005/08/addressing')],
          [
            element(
              's',
              'Header',
              [],
              [
                element(
                  'a',
                  'Action',
                  [attribute('s', 'mustUnderstand', intText(1))],
                  [stringText('http://tempuri.org/IIDBService/HeartbeatResponse')],
                ),
              ],
            ),
            element(
              's',
              'Body',
              [],
              [
                element(
                  '',
                  'HeartbeatResponse',
                  [xmlns('', 'http://tempuri.org/')],
                  [element('', 'HeartbeatResult', [], [stringText(result)])],
                ),
              ],
            ),
          ],
        ),
      ],
    });
    const out = new WriterSession();
    const into = new ReaderSession();
    const first = encodeEnvelope(reply('alive'), out);
    // Static: Envelope, the SOAP and WS-Addressing namespaces, Header, Action, mustUnderstand, Body.
    expect(hex(first)).toContain('56020b0173040b016106'); // <s:Envelope xmlns:s=dict 4 xmlns:a=dict 6, as .NET writes it
    expect(hex(first)).toContain('440a1e0082'); // <a:Action s:mustUnderstand="1">
    const decoded = decodeEnvelope(first, into);
    expect(decoded.strings).toEqual(['HeartbeatResponse', 'http://tempuri.org/', 'HeartbeatResult']);
    const second = encodeEnvelope(reply('alive'), out);
    expect(second[0]).toBe(0); // nothing new to announce
    expect(first[0]).toBe(54);
    expect(second.length).toBe(first.length - 54);
    const body = (d: XmlDocument): XmlElement =>
      ((d.children[0] as XmlElement).children[1] as XmlElement).children[0] as XmlElement;
    expect(body(decodeEnvelope(second, into).document)).toMatchObject({
      localName: 'HeartbeatResponse',
      namespace: 'http://tempuri.org/',
    });
    expect(textToString((body(decoded.document).children[0] as XmlElement).children[0] as XmlText)).toBe('alive');

    // Without dictionaries: literal names, empty table.
    const literal = encodeEnvelope(reply('alive'), new WriterSession(), { useDictionaries: false });
    expect(literal[0]).toBe(0);
    expect(hex(literal)).toContain(ascii('Envelope'));
  });

  it('falls back to literal text when no dictionary holds a Dictionary or QName text', () => {
    const doc: XmlDocument = {
      children: [
        element(
          '',
          'x',
          [xmlns('b', 'urn:b')],
          [
            { kind: 'text', type: 'QNameDictionary', prefix: 'b', localName: 'myType' },
            { kind: 'text', type: 'Dictionary', value: 'Envelope' },
          ],
        ),
      ],
    };
    const literal = decodeDocument(encodeDocument(doc, { useDictionaries: false }));
    expect((literal.children[0] as XmlElement).children).toEqual([
      { kind: 'text', type: 'Chars8', value: 'b:myType' },
      { kind: 'text', type: 'Chars8', value: 'Envelope' },
    ]);
    const session = new WriterSession();
    const reader = new ReaderSession();
    const viaSession = decodeEnvelope(encodeEnvelope(doc, session), reader);
    expect((viaSession.document.children[0] as XmlElement).children).toEqual([
      { kind: 'text', type: 'QNameDictionary', prefix: 'b', localName: 'myType', key: 5 }, // after x (1) and urn:b (3)
      { kind: 'text', type: 'Dictionary', value: 'Envelope', key: 2 },
    ]);
  });

  it('refuses trees the records cannot carry', () => {
    const bad: XmlDocument[] = [
      inX(text('Chars8', { value: 'x'.repeat(256) }), false),
      inX(text('Int8', { value: 200 }), false),
      inX(text('Int32', { value: 1.5 }), false),
      inX(text('UInt64', { value: -1n }), false),
      inX(text('Decimal', { value: '1e5' }), false),
      inX(text('Uuid', { value: 'not-a-guid' }), false),
      inX(text('UniqueId', { value: '97e5954d-ddfb-4040-9aa3-bcb40df0750b' }), false),
      inX(text('DateTime', { ticks: 1n << 62n, dateKind: 0 }), false),
      inX(text('Dictionary', { value: 'Envelope', key: 4 }), false),
      inX(text('QNameDictionary', { prefix: 'ab', localName: 'Envelope', key: 2 }), false),
      { children: [{ ...element('', 'x', [], [element('', 'y')]), foldEnd: true }] },
      { children: [{ kind: 'array', element: element('', 'a'), itemType: 'Int32', items: [] }] },
    ];
    for (const doc of bad)
      expect(() => encodeDocument(doc)).toThrow(expect.objectContaining({ code: 'InvalidDocument' }));
  });
});

describe('text values', () => {
  it('builds text records as XmlBinaryWriter chooses them', () => {
    expect(stringText('')).toEqual({ kind: 'text', type: 'Empty' });
    expect(stringText('0').type).toBe('Zero');
    expect(stringText('alive')).toEqual({ kind: 'text', type: 'Chars8', value: 'alive' });
    expect(stringText('x'.repeat(256)).type).toBe('Chars16');
    expect(stringText('日本語').type).toBe('UnicodeChars8');
    expect([0, 1, 42, -129, 40000, 2 ** 40].map((n) => intText(n).type)).toEqual([
      'Zero',
      'One',
      'Int8',
      'Int16',
      'Int32',
      'Int64',
    ]);
    expect(intText(2n ** 64n - 1n).type).toBe('UInt64');
    expect([1.0, 1.5, 0.1, Number.NaN, Infinity].map((n) => doubleText(n).type)).toEqual([
      'One',
      'Float',
      'Double',
      'Double',
      'Float',
    ]);
    expect(bytesText(new Uint8Array(0)).type).toBe('Empty');
    expect(bytesText(new Uint8Array(300)).type).toBe('Bytes16');
  });

  it('converts to the XML text .NET would write', () => {
    expect(formatDateTime(0x08d9ccb9a7734000n, 0)).toBe('2022-01-01T00:00:00'); // NewFile's Created in the capture
    expect(formatDateTime(0x08d9ccb9a7734000n + 1234567n, 1)).toBe('2022-01-01T00:00:00.1234567Z');
    expect(formatDateTime(0n, 0)).toBe('0001-01-01T00:00:00');
    expect(formatDateTime(3155378975999999999n, 0)).toBe('9999-12-31T23:59:59.9999999');
    expect(formatTimeSpan(0n)).toBe('PT0S');
    expect(formatTimeSpan(36_000_000_000n)).toBe('PT1H');
    expect(formatTimeSpan(-(864_000_000_000n + 5_000_000n))).toBe('-P1DT0.5S');
    expect(formatTimeSpan(864_000_000_000n * 2n)).toBe('P2D');
    expect(formatFloat(1e15, false)).toBe('1E+15');
    expect(formatFloat(123456789012345, false)).toBe('123456789012345');
    expect(formatFloat(0.0001, false)).toBe('0.0001');
    expect(formatFloat(0.00001, false)).toBe('1E-05');
    expect(formatFloat(Math.fround(0.1), true)).toBe('0.1');
    expect(formatFloat(-Infinity, true)).toBe('-INF');
    expect(textToString(text('Decimal', { value: '-0.00' }))).toBe('0.00');
    expect(textToString(text('Bytes8', { value: Uint8Array.of(1, 2, 3) }))).toBe('AQID');
    expect(textToString(text('QNameDictionary', { prefix: 'b', localName: 'int', key: 7 }))).toBe('b:int');
  });
});
