/**
 * POST /api/v1/documents/extract-swiss-qr-code (docs/contract/http.md, "Extract"), the request: references echoed as
 * written and bound under any spelling, the document's forms (Base64, wrapped, data URL) and the problems for what is
 * missing, malformed, no PDF or encrypted.
 */
import { describe, expect, it } from 'vitest';
import { encryptedPdf } from '../support/pdf/encrypted-pdf.ts';
import { toBase64 } from '../support/pdf/pdf-builder.ts';
import { postJson, problem } from '../support/http/app.ts';
import { PAYMENT_PART_CODE, billCode, qrBillPdf } from '../support/qr/qr-bills.ts';
import { printedPart } from '../support/qr/printed-part.ts';
import { EXTRACT, QRR_BILL, QRR_DATA, SCOR_BILL, extractClient } from '../support/http/extract.ts';

const t = extractClient();
const { extract, extracted } = t;

describe('POST /api/v1/documents/extract-swiss-qr-code', () => {
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
});
