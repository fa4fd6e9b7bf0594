/**
 * Requests that every runtime must answer exactly as the Node app does. Used by parity.test.ts (inside workerd) and by
 * record-node-answers.ts, which records the Node app's answers into node-answers.ts. Web APIs only.
 */
import { simplePdf, toBase64 } from '../../support/pdf/pdf-builder.ts';
import { metadataBombPdf } from '../../support/pdf/bomb-pdf.ts';
import { encryptedPdf } from '../../support/pdf/encrypted-pdf.ts';
import { PRINTED_BILLS } from '../../support/qr/printed-bills.ts';
import { grayPng, grayTiff, withJfifDensity } from '../../support/qr/bill-images.ts';
import { encodeJpeg } from '../../support/qr/jpeg-encoder.ts';
import {
  PAYMENT_PART_CODE,
  SAMPLE_BILL,
  billCode,
  qrBillPdf,
  rasterPage,
  spcCode,
  textCode,
} from '../../support/qr/qr-bills.ts';
import { K_CREDITOR, PLAIN, payload } from '../../support/qr/qr-payload.ts';

/** Sent with every request so problem `traceId`s continue this trace; only their random span id differs. */
export const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
export const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

export interface Case {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  contentType?: string;
  body?: string | Uint8Array;
  /**
   * `json`: the parsed body must be equal; `text`: the body exactly as sent (answers without a random traceId, where
   * the spelling matters: references echoed as written); `sha256`: the body's bytes (documents too large to inline).
   */
  compare: 'json' | 'text' | 'sha256';
}

export interface Answer {
  status: number;
  contentType: string | null;
  json?: unknown;
  text?: string;
  sha256?: string;
}

const enc = new TextEncoder();
const validate = (name: string, body: unknown, contentType = 'application/json'): Case => ({
  name,
  method: 'POST',
  path: '/api/v1/documents/validate',
  contentType,
  body: typeof body === 'string' ? body : JSON.stringify(body),
  compare: 'json',
});
const pdf = (bytes: Uint8Array) => ({ base64Pdf: toBase64(bytes) });
const get = (name: string, path: string, compare: Case['compare'] = 'json'): Case => ({
  name,
  method: 'GET',
  path,
  compare,
});

const EXTRACT = '/api/v1/documents/extract-swiss-qr-code';
const extract = (name: string, body: unknown, compare: Case['compare'] = 'json'): Case => ({
  name,
  method: 'POST',
  path: EXTRACT,
  contentType: 'application/json',
  body: typeof body === 'string' ? body : JSON.stringify(body),
  compare,
});
const billPdf = (references: unknown[], bytes: Uint8Array) => ({ references, base64Pdf: toBase64(bytes) });
// QR-bills drawn in code (qr-bills.ts), so workerd builds the very documents Node recorded its answers for.
const sampleCode = billCode(SAMPLE_BILL);
const vectorBill = qrBillPdf([{ codes: [{ code: sampleCode, ...PAYMENT_PART_CODE }] }]);
const brokenBill = spcCode(payload({ ...PLAIN, 29: '210000000003139471430009018' }));

/** A valid bill that draws every IG 2.3 warning: a K creditor, characters new in 2.3 and beyond it, version 0201. */
const legacyBill = spcCode(payload({ ...PLAIN, ...K_CREDITOR, 2: '0201', 30: 'Facture 12 € – Ștefan' }));

/**
 * The same PDF bytes as the file itself (`application/pdf`) or a form's `file` part (docs/contract/http.md, "Other
 * request bodies").
 */
const raw = (
  name: string,
  path: string,
  bytes: Uint8Array,
  references?: string,
  contentType = 'application/pdf',
): Case => ({
  name,
  method: 'POST',
  path: references === undefined ? path : `${path}?references=${encodeURIComponent(references)}`,
  contentType,
  body: bytes,
  compare: 'text',
});
const BOUNDARY = '----parity-form-boundary-4711';
const form = (name: string, path: string, bytes: Uint8Array, references?: string, partType?: string): Case => {
  const head = (part: string, file = '') =>
    enc.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part}"${file}\r\n\r\n`);
  const type = partType ? `\r\nContent-Type: ${partType}` : '';
  const chunks = [head('file', `; filename="invoice.pdf"${type}`), bytes, enc.encode('\r\n')];
  if (references !== undefined) chunks.push(head('references'), enc.encode(`${references}\r\n`));
  chunks.push(enc.encode(`--${BOUNDARY}--\r\n`));
  const body = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.length;
  }
  return {
    name,
    method: 'POST',
    path,
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
    body,
    compare: 'text',
  };
};
const VALIDATE = '/api/v1/documents/validate';

