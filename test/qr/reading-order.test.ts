/**
 * "The first valid bill in reading order wins" across the scan's steps: on pages with two valid bills whose upper code
 * the first step cannot read, the scan must still answer the upper bill (found by a closer look at the finder patterns
 * the first step saw), not the lower one it read first. The pages are built in code (reading-order-pages.ts); the
 * workerd suite posts the same pages (test/runtimes/workers/extract.test.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { GrayRaster } from '../../src/pdf/engine/port.ts';
import { readQrBill } from '../../src/qr/bill.ts';
import { scanEngines, type ScanEngines } from '../support/qr/scan-engines.ts';
import { TWO_BILL_PAGES, UPPER_READ_FIRST } from '../support/qr/reading-order-pages.ts';

let engines: ScanEngines;
beforeAll(async () => {
  engines = await scanEngines();
});

const scan = (pdf: Uint8Array) => engines.scan(pdf);

/** What the scan's first step sees: the page at 100 dpi, or a scan's image reduced to about 100 dpi. */
function firstStep(pdf: Uint8Array, scanDpi: number | undefined): Promise<GrayRaster> {
  return scanDpi === undefined ? engines.renderedPage(pdf, 100) : engines.imagePixels(pdf, Math.floor(scanDpi / 100));
}

describe('reading order holds whichever step reads which code', () => {
  it.each(TWO_BILL_PAGES)('$name: the first step reads only the lower bill', async ({ pdf, bill, upper }) => {
    const { codes } = await engines.reader.readQrCodes(await firstStep(pdf, upper.scanDpi), { tryHarder: false });
    const bills = codes.map((c) => readQrBill(new TextDecoder().decode(c.bytes)));
    expect(bills).toHaveLength(1);
    expect(bills[0]!.ok && bills[0]!.bill).not.toEqual(bill);
  });

  it.each(TWO_BILL_PAGES)('$name: the upper bill is answered, read by a closer look', async ({ pdf, bill }) => {
    expect(await scan(pdf)).toStrictEqual({ status: 'found', bill, pass: 'closer-look', warnings: expect.any(Array) });
  });

  it.each(UPPER_READ_FIRST)('$name: the upper bill is answered at once', async ({ pdf, bill }) => {
    const outcome = await scan(pdf);
    expect(outcome).toMatchObject({ status: 'found', bill });
    expect(outcome.status === 'found' && outcome.pass).not.toBe('closer-look');
  });
});
