/**
 * Parity of the SQL Server backend with the original ADO.NET service: one .NET program (test/dotnet/SqlParity) runs a
 * corpus of T-SQL of the kind legacy clients send (Corpus.cs: TOP, ISNULL, N'' literals, [dbo].[names], NOLOCK,
 * SCOPE_IDENTITY, OUTPUT INSERTED, #temp tables, table variables, CTEs, windows, OFFSET/FETCH, stored procedures,
 * TRY/CATCH, every SQL type of the table, NULLs, empty results, batches, errors; all in one transaction
 * across calls) directly with Microsoft.Data.SqlClient against Babelfish (SqlDataAdapter.Fill, ExecuteScalar,
 * ExecuteNonQuery) and through the bridge with Microsoft's WCF client, and compares schemas (column names and
 * DataType), values and counts. The known differences are listed in Corpus.cs beside their statements, with the
 * reason; they are reported, not compared.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openNodeIdbService } from '../../src/runtime/node/idb/idb-service.ts';
import { readBridgeConfig } from '../../tcp-bridge/src/config.ts';
import { type RunningBridge, securityBackends, startBridge } from '../../tcp-bridge/src/server.ts';
import { babelfishAvailable, type RunningBabelfish, startBabelfish } from '../support/babelfish.ts';
import { buildDotnetProject, dotnetAvailable, runChecks } from '../support/dotnet.ts';
import { describeFailures } from '../support/mono-e2e.ts';

const TIMEOUT = 600_000;
const available = dotnetAvailable() && babelfishAvailable;

describe.skipIf(!available)('SQL Server parity: SqlClient directly and the bridge, the same T-SQL', () => {
  let folder: string;
  let bbf: RunningBabelfish;
  let bridge: RunningBridge;
  let dll: string;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'sqlserver-parity-'));
    await writeFile(join(folder, 'roles.json'), JSON.stringify({ writer: ['anonymous'] }));
    let build;
    [bbf, build] = await Promise.all([startBabelfish(), buildDotnetProject('SqlParity')]);
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
    'answers at least 40 statements alike, the listed differences aside, and leaves the database as it found it',
    async () => {
      const run = await runChecks(dll, [`net.tcp://localhost:${bridge.port}/IDBService`, bbf.connectionString], {
        timeoutMs: TIMEOUT - 20_000,
      });
      expect(run.failed, describeFailures(run)).toEqual([]);
      const compared = run.checks.filter((c) => c.check.startsWith('parity.') && !('info' in c));
      expect(compared.length).toBeGreaterThanOrEqual(40);
    },
    TIMEOUT,
  );
});

if (!available) describe.skip('SQL Server parity', () => it.skip('needs dotnet and Babelfish', () => {}));
