import { init, type WrappedPdfiumModule } from '@embedpdf/pdfium';
import { FPDFBitmap_Gray, grayOfBitmap } from './pdfium-bitmap.ts';
import { pageText } from './pdfium-text.ts';
import {
  boxAround,
  type EngineRefusal,
  type EngineReport,
  type ImagePixels,
  type LastPage,
  type PageBox,
  type PageContents,
  type PageChar,
  type PageImage,
  type PageRegion,
  type PageSource,
  type PdfEngine,
  type PlacedRaster,
} from './port.ts';

export interface PdfiumOptions {
  /** The compiled `pdfium.wasm`: each runtime's entry loads it its own way (file, module import). */
  wasm: WebAssembly.Module;
  /**
   * Ceiling on the engine's heap. PDFium inflates streams without a limit; with a ceiling, a decompression bomb makes
   * it abort within a second or two instead of taking the process's memory.
   */
  memoryLimitBytes: number;
  /**
   * A WebAssembly heap never shrinks: after a document grew it past this size, the instance is dropped so the memory
   * goes back to the system, and the next document gets a fresh one.
   */
  recycleAboveBytes?: number;
  /** Called when an aborted instance (a trap: the memory ceiling) is dropped, for the engine-restart metric. */
  onAbort?: () => void;
}

const DEFAULT_RECYCLE_ABOVE = 64 * 1024 * 1024;

const heapOf = (m: WrappedPdfiumModule) => (m.pdfium as unknown as { HEAPU8: Uint8Array }).HEAPU8;

/** sizeof(FPDF_FILEACCESS) in wasm32: m_FileLen, m_GetBlock, m_Param (fpdfview.h). */
const FILE_ACCESS_SIZE = 12;

// fpdfview.h and fpdf_edit.h constants
const FPDF_ERR_PASSWORD = 4;
const FPDF_ERR_SECURITY = 5;
const FPDF_ANNOT = 0x01;
const FPDF_PRINTING = 0x800;
const FPDF_PAGEOBJ_TEXT = 1;
const FPDF_PAGEOBJ_IMAGE = 3;
const FPDF_TEXTRENDERMODE_INVISIBLE = 3;
const FPDF_COLORSPACE_UNKNOWN = 0;

/** 105 mm in points: the height of a QR-bill's payment part and receipt. */
const PAYMENT_PART_PT = (105 / 25.4) * 72;
/** Largest raster rendered: a 300 dpi A3 page; larger pages are drawn at a lower resolution. */
const MAX_RENDER_PIXELS = 3508 * 4961;

type Open<T> = { status: 'opened'; value: T } | EngineRefusal;

/**
 * PDFium compiled to WebAssembly. A WASM abort (out of memory under the ceiling, or any trap) leaves the instance
 * unusable, so it is dropped and the next call instantiates a fresh one from the compiled module (tens of ms).
 * Calls are serialized: one document is open at a time, even while a caller awaits something else.
 */
