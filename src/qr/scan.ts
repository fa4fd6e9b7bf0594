import type { Clock } from '../ports.ts';
import {
  boxAround,
  type EngineRefusal,
  type GrayRaster,
  type ImagePixels,
  type LastPage,
  type PageBox,
  type PageContents,
  type PageImage,
  type PageRegion,
  type PageSource,
  type PlacedRaster,
} from '../pdf/engine/port.ts';
import { readQrBill, type QrBill, type QrBillReading, type QrBillRejection } from './bill.ts';
import { enlarged, framed } from './gray.ts';
import { type AnsweredCode, inspectAnswered } from './inspect.ts';
import { leadsIn, type Lead } from './leads.ts';
import type { BarcodeReader, RasterBox, RasterReading } from './reader.ts';
import { hasSwissCross } from './symbol.ts';
import type { QrBillWarning } from './warnings.ts';

/** What the last page of a document holds, as far as QR-bills go. */
export type ScanOutcome =
  /**
   * `pass`: the step whose reading found the winning code (for the metrics); `warnings`: what the page and the symbol
   * say about it (the printed payment part compared with the code, the symbol's facts).
   */
  | { status: 'found'; bill: QrBill; pass: ScanPass; warnings: QrBillWarning[] }
  /** No valid bill: every QR code found, in reading order, with why it is not one (empty: no QR code at all). */
  | { status: 'not-found'; rejected: { index: number; reason: QrBillRejection }[] }
  | EngineRefusal;

export interface ScanOptions {
  pages: PageSource;
  reader: BarcodeReader;
  clock: Clock;
  timeoutMs: number;
  /** Told of each step as it ends, with its milliseconds (the bench's breakdown of where time goes). */
  trace?: (step: string, ms: number) => void;
  /** Compare the printed payment part with the code (default true; the bench measures the scan without it). */
  checkPrinted?: boolean;
}

/**
 * Where codes are looked for, cheapest first:
 * 1. every image object on its own pixels: a small square one (a QR code image) whole, with a quiet zone added; a
 *    larger one (a scan, a photo) reduced to about WORK_DPI, where codes are located, each doubtful place then read
 *    from a crop at the image's full resolution (a 12-megapixel photo is read whole only once, by the image decoder);
 * 2. unless the page is one image and nothing else: the page rendered at 100 dpi (a version 10-13 bill code gets about 2.6 pixels
 *    a module, enough for vector bills and clean scans), doubtful places rendered again at a higher resolution;
 * 3. only when no valid bill was found: a page that is one image, that image again, finer and with tryHarder; any other
 *    page rendered: the payment part (bottom 105 mm) at 150 dpi, the page at 150 dpi and at 300 dpi with tryHarder,
 *    for small codes and poor scans that left no trace at 100 dpi.
 * The answer is the first valid bill in reading order among all codes found, whichever step found which. The search
 * stops early only when nothing left could come before that bill: every image read, and no finder pattern or
 * undecoded code that no read code explains lying before it (see leads.ts).
 */
const FALLBACK_PASSES = [
  { name: 'payment-part-150dpi', region: 'payment-part', dpi: 150, tryHarder: false },
  { name: 'page-150dpi', region: 'page', dpi: 150, tryHarder: false },
  { name: 'page-300dpi-tryharder', region: 'page', dpi: 300, tryHarder: true },
] as const;

/** The steps above by name; `closer-look` is any lead read from a crop or a render of its box. */
export const SCAN_PASSES = [
  'images',
  'images-fine',
  'page-100dpi',
  'closer-look',
  ...FALLBACK_PASSES.map((p) => p.name),
] as const;
export type ScanPass = (typeof SCAN_PASSES)[number];

