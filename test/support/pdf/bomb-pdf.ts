/**
 * A decompression bomb built without compressing anything (compressing 256 MiB of zeros takes seconds): a zlib stream
 * written by hand as one fixed-Huffman deflate block, a literal zero followed by back-references (length 258,
 * distance 1) that repeat it. Web APIs only, so it works inside workerd.
 */
import { assemblePdf } from './pdf-builder.ts';

/** A zlib stream (RFC 1950/1951) that inflates to `zeros` zero bytes, at about 1.7 bytes per KiB. */
export function zeroBomb(zeros: number): Uint8Array {
  const matches = Math.floor((zeros - 1) / 258);
  const tail = zeros - 1 - matches * 258; // 0..257 more zeros, as literals
  const out = new Uint8Array(2 + Math.ceil((3 + 8 + matches * 13 + tail * 8 + 7) / 8) + 4);
  out[0] = 0x78; // deflate, 32 KiB window
  out[1] = 0x01; // no dictionary, check bits
  let bit = 16;
  // Deflate writes bits from the least significant end; Huffman codes go most significant bit first.
  const bits = (value: number, n: number) => {
    for (let i = 0; i < n; i++, bit++) if ((value >> i) & 1) out[bit >> 3]! |= 1 << (bit & 7);
  };
  const code = (value: number, n: number) => {
    for (let i = n - 1; i >= 0; i--, bit++) if ((value >> i) & 1) out[bit >> 3]! |= 1 << (bit & 7);
  };
  bits(1, 1); // final block
  bits(1, 2); // fixed Huffman codes
  code(0b00110000, 8); // literal 0
  for (let i = 0; i < matches; i++) {
    code(0b11000101, 8); // length code 285: 258 bytes
    code(0, 5); // distance code 0: distance 1
  }
  for (let i = 0; i < tail; i++) code(0b00110000, 8);
  code(0, 7); // end of block (code 256)
  // Adler-32 of `zeros` zero bytes: a stays 1, b adds 1 per byte
  const adler = ((zeros % 65521) << 16) | 1;
  const at = (bit + 7) >> 3;
  new DataView(out.buffer).setUint32(at, adler >>> 0);
  return out.subarray(0, at + 4);
}

/** A 1-page PDF whose catalog's XMP metadata stream inflates to `zeros` bytes (PDFium reads it when opening). */
export function metadataBombPdf(zeros: number): Uint8Array {
  const bomb = zeroBomb(zeros);
  const enc = new TextEncoder();
  const head = enc.encode(`<< /Type /Metadata /Subtype /XML /Filter /FlateDecode /Length ${bomb.length} >>\nstream\n`);
  const stream = new Uint8Array(head.length + bomb.length + 10);
  stream.set(head);
  stream.set(bomb, head.length);
  stream.set(enc.encode('\nendstream'), head.length + bomb.length);
  return assemblePdf({
    objects: [
      '<< /Type /Catalog /Pages 2 0 R /Metadata 4 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 9 9] >>',
      stream,
    ],
  });
}
