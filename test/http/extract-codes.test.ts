/**
 * POST /api/v1/documents/extract-swiss-qr-code (docs/contract/http.md, "Extract"), which code of the last page is the
 * bill: none (404 qr-code-not-found, every code listed in reading order with why it is no bill) or the first valid
 * bill in reading order among URL codes, broken bills and other bills, drawn or embedded as images.
 */
import { describe, expect, it } from 'vitest';
import { simplePdf } from '../support/pdf/pdf-builder.ts';
import { problem } from '../support/http/app.ts';
import { PAYMENT_PART_CODE, billCode, qrBillPdf, spcCode, type BillData } from '../support/qr/qr-bills.ts';
import { TWO_BILL_PAGES, UPPER_READ_FIRST } from '../support/qr/reading-order-pages.ts';
import { QRR_BILL, QRR_DATA, SCOR_BILL, URL_CODE, at, extractClient, payload } from '../support/http/extract.ts';

const { extract, extracted } = extractClient();

describe('POST /api/v1/documents/extract-swiss-qr-code', () => {
  describe('no bill', () => {
    it('answers qr-code-not-found with an empty rejected list for a PDF without QR codes', async () => {
      const p = await problem(await extract(simplePdf({ pages: 2 })), 404, 'qr-code-not-found');
      expect(p.rejected).toEqual([]);
      expect(p.detail).toBe('The last page holds no QR code.');
    });

    it('searches only the last page: a bill on page 1 of 2 is not found', async () => {
      const pdf = qrBillPdf([{ codes: [{ ...PAYMENT_PART_CODE, code: billCode(QRR_BILL) }] }, { title: 'AGB' }]);
      expect((await problem(await extract(pdf), 404, 'qr-code-not-found')).rejected).toEqual([]);
      // …while the same bill on the last page is.
      expect(
        await extracted(
          qrBillPdf([{ title: 'Deckblatt' }, { codes: [{ ...PAYMENT_PART_CODE, code: billCode(QRR_BILL) }] }]),
        ),
      ).toStrictEqual(QRR_DATA);
    });

    it('lists every QR code of the last page in reading order with why it is no bill', async () => {
      const pdf = qrBillPdf([
        {
          codes: [
            at(spcCode(payload({ 20: 'USD' })), 150, 15, 40), // top right (the invoice text is on the left)
            at(URL_CODE, 120, 110, 30), // middle
            at(spcCode(payload({ 29: '210000000003139471430009018' })), 67, 209), // payment part
            at(spcCode(payload({ 28: 'SCOR', 29: 'RF18539007547034' })), 150, 209, 40), // payment part, right
          ],
        },
      ]);
      const p = await problem(await extract(pdf), 404, 'qr-code-not-found');
      expect(p.rejected).toStrictEqual([
        { index: 0, reason: 'currency' },
        { index: 1, reason: 'not-spc' },
        { index: 2, reason: 'qrr-check-digit' },
        { index: 3, reason: 'reference-kind' },
      ]);
      expect(p.detail).toBe('The last page holds 4 QR code(s), none of them a valid Swiss QR-bill.');
    });
  });

  describe('several codes on the last page', () => {
    const other: BillData = { ...SCOR_BILL, amount: 10 };

    it('skips a URL code above the bill', async () => {
      const pdf = qrBillPdf([
        { codes: [at(URL_CODE, 150, 20, 30), { ...PAYMENT_PART_CODE, code: billCode(QRR_BILL) }] },
      ]);
      expect(await extracted(pdf)).toStrictEqual(QRR_DATA);
    });

    it('skips a URL code left of the bill in the payment part', async () => {
      const pdf = qrBillPdf([
        { codes: [at(URL_CODE, 10, 215, 30), { ...PAYMENT_PART_CODE, code: billCode(QRR_BILL) }] },
      ]);
      expect(await extracted(pdf)).toStrictEqual(QRR_DATA);
    });

    it('skips an invalid bill before a valid one', async () => {
      const pdf = qrBillPdf([
        {
          codes: [
            at(spcCode(payload({ 29: '210000000003139471430009018' })), 10, 200, 40),
            at(billCode(QRR_BILL), 100, 240, 40),
          ],
        },
      ]);
      expect(await extracted(pdf)).toStrictEqual(QRR_DATA);
    });

    it('takes the upper of two bills in the payment part', async () => {
      const pdf = qrBillPdf([{ codes: [at(billCode(other), 100, 245, 40), at(billCode(QRR_BILL), 20, 198, 40)] }]);
      expect(await extracted(pdf)).toStrictEqual(QRR_DATA);
    });

    it('takes the left of two bills side by side', async () => {
      const pdf = qrBillPdf([{ codes: [at(billCode(other), 110, 210, 40), at(billCode(QRR_BILL), 20, 212, 40)] }]);
      expect(await extracted(pdf)).toStrictEqual(QRR_DATA);
    });

    it('takes a bill higher up the page over the one in the payment part (reading order)', async () => {
      const pdf = qrBillPdf([
        { codes: [at(billCode(other), 140, 20, 46), { ...PAYMENT_PART_CODE, code: billCode(QRR_BILL) }] },
      ]);
      expect(await extracted(pdf)).toMatchObject({ iban: 'CH9300762011623852957', amount: 10, currency: 'EUR' });
      // Alone, the payment part's bill is found.
      expect(
        await extracted(qrBillPdf([{ codes: [{ ...PAYMENT_PART_CODE, code: billCode(QRR_BILL) }] }])),
      ).toStrictEqual(QRR_DATA);
    });

    it.each([...TWO_BILL_PAGES, ...UPPER_READ_FIRST])(
      'takes the upper bill whichever step reads it ($name)',
      async ({ pdf, bill }) => {
        expect(await extracted(pdf)).toStrictEqual(bill);
      },
    );

    it('takes the left of two bills side by side when only the right one is an embedded image', async () => {
      const pdf = qrBillPdf([
        {
          codes: [at(billCode(QRR_BILL), 10, 210, 40), { ...at(billCode(other), 100, 210, 40), as: 'raster' as const }],
        },
      ]);
      expect(await extracted(pdf)).toStrictEqual(QRR_DATA);
    });
  });
});
