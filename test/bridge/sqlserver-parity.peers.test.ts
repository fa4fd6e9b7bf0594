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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BridgeOnBabelfish, startBridgeOnBabelfish } from '../support/peers/babelfish.ts';
import { buildDotnetProject, runChecks } from '../support/peers/dotnet.ts';
import { describeFailures } from '../support/peers/mono-e2e.ts';
import { needPeers, PEERS } from '../support/peers.ts';

const TIMEOUT = 600_000;
const missing = needPeers('bridge sqlserver parity', PEERS.dotnet, PEERS.babelfish);

describe.skipIf(missing)('SQL Server parity: SqlClient directly and the bridge, the same T-SQL', () => {
  let running: BridgeOnBabelfish;
  let dll: string;

  beforeAll(async () => {
    let build;
    [running, build] = await Promise.all([startBridgeOnBabelfish(), buildDotnetProject('SqlParity')]);
    dll = build.dll;
  }, TIMEOUT);

  afterAll(async () => {
    await running?.stop();
  });

  it(
    'answers at least 40 statements alike, the listed differences aside, and leaves the database as it found it',
    async () => {
      const run = await runChecks(dll, [running.endpoint, running.bbf.connectionString], {
        timeoutMs: TIMEOUT - 20_000,
      });
      expect(run.failed, describeFailures(run)).toEqual([]);
      const compared = run.checks.filter((c) => c.check.startsWith('parity.') && !('info' in c));
      expect(compared.length).toBeGreaterThanOrEqual(40);
    },
    TIMEOUT,
  );
});