/** Resolution at which large images are searched for codes: a 46 mm bill code of version 13 gets 2.6 pixels a module. */
const WORK_DPI = 100;
/** The largest working raster, whatever the page's size. */
const MAX_WORK_PIXELS = 2_500_000;
/**
 * Where a page is one image and no bill was found in it at WORK_DPI, the image is read again while its pixels
 * are at hand: at about FINE_DPI (at most MAX_FINE_PIXELS) with zxing's tryHarder. Rendering the page could show no
 * more than these pixels, so such a page is never rendered.
 */
const FINE_DPI = 200;
const MAX_FINE_PIXELS = 4_000_000;
/** Pixels a module a closer look aims at: zxing reads reliably from 3 up, and more only costs time. */
const LOOK_MODULE = 4;
/** An image this large is a scan or a photo, read on its own pixels even on a page that is rendered. */
const MIN_SCAN_PIXELS = 1_000_000;
/** Closer looks per page at most: a page of stamps and logos must not turn into hundreds of renders. */
const MAX_LOOKS = 8;

/** A QR code on the page: what it says as a bill, and where it is, as fractions of the page. */
interface FoundCode {
  reading: QrBillReading;
  box: PageBox;
  pass: ScanPass;
  symbol: Omit<AnsweredCode, 'bill' | 'box'>;
}

/** A lead placed on the page, with how to look at it closer. */
interface PageLead {
  box: PageBox;
  anchor: { x: number; y: number };
  look: () => Promise<void>;
}

/** From one raster's pixels to another's, or to the page's fractions. */
type Mapping = (x: number, y: number) => { x: number; y: number };

class TimeUp extends Error {}

/**
 * Reads the QR-bill on the last page. When the page holds several codes, the first valid bill in reading order (top to
 * bottom, left to right) wins.
 */
export async function scanLastPage(
  pdf: Uint8Array,
  { pages, reader, clock, timeoutMs, trace, checkPrinted = true }: ScanOptions,
): Promise<ScanOutcome> {
  const deadline = clock.now() + timeoutMs;
  const opened = await pages.withLastPage(pdf, async (page): Promise<ScanOutcome> => {
    try {
      const scan = new PageScan(page, reader, clock, () => clock.now() > deadline, trace);
      const outcome = await scan.run();
      const winner = scan.firstBillCode();
      if (outcome.status !== 'found' || !winner) return outcome;
      const code = { ...winner.symbol, bill: outcome.bill, box: winner.box };
      const warnings = scan.timed('inspect', () => inspectAnswered(page, code, { printed: checkPrinted }));
      return { ...outcome, warnings };
    } catch (e) {
      if (e instanceof TimeUp) return { status: 'too-complex', reason: 'time budget exhausted while reading QR codes' };
      throw e;
    }
  });
  return opened.status === 'opened' ? opened.value : opened;
}

class PageScan {
  /** Codes by their text: the same code seen by two steps counts once, where it was first seen. */
  private readonly codes = new Map<string, FoundCode>();
  private looks = 0;

  constructor(
    private readonly page: LastPage,
    private readonly reader: BarcodeReader,
    private readonly clock: Clock,
    private readonly timeUp: () => boolean,
    private readonly trace?: (step: string, ms: number) => void,
  ) {}

  /** Runs `step`, telling the trace how long it took. */
  timed<T>(name: string, step: () => T): T {
    if (!this.trace) return step();
    const started = this.clock.now();
    const result = step();
    if (result instanceof Promise) return result.finally(() => this.trace!(name, this.clock.now() - started)) as T;
    this.trace(name, this.clock.now() - started);
    return result;
  }

