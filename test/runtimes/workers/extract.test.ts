/**
 * The extraction route inside workerd, checked against what the bills say rather than against Node's recorded
 * answers (parity.test.ts does that): the bills are drawn in code (qr-bills.ts), with PDFium and zxing-wasm as the
 * Workers build loads them (precompiled modules; PDFium copies each document into its heap).
 */
import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { simplePdf, toBase64 } from '../../support/pdf/pdf-builder.ts';
import { printedPart } from '../../support/qr/printed-part.ts';
import { PAYMENT_PART_CODE, SAMPLE_BILL, billCode, qrBillPdf, textCode } from '../../support/qr/qr-bills.ts';
import { TWO_BILL_PAGES, UPPER_READ_FIRST } from '../../support/qr/reading-order-pages.ts';
import { BILLS, expectedBill, fax, phonePhoto } from '../../support/qr/degraded-bills.ts';

const extract = (body: string | object) =>
  SELF.fetch('http://localhost/api/v1/documents/extract-swiss-qr-code', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const code = billCode(SAMPLE_BILL);
const SAMPLE_DATA = {
  iban: 'CH4431999123000889012',
  creditor: {
    addressType: 'S',
    name: 'Robert Schneider AG',
    street: 'Rue du Lac',
    buildingNumber: '1268',
    addressLine1: null,
    addressLine2: null,
    postalCode: '2501',
    city: 'Biel',
    country: 'CH',
  },
  ultimateCreditor: null,
  amount: 1949.75,
  currency: 'CHF',
  ultimateDebtor: {
    addressType: 'S',
    name: 'Pia-Maria Rutschmann-Schnyder',
    street: 'Grosse Marktgasse',
    buildingNumber: '28',
    addressLine1: null,
    addressLine2: null,
    postalCode: '9400',
    city: 'Rorschach',
    country: 'CH',
  },
  referenceType: 'QRR',
  reference: '210000000003139471430009017',
  unstructuredMessage: 'Auftrag vom 15.06.2020',
};

describe('POST /api/v1/documents/extract-swiss-qr-code on workerd', () => {
  // With its payment part printed beside it, the code is compared with it (no warning); elsewhere or in a scan, it is
  // not (printed-not-checked).
  it.each([
    [
      'vector rectangles',
      qrBillPdf([{ codes: [{ code, ...PAYMENT_PART_CODE }], printed: printedPart(SAMPLE_BILL, 'DE') }]),
      [],
    ],
    ['an embedded image', qrBillPdf([{ codes: [{ code, x: 159, y: 246, as: 'raster' }] }]), ['printed-not-checked']],
    [
      'a page scanned at 150 dpi',
      qrBillPdf([{ raster: 150, codes: [{ code, ...PAYMENT_PART_CODE }] }]),
      ['printed-not-checked'],
    ],
  ])('reads the bill drawn as %s', async (_, pdf, warnings) => {
    const response = await extract({ references: ['INV-2026-0042', { n: 1 }], base64Pdf: toBase64(pdf) });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const body = (await response.json()) as {
      references: unknown;
      qrCodeData: unknown;
      warnings: { code: string }[];
    };
    expect(body.references).toStrictEqual(['INV-2026-0042', { n: 1 }]);
    expect(body.qrCodeData).toMatchObject(SAMPLE_DATA);
    expect(body.warnings.map((w) => w.code)).toStrictEqual(warnings);
  });

  it.each([...TWO_BILL_PAGES, ...UPPER_READ_FIRST])(
    'takes the upper of two bills whichever step reads it: $name',
    async ({ pdf, bill }) => {
      const response = await extract({ references: [], base64Pdf: toBase64(pdf) });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { qrCodeData: unknown }).qrCodeData).toStrictEqual(bill);
    },
  );

  // The image path on Workers: a photo's JPEG decoded in the 96 MB engine heap and read from there; a G4 fax.
  it.each([
    ['an 8-megapixel phone photo', () => phonePhoto({ data: BILLS[1], megapixels: 8, seed: 3 }), 1],
    ['a fax (CCITT G4, 100 dpi)', () => fax({ data: BILLS[2], dpi: 100, seed: 4 }), 2],
  ])('reads %s', async (_, make, bill) => {
    const response = await extract({ references: [], base64Pdf: toBase64(make()) });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { qrCodeData: unknown }).qrCodeData).toStrictEqual(expectedBill(BILLS[bill]!));
  });

  it('echoes the references as written', async () => {
    const references = '[12345678901234567890, 1.0, {"z": 1, "a": []}]';
    const pdf = qrBillPdf([{ codes: [{ code, ...PAYMENT_PART_CODE }] }]);
    const text = await (await extract(`{"references": ${references}, "base64Pdf": "${toBase64(pdf)}"}`)).text();
    expect(text.startsWith(`{"references":${references},"qrCodeData":{"qrType":"SPC"`)).toBe(true);
  });

  it('answers qr-code-not-found with the codes it rejected', async () => {
    const none = await extract({ references: [], base64Pdf: toBase64(simplePdf()) });
    expect(none.status).toBe(404);
    expect(await none.json()).toMatchObject({
      type: 'https://errors.example/problems/qr-code-not-found',
      rejected: [],
    });
    const url = await extract({
      references: [],
      base64Pdf: toBase64(
        qrBillPdf([{ codes: [{ code: textCode('https://example.com/pay'), ...PAYMENT_PART_CODE }] }]),
      ),
    });
    expect(url.status).toBe(404);
    expect(((await url.json()) as { rejected: unknown }).rejected).toStrictEqual([{ index: 0, reason: 'not-spc' }]);
  });
});
