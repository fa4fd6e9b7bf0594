/**
 * The request forms besides JSON (docs/contract/http.md, "Other request bodies"): `application/pdf` with references in
 * the query, and `multipart/form-data` with a `file` part and a `references` part; each answered as the JSON body with
 * the same bytes, on generated PDFs and on the shared corpora.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { indexOfBytes, parseMultipart, boundaryOf } from '../../src/http/multipart.ts';
import { describeShared, readShared, readSharedJson, sharedExists } from '../support/corpus.ts';
import { encryptedPdf } from '../support/pdf/encrypted-pdf.ts';
import { postJson, problem, testApp, type TestApp } from '../support/http/app.ts';
import { simplePdf, toBase64 } from '../support/pdf/pdf-builder.ts';
import { qrCorpusPdfSuites, type ExtractRequest } from '../support/qr/qr-corpus.ts';
import { PAYMENT_PART_CODE, SAMPLE_BILL, billCode, qrBillPdf } from '../support/qr/qr-bills.ts';

const VALIDATE = '/api/v1/documents/validate';
const EXTRACT = '/api/v1/documents/extract-swiss-qr-code';
const enc = new TextEncoder();
let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});

type Form = 'json' | 'pdf' | 'multipart';

/** A multipart/form-data body as browsers and curl write it. */
function formBody(
  parts: { name: string; filename?: string; type?: string; body: Uint8Array | string }[],
  boundary = '----formdata-test-7MA4YWxkTrZu0gW',
): { body: Uint8Array; contentType: string } {
  const chunks: Uint8Array[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    chunks.push(
      enc.encode(
        `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`,
      ),
    );
    chunks.push(typeof p.body === 'string' ? enc.encode(p.body) : p.body, enc.encode('\r\n'));
  }
  chunks.push(enc.encode(`--${boundary}--\r\n`));
  return { body: new Uint8Array(Buffer.concat(chunks)), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Sends `pdf` (and for extract `references`, as text) in one of the three forms. */
async function send(
  app: TestApp['app'],
  path: string,
  form: Form,
  pdf: Uint8Array,
  references?: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  if (form === 'json') {
    const json =
      references === undefined
        ? `{"base64Pdf":"${toBase64(pdf)}"}`
        : `{"references":${references},"base64Pdf":"${toBase64(pdf)}"}`;
    return postJson(app, path, json, headers);
  }
  if (form === 'pdf') {
    const query = references === undefined ? '' : `?references=${encodeURIComponent(references)}`;
    return app.request(path + query, {
      method: 'POST',
      headers: { 'content-type': 'application/pdf', ...headers },
      body: pdf as BodyInit,
    });
  }
  const { body, contentType } = formBody([
    { name: 'file', filename: 'invoice.pdf', type: 'application/pdf', body: pdf },
    ...(references === undefined ? [] : [{ name: 'references', body: references }]),
  ]);
  return app.request(path, {
    method: 'POST',
    headers: { 'content-type': contentType, ...headers },
    body: body as BodyInit,
  });
}

/** Status, media type and body, the random traceId aside. */
async function answer(res: Response) {
  const text = await res.text();
  const body =
    res.headers.get('content-type') === 'application/problem+json'
      ? { ...(JSON.parse(text) as object), traceId: undefined }
      : text;
  return { status: res.status, contentType: res.headers.get('content-type'), body };
}

const bill = qrBillPdf([{ codes: [{ code: billCode(SAMPLE_BILL), ...PAYMENT_PART_CODE }] }]);

describe('application/pdf and multipart/form-data bodies', () => {
  const documents: [string, Uint8Array][] = [
    ['a 3-page PDF with attachments', simplePdf({ pages: 3, attachments: 2 })],
    ['a 1.2 MB PDF', simplePdf({ contentBytes: 1_200_000 })],
    ['not a PDF', enc.encode('Hello, this is plain text.\n')],
    ['an encrypted PDF', encryptedPdf({ userPassword: 'secret' })],
  ];

  it.each(documents)('validate answers %s as for the JSON body', async (_, pdf) => {
    const json = await answer(await send(t.app, VALIDATE, 'json', pdf));
    for (const form of ['pdf', 'multipart'] as const)
      expect(await answer(await send(t.app, VALIDATE, form, pdf)), form).toEqual(json);
  });

  it.each([
    [
      'a bill, references of every kind',
      bill,
      '[12345678901234567890, 1.0, {"z": "INV-2026-0042", "a": null}, "\\u00e9"]',
    ],
    ['a PDF without a bill', simplePdf(), '["x"]'],
    ['not a PDF', enc.encode('nope'), '[]'],
  ])('extract answers %s as for the JSON body, byte for byte', async (_, pdf, references) => {
    const json = await answer(await send(t.app, EXTRACT, 'json', pdf, references));
    for (const form of ['pdf', 'multipart'] as const)
      expect(await answer(await send(t.app, EXTRACT, form, pdf, references)), form).toEqual(json);
  });

  it('takes references as [] when the query parameter or the part is absent', async () => {
    const expected = await answer(await send(t.app, EXTRACT, 'json', bill, '[]'));
    expect(expected.status).toBe(200);
    for (const form of ['pdf', 'multipart'] as const)
      expect(await answer(await send(t.app, EXTRACT, form, bill)), form).toEqual(expected);
  });

  it.each(['"INV-1"', '{"a": 1}', 'not json', '', '[1,'])(
    'answers 400 validation when references is %j',
    async (references) => {
      for (const form of ['pdf', 'multipart'] as const) {
        const p = await problem(await send(t.app, EXTRACT, form, bill, references), 400, 'validation');
        expect(p.errors, form).toEqual({ references: [expect.stringMatching(/JSON array/)] });
      }
    },
  );

  it('answers an empty file invalid-pdf (as JSON, empty Base64 is invalid-base64)', async () => {
    await problem(await send(t.app, VALIDATE, 'pdf', new Uint8Array(0)), 400, 'invalid-pdf');
    await problem(await send(t.app, VALIDATE, 'multipart', new Uint8Array(0)), 400, 'invalid-pdf');
  });

  it('ignores a references query parameter on validate', async () => {
    expect(
      (
        await t.app.request(`${VALIDATE}?references=oops`, {
          method: 'POST',
          headers: { 'content-type': 'application/pdf' },
          body: simplePdf() as BodyInit,
        })
      ).status,
    ).toBe(200);
  });

  it('binds form parts ignoring letter case, takes the first file part, and ignores other parts', async () => {
    const { body, contentType } = formBody([
      { name: 'comment', body: 'hello' },
      { name: 'REFERENCES', body: '["A"]' },
      { name: 'File', filename: 'a.pdf', body: bill },
      { name: 'file', filename: 'b.pdf', body: enc.encode('second') },
    ]);
    const res = await t.app.request(EXTRACT, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: body as BodyInit,
    });
    expect(res.status).toBe(200);
    expect((await res.text()).startsWith('{"references":["A"],"qrCodeData":')).toBe(true);
  });

  it('answers 400 validation for a form without a file part, a malformed form, or no boundary', async () => {
    const noFile = formBody([{ name: 'references', body: '[]' }]);
    expect(
      (
        await problem(
          await t.app.request(EXTRACT, {
            method: 'POST',
            headers: { 'content-type': noFile.contentType },
            body: noFile.body as BodyInit,
          }),
          400,
          'validation',
        )
      ).errors,
    ).toEqual({
      file: ['The file part is required.'],
    });
    const truncated = formBody([{ name: 'file', body: simplePdf() }]);
    const cut = truncated.body.subarray(0, truncated.body.length - 40);
    expect(
      (
        await problem(
          await t.app.request(VALIDATE, {
            method: 'POST',
            headers: { 'content-type': truncated.contentType },
            body: cut as BodyInit,
          }),
          400,
          'validation',
        )
      ).errors,
    ).toHaveProperty('$');
    await problem(
      await t.app.request(VALIDATE, {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data' },
        body: truncated.body as BodyInit,
      }),
      400,
      'validation',
    );
  });

  it('answers 415 for another media type, naming the three', async () => {
    const p = await problem(
      await t.app.request(VALIDATE, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: simplePdf() as BodyInit,
      }),
      415,
      'unsupported-media-type',
    );
    expect(p.detail).toMatch(/application\/json, application\/pdf or multipart\/form-data/);
  });

  it('answers 413 over MAX_BODY_MB, by Content-Length and while streaming, for both forms', async () => {
    const small = await testApp({ MAX_BODY_MB: '1' });
    const big = simplePdf({ contentBytes: 1_100_000 });
    await problem(await send(small.app, VALIDATE, 'pdf', big), 413, 'payload-too-large');
    await problem(await send(small.app, VALIDATE, 'multipart', big), 413, 'payload-too-large');
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 20; i++) controller.enqueue(new Uint8Array(100_000));
        controller.close();
      },
    });
    const res = await small.app.request(VALIDATE, {
      method: 'POST',
      headers: { 'content-type': 'application/pdf' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    await problem(res, 413, 'payload-too-large');
  });

  it('reads a chunked application/pdf body without Content-Length', async () => {
    const pdf = simplePdf({ pages: 2, contentBytes: 300_000 });
    const stream = new ReadableStream({
      start(controller) {
        for (let at = 0; at < pdf.length; at += 16_384) controller.enqueue(pdf.slice(at, at + 16_384));
        controller.close();
      },
    });
    const res = await t.app.request(VALIDATE, {
      method: 'POST',
      headers: { 'content-type': 'application/pdf' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(await res.json()).toMatchObject({ pageCount: 2, fileSizeBytes: pdf.length });
  });

  it("describes each form as its own operation (JSON on the operation's path, /file and /form), references in the query of /file", async () => {
    const doc = (await (await t.app.request('/openapi.json')).json()) as {
      paths: Record<
        string,
        {
          post: {
            operationId: string;
            requestBody: { content: Record<string, { schema: Record<string, unknown> }> };
            parameters?: { name: string; in: string }[];
            responses: Record<string, unknown>;
          };
        }
      >;
      components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> };
    };
    const forms = (path: string) => {
      const op = doc.paths[path]!.post;
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '503']));
      return [
        op.operationId,
        Object.keys(op.requestBody.content),
        (op.parameters ?? []).map((p) => `${p.in}:${p.name}`),
      ];
    };
    expect(forms(VALIDATE)).toEqual(['ValidatePdf', ['application/json'], []]);
    expect(forms(`${VALIDATE}/file`)).toEqual(['ValidatePdfFromFile', ['application/pdf'], []]);
    expect(forms(`${VALIDATE}/form`)).toEqual(['ValidatePdfFromForm', ['multipart/form-data'], []]);
    expect(forms(EXTRACT)).toEqual(['ExtractSwissQrCode', ['application/json'], []]);
    expect(forms(`${EXTRACT}/file`)).toEqual([
      'ExtractSwissQrCodeFromFile',
      ['application/pdf', 'image/jpeg', 'image/png', 'image/tiff'],
      ['query:references'],
    ]);
    expect(forms(`${EXTRACT}/form`)).toEqual(['ExtractSwissQrCodeFromForm', ['multipart/form-data'], []]);
    expect(doc.paths[`${VALIDATE}/file`]!.post.requestBody.content['application/pdf']!.schema).toMatchObject({
      type: 'string',
      format: 'binary',
    });
    expect(doc.components.schemas.ExtractSwissQrCodeForm!.properties.file).toMatchObject({
      type: 'string',
      format: 'binary',
    });
  });

  it("answers on /file and /form as on the operation's path, and 415 there for the other forms", async () => {
    const pdf = simplePdf({ pages: 2 });
    for (const path of [VALIDATE, EXTRACT]) {
      const main = await answer(await send(t.app, path, 'pdf', pdf));
      expect(await answer(await send(t.app, `${path}/file`, 'pdf', pdf))).toEqual(main);
      expect(await answer(await send(t.app, `${path}/form`, 'multipart', pdf))).toEqual(main);
      for (const [suffix, form] of [
        ['/file', 'json'],
        ['/file', 'multipart'],
        ['/form', 'json'],
        ['/form', 'pdf'],
      ] as const)
        await problem(await send(t.app, `${path}${suffix}`, form, pdf), 415, 'unsupported-media-type');
    }
  });
});

