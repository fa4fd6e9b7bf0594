/** What a PDF engine reports about a document it was asked to open. */
export type EngineReport =
  | { status: 'opened'; pageCount: number; version: string | undefined; attachmentCount: number; firstAndLastPageLoad: boolean }
  | { status: 'needs-password' }
  | { status: 'unreadable'; reason: string }
  /** The engine ran out of its memory or time budget: a decompression bomb or an absurd structure. */
  | { status: 'too-complex'; reason: string };

/** The port through which the core uses a PDF engine; adapters decide where it runs (in process, in a worker). */
export interface PdfEngine {
  /**
   * May take ownership of `pdf` and of the buffer it views (a worker-thread adapter transfers that buffer): callers
   * must not read either afterwards.
   */
  inspect(pdf: Uint8Array): Promise<EngineReport>;
}
