import { beforeAll, describe, expect, it } from 'vitest';
import { megabytesHalfEven } from '../../src/pdf/validate.ts';
import type { PdfEngine } from '../../src/pdf/engine/port.ts';
import { metadataBombPdf } from '../support/pdf/bomb-pdf.ts';
import { encryptedPdf } from '../support/pdf/encrypted-pdf.ts';
import { assemblePdf, simplePdf, toBase64 } from '../support/pdf/pdf-builder.ts';
import { postJson, testApp, type TestApp, problem } from '../support/http/app.ts';

const VALIDATE = '/api/v1/documents/validate';
let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});

describe('POST /api/v1/documents/validate', () => {
  it('answers the six fields in camelCase', async () => {
    const pdf = simplePdf({ pages: 3, version: '1.6', attachments: 2 });
    const res = await postJson(t.app, VALIDATE, { base64Pdf: toBase64(pdf) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({
      pageCount: 3,
      fileSizeBytes: pdf.length,
      fileSizeMB: 0,
      pdfVersion: '1.6',
      hasAttachments: true,
      attachmentCount: 2,
    });
  });

  it.each(['Base64Pdf', 'base64Pdf', 'BASE64PDF', 'base64pdf'])('binds %s case-insensitively', async (name) => {
    const res = await postJson(t.app, VALIDATE, { [name]: toBase64(simplePdf()) });
    expect(res.status).toBe(200);
  });

  it('reports the later of header and catalog version', async () => {
    const body = async (pdf: Uint8Array) =>
      (await (await postJson(t.app, VALIDATE, { base64Pdf: toBase64(pdf) })).json()) as { pdfVersion: string };
    expect((await body(simplePdf({ version: '1.7', catalogVersion: '2.0' }))).pdfVersion).toBe('2.0');
    expect((await body(simplePdf({ version: '1.7', catalogVersion: '1.4' }))).pdfVersion).toBe('1.7');
  });

  it('rounds fileSizeMB to two decimals, ties to even', async () => {
    expect(megabytesHalfEven(0)).toBe(0);
    expect(megabytesHalfEven(1048576)).toBe(1);
    expect(megabytesHalfEven(5242)).toBe(0); // 0.004999…
    expect(megabytesHalfEven(5243)).toBe(0.01); // 0.0050001…
    // exact ties happen at odd multiples of 2^17 bytes
    expect(megabytesHalfEven(131072)).toBe(0.12); // 0.125 -> even 0.12
    expect(megabytesHalfEven(3 * 131072)).toBe(0.38); // 0.375 -> even 0.38
    expect(megabytesHalfEven(131073)).toBe(0.13);
    const pdf = simplePdf({ contentBytes: 1_200_000 });
    const res = (await (await postJson(t.app, VALIDATE, { base64Pdf: toBase64(pdf) })).json()) as {
      fileSizeMB: number;
      fileSizeBytes: number;
    };
    expect(res.fileSizeMB).toBe(megabytesHalfEven(pdf.length));
    expect(res.fileSizeMB).toBe(Math.round((pdf.length / 1048576) * 100) / 100);
  });

  it('accepts wrapped Base64 and a data URL prefix', async () => {
    const b64 = toBase64(simplePdf());
    const wrapped = b64.replace(/.{76}/g, '$&\r\n');
    expect((await postJson(t.app, VALIDATE, { base64Pdf: wrapped })).status).toBe(200);
    expect((await postJson(t.app, VALIDATE, { base64Pdf: `data:application/pdf;base64,${b64}` })).status).toBe(200);
  });

  it.each([
    ['a number', 12345],
    ['a boolean', true],
    ['an array', ['JVBERi0=']],
    ['an object', { a: 1 }],
    ['empty', ''],
    ['unpadded', 'JVBERi0xLjc'],
    ['base64url', 'JVBERi0xLjc_'],
    ['with junk inside', 'JVBE!@#$Ri0x'],
  ])('answers invalid-base64 for %s', async (_, value) => {
    await problem(await postJson(t.app, VALIDATE, { base64Pdf: value }), 400, 'invalid-base64');
  });

  it.each([
    ['missing', {}],
    ['null', { base64Pdf: null }],
  ])('answers a validation problem naming the field when it is %s', async (_, body) => {
    const p = await problem(await postJson(t.app, VALIDATE, body), 400, 'validation');
    expect(p.errors).toEqual({ base64Pdf: [expect.any(String)] });
  });

  it('answers a validation problem for a body that is not a JSON object', async () => {
    expect((await problem(await postJson(t.app, VALIDATE, '{"base64Pdf": '), 400, 'validation')).errors).toHaveProperty(
      '$',
    );
    expect((await problem(await postJson(t.app, VALIDATE, '[1,2]'), 400, 'validation')).errors).toHaveProperty('$');
  });

  it('answers 415 for a body that is not JSON', async () => {
    const res = await t.app.request(VALIDATE, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{}',
    });
    await problem(res, 415, 'unsupported-media-type');
    await problem(await t.app.request(VALIDATE, { method: 'POST', body: '{}' }), 415, 'unsupported-media-type');
  });

  it('answers 413 over MAX_BODY_MB, by Content-Length and while streaming', async () => {
    const small = await testApp({ MAX_BODY_MB: '1' });
    const big = JSON.stringify({ base64Pdf: 'A'.repeat(1_100_000) });
    await problem(await postJson(small.app, VALIDATE, big), 413, 'payload-too-large');
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(100_000)));
        controller.close();
      },
    });
    const res = await small.app.request(VALIDATE, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    await problem(res, 413, 'payload-too-large');
  });

  it.each([
    ['not a PDF', new TextEncoder().encode('hello')],
    ['a header and nothing else', new TextEncoder().encode('%PDF-1.7\n')],
    ['a version that does not exist', new TextEncoder().encode('%PDF-9.9\n')],
    [
      'no pages',
      assemblePdf({ objects: ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [] /Count 0 >>'] }),
    ],
    [
      'a cyclic page tree',
      assemblePdf({
        objects: [
          '<< /Type /Catalog /Pages 2 0 R >>',
          '<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>',
          '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 9 9] >>',
        ],
      }),
    ],
  ])('answers invalid-pdf for %s', async (_, pdf) => {
    await problem(await postJson(t.app, VALIDATE, { base64Pdf: toBase64(pdf) }), 400, 'invalid-pdf');
  });

  it('answers pdf-too-complex for a decompression bomb and keeps serving', async () => {
    // 64 MiB of zeros as the catalog's XMP metadata: PDFium inflates it when opening and hits its 32 MiB ceiling.
    const pdf = metadataBombPdf(64 << 20);
    const small = await testApp({ PDF_ENGINE_MEMORY_MB: '32' });
    await problem(await postJson(small.app, VALIDATE, { base64Pdf: toBase64(pdf) }), 400, 'pdf-too-complex');
    expect((await postJson(small.app, VALIDATE, { base64Pdf: toBase64(simplePdf()) })).status).toBe(200);
  });

  it('answers encrypted-pdf for a file that needs a user password', async () => {
    await problem(
      await postJson(t.app, VALIDATE, { base64Pdf: toBase64(encryptedPdf({ userPassword: 'secret' })) }),
      400,
      'encrypted-pdf',
    );
  });

  it('never leaks internals on an unexpected error', async () => {
    const broken: PdfEngine = { inspect: () => Promise.reject(new Error('secret stack detail at /srv/x.ts:1')) };
    const failing = await testApp({}, { engine: broken });
    const body = await problem(
      await postJson(failing.app, VALIDATE, { base64Pdf: toBase64(simplePdf()) }),
      500,
      'internal',
    );
    expect(JSON.stringify(body)).not.toContain('secret');
    expect(JSON.stringify(body)).not.toContain('.ts');
  });

  it('continues the caller trace id', async () => {
    const res = await postJson(
      t.app,
      VALIDATE,
      {},
      { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    );
    expect(((await res.json()) as { traceId: string }).traceId).toMatch(
      /^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-00$/,
    );
  });

  it('logs requests as structured records without document contents', async () => {
    const logged = await testApp();
    const b64 = toBase64(simplePdf());
    await postJson(logged.app, VALIDATE, { base64Pdf: b64 });
    expect(logged.logs).toHaveLength(1);
    expect(logged.logs[0]).toMatchObject({
      level: 'info',
      message: 'request',
      fields: { method: 'POST', path: VALIDATE, status: 200 },
    });
    expect(JSON.stringify(logged.logs)).not.toContain(b64.slice(0, 16));
  });
});

describe('service endpoints', () => {
  it('serves the OpenAPI 3.1 document generated from the schemas', async () => {
    const res = await t.app.request('/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      openapi: string;
      paths: Record<string, Record<string, { operationId: string }>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/api/v1/documents/validate']!.post!.operationId).toBe('ValidatePdf');
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['ValidatePdfRequest', 'ValidatePdfResponse', 'ProblemDetails']),
    );
  });

  it('serves /docs with its script from the service itself, not a CDN', async () => {
    const html = await (await t.app.request('/docs')).text();
    expect(html).toContain('/docs/scalar.js');
    expect(html).not.toMatch(/https?:\/\/(cdn|fonts)\./);
    const script = await t.app.request('/docs/scalar.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect((await script.text()).length).toBeGreaterThan(100_000);
  });

  it('answers /health', async () => {
    const res = await t.app.request('/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('answers another method on a known path with 405 and Allow', async () => {
    const res = await t.app.request('/api/v1/documents/validate');
    await problem(res, 405, 'method-not-allowed');
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('answers unknown paths with a not-found problem', async () => {
    await problem(await t.app.request('/nope'), 404, 'not-found');
  });
});
