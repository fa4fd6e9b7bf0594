/**
 * The Workers entry (src/runtime/workers/main.ts, bundled as wrangler.toml says) answering inside workerd: SELF is the
 * worker's own fetch handler, with the real PDFium WebAssembly module.
 */
import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { simplePdf, toBase64 } from '../../support/pdf/pdf-builder.ts';
import { metadataBombPdf } from '../../support/pdf/bomb-pdf.ts';
import { encryptedPdf } from '../../support/pdf/encrypted-pdf.ts';

const validate = (body: unknown, contentType = 'application/json') =>
  SELF.fetch('http://localhost/api/v1/documents/validate', {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

async function problem(response: Response, name: string, status = 400) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  const body = (await response.json()) as Record<string, unknown>;
  expect(body.type).toBe(`https://errors.example/problems/${name}`);
  expect(body.status).toBe(status);
  expect(body.traceId).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
  return body;
}

describe('POST /api/v1/documents/validate on workerd', () => {
  it.each([
    { pages: 1, attachments: 0 },
    { pages: 3, attachments: 0 },
    { pages: 2, attachments: 3 },
  ])('reports every field of a valid PDF ($pages pages, $attachments attachments)', async ({ pages, attachments }) => {
    const pdf = simplePdf({ pages, attachments });
    const response = await validate({ base64Pdf: toBase64(pdf) });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toStrictEqual({
      pageCount: pages,
      fileSizeBytes: pdf.length,
      fileSizeMB: 0,
      pdfVersion: '1.7',
      hasAttachments: attachments > 0,
      attachmentCount: attachments,
    });
  });

  it('rounds fileSizeMB to two decimals and takes the later of header and catalog version', async () => {
    const pdf = simplePdf({ version: '1.4', catalogVersion: '1.6', contentBytes: 1_600_000 });
    const response = await validate({ base64Pdf: toBase64(pdf) });
    expect(await response.json()).toStrictEqual({
      pageCount: 1,
      fileSizeBytes: pdf.length,
      fileSizeMB: Math.round((pdf.length / 1048576) * 100) / 100,
      pdfVersion: '1.6',
      hasAttachments: false,
      attachmentCount: 0,
    });
    expect(pdf.length / 1048576).toBeGreaterThan(1.5);
  });

  it('binds the property case-insensitively (Base64Pdf)', async () => {
    const response = await validate({ Base64Pdf: toBase64(simplePdf({ pages: 2 })) });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ pageCount: 2 });
  });

  it('answers invalid-base64 for text that is not strict Base64', async () => {
    await problem(await validate({ base64Pdf: 'not base64!' }), 'invalid-base64');
  });

  it('answers invalid-pdf for bytes that are not a PDF', async () => {
    const body = await problem(await validate({ base64Pdf: btoa('Hello, no PDF here.') }), 'invalid-pdf');
    expect(body.title).toBe('The file is not a valid PDF.');
  });

  it('answers validation naming base64Pdf when the field is missing', async () => {
    const body = await problem(await validate({}), 'validation');
    expect(body.errors).toStrictEqual({ base64Pdf: ['The base64Pdf field is required.'] });
  });

  it('answers encrypted-pdf for a PDF that needs a user password', async () => {
    await problem(await validate({ base64Pdf: toBase64(encryptedPdf({ userPassword: 'secret' })) }), 'encrypted-pdf');
  });

  it('answers unsupported-media-type for a body that is not JSON', async () => {
    await problem(await validate({ base64Pdf: toBase64(simplePdf()) }, 'text/plain'), 'unsupported-media-type', 415);
  });

  it('stops a decompression bomb at the engine memory ceiling (96 MB: isolates have 128 MB) and keeps serving', async () => {
    const body = await problem(await validate({ base64Pdf: toBase64(metadataBombPdf(192 << 20)) }), 'pdf-too-complex');
    expect(body.detail).toBe('The PDF exceeds the processing limits: engine aborted (memory ceiling reached).');
    // the aborted engine instance was dropped; the next document gets a fresh one from the same compiled module
    const next = await validate({ base64Pdf: toBase64(simplePdf({ pages: 2 })) });
    expect(next.status).toBe(200);
    expect(await next.json()).toMatchObject({ pageCount: 2 });
  });

  it('keeps answering after many documents (one engine per isolate)', async () => {
    for (let pages = 1; pages <= 8; pages++) {
      const response = await validate({ base64Pdf: toBase64(simplePdf({ pages })) });
      expect(((await response.json()) as { pageCount: number }).pageCount).toBe(pages);
    }
  });
});

describe('service routes on workerd', () => {
  it('GET /health', async () => {
    const response = await SELF.fetch('http://localhost/health');
    expect(response.status).toBe(200);
    expect(await response.json()).toStrictEqual({ status: 'ok' });
  });

  it('GET /openapi.json describes ValidatePdf', async () => {
    const response = await SELF.fetch('http://localhost/openapi.json');
    expect(response.status).toBe(200);
    const doc = (await response.json()) as {
      openapi: string;
      paths: Record<string, { post?: { operationId?: string } }>;
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/api/v1/documents/validate']?.post?.operationId).toBe('ValidatePdf');
  });

  it('GET /docs/scalar.js serves the API reference bundle itself (a Text module)', async () => {
    const response = await SELF.fetch('http://localhost/docs/scalar.js');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/javascript/);
    const script = await response.text();
    expect(script.length).toBeGreaterThan(1_000_000);
  });

  it('GET /docs loads the script from /docs/scalar.js, not from a CDN', async () => {
    const response = await SELF.fetch('http://localhost/docs');
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('/docs/scalar.js');
    expect(html).not.toMatch(/cdn\.jsdelivr|unpkg\.com/);
  });
});
