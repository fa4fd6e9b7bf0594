/** A large bytes value (a file's content) leaves the writer as a part of its own, the very array, not a copy. */
import { describe, expect, it } from 'vitest';
import { WriterSession } from '../../../tcp-bridge/src/binary-xml/dictionary.ts';
import { encodeEnvelopeParts } from '../../../tcp-bridge/src/binary-xml/envelope.ts';
import {
  bytesText,
  decodeDocument,
  element,
  encodeDocument,
  encodeDocumentParts,
  textToString,
  type XmlDocument,
  type XmlElement,
  xmlns,
} from '../../../tcp-bridge/src/binary-xml/index.ts';

const content = new Uint8Array(200_000).map((_, i) => (i * 31) & 0xff);
const small = Uint8Array.of(1, 2, 3);
const document = (): XmlDocument => ({
  children: [
    element(
      's',
      'Envelope',
      [xmlns('s', 'http://www.w3.org/2003/05/soap-envelope')],
      [
        element(
          '',
          'File',
          [],
          [element('', 'Content', [], [bytesText(content)]), element('', 'Tail', [], [bytesText(small)])],
        ),
      ],
    ),
  ],
});

describe('encodeDocumentParts', () => {
  it('hands a bytes value of 64 KiB or more out as itself, between the parts written around it', () => {
    const parts = encodeDocumentParts(document());
    expect(parts).toHaveLength(3);
    expect(parts[1]).toBe(content); // the caller's array: not copied
    // The same bytes as the whole document, which reads back to the same values.
    const whole = encodeDocument(document());
    expect(Buffer.concat(parts)).toEqual(Buffer.from(whole));
    const file = (decodeDocument(whole).children[0] as XmlElement).children[0] as XmlElement;
    const [first, tail] = file.children as XmlElement[];
    expect(first!.children[0]).toMatchObject({ type: 'Bytes32', value: content });
    expect(tail!.children[0]).toMatchObject({ type: 'Bytes8' });
    expect(textToString(tail!.children[0] as never)).toBe(Buffer.from(small).toString('base64'));
  });

  it('keeps an envelope small values whole: one part of the document', () => {
    const plain: XmlDocument = { children: [element('', 'Heartbeat', [], [bytesText(small)])] };
    expect(encodeDocumentParts(plain)).toHaveLength(1);
    const [table, ...body] = encodeEnvelopeParts(document(), new WriterSession());
    expect(table).toBeInstanceOf(Uint8Array);
    expect(body.some((part) => part === content)).toBe(true);
  });
});
