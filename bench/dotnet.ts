/**
 * The .NET part of `npm run bench` (issue 10): Heartbeat and ReturnScalar calls/s and p99 with 1 and 8 channels
 * against the bridge, the CoreWCF host and a canned responder, each in its own process, in the same run, driven by
 * Microsoft's WCF client (test/dotnet/WcfClient `bench`: a ChannelFactory channel per thread calling the synchronous
 * proxy in a loop) and by bench/nettcp-client.ts; plus channel opens per second over NTLM (open, Heartbeat, close:
 * with .NET's pool each open is a new preamble, upgrade and logon on the pooled socket).
 *
 * - The bridge runs as `npm run bridge` does (dist/node/bridge.mjs, SQLite in a temp folder, security None; for the
 *   opens row BRIDGE_NTLM_USERS and the default EncryptAndSign).
 * - The CoreWCF host (test/dotnet/CoreWcfHost) when the NuGet feed serves CoreWCF; otherwise its rows say why not.
 * - The canned responder answers every envelope with a Heartbeat reply carrying RelatesTo
 *   (bench/canned-responder.ts --relates): a .NET client waits for a reply that relates to its request, so it needs
 *   that much; it still has no service, database or dispatch. It answers Heartbeat rows only.
 * Short runs (SECONDS per row): the machine has 2 cores and is shared.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDotnetProject, dotnetAvailable, DOTNET_MISSING, runDotnet } from '../test/support/dotnet.ts';
import { startCoreWcfHost } from '../test/support/dotnet-peers.ts';
import { BenchChannel } from './negotiate-client.ts';
import { runLoad } from './nettcp-client.ts';
import { killAllChildren, procMemMB, startBridgeProcess, startCannedResponder } from './server.ts';
import { isMainModule } from './main-module.ts';

const SECONDS = 3;
const OPERATIONS = ['Heartbeat', 'ReturnScalar'] as const;
type Operation = (typeof OPERATIONS)[number];

interface Target {
  name: string;
  endpoint?: string;
  /** Why it is not there. */
  missing?: string;
  operations: readonly Operation[];
  rssMB?: () => number;
  stop(): Promise<void>;
}

export interface DotnetBenchRow {
  server: string;
  client: '.NET WCF' | 'TypeScript';
  operation: string;
  channels: number;
  callsPerSecond?: number;
  p50Ms?: number;
  p99Ms?: number;
  error?: string;
}

const log = (s: string) => process.stderr.write(`${s}\n`);

async function bridge(dir: string, env: Record<string, string> = {}): Promise<Target & { port: number }> {
  writeFileSync(join(dir, 'roles.json'), JSON.stringify({ writer: ['anonymous', 'BENCH\\alice'] }));
  const running = await startBridgeProcess({
    BRIDGE_SECURITY: 'none',
    BRIDGE_ROLES_FILE: join(dir, 'roles.json'),
    DATABASE_URL: `file:${join(dir, 'idb.sqlite')}`,
    FILES_URL: `file:${join(dir, 'files')}`,
    ...env,
  });
  return {
    name: 'tcp-bridge (SQLite)',
    endpoint: running.endpoint,
    port: running.port,
    operations: OPERATIONS,
    rssMB: () => procMemMB(running.pid, 'VmHWM'),
    stop: running.stop,
  };
}

async function coreWcf(): Promise<Target> {
  try {
    const host = await startCoreWcfHost();
    return {
      name: 'CoreWCF host (SQLite)',
      endpoint: host.endpoint,
      operations: OPERATIONS,
      rssMB: () => procMemMB(host.pid, 'VmHWM'),
      stop: host.stop,
    };
  } catch (error) {
    const message = (error as Error).message;
    const unserved = [...new Set([...message.matchAll(/Unable to find package ([\w.]+)/g)].map((m) => m[1]))];
    return {
      name: 'CoreWCF host (SQLite)',
      missing: unserved.length ? `the NuGet feed does not serve ${unserved.join(', ')}` : message.split('\n')[0]!,
      operations: OPERATIONS,
      stop: async () => {},
    };
  }
}

