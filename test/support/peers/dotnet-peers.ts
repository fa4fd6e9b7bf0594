/**
 * The .NET peers that need more than a build (support/peers/dotnet.ts):
 * the CoreWCF host of the contract (test/dotnet/CoreWcfHost: CoreWCF.NetTcp over Microsoft.Data.Sqlite, or Npgsql
 * when given a PostgreSQL URL, and a folder, SecurityMode.None) started as a process of its own, for the scenario and the benchmark. It rejects with
 * DotnetUnavailableError when the NuGet feed does not serve its packages, so suites can say so. (The client
 * dotnet-svcutil generates is support/peers/dotnet-svcutil.ts.)
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDotnetProject, dotnetEnv } from './dotnet.ts';
import { freePort } from '../net.ts';

export interface CoreWcfHost {
  endpoint: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts the CoreWCF host on a free port with a folder of its own and a SQLite database in it, or the PostgreSQL
 * database `postgresUrl` names (postgres://user[:password]@host:port/database); resolves once it listens.
 */
export async function startCoreWcfHost(
  options: { maxMessageMB?: number; readyTimeoutMs?: number; metadataPort?: number; postgresUrl?: string } = {},
): Promise<CoreWcfHost> {
  const { dll } = await buildDotnetProject('CoreWcfHost');
  const dir = await mkdtemp(join(tmpdir(), 'corewcf-host-'));
  const port = await freePort();
  const child = spawn(
    'dotnet',
    [
      dll,
      ...['--port', String(port), '--data', dir, '--max-message-mb', String(options.maxMessageMB ?? 64)],
      ...(options.metadataPort ? ['--metadata-port', String(options.metadataPort)] : []),
      ...(options.postgresUrl ? ['--postgres', npgsqlConnectionString(options.postgresUrl)] : []),
    ],
    { env: dotnetEnv(), stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  await new Promise<void>((ready, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`the CoreWCF host did not report ready\n${output}`));
    }, options.readyTimeoutMs ?? 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the CoreWCF host exited (${code})\n${output}`));
    });
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
      if (output.includes('{"ready":true')) {
        clearTimeout(timer);
        ready();
      }
    });
  });
  return { endpoint: `net.tcp://localhost:${port}/IDBService`, port, pid: child.pid!, stop };
}

/** A postgres:// URL as Npgsql's keywords (Npgsql takes no URLs). */
export function npgsqlConnectionString(url: string): string {
  const u = new URL(url);
  const keywords: [string, string][] = [
    ['Host', u.hostname],
    ['Port', u.port || '5432'],
    ['Username', decodeURIComponent(u.username)],
    ['Database', decodeURIComponent(u.pathname.slice(1)) || 'postgres'],
  ];
  if (u.password) keywords.push(['Password', decodeURIComponent(u.password)]);
  // A value is quoted when it holds a separator or a quote; a quote inside is doubled.
  return keywords.map(([k, v]) => `${k}=${/[;='"\s]/.test(v) ? `'${v.replaceAll("'", "''")}'` : v}`).join(';');
}
