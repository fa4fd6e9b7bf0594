import type { Clock } from '../ports.ts';
import type { PageSource } from '../pdf/engine/port.ts';
import type { BarcodeReader } from './reader.ts';
import { scanLastPage, type ScanOutcome } from './scan.ts';

/** The port through which the app reads QR-bills; adapters decide where the scan runs (in process, a worker thread). */
export interface QrExtractor {
  /** May take ownership of `pdf` and the buffer it views, as PdfEngine.inspect may. */
  scan(pdf: Uint8Array): Promise<ScanOutcome>;
}

/** Scans in this thread, with engines of this isolate. */
export function localQrExtractor(options: {
  pages: PageSource;
  reader: BarcodeReader;
  clock: Clock;
  timeoutMs: number;
}): QrExtractor {
  return { scan: (pdf) => scanLastPage(pdf, options) };
}
