/**
 * Bun entry: the same app as on Node, served by Bun.serve. PDFium runs in-process (Bun has no `resourceLimits` for
 * workers); the engine's memory ceiling still bounds a decompression bomb.
 */
import { createApp } from '../../app.ts';
import { readHttpConfig } from '../../config.ts';
import { inProcessEngine, nodeDeps } from '../node/deps.ts';

const config = readHttpConfig(process.env);
const deps = nodeDeps(config, await inProcessEngine(config));
const app = createApp(deps);

const server = Bun.serve({
  port: config.port,
  hostname: config.host,
  fetch: app.fetch,
  // The app enforces MAX_BODY_MB itself and answers 413 as a problem; Bun's own limit only backs it up.
  maxRequestBodySize: config.maxBodyBytes + 1024 * 1024,
});
deps.logger.log('info', 'listening', { url: `http://${server.hostname}:${server.port}`, runtime: `bun ${Bun.version}` });

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    deps.logger.log('info', 'shutting down', { signal });
    void server.stop().then(() => process.exit(0));
  });
}