export class PdfiumEngine implements PdfEngine, PageSource {
  private instance: Promise<WrappedPdfiumModule> | undefined;
  /** The document PDFium is reading. */
  private reading: Uint8Array | undefined;
  private readonly readers = new WeakMap<WrappedPdfiumModule, number | undefined>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: PdfiumOptions) {}

  async inspect(pdf: Uint8Array): Promise<EngineReport> {
    const opened = await this.withDocument(pdf, async (m, doc) => {
      const pageCount = m.FPDF_GetPageCount(doc);
      const out = m.pdfium.wasmExports.malloc(8);
      try {
        const v = m.FPDF_GetFileVersion(doc, out) ? m.pdfium.getValue(out, 'i32') : 0;
        const firstAndLastPageLoad =
          pageCount > 0 &&
          m.FPDF_GetPageSizeByIndexF(doc, 0, out) &&
          m.FPDF_GetPageSizeByIndexF(doc, pageCount - 1, out);
        const report: EngineReport = {
          status: 'opened',
          pageCount,
          version: v >= 10 && v <= 99 ? `${Math.floor(v / 10)}.${v % 10}` : undefined,
          attachmentCount: Math.max(0, m.FPDFDoc_GetAttachmentCount(doc)),
          firstAndLastPageLoad: Boolean(firstAndLastPageLoad),
        };
        return { status: 'opened', value: report };
      } finally {
        m.pdfium.wasmExports.free(out);
      }
    });
    return opened.status === 'opened' ? opened.value : opened;
  }

  withLastPage<T>(pdf: Uint8Array, use: (page: LastPage) => Promise<T>): Promise<Open<T>> {
    return this.withDocument(pdf, async (m, doc): Promise<Open<T>> => {
      const pageCount = m.FPDF_GetPageCount(doc);
      const page = pageCount > 0 ? m.FPDF_LoadPage(doc, pageCount - 1) : 0;
      if (!page) return { status: 'unreadable', reason: 'the last page cannot be loaded' };
      try {
        return { status: 'opened', value: await use(new PdfiumPage(m, page)) };
      } finally {
        m.FPDF_ClosePage(page);
      }
    });
  }

  /** Runs `use` on the open document, one document at a time; a WebAssembly trap becomes `too-complex`. */
  private withDocument<T>(
    pdf: Uint8Array,
    use: (m: WrappedPdfiumModule, doc: number) => Promise<Open<T>>,
  ): Promise<Open<T>> {
    const run = this.queue.then(async (): Promise<Open<T>> => {
      const m = await this.module();
      try {
        return await this.open(m, pdf, use);
      } catch (e) {
        this.instance = undefined;
        this.options.onAbort?.();
        if (e instanceof WebAssembly.RuntimeError)
          return { status: 'too-complex', reason: 'engine aborted (memory ceiling reached)' };
        throw e;
      } finally {
        this.reading = undefined;
        const heap = (m.pdfium.wasmExports as unknown as { memory: WebAssembly.Memory }).memory.buffer.byteLength;
        if (heap > (this.options.recycleAboveBytes ?? DEFAULT_RECYCLE_ABOVE)) this.instance = undefined;
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Opens the document through FPDF_LoadCustomDocument where the runtime allows it: PDFium asks for blocks as it needs
   * them and they are copied from `pdf` on demand, so the file never has to fit in (and grow) the WebAssembly heap.
   * Workers forbid compiling WebAssembly at run time, which a JS callback needs; there the file is copied in.
   */
  private async open<T>(
    m: WrappedPdfiumModule,
    pdf: Uint8Array,
    use: (m: WrappedPdfiumModule, doc: number) => Promise<Open<T>>,
  ): Promise<Open<T>> {
    const reader = this.blockReader(m);
    const size = reader === undefined ? Math.max(1, pdf.length) : FILE_ACCESS_SIZE;
    const ptr = m.pdfium.wasmExports.malloc(size);
    if (!ptr) return { status: 'too-complex', reason: 'the engine is out of memory' };
    try {
      let doc: number;
      if (reader === undefined) {
        heapOf(m).set(pdf, ptr); // HEAPU8 is re-created when the heap grows, so it is read after malloc
        doc = m.FPDF_LoadMemDocument(ptr, pdf.length, '');
      } else {
        m.pdfium.setValue(ptr, pdf.length, 'i32'); // m_FileLen
        m.pdfium.setValue(ptr + 4, reader, 'i32'); // m_GetBlock
        m.pdfium.setValue(ptr + 8, 0, 'i32'); // m_Param
        this.reading = pdf;
        doc = m.FPDF_LoadCustomDocument(ptr, '');
      }
      if (!doc) {
        const code = m.FPDF_GetLastError();
        if (code === FPDF_ERR_PASSWORD) return { status: 'needs-password' };
        return {
          status: 'unreadable',
          reason: code === FPDF_ERR_SECURITY ? 'unsupported security handler' : `engine error ${code}`,
        };
      }
      try {
        return await use(m, doc);
      } finally {
        m.FPDF_CloseDocument(doc);
      }
    } finally {
      m.pdfium.wasmExports.free(ptr);
    }
  }

  /** The m_GetBlock callback of this instance (copies `size` bytes at `position`), or undefined where none can be made. */
  private blockReader(m: WrappedPdfiumModule): number | undefined {
    if (this.readers.has(m)) return this.readers.get(m);
    const read = (_param: number, position: number, buffer: number, size: number): number => {
      const pdf = this.reading;
      if (!pdf || position + size > pdf.length) return 0;
      heapOf(m).set(pdf.subarray(position, position + size), buffer);
      return 1;
    };
    let pointer: number | undefined;
    try {
      pointer = (m.pdfium as unknown as { addFunction: (f: typeof read, signature: string) => number }).addFunction(
        read,
        'iiiii',
      );
    } catch {
      pointer = undefined; // "Wasm code generation disallowed by embedder" (workerd)
    }
    this.readers.set(m, pointer);
    return pointer;
  }

  private module(): Promise<WrappedPdfiumModule> {
    this.instance ??= this.instantiate();
    return this.instance;
  }

  private async instantiate(): Promise<WrappedPdfiumModule> {
    const { wasm, memoryLimitBytes } = this.options;
    const m = await init({
      // Hand over the compiled module: the package would otherwise fetch its .wasm from a CDN.
      instantiateWasm(
        imports: WebAssembly.Imports,
        done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
      ) {
        const env = imports.env as Record<string, unknown>;
        const grow = env.emscripten_resize_heap as (bytes: number) => number;
        env.emscripten_resize_heap = (bytes: number) => (bytes >>> 0 > memoryLimitBytes ? 0 : grow(bytes));
        void WebAssembly.instantiate(wasm, imports).then((instance) => done(instance, wasm));
        return {};
      },
      // PDFium's diagnostics can quote document bytes: never let them reach the logs.
      print: () => {},
      printErr: () => {},
    } as never);
    m.PDFiumExt_Init();
    return m;
  }
}

/** An open page, drawn in its content orientation. */
class PdfiumPage implements LastPage {
  private readonly rotation: number;
  /** Content-orientation size in points, and the media box's top left corner. */
  private readonly width: number;
  private readonly height: number;
  private readonly left: number;
  private readonly top: number;

  constructor(
    private readonly m: WrappedPdfiumModule,
    private readonly page: number,
  ) {
    this.rotation = ((m.FPDFPage_GetRotation(page) % 4) + 4) % 4;
    const [w, h] = [m.FPDF_GetPageWidthF(page), m.FPDF_GetPageHeightF(page)];
    [this.width, this.height] = this.rotation % 2 === 1 ? [h, w] : [w, h];
    const media = m.pdfium.wasmExports.malloc(16);
    try {
      const has = m.FPDFPage_GetMediaBox(page, media, media + 4, media + 8, media + 12);
      [this.left, this.top] = has
        ? [m.pdfium.getValue(media, 'float'), m.pdfium.getValue(media + 12, 'float')]
        : [0, this.height];
    } finally {
      m.pdfium.wasmExports.free(media);
    }
  }

  render(region: PageRegion | PageBox, dpi: number): PlacedRaster {
    const m = this.m;
    const scale = Math.min(dpi / 72, Math.sqrt(MAX_RENDER_PIXELS / (this.width * this.height)));
    const fullW = Math.max(1, Math.round(this.width * scale));
    const fullH = Math.max(1, Math.round(this.height * scale));
    const box: PageBox =
      region === 'page'
        ? { x: 0, y: 0, w: 1, h: 1 }
        : region === 'payment-part'
          ? {
              x: 0,
              y: Math.max(0, 1 - PAYMENT_PART_PT / this.height),
              w: 1,
              h: Math.min(1, PAYMENT_PART_PT / this.height),
            }
          : region;
    // Whole pixels of the full-page raster, so a box's raster lines up with the page's.
    const x0 = Math.max(0, Math.floor(box.x * fullW));
    const y0 = Math.max(0, Math.floor(box.y * fullH));
    const w = Math.max(1, Math.min(fullW, Math.ceil((box.x + box.w) * fullW)) - x0);
    const h = Math.max(1, Math.min(fullH, Math.ceil((box.y + box.h) * fullH)) - y0);
    // Rendered in grey directly: faster than colour, and nothing to convert (QR codes are read in grey anyway).
    const bitmap = m.FPDFBitmap_CreateEx(w, h, FPDFBitmap_Gray, 0, 0);
    if (!bitmap) throw new WebAssembly.RuntimeError('bitmap allocation failed');
    try {
      m.FPDFBitmap_FillRect(bitmap, 0, 0, w, h, 0xffffffff);
      // Drawing the whole page shifted clips it to the box; (4 - /Rotate) undoes the page's rotation.
      m.FPDF_RenderPageBitmap(
        bitmap,
        this.page,
        -x0,
        -y0,
        fullW,
        fullH,
        (4 - this.rotation) % 4,
        FPDF_ANNOT | FPDF_PRINTING,
      );
      const raster = grayOfBitmap(m, bitmap, { x: 0, y: 0, w, h }, 1);
      return { raster, box: { x: x0 / fullW, y: y0 / fullH, w: w / fullW, h: h / fullH } };
    } finally {
      m.FPDFBitmap_Destroy(bitmap);
    }
  }

  text(region: PageBox): PageChar[] {
    return pageText(this.m, this.page, region, (x, y) => this.toContent(x, y));
  }

  /**
   * A point of PDF user space as fractions of the page in content orientation: user space itself, the page's /Rotate
   * being undone (as for images and renders).
   */
  private toContent(x: number, y: number): { x: number; y: number } {
    return { x: (x - this.left) / this.width, y: (this.top - y) / this.height };
  }

  contents(): PageContents {
    const m = this.m;
    const images: PageImage[] = [];
    // Annotations draw appearance streams of their own (stamps, widgets): only a render shows them.
    let drawsMore = m.FPDFPage_GetAnnotCount(this.page) > 0;
    // two i32 (pixel size), then FS_MATRIX (six floats)
    const out = m.pdfium.wasmExports.malloc(32);
    try {
      const count = m.FPDFPage_CountObjects(this.page);
      for (let index = 0; index < count; index++) {
        const obj = m.FPDFPage_GetObject(this.page, index);
        const type = m.FPDFPageObj_GetType(obj);
        if (type === FPDF_PAGEOBJ_TEXT) {
          // An OCR layer (invisible text) draws nothing; visible text could be a barcode font.
          if (m.FPDFTextObj_GetTextRenderMode(obj) !== FPDF_TEXTRENDERMODE_INVISIBLE) drawsMore = true;
          continue;
        }
        if (type !== FPDF_PAGEOBJ_IMAGE) {
          drawsMore = true;
          continue;
        }
        if (!m.FPDFImageObj_GetImagePixelSize(obj, out, out + 4) || !m.FPDFPageObj_GetMatrix(obj, out + 8)) {
          drawsMore = true;
          continue;
        }
        const [width, height] = [m.pdfium.getValue(out, 'i32'), m.pdfium.getValue(out + 4, 'i32')];
        const [a, b, c, d, e, f] = [0, 1, 2, 3, 4, 5].map((i) => m.pdfium.getValue(out + 8 + 4 * i, 'float')) as [
          number,
          number,
          number,
          number,
          number,
          number,
        ];
        // A stencil mask or an image with a soft mask shows more (or less) than its pixels: the render must see it too.
        if (this.hasMask(obj)) drawsMore = true;
        // The image's unit square: its first row at the top (v = 0 is y = 1 in image space).
        const toPage = (u: number, v: number) => ({
          x: (a * u + c * (1 - v) + e - this.left) / this.width,
          y: (this.top - (b * u + d * (1 - v) + f)) / this.height,
        });
        const box = boxAround([toPage(0, 0), toPage(1, 0), toPage(0, 1), toPage(1, 1)]);
        images.push({ index, width, height, box, toPage });
      }
    } finally {
      m.pdfium.wasmExports.free(out);
    }
    return { width: this.width, height: this.height, images, drawsMore };
  }

  /** An image drawn through a mask: /ImageMask (1 bit, no colour space) or a soft mask. */
  private hasMask(obj: number): boolean {
    const m = this.m;
    if (m.FPDFPageObj_HasTransparency(obj)) return true;
    // JPEG 2000 is never a stencil mask, and PDFium decodes the whole codestream to answer the metadata question.
    if (this.filters(obj).includes('JPXDecode')) return false;
    const meta = m.pdfium.wasmExports.malloc(28);
    try {
      // FPDF_IMAGEOBJ_METADATA: width, height, horizontal_dpi, vertical_dpi, bits_per_pixel, colorspace, marked_content_id
      if (!m.FPDFImageObj_GetImageMetadata(obj, this.page, meta)) return true;
      const bitsPerPixel = m.pdfium.getValue(meta + 16, 'i32');
      const colorspace = m.pdfium.getValue(meta + 20, 'i32');
      return bitsPerPixel === 1 && colorspace === FPDF_COLORSPACE_UNKNOWN;
    } finally {
      m.pdfium.wasmExports.free(meta);
    }
  }

  /** The image's filter names (DCTDecode, JPXDecode, ...). */
  private filters(obj: number): string[] {
    const m = this.m;
    const names: string[] = [];
    const buffer = m.pdfium.wasmExports.malloc(64);
    try {
      for (let i = 0; i < m.FPDFImageObj_GetImageFilterCount(obj); i++) {
        const length = m.FPDFImageObj_GetImageFilter(obj, i, buffer, 64);
        names.push(
          length > 1 && length <= 64 ? String.fromCharCode(...heapOf(m).subarray(buffer, buffer + length - 1)) : '',
        );
      }
    } finally {
      m.pdfium.wasmExports.free(buffer);
    }
    return names;
  }

  async withImage<T>(image: PageImage, use: (pixels: ImagePixels) => Promise<T>): Promise<T | undefined> {
    const m = this.m;
    const bitmap = m.FPDFImageObj_GetBitmap(m.FPDFPage_GetObject(this.page, image.index));
    if (!bitmap) return undefined;
    try {
      const [width, height] = [m.FPDFBitmap_GetWidth(bitmap), m.FPDFBitmap_GetHeight(bitmap)];
      return await use({
        width,
        height,
        read: (x, y, w, h, factor) => {
          const x0 = Math.max(0, Math.min(width, Math.round(x)));
          const y0 = Math.max(0, Math.min(height, Math.round(y)));
          return grayOfBitmap(
            m,
            bitmap,
            { x: x0, y: y0, w: Math.min(width - x0, Math.round(w)), h: Math.min(height - y0, Math.round(h)) },
            Math.max(1, Math.floor(factor)),
          );
        },
      });
    } finally {
      m.FPDFBitmap_Destroy(bitmap);
    }
  }
}
