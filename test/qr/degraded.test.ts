/**
 * Degraded inputs made in code (degraded-bills.ts), read end to end by the scan: office scans (skewed, blurred, noisy
 * JPEG with a toner streak), CCITT G4 faxes and JPEG scans at low resolution, phone photos (perspective, rotation,
 * shadow, blur, colour JPEG), and pages with two bills. First, the encoders themselves, checked against PDFium's
 * decoders. `npm run bench` times the same kinds of input against zbar.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { GrayRaster } from '../../src/pdf/engine/port.ts';
import { scanEngines, type ScanEngines } from '../support/qr/scan-engines.ts';
import {
  BILLS,
  expectedBill,
  fax,
  g4Stream,
  jpegStream,
  lowResJpeg,
  officeScan,
  phonePhoto,
  stripsPdf,
} from '../support/qr/degraded-bills.ts';
import { grayImage, light, seededRandom, type GrayImage } from '../support/qr/gray-image.ts';
import { PAYMENT_PART_CODE, billCode, rasterPage } from '../support/qr/qr-bills.ts';
import { imageOnlyPdf } from '../support/qr/image-pdf.ts';

let engines: ScanEngines;
beforeAll(async () => {
  engines = await scanEngines();
});

const scan = (pdf: Uint8Array) => engines.scan(pdf);

/** The one image of a one-page PDF as PDFium decodes it, in grey. */
const decoded = (pdf: Uint8Array): Promise<GrayRaster> => engines.imagePixels(pdf);

/** A test card: the bill page at 100 dpi with noise, so every run length and grey level occurs. */
function card(): GrayImage {
  const { width, height, gray } = rasterPage({ codes: [{ code: billCode(BILLS[0]!), ...PAYMENT_PART_CODE }] }, 100);
  return light({ width, height, data: gray }, { dim: 0.8, noise: 40, seed: 3 });
}

describe('the encoders, as PDFium decodes them', () => {
  it('CCITT G4: every pixel comes back (runs of every length, the makeup codes included)', async () => {
    const image = card();
    // a row of alternating runs of 1 to 80 pixels, and rows all black and all white, for the rarer codes
    const wide = grayImage(1800, 6);
    for (let x = 0, run = 1, black = true; x < 1800; x += run, run = (run % 80) + 1, black = !black)
      if (black) wide.data.fill(0, x, Math.min(1800, x + run));
    wide.data.fill(0, 1800 * 2, 1800 * 3);
    for (const source of [image, wide]) {
      const out = await decoded(imageOnlyPdf(g4Stream(source)));
      expect([out.width, out.height]).toEqual([source.width, source.height]);
      const expected = Uint8Array.from(source.data, (v) => (v < 150 ? 0 : 255));
      expect(Buffer.from(out.data).equals(Buffer.from(expected))).toBe(true);
    }
  });

  it.each([
    ['grey', 90, 3],
    ['grey', 40, 15],
    ['colour (4:2:0)', 90, 4],
  ] as const)('JPEG %s at quality %d: close to the source (mean error under %d)', async (kind, quality, limit) => {
    const image = card();
    const random = seededRandom(9);
    const tint = Uint8Array.from(image.data, (v) => Math.min(255, v * (0.9 + random() * 0.1)));
    const source =
      kind === 'grey'
        ? jpegStream(image, quality)
        : jpegStream({ width: image.width, height: image.height, r: image.data, g: image.data, b: tint }, quality);
    const out = await decoded(imageOnlyPdf(source));
    let error = 0;
    for (let i = 0; i < out.data.length; i++) error += Math.abs(out.data[i]! - image.data[i]!);
    expect(error / out.data.length).toBeLessThan(limit);
  });
});

describe('degraded pages are read', () => {
  const cases: [string, () => Uint8Array, number][] = [
    [
      'an office scan at 200 dpi, skewed, with a toner streak',
      () => officeScan({ data: BILLS[0], dpi: 200, seed: 1 }),
      0,
    ],
    ['an office scan at 300 dpi', () => officeScan({ data: BILLS[1], dpi: 300, seed: 2 }), 1],
    ['a fax at 200 dpi (G4)', () => fax({ data: BILLS[2], dpi: 200, seed: 3 }), 2],
    ['a fax at 100 dpi (G4)', () => fax({ data: BILLS[0], dpi: 100, seed: 4 }), 0],
    ['a JPEG scan at 75 dpi, quality 45', () => lowResJpeg({ data: BILLS[1], dpi: 75, seed: 5 }), 1],
    ['a JPEG scan at 100 dpi', () => lowResJpeg({ data: BILLS[2], dpi: 100, seed: 6 }), 2],
    ['a 3-megapixel phone photo', () => phonePhoto({ data: BILLS[0], megapixels: 3, seed: 7 }), 0],
    [
      'a 3-megapixel phone photo, turned 12° and tilted',
      () => phonePhoto({ data: BILLS[1], megapixels: 3, seed: 8, rotation: 12, tilt: 0.15 }),
      1,
    ],
    [
      'an 8-megapixel phone photo, turned 15°, tilted and blurred',
      () => phonePhoto({ data: BILLS[2], megapixels: 8, seed: 9, rotation: 15, tilt: 0.2, blurRadius: 2 }),
      2,
    ],
  ];

  it.each(cases)('%s', async (_, make, bill) => {
    expect(await scan(make())).toMatchObject({ status: 'found', bill: expectedBill(BILLS[bill]!) });
  });

  it('a 200 dpi scan written as 12 strips, the code across two of them', async () => {
    const { width, height, gray } = rasterPage({ codes: [{ code: billCode(BILLS[2]!), ...PAYMENT_PART_CODE }] }, 200);
    // 12 bands of 195 rows: the code (from 209 mm, 1646 px, to 255 mm) crosses the band edge at 1755 px
    expect(await scan(stripsPdf({ width, height, data: gray }, 12))).toMatchObject({
      status: 'found',
      bill: expectedBill(BILLS[2]!),
    });
  });

  // A 30 mm code is too small to be seen in a photo of the whole page (about 1.5 pixels a module at the working
  // resolution); the IG's 46 mm ones are not.
  const twoBills = (size: number) => ({
    codes: [
      { code: billCode(BILLS[1]!), x: 140, y: 20, size },
      { code: billCode(BILLS[0]!), ...PAYMENT_PART_CODE },
    ],
  });
  it.each([
    ['an office scan at 200 dpi, the upper one 30 mm', () => officeScan({ page: twoBills(30), dpi: 200, seed: 11 })],
    ['an 8-megapixel phone photo', () => phonePhoto({ page: twoBills(46), megapixels: 8, seed: 12 })],
    ['a 3-megapixel phone photo', () => phonePhoto({ page: twoBills(46), megapixels: 3, seed: 13 })],
  ])('two bills on %s: the upper one is answered', async (_, make) => {
    expect(await scan(make())).toMatchObject({ status: 'found', bill: expectedBill(BILLS[1]!) });
  });
});
