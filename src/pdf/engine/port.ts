/** What a PDF engine reports about a document it was asked to open. */
export type EngineReport =
  | { status: 'opened'; pageCount: number; version: string | undefined; attachmentCount: number; firstAndLastPageLoad: boolean }
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

/** RGBA pixels, row by row, 4 bytes a pixel. */
export interface Raster {
  width: number;
  height: number;
  data: Uint8ClampedArray;
}

/** A raster and where it lies on the page: fractions of the page's width and height from its top left corner. */
export interface PlacedRaster {
  raster: Raster;
  box: { x: number; y: number; w: number; h: number };
}

/** The part of an A4 page that holds the payment part and receipt of a QR-bill: its bottom 105 mm (SIX IG 3.1). */
export type PageRegion = 'payment-part' | 'page';

/**
 * The last page of an open document, drawn in its content orientation (a /Rotate is undone: a bill designed at the
 * bottom of a portrait page stays at the bottom, and QR codes read in any orientation).
 */
export interface LastPage {
  /** Image objects drawn on the page whose pixel size passes `wanted`, decoded (not scaled), in drawing order. */
  images(wanted: (width: number, height: number) => boolean): PlacedRaster[];
  render(region: PageRegion, dpi: number): PlacedRaster;
}

/** Access to the last page of a document, for as long as `use` runs. */
export interface PageSource {
  withLastPage<T>(pdf: Uint8Array, use: (page: LastPage) => Promise<T>): Promise<{ status: 'opened'; value: T } | EngineRefusal>;
}
