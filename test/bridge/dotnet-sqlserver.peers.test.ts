/**
 * Microsoft's WCF client for .NET (test/dotnet/WcfClient) through the bridge on SQL Server (Babelfish): the scenario's
 * sections that send no SQL of their own (heartbeat, files, documents: the service's own T-SQL) and the T-SQL section
 * (`tsql`: TOP, ISNULL, N'' literals, bracketed names, NOLOCK, batches, SCOPE_IDENTITY, local variables, and the
 * DataTable column types SQL Server adds: Byte, DateTimeOffset, TimeSpan, read by System.Data itself). The shared
 * sections' SQL is written for SQLite and PostgreSQL (boolean, bytea, WITH RECURSIVE): not run here.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openNodeIdbService } from '../../src/runtime/node/idb/idb-service.ts';
import { readBridgeConfig } from '../../tcp-bridge/src/config.ts';
import { type RunningBridge, securityBackends, startBridge } from '../../tcp-bridge/src/server.ts';
import { BABELFISH_MISSING, babelfishAvailable, type RunningBabelfish, startBabelfish } from '../support/babelfish.ts';
import { buildDotnetProject, DOTNET_MISSING, dotnetAvailable, runChecks } from '../support/dotnet.ts';
import { describeFailures } from '../support/mono-e2e.ts';

const TIMEOUT = 600_000;
const available = dotnetAvailable() && babelfishAvailable;
if (!dotnetAvailable()) console.warn(`[bridge dotnet sqlserver] ${DOTNET_MISSING}`);
if (!babelfishAvailable) console.warn(`[bridge dotnet sqlserver] ${BABELFISH_MISSING}`);

describe.skipIf(!available)('.NET WCF client through the bridge on SQL Server (Babelfish)', () => {
  let folder: string;
  let bbf: RunningBabelfish;
  let bridge: RunningBridge;
  let dll: string;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'bridge-dotnet-sqlserver-'));
    await writeFile(join(folder, 'roles.json'), JSON.stringify({ writer: ['anonymous'] }));
    let build;
    [bbf, build] = await Promise.all([startBabelfish(), buildDotnetProject('WcfClient')]);
    dll = build.dll;
    const config = readBridgeConfig({
      BRIDGE_PORT: '0',
      BRIDGE_SECURITY: 'none',
      BRIDGE_ROLES_FILE: join(folder, 'roles.json'),
      DATABASE_URL: bbf.url,
      FILES_URL: `file:${join(folder, 'files')}`,
    });
    const logger = { log: () => {} };
    bridge = await startBridge(config, await openNodeIdbService(config, logger), logger, securityBackends(config));
  }, TIMEOUT);

  afterAll(async () => {
    await bridge?.close();
    await bbf?.stop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it(
    'passes the SQL-free sections and the T-SQL section, Byte, DateTimeOffset and TimeSpan columns included',
    async () => {
      const run = await runChecks(
        dll,
        [
          'e2e',
          `net.tcp://localhost:${bridge.port}/IDBService`,
          '--backend',
          'sqlserver',
          '--sections',
          'heartbeat,files,documents,tsql,cleanup',
        ],
        { timeoutMs: TIMEOUT - 20_000 },
      );
      expect(run.failed, describeFailures(run)).toEqual([]);
      expect(run.checks.filter((c) => c.check.startsWith('tsql.')).length).toBeGreaterThan(20);
    },
    TIMEOUT,
  );
});

if (!available) describe.skip('.NET WCF client on SQL Server', () => it.skip('needs dotnet and Babelfish', () => {}));
