/**
 * Overload (docs/contract/http.md, "Overload"): MAX_INFLIGHT_MB bounds the request bodies being read or worked on,
 * answering 503 `overloaded` with Retry-After before a body is read; QUEUE_TIMEOUT_MS bounds the wait for an engine,
 * and that wait never counts as PDF time. And /metrics moves with the requests.
 */
import { describe, expect, it } from 'vitest';
import type { PdfEngine } from '../../src/pdf/engine/port.ts';
import { EngineQueue } from '../../src/pdf/engine/queue.ts';
import { postJson, problem, testApp } from '../support/http/app.ts';
import { metadataBombPdf } from '../support/pdf/bomb-pdf.ts';
import { simplePdf, toBase64 } from '../support/pdf/pdf-builder.ts';
import { PAYMENT_PART_CODE, SAMPLE_BILL, billCode, qrBillPdf } from '../support/qr/qr-bills.ts';

const VALIDATE = '/api/v1/documents/validate';
const EXTRACT = '/api/v1/documents/extract-swiss-qr-code';
const KiB = 1024;

/** A body whose bytes the test hands over when it likes; `pulled` tells whether the service started reading it. */
function heldBody() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const state = { pulled: false };
  const stream = new ReadableStream<Uint8Array>(
    {
      start: (c) => {
        controller = c;
      },
      pull: () => {
        state.pulled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return {
    stream,
    state,
    send: (bytes: Uint8Array) => {
      controller.enqueue(bytes);
      controller.close();
    },
  };
}

const pdfRequest = (
  app: Awaited<ReturnType<typeof testApp>>['app'],
  stream: ReadableStream<Uint8Array>,
  length?: number,
) =>
  app.request(VALIDATE, {
    method: 'POST',
    headers: {
      'content-type': 'application/pdf',
      ...(length === undefined ? {} : { 'content-length': String(length) }),
    },
    body: stream,
    duplex: 'half',
  } as RequestInit);

describe('MAX_INFLIGHT_MB', () => {
  it('answers 503 overloaded with Retry-After before reading a body that would not fit, and admits again once answered', async () => {
    const t = await testApp({ MAX_BODY_MB: '1', MAX_INFLIGHT_MB: '1' });
    const pdf = simplePdf({ contentBytes: 600 * KiB });
    const first = heldBody();
    const answered = pdfRequest(t.app, first.stream, pdf.length); // reserves 600 KiB and waits for its bytes

    const second = heldBody();
    const refused = await pdfRequest(t.app, second.stream, pdf.length);
    const p = await problem(refused, 503, 'overloaded');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(p.detail).toMatch(/MAX_INFLIGHT_MB/);
    expect(second.state.pulled, 'the refused body was never read').toBe(false);
    // a small one still fits beside the first
    expect((await postJson(t.app, VALIDATE, { base64Pdf: toBase64(simplePdf()) })).status).toBe(200);

    first.send(pdf);
    expect((await answered).status).toBe(200);
    const third = heldBody();
    const admitted = pdfRequest(t.app, third.stream, pdf.length);
    third.send(pdf);
    expect((await admitted).status).toBe(200);
  });

  it('lets a body without Content-Length reserve as it arrives, and refuses it when the budget runs out', async () => {
    const t = await testApp({ MAX_BODY_MB: '1', MAX_INFLIGHT_MB: '1' });
    const holder = heldBody();
    const held = pdfRequest(t.app, holder.stream, 1000 * KiB); // leaves 24 KiB of the budget
    const chunked = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array(10 * KiB));
        c.close();
      },
    });
    // Its first buffer (64 KiB) does not fit in what is left.
    await problem(await pdfRequest(t.app, chunked), 503, 'overloaded');
    holder.send(simplePdf({ contentBytes: 1000 * KiB - 2000 }).subarray(0, 1000 * KiB));
    await held;
  });

  it('refuses a MAX_INFLIGHT_MB below MAX_BODY_MB at start', async () => {
    await expect(testApp({ MAX_BODY_MB: '64', MAX_INFLIGHT_MB: '32' })).rejects.toThrow(
      /MAX_INFLIGHT_MB \(32\) must be at least MAX_BODY_MB \(64\)/,
    );
  });
});