describe('multipart parsing', () => {
  const parse = (text: string, boundary = 'b0undary') =>
    parseMultipart(enc.encode(text), boundary).map((p) => ({ ...p, body: new TextDecoder().decode(p.body) }));

  it('reads parts between a preamble and an epilogue, with quoted names and CRLFs inside the content', () => {
    const parts = parse(
      'preamble\r\n--b0undary\r\nContent-Disposition: form-data; name="a \\"q\\""; filename="x.pdf"\r\nContent-Type: application/pdf\r\n\r\nline1\r\n--b0undar\r\nline2\r\n--b0undary  \r\ncontent-disposition: form-data; name=plain\r\n\r\n\r\n--b0undary--\r\nepilogue',
    );
    expect(parts).toEqual([
      { name: 'a "q"', filename: 'x.pdf', contentType: 'application/pdf', body: 'line1\r\n--b0undar\r\nline2' },
      { name: 'plain', filename: undefined, contentType: undefined, body: '' },
    ]);
  });

  it('returns views of the body, not copies', () => {
    const body = enc.encode('--b\r\nContent-Disposition: form-data; name="file"\r\n\r\n%PDF-1.7 bytes\r\n--b--');
    const [file] = parseMultipart(body, 'b');
    expect(file!.body.buffer).toBe(body.buffer);
  });

  it.each([
    ['no delimiter', 'hello'],
    ['no close delimiter', '--b0undary\r\nContent-Disposition: form-data; name="a"\r\n\r\nx'],
    ['no Content-Disposition', '--b0undary\r\nContent-Type: text/plain\r\n\r\nx\r\n--b0undary--'],
    ['no name', '--b0undary\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b0undary--'],
    ['headers without an end', '--b0undary\r\nContent-Disposition: form-data; name="a"\r\nx\r\n--b0undary--'],
  ])('refuses %s', (_, text) => {
    expect(() => parse(text)).toThrow();
  });

  it('reads the boundary parameter, quoted or not', () => {
    expect(boundaryOf('multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW')).toBe(
      '----WebKitFormBoundary7MA4YWxkTrZu0gW',
    );
    expect(boundaryOf('multipart/form-data; charset=utf-8; BOUNDARY="a b:c"')).toBe('a b:c');
    expect(boundaryOf('multipart/form-data')).toBeUndefined();
    expect(boundaryOf(`multipart/form-data; boundary=${'x'.repeat(71)}`)).toBeUndefined();
  });

  it('finds byte strings like indexOf on text', () => {
    const hay = enc.encode('abcabcabd--xx--abcabd');
    for (const needle of ['abd', 'abcabd', '--xx--', 'a', 'zz', 'dab']) {
      expect(indexOfBytes(hay, enc.encode(needle)), needle).toBe('abcabcabd--xx--abcabd'.indexOf(needle));
      expect(indexOfBytes(hay, enc.encode(needle), 5), needle).toBe('abcabcabd--xx--abcabd'.indexOf(needle, 5));
    }
  });
});

