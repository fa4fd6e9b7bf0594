/** What a PDF engine reports about a document it was asked to open. */
export type EngineReport =
  | {
      status: 'opened';
      pageCount: number;
      version: string | undefined;
      attachmentCount: number;
      firstAndLastPageLoad: boolean;
    }
  | EngineRefusal;

/** Why an engine could not work on a document. */
export type EngineRefusal =
  | { status: 'needs-password' }
  | { status: 'unreadable'; reason: string }
  /** The engine ran out of its memory or time budget: a decompression bomb or an absurd structure. */
  | { status: 'too-complex'; reason: string };

/** The port through which the core asks a PDF engine about a document; adapters decide where it runs. */
export interface PdfEngine {
  /**
   * May take ownership of `pdf` and of the buffer it views (a worker-thread adapter transfers that buffer): callers
   * must not read either afterwards.
   */
  inspect(pdf: Uint8Array): Promise<EngineReport>;
}

/** 8-bit grey pixels, 0 black to 255 white, row by row: all a QR decoder looks at, in a quarter of RGBA's bytes. */
export interface GrayRaster {
  width: number;
  height: number;
  data: Uint8Array;
}

/** A rectangle as fractions of the page's width and height from its top left corner (content orientation). */
export interface PageBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** The smallest box holding every point, in the points' own units (a box of a raster's pixels, of a page's fractions). */
export function boxAround(points: readonly { x: number; y: number }[]): PageBox {
  let [left, top, right, bottom] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const { x, y } of points) {
    left = Math.min(left, x);
    top = Math.min(top, y);
    right = Math.max(right, x);
    bottom = Math.max(bottom, y);
  }
  return { x: left, y: top, w: right - left, h: bottom - top };
}

/** A raster and where it lies on the page. */
export interface PlacedRaster {
  raster: GrayRaster;
  box: PageBox;
}

/** The part of an A4 page that holds the payment part and receipt of a QR-bill: its bottom 105 mm (SIX IG 3.1). */
export type PageRegion = 'payment-part' | 'page';

/** An image object drawn on the page: its own pixel size and where its pixels land. */
export interface PageImage {
  /** Index among the page's objects. */
  index: number;
  width: number;
  height: number;
  /** Its bounding box on the page. */
  box: PageBox;
  /** Where the image's pixel position (`u`, `v` as fractions of its width and height from its top left) lands on the page. */
  toPage(u: number, v: number): { x: number; y: number };
}

/** An image's decoded pixels, lent while they stay in the engine's memory: read as much of them as needed, in grey. */
export interface ImagePixels {
  width: number;
  height: number;
  /**
   * The rectangle (`x`, `y`, `w`, `h` in image pixels, clipped to the image) with each `factor` × `factor` square of
   * pixels averaged into one: `factor` 1 is the full resolution.
   */
  read(x: number, y: number, w: number, h: number, factor: number): GrayRaster;
}

/** What is drawn on the page, as far as finding QR codes goes. */
export interface PageContents {
  /** The page's size in points, in content orientation. */
  width: number;
  height: number;
  images: PageImage[];
  /**
   * Something besides image objects could draw a code: paths, visible text, shadings, form XObjects, annotations, or
   * an image whose pixels alone do not show what is drawn (masks, decode arrays). Only rendering shows those.
   */
  drawsMore: boolean;
}

/**
 * The last page of an open document, drawn in its content orientation (a /Rotate is undone: a bill designed at the
 * bottom of a portrait page stays at the bottom, and QR codes read in any orientation).
 */
export interface LastPage {
  contents(): PageContents;
  /** Decodes one image (not scaled) and lends its pixels for as long as `use` runs; undefined when it cannot be decoded. */
  withImage<T>(image: PageImage, use: (pixels: ImagePixels) => Promise<T>): Promise<T | undefined>;
  /** The page, its payment part or any box of it rendered at `dpi` (lower when the raster would be too large). */
  render(region: PageRegion | PageBox, dpi: number): PlacedRaster;
  /** The characters of the page's text layer whose centre lies in `box`, in the engine's text order. */
  text(box: PageBox): PageChar[];
}

/** One character of a page's text layer (what a PDF draws as text, or an OCR layer), as the engine extracted it. */
export interface PageChar {
  char: string;
  /** Its box, as fractions of the page (content orientation). */
  box: PageBox;
  /** Its font size in points. */
  size: number;
}

/** Access to the last page of a document, for as long as `use` runs. */
export interface PageSource {
  withLastPage<T>(
    pdf: Uint8Array,
    use: (page: LastPage) => Promise<T>,
  ): Promise<{ status: 'opened'; value: T } | EngineRefusal>;
}
