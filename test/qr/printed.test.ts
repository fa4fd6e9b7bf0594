/**
 * The printed receipt and payment part against the QR code (a swapped code is the invoice fraud this catches), and the
 * symbol's own facts: on swissqrbill's own print (PDFKit) in the four languages, and on bills printed with Web APIs
 * (printed-part.ts, the documents the runtimes' parity tests send).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { generateQRData } from '../../node_modules/swissqrbill/lib/esm/shared/qr-code.js';
import type { ScanOutcome } from '../../src/qr/scan.ts';
import type { QrBillWarning } from '../../src/qr/warnings.ts';
import { swissQrBillPdf } from '../support/qr/pdfkit-bill.ts';
import { type Language, printedPart } from '../support/qr/printed-part.ts';
import { type BillData, PAYMENT_PART_CODE, billCode, qrBillPdf, spcCode, textCode } from '../support/qr/qr-bills.ts';
import { type ScanEngines, scanEngines } from '../support/qr/scan-engines.ts';

const LANGUAGES: Language[] = ['DE', 'FR', 'IT', 'EN'];

/** A supplier's bill: creditor reference, a debtor, an amount with thousands. */
const GENUINE: BillData = {
  currency: 'CHF',
  amount: 1949.75,
  creditor: {
    account: 'CH93 0076 2011 6238 5295 7',
    name: 'Müller Gartenbau AG',
    address: 'Seestrasse',
    buildingNumber: '12',
    zip: '8800',
    city: 'Thalwil',
    country: 'CH',
  },
  debtor: {
    name: 'Françoise Weiss',
    address: 'Rue de la Gare',
    buildingNumber: '3',
    zip: '1003',
    city: 'Lausanne',
    country: 'CH',
  },
  reference: 'RF18 5390 0754 7034',
  message: 'Rechnung 2026-001',
};
/** The same bill paying another account: what a fraudster swaps the code for. */
const FRAUD: BillData = { ...GENUINE, creditor: { ...GENUINE.creditor, account: 'CH56 0483 5012 3456 7800 9' } };

let engines: ScanEngines;
beforeAll(async () => {
  engines = await scanEngines();
});

async function warningsOf(pdf: Uint8Array): Promise<QrBillWarning[]> {
  const outcome: ScanOutcome = await engines.scan(pdf);
  if (outcome.status !== 'found') throw new Error(`expected a bill, got ${outcome.status}`);
  return outcome.warnings;
}
const codesOf = async (pdf: Uint8Array) => (await warningsOf(pdf)).map((w) => w.code);

/** A bill printed with Web APIs: `printed` on the payment part, `code` in it (by default the code of `printed`). */
const webBill = (printed: BillData, language: Language, code = billCode(printed)) =>
  qrBillPdf([{ codes: [{ code, ...PAYMENT_PART_CODE }], printed: printedPart(printed, language) }]);

describe.each(LANGUAGES)('the printed payment part in %s', (language) => {
  const print = (data: BillData, code?: BillData) => swissQrBillPdf(data, { language }, { code });

  it('matches its code: no warning at all (swissqrbill and the Web API print)', async () => {
    expect(await warningsOf(await print(GENUINE))).toEqual([]);
    expect(await warningsOf(webBill(GENUINE, language))).toEqual([]);
  });

  it('differs when the code was swapped for one paying another account: printed-differs naming account', async () => {
    const [warning, ...rest] = await warningsOf(await print(GENUINE, FRAUD));
    expect(rest).toEqual([]);
    expect(warning).toEqual({
      code: 'printed-differs',
      fields: ['account'],
      detail:
        'The printed bill differs from its QR code, which is what a bank pays: account: the payment part and receipt print "CH93 0076 2011 6238 5295 7", the code says "CH56 0483 5012 3456 7800 9".',
    });
    expect(await warningsOf(webBill(GENUINE, language, billCode(FRAUD)))).toEqual([warning]);
  });

  it('differs when only the amount in the code was changed', async () => {
    const warnings = await warningsOf(await print(GENUINE, { ...GENUINE, amount: 19497.5 }));
    expect(warnings).toEqual([
      {
        code: 'printed-differs',
        fields: ['amount'],
        detail:
          'The printed bill differs from its QR code, which is what a bank pays: amount: the payment part and receipt print "1 949.75", the code says "19 497.50".',
      },
    ]);
  });

  it('reads a blank printed amount: fine with a code without amount, a difference with one', async () => {
    const open = { ...GENUINE, amount: undefined };
    expect(await warningsOf(await print(open))).toEqual([]);
    expect(await warningsOf(webBill(open, language))).toEqual([]);
    const [warning] = await warningsOf(await print(open, GENUINE));
    expect(warning).toMatchObject({ code: 'printed-differs', fields: ['amount'] });
    expect(warning!.detail).toContain('print "(blank)", the code says "1 949.75"');
  });

  it('names every field that differs: creditor, reference, currency and debtor too', async () => {
    const other: BillData = {
      ...FRAUD,
      currency: 'EUR',
      creditor: { ...FRAUD.creditor, name: 'Mueller Garten GmbH', zip: '8001', city: 'Zürich' },
      reference: 'RF48 5000 0567 8901 2345',
      debtor: { ...GENUINE.debtor!, name: 'Hans Meier' },
    };
    const [warning] = await warningsOf(await print(GENUINE, other));
    expect(warning).toMatchObject({
      code: 'printed-differs',
      fields: ['account', 'creditor', 'reference', 'currency', 'debtor'],
    });
    expect(warning!.detail).toContain('the code says "Mueller Garten GmbH, 8001 Zürich"');
  });
});