/** A bill page scanned at 100 dpi, as the images a scanner or a phone uploads (bill-images.ts). */
const scannedPage = (() => {
  const { width, height, gray } = rasterPage({ codes: [{ code: sampleCode, ...PAYMENT_PART_CODE }] }, 100);
  return { width, height, data: gray };
})();
const scanJpeg = withJfifDensity(encodeJpeg(scannedPage, 80), 100);

export const IMAGE_CASES: Case[] = [
  raw('extract: image/jpeg body', `${EXTRACT}/file`, scanJpeg, '["INV-1"]', 'image/jpeg'),
  raw('extract: image/png body, no resolution (300 dpi)', EXTRACT, grayPng(scannedPage), '[2]', 'image/png'),
  raw('extract: image/tiff body', EXTRACT, grayTiff(scannedPage, 100), undefined, 'image/tiff'),
  form('extract: a PNG as the form part', `${EXTRACT}/form`, grayPng(scannedPage, 100), '["x"]', 'image/png'),
  { ...raw('extract: truncated JPEG', EXTRACT, scanJpeg.subarray(0, 4000), '[]', 'image/jpeg'), compare: 'json' },
  { ...raw('validate: image/jpeg body (415)', VALIDATE, scanJpeg, undefined, 'image/jpeg'), compare: 'json' },
];