  async run(): Promise<ScanOutcome> {
    const contents = this.timed('contents', () => this.page.contents());
    const pictures = contents.images.filter((image) => Math.min(image.width, image.height) >= 21); // a version 1 code's size
    // Only a page that is one image (a scan, a photo) may skip rendering: several images may be strips of one picture
    // (some scanners write a page so), whose codes only the render sees whole.
    let render = contents.drawsMore || pictures.length > 1;
    for (const image of pictures) {
      // Where the page is rendered anyway, logos and other small pictures are left to the render; a code image or a
      // scan is still read from its own pixels, at its own resolution.
      if (render && !isCodeImage(image.width, image.height) && image.width * image.height < MIN_SCAN_PIXELS) continue;
      const decoded = this.clock.now();
      const read = await this.page.withImage(image, (pixels) => {
        this.trace?.('images: decode', this.clock.now() - decoded);
        return this.readImage(image, pixels, contents, render);
      });
      if (read === undefined) render = true; // its pixels could not be had: the render must show it
    }
    if (render) await this.readRender('page-100dpi', 'page', 100, false);
    for (const pass of FALLBACK_PASSES) {
      if (this.firstBillCode() || !render) break;
      await this.readRender(pass.name, pass.region, pass.dpi, pass.tryHarder);
    }
    const first = this.firstBillCode();
    if (first?.reading.ok) return { status: 'found', bill: first.reading.bill, pass: first.pass, warnings: [] };
    // No valid bill anywhere, so every reading here is a rejection.
    const rejected = this.inReadingOrder().flatMap(({ reading }, index) =>
      reading.ok ? [] : [{ index, reason: reading.reason }],
    );
    return { status: 'not-found', rejected };
  }

  /** An image object: whole if it is a small square one (a QR code image), else reduced to WORK_DPI; then its leads. */
  private async readImage(
    image: PageImage,
    pixels: ImagePixels,
    contents: PageContents,
    render: boolean,
  ): Promise<true> {
    const { width, height } = pixels;
    const codeImage = isCodeImage(width, height);
    // The image's resolution on the page (dots per inch), from its longer side.
    const dpi = Math.max(width, height) / (Math.max(image.box.w * contents.width, image.box.h * contents.height) / 72);
    // Whole factors only, down to 80% of WORK_DPI: a 180 dpi photo is searched at 90 dpi, a 150 dpi scan as it is.
    const factor = codeImage
      ? 1
      : Math.max(1, Math.floor(dpi / (0.8 * WORK_DPI)), Math.ceil(Math.sqrt((width * height) / MAX_WORK_PIXELS)));
    let raster = this.timed('images: reduce', () => pixels.read(0, 0, width, height, factor));
    let toImage = (x: number, y: number) => ({ x: x * factor, y: y * factor });
    if (codeImage) {
      const scale = Math.max(1, Math.ceil(200 / Math.min(width, height)));
      const margin = Math.ceil((Math.max(width, height) * scale) / 6);
      raster = framed(raster, scale, margin);
      toImage = (x, y) => ({ x: (x - margin) / scale, y: (y - margin) / scale });
    }
    await this.readImageRaster('images', image, pixels, raster, toImage, false);
    // A page that is this one image has its bill here or nowhere. While the pixels are at hand, an image without one is
    // read again: a code image with tryHarder, a larger one at about FINE_DPI with tryHarder too.
    if (render || this.firstBillCode()) return true;
    if (codeImage) {
      await this.readImageRaster('images-fine', image, pixels, raster, toImage, true);
    } else {
      const fine = Math.max(1, Math.floor(dpi / FINE_DPI), Math.ceil(Math.sqrt((width * height) / MAX_FINE_PIXELS)));
      const fineRaster = this.timed('images-fine: reduce', () => pixels.read(0, 0, width, height, fine));
      await this.readImageRaster(
        'images-fine',
        image,
        pixels,
        fineRaster,
        (x, y) => ({ x: x * fine, y: y * fine }),
        true,
      );
    }
    return true;
  }

