/** Worker thread body: one PDFium and one zxing instance, answering one request from the main thread at a time. */
import { parentPort, workerData } from 'node:worker_threads';
import { PdfiumEngine } from '../../pdf/engine/pdfium.ts';
import { scanLastPage } from '../../qr/scan.ts';
import { ZxingReader } from '../../qr/zxing.ts';
import type { EngineModules } from '../shared/deps.ts';
import type { EngineJob } from './worker-engine.ts';

// A page with one drawn square: the scan renders a page only when something besides images is drawn on it.
const WARM_UP_PDF =
  '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj ' +
  '3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 9 9]/Contents 4 0 R>>endobj ' +
  '4 0 obj<</Length 12>>stream\n1 1 2 2 re f\nendstream endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n';

const { modules, memoryLimitBytes, timeoutMs } = workerData as {
  modules: EngineModules;
  memoryLimitBytes: number;
  timeoutMs: number;
};
const engine = new PdfiumEngine({ wasm: modules.pdfium, memoryLimitBytes });
const reader = new ZxingReader(modules.zxing);
const clock = { now: () => performance.now() };

parentPort!.on('message', async ({ kind, pdf }: EngineJob) => {
  try {
    const result =
      kind === 'inspect'
        ? await engine.inspect(pdf)
        : await scanLastPage(pdf, { pages: engine, reader, clock, timeoutMs });
    parentPort!.postMessage({ result });
  } catch (e) {
    parentPort!.postMessage({ error: (e as Error).message });
  } finally {
    release(pdf.buffer as ArrayBuffer);
  }
});

/**
 * Frees a request's buffer now instead of at this mostly idle thread's next garbage collection, which may be many
 * megabyte-sized documents later: a buffer transferred into a message that is never read is freed with the port.
 */
function release(buffer: ArrayBuffer): void {
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(null, [buffer]);
  port1.close();
  port2.close();
}

// Warm up both engines: V8 compiles WebAssembly functions lazily, and a first call should not be charged against a
// customer's document time limit.
const warmUp = new TextEncoder().encode(WARM_UP_PDF);
await engine.inspect(warmUp);
await scanLastPage(warmUp, { pages: engine, reader, clock, timeoutMs });
parentPort!.postMessage({ ready: true });
