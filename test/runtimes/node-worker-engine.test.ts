import { afterAll, describe, expect, it } from 'vitest';
import { EngineBusyError } from '../../src/pdf/engine/queue.ts';
import { WorkerPdfEngine } from '../../src/runtime/node/worker-engine.ts';
import { metadataBombPdf } from '../support/pdf/bomb-pdf.ts';
import { engineModules } from '../support/http/app.ts';
import { simplePdf } from '../support/pdf/pdf-builder.ts';

/** 64 MiB of zeros as XMP metadata, which PDFium inflates while opening the document. */
const bombWithMetadata = () => metadataBombPdf(64 << 20);

describe('WorkerPdfEngine (Node)', async () => {
  const modules = await engineModules();
  const engines: WorkerPdfEngine[] = [];
  afterAll(async () => {
    await Promise.all(engines.map((e) => e.close()));
  });
  const engine = (o: Partial<ConstructorParameters<typeof WorkerPdfEngine>[0]> = {}) => {
    const e = new WorkerPdfEngine({ modules, workers: 1, timeoutMs: 10000, memoryLimitBytes: 256 << 20, ...o });
    engines.push(e);
    return e;
  };

  it('opens documents in a worker thread, taking the bytes by transfer', async () => {
    const pdf = simplePdf({ pages: 4, attachments: 1 });
    const report = await engine().inspect(pdf);
    expect(report).toEqual({
      status: 'opened',
      pageCount: 4,
      version: '1.7',
      attachmentCount: 1,
      firstAndLastPageLoad: true,
    });
    expect(pdf.byteLength).toBe(0);
    // a view into a larger buffer (a request body the document was decoded in) crosses the same way
    const view = simplePdf();
    const body = new Uint8Array(view.length + 10);
    body.set(view, 5);
    const inner = body.subarray(5, 5 + view.length);
    expect((await engine().inspect(inner)).status).toBe('opened');
    expect(body.byteLength).toBe(0);
  });

  it('stops a document past the time limit, and the queue behind it still gets answers', async () => {
    // 1 ms is far below what inflating 64 MiB takes, so this document always runs out of time.
    // Inflating 64 MiB takes PDFium far longer than 100 ms; opening a one-page file takes well under a millisecond.
    const e = engine({ timeoutMs: 100, memoryLimitBytes: 2047 << 20 });
    const [slow, next] = await Promise.all([e.inspect(bombWithMetadata()), e.inspect(simplePdf())]);
    expect(slow).toMatchObject({ status: 'too-complex', reason: expect.stringMatching(/time limit/) });
    expect(next.status).toBe('opened');
  });

  it('refuses a document that waited QUEUE_TIMEOUT_MS for a worker, and counts waiting documents and restarts', async () => {
    // The bomb holds the one worker far longer than 50 ms; the document behind it gives up waiting, not working.
    const e = engine({ timeoutMs: 300, queueTimeoutMs: 50, memoryLimitBytes: 2047 << 20 });
    const slow = e.inspect(bombWithMetadata());
    const waiting = e.inspect(simplePdf());
    expect(e.waiting()).toBe(1);
    await expect(waiting).rejects.toBeInstanceOf(EngineBusyError);
    expect(e.waiting()).toBe(0);
    expect(await slow).toMatchObject({ status: 'too-complex' });
    expect(e.restarts()).toBe(1);
    expect((await e.inspect(simplePdf())).status).toBe('opened');
  });

  it('answers a memory-ceiling abort as too-complex and keeps working', async () => {
    const e = engine({ memoryLimitBytes: 32 << 20 });
    expect((await e.inspect(bombWithMetadata())).status).toBe('too-complex');
    expect((await e.inspect(simplePdf())).status).toBe('opened');
  });
});
