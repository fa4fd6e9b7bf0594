/** XML names for a DataTable's columns and rows, as .NET's XmlConvert makes them (datatable.ts). */
/**
 * XmlConvert.EncodeLocalName: every character that cannot stand in an NCName at its place becomes `_xHHHH_`
 * (`_xHHHHHHHH_` for a character beyond the BMP), and an underscore that would otherwise read as the start of such
 * an escape becomes `_x005F_`, so that XmlConvert.DecodeName on the client gives back the name exactly.
 *
 * .NET decides by the XML 1.0 4th-edition name tables; this uses Unicode letters, marks and digits within the
 * 5th-edition name ranges, which agrees with those tables on every name a database is likely to produce (ASCII,
 * Latin, Greek, Cyrillic, CJK) and otherwise errs towards escaping. An escaped name decodes to the same name either
 * way; the result is always a valid name.
 */
export function encodeLocalName(name: string): string {
  // The positions of underscores that start `_xHHHH_` or `_xHHHHHHHH_`, found like .NET's regex (non-overlapping,
  // left to right; the lookbehind may see an underscore an earlier match consumed).
  const escapes = new Set<number>();
  for (const m of name.matchAll(/(?<=_)[Xx](?:[0-9a-fA-F]{4}|[0-9a-fA-F]{8})_/g)) escapes.add(m.index! - 1);
  let out = '';
  for (let i = 0; i < name.length; ) {
    const cp = name.codePointAt(i)!;
    const width = cp > 0xffff ? 2 : 1;
    const ok = i === 0 ? isNameStartChar(cp) : isNameChar(cp);
    if (!ok || escapes.has(i))
      out += `_x${cp
        .toString(16)
        .toUpperCase()
        .padStart(width === 2 ? 8 : 4, '0')}_`;
    else out += name.slice(i, i + width);
    i += width;
  }
  return out;
}

const LETTER = /^\p{L}$/u;
const MARK_OR_DIGIT = /^[\p{M}\p{Nd}]$/u;

// XML 1.0 5th edition NameStartChar ranges above ASCII (':' left out: a local name has none).
function in5thEditionStartRange(cp: number): boolean {
  return (
    (cp >= 0xc0 && cp <= 0xd6) ||
    (cp >= 0xd8 && cp <= 0xf6) ||
    (cp >= 0xf8 && cp <= 0x2ff) ||
    (cp >= 0x370 && cp <= 0x37d) ||
    (cp >= 0x37f && cp <= 0x1fff) ||
    (cp >= 0x2070 && cp <= 0x218f) ||
    (cp >= 0x2c00 && cp <= 0x2fef) ||
    (cp >= 0x3001 && cp <= 0xd7ff) ||
    (cp >= 0xf900 && cp <= 0xfdcf) ||
    (cp >= 0xfdf0 && cp <= 0xfffd)
  );
}

function isNameStartChar(cp: number): boolean {
  if (cp < 0x80) return (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a) || cp === 0x5f;
  // Beyond the BMP .NET's 4th-edition tables allow nothing; escaping is always safe.
  return cp <= 0xffff && in5thEditionStartRange(cp) && LETTER.test(String.fromCodePoint(cp));
}

function isNameChar(cp: number): boolean {
  if (isNameStartChar(cp)) return true;
  if (cp < 0x80) return (cp >= 0x30 && cp <= 0x39) || cp === 0x2d || cp === 0x2e;
  if (cp === 0xb7) return true;
  if (cp > 0xffff || !MARK_OR_DIGIT.test(String.fromCodePoint(cp))) return false;
  return in5thEditionStartRange(cp) || (cp >= 0x300 && cp <= 0x36f) || (cp >= 0x203f && cp <= 0x2040);
}