describe('pages whose payment part cannot be read', () => {
  it('a scanned page: printed-not-checked, once, and no size judged from an unknown scale', async () => {
    const scan = qrBillPdf([{ codes: [{ code: billCode(GENUINE), ...PAYMENT_PART_CODE }], raster: 200 }]);
    const warnings = await warningsOf(scan);
    expect(warnings).toEqual([
      {
        code: 'printed-not-checked',
        fields: [],
        detail:
          'The payment part has no text layer (a scan, a photo, or text drawn as outlines): its printed account, creditor, reference and amount were not compared with the code.',
      },
    ]);
  });

  it('a vector page with text but no payment part headings: printed-not-checked, saying why', async () => {
    const [warning, ...rest] = await warningsOf(
      qrBillPdf([{ codes: [{ code: billCode(GENUINE), ...PAYMENT_PART_CODE }] }]),
    );
    expect(rest).toEqual([]);
    expect(warning).toMatchObject({ code: 'printed-not-checked', fields: [] });
    expect(warning!.detail).toContain('No "Account / Payable to" heading');
  });
});

describe("the symbol's own facts", () => {
  const payload = generateQRData(GENUINE);
  const withCode = (code: ReturnType<typeof billCode>, size = 46) =>
    qrBillPdf([{ codes: [{ code, ...PAYMENT_PART_CODE, size }], printed: printedPart(GENUINE, 'DE') }]);

  it('error-correction-level when the code is not at level M', async () => {
    expect(await codesOf(withCode(spcCode(payload, { ecc: 'LOW' })))).toEqual(['error-correction-level']);
    expect(await codesOf(withCode(spcCode(payload, { ecc: 'QUARTILE' })))).toEqual(['error-correction-level']);
    const [warning] = await warningsOf(withCode(spcCode(payload, { ecc: 'LOW' })));
    expect(warning!.detail).toBe("The QR code's error correction level is L; SIX IG QR-bill 2.3 requires M (15%).");
  });

  it('no-swiss-cross when the middle of the code holds modules instead of the cross', async () => {
    expect(await codesOf(withCode(textCode(payload, { eci: 26 })))).toEqual(['no-swiss-cross']);
    // in a code image too
    const image = qrBillPdf([
      {
        codes: [{ code: textCode(payload, { eci: 26 }), ...PAYMENT_PART_CODE, as: 'raster' }],
        printed: printedPart(GENUINE, 'DE'),
      },
    ]);
    expect(await codesOf(image)).toEqual(['no-swiss-cross']);
  });

  it('symbol-size when the code is far from 46 mm on a page with a text layer, not for a few millimetres', async () => {
    expect(await codesOf(withCode(spcCode(payload), 44))).toEqual([]);
    const [warning, ...rest] = await warningsOf(withCode(spcCode(payload), 30));
    expect(rest).toEqual([]);
    expect(warning!.code).toBe('symbol-size');
    expect(warning!.detail).toMatch(
      /^The QR code measures 30\.[0-9] mm on the page; SIX IG QR-bill 2\.3 requires 46 x 46 mm\.$/,
    );
  });
});
