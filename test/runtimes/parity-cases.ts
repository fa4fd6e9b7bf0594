/**
 * The requests runtimes.test.ts sends to Node, Bun and Deno alike, with the status Node must answer each with: validate
 * and extract bodies (JSON, application/pdf, multipart/form-data, images), problems, authentication by API key and JWT,
 * health, OpenAPI and metrics.
 */
import { simplePdf, toBase64 } from '../support/pdf/pdf-builder.ts';
import { PRINTED_BILLS } from '../support/qr/printed-bills.ts';
import { PAYMENT_PART_CODE, SAMPLE_BILL, billCode, qrBillPdf, spcCode, textCode } from '../support/qr/qr-bills.ts';
import { K_CREDITOR, PLAIN, payload } from '../support/qr/qr-payload.ts';
import { IMAGE_CASES } from './workers/cases.ts';
import { NODE_ANSWERS } from './workers/node-answers.ts';

export interface Case {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  contentType?: string;
  body?: string | Uint8Array;
  /** Request headers; `jwt:<name>` stands for a token signed in beforeAll. Default: the API key as Bearer. */
  headers?: Record<string, string>;
  /** Node's status, checked so that runtimes agreeing on a broken answer do not pass. */
  status: number;
  /** Compare the body as text, not as parsed JSON (answers echoing the client's spelling). */
  raw?: boolean;
}

const validate = (name: string, status: number, body: string, contentType = 'application/json'): Case => ({
  name,
  method: 'POST',
  path: '/api/v1/documents/validate',
  contentType,
  body,
  status,
});
const pdfBody = (pdf: Uint8Array) => JSON.stringify({ base64Pdf: toBase64(pdf) });
const enc = new TextEncoder();

const EXTRACT = '/api/v1/documents/extract-swiss-qr-code';
/** References the service must echo as written: a number beyond 2^53, a 1.0, keys out of order. */
export const REFERENCES = '[12345678901234567890, 1.0, {"z": "INV-2026-0042", "a": null}]';
const extract = (name: string, status: number, pdf: Uint8Array): Case => ({
  name,
  method: 'POST',
  path: EXTRACT,
  contentType: 'application/json',
  body: `{"references": ${REFERENCES}, "base64Pdf": "${toBase64(pdf)}"}`,
  status,
  raw: status === 200,
});
const sampleBill = { code: billCode(SAMPLE_BILL), ...PAYMENT_PART_CODE };
export type QrWarning = { code: string; fields: string[] };
/** A valid bill with a K creditor and version 0201: answered with IG 2.3 warnings. */
const legacyBill = {
  code: spcCode(payload({ ...PLAIN, ...K_CREDITOR, 2: '0201', 30: 'Facture 12 €' })),
  ...PAYMENT_PART_CODE,
};

