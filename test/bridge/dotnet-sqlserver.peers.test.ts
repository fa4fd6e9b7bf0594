/**
 * Microsoft's WCF client for .NET (test/dotnet/WcfClient) through the bridge on SQL Server (Babelfish): the scenario's
 * sections that send no SQL of their own (heartbeat, files, documents: the service's own T-SQL) and the T-SQL section
 * (`tsql`: TOP, ISNULL, N'' literals, bracketed names, NOLOCK, batches, SCOPE_IDENTITY, local variables, and the
 * DataTable column types SQL Server adds: Byte, DateTimeOffset, TimeSpan, read by System.Data itself). The shared
 * sections' SQL is written for SQLite and PostgreSQL (boolean, bytea, WITH RECURSIVE): not run here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BridgeOnBabelfish, startBridgeOnBabelfish } from '../support/peers/babelfish.ts';
import { buildDotnetProject, runChecks } from '../support/peers/dotnet.ts';
import { describeFailures } from '../support/peers/mono-e2e.ts';
import { needPeers, PEERS } from '../support/peers.ts';

const TIMEOUT = 600_000;
const missing = needPeers('bridge dotnet sqlserver', PEERS.dotnet, PEERS.babelfish);

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
    'passes the SQL-free sections and the T-SQL section, Byte, DateTimeOffset and TimeSpan columns included',
    async () => {
      const run = await runChecks(
        dll,
        ['e2e', running.endpoint, '--backend', 'sqlserver', '--sections', 'heartbeat,files,documents,tsql,cleanup'],
        { timeoutMs: TIMEOUT - 20_000 },
      );
      expect(run.failed, describeFailures(run)).toEqual([]);
      expect(run.checks.filter((c) => c.check.startsWith('tsql.')).length).toBeGreaterThan(20);
    },
    TIMEOUT,
  );
});
