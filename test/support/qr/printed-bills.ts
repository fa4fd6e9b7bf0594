/**
 * Bills whose payment part is printed as text beside the code (printed-part.ts), in the four languages: the code
 * matching, swapped for one paying another account, with only its amount changed, with the amount left blank; and a
 * scan. The runtimes' parity tests send them to every runtime. Web APIs only.
 */
import { printedPart, type Language } from './printed-part.ts';
import { type BillData, PAYMENT_PART_CODE, SAMPLE_BILL, billCode, qrBillPdf } from './qr-bills.ts';

const LANGUAGES: Language[] = ['DE', 'FR', 'IT', 'EN'];
const SWAPPED: BillData = {
  ...SAMPLE_BILL,
  creditor: { ...SAMPLE_BILL.creditor, account: 'CH21 3080 8001 2345 6782 7' },
};

const bill = (printed: BillData, language: Language, code: BillData = printed) =>
  qrBillPdf([{ codes: [{ code: billCode(code), ...PAYMENT_PART_CODE }], printed: printedPart(printed, language) }]);

export const PRINTED_BILLS: { name: string; pdf: Uint8Array }[] = [
  ...LANGUAGES.flatMap((language) => [
    { name: `printed ${language}: matching code`, pdf: bill(SAMPLE_BILL, language) },
    { name: `printed ${language}: code of another account`, pdf: bill(SAMPLE_BILL, language, SWAPPED) },
    {
      name: `printed ${language}: amount changed in the code`,
      pdf: bill(SAMPLE_BILL, language, { ...SAMPLE_BILL, amount: 9949.75 }),
    },
    { name: `printed ${language}: blank amount`, pdf: bill({ ...SAMPLE_BILL, amount: undefined }, language) },
  ]),
  {
    name: 'printed: a scanned page',
    pdf: qrBillPdf([{ codes: [{ code: billCode(SAMPLE_BILL), ...PAYMENT_PART_CODE }], raster: 150 }]),
  },
];
