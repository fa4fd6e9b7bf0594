/**
 * Requests that every runtime must answer exactly as the Node app does. Used by parity.test.ts (inside workerd) and by
 * record-node-answers.ts, which records the Node app's answers into node-answers.ts. Web APIs only.
 */
import { simplePdf, toBase64 } from '../support/pdf-builder.ts';
import { metadataBombPdf } from '../support/bomb-pdf.ts';
import { encryptedPdf } from '../support/encrypted-pdf.ts';

/** Sent with every request so problem `traceId`s continue this trace; only their random span id differs. */
export const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
export const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

export interface Case {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  contentType?: string;
  body?: string;
  /** `json`: the parsed body must be equal; `sha256`: the body's bytes (documents too large to inline). */
  compare: 'json' | 'sha256';
}

export interface Answer {
  status: number;
  contentType: string | null;
  json?: unknown;
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
const get = (name: string, path: string, compare: Case['compare'] = 'json'): Case => ({ name, method: 'GET', path, compare });

export const CASES: Case[] = [
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
  get('health', '/health'),
  get('OpenAPI document', '/openapi.json', 'sha256'),
  get('API reference page', '/docs', 'sha256'),
  get('API reference script', '/docs/scalar.js', 'sha256'),
  get('unknown route', '/nope'),
  get('GET on the validate route', '/api/v1/documents/validate'),
];

export function requestOf(c: Case, origin = 'http://localhost'): Request {
  const headers: Record<string, string> = { traceparent: TRACEPARENT };
  if (c.contentType) headers['content-type'] = c.contentType;
  return new Request(origin + c.path, { method: c.method, headers, body: c.body });
}

/** The answer with the random span id of a problem's `traceId` blanked (after checking it continues TRACE_ID). */
export async function answerOf(response: Response, c: Case): Promise<Answer> {
  const answer: Answer = { status: response.status, contentType: response.headers.get('content-type') };
  if (c.compare === 'sha256') {
    const digest = await crypto.subtle.digest('SHA-256', await response.arrayBuffer());
    answer.sha256 = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
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
