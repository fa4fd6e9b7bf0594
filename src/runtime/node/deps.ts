import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AppDeps } from '../../app.ts';
import type { HttpConfig } from '../../config.ts';
import { jsonLogger } from '../../logger.ts';
import { PdfiumEngine } from '../../pdf/engine/pdfium.ts';
import type { PdfEngine } from '../../pdf/engine/port.ts';

const require = createRequire(import.meta.url);

/** Compiled once per process (or worker) from the file in node_modules; never fetched. */
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
