/**
 * POST /api/v1/documents/extract-swiss-qr-code (docs/contract/http.md, "Extract") with bills made in the test:
 * swissqrbill's payment part on PDFKit, its QR code drawn as vector rectangles or embedded as an image, whole pages as
 * scans, and hand-written payloads for what generators refuse to make (K addresses, spaces, CRLF, broken bills).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { encryptedPdf } from '../support/pdf/encrypted-pdf.ts';
import { simplePdf, toBase64 } from '../support/pdf/pdf-builder.ts';
import { postJson, testApp, type TestApp, problem } from '../support/http/app.ts';
import { swissQrBillPdf } from '../support/qr/pdfkit-bill.ts';
import {
  PAYMENT_PART_CODE,
  SAMPLE_BILL,
  billCode,
  qrBillPdf,
  spcCode,
  textCode,
  type BillData,
  type Code,
} from '../support/qr/qr-bills.ts';
import { printedPart } from '../support/qr/printed-part.ts';
import { TWO_BILL_PAGES, UPPER_READ_FIRST } from '../support/qr/reading-order-pages.ts';

const EXTRACT = '/api/v1/documents/extract-swiss-qr-code';
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
  const body = (await res.json()) as { references: unknown; qrCodeData: Record<string, unknown>; warnings: unknown[] };
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

// ---- bills ------------------------------------------------------------------------------------------------------

const KRANKENKASSE = {
  name: 'Muster Krankenkasse',
  address: 'Musterstrasse',
  buildingNumber: '12',
  zip: '8000',
  city: 'Zürich',
  country: 'CH',
};
const PIA = SAMPLE_BILL.debtor!;

/** QR-IBAN and QR reference, CHF, amount and debtor; IBAN and reference written with spaces, as people do. */
const QRR_BILL = SAMPLE_BILL;
/** IBAN and creditor reference, EUR, no amount, no debtor. */
const SCOR_BILL: BillData = {
  currency: 'EUR',
  creditor: { account: 'CH9300762011623852957', ...KRANKENKASSE },
  reference: 'RF18 5390 0754 7034',
};
/** No reference; bill information and two alternative procedures (34 lines). */
const NON_BILL: BillData = {
  currency: 'CHF',
  amount: 50,
  creditor: { account: 'CH9300762011623852957', ...KRANKENKASSE },
  debtor: PIA,
  message: 'Spende',
  additionalInformation: '//S1/10/1234/11/201021/30/102673386',
  av1: 'eBill/B/simon.muster@example.com',
  av2: 'XY;XYService;54321',
};

