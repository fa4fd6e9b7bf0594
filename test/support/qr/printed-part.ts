/**
 * The receipt and payment part printed as text (Helvetica, WinAnsi), laid out as swissqrbill lays them out (SIX IG
 * QR-bill 2.3, 3.4 and 3.5), with Web APIs only: the same documents are built in Node and inside workerd, so the printed
 * check's answers can be compared across runtimes. `pdfkit-bill.ts` has swissqrbill's own print (Node only).
 */
import type { Data } from 'swissqrbill/types';
import { formatAmount, formatIBAN, formatReference } from 'swissqrbill/utils';
// Not in the package's exports map, hence the path: swissqrbill's headings in each language.
import { translations } from '../../../node_modules/swissqrbill/lib/esm/shared/translations.js';

export type Language = 'DE' | 'FR' | 'IT' | 'EN';

/** Points per millimetre. */
const MM = 72 / 25.4;
/** The bill's top edge on an A4 page, in points from the page's bottom. */
const BILL_TOP = 105 * MM;

/**
 * Content stream operators that print `data` (the receipt at the left, the payment part's texts beside the code at
 * 67 mm, 17 mm) on the bottom 105 mm of an A4 page, with fonts /F2 (Helvetica) and /F3 (Helvetica-Bold).
 */
export function printedPart(data: Data, language: Language): string {
  const t = translations[language];
  let ops = '';
  /** A line of text whose top is `top` mm below the bill's top edge, at `left` mm. */
  const text = (left: number, top: number, size: number, value: string, bold = false) => {
    const baseline = BILL_TOP - top * MM - size * 0.8;
    ops += `BT /${bold ? 'F3' : 'F2'} ${size} Tf ${(left * MM).toFixed(2)} ${baseline.toFixed(2)} Td <${winAnsi(value)}> Tj ET\n`;
  };
  /** A column of sections, each a heading and its lines, from `top` down; returns the next free top. */
  const column = (left: number, top: number, heading: number, value: number, sections: [string, string[]][]) => {
    let y = top;
    for (const [title, lines] of sections) {
      text(left, y, heading, title, true);
      y += (heading * 1.2) / MM;
      for (const line of lines) {
        text(left, y, value, line);
        y += (value * 1.2) / MM;
      }
      y += (value * 0.9) / MM;
    }
    return y;
  };
  const creditor = [formatIBAN(data.creditor.account), ...address(data.creditor)];
  const reference = data.reference ? [formatReference(data.reference)] : [];
  const debtor = data.debtor ? address(data.debtor) : undefined;
  const amount = data.amount === undefined ? '' : formatAmount(data.amount);

  // Receipt: 62 mm wide, texts at 5 mm.
  text(5, 5, 11, t.receipt, true);
  column(5, 12, 6, 8, [
    [t.account, creditor],
    ...(reference.length ? [[t.reference, reference] as [string, string[]]] : []),
    [debtor ? t.payableBy : t.payableByName, debtor ?? []],
  ]);
  text(5, 68, 6, t.currency, true);
  text(27, 68, 6, t.amount, true);
  text(5, 71, 8, data.currency);
  if (amount) text(27, 71, 8, amount);
  text(42, 82, 6, t.acceptancePoint, true);

  // Payment part: title, the code at 67 mm (drawn by the caller), the amount section under it, texts at 118 mm.
  text(67, 5, 11, t.paymentPart, true);
  text(67, 68, 8, t.currency, true);
  text(89, 68, 8, t.amount, true);
  text(67, 72, 10, data.currency);
  if (amount) text(89, 72, 10, amount);
  column(118, 5, 8, 10, [
    [t.account, creditor],
    ...(reference.length ? [[t.reference, reference] as [string, string[]]] : []),
    ...(data.message ? [[t.additionalInformation, [data.message]] as [string, string[]]] : []),
    [debtor ? t.payableBy : t.payableByName, debtor ?? []],
  ]);
  return ops;
}

/** The two fonts printedPart uses, as PDF objects. */
export const PRINTED_PART_FONTS = [
  '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
  '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>',
] as const;

/** An address as printed: name, street and number, locality (a country code before a foreign one). */
function address(a: Data['creditor'] | NonNullable<Data['debtor']>): string[] {
  const street = [a.address, a.buildingNumber].filter((v) => v !== undefined && v !== '').join(' ');
  const prefix = a.country !== 'CH' ? `${a.country} - ` : '';
  return [a.name, ...(street ? [street] : []), `${prefix}${a.zip} ${a.city}`];
}

/** A string as a PDF hex string in WinAnsiEncoding (Latin-1 for the letters bills use). */
function winAnsi(value: string): string {
  return [...value].map((c) => (c.charCodeAt(0) < 256 ? c.charCodeAt(0) : 0x3f).toString(16).padStart(2, '0')).join('');
}
