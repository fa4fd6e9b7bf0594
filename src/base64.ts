// Byte classes: 0-63 the value of a Base64 digit, then these three.
const SKIP = 64; // ASCII whitespace: line wrapping is allowed anywhere
const PAD = 65;
const INVALID = 255;
const CLASS = new Uint8Array(256).fill(INVALID);
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

  // Pass 1: check every byte and count what decodes.
  let significant = 0;
  let padding = 0;
  let spaces = 0;
  for (let i = start; i < ascii.length; i++) {
    const k = CLASS[ascii[i]!]!;
    if (k < 64) {
      if (padding > 0) return undefined;
      significant++;
    } else if (k === PAD) {
      padding++;
      significant++;
    } else if (k === SKIP) {
      spaces++;
    } else {
      return undefined;
    }
  }
  if (significant === 0 || significant % 4 !== 0 || padding > 2) return undefined;

  // Pass 2: whole quads. Wrapped input is first compacted, so the hot loop never tests for whitespace.
  let digits = ascii.subarray(start);
  if (spaces > 0) {
    const compact = new Uint8Array(significant);
    let n = 0;
    for (let i = 0; i < digits.length; i++) if (CLASS[digits[i]!] !== SKIP) compact[n++] = digits[i]!;
    digits = compact;
  }
  const out = new Uint8Array((significant / 4) * 3 - padding);
  const fullQuads = padding > 0 ? significant / 4 - 1 : significant / 4;
  let o = 0;
  for (let q = 0, i = 0; q < fullQuads; q++, i += 4) {
    const v = (CLASS[digits[i]!]! << 18) | (CLASS[digits[i + 1]!]! << 12) | (CLASS[digits[i + 2]!]! << 6) | CLASS[digits[i + 3]!]!;
    out[o++] = v >> 16;
    out[o++] = (v >> 8) & 0xff;
    out[o++] = v & 0xff;
  }
  if (padding > 0) {
    const i = fullQuads * 4;
    const v = (CLASS[digits[i]!]! << 18) | (CLASS[digits[i + 1]!]! << 12) | (padding === 1 ? CLASS[digits[i + 2]!]! << 6 : 0);
    out[o++] = v >> 16;
    if (padding === 1) out[o++] = (v >> 8) & 0xff;
  }
  return out;
}

function startsWith(bytes: Uint8Array, at: number, prefix: Uint8Array): boolean {
  if (bytes.length - at < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}
