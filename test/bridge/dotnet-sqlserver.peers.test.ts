/**
 * Microsoft's WCF client for .NET (test/dotnet/WcfClient) through the bridge on SQL Server (Babelfish): the whole
 * scenario test/bridge/dotnet.peers.test.ts runs on SQLite and PostgreSQL (every section of its default list: the 13
 * operations, DataTables of every column type, scalars of every parameter type, requests, faults, 100 channels in a
 * row, 16 at once, 50 MB, quotas) with each SQL-sending section's T-SQL text (`--backend sqlserver`: Sql() in
 * test/wcf-shared/Sections.cs) and SQL Server's answers where they differ (COUNT(*) an int, Fill's Byte for tinyint,
 * an undeclared @name the server's error); and the T-SQL section (`tsql`: TOP, ISNULL, N'' literals, bracketed names,
 * NOLOCK, batches, SCOPE_IDENTITY, local variables, and the DataTable column types SQL Server adds: Byte,
 * DateTimeOffset, TimeSpan, read by System.Data itself). Where Babelfish answers otherwise than SQL Server the check
 * is skipped with the reason (scalar.param.string: a bare NVARCHAR parameter comes back as VARCHAR).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BridgeOnBabelfish, startBridgeOnBabelfish } from '../support/peers/babelfish.ts';
import { buildDotnetProject, runChecks, WCF_CLIENT_SECTIONS } from '../support/peers/dotnet.ts';
import { describeFailures } from '../support/peers/mono-e2e.ts';
import { needPeers, PEERS } from '../support/peers.ts';

const TIMEOUT = 600_000;
const missing = needPeers('bridge dotnet sqlserver', PEERS.dotnet, PEERS.babelfish);

/** The sections the client runs by default on SQL Server: dotnet.peers.test.ts's list, and tsql before cleanup. */
const SECTIONS = [...WCF_CLIENT_SECTIONS.slice(0, -1), 'tsql', 'cleanup'];

describe.skipIf(missing)('.NET WCF client through the bridge on SQL Server (Babelfish)', () => {
  let running: BridgeOnBabelfish;
  let dll: string;

  beforeAll(async () => {
    let build;
    [running, build] = await Promise.all([startBridgeOnBabelfish(), buildDotnetProject('WcfClient')]);
    dll = build.dll;
  }, TIMEOUT);

  afterAll(async () => {
    await running?.stop();
  });

  it(
    'passes the whole scenario in T-SQL, and the T-SQL section with its Byte, DateTimeOffset and TimeSpan columns',
    async () => {
      const run = await runChecks(dll, ['e2e', running.endpoint, '--backend', 'sqlserver'], {
        timeoutMs: TIMEOUT - 20_000,
      });
      expect(run.failed, describeFailures(run)).toEqual([]);
      expect(run.checks.filter((c) => c.section).map((c) => [c.check, c.ok])).toEqual(SECTIONS.map((s) => [s, true]));
      expect(run.summary?.passed).toBeGreaterThan(500);
      expect(run.checks.filter((c) => c.check.startsWith('tsql.')).length).toBeGreaterThan(20);
      // Only Babelfish's own difference is skipped; nothing else is.
      expect(run.checks.filter((c) => c.skipped).map((c) => c.check)).toEqual(['scalar.param.string']);
    },
    TIMEOUT,
  );
});
