import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { createApp, type AppDeps } from '../../app.ts';
import type { HttpConfig } from '../../config.ts';
import { jsonLogger } from '../../logger.ts';
import { PdfiumEngine } from '../../pdf/engine/pdfium.ts';
import type { PdfEngine } from '../../pdf/engine/port.ts';
import { WorkerPdfEngine } from './worker-engine.ts';

const require = createRequire(import.meta.url);

/** Compiled once per process from the file in node_modules; never fetched. */
export async function loadPdfiumWasm(): Promise<WebAssembly.Module> {
  return WebAssembly.compile(await readFile(require.resolve('@embedpdf/pdfium/pdfium.wasm')));
}

export async function inProcessEngine(config: HttpConfig): Promise<PdfEngine> {
  return new PdfiumEngine({ wasm: await loadPdfiumWasm(), memoryLimitBytes: config.pdfEngineMemoryBytes });
}

export function nodeDeps(config: HttpConfig, engine: PdfEngine): AppDeps {
  let docsScript: Promise<string> | undefined;
  return {
    config,
    engine,
    clock: { now: () => performance.now() },
    logger: jsonLogger(config.logLevel, (line) => process.stdout.write(line + '\n')),
    docsScript: () => (docsScript ??= readFile(require.resolve('@scalar/api-reference/browser/standalone.js'), 'utf8')),
  };
}

/** The service as `npm start` runs it: PDFium in a pool of worker threads (PDF_WORKERS, default one per core). */
export async function nodeService(config: HttpConfig, workers = availableParallelism()) {
  const engine = new WorkerPdfEngine({ wasm: await loadPdfiumWasm(), workers, timeoutMs: config.pdfTimeoutMs, memoryLimitBytes: config.pdfEngineMemoryBytes });
  const deps = nodeDeps(config, engine);
  return { app: createApp(deps), deps, engine };
}
