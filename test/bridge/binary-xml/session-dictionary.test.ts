/** MC-NBFSE: the session dictionary's table before each document, its ids across envelopes, and its limits. */
import { describe, expect, it } from 'vitest';
import {
  type BinaryXmlError,
  decodeDocument,
  decodeEnvelope,
  element,
  encodeDocument,
  encodeEnvelope,
  intText,
  ReaderSession,
  stringText,
  textToString,
  WriterSession,
  xmlns,
  attribute,
  type XmlDocument,
  type XmlElement,
  type XmlText,
} from '../../../tcp-bridge/src/binary-xml/index.ts';
import { ascii, hex, inX, text, unhex } from './documents.ts';

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
