/**
 * What the Node, Bun and Deno entries (and the CLI and tests) share: the engines' WebAssembly compiled from the files in
 * node_modules, engines in this thread, and the app's deps with a stdout log. Bun and Deno run these node: APIs as
 * they are; the Workers entry has its own (static WASM imports, no file system).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AppDeps } from '../../app.ts';
import type { HttpConfig } from '../../config.ts';
import type { EndpointConfig } from '../../idb/config.ts';
import { jsonLogger } from '../../logger.ts';
import { PdfiumEngine } from '../../pdf/engine/pdfium.ts';
import type { Clock } from '../../ports.ts';
import { localQrExtractor } from '../../qr/extractor.ts';
import { ZxingReader } from '../../qr/zxing.ts';

const require = createRequire(import.meta.url);

/** The engines' WebAssembly, compiled once per process from the files in node_modules; never fetched. */
export interface EngineModules {
  pdfium: WebAssembly.Module;
  zxing: WebAssembly.Module;
}

export async function loadEngineModules(): Promise<EngineModules> {
  const compile = async (specifier: string) => WebAssembly.compile(await readFile(require.resolve(specifier)));
  const [pdfium, zxing] = await Promise.all([compile('@embedpdf/pdfium/pdfium.wasm'), compile('zxing-wasm/reader/zxing_reader.wasm')]);
  return { pdfium, zxing };
}

const clock: Clock = { now: () => performance.now() };

/** Engines in this thread (Bun, Deno, tests): PDFium bounded by its memory ceiling, not stoppable by time. */
export async function inProcessEngines(config: HttpConfig): Promise<Pick<AppDeps, 'engine' | 'qr'>> {
  const modules = await loadEngineModules();
  const engine = new PdfiumEngine({ wasm: modules.pdfium, memoryLimitBytes: config.pdfEngineMemoryBytes });
  return { engine, qr: localQrExtractor({ pages: engine, reader: new ZxingReader(modules.zxing), clock, timeoutMs: config.pdfTimeoutMs }) };
}

export function serverDeps(config: HttpConfig, endpoint: EndpointConfig, engines: Pick<AppDeps, 'engine' | 'qr'>): AppDeps {
  let docsScript: Promise<string> | undefined;
  return {
    config,
    endpoint,
    ...engines,
    clock,
    logger: jsonLogger(config.logLevel, (line) => process.stdout.write(line + '\n')),
    docsScript: () => (docsScript ??= readFile(require.resolve('@scalar/api-reference/browser/standalone.js'), 'utf8')),
  };
}