// Authentication on every runtime: each serves API_KEYS_FILE and a JWKS this test serves (docs/contract/http.md,
// "Running in production").
export const API_KEY = 'parity-key-0b7d4e8f60a1b2c3';
export const ISSUER = 'https://idp.example.ch/realms/ap';
export const AUDIENCE = 'swiss-doc-service';
const withHeaders = (c: Case, headers: Record<string, string>, name: string, status: number): Case => ({
  ...c,
  name,
  headers,
  status,
  raw: false,
});
const onePage = validate('1-page PDF', 200, pdfBody(simplePdf()));
const form = (pdf: Uint8Array, references?: string) => {
  const b = '----runtimes-boundary';
  const parts = [
    `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
    pdf,
    '\r\n',
  ];
  if (references !== undefined)
    parts.push(`--${b}\r\nContent-Disposition: form-data; name="references"\r\n\r\n${references}\r\n`);
  parts.push(`--${b}--\r\n`);
  return {
    contentType: `multipart/form-data; boundary=${b}`,
    body: new Uint8Array(Buffer.concat(parts.map((p) => (typeof p === 'string' ? enc.encode(p) : p)))),
  };
};
const bill = () => qrBillPdf([{ codes: [sampleBill] }]);
const PRODUCTION_CASES: Case[] = [
  withHeaders(onePage, {}, 'auth: no credential', 401),
  withHeaders(onePage, { authorization: 'Bearer wrong-key' }, 'auth: wrong key', 401),
  withHeaders(onePage, { 'x-api-key': API_KEY }, 'auth: X-Api-Key', 200),
  withHeaders(onePage, { authorization: `Bearer ${API_KEY}`, 'x-api-key': API_KEY }, 'auth: both headers', 401),
  withHeaders(onePage, { authorization: 'Bearer jwt:valid' }, 'auth: JWT of the provider', 200),
  withHeaders(onePage, { authorization: 'Bearer jwt:expired' }, 'auth: expired JWT', 401),
  withHeaders(onePage, { authorization: 'Bearer jwt:wrong-audience' }, 'auth: JWT for another audience', 401),
  withHeaders(onePage, { authorization: 'Bearer jwt:none' }, 'auth: JWT with alg none', 401),
  {
    name: 'body: application/pdf (validate)',
    method: 'POST',
    path: '/api/v1/documents/validate',
    contentType: 'application/pdf',
    body: simplePdf({ pages: 3, attachments: 1 }),
    status: 200,
  },
  {
    name: 'body: multipart/form-data (validate)',
    method: 'POST',
    path: '/api/v1/documents/validate',
    ...form(simplePdf({ pages: 3, attachments: 1 })),
    status: 200,
  },
  {
    name: 'body: application/pdf with references (extract)',
    method: 'POST',
    path: `${EXTRACT}?references=${encodeURIComponent(REFERENCES)}`,
    contentType: 'application/pdf',
    body: bill(),
    status: 200,
    raw: true,
  },
  {
    name: 'body: multipart/form-data with references (extract)',
    method: 'POST',
    path: EXTRACT,
    ...form(bill(), REFERENCES),
    status: 200,
    raw: true,
  },
  {
    name: 'body: references query not an array',
    method: 'POST',
    path: `${EXTRACT}?references=%7B%7D`,
    contentType: 'application/pdf',
    body: bill(),
    status: 400,
  },
  { name: 'metrics without a credential', method: 'GET', path: '/metrics', headers: {}, status: 401 },
  // Photos and scans as image bodies (workers/cases.ts, whose Node answers are recorded for workerd too).
  ...IMAGE_CASES.map((c): Case => ({ ...c, status: NODE_ANSWERS[c.name]!.status, raw: c.compare === 'text' })),
];

export const CASES: Case[] = [
  validate('1-page PDF', 200, pdfBody(simplePdf())),
  validate('5-page PDF with 2 attachments', 200, pdfBody(simplePdf({ pages: 5, attachments: 2 }))),
  validate('catalog /Version 2.0', 200, pdfBody(simplePdf({ catalogVersion: '2.0' }))),
  validate('invalid Base64', 400, JSON.stringify({ base64Pdf: 'not base64!' })),
  validate('not-a-PDF bytes', 400, pdfBody(enc.encode('Hello, this is plain text and no PDF at all.\n'))),
  validate('PDF header, unreadable body (engine refuses)', 400, pdfBody(enc.encode('%PDF-1.7\nnothing else\n'))),
  validate('missing base64Pdf', 400, '{}'),
  // JSON.parse's messages differ between V8 and JavaScriptCore: the service's own must not.
  validate('malformed JSON value', 400, '{"base64Pdf": "QUJD", "references": [tru]}'),
  validate('JSON with wrong content type', 415, pdfBody(simplePdf()), 'text/plain'),
  // Above MAX_BODY_MB (1 here) and well above it: no runtime's own body limit may answer instead of the app.
  validate('body over MAX_BODY_MB', 413, JSON.stringify({ base64Pdf: 'A'.repeat(3 * 1024 * 1024) })),
  extract('QR-bill: vector code in the payment part', 200, qrBillPdf([{ codes: [sampleBill] }])),
  // The printed payment part against the code (printed-differs, printed-not-checked), in the four languages.
  ...PRINTED_BILLS.map(({ name, pdf }) => extract(`QR-bill: ${name}`, 200, pdf)),
  extract(
    'QR-bill: only a URL code on the last page',
    404,
    qrBillPdf([
      { codes: [sampleBill] },
      { codes: [{ code: textCode('https://example.com/pay'), ...PAYMENT_PART_CODE }] },
    ]),
  ),
  extract('QR-bill: no QR code at all', 404, simplePdf()),
  extract('QR-bill: K address, version 0201 (IG 2.3 warnings)', 200, qrBillPdf([{ codes: [legacyBill] }])),
  { name: 'health', method: 'GET', path: '/health', status: 200 },
  { name: 'OpenAPI document', method: 'GET', path: '/openapi.json', status: 200 },
  { name: 'unknown route', method: 'GET', path: '/nope', status: 404 },
  ...PRODUCTION_CASES,
];
