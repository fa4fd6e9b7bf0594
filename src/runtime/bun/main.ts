/**
 * Bun entry: the same app as on Node, served by Bun.serve, with the deps shared with the Node entry (runtime/shared) (Bun runs them unchanged).
 * PDFium runs in-process: its memory ceiling bounds a decompression bomb, but unlike Node's worker pool a call cannot
 * be stopped at PDF_TIMEOUT_MS.
 */
import { createApp } from '../../app.ts';
import { readHttpConfig } from '../../config.ts';
import { readEndpointConfig } from '../../idb/config.ts';
import { inProcessEngines, serverDeps } from '../shared/deps.ts';

const config = readHttpConfig(process.env);
const deps = serverDeps(config, readEndpointConfig(process.env), await inProcessEngines(config));
const app = createApp(deps);

const server = Bun.serve({
  port: config.port,
  hostname: config.host,
  fetch: app.fetch,
  // The app enforces MAX_BODY_MB itself, on Content-Length and while streaming (src/http/request-body.ts), and answers
  // a problem+json 413. Bun's own limit would answer a bodyless 413 before the app sees the request, unlike Node and
  // Deno, so it is left open; Bun streams request bodies, so nothing is buffered past what the app reads.
  maxRequestBodySize: Number.MAX_SAFE_INTEGER,
});
deps.logger.log('info', 'listening', {
  url: `http://${server.hostname}:${server.port}`,
  runtime: `bun ${Bun.version}`,
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    deps.logger.log('info', 'shutting down', { signal });
    void server.stop().then(() => process.exit(0));
  });
}
