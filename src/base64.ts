const DATA_URL_PREFIX = 'data:application/pdf;base64,';

const INVALID = -1;
const SKIP = -2; // ASCII whitespace: line wrapping is allowed anywhere
const PAD = -3;
const CLASS = new Int8Array(128).fill(INVALID);
'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.split('').forEach((ch, i) => (CLASS[ch.charCodeAt(0)] = i));
for (const c of [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20]) CLASS[c] = SKIP;
CLASS[0x3d] = PAD;

/**
 * Strict RFC 4648 §4 Base64, as .NET's Convert.FromBase64String reads it: standard alphabet, padding required,
 * ASCII whitespace (line wrapping) ignored, nothing after the padding. Runtime decoders are lenient in different ways
 * (Node drops invalid characters, atob accepts missing padding), so this one decides alike everywhere.
 * Returns undefined for anything else. A `data:application/pdf;base64,` prefix is stripped (spec/HTTP.md).
 */
export function decodeBase64Strict(text: string): Uint8Array | undefined {
  const start = text.trimStart().startsWith(DATA_URL_PREFIX) ? text.indexOf(DATA_URL_PREFIX) + DATA_URL_PREFIX.length : 0;
  let significant = 0;
  let padding = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const k = c < 128 ? CLASS[c]! : INVALID;
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
  for (let i = start; i < text.length && o < out.length; i++) {
    const k = CLASS[text.charCodeAt(i)]!;
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
