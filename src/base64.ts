const INVALID = -1;
const SKIP = -2; // ASCII whitespace: line wrapping is allowed anywhere
const PAD = -3;
const CLASS = new Int8Array(256).fill(INVALID);
'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.split('').forEach((ch, i) => (CLASS[ch.charCodeAt(0)] = i));
for (const c of [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20]) CLASS[c] = SKIP;
CLASS[0x3d] = PAD;

const DATA_URL_PREFIX = new TextEncoder().encode('data:application/pdf;base64,');

/**
 * Strict RFC 4648 §4 Base64 over ASCII bytes, as .NET's Convert.FromBase64String reads it: standard alphabet, padding
 * required, ASCII whitespace (line wrapping) ignored, nothing after the padding. Runtime decoders are lenient in
 * different ways (Node drops invalid characters, atob accepts missing padding), so this one decides alike everywhere.
 * A leading `data:application/pdf;base64,` is stripped (spec/HTTP.md). Returns undefined for anything else.
 *
 * It reads bytes, not a string, so a 64 MiB request body is decoded where it lies instead of first becoming text.
 */
export function decodeBase64Strict(ascii: Uint8Array): Uint8Array | undefined {
  let start = 0;
  while (start < ascii.length && CLASS[ascii[start]!] === SKIP) start++;
  if (startsWith(ascii, start, DATA_URL_PREFIX)) start += DATA_URL_PREFIX.length;
  else start = 0;

  let significant = 0;
  let padding = 0;
  for (let i = start; i < ascii.length; i++) {
    const k = CLASS[ascii[i]!]!;
    if (k >= 0) {
      if (padding > 0) return undefined;
      significant++;
    } else if (k === PAD) {
      padding++;
      significant++;
    } else if (k === INVALID) {
      return undefined;
    }
  }
  if (significant === 0 || significant % 4 !== 0 || padding > 2) return undefined;

  const out = new Uint8Array((significant / 4) * 3 - padding);
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (let i = start; o < out.length; i++) {
    const k = CLASS[ascii[i]!]!;
    if (k < 0) continue;
    acc = ((acc << 6) | k) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  return out;
}

function startsWith(bytes: Uint8Array, at: number, prefix: Uint8Array): boolean {
  if (bytes.length - at < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}
