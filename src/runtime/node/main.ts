import { availableParallelism } from 'node:os';
import { serve } from '@hono/node-server';
import { createApp } from '../../app.ts';
import { readHttpConfig } from '../../config.ts';
import { nodeDeps } from './deps.ts';
import { WorkerPdfEngine } from './worker-engine.ts';

const config = readHttpConfig(process.env);
const engine = new WorkerPdfEngine({
  workers: Number(process.env.PDF_WORKERS) || availableParallelism(),
  timeoutMs: config.pdfTimeoutMs,
  memoryLimitBytes: config.pdfEngineMemoryBytes,
});
const deps = nodeDeps(config, engine);
const app = createApp(deps);

const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, (info) => {
  deps.logger.log('info', 'listening', { url: `http://${info.address}:${info.port}`, runtime: `node ${process.version}` });
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    deps.logger.log('info', 'shutting down', { signal });
    server.close(() => void engine.close().then(() => process.exit(0)));
  });
}
