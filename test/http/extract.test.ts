/**
 * POST /api/v1/documents/extract-swiss-qr-code (docs/contract/http.md, "Extract"), the answer: the fields read from
 * swissqrbill's payment part on PDFKit, its QR code drawn as vector rectangles or embedded as an image, whole pages as
 * scans, and hand-written payloads (K addresses, spaces, CRLF); the IG 2.3 warnings; the OpenAPI document's schemas.
 * References, the document's forms and problems: extract-request.test.ts; which code of the last page:
 * extract-codes.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { swissQrBillPdf } from '../support/qr/pdfkit-bill.ts';
import { PAYMENT_PART_CODE, billCode, qrBillPdf, spcCode } from '../support/qr/qr-bills.ts';
import {
  EXTRACT,
  NON_BILL,
  QRR_BILL,
  QRR_DATA,
  S,
  SCOR_BILL,
  at,
  extractClient,
  payload,
} from '../support/http/extract.ts';

const t = extractClient();
const { extract, extracted, warningsOf } = t;

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
