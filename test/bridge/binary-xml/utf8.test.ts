/** The UTF-8 sizes and in-place encoding the binary XML writer uses instead of encoding each string twice. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteWriter, encodeUtf8, utf8Length } from '../../../tcp-bridge/src/bytes.ts';

const anyText = fc.string({ unit: 'binary', maxLength: 64 });
const withLoneSurrogates = fc
  .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 32 })
  .map((codes) => String.fromCharCode(...codes));

describe('utf8Length and ByteWriter.string', () => {
  it('size a string as TextEncoder encodes it, lone surrogates included', () => {
    for (const text of ['', 'abc', 'é', '€', '😀', '\ud800', '\udc00x', 'a\ud83d']) {
      expect(utf8Length(text)).toBe(encodeUtf8(text).length);
    }
    fc.assert(
      fc.property(fc.oneof(anyText, withLoneSurrogates), (text) => utf8Length(text) === encodeUtf8(text).length),
    );
  });

  it('write the length and the same bytes as TextEncoder, in place', () => {
    fc.assert(
      fc.property(fc.oneof(anyText, withLoneSurrogates), (text) => {
        const encoded = encodeUtf8(text);
        const expected = new ByteWriter().int31(encoded.length).bytes(encoded).finish();
        expect(new ByteWriter(16).u8(7).string(text).finish()).toEqual(Uint8Array.of(7, ...expected));
      }),
    );
  });
});

describe('ByteWriter.ascii8', () => {
  it('writes the type, a one-byte length and the characters of ASCII text of at most 255 characters', () => {
    for (const text of ['', 'a', 'row 12', 'x'.repeat(255)]) {
      const out = new ByteWriter(4).u8(1);
      expect(out.ascii8(0x98, text)).toBe(true);
      expect(out.u8(2).finish()).toEqual(Uint8Array.of(1, 0x98, text.length, ...encodeUtf8(text), 2));
    }
  });

  it('writes nothing for longer or non-ASCII text, wherever its first non-ASCII character is', () => {
    for (const text of ['x'.repeat(256), 'é', 'Grüße', `${'a'.repeat(254)}€`, '\u0080', 'abc\ud800']) {
      const out = new ByteWriter(4).u8(1);
      expect(out.ascii8(0x98, text)).toBe(false);
      expect(out.u8(2).finish()).toEqual(Uint8Array.of(1, 2));
    }
    fc.assert(
      fc.property(anyText, (text) => {
        const out = new ByteWriter(4);
        const ascii = out.ascii8(0x98, text);
        expect(ascii).toBe(text.length <= 255 && [...text].every((c) => c.charCodeAt(0) < 0x80));
        expect(out.finish().length).toBe(ascii ? text.length + 2 : 0);
      }),
    );
  });
});