/** One row driven by the .NET client: a process of its own that prints one JSON line. */
async function dotnetRow(
  dll: string,
  endpoint: string,
  operation: Operation,
  channels: number,
): Promise<Partial<DotnetBenchRow>> {
  const result = await runDotnet(
    [
      dll,
      'bench',
      endpoint,
      '--operation',
      operation,
      '--channels',
      String(channels),
      '--seconds',
      String(SECONDS),
      '--warmup',
      '1',
    ],
    { timeoutMs: 120_000 },
  );
  const line = result.stdout.trim().split('\n').pop() ?? '';
  try {
    const r = JSON.parse(line) as {
      perSecond: number;
      p50Ms: number;
      p99Ms: number;
      errors: number;
      firstError?: string;
    };
    return {
      callsPerSecond: r.perSecond,
      p50Ms: r.p50Ms,
      p99Ms: r.p99Ms,
      ...(r.errors > 0 ? { error: `${r.errors} errors: ${r.firstError}` } : {}),
    };
  } catch {
    return { error: `no result (exit ${result.code}): ${(result.stderr || result.stdout).slice(-300)}` };
  }
}

async function typescriptRow(
  endpoint: string,
  operation: Operation,
  channels: number,
): Promise<Partial<DotnetBenchRow>> {
  const r = await runLoad({ endpoint, channels, durationMs: SECONDS * 1000, operation, warmupCalls: 50 });
  return {
    callsPerSecond: r.callsPerSecond,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    ...(r.errors > 0 ? { error: `${r.errors} errors: ${r.firstError}` } : {}),
  };
}

/** Channel opens per second over NTLM against a bridge of its own: the .NET client (gss-ntlmssp) and the TS one. */
async function ntlmOpens(dll: string | undefined, dir: string): Promise<string[]> {
  const users = join(dir, 'users');
  writeFileSync(users, 'BENCH:alice:Secret123!\n', { mode: 0o600 });
  const target = await bridge(dir, { BRIDGE_SECURITY: 'windows', BRIDGE_NTLM_USERS: users });
  const lines: string[] = [];
  try {
    if (dll) {
      const result = await runDotnet(
        [
          dll,
          'opens',
          target.endpoint!,
          '--security',
          'windows',
          '--user',
          'BENCH\\alice',
          '--password',
          'Secret123!',
          '--seconds',
          String(SECONDS),
          '--warmup',
          '1',
        ],
        { timeoutMs: 120_000 },
      );
      try {
        const r = JSON.parse(result.stdout.trim().split('\n').pop() ?? '') as {
          perSecond: number;
          p50Ms: number;
          p99Ms: number;
          errors: number;
          firstError?: string;
        };
        lines.push(
          `| .NET WCF (gss-ntlmssp), EncryptAndSign | ${r.perSecond.toFixed(0)} | ${r.p50Ms.toFixed(2)} ms | ${r.p99Ms.toFixed(2)} ms |${r.errors ? ` ${r.errors} errors: ${r.firstError}` : ''}`,
        );
      } catch {
        lines.push(
          `| .NET WCF (gss-ntlmssp), EncryptAndSign | – | – | – | no result (exit ${result.code}) ${(result.stderr || result.stdout).slice(-200)}`,
        );
      }
    }
    // The TypeScript NTLM client of bench/negotiate.ts: a new socket per channel (it does not pool).
    const latencies: number[] = [];
    const credentials = { domain: 'BENCH', user: 'alice', password: 'Secret123!' };
    const deadline = performance.now() + SECONDS * 1000;
    const started = performance.now();
    while (performance.now() < deadline) {
      const t = performance.now();
      const channel = await BenchChannel.open(target.endpoint!, credentials);
      await channel.heartbeat();
      await channel.close();
      latencies.push(performance.now() - t);
    }
    const elapsed = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)]!;
    lines.push(
      `| TypeScript (bench/negotiate-client.ts), EncryptAndSign | ${(latencies.length / elapsed).toFixed(0)} | ${q(0.5).toFixed(2)} ms | ${q(0.99).toFixed(2)} ms |`,
    );
  } finally {
    await target.stop();
  }
  return lines;
}

