/**
 * What the extraction tests share (test/http/extract*.test.ts): the app and the request helpers that check the
 * answer's envelope, the bills they send, the `qrCodeData` expected for the IG's example bill, and hand-written payloads
 * for what generators refuse to make.
 */
import { beforeAll, expect } from 'vitest';
import { toBase64 } from '../pdf/pdf-builder.ts';
import { SAMPLE_BILL, textCode, type BillData, type Code } from '../qr/qr-bills.ts';
import { PLAIN, payload as linesOf } from '../qr/qr-payload.ts';
import { postJson, testApp, type TestApp } from './app.ts';

export const EXTRACT = '/api/v1/documents/extract-swiss-qr-code';

/**
 * A test app made in beforeAll of the calling file, with `extract` (POST a PDF with references), `extracted` (the
 * `qrCodeData` of a 200 answer, its envelope checked) and `warningsOf` (the answer's warnings for a PDF that holds a
 * bill).
 */
export function extractClient() {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });

  const extract = (pdf: Uint8Array, references: unknown[] = []) =>
    postJson(t.app, EXTRACT, { references, base64Pdf: toBase64(pdf) });

  async function extracted(pdf: Uint8Array, references: unknown[] = []) {
    const res = await extract(pdf, references);
    expect(res.status, 'status').toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = (await res.json()) as {
      references: unknown;
      qrCodeData: Record<string, unknown>;
      warnings: unknown[];
    };
    expect(Object.keys(body)).toEqual(['references', 'qrCodeData', 'warnings']);
    expect(body.references).toStrictEqual(references);
    return body.qrCodeData;
  }

  /** The answer's warnings for a PDF that holds a bill. */
  async function warningsOf(pdf: Uint8Array) {
    const res = await extract(pdf);
    expect(res.status, 'status').toBe(200);
    return ((await res.json()) as { warnings: { code: string; fields: string[]; detail: string }[] }).warnings;
  }

  return {
    get app(): TestApp['app'] {
      return t.app;
    },
    extract,
    extracted,
    warningsOf,
  };
}

// ---- bills ------------------------------------------------------------------------------------------------------

export const KRANKENKASSE = {
  name: 'Muster Krankenkasse',
  address: 'Musterstrasse',
  buildingNumber: '12',
  zip: '8000',
  city: 'Zürich',
  country: 'CH',
};
export const PIA = SAMPLE_BILL.debtor!;

/** QR-IBAN and QR reference, CHF, amount and debtor; IBAN and reference written with spaces, as people do. */
export const QRR_BILL = SAMPLE_BILL;
/** IBAN and creditor reference, EUR, no amount, no debtor. */
export const SCOR_BILL: BillData = {
  currency: 'EUR',
  creditor: { account: 'CH9300762011623852957', ...KRANKENKASSE },
  reference: 'RF18 5390 0754 7034',
};
/** No reference; bill information and two alternative procedures (34 lines). */
export const NON_BILL: BillData = {
  currency: 'CHF',
  amount: 50,
  creditor: { account: 'CH9300762011623852957', ...KRANKENKASSE },
  debtor: PIA,
  message: 'Spende',
  additionalInformation: '//S1/10/1234/11/201021/30/102673386',
  av1: 'eBill/B/simon.muster@example.com',
  av2: 'XY;XYService;54321',
};

export const S = (
  name: string,
  street: string,
  buildingNumber: string,
  postalCode: string,
  city: string,
  country: string,
) => ({
  addressType: 'S',
  name,
  street,
  buildingNumber,
  addressLine1: null,
  addressLine2: null,
  postalCode,
  city,
  country,
});

export const QRR_DATA = {
  qrType: 'SPC',
  version: '0200',
  codingType: '1',
  iban: 'CH4431999123000889012',
  creditor: S('Robert Schneider AG', 'Rue du Lac', '1268', '2501', 'Biel', 'CH'),
  ultimateCreditor: null,
  amount: 1949.75,
  currency: 'CHF',
  ultimateDebtor: S('Pia-Maria Rutschmann-Schnyder', 'Grosse Marktgasse', '28', '9400', 'Rorschach', 'CH'),
  referenceType: 'QRR',
  reference: '210000000003139471430009017',
  unstructuredMessage: 'Auftrag vom 15.06.2020',
  billInformation: null,
  alternativeProcedureParameters: null,
};

/** Lines 1-31 of the plain bill (qr-payload.ts's PLAIN), joined by `separator`; `lines` overrides by IG line number. */
export const payload = (lines: Record<number, string>, separator = '\n'): string =>
  linesOf({ ...PLAIN, ...lines }, [], separator);

export const URL_CODE = textCode('https://example.com/invoices/2026-001?pay=online');
export const at = (code: Code, x: number, y: number, size = 46) => ({ code, x, y, size });
