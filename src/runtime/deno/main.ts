/**
 * Deno entry: the same app as on Node, served by Deno.serve. PDFium runs in-process; the engine's memory ceiling
 * still bounds a decompression bomb. npm packages resolve from the project's node_modules (see deno.json).
 */
import { createApp } from '../../app.ts';
import { readHttpConfig } from '../../config.ts';
import { inProcessEngine, nodeDeps } from '../node/deps.ts';

const config = readHttpConfig(Deno.env.toObject());
const deps = nodeDeps(config, await inProcessEngine(config));
const app = createApp(deps);

const server = Deno.serve(
  {
    port: config.port,
    hostname: config.host,
    onListen: ({ hostname, port }) => deps.logger.log('info', 'listening', { url: `http://${hostname}:${port}`, runtime: `deno ${Deno.version.deno}` }),
  },
  app.fetch,
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  Deno.addSignalListener(signal, () => {
    deps.logger.log('info', 'shutting down', { signal });
    void server.shutdown().then(() => Deno.exit(0));
  });
}