export async function runDotnetBench(): Promise<DotnetBenchRow[]> {
  const rows: DotnetBenchRow[] = [];
  console.log('');
  console.log('# .NET clients and CoreWCF (net.tcp, SecurityMode.None, one call in flight per channel)');
  console.log('');
  if (!dotnetAvailable()) {
    console.log(`Not run: ${DOTNET_MISSING}`);
    return rows;
  }
  const { dll } = await buildDotnetProject('WcfClient');
  const dir = mkdtempSync(join(tmpdir(), 'bench-dotnet-'));
  const targets: Target[] = [];
  const rss = new Map<string, number>();
  let opens: string[] = [];
  try {
    targets.push(await bridge(dir));
    targets.push(await coreWcf());
    targets.push(await startCannedResponder({ relates: true }));
    for (const operation of OPERATIONS) {
      for (const channels of [1, 8]) {
        for (const target of targets) {
          if (!target.operations.includes(operation)) continue;
          for (const client of ['.NET WCF', 'TypeScript'] as const) {
            const row: DotnetBenchRow = { server: target.name, client, operation, channels };
            if (target.missing || !target.endpoint) {
              row.error = `not run: ${target.missing}`;
            } else {
              log(`dotnet bench: ${target.name} ${operation} × ${channels} (${client})`);
              try {
                Object.assign(
                  row,
                  client === '.NET WCF'
                    ? await dotnetRow(dll, target.endpoint, operation, channels)
                    : await typescriptRow(target.endpoint, operation, channels),
                );
              } catch (error) {
                row.error = (error as Error).message.split('\n')[0];
              }
              if (target.rssMB) rss.set(target.name, target.rssMB());
            }
            rows.push(row);
          }
        }
      }
    }
  } finally {
    for (const target of targets) await target.stop().catch(() => {});
  }
  try {
    const ntlmDir = mkdtempSync(join(tmpdir(), 'bench-dotnet-ntlm-'));
    try {
      opens = await ntlmOpens(dll, ntlmDir);
    } finally {
      rmSync(ntlmDir, { recursive: true, force: true });
    }
  } catch (error) {
    opens = [`| – | – | – | – | ${(error as Error).message.split('\n')[0]}`];
  }
  rmSync(dir, { recursive: true, force: true });

  const rate = (server: string, client: string, operation: string, channels: number) =>
    rows.find((r) => r.server === server && r.client === client && r.operation === operation && r.channels === channels)
      ?.callsPerSecond;
  console.log('| server | client | operation | channels | calls/s | p50 | p99 | vs CoreWCF | vs canned Heartbeat |');
  console.log('|---|---|---|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    const ratio = (peer: number | undefined) =>
      row.callsPerSecond && peer ? `${(row.callsPerSecond / peer).toFixed(2)}×` : '–';
    const corewcf = rate('CoreWCF host (SQLite)', row.client, row.operation, row.channels);
    const canned = rate('canned responder (RelatesTo)', row.client, 'Heartbeat', row.channels);
    const ms = (v: number | undefined) => (v === undefined ? '–' : `${v.toFixed(2)} ms`);
    console.log(
      `| ${row.server} | ${row.client} | ${row.operation} | ${row.channels} | ${row.callsPerSecond === undefined ? '–' : Math.round(row.callsPerSecond)} | ${ms(row.p50Ms)} | ${ms(row.p99Ms)} | ${ratio(corewcf)} | ${ratio(canned)} |${row.error ? ` ${row.error}` : ''}`,
    );
  }
  console.log('');
  for (const [name, mb] of rss) console.log(`- ${name}: peak RSS ${mb.toFixed(0)} MB`);
  console.log('');
  console.log(`Channel opens per second over NTLM (open, Heartbeat, close; ${SECONDS} s each):`);
  console.log('');
  console.log('| client | opens/s | p50 | p99 |');
  console.log('|---|---:|---:|---:|');
  for (const line of opens) console.log(line);
  return rows;
}

// `npx tsx bench/dotnet.ts`: this part alone (after `npm run build:node`).
if (isMainModule(import.meta)) {
  await runDotnetBench();
  killAllChildren();
  process.exit(0);
}
