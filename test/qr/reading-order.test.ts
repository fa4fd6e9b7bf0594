/**
 * "The first valid bill in reading order wins" across the scan's steps: on pages with two valid bills whose upper code
 * the first step cannot read, the scan must still answer the upper bill (found by a closer look at the finder patterns
 * the first step saw), not the lower one it read first. The pages are built in code (reading-order-pages.ts); the
 * workerd suite posts the same pages (test/runtimes/workers/extract.test.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { PdfiumEngine } from '../../src/pdf/engine/pdfium.ts';
import type { GrayRaster } from '../../src/pdf/engine/port.ts';
import { readQrBill } from '../../src/qr/bill.ts';
import { scanLastPage } from '../../src/qr/scan.ts';
import { ZxingReader } from '../../src/qr/zxing.ts';
import { engineModules } from '../support/app.ts';
import { TWO_BILL_PAGES, UPPER_READ_FIRST } from '../support/reading-order-pages.ts';

let engine: PdfiumEngine;
let reader: ZxingReader;
beforeAll(async () => {
  const modules = await engineModules();
  engine = new PdfiumEngine({ wasm: modules.pdfium, memoryLimitBytes: 256 << 20 });
  reader = new ZxingReader(modules.zxing);
});

const scan = (pdf: Uint8Array) => scanLastPage(pdf, { pages: engine, reader, clock: { now: () => performance.now() }, timeoutMs: 60_000 });

/** What the scan's first step sees: the page at 100 dpi, or a scan's image reduced to about 100 dpi. */
async function firstStep(pdf: Uint8Array, scanDpi: number | undefined): Promise<GrayRaster> {
  const opened = await engine.withLastPage(pdf, async (page) => {
    if (scanDpi === undefined) return page.render('page', 100).raster;
    const [image] = page.contents().images;
    return (await page.withImage(image!, async (pixels) => pixels.read(0, 0, pixels.width, pixels.height, Math.floor(scanDpi / 100))))!;
  });
  if (opened.status !== 'opened') throw new Error(opened.status);
  return opened.value;
}

describe('reading order holds whichever step reads which code', () => {
  it.each(TWO_BILL_PAGES)('$name: the first step reads only the lower bill', async ({ pdf, bill, upper }) => {
    const { codes } = await reader.readQrCodes(await firstStep(pdf, upper.scanDpi), { tryHarder: false });
    const bills = codes.map((c) => readQrBill(new TextDecoder().decode(c.bytes)));
    expect(bills).toHaveLength(1);
    expect(bills[0]!.ok && bills[0]!.bill).not.toEqual(bill);
  });

  it.each(TWO_BILL_PAGES)('$name: the upper bill is answered, read by a closer look', async ({ pdf, bill }) => {
    expect(await scan(pdf)).toStrictEqual({ status: 'found', bill, pass: 'closer-look' });
  });

  it.each(UPPER_READ_FIRST)('$name: the upper bill is answered at once', async ({ pdf, bill }) => {
    const outcome = await scan(pdf);
    expect(outcome).toMatchObject({ status: 'found', bill });
    expect(outcome.status === 'found' && outcome.pass).not.toBe('closer-look');
  });
});
