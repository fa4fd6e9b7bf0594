import { init, type WrappedPdfiumModule } from '@embedpdf/pdfium';
import type { EngineReport, PdfEngine } from './port.ts';

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

// FPDF_GetLastError codes (fpdfview.h)
const FPDF_ERR_PASSWORD = 4;
const FPDF_ERR_SECURITY = 5;

/**
 * PDFium compiled to WebAssembly. A WASM abort (out of memory under the ceiling, or any trap) leaves the instance
 * unusable, so it is dropped and the next call instantiates a fresh one from the compiled module (tens of ms).
 */
export class PdfiumEngine implements PdfEngine {
  private instance: Promise<WrappedPdfiumModule> | undefined;
  /** The document PDFium is reading (engines are single-threaded: one at a time). */
  private reading: Uint8Array | undefined;
  private readonly readers = new WeakMap<WrappedPdfiumModule, number | undefined>();

  constructor(private readonly options: PdfiumOptions) {}

  async inspect(pdf: Uint8Array): Promise<EngineReport> {
    const m = await this.module();
    try {
      return this.withDocument(m, pdf, (doc) => {
        const pageCount = m.FPDF_GetPageCount(doc);
        const versionOut = m.pdfium.wasmExports.malloc(8);
        try {
          const v = m.FPDF_GetFileVersion(doc, versionOut) ? m.pdfium.getValue(versionOut, 'i32') : 0;
          const firstAndLastPageLoad =
            pageCount > 0 && m.FPDF_GetPageSizeByIndexF(doc, 0, versionOut) && m.FPDF_GetPageSizeByIndexF(doc, pageCount - 1, versionOut);
          return {
            status: 'opened' as const,
            pageCount,
            version: v >= 10 && v <= 99 ? `${Math.floor(v / 10)}.${v % 10}` : undefined,
            attachmentCount: Math.max(0, m.FPDFDoc_GetAttachmentCount(doc)),
            firstAndLastPageLoad: Boolean(firstAndLastPageLoad),
          };
        } finally {
          m.pdfium.wasmExports.free(versionOut);
        }
      });
    } catch (e) {
      this.instance = undefined;
      if (e instanceof WebAssembly.RuntimeError) return { status: 'too-complex', reason: 'engine aborted (memory ceiling reached)' };
      throw e;
    } finally {
      const heap = (m.pdfium.wasmExports as unknown as { memory: WebAssembly.Memory }).memory.buffer.byteLength;
      if (heap > (this.options.recycleAboveBytes ?? DEFAULT_RECYCLE_ABOVE)) this.instance = undefined;
    }
  }

  /**
   * Opens the document through FPDF_LoadCustomDocument where the runtime allows it: PDFium asks for blocks as it needs
   * them and they are copied from `pdf` on demand, so the file never has to fit in (and grow) the WebAssembly heap.
   * Workers forbid compiling WebAssembly at run time, which a JS callback needs; there the file is copied in.
   */
  private withDocument(m: WrappedPdfiumModule, pdf: Uint8Array, use: (doc: number) => EngineReport): EngineReport {
    const reader = this.blockReader(m);
    const size = reader === undefined ? Math.max(1, pdf.length) : FILE_ACCESS_SIZE;
    const ptr = m.pdfium.wasmExports.malloc(size);
    if (!ptr) return { status: 'too-complex', reason: 'the engine is out of memory' };
    try {
      let doc: number;
      if (reader === undefined) {
        // HEAPU8 is re-created when the heap grows, so it is read after malloc
        heapOf(m).set(pdf, ptr);
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
        return use(doc);
      } finally {
        m.FPDF_CloseDocument(doc);
      }
    } finally {
      this.reading = undefined;
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
