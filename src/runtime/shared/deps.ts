/**
 * What the Node, Bun and Deno entries (and the CLI and tests) share: the engines' WebAssembly compiled from the files in
 * node_modules, engines in this thread, and the app's deps with a stdout log. Bun and Deno run these node: APIs as
 * they are; the Workers entry has its own (static WASM imports, no file system).
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AppDeps } from '../../app.ts';
import { ConfigError, type HttpConfig } from '../../config.ts';
import { parseApiKeys, type ApiKey } from '../../http/api-keys.ts';
import type { EndpointConfig } from '../../idb/config.ts';
import { jsonLogger } from '../../logger.ts';
import { PdfiumEngine } from '../../pdf/engine/pdfium.ts';
import { EngineQueue } from '../../pdf/engine/queue.ts';
import type { Clock } from '../../ports.ts';
import { localQrExtractor } from '../../qr/extractor.ts';
import { ZxingReader } from '../../qr/zxing.ts';
import { PromMetricsRegistry } from './prometheus.ts';

const require = createRequire(import.meta.url);

/** The engines' WebAssembly, compiled once per process from the files in node_modules; never fetched. */
export interface EngineModules {
  pdfium: WebAssembly.Module;
  zxing: WebAssembly.Module;
}

export async function loadEngineModules(): Promise<EngineModules> {
  const compile = async (specifier: string) => WebAssembly.compile(await readFile(require.resolve(specifier)));
  const [pdfium, zxing] = await Promise.all([
    compile('@embedpdf/pdfium/pdfium.wasm'),
    compile('zxing-wasm/reader/zxing_reader.wasm'),
  ]);
  return { pdfium, zxing };
}

const clock: Clock = { now: () => performance.now() };

/**
 * Engines in this thread (Bun, Deno, the CLI, tests): PDFium bounded by its memory ceiling, not stoppable by time; one
 * document at a time, the others waiting at most QUEUE_TIMEOUT_MS (EngineQueue).
 */
export async function inProcessEngines(config: HttpConfig): Promise<Pick<AppDeps, 'engine' | 'qr' | 'engineStats'>> {
  const modules = await loadEngineModules();
  const queue = new EngineQueue(config.queueTimeoutMs);
  const engine = new PdfiumEngine({
    wasm: modules.pdfium,
    memoryLimitBytes: config.pdfEngineMemoryBytes,
    onAbort: () => queue.restarted(),
  });
  return {
    ...queue.wrap({
      engine,
      qr: localQrExtractor({
        pages: engine,
        reader: new ZxingReader(modules.zxing),
        clock,
        timeoutMs: config.pdfTimeoutMs,
      }),
    }),
    engineStats: queue,
  };
}

/** API_KEYS_FILE read from the file system (or API_KEYS as given), parsed by the core; a file that cannot be read stops the service. */
function loadApiKeys(config: HttpConfig): ApiKey[] | undefined {
  const source = config.auth.apiKeys;
  if (!source) return undefined;
  if (source.from === 'text') return parseApiKeys(source.text, 'API_KEYS');
  let text: string;
  try {
    text = readFileSync(source.path, 'utf8');
  } catch (e) {
    throw new ConfigError(
      `API_KEYS_FILE ${source.path} cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  return parseApiKeys(text, `API_KEYS_FILE ${source.path}`);
}

export function serverDeps(
  config: HttpConfig,
  endpoint: EndpointConfig,
  engines: Pick<AppDeps, 'engine' | 'qr' | 'engineStats'>,
): AppDeps & { metrics: PromMetricsRegistry } {
  let docsScript: Promise<string> | undefined;
  const apiKeys = loadApiKeys(config);
  return {
    config,
    endpoint,
    ...engines,
    ...(apiKeys && { apiKeys }),
    metrics: new PromMetricsRegistry(),
    clock,
    logger: jsonLogger(config.logLevel, (line) => process.stdout.write(`${line}\n`)),
    docsScript: () => (docsScript ??= readFile(require.resolve('@scalar/api-reference/browser/standalone.js'), 'utf8')),
  };
}
