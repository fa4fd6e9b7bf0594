/** Worker thread body: one PDFium instance answering `inspect` requests from the main thread. */
import { parentPort, workerData } from 'node:worker_threads';
import { PdfiumEngine } from '../../pdf/engine/pdfium.ts';
import { loadPdfiumWasm } from './deps.ts';

const engine = new PdfiumEngine({ wasm: await loadPdfiumWasm(), memoryLimitBytes: (workerData as { memoryLimitBytes: number }).memoryLimitBytes });

parentPort!.on('message', async ({ id, pdf }: { id: number; pdf: Uint8Array }) => {
  try {
    parentPort!.postMessage({ id, report: await engine.inspect(pdf) });
  } catch (e) {
    parentPort!.postMessage({ id, error: (e as Error).message });
  }
});
parentPort!.postMessage({ ready: true });
