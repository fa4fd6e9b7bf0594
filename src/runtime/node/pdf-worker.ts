/** Worker thread body: one PDFium instance answering `inspect` requests from the main thread, one at a time. */
import { parentPort, workerData } from 'node:worker_threads';
import { PdfiumEngine } from '../../pdf/engine/pdfium.ts';
import { loadPdfiumWasm } from './deps.ts';

const engine = new PdfiumEngine({ wasm: await loadPdfiumWasm(), memoryLimitBytes: (workerData as { memoryLimitBytes: number }).memoryLimitBytes });

parentPort!.on('message', async ({ pdf }: { pdf: Uint8Array }) => {
  try {
    parentPort!.postMessage({ report: await engine.inspect(pdf) });
  } catch (e) {
    parentPort!.postMessage({ error: (e as Error).message });
  }
});
await engine.load();
parentPort!.postMessage({ ready: true });
