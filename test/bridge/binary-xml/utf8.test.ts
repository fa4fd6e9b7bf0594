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
