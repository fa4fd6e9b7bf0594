import { readHttpConfig } from '../../config.ts';
import { readEndpointConfig } from '../../idb/config.ts';
import { nodeService } from './deps.ts';
import { serveNode } from './serve.ts';

const config = readHttpConfig(process.env);
const { app, deps, engine } = await nodeService(config, readEndpointConfig(process.env), config.pdfWorkers);

const server = serveNode(
  {
    fetch: app.fetch,
    port: config.port,
    hostname: config.host,
    budget: deps.budget,
    maxBodyBytes: config.maxBodyBytes,
  },
  (info) => {
    deps.logger.log('info', 'listening', {
      url: `http://${info.address}:${info.port}`,
      runtime: `node ${process.version}`,
    });
  },
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    deps.logger.log('info', 'shutting down', { signal });
    server.close(() => void engine.close().then(() => process.exit(0)));
  });
}
