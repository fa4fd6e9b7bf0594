import type { QrBill, QrBillAddress } from './bill.ts';

/**
 * What a valid bill may still need a clerk's attention for under SIX IG QR-bill 2.3, the only valid version since
 * 22 November 2025. None of these makes the bill unreadable, so the bill is answered with them beside it: the clerk
 * hears it from the answer rather than from a rejected payment.
 */
export type QrBillWarningCode =
  /** A K (combined) address: dropped in IG 2.3, banks no longer accept it since 2025-11-22. */
  | 'combined-address'
  /** Characters IG 2.3 allows but IG 2.2 did not (€, Ș, ő, ...): software still on 2.2 rules may refuse or alter them. */
  | 'extended-character-set'
  /** Characters outside even the IG 2.3 set (Cyrillic, emoji, control characters): a bank refuses or replaces them. */
  | 'unsupported-character'
  /** A version other than 0200: read (the major version decides), but no such minor version has been published. */
  | 'version-02xx'
  /** The printed receipt or payment part shows another account, creditor, reference, currency, amount or debtor. */
  | 'printed-differs'
  /** The payment part has no text layer (a scan, a photo): the printed part could not be compared with the code. */
  | 'printed-not-checked'
  /** The code's error correction level is not M (IG 2.3, 5.5). */
  | 'error-correction-level'
  /** No Swiss cross in the middle of the code (IG 2.3, 5.6). */
  | 'no-swiss-cross'
  /** The code is far from 46 x 46 mm on a page printed at its own size (IG 2.3, 5.6). */
  | 'symbol-size';

export interface QrBillWarning {
  code: QrBillWarningCode;
  /**
   * Where: the answer's field names (`creditor`, `ultimateDebtor.name`, `version`, ...), in the answer's order; for
   * `printed-differs` the printed part's fields (`account`, `creditor`, `reference`, `currency`, `amount`, `debtor`);
   * empty for the symbol's own facts.
   */
  fields: string[];
  detail: string;
}

/** The warnings for a bill, at most one per code, in the order of QrBillWarningCode. */
export function qrBillWarnings(bill: QrBill): QrBillWarning[] {
  const warnings: QrBillWarning[] = [];
  const combined = ADDRESSES.filter((field) => bill[field]?.addressType === 'K');
  if (combined.length > 0) {
    warnings.push({
      code: 'combined-address',
      fields: combined,
      detail: `${combined.length === 1 ? `The ${combined[0]} address is` : `The ${combined.join(' and ')} addresses are`} combined (type K), which banks no longer accept since 22 November 2025 (SIX IG QR-bill 2.3).`,
    });
  }
  const extended = new CharacterFinding();
  const unsupported = new CharacterFinding();
  for (const [field, value] of textFields(bill)) {
    for (const char of value) {
      const code = char.codePointAt(0)!;
      if (!inExtendedLatin(code)) unsupported.add(field, char);
      else if (!inLatin1Subset(code)) extended.add(field, char);
    }
  }
  if (extended.fields.size > 0) {
    warnings.push({
      code: 'extended-character-set',
      fields: [...extended.fields],
      detail: `Characters of the character set extended in SIX IG QR-bill 2.3 (${extended.sample()}): valid, but software still on IG 2.2 rules may refuse or replace them.`,
    });
  }
  if (unsupported.fields.size > 0) {
    warnings.push({
      code: 'unsupported-character',
      fields: [...unsupported.fields],
      detail: `Characters outside the SIX IG QR-bill 2.3 character set (${unsupported.sample()}): a bank refuses or replaces them.`,
    });
  }
  if (bill.version !== '0200') {
    warnings.push({
      code: 'version-02xx',
      fields: ['version'],
      detail: `The QR-bill version ${bill.version} is read as 0200, the only version SIX has defined for IG 2.x (2.3 included).`,
    });
  }
  return warnings;
}

const ADDRESSES = ['creditor', 'ultimateCreditor', 'ultimateDebtor'] as const;

/** Every text of the bill with its field name in the answer, in the answer's order (the header is checked by bill.ts). */
function* textFields(bill: QrBill): Generator<[string, string]> {
  const address = function* (name: string, a: QrBillAddress | null): Generator<[string, string]> {
    if (!a) return;
    for (const [key, value] of Object.entries(a))
      if (typeof value === 'string' && key !== 'addressType') yield [`${name}.${key}`, value];
  };
  yield ['iban', bill.iban];
  yield* address('creditor', bill.creditor);
  yield* address('ultimateCreditor', bill.ultimateCreditor);
  yield* address('ultimateDebtor', bill.ultimateDebtor);
  for (const key of [
    'reference',
    'unstructuredMessage',
    'billInformation',
    'alternativeProcedureParameters',
  ] as const) {
    const value = bill[key];
    // The alternative procedures are joined by \n in the answer; the line feed is ours, not the bill's.
    if (value !== null) yield [key, key === 'alternativeProcedureParameters' ? value.replace(/\n/g, ' ') : value];
  }
}

/** Which fields use characters of a kind, and the first few distinct characters, for the detail sentence. */
class CharacterFinding {
  readonly fields = new Set<string>();
  private readonly chars = new Set<string>();

  add(field: string, char: string): void {
    this.fields.add(field);
    this.chars.add(char);
  }

  /** Up to five characters, each with its code point, so an invisible or unprintable one is still named. */
  sample(): string {
    const shown = [...this.chars]
      .slice(0, 5)
      .map(
        (c) =>
          `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}${c.codePointAt(0)! >= 0x20 && c.codePointAt(0)! !== 0x7f ? ` ${c}` : ''}`,
      );
    return this.chars.size > 5 ? `${shown.join(', ')}, …` : shown.join(', ');
  }
}

/**
 * IG 2.3's "extended Latin" set (Swiss Payment Standards 2022, binding for QR-bills since 2025-11-22): Basic Latin's
 * printable characters, Latin-1 Supplement and Latin Extended-A, Ș ș Ț ț and the euro sign.
 */
function inExtendedLatin(c: number): boolean {
  return (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0x17f) || (c >= 0x218 && c <= 0x21b) || c === 0x20ac;
}

/**
 * IG 2.2's set: printable Basic Latin except `^`, then `£`, `´` and the letters À-ý except those the IG left out
 * (Ã Å Æ Ð Õ × Ø Ý Þ ã å æ ð õ ø). The same list as Codecrete's SwissQRBill (SPSCharacterSet.LATIN_1_SUBSET).
 */
function inLatin1Subset(c: number): boolean {
  if (c >= 0x20 && c <= 0x7e) return c !== 0x5e;
  if (c === 0xa3 || c === 0xb4) return true;
  return c >= 0xc0 && c <= 0xfd && !LATIN1_GAPS.has(c);
}

const LATIN1_GAPS = new Set([0xc3, 0xc5, 0xc6, 0xd0, 0xd5, 0xd7, 0xd8, 0xdd, 0xde, 0xe3, 0xe5, 0xe6, 0xf0, 0xf5, 0xf8]);
