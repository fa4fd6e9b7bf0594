/**
 * The SQL Server part of `npm run bench` (issue 17): ReturnScalar (`SELECT 42`) and a 100-row ReturnDatatable through
 * the bridge on Babelfish (../shared/babelfish, TDS), beside the same statements made directly with
 * Microsoft.Data.SqlClient against the same server, in the same run and the same .NET process
 * (test/dotnet/SqlParity `bench`: one call in flight; SqlClient opens a pooled connection per call, as a plain
 * ADO.NET service does). The bridge runs as `npm run bridge` does (dist/node/bridge.mjs, built by the caller),
 * security None. What the ratio measures: the bridge's whole path (net.tcp, binary SOAP, a transaction per call with
 * its depth checks, the DataTable's XML) against SqlClient's TDS round trip alone.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { babelfishAvailable, BABELFISH_MISSING, startBabelfish } from '../test/support/peers/babelfish.ts';
import { buildDotnetProject, DOTNET_MISSING, dotnetAvailable, runDotnet } from '../test/support/peers/dotnet.ts';
import { killAllChildren, startBridgeProcess } from './server.ts';
import { isMainModule } from './main-module.ts';

const SECONDS = 3;

interface Row {
  bench: string;
  calls: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
}

export async function runSqlServerBench(): Promise<Row[]> {
  console.log('');
  console.log('# SQL Server backend on Babelfish: the bridge beside SqlClient directly (one call in flight)');
  console.log('');
  if (!dotnetAvailable() || !babelfishAvailable) {
    console.log(`Not run: ${!dotnetAvailable() ? DOTNET_MISSING : BABELFISH_MISSING}`);
    return [];
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-sqlserver-'));
  const [{ dll }, bbf] = await Promise.all([buildDotnetProject('SqlParity'), startBabelfish()]);
  try {
    writeFileSync(join(dir, 'roles.json'), JSON.stringify({ writer: ['anonymous'] }));
    const bridge = await startBridgeProcess({
      BRIDGE_SECURITY: 'none',
      BRIDGE_ROLES_FILE: join(dir, 'roles.json'),
      DATABASE_URL: bbf.url,
      FILES_URL: `file:${join(dir, 'files')}`,
    });
    try {
      const run = await runDotnet([dll, 'bench', bridge.endpoint, bbf.connectionString, String(SECONDS)], {
        timeoutMs: 300_000,
      });
      const rows = run.stdout
        .split('\n')
        .filter((l) => l.startsWith('{"bench"'))
        .map((l) => JSON.parse(l) as Row);
      const by = new Map(rows.map((r) => [r.bench, r]));
      console.log('| operation | client | calls/s | p50 ms | p99 ms | bridge / SqlClient (p50) |');
      console.log('| --- | --- | ---: | ---: | ---: | ---: |');
      const pairs: [string, string, string][] = [
        ['ReturnScalar (SELECT 42)', 'SqlClient ExecuteScalar', 'bridge ReturnScalar'],
        ['ReturnDatatable (100 rows)', 'SqlClient Fill 100 rows', 'bridge ReturnDatatable 100 rows'],
      ];
      for (const [operation, direct, bridged] of pairs) {
        const d = by.get(direct);
        const b = by.get(bridged);
        for (const r of [d, b]) {
          if (r === undefined) continue;
          const ratio = r === b && d !== undefined ? `${(b.p50Ms / d.p50Ms).toFixed(2)}×` : '';
          console.log(
            `| ${operation} | ${r === d ? 'SqlClient, directly' : 'WCF client, through the bridge'} | ${(r.calls / r.seconds).toFixed(0)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${ratio} |`,
          );
        }
      }
      if (rows.length < 4) console.log(`\nIncomplete run: ${run.stderr.slice(-500)}`);
      return rows;
    } finally {
      await bridge.stop();
    }
  } finally {
    await bbf.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMainModule(import.meta)) {
  try {
    await runSqlServerBench();
  } finally {
    killAllChildren();
  }
}