/** Reads a corpus PDF's JSON answer and holds the other two forms to it. */
describeShared('bodies: the PDF corpus answered alike in the three forms', () => {
  const { files } = readSharedJson<{
    files: { file: string; bytes: number; expected: { status: number; problem?: string } }[];
  }>('corpus/pdf/manifest.json');
  // Bombs and files over 5 MB are answered alike too, but take seconds each: the forms' parsing is the same for them.
  // The empty file is the one difference: empty Base64 is invalid-base64, an empty file invalid-pdf (tested above).
  const cases = files.filter(
    (f) => f.bytes > 0 && f.bytes < 5_000_000 && !/bomb/.test(f.file) && sharedExists('corpus/pdf', f.file),
  );

  it.each(cases)('$file', async ({ file }) => {
    const pdf = readShared('corpus/pdf', file);
    const json = await answer(await send(t.app, VALIDATE, 'json', pdf));
    for (const form of ['pdf', 'multipart'] as const)
      expect(await answer(await send(t.app, VALIDATE, form, pdf)), form).toEqual(json);
  });
});

const extractAs =
  (form: 'pdf' | 'multipart'): ExtractRequest =>
  async (pdf, references) => {
    const res = await send(t.app, EXTRACT, form, pdf, JSON.stringify(references));
    return {
      status: res.status,
      contentType: res.headers.get('content-type'),
      body: (await res.json()) as Record<string, unknown>,
    };
  };

describeShared('bodies: the QR-bill corpus as application/pdf', () => qrCorpusPdfSuites(() => extractAs('pdf')));
describeShared('bodies: the QR-bill corpus as multipart/form-data', () =>
  qrCorpusPdfSuites(() => extractAs('multipart')),
);
