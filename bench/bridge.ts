/**
 * The tcp-bridge's part of `npm run bench`: Heartbeat and a small ReturnScalar, calls per second and p99 latency with
 * 1 and 8 channels, against three servers in the same run, driven by bench/nettcp-client.ts (Mono's WCF client spends
 * ~50 ms per call whatever the server does, so it cannot measure a fast server):
 * - the bridge as `npm run bridge` runs it (the esbuild bundle on plain node, security None, the embedded SQLite
 *   database in a temp folder); ReturnScalar runs `SELECT 42` in SQLite, in its own read-only transaction;
 * - a Mono ServiceHost of the same contract (SecurityMode.None; its ReturnScalar answers 42 without a database);
 * - a canned responder: a trivial net.tcp server answering every envelope with the same Heartbeat reply bytes, the
 *   floor set by the transport and the client.
 * Windows security (the handshake, sealed calls) is measured by bench/negotiate.ts; the bridge here runs as
 * deployments with SecurityMode.None do.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMonoHost } from '../test/support/peers/mono-e2e.ts';
import { runLoad, type LoadResult } from './nettcp-load.ts';
import { killAllChildren, procMemMB, startBridgeProcess, startCannedResponder } from './server.ts';
import { isMainModule } from './main-module.ts';

interface Target {
  name: string;
  endpoint: string;
  operations: readonly ('Heartbeat' | 'ReturnScalar')[];
  rssMB?: () => number;
  stop(): Promise<void>;
}

const SECONDS = 3;

/** The bridge as `npm run bridge` runs it, security None, SQLite in a temp folder. */
async function startBridge(): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-bridge-'));
  writeFileSync(join(dir, 'roles.json'), JSON.stringify({ writer: ['anonymous'] }));
  const bridge = await startBridgeProcess({
    BRIDGE_SECURITY: 'none',
    BRIDGE_ROLES_FILE: join(dir, 'roles.json'),
    DATABASE_URL: `file:${join(dir, 'idb.sqlite')}`,
    FILES_URL: `file:${join(dir, 'files')}`,
  });
  return {
    name: 'tcp-bridge (SQLite)',
    endpoint: bridge.endpoint,
    operations: ['Heartbeat', 'ReturnScalar'],
    rssMB: () => procMemMB(bridge.pid, 'VmHWM'),
    async stop() {
      await bridge.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface BridgeBenchRow {
  target: string;
  operation: string;
  channels: number;
  result?: LoadResult;
  error?: string;
}

/** Runs every target × operation × channel count and prints the table; returns the rows for the targets. */
export async function runBridgeBench(): Promise<BridgeBenchRow[]> {
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const targets: Target[] = [];
  const rows: BridgeBenchRow[] = [];
  const rss = new Map<string, number>();
  try {
    targets.push(await startBridge());
    try {
      const host = await startMonoHost();
      targets.push({
        name: 'Mono ServiceHost',
        endpoint: `net.tcp://localhost:${host.port}/IDBService`,
        operations: ['Heartbeat', 'ReturnScalar'],
        rssMB: () => procMemMB(host.pid, 'VmHWM'),
        stop: host.stop,
      });
    } catch (error) {
      log(`Mono ServiceHost not started: ${(error as Error).message.split('\n')[0]}`);
    }
    targets.push(await startCannedResponder());
    for (const operation of ['Heartbeat', 'ReturnScalar'] as const) {
      for (const channels of [1, 8]) {
        for (const target of targets) {
          if (!target.operations.includes(operation)) continue;
          log(`net.tcp: ${target.name} ${operation} × ${channels}`);
          const row: BridgeBenchRow = { target: target.name, operation, channels };
          try {
            row.result = await runLoad({
              endpoint: target.endpoint,
              channels,
              durationMs: SECONDS * 1000,
              operation,
              warmupCalls: 50,
            });
            if (row.result.errors > 0) row.error = `${row.result.errors} errors: ${row.result.firstError}`;
          } catch (error) {
            row.error = (error as Error).message.split('\n')[0];
          }
          rows.push(row);
          if (target.rssMB) rss.set(target.name, target.rssMB());
        }
      }
    }
  } finally {
    for (const target of targets) await target.stop().catch(() => {});
  }

  const rate = (target: string, operation: string, channels: number) =>
    rows.find((r) => r.target === target && r.operation === operation && r.channels === channels)?.result
      ?.callsPerSecond;
  console.log('');
  console.log('# tcp-bridge benchmark (net.tcp, SecurityMode.None, one call in flight per channel)');
  console.log('');
  console.log('| server | operation | channels | calls/s | p50 | p99 | vs Mono host | vs canned Heartbeat |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    const r = row.result;
    const mono = rate('Mono ServiceHost', row.operation, row.channels);
    const canned = rate('canned responder', 'Heartbeat', row.channels);
    const ratio = (peer: number | undefined) => (r && peer ? `${(r.callsPerSecond / peer).toFixed(2)}×` : '–');
    console.log(
      `| ${row.target} | ${row.operation} | ${row.channels} | ${r ? Math.round(r.callsPerSecond) : '–'} | ${r ? `${r.p50Ms.toFixed(2)} ms` : '–'} | ${r ? `${r.p99Ms.toFixed(2)} ms` : '–'} | ${ratio(mono)} | ${ratio(canned)} |${row.error ? ` ${row.error}` : ''}`,
    );
  }
  console.log('');
  for (const [name, mb] of rss) console.log(`- ${name}: peak RSS ${mb.toFixed(0)} MB`);
  const bridge = 'tcp-bridge (SQLite)';
  for (const channels of [1, 8]) {
    const b = rate(bridge, 'Heartbeat', channels);
    const m = rate('Mono ServiceHost', 'Heartbeat', channels);
    const c = rate('canned responder', 'Heartbeat', channels);
    if (b && m)
      console.log(
        `- target bridge ≥ 1.5 × Mono host (Heartbeat, ${channels} ch): ${(b / m).toFixed(2)}× ${b / m >= 1.5 ? 'PASS' : 'FAIL'}`,
      );
    if (b && c)
      console.log(
        `- target bridge ≥ 0.5 × canned responder (Heartbeat, ${channels} ch): ${(b / c).toFixed(2)}× ${b / c >= 0.5 ? 'PASS' : 'FAIL'}`,
      );
  }
  return rows;
}

// `npx tsx bench/bridge.ts`: this part alone (after `npm run build:node`).
if (isMainModule(import.meta)) {
  await runBridgeBench();
  killAllChildren();
  process.exit(0);
}
