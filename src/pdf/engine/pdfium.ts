import { init, type WrappedPdfiumModule } from '@embedpdf/pdfium';
import type { EngineRefusal, EngineReport, LastPage, PageRegion, PageSource, PdfEngine, PlacedRaster, Raster } from './port.ts';

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
}

const DEFAULT_RECYCLE_ABOVE = 64 * 1024 * 1024;

const heapOf = (m: WrappedPdfiumModule) => (m.pdfium as unknown as { HEAPU8: Uint8Array }).HEAPU8;

/** sizeof(FPDF_FILEACCESS) in wasm32: m_FileLen, m_GetBlock, m_Param (fpdfview.h). */
const FILE_ACCESS_SIZE = 12;

// fpdfview.h and fpdf_edit.h constants
const FPDF_ERR_PASSWORD = 4;
const FPDF_ERR_SECURITY = 5;
const FPDF_ANNOT = 0x01;
const FPDF_REVERSE_BYTE_ORDER = 0x10; // RGBA instead of BGRA
const FPDF_PRINTING = 0x800;
const FPDFBitmap_Gray = 1;
const FPDFBitmap_BGR = 2;
const FPDFBitmap_BGRA = 4;
const FPDF_PAGEOBJ_IMAGE = 3;

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
        const firstAndLastPageLoad = pageCount > 0 && m.FPDF_GetPageSizeByIndexF(doc, 0, out) && m.FPDF_GetPageSizeByIndexF(doc, pageCount - 1, out);
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
  private withDocument<T>(pdf: Uint8Array, use: (m: WrappedPdfiumModule, doc: number) => Promise<Open<T>>): Promise<Open<T>> {
    const run = this.queue.then(async (): Promise<Open<T>> => {
      const m = await this.module();
      try {
        return await this.open(m, pdf, use);
      } catch (e) {
        this.instance = undefined;
        if (e instanceof WebAssembly.RuntimeError) return { status: 'too-complex', reason: 'engine aborted (memory ceiling reached)' };
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
  private async open<T>(m: WrappedPdfiumModule, pdf: Uint8Array, use: (m: WrappedPdfiumModule, doc: number) => Promise<Open<T>>): Promise<Open<T>> {
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
        return { status: 'unreadable', reason: code === FPDF_ERR_SECURITY ? 'unsupported security handler' : `engine error ${code}` };
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
      pointer = (m.pdfium as unknown as { addFunction: (f: typeof read, signature: string) => number }).addFunction(read, 'iiiii');
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
      instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void) {
        const env = imports.env as Record<string, unknown>;
        const grow = env.emscripten_resize_heap as (bytes: number) => number;
        env.emscripten_resize_heap = (bytes: number) => ((bytes >>> 0) > memoryLimitBytes ? 0 : grow(bytes));
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
  /** Content-orientation size in points, and the media box origin. */
  private readonly width: number;
  private readonly height: number;

  constructor(
    private readonly m: WrappedPdfiumModule,
    private readonly page: number,
  ) {
    this.rotation = ((m.FPDFPage_GetRotation(page) % 4) + 4) % 4;
    const [w, h] = [m.FPDF_GetPageWidthF(page), m.FPDF_GetPageHeightF(page)];
    [this.width, this.height] = this.rotation % 2 === 1 ? [h, w] : [w, h];
  }

  render(region: PageRegion, dpi: number): PlacedRaster {
    const m = this.m;
    const scale = Math.min(dpi / 72, Math.sqrt(MAX_RENDER_PIXELS / (this.width * this.height)));
    const fullW = Math.max(1, Math.round(this.width * scale));
    const fullH = Math.max(1, Math.round(this.height * scale));
    const h = region === 'payment-part' ? Math.min(fullH, Math.round(PAYMENT_PART_PT * scale)) : fullH;
    const bitmap = m.FPDFBitmap_CreateEx(fullW, h, FPDFBitmap_BGRA, 0, 0);
    if (!bitmap) throw new WebAssembly.RuntimeError('bitmap allocation failed');
    try {
      m.FPDFBitmap_FillRect(bitmap, 0, 0, fullW, h, 0xffffffff);
      // Drawing the whole page shifted up clips it to the bottom part; (4 - /Rotate) undoes the page's rotation.
      m.FPDF_RenderPageBitmap(bitmap, this.page, 0, h - fullH, fullW, fullH, (4 - this.rotation) % 4, FPDF_ANNOT | FPDF_PRINTING | FPDF_REVERSE_BYTE_ORDER);
      const raster = copyBitmap(m, bitmap, fullW, h, FPDFBitmap_BGRA, true);
      return { raster, box: { x: 0, y: (fullH - h) / fullH, w: 1, h: h / fullH } };
    } finally {
      m.FPDFBitmap_Destroy(bitmap);
    }
  }

  images(wanted: (width: number, height: number) => boolean): PlacedRaster[] {
    const m = this.m;
    const found: PlacedRaster[] = [];
    const out = m.pdfium.wasmExports.malloc(16);
    try {
      const count = m.FPDFPage_CountObjects(this.page);
      for (let i = 0; i < count; i++) {
        const obj = m.FPDFPage_GetObject(this.page, i);
        if (m.FPDFPageObj_GetType(obj) !== FPDF_PAGEOBJ_IMAGE) continue;
        if (!m.FPDFImageObj_GetImagePixelSize(obj, out, out + 4)) continue;
        const [pw, ph] = [m.pdfium.getValue(out, 'i32'), m.pdfium.getValue(out + 4, 'i32')];
        if (!wanted(pw, ph)) continue;
        const bitmap = m.FPDFImageObj_GetBitmap(obj);
        if (!bitmap) continue;
        try {
          const format = m.FPDFBitmap_GetFormat(bitmap);
          const raster = copyBitmap(m, bitmap, m.FPDFBitmap_GetWidth(bitmap), m.FPDFBitmap_GetHeight(bitmap), format, false);
          found.push({ raster, box: this.bounds(obj, out) });
        } finally {
          m.FPDFBitmap_Destroy(bitmap);
        }
      }
    } finally {
      m.pdfium.wasmExports.free(out);
    }
    return found;
  }

  /** An object's bounds as fractions of the page, top left origin, in content orientation (unrotated user space). */
  private bounds(obj: number, out: number): PlacedRaster['box'] {
    const m = this.m;
    if (!m.FPDFPageObj_GetBounds(obj, out, out + 4, out + 8, out + 12)) return { x: 0, y: 0, w: 1, h: 1 };
    const [left, bottom, right, top] = [0, 4, 8, 12].map((o) => m.pdfium.getValue(out + o, 'float'));
    const media = m.pdfium.wasmExports.malloc(16);
    try {
      const has = m.FPDFPage_GetMediaBox(this.page, media, media + 4, media + 8, media + 12);
      const [ml, , , mt] = has ? [0, 4, 8, 12].map((o) => m.pdfium.getValue(media + o, 'float')) : [0, 0, 0, this.height];
      return { x: (left! - ml!) / this.width, y: (mt! - top!) / this.height, w: (right! - left!) / this.width, h: (top! - bottom!) / this.height };
    } finally {
      m.pdfium.wasmExports.free(media);
    }
  }
}

/** Copies a PDFium bitmap out of the WebAssembly heap as RGBA (transparency flattened onto white). */
function copyBitmap(m: WrappedPdfiumModule, bitmap: number, width: number, height: number, format: number, rgbaAlready: boolean): Raster {
  const stride = m.FPDFBitmap_GetStride(bitmap);
  const src = heapOf(m).subarray(m.FPDFBitmap_GetBuffer(bitmap), m.FPDFBitmap_GetBuffer(bitmap) + stride * height);
  const data = new Uint8ClampedArray(width * height * 4);
  const bytesPerPixel = format === FPDFBitmap_Gray ? 1 : format === FPDFBitmap_BGR ? 3 : 4;
  for (let y = 0; y < height; y++) {
    const row = y * stride;
    if (rgbaAlready && stride === width * 4) {
      data.set(src.subarray(row, row + width * 4), y * width * 4);
      continue;
    }
    for (let x = 0; x < width; x++) {
      const s = row + x * bytesPerPixel;
      const d = (y * width + x) * 4;
      if (bytesPerPixel === 1) {
        data[d] = data[d + 1] = data[d + 2] = src[s]!;
      } else {
        const alpha = bytesPerPixel === 4 && format === FPDFBitmap_BGRA ? src[s + 3]! / 255 : 1;
        const [r, g, b] = rgbaAlready ? [src[s]!, src[s + 1]!, src[s + 2]!] : [src[s + 2]!, src[s + 1]!, src[s]!];
        data[d] = r * alpha + 255 * (1 - alpha);
        data[d + 1] = g * alpha + 255 * (1 - alpha);
        data[d + 2] = b * alpha + 255 * (1 - alpha);
      }
      data[d + 3] = 255;
    }
  }
  return { width, height, data };
}
