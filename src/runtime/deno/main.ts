/**
 * Deno entry: the same app as on Node, served by Deno.serve, with the deps shared with the Node entry (runtime/shared) (Deno runs them unchanged;
 * npm packages resolve from the project's node_modules because package.json is there). PDFium runs in-process: its
 * memory ceiling bounds a decompression bomb, but unlike Node's worker pool a call cannot be stopped at PDF_TIMEOUT_MS.
 */
import { createApp } from '../../app.ts';
import { readHttpConfig } from '../../config.ts';
import { readEndpointConfig } from '../../idb/config.ts';
import { inProcessEngines, serverDeps } from '../shared/deps.ts';

const env = Deno.env.toObject();
const config = readHttpConfig(env);
const deps = serverDeps(config, readEndpointConfig(env), await inProcessEngines(config));
const app = createApp(deps);

const server = Deno.serve(
  {
    port: config.port,
    hostname: config.host,
    onListen: ({ hostname, port }) =>
      deps.logger.log('info', 'listening', { url: `http://${hostname}:${port}`, runtime: `deno ${Deno.version.deno}` }),
  },
  app.fetch,
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  Deno.addSignalListener(signal, () => {
    deps.logger.log('info', 'shutting down', { signal });
    void server.shutdown().then(() => Deno.exit(0));
  });
}
