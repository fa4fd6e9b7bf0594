import type { Clock } from '../ports.ts';
import type { EngineRefusal, PageSource, PlacedRaster, Raster } from '../pdf/engine/port.ts';
import { readQrBill, type QrBill, type QrBillReading, type QrBillRejection } from './bill.ts';
import type { BarcodeReader } from './reader.ts';

/** What the last page of a document holds, as far as QR-bills go. */
export type ScanOutcome =
  /** `pass`: the extraction pass whose reading of the page found the winning code (for the metrics). */
  | { status: 'found'; bill: QrBill; pass: ScanPass }
  /** No valid bill: every QR code found, in reading order, with why it is not one (empty: no QR code at all). */
  | { status: 'not-found'; rejected: { index: number; reason: QrBillRejection }[] }
  | EngineRefusal;

export interface ScanOptions {
  pages: PageSource;
  reader: BarcodeReader;
  clock: Clock;
  timeoutMs: number;
}

/**
 * The passes, cheapest first; the search ends after the first render pass that yields a valid bill. The first covers
 * the whole page at 100 dpi (a version 10-13 bill code gets about 2.6 pixels a module, enough for vector bills and clean
 * scans), so every code on the page competes in reading order. The payment part (bottom 105 mm) at 150 dpi, the page
 * at 150 dpi and finally 300 dpi with zxing's tryHarder are for small codes and poor scans. Embedded images are read
 * first, on their own pixels, but only add candidates: a bill drawn as vector above them must still win.
 */
const PASSES = [
  { name: 'images', kind: 'images' },
  { name: 'page-100dpi', kind: 'render', region: 'page', dpi: 100, tryHarder: false },
  { name: 'payment-part-150dpi', kind: 'render', region: 'payment-part', dpi: 150, tryHarder: false },
  { name: 'page-150dpi', kind: 'render', region: 'page', dpi: 150, tryHarder: false },
  { name: 'page-300dpi-tryharder', kind: 'render', region: 'page', dpi: 300, tryHarder: true },
] as const;

export type ScanPass = (typeof PASSES)[number]['name'];
export const SCAN_PASSES: readonly ScanPass[] = PASSES.map((p) => p.name);

/** A QR code on the page: what it says as a bill, and where its top left corner is, as fractions of the page. */
interface FoundCode {
  pass: ScanPass;
  reading: QrBillReading;
  x: number;
  y: number;
}

/**
 * Reads the QR-bill on the last page. When the page holds several codes, the first valid bill in reading order (top to
 * bottom, left to right) among the codes found so far wins.
 */
export async function scanLastPage(pdf: Uint8Array, { pages, reader, clock, timeoutMs }: ScanOptions): Promise<ScanOutcome> {
  const deadline = clock.now() + timeoutMs;
  const opened = await pages.withLastPage(pdf, async (page): Promise<ScanOutcome> => {
    const found = new Map<string, FoundCode>();
    for (const pass of PASSES) {
      if (clock.now() > deadline) return { status: 'too-complex', reason: 'time budget exhausted while reading QR codes' };
      const rasters: { placed: PlacedRaster; tryHarder: boolean }[] =
        pass.kind === 'images'
          ? page.images(looksLikeQrImage).map((placed) => ({ placed: { ...placed, raster: withQuietZone(placed.raster) }, tryHarder: false }))
          : [{ placed: page.render(pass.region, pass.dpi), tryHarder: pass.tryHarder }];
      for (const { placed, tryHarder } of rasters) {
        for (const symbol of await reader.readQrCodes(placed.raster, { tryHarder })) {
          const text = UTF8.decode(symbol.bytes);
          if (!found.has(text)) found.set(text, { pass: pass.name, reading: readQrBill(text), x: placed.box.x + symbol.box.x * placed.box.w, y: placed.box.y + symbol.box.y * placed.box.h });
        }
      }
      if (pass.kind === 'images') continue;
      const first = [...found.values()].sort(readingOrder).find((code) => code.reading.ok);
      if (first?.reading.ok) return { status: 'found', bill: first.reading.bill, pass: first.pass };
    }
    // Every render pass ran and none yielded a bill, so no reading here is valid.
    const rejected = [...found.values()].sort(readingOrder).flatMap(({ reading }, index) => (reading.ok ? [] : [{ index, reason: reading.reason }]));
    return { status: 'not-found', rejected };
  });
  return opened.status === 'opened' ? opened.value : opened;
}

const UTF8 = new TextDecoder('utf-8');

/** Codes whose tops are within 2% of the page height of each other share a row and are read left to right. */
function readingOrder(a: FoundCode, b: FoundCode): number {
  return Math.abs(a.y - b.y) < 0.02 ? a.x - b.x : a.y - b.y;
}

/** An image that could be a QR code on its own: square-ish, at least version 1's 21 modules, not a full-page scan. */
function looksLikeQrImage(width: number, height: number): boolean {
  const ratio = width / height;
  return Math.min(width, height) >= 21 && Math.max(width, height) <= 2000 && ratio > 0.8 && ratio < 1.25;
}

/**
 * An embedded QR image is often cropped to its modules (no quiet zone) and may be 1 pixel a module; a decoder needs
 * the white margin and a few pixels a module. Pads by a sixth of the size and scales small images up (nearest pixel).
 */
function withQuietZone(raster: Raster): Raster {
  const scale = Math.max(1, Math.ceil(200 / Math.min(raster.width, raster.height)));
  const margin = Math.ceil((Math.max(raster.width, raster.height) * scale) / 6);
  const width = raster.width * scale + 2 * margin;
  const height = raster.height * scale + 2 * margin;
  const data = new Uint8ClampedArray(width * height * 4).fill(255);
  for (let y = 0; y < raster.height * scale; y++) {
    const sy = Math.floor(y / scale);
    for (let x = 0; x < raster.width * scale; x++) {
      const s = (sy * raster.width + Math.floor(x / scale)) * 4;
      const d = ((y + margin) * width + x + margin) * 4;
      data[d] = raster.data[s]!;
      data[d + 1] = raster.data[s + 1]!;
      data[d + 2] = raster.data[s + 2]!;
    }
  }
  return { width, height, data };
}
