/**
 * The judge of every byte: Mono's WCF client (System.ServiceModel, NetTcpBinding, SecurityMode.None) against the
 * bridge, on the embedded SQLite file and on a real PostgreSQL with S3-compatible storage. E2EClient (test/mono) runs
 * all 13 operations with checks of every returned value; the client Mono's svcutil generates from our WSDL calls
 * the bridge too.
 */
import { serve, type ServerType } from '@hono/node-server';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBridgeConfig } from '../../tcp-bridge/src/config.ts';
import { startBridge, type RunningBridge } from '../../tcp-bridge/src/server.ts';
import { openNodeIdbService } from '../../src/runtime/node/idb/idb-service.ts';
import { testApp } from '../support/http/app.ts';
import { bridgeBackends, type BridgeBackend } from '../support/peers/bridge-backends.ts';
import { describeFailures, runE2EClient, runSvcutilClient } from '../support/peers/mono-e2e.ts';
import { freePort } from '../support/net.ts';
import { needPeers, PEERS } from '../support/peers.ts';

const MONO_TIMEOUT = 240_000;

describe.skipIf(needPeers('bridge mono', PEERS.mono)).each(bridgeBackends('bridge-mono'))(
  'Mono WCF client against the bridge on %s',
  (name, start) => {
    let folder: string;
    let backend: BridgeBackend;
    let bridge: RunningBridge;
    let endpoint: string;

    beforeAll(async () => {
      folder = await mkdtemp(join(tmpdir(), `bridge-mono-${name}-`));
      await writeFile(join(folder, 'roles.json'), JSON.stringify({ writer: ['anonymous'] }));
      backend = await start(folder);
      const config = readBridgeConfig({
        BRIDGE_SECURITY: 'none',
        BRIDGE_PORT: '0',
        BRIDGE_ROLES_FILE: join(folder, 'roles.json'),
        ...backend.env,
      });
      const logger = { log: () => {} };
      bridge = await startBridge(config, await openNodeIdbService(config, logger), logger);
      // Mono ignores replies whose To differs from the address it dialled: the via names the port it connects to.
      endpoint = `net.tcp://localhost:${bridge.port}/IDBService`;
    }, 60_000);

    afterAll(async () => {
      await bridge?.close();
      await backend?.stop();
      await rm(folder, { recursive: true, force: true });
    });

    it(
      'passes every check of the 13 operations, several channels at once included',
      async () => {
        const run = await runE2EClient(endpoint, { backend: name, timeoutMs: MONO_TIMEOUT - 10_000 });
        expect(run.failed, describeFailures(run)).toEqual([]);
        expect(run.summary?.passed).toBeGreaterThan(100);
      },
      MONO_TIMEOUT,
    );

    it.runIf(name === 'sqlite')(
      "answers the client Mono's svcutil generates from GET /IDBService?wsdl&datatable=anytype",
      async () => {
        const { app } = await testApp({ BRIDGE_SECURITY: 'none', BRIDGE_PORT: String(bridge.port) });
        const port = await freePort();
        let server: ServerType | undefined;
        await new Promise<void>((listening) => {
          server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, () => listening());
        });
        try {
          const run = await runSvcutilClient(`http://127.0.0.1:${port}/IDBService?wsdl&datatable=anytype`, endpoint, {
            timeoutMs: MONO_TIMEOUT - 10_000,
          });
          expect(run.failed, describeFailures(run)).toEqual([]);
          expect(run.checks.length).toBeGreaterThan(3);
        } finally {
          await new Promise((closed) => server?.close(closed));
        }
      },
      MONO_TIMEOUT,
    );
  },
);