  /**
   * A raster made from an image (`toImage` maps its pixels to the image's): its codes, then its leads, each looked at
   * closer in a crop from the image's full resolution at about LOOK_MODULE pixels a module. Finders are looked for on
   * the first reading only; the second one, with tryHarder, has zxing's outlines.
   */
  private async readImageRaster(
    pass: 'images' | 'images-fine',
    image: PageImage,
    pixels: ImagePixels,
    raster: GrayRaster,
    toImage: Mapping,
    tryHarder: boolean,
  ): Promise<void> {
    const { width, height } = pixels;
    const toPage = (x: number, y: number) => {
      const p = toImage(x, y);
      return image.toPage(p.x / width, p.y / height);
    };
    const reading = await this.timed(`${pass}: zxing`, () => this.read(raster, tryHarder));
    // Image pixels per raster pixel: below 1 where a small code image was enlarged, which adds no detail.
    const [o, e] = [toImage(0, 0), toImage(1, 0)];
    this.add(pass, reading, raster, toPage, Math.hypot(e.x - o.x, e.y - o.y));
    const leads = this.timed(`${pass}: finders`, () => leadsIn(raster, reading, { finders: pass === 'images' })).map(
      (lead): PageLead => {
        const from = toImage(lead.x, lead.y);
        const to = toImage(lead.x + lead.w, lead.y + lead.h);
        const fullModule = (lead.module * (to.x - from.x)) / lead.w;
        return {
          ...this.place(lead, toPage),
          look: async () => {
            // fewer pixels when modules are large; enlarged smoothly when they are small
            const reduce = Math.max(1, Math.round(fullModule / LOOK_MODULE));
            let crop = this.timed('closer look: crop', () =>
              pixels.read(from.x, from.y, to.x - from.x, to.y - from.y, reduce),
            );
            const scale = fullModule / reduce < LOOK_MODULE - 0.5 ? LOOK_MODULE / (fullModule / reduce) : 1;
            if (scale > 1) crop = enlarged(crop, scale);
            const [x0, y0] = [Math.max(0, Math.round(from.x)), Math.max(0, Math.round(from.y))];
            await this.lookCloser(
              crop,
              (x, y) => image.toPage((x0 + (x / scale) * reduce) / width, (y0 + (y / scale) * reduce) / height),
              reduce / scale,
            );
          },
        };
      },
    );
    await this.follow(leads);
  }

  /** The page or a part of it rendered; then its leads, each rendered again at about LOOK_MODULE pixels a module. */
  private async readRender(pass: ScanPass, region: PageRegion, dpi: number, tryHarder: boolean): Promise<void> {
    this.check();
    const placed = this.timed(`${pass}: render`, () => this.page.render(region, dpi));
    const toPage = onPage(placed);
    const reading = await this.timed(`${pass}: zxing`, () => this.read(placed.raster, tryHarder));
    this.add(pass, reading, placed.raster, toPage);
    // Finders are looked for on the first render only: it decides whether the search may stop. The fallback passes run
    // when nothing was found, where zxing's own outlines of codes it could not read are leads enough.
    const leads = this.timed(`${pass}: finders`, () =>
      leadsIn(placed.raster, reading, { finders: pass === 'page-100dpi' }),
    ).map((lead): PageLead => {
      const where = this.place(lead, toPage);
      return {
        ...where,
        look: async () => {
          this.check();
          const closer = this.timed('closer look: render', () =>
            this.page.render(where.box, Math.min(600, Math.max(150, (dpi * LOOK_MODULE) / lead.module))),
          );
          await this.lookCloser(closer.raster, onPage(closer));
        },
      };
    });
    await this.follow(leads);
  }

  /** Reads a close-up of a lead: quickly, then with zxing's tryHarder when that finds nothing. Its own leads are not followed. */
  private async lookCloser(raster: GrayRaster, toPage: Mapping, detail = 1): Promise<void> {
    let reading = await this.timed('closer look: zxing', () => this.read(raster, false));
    if (reading.codes.length === 0)
      reading = await this.timed('closer look: zxing tryHarder', () => this.read(raster, true));
    this.add('closer-look', reading, raster, toPage, detail);
  }

