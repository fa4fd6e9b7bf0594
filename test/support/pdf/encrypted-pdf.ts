/**
 * A PDF really encrypted with the standard security handler (RC4, 40-bit key, revision 2; ISO 32000-1 §7.6.3,
 * algorithms 1 to 4) under a user password, built in code with Web APIs only so it works inside workerd too (Web
 * Crypto has no MD5 or RC4, so both are here). Readers need the password to open it.
 */
import { assemblePdf, concatBytes as concat } from './pdf-builder.ts';

const enc = new TextEncoder();

/** The 32-byte padding string of algorithm 2. */
const PAD = Uint8Array.from([
  0x28, 0xbf, 0x4e, 0x5e, 0x4e, 0x75, 0x8a, 0x41, 0x64, 0x00, 0x4e, 0x56, 0xff, 0xfa, 0x01, 0x08, 0x2e, 0x2e, 0x00,
  0xb6, 0xd0, 0x68, 0x3e, 0x80, 0x2f, 0x0c, 0xa9, 0xfe, 0x64, 0x53, 0x69, 0x7a,
]);

export interface EncryptedPdfOptions {
  userPassword: string;
  ownerPassword?: string;
  /** First element of the trailer /ID (16 bytes); fixed by default so the file is the same on every run. */
  id?: Uint8Array;
}

/** A 1-page PDF (the page's content stream encrypted) that opens only with `userPassword`. */
export function encryptedPdf({
  userPassword,
  ownerPassword = `${userPassword}-owner`,
  id = Uint8Array.from({ length: 16 }, (_, i) => i * 17),
}: EncryptedPdfOptions): Uint8Array {
  const permissions = -44; // print and copy allowed, nothing else (bits 1-2 zero, 7-8 and 13-32 one, as required)
  const padded = (pw: string) => {
    const out = new Uint8Array(32);
    const bytes = enc.encode(pw).subarray(0, 32);
    out.set(bytes);
    out.set(PAD.subarray(0, 32 - bytes.length), bytes.length);
    return out;
  };
  // Algorithm 3: /O is the padded user password under RC4 with MD5(padded owner password)[0..5]
  const o = rc4(md5(padded(ownerPassword)).subarray(0, 5), padded(userPassword));
  // Algorithm 2: the file key is MD5(padded user password, /O, /P as 32-bit little endian, /ID[0])[0..5]
  const p = new Uint8Array(4);
  new DataView(p.buffer).setInt32(0, permissions, true);
  const fileKey = md5(concat(padded(userPassword), o, p, id)).subarray(0, 5);
  // Algorithm 4: /U is the padding string under RC4 with the file key
  const u = rc4(fileKey, PAD);
  // Algorithm 1: each object's strings and streams are encrypted with MD5(file key, object number, generation)
  const objectKey = (num: number, gen = 0) =>
    md5(
      concat(
        fileKey,
        Uint8Array.from([num & 0xff, (num >> 8) & 0xff, (num >> 16) & 0xff, gen & 0xff, (gen >> 8) & 0xff]),
      ),
    ).subarray(0, 10);

  const content = rc4(objectKey(5), enc.encode('BT /F1 24 Tf 72 720 Td (Secret page) Tj ET\n'));
  const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return assemblePdf({
    objects: [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [4 0 R] /Count 1 >>',
      '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>',
      concat(enc.encode(`<< /Length ${content.length} >>\nstream\n`), content, enc.encode('\nendstream')),
      `<< /Filter /Standard /V 1 /R 2 /Length 40 /O <${hex(o)}> /U <${hex(u)}> /P ${permissions} >>`,
    ],
    header: '%PDF-1.4',
    trailerExtra: `/Encrypt 6 0 R /ID [<${hex(id)}> <${hex(id)}>] `,
  });
}

export function rc4(key: Uint8Array, data: Uint8Array): Uint8Array {
  const s = Uint8Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = new Uint8Array(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 0xff;
    j = (j + s[i]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[n] = data[n]! ^ s[(s[i]! + s[j]!) & 0xff]!;
  }
  return out;
}

const MD5_SHIFT = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21];
const MD5_K = Array.from({ length: 64 }, (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) >>> 0);

/** RFC 1321. */
export function md5(data: Uint8Array): Uint8Array {
  const blocks = Math.ceil((data.length + 9) / 64);
  const msg = new Uint8Array(blocks * 64);
  msg.set(data);
  msg[data.length] = 0x80;
  const view = new DataView(msg.buffer);
  view.setUint32(msg.length - 8, (data.length * 8) >>> 0, true);
  view.setUint32(msg.length - 4, Math.floor(data.length / 0x20000000), true);
  const h = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476];
  for (let b = 0; b < blocks; b++) {
    let [a, bb, c, d] = h as [number, number, number, number];
    for (let i = 0; i < 64; i++) {
      let f: number;
      let g: number;
      if (i < 16) [f, g] = [(bb & c) | (~bb & d), i];
      else if (i < 32) [f, g] = [(d & bb) | (~d & c), (5 * i + 1) % 16];
      else if (i < 48) [f, g] = [bb ^ c ^ d, (3 * i + 5) % 16];
      else [f, g] = [c ^ (bb | ~d), (7 * i) % 16];
      const sum = (a + f + MD5_K[i]! + view.getUint32(b * 64 + g * 4, true)) >>> 0;
      const s = MD5_SHIFT[(i >> 4) * 4 + (i % 4)]!;
      [a, d, c] = [d, c, bb];
      bb = (bb + ((sum << s) | (sum >>> (32 - s)))) >>> 0;
    }
    h[0] = (h[0]! + a) >>> 0;
    h[1] = (h[1]! + bb) >>> 0;
    h[2] = (h[2]! + c) >>> 0;
    h[3] = (h[3]! + d) >>> 0;
  }
  const out = new Uint8Array(16);
  const outView = new DataView(out.buffer);
  for (const [i, x] of h.entries()) outView.setUint32(i * 4, x, true);
  return out;
}