const S = (
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

const QRR_DATA = {
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

/** Lines 1-31 of a payload, joined by `separator`; `lines` overrides by IG line number (1-based). */
function payload(lines: Record<number, string>, separator = '\n'): string {
  const base = [
    'SPC',
    '0200',
    '1',
    'CH4431999123000889012',
    'S',
    'Robert Schneider AG',
    'Rue du Lac',
    '1268',
    '2501',
    'Biel',
    'CH',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    '10.00',
    'CHF',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    'QRR',
    '210000000003139471430009017',
    '',
    'EPD',
  ];
  for (const [n, value] of Object.entries(lines)) base[Number(n) - 1] = value;
  return base.join(separator);
}

const URL_CODE = textCode('https://example.com/invoices/2026-001?pay=online');
const at = (code: Code, x: number, y: number, size = 46) => ({ code, x, y, size });

// ---- tests -------------------------------------------------------------------------------------------------------

describe('POST /api/v1/documents/extract-swiss-qr-code', () => {
  it('reads a swissqrbill payment part on a PDFKit invoice, field by field', async () => {
    const data = await extracted(await swissQrBillPdf(QRR_BILL), ['INV-2026-0042']);
    expect(data).toStrictEqual(QRR_DATA);
    expect(typeof data.amount).toBe('number');
  });

  it.each([
    ['vector rectangles in the payment part', [{ ...PAYMENT_PART_CODE, code: billCode(QRR_BILL) }], undefined],
    [
      'an image at 300 dpi, 46 mm at the bottom right',
      [{ ...at(billCode(QRR_BILL), 159, 246), as: 'raster' as const }],
      undefined,
    ],
    [
      'an image of 1 pixel a module, scaled up to 46 mm',
      [{ ...at(billCode(QRR_BILL), 159, 246), as: 'raster' as const, dpi: (billCode(QRR_BILL).modules * 25.4) / 46 }],
      undefined,
    ],
    ['a page scanned at 150 dpi', [{ ...PAYMENT_PART_CODE, code: billCode(QRR_BILL) }], 150],
    ['a page scanned at 300 dpi', [{ ...PAYMENT_PART_CODE, code: billCode(QRR_BILL) }], 300],
  ])('reads the code as %s', async (_, codes, raster) => {
    expect(await extracted(qrBillPdf([{ codes, raster }]))).toStrictEqual(QRR_DATA);
  });

  it('reads a bill without amount and debtor (EUR, creditor reference)', async () => {
    const data = await extracted(await swissQrBillPdf(SCOR_BILL));
    expect(data).toStrictEqual({
      qrType: 'SPC',
      version: '0200',
      codingType: '1',
      iban: 'CH9300762011623852957',
      creditor: S('Muster Krankenkasse', 'Musterstrasse', '12', '8000', 'Zürich', 'CH'),
      ultimateCreditor: null,
      amount: null,
      currency: 'EUR',
      ultimateDebtor: null,
      referenceType: 'SCOR',
      reference: 'RF18539007547034',
      unstructuredMessage: null,
      billInformation: null,
      alternativeProcedureParameters: null,
    });
  });

  it('reads bill information and joins the alternative procedures with a line feed', async () => {
    const data = await extracted(qrBillPdf([{ codes: [{ ...PAYMENT_PART_CODE, code: billCode(NON_BILL) }] }]));
    expect(data).toMatchObject({
      amount: 50,
      referenceType: 'NON',
      reference: null,
      unstructuredMessage: 'Spende',
      billInformation: '//S1/10/1234/11/201021/30/102673386',
      alternativeProcedureParameters: 'eBill/B/simon.muster@example.com\nXY;XYService;54321',
    });
  });

  it('reads K addresses, an ultimate creditor, CRLF separators, and trims and removes spaces as the spec says', async () => {
    const text = payload(
      {
        4: ' CH44 3199 9123 0008 8901 2 ',
        5: 'K',
        6: ' Robert Schneider AG ',
        7: 'Rue du Lac 1268',
        8: '2501 Biel',
        9: '',
        10: '',
        11: 'CH',
        12: 'S',
        13: 'Ultimate AG',
        14: 'Bahnhofstrasse',
        15: '1',
        16: '8001',
        17: 'Zürich',
        18: 'CH',
        19: '0.00',
        21: 'K',
        22: 'Pia Rutschmann',
        23: 'Marktgasse 28',
        24: '9400 Rorschach',
        25: '',
        26: '',
        27: 'CH',
        29: '21 00000 00003 13947 14300 09017',
        30: 'DO NOT USE FOR PAYMENT',
      },
      '\r\n',
    );
    const data = await extracted(qrBillPdf([{ codes: [{ ...PAYMENT_PART_CODE, code: spcCode(text) }] }]));
    expect(data).toStrictEqual({
      ...QRR_DATA,
      creditor: {
        addressType: 'K',
        name: 'Robert Schneider AG',
        street: null,
        buildingNumber: null,
        addressLine1: 'Rue du Lac 1268',
        addressLine2: '2501 Biel',
        postalCode: null,
        city: null,
        country: 'CH',
      },
      ultimateCreditor: S('Ultimate AG', 'Bahnhofstrasse', '1', '8001', 'Zürich', 'CH'),
      amount: 0,
      ultimateDebtor: {
        addressType: 'K',
        name: 'Pia Rutschmann',
        street: null,
        buildingNumber: null,
        addressLine1: 'Marktgasse 28',
        addressLine2: '9400 Rorschach',
        postalCode: null,
        city: null,
        country: 'CH',
      },
      unstructuredMessage: 'DO NOT USE FOR PAYMENT',
    });
  });

  describe('IG 2.3 warnings', () => {
    it('are empty for an IG 2.3 bill', async () => {
      expect(await warningsOf(await swissQrBillPdf(QRR_BILL))).toEqual([]);
    });

    it('name K addresses, characters new in IG 2.3 and a version other than 0200, and the bill is still answered', async () => {
      const text = payload({
        2: '0201',
        5: 'K',
        7: 'Rue du Lac 1268',
        8: '2501 Biel',
        9: '',
        10: '',
        30: 'Facture 12 € – merci',
      });
      const pdf = qrBillPdf([{ codes: [{ ...PAYMENT_PART_CODE, code: spcCode(text) }] }]);
      expect(await extracted(pdf)).toMatchObject({
        version: '0201',
        creditor: { addressType: 'K', addressLine1: 'Rue du Lac 1268' },
      });
      expect(await warningsOf(pdf)).toEqual([
        { code: 'combined-address', fields: ['creditor'], detail: expect.stringContaining('22 November 2025') },
        {
          code: 'extended-character-set',
          fields: ['unstructuredMessage'],
          detail: expect.stringContaining('U+20AC €'),
        },
        { code: 'unsupported-character', fields: ['unstructuredMessage'], detail: expect.stringContaining('U+2013 –') },
        { code: 'version-02xx', fields: ['version'], detail: expect.any(String) },
        // no payment part printed beside the code (the page has text, but no headings)
        { code: 'printed-not-checked', fields: [], detail: expect.any(String) },
      ]);
    });

    it('come after qrCodeData in the JSON text', async () => {
      const pdf = qrBillPdf([{ codes: [{ ...PAYMENT_PART_CODE, code: spcCode(payload({ 2: '0201' })) }] }]);
      const text = await (await extract(pdf)).text();
      expect(text).toMatch(
        /^\{"references":\[\],"qrCodeData":\{.*\},"warnings":\[\{"code":"version-02xx","fields":\["version"\],"detail":"[^"]+"\},\{"code":"printed-not-checked",.*\}\]\}$/,
      );
    });
  });

  describe('references', () => {
    const pdf = qrBillPdf([
      { codes: [{ ...PAYMENT_PART_CODE, code: billCode(QRR_BILL) }], printed: printedPart(QRR_BILL, 'DE') },
    ]);

    it('come back exactly as written: big integers, number spellings, escapes, key order, whitespace', async () => {
      const references =
        '[ 12345678901234567890, 1.0, 1e2, -0, "Rechnung \\u00e9 \\"42\\"", {"z": 1, "a": [true, null, {}]}, [] ]';
      const res = await postJson(t.app, EXTRACT, `{"references": ${references}, "base64Pdf": "${toBase64(pdf)}"}`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text.startsWith(`{"references":${references},"qrCodeData":{`)).toBe(true);
      expect(JSON.parse(text)).toStrictEqual({
        references: JSON.parse(references),
        qrCodeData: QRR_DATA,
        warnings: [],
      });
    });

    it('may be empty', async () => {
      expect(await extracted(pdf, [])).toStrictEqual(QRR_DATA);
    });

    it.each(['References', 'REFERENCES', 'rEfErEnCeS'])('bind as %s, with the PDF as Base64PDF', async (name) => {
      const res = await postJson(t.app, EXTRACT, { Base64PDF: toBase64(pdf), [name]: ['A-1', 2] });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { references: unknown }).references).toStrictEqual(['A-1', 2]);
    });

    it('take the last of several spellings', async () => {
      const res = await postJson(
        t.app,
        EXTRACT,
        `{"references": ["first"], "base64Pdf": "${toBase64(pdf)}", "References": ["last"]}`,
      );
      expect(((await res.json()) as { references: unknown }).references).toStrictEqual(['last']);
    });

    it.each([
      ['missing', {}, /required/],
      ['null', { references: null }, /required/],
      ['a string', { references: 'INV-1' }, /array/],
      ['a number', { references: 42 }, /array/],
      ['an object', { references: { 0: 'INV-1' } }, /array/],
      ['a boolean', { references: true }, /array/],
    ])('are a validation problem naming the field when %s', async (_, members, message) => {
      const p = await problem(
        await postJson(t.app, EXTRACT, { ...members, base64Pdf: toBase64(pdf) }),
        400,
        'validation',
      );
      expect(p.errors).toEqual({ references: [expect.stringMatching(message)] });
    });

    it('are named together with a missing document in one validation problem', async () => {
      const p = await problem(await postJson(t.app, EXTRACT, {}), 400, 'validation');
      expect(p.errors).toEqual({
        references: [expect.stringMatching(/required/)],
        base64Pdf: [expect.stringMatching(/required/)],
      });
    });
  });

  describe('the document', () => {
    it.each([
      ['a number', 12345],
      ['a boolean', true],
      ['an array', ['JVBERi0=']],
      ['empty', ''],
      ['unpadded', 'JVBERi0xLjc'],
      ['base64url', 'JVBERi0xLjc_'],
      ['with junk inside', 'JVBE!@#$Ri0x'],
    ])('answers invalid-base64 for %s', async (_, value) => {
      await problem(await postJson(t.app, EXTRACT, { references: [], base64Pdf: value }), 400, 'invalid-base64');
    });

    it.each([
      ['missing', { references: [] }],
      ['null', { references: [], base64Pdf: null }],
    ])('is a validation problem naming base64Pdf when %s', async (_, body) => {
      const p = await problem(await postJson(t.app, EXTRACT, body), 400, 'validation');
      expect(p.errors).toEqual({ base64Pdf: [expect.any(String)] });
    });

    it('accepts wrapped Base64 and a data URL prefix', async () => {
      const b64 = toBase64(qrBillPdf([{ codes: [{ ...PAYMENT_PART_CODE, code: billCode(SCOR_BILL) }] }]));
      expect(
        (await postJson(t.app, EXTRACT, { references: [], base64Pdf: b64.replace(/.{76}/g, '$&\r\n') })).status,
      ).toBe(200);
      expect(
        (await postJson(t.app, EXTRACT, { references: [], base64Pdf: `data:application/pdf;base64,${b64}` })).status,
      ).toBe(200);
    });

    it.each([
      ['not a PDF', new TextEncoder().encode('Hello, this is plain text and no PDF at all.\n')],
      ['a PNG', Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])],
      ['a version that does not exist', new TextEncoder().encode('%PDF-9.9\n')],
      ['a header and nothing else', new TextEncoder().encode('%PDF-1.7\n')],
    ])('answers invalid-pdf for %s', async (_, bytes) => {
      await problem(await extract(bytes), 400, 'invalid-pdf');
    });

    it('answers encrypted-pdf for a file that needs a user password', async () => {
      await problem(await extract(encryptedPdf({ userPassword: 'secret' })), 400, 'encrypted-pdf');
    });

    it('answers 415 for a body that is not JSON', async () => {
      const res = await t.app.request(EXTRACT, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: '{}',
      });
      await problem(res, 415, 'unsupported-media-type');
    });
  });

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

  it('is described in the OpenAPI document', async () => {
    const doc = (await (await t.app.request('/openapi.json')).json()) as {
      paths: Record<
        string,
        Record<
          string,
          { operationId: string; responses: Record<string, { content: Record<string, { schema: { $ref: string } }> }> }
        >
      >;
      components: { schemas: Record<string, { properties: Record<string, unknown>; required?: string[] }> };
    };
    const operation = doc.paths[EXTRACT]!.post!;
    expect(operation.operationId).toBe('ExtractSwissQrCode');
    expect(Object.keys(operation.responses)).toEqual(
      expect.arrayContaining(['200', '400', '404', '413', '415', '500']),
    );
    expect(operation.responses['200']!.content['application/json']!.schema.$ref).toBe(
      '#/components/schemas/ExtractSwissQrCodeResponse',
    );
    expect(operation.responses['404']!.content['application/problem+json']!.schema.$ref).toBe(
      '#/components/schemas/ProblemDetails',
    );
    const { SwissQrCodeDataDto, AddressDataDto, ExtractSwissQrCodeResponse } = doc.components.schemas;
    expect(Object.keys(SwissQrCodeDataDto!.properties)).toEqual(Object.keys(QRR_DATA));
    expect(SwissQrCodeDataDto!.properties.creditor).toEqual({ $ref: '#/components/schemas/AddressDataDto' });
    expect(Object.keys(AddressDataDto!.properties)).toEqual(Object.keys(QRR_DATA.creditor));
    expect(ExtractSwissQrCodeResponse!.properties.qrCodeData).toEqual({
      $ref: '#/components/schemas/SwissQrCodeDataDto',
    });
    expect(Object.keys(ExtractSwissQrCodeResponse!.properties)).toEqual(['references', 'qrCodeData', 'warnings']);
    expect(ExtractSwissQrCodeResponse!.required).toEqual(['references', 'qrCodeData', 'warnings']);
    expect(ExtractSwissQrCodeResponse!.properties.warnings).toMatchObject({
      type: 'array',
      items: { $ref: '#/components/schemas/QrBillWarning' },
    });
    const { QrBillWarning } = doc.components.schemas;
    expect(QrBillWarning!.required).toEqual(['code', 'fields', 'detail']);
    expect(JSON.stringify(QrBillWarning!.properties.code)).toMatch(
      /combined-address.*extended-character-set.*version-02xx/,
    );
    // null must validate against the schema of an absent address; oneOf, the form NSwag reads as a nullable reference
    for (const name of ['ultimateCreditor', 'ultimateDebtor'])
      expect(SwissQrCodeDataDto!.properties[name]).toEqual({
        oneOf: [{ $ref: '#/components/schemas/AddressDataDto' }, { type: 'null' }],
      });
  });
});
