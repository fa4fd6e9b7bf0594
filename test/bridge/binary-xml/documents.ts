/** What the binary XML tests share: records spelled in hex, small documents, and the literal round trip. */
import { expect } from 'vitest';
import {
  decodeDocument,
  encodeDocument,
  encodeEnvelope,
  ReaderSession,
  WriterSession,
  type XmlDocument,
  type XmlText,
  type TextOf,
} from '../../../tcp-bridge/src/binary-xml/index.ts';
import { SESSION_STRINGS, comparable } from '../../support/nettcp/binary-xml-arbitrary.ts';

export const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
export const unhex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h.replace(/\s+/g, ''), 'hex'));
export const ascii = (s: string): string => Buffer.from(s, 'utf8').toString('hex');
/** A short MC-NBFX String: one length byte, UTF-8. */
export const str = (s: string): string => Buffer.byteLength(s).toString(16).padStart(2, '0') + ascii(s);

function sessions(): { reader: ReaderSession; writer: WriterSession } {
  const writer = new WriterSession();
  for (const s of SESSION_STRINGS) writer.add(s);
  writer.takeNew();
  const reader = new ReaderSession();
  reader.readTable(encodeEnvelope({ children: [] }, new WriterSession(), { strings: SESSION_STRINGS }));
  return { reader, writer };
}

/** Encodes literally, checks the bytes, decodes them back to the same tree. */
export function roundTrip(document: XmlDocument, expectedHex?: string): Uint8Array {
  const { reader, writer } = sessions();
  const bytes = encodeDocument(document, { session: writer, useDictionaries: false });
  if (expectedHex !== undefined) expect(hex(bytes)).toBe(expectedHex.replace(/\s+/g, ''));
  const decoded = decodeDocument(bytes, { session: reader });
  expect(comparable(decoded)).toEqual(comparable(document));
  expect(hex(encodeDocument(decoded, { session: writer, useDictionaries: false }))).toBe(hex(bytes));
  return bytes;
}

export const text = <T extends XmlText['type']>(type: T, fields: Omit<TextOf<T>, 'kind' | 'type'>): XmlText =>
  ({ kind: 'text', type, ...fields }) as XmlText;

/** `<x>` around one text record, folded into the end or followed by EndElement. */
export const inX = (t: XmlText, foldEnd: boolean): XmlDocument => ({
  children: [{ kind: 'element', prefix: '', localName: 'x', attributes: [], children: [t], foldEnd }],
});