export const CASES: Case[] = [
  ...IMAGE_CASES,
  raw('validate: application/pdf body', VALIDATE, simplePdf({ pages: 2, attachments: 1 })),
  form('validate: multipart/form-data body', VALIDATE, simplePdf({ pages: 2, attachments: 1 })),
  raw(
    'extract: application/pdf body, references in the query',
    EXTRACT,
    vectorBill,
    '["INV-2026-0042", 12345678901234567890]',
  ),
  raw('extract: application/pdf body, no references', EXTRACT, vectorBill),
  form('extract: multipart/form-data body with a references part', EXTRACT, vectorBill, '[{"z": 1, "a": "INV-7"}]'),
  { ...raw('extract: references query not an array', EXTRACT, vectorBill, '{"a": 1}'), compare: 'json' },
  {
    ...raw('validate: application/octet-stream', VALIDATE, simplePdf()),
    contentType: 'application/octet-stream',
    compare: 'json',
  },
  validate('1-page PDF', pdf(simplePdf())),
  validate('3-page PDF', pdf(simplePdf({ pages: 3 }))),
  validate('2 pages, 2 attachments', pdf(simplePdf({ pages: 2, attachments: 2 }))),
  validate('header 1.4, catalog /Version 1.7', pdf(simplePdf({ version: '1.4', catalogVersion: '1.7' }))),
  validate('1.4 MB PDF (fileSizeMB rounding)', pdf(simplePdf({ pages: 5, contentBytes: 300_000 }))),
  validate('data: URL prefix', { base64Pdf: `data:application/pdf;base64,${toBase64(simplePdf())}` }),
  validate('property Base64Pdf', { Base64Pdf: toBase64(simplePdf({ pages: 2 })) }),
  validate('property BASE64PDF', { BASE64PDF: toBase64(simplePdf()) }),
  validate('invalid Base64', { base64Pdf: 'not base64!' }),
  validate('Base64 without padding', { base64Pdf: 'JVBERi0' }),
  validate('base64Pdf a number', { base64Pdf: 42 }),
  validate('not a PDF', pdf(enc.encode('Hello, this is plain text and no PDF at all.\n'))),
  validate('PDF header, unreadable body', pdf(enc.encode('%PDF-1.7\nnothing else\n'))),
  validate('encrypted with a user password', pdf(encryptedPdf({ userPassword: 'secret' }))),
  validate('decompression bomb (192 MiB of zeros)', pdf(metadataBombPdf(192 << 20))),
  validate('missing base64Pdf', {}),
  validate('base64Pdf null', { base64Pdf: null }),
  validate('body not JSON', '{"base64Pdf": '),
  validate('body a JSON array', '[]'),
  validate('wrong content type', pdf(simplePdf()), 'text/plain'),
  extract('QR-bill: vector code in the payment part', billPdf(['INV-2026-0042'], vectorBill)),
  // The printed payment part against the code (printed-differs, printed-not-checked), in the four languages.
  ...PRINTED_BILLS.map(({ name, pdf }) => extract(`QR-bill: ${name}`, billPdf([], pdf))),
  extract(
    'QR-bill: 300 dpi image of the code, bottom right',
    billPdf([1, 2], qrBillPdf([{ codes: [{ code: sampleCode, x: 159, y: 246, as: 'raster' }] }])),
  ),
  extract(
    'QR-bill: page scanned at 150 dpi',
    billPdf([], qrBillPdf([{ raster: 150, codes: [{ code: sampleCode, ...PAYMENT_PART_CODE }] }])),
  ),
  extract(
    'QR-bill: a URL code above the bill',
    billPdf(
      [],
      qrBillPdf([
        {
          codes: [
            { code: textCode('https://example.com/pay'), x: 150, y: 20, size: 30 },
            { code: sampleCode, ...PAYMENT_PART_CODE },
          ],
        },
      ]),
    ),
  ),
  extract(
    'QR-bill: references passed through as written',
    `{"References": [ 12345678901234567890, 1.0, "\\u00e9", {"z": 1, "a": [true, null]} ], "base64Pdf": "${toBase64(vectorBill)}"}`,
    'text',
  ),
  extract(
    'QR-bill: IG 2.3 warnings (K address, extended and unsupported characters, version 0201)',
    billPdf([], qrBillPdf([{ codes: [{ code: legacyBill, ...PAYMENT_PART_CODE }] }])),
    'text',
  ),
  extract('QR-bill: no QR code on the last page', billPdf(['x'], simplePdf({ pages: 2 }))),
  extract(
    'QR-bill: on page 1 of 2',
    billPdf([], qrBillPdf([{ codes: [{ code: sampleCode, ...PAYMENT_PART_CODE }] }, {}])),
  ),
  extract(
    'QR-bill: a URL code and a broken bill',
    billPdf(
      [],
      qrBillPdf([
        {
          codes: [
            { code: textCode('https://example.com/pay'), x: 150, y: 20, size: 30 },
            { code: brokenBill, ...PAYMENT_PART_CODE },
          ],
        },
      ]),
    ),
  ),
  extract('QR-bill: encrypted with a user password', billPdf([], encryptedPdf({ userPassword: 'secret' }))),
  extract('QR-bill: not a PDF', billPdf([], enc.encode('Hello, this is plain text and no PDF at all.\n'))),
  extract('QR-bill: references missing', { base64Pdf: toBase64(vectorBill) }),
  extract('QR-bill: references not an array', { references: 'INV-1', base64Pdf: toBase64(vectorBill) }),
  extract('QR-bill: invalid Base64', { references: [], base64Pdf: 'not base64!' }),
  get('health', '/health'),
  get('OpenAPI document', '/openapi.json', 'sha256'),
  get('API reference page', '/docs', 'sha256'),
  get('API reference script', '/docs/scalar.js', 'sha256'),
  get('unknown route', '/nope'),
  get('GET on the validate route', '/api/v1/documents/validate'),
  get('GET on the extract route', EXTRACT),
];

export function requestOf(c: Case, origin = 'http://localhost'): Request {
  const headers: Record<string, string> = { traceparent: TRACEPARENT };
  if (c.contentType) headers['content-type'] = c.contentType;
  return new Request(origin + c.path, { method: c.method, headers, body: c.body as BodyInit | undefined });
}

/** The answer with the random span id of a problem's `traceId` blanked (after checking it continues TRACE_ID). */
export async function answerOf(response: Response, c: Case): Promise<Answer> {
  const answer: Answer = { status: response.status, contentType: response.headers.get('content-type') };
  if (c.compare === 'sha256') {
    const digest = await crypto.subtle.digest('SHA-256', await response.arrayBuffer());
    answer.sha256 = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
    return answer;
  }
  if (c.compare === 'text') {
    answer.text = await response.text();
    return answer;
  }
  const json = (await response.json()) as unknown;
  if (json && typeof json === 'object' && 'traceId' in json) {
    const traceId = (json as { traceId: unknown }).traceId;
    const match = new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-00$`).test(String(traceId));
    (json as { traceId: unknown }).traceId = match ? `00-${TRACE_ID}-<span>-00` : `unexpected: ${String(traceId)}`;
  }
  answer.json = json;
  return answer;
}
