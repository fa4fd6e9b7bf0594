/**
 * The PDF part of the QR-bill corpus (../shared/corpus/qr) as suites that run against any way of reaching the
 * service: the app in this process (test/qr/corpus.test.ts) or a real runtime over HTTP
 * (test/runtimes/workerd-corpus.test.ts). The generated PDFs answer as their manifest states; the external PDFs with
 * the bill of the payload reference decoders agreed on.
 */
import { describe, expect, it } from 'vitest';
import { readQrBill, type QrBill } from '../../../src/qr/bill.ts';
import { qrBillWarnings } from '../../../src/qr/warnings.ts';
import { readShared, readSharedJson } from '../corpus.ts';

export type ExtractAnswer = { status: number; contentType: string | null; body: Record<string, unknown> };
/** POSTs one PDF with its references to /api/v1/documents/extract-swiss-qr-code. */
export type ExtractRequest = (pdf: Uint8Array, references: unknown[]) => Promise<ExtractAnswer>;

interface GeneratedEntry {
  file: string;
  expectedStatus: 200 | 404;
  qrCodeData?: unknown;
}

export interface ExternalPdf {
  file: string;
  kind: 'pdf';
  expectedStatus: 200 | 404;
  decodedPayload: string | null;
}

/**
 * What the service answers where the manifest leaves the 404's `rejected` open: each QR code on the last page and why
 * it is no bill (an empty list: the page holds no QR code).
 */
const REJECTED: Record<string, { index: number; reason: string }[]> = {
  'generated/06_bill_on_page1_not_last.pdf': [],
  'generated/13_custom_bad_qrr_checkdigit.pdf': [{ index: 0, reason: 'qrr-check-digit' }],
  'generated/14_non_qrbill_url_qr_last_page.pdf': [{ index: 0, reason: 'not-spc' }],
  'generated/15_epc_girocode_not_spc.pdf': [{ index: 0, reason: 'not-spc' }],
};

/** References of every kind, sent with each request and expected back unchanged. */
export const referencesFor = (file: string) => [
  file,
  42,
  { invoice: file.length, paid: false, tags: ['corpus'] },
  null,
];

/** Warnings about the page and the symbol rather than the payload: what the corpus bills may draw besides IG 2.3's. */
const PAGE_WARNINGS = new Set(['printed-not-checked', 'error-correction-level', 'no-swiss-cross', 'symbol-size']);

/**
 * The answer's warnings for an untampered bill: the payload's IG 2.3 warnings, in order, and besides them only
 * warnings about the page and symbol (never `printed-differs`: these bills are genuine).
 */
export function expectBillWarnings(warnings: unknown, bill: QrBill): void {
  const list = warnings as { code: string }[];
  expect(list.filter((w) => !PAGE_WARNINGS.has(w.code))).toEqual(qrBillWarnings(bill));
}

export function expectNotFound(answer: ExtractAnswer, rejected?: unknown[]): void {
  expect(answer.status).toBe(404);
  expect(answer.contentType).toBe('application/problem+json');
  expect(answer.body.type).toMatch(/\/problems\/qr-code-not-found$/);
  expect(answer.body.detail).toEqual(expect.any(String));
  expect(answer.body.rejected).toEqual(rejected ?? expect.any(Array));
}

/** Call inside a describeShared body; `send` is read when the tests run (after beforeAll). */
export function qrCorpusPdfSuites(send: () => ExtractRequest): void {
  describe('generated PDFs (manifest.json)', () => {
    const { files } = readSharedJson<{ files: GeneratedEntry[] }>('corpus/qr/manifest.json');

    it('lists 25 files, of which 21 hold a bill on their last page', () => {
      expect(files).toHaveLength(25);
      expect(files.filter((f) => f.expectedStatus === 200)).toHaveLength(21);
      expect(
        Object.keys(REJECTED).every((file) => files.some((f) => f.file === file && f.expectedStatus === 404)),
      ).toBe(true);
    });

    it.each(files)('$file', async (entry) => {
      const references = referencesFor(entry.file);
      const answer = await send()(readShared('corpus/qr', entry.file), references);
      if (entry.expectedStatus === 200) {
        expect({ status: answer.status, contentType: answer.contentType }).toEqual({
          status: 200,
          contentType: 'application/json',
        });
        expect(answer.body).toStrictEqual({ references, qrCodeData: entry.qrCodeData, warnings: expect.any(Array) });
        expectBillWarnings(answer.body.warnings, entry.qrCodeData as QrBill);
        if (entry.file === 'generated/12_custom_legacy_K_address.pdf')
          expect(answer.body.warnings).toMatchObject([{ code: 'combined-address' }, { code: 'printed-not-checked' }]);
      } else {
        expectNotFound(answer, REJECTED[entry.file]);
      }
    });
  });

  describe('external PDFs (external-manifest.json)', () => {
    const files = readSharedJson<{ files: (ExternalPdf | { kind: 'image' })[] }>(
      'corpus/qr/external-manifest.json',
    ).files.filter((f): f is ExternalPdf => f.kind === 'pdf');

    it('lists 46 PDFs, 4 of them without a bill', () => {
      expect(files).toHaveLength(46);
      expect(files.filter((f) => f.expectedStatus === 404)).toHaveLength(4);
    });

    it.each(files)('$file', async (entry) => {
      const references = referencesFor(entry.file);
      const answer = await send()(readShared('corpus/qr', entry.file), references);
      if (entry.expectedStatus === 200) {
        const reading = readQrBill(entry.decodedPayload!);
        expect(reading.ok, 'the payload decoders agreed on is a valid bill').toBe(true);
        expect(answer.status).toBe(200);
        expect(answer.body).toStrictEqual({
          references,
          qrCodeData: reading.ok ? reading.bill : undefined,
          warnings: expect.any(Array),
        });
        if (reading.ok) expectBillWarnings(answer.body.warnings, reading.bill);
      } else {
        // The four negatives are invoices without any QR code.
        expectNotFound(answer, []);
      }
    });
  });
}