  /**
   * Looks closer at the leads that could hold a code coming before the first valid bill found so far, in reading
   * order. A lead after that bill cannot change the answer, and neither can any lead after it.
   */
  private async follow(leads: PageLead[]): Promise<void> {
    for (const lead of leads.sort((a, b) => readingOrder(a.box, b.box))) {
      if (this.explains(lead.anchor)) continue;
      const first = this.firstBillCode();
      if (first && readingOrder(lead.box, first.box) >= 0) break;
      if (this.looks >= MAX_LOOKS) break;
      this.looks++;
      await lead.look();
    }
  }

  private place(lead: Lead, toPage: Mapping): { box: PageBox; anchor: { x: number; y: number } } {
    return { box: pageBox(toPage, lead.x, lead.y, lead.w, lead.h), anchor: toPage(lead.anchor.x, lead.anchor.y) };
  }

  /** A decoded code (of any source) covers this point of the page. */
  private explains(point: { x: number; y: number }): boolean {
    for (const { box } of this.codes.values()) {
      const [mx, my] = [box.w * 0.1, box.h * 0.1];
      if (
        point.x >= box.x - mx &&
        point.x <= box.x + box.w + mx &&
        point.y >= box.y - my &&
        point.y <= box.y + box.h + my
      )
        return true;
    }
    return false;
  }

  private async read(raster: GrayRaster, tryHarder: boolean): Promise<RasterReading> {
    this.check();
    return this.reader.readQrCodes(raster, { tryHarder });
  }

  /** `detail`: pixels of the source (an image, a render) per pixel of `raster`, for judging the Swiss cross. */
  private add(pass: ScanPass, reading: RasterReading, raster: GrayRaster, toPage: Mapping, detail = 1): void {
    for (const symbol of reading.codes) {
      const text = UTF8.decode(symbol.bytes);
      if (this.codes.has(text)) continue;
      const b: RasterBox = symbol.box;
      const corner = ({ x, y }: { x: number; y: number }) => toPage(x * raster.width, y * raster.height);
      const { topLeft, topRight, bottomLeft } = symbol.corners;
      this.codes.set(text, {
        pass,
        reading: readQrBill(text),
        box: pageBox(toPage, b.x * raster.width, b.y * raster.height, b.w * raster.width, b.h * raster.height),
        symbol: {
          ecLevel: symbol.ecLevel,
          swissCross: hasSwissCross(raster, symbol.corners, detail),
          corners: { topLeft: corner(topLeft), topRight: corner(topRight), bottomLeft: corner(bottomLeft) },
        },
      });
    }
  }

  private inReadingOrder(): FoundCode[] {
    return [...this.codes.values()].sort((a, b) => readingOrder(a.box, b.box));
  }

  firstBillCode(): FoundCode | undefined {
    return this.inReadingOrder().find((code) => code.reading.ok);
  }

  private check(): void {
    if (this.timeUp()) throw new TimeUp();
  }
}

const UTF8 = new TextDecoder('utf-8');

/** An image that could be a QR code on its own: square-ish, not a full-page scan. */
function isCodeImage(width: number, height: number): boolean {
  return Math.max(width, height) <= 2000 && width / height > 0.8 && width / height < 1.25;
}

/** Where a pixel of a rendered raster lies on the page. */
function onPage({ raster, box }: PlacedRaster): Mapping {
  return (x, y) => ({ x: box.x + (x / raster.width) * box.w, y: box.y + (y / raster.height) * box.h });
}

/** The page box of a raster rectangle: the bounding box of its corners mapped to the page (images may be turned). */
function pageBox(toPage: Mapping, x: number, y: number, w: number, h: number): PageBox {
  return boxAround([toPage(x, y), toPage(x + w, y), toPage(x, y + h), toPage(x + w, y + h)]);
}

/** By top left corner: tops within 2% of the page height of each other share a row and are read left to right. */
function readingOrder(a: PageBox, b: PageBox): number {
  return Math.abs(a.y - b.y) < 0.02 ? a.x - b.x : a.y - b.y;
}
