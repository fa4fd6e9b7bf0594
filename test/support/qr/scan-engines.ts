/** The real PDF engine and QR reader in this thread, for tests of the scan's own steps (test/qr). */
import { PdfiumEngine } from '../../../src/pdf/engine/pdfium.ts';
import type { GrayRaster, LastPage } from '../../../src/pdf/engine/port.ts';
import { scanLastPage, type ScanOutcome } from '../../../src/qr/scan.ts';
import { ZxingReader } from '../../../src/qr/zxing.ts';
import { engineModules } from '../http/app.ts';

export interface ScanEngines {
  engine: PdfiumEngine;
  reader: ZxingReader;
  /** The whole scan of the last page, as the service runs it. */
  scan(pdf: Uint8Array): Promise<ScanOutcome>;
  /** The last page's one image as PDFium decodes it, in grey, every `factor`th row and column. */
  imagePixels(pdf: Uint8Array, factor?: number): Promise<GrayRaster>;
  /** The last page rendered at `dpi`, in grey. */
  renderedPage(pdf: Uint8Array, dpi: number): Promise<GrayRaster>;
}

export async function scanEngines(): Promise<ScanEngines> {
  const modules = await engineModules();
  const engine = new PdfiumEngine({ wasm: modules.pdfium, memoryLimitBytes: 256 << 20 });
  const reader = new ZxingReader(modules.zxing);
  const onLastPage = async <T>(pdf: Uint8Array, work: (page: LastPage) => Promise<T>): Promise<T> => {
    const opened = await engine.withLastPage(pdf, work);
    if (opened.status !== 'opened') throw new Error(opened.status);
    return opened.value;
  };
  return {
    engine,
    reader,
    scan: (pdf) =>
      scanLastPage(pdf, { pages: engine, reader, clock: { now: () => performance.now() }, timeoutMs: 60_000 }),
    imagePixels: (pdf, factor = 1) =>
      onLastPage(pdf, async (page) => {
        const [image] = page.contents().images;
        return (await page.withImage(image!, async (pixels) =>
          pixels.read(0, 0, pixels.width, pixels.height, factor),
        ))!;
      }),
    renderedPage: (pdf, dpi) => onLastPage(pdf, async (page) => page.render('page', dpi).raster),
  };
}
