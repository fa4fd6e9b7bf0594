/**
 * Pages with two valid bills where the upper code is too small to be read at the scan's first step (the page at
 * 100 dpi, or a scan's image reduced to 100 dpi) and is read only when the scan looks closer, while the lower one, in
 * the payment part, is read at once. "The first valid bill in reading order wins" must hold whichever step reads which
 * code. Both bills take each place in turn, drawn as vector rectangles and in page scans. Web APIs only: the Node
 * tests and the workerd tests build the same documents.
 */
import { BILLS, expectedBill } from './degraded-bills.ts';
import { PAYMENT_PART_CODE, billCode, qrBillPdf, type BillData } from './qr-bills.ts';
import type { QrBill } from '../../../src/qr/bill.ts';

export interface TwoBillPage {
  name: string;
  pdf: Uint8Array;
  /** The upper bill: the answer. */
  bill: QrBill;
  /** How the upper code is drawn, for the tests that check it is not read at the first step. */
  upper: { size: number; scanDpi?: number };
}

/** The upper code: 26 mm at the top right (1.8 pixels a module at 100 dpi, about 3.5 at 200). */
const SMALL = { x: 140, y: 20, size: 26 };

function page(upper: BillData, lower: BillData, scanDpi?: number, size = SMALL.size): Uint8Array {
  return qrBillPdf([
    {
      raster: scanDpi,
      codes: [
        { code: billCode(upper), ...SMALL, size },
        { code: billCode(lower), ...PAYMENT_PART_CODE },
      ],
    },
  ]);
}

const [CHF, EUR] = [BILLS[0]!, BILLS[1]!];

export const TWO_BILL_PAGES: TwoBillPage[] = [
  {
    name: 'vector: a small EUR bill above the CHF bill of the payment part',
    pdf: page(EUR, CHF),
    bill: expectedBill(EUR),
    upper: { size: SMALL.size },
  },
  {
    name: 'vector: a small CHF bill above the EUR bill of the payment part',
    pdf: page(CHF, EUR),
    bill: expectedBill(CHF),
    upper: { size: SMALL.size },
  },
  {
    name: 'scan at 200 dpi: a small EUR bill above the CHF bill',
    pdf: page(EUR, CHF, 200),
    bill: expectedBill(EUR),
    upper: { size: SMALL.size, scanDpi: 200 },
  },
  {
    name: 'scan at 200 dpi: a small CHF bill above the EUR bill',
    pdf: page(CHF, EUR, 200),
    bill: expectedBill(CHF),
    upper: { size: SMALL.size, scanDpi: 200 },
  },
  {
    name: 'scan at 150 dpi: a small EUR bill above the CHF bill',
    pdf: page(EUR, CHF, 150, 24),
    bill: expectedBill(EUR),
    upper: { size: 24, scanDpi: 150 },
  },
];

/** The other way round: the upper code read at once, the lower one small. The upper one wins as well. */
export const UPPER_READ_FIRST: TwoBillPage[] = [
  {
    name: 'vector: a 46 mm EUR bill above a small CHF bill',
    pdf: qrBillPdf([
      {
        codes: [
          { code: billCode(EUR), x: 140, y: 20 },
          { code: billCode(CHF), ...PAYMENT_PART_CODE, size: SMALL.size },
        ],
      },
    ]),
    bill: expectedBill(EUR),
    upper: { size: 46 },
  },
  {
    name: 'scan at 200 dpi: a 46 mm EUR bill above a small CHF bill',
    pdf: qrBillPdf([
      {
        raster: 200,
        codes: [
          { code: billCode(EUR), x: 140, y: 20 },
          { code: billCode(CHF), ...PAYMENT_PART_CODE, size: SMALL.size },
        ],
      },
    ]),
    bill: expectedBill(EUR),
    upper: { size: 46, scanDpi: 200 },
  },
];
