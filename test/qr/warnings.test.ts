/** qrBillWarnings: what a valid bill may still need attention for under SIX IG QR-bill 2.3. */
import { describe, expect, it } from 'vitest';
import { readQrBill, type QrBill } from '../../src/qr/bill.ts';
import { qrBillWarnings } from '../../src/qr/warnings.ts';
import { IG_EXAMPLE_LINES } from '../support/qr/qr-bills.ts';

/** The IG's example bill: no warning. */
const BASE = IG_EXAMPLE_LINES;

function bill(changes: Record<number, string> = {}, optional: string[] = []): QrBill {
  const reading = readQrBill([...BASE.map((l, i) => changes[i + 1] ?? l), ...optional].join('\n'));
  if (!reading.ok) throw new Error(`expected a bill, got ${reading.reason}`);
  return reading.bill;
}

const codes = (b: QrBill) => qrBillWarnings(b).map((w) => w.code);
const K_CREDITOR = { 5: 'K', 7: 'Rue du Lac 1268', 8: '2501 Biel', 9: '', 10: '' };
const K_DEBTOR = { 21: 'K', 23: 'Marktgasse 28', 24: '9400 Rorschach', 25: '', 26: '' };

describe('qrBillWarnings', () => {
  it('has none for an IG 2.3 bill with S addresses, version 0200 and the characters IG 2.2 already had', () => {
    expect(qrBillWarnings(bill())).toEqual([]);
    // Umlauts, accents and ß were always allowed: no noise for ordinary Swiss bills.
    expect(
      qrBillWarnings(
        bill({ 6: 'Müller & Söhne Bäckerei', 10: 'Genève', 22: 'Françoise Weiß', 30: 'Rechnung Nr. 1/2026 (Zürich)' }),
      ),
    ).toEqual([]);
  });

  it('warns combined-address for each K address, once, naming the addresses', () => {
    expect(qrBillWarnings(bill(K_CREDITOR))).toEqual([
      {
        code: 'combined-address',
        fields: ['creditor'],
        detail:
          'The creditor address is combined (type K), which banks no longer accept since 22 November 2025 (SIX IG QR-bill 2.3).',
      },
    ]);
    expect(qrBillWarnings(bill({ ...K_CREDITOR, ...K_DEBTOR }))).toEqual([
      {
        code: 'combined-address',
        fields: ['creditor', 'ultimateDebtor'],
        detail:
          'The creditor and ultimateDebtor addresses are combined (type K), which banks no longer accept since 22 November 2025 (SIX IG QR-bill 2.3).',
      },
    ]);
    // An address whose type letter is missing but whose lines are laid out as K is read as K, and so warned about.
    expect(codes(bill({ ...K_CREDITOR, 5: '' }))).toEqual(['combined-address']);
  });

  it('warns extended-character-set for characters IG 2.3 added (Latin Extended-A, Ș ș Ț ț, €, the rest of Latin-1)', () => {
    const warnings = qrBillWarnings(bill({ 22: 'Łukasz Żółć-Ștefănescu', 30: 'Rechnung 12 €, ½ bezahlt' }));
    expect(warnings).toEqual([
      {
        code: 'extended-character-set',
        fields: ['ultimateDebtor.name', 'unstructuredMessage'],
        detail:
          'Characters of the character set extended in SIX IG QR-bill 2.3 (U+0141 Ł, U+017B Ż, U+0142 ł, U+0107 ć, U+0218 Ș, …): valid, but software still on IG 2.2 rules may refuse or replace them.',
      },
    ]);
    for (const char of ['Ø', 'å', 'Æ', 'ð', '^', '©', 'Ő', 'ț', '€'])
      expect(codes(bill({ 6: `A${char}B` })), char).toEqual(['extended-character-set']);
  });

  it('warns unsupported-character for characters outside the IG 2.3 set, apart from the extended ones', () => {
    const warnings = qrBillWarnings(bill({ 6: 'ООО Ромашка', 30: 'Fatura – 12 €' }, ['//S1/10/1234', 'Pay\tnow']));
    expect(warnings.map((w) => [w.code, w.fields])).toEqual([
      ['extended-character-set', ['unstructuredMessage']],
      ['unsupported-character', ['creditor.name', 'unstructuredMessage', 'alternativeProcedureParameters']],
    ]);
    // Control characters are named by code point only.
    expect(warnings[1]!.detail).toBe(
      'Characters outside the SIX IG QR-bill 2.3 character set (U+041E О, U+0420 Р, U+043E о, U+043C м, U+0430 а, …): a bank refuses or replaces them.',
    );
    expect(qrBillWarnings(bill({ 30: 'a\u0007b' }))[0]!.detail).toContain('(U+0007)');
  });

  it('does not count the line feed that joins two alternative procedures', () => {
    expect(qrBillWarnings(bill({}, ['', 'eBill/B/simon.muster@example.com', 'XY;XYService;54321']))).toEqual([]);
  });

  it('warns version-02xx for a version other than 0200', () => {
    expect(qrBillWarnings(bill({ 2: '0201' }))).toEqual([
      {
        code: 'version-02xx',
        fields: ['version'],
        detail: 'The QR-bill version 0201 is read as 0200, the only version SIX has defined for IG 2.x (2.3 included).',
      },
    ]);
  });

  it('lists several codes in a fixed order', () => {
    expect(codes(bill({ ...K_DEBTOR, 2: '0299', 6: 'Ștefan', 30: '😀' }))).toEqual([
      'combined-address',
      'extended-character-set',
      'unsupported-character',
      'version-02xx',
    ]);
  });
});
