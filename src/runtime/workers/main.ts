import type { ExecutionContext } from 'hono';
import pdfiumWasm from '@embedpdf/pdfium/pdfium.wasm';
import zxingWasm from 'zxing-wasm/reader/zxing_reader.wasm';
import scalarStandalone from '@scalar/api-reference/browser/standalone.js';
import { createApp, type AppDeps } from '../../app.ts';
import { ConfigError, readHttpConfig, type Environment } from '../../config.ts';
import { parseApiKeys } from '../../http/api-keys.ts';
import { readEndpointConfig } from '../../idb/config.ts';
import { jsonLogger } from '../../logger.ts';
import { PdfiumEngine } from '../../pdf/engine/pdfium.ts';
import { EngineQueue } from '../../pdf/engine/queue.ts';
import { localQrExtractor } from '../../qr/extractor.ts';
import { ZxingReader } from '../../qr/zxing.ts';
import { PromMetricsRegistry } from '../shared/prometheus.ts';

/**
 * Cloudflare Workers (workerd) entry. The app is built once per isolate, on the first request, because the
 * environment (`[vars]` of wrangler.toml, secrets) only arrives with a request.
 *
 * - `pdfiumWasm` is already a `WebAssembly.Module` (wrangler's CompiledWasm rule): Workers refuse to compile
 *   WebAssembly from bytes at run time, so PdfiumEngine hands this module to the emscripten glue through its
 *   `instantiateWasm` hook. The glue wrangler bundles is the package's `browser` build (index.browser.js), which has
 *   no Node code path, so this works without `nodejs_compat`.
 * - The PDF engine runs in the request's own isolate: there are no threads to move it to, and the platform's CPU
 *   limit is what stops a runaway document.
 * - Isolates have 128 MB, so the engine's heap ceiling is 96 MB unless PDF_ENGINE_MEMORY_MB says otherwise.
 * - A deployed Worker is public: HOST is unset there, so authentication is required (the API_KEYS secret, AUTH_JWKS_URL)
 *   unless AUTH=none says otherwise. `npm run start:workers` passes its loopback bind address as HOST.
 * - API keys come from the secret binding API_KEYS, the same `name:sha256hex` lines as API_KEYS_FILE (no file system).
 * - MAX_INFLIGHT_MB, QUEUE_TIMEOUT_MS and /metrics count per isolate: each isolate has its own.
 */

type App = ReturnType<typeof createApp>;

let app: App | undefined;

function build(env: Environment): App {
  const config = readHttpConfig(env, { pdfEngineMemoryBytes: 96 * 1024 * 1024, host: '0.0.0.0' });
  if (config.auth.apiKeys?.from === 'file')
    throw new ConfigError(
      'API_KEYS_FILE cannot be read on Workers (no file system): put the same lines in the API_KEYS secret',
    );
  const apiKeys = config.auth.apiKeys && parseApiKeys(config.auth.apiKeys.text, 'API_KEYS');
  // One document at a time in this isolate, the others waiting at most QUEUE_TIMEOUT_MS.
  const queue = new EngineQueue(config.queueTimeoutMs);
  const pdfium = new PdfiumEngine({
    wasm: pdfiumWasm,
    memoryLimitBytes: config.pdfEngineMemoryBytes,
    onAbort: () => queue.restarted(),
  });
  // In workerd, performance.now() (like Date.now()) only advances when the isolate does I/O, a guard against timing
  // side channels. Durations in the logs and the PDF time budget therefore count from the last I/O; that is
  // acceptable here because the platform's own CPU limit bounds a request's computation.
  const clock = { now: () => performance.now() };
  const deps: AppDeps = {
    config,
    endpoint: readEndpointConfig(env),
    ...queue.wrap({
      engine: pdfium,
      // The package types its .wasm export as a file path (for bundlers' file loaders); wrangler's CompiledWasm rule
      // makes it the compiled module.
      qr: localQrExtractor({
        pages: pdfium,
        reader: new ZxingReader(zxingWasm as unknown as WebAssembly.Module),
        clock,
        timeoutMs: config.pdfTimeoutMs,
      }),
    }),
    engineStats: queue,
    ...(apiKeys && { apiKeys }),
    metrics: new PromMetricsRegistry(),
    clock,
    logger: jsonLogger(config.logLevel, (line) => console.log(line)),
    docsScript: async () => scalarStandalone,
  };
  return createApp(deps);
}

export default {
  fetch(request: Request, env: Record<string, unknown>, ctx: ExecutionContext): Response | Promise<Response> {
    try {
      app ??= build(env as Record<string, string | undefined>);
    } catch (e) {
      // Node refuses to start with a bad setting; a Worker has no start, so every request says so until it is fixed.
      if (!(e instanceof ConfigError)) throw e;
      jsonLogger('error', (line) => console.log(line)).log('error', 'invalid configuration', { message: e.message });
      return new Response(JSON.stringify({ title: 'The service is misconfigured.', status: 500 }), {
        status: 500,
        headers: { 'Content-Type': 'application/problem+json' },
      });
    }
    return app.fetch(request, env, ctx);
  },
};
