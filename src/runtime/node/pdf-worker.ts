/** Worker thread body: one PDFium instance answering `inspect` requests from the main thread, one at a time. */
import { parentPort, workerData } from 'node:worker_threads';
import { PdfiumEngine } from '../../pdf/engine/pdfium.ts';

const WARM_UP_PDF =
  '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj ' +
  '3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 9 9]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n';

const { wasm, memoryLimitBytes } = workerData as { wasm: WebAssembly.Module; memoryLimitBytes: number };
const engine = new PdfiumEngine({ wasm, memoryLimitBytes });

parentPort!.on('message', async ({ pdf }: { pdf: Uint8Array }) => {
  try {
    parentPort!.postMessage({ report: await engine.inspect(pdf) });
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
// Warm up on a one-page document: V8 compiles WebAssembly functions lazily, and a first call should not be charged
// against a customer's document time limit.
await engine.inspect(new TextEncoder().encode(WARM_UP_PDF));
parentPort!.postMessage({ ready: true });