describe('QUEUE_TIMEOUT_MS', () => {
  /** An engine that holds every document until released. */
  function heldEngine() {
    const waiting: (() => void)[] = [];
    const engine: PdfEngine = {
      inspect: () =>
        new Promise((resolve) =>
          waiting.push(() =>
            resolve({ status: 'opened', pageCount: 1, version: '1.7', attachmentCount: 0, firstAndLastPageLoad: true }),
          ),
        ),
    };
    return {
      engine,
      releaseAll: () => {
        for (const go of waiting.splice(0)) go();
      },
      started: () => waiting.length,
    };
  }

  it('answers 503 overloaded to a document that waited that long for the engine, not pdf-too-complex', async () => {
    const held = heldEngine();
    const queue = new EngineQueue(100);
    const t = await testApp(
      { QUEUE_TIMEOUT_MS: '100', PDF_TIMEOUT_MS: '100' },
      {
        ...queue.wrap({ engine: held.engine, qr: { scan: () => Promise.reject(new Error('unused')) } }),
        engineStats: queue,
      },
    );
    const body = { base64Pdf: toBase64(simplePdf()) };
    const first = postJson(t.app, VALIDATE, body);
    await new Promise((r) => setTimeout(r, 10));
    const metrics = await (await t.app.request('/metrics')).text();
    const waited = postJson(t.app, VALIDATE, body);
    await new Promise((r) => setTimeout(r, 10));
    expect(await (await t.app.request('/metrics')).text()).toMatch(/^pdf_documents_waiting 1$/m);
    expect(metrics).toMatch(/^pdf_documents_waiting 0$/m);
    const res = await waited;
    const p = await problem(res, 503, 'overloaded');
    expect(p.detail).toMatch(/QUEUE_TIMEOUT_MS/);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    held.releaseAll();
    expect((await first).status).toBe(200);
  });

  it('starts the PDF time budget when the document gets the engine: a long wait is no pdf-too-complex', async () => {
    // Three real documents queued behind each other on one in-process engine with PDF_TIMEOUT_MS=100: each waits for
    // the ones before it, and each is answered 200.
    const t = await testApp({ QUEUE_TIMEOUT_MS: '30000', PDF_TIMEOUT_MS: '100' });
    const bill = qrBillPdf([{ raster: 150, codes: [{ code: billCode(SAMPLE_BILL), ...PAYMENT_PART_CODE }] }]);
    const answers = await Promise.all(
      [1, 2, 3].map(() => postJson(t.app, EXTRACT, { references: [], base64Pdf: toBase64(bill) })),
    );
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
  });
});

describe('GET /metrics', () => {
  const value = (text: string, series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  it('is the Prometheus text format, and moves when requests are made', async () => {
    const t = await testApp();
    const before = await t.app.request('/metrics');
    expect(before.status).toBe(200);
    expect(before.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text0 = await before.text();
    for (const name of [
      'http_requests_total',
      'http_request_duration_seconds',
      'http_inflight_body_bytes',
      'http_inflight_body_limit_bytes',
      'pdf_documents_waiting',
      'pdf_engine_restarts_total',
      'qr_bills_found_total',
    ]) {
      expect(text0, name).toMatch(new RegExp(`^# TYPE ${name} (counter|gauge|histogram)$`, 'm'));
    }
    expect(value(text0, 'http_inflight_body_limit_bytes')).toBe(512 * 1024 * 1024);
    expect(value(text0, 'qr_bills_found_total{pass="page-100dpi"}')).toBe(0);

    await postJson(t.app, VALIDATE, { base64Pdf: toBase64(simplePdf()) });
    await postJson(t.app, VALIDATE, { base64Pdf: 'nope' });
    await postJson(t.app, EXTRACT, {
      references: [],
      base64Pdf: toBase64(qrBillPdf([{ codes: [{ code: billCode(SAMPLE_BILL), ...PAYMENT_PART_CODE }] }])),
    });
    await t.app.request('/no/such/path/123');
    const text = await (await t.app.request('/metrics')).text();
    expect(value(text, 'http_requests_total{route="/api/v1/documents/validate",method="POST",status="200"}')).toBe(1);
    expect(value(text, 'http_requests_total{route="/api/v1/documents/validate",method="POST",status="400"}')).toBe(1);
    expect(
      value(text, 'http_requests_total{route="/api/v1/documents/extract-swiss-qr-code",method="POST",status="200"}'),
    ).toBe(1);
    expect(value(text, 'http_requests_total{route="/metrics",method="GET",status="200"}')).toBe(1);
    expect(value(text, 'http_requests_total{route="other",method="GET",status="404"}')).toBe(1);
    expect(value(text, 'http_request_duration_seconds_count{route="/api/v1/documents/validate"}')).toBe(2);
    expect(value(text, 'qr_bills_found_total{pass="page-100dpi"}')).toBe(1);
    expect(value(text, 'http_inflight_body_bytes')).toBe(0);
    expect(text).not.toContain('/no/such/path');
  });

  it('counts engine restarts', async () => {
    const queue = new EngineQueue(1000);
    queue.restarted();
    const t = await testApp({}, { engineStats: queue });
    expect(value(await (await t.app.request('/metrics')).text(), 'pdf_engine_restarts_total')).toBe(1);
  });

  it('counts an in-process engine dropped after it aborted at its memory ceiling (Bun, Deno, Workers)', async () => {
    const t = await testApp({ PDF_ENGINE_MEMORY_MB: '32' });
    const res = await postJson(t.app, '/api/v1/documents/validate', { base64Pdf: toBase64(metadataBombPdf(64 << 20)) });
    expect(res.status).toBe(400);
    expect(value(await (await t.app.request('/metrics')).text(), 'pdf_engine_restarts_total')).toBe(1);
  });
});
