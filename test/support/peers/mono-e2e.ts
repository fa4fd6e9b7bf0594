/**
 * The Mono side of the bridge's end-to-end tests and benchmark (test/mono/*.cs, with what they share with the .NET
 * peers in test/wcf-shared):
 * - E2EClient.exe: a ChannelFactory client of the spec's contract that calls all 13 operations and checks every value
 *   (the sections of wcf-shared/Sections.cs and StoreSections.cs);
 * - SvcutilClient.exe: the same through the proxy Mono's svcutil makes of our WSDL;
 * - MonoHost.exe: a Mono ServiceHost of the contract (the benchmark's reference peer, and the harness's own test
 *   server while the bridge does not exist).
 * Programs are compiled once and cached in os.tmpdir() under a hash of their sources (and of the WSDL, for the svcutil
 * client), so a test run pays for mcs only when a .cs file changed. The clients print one JSON line per check
 * (format in wcf-shared/Report.cs), parsed here into MonoCheck objects.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cachedBuild } from './build-cache.ts';
import { compileCSharp, findMonoTool, runMono, svcutil, type RunResult } from './mono.ts';
import { freePort } from '../net.ts';

/** test/: the C# sources are named relative to it (mono/ Mono's own, wcf-shared/ those the .NET peers share). */
const TEST_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const CONTRACT = ['wcf-shared/IIDBService.cs', 'mono/Binding.cs'];
const E2E_CLIENT_SOURCES = [
  ...CONTRACT,
  'wcf-shared/Report.cs',
  'wcf-shared/Sections.cs',
  'wcf-shared/StoreSections.cs',
  'mono/E2EClient.cs',
];
const MONO_HOST_SOURCES = [...CONTRACT, 'mono/MonoHost.cs'];
const SVCUTIL_CLIENT_SOURCES = ['mono/Binding.cs', 'wcf-shared/Report.cs', 'mono/SvcutilClient.cs'];

/** E2EClient's sections, in the order it runs them when given none (`smoke` only runs when asked for). */
export const E2E_SECTIONS = [
  'heartbeat',
  'nonquery',
  'requests',
  'datatable',
  'scalar',
  'files',
  'documents',
  'faults',
  'sql-faults',
  'concurrency',
  'cleanup',
] as const;
export type E2ESection = (typeof E2E_SECTIONS)[number] | 'smoke';

export interface MonoPrograms {
  dir: string;
  e2eClient: string;
  monoHost: string;
}

/** One JSON line of a Mono client. */
export interface MonoCheck {
  check: string;
  ok: boolean;
  expected?: string;
  actual?: string;
  error?: string;
  /** The check did not apply (the reason); counts as ok. */
  skipped?: string;
  /** A section's own line: the section ran to its end (ok) or threw (error). */
  section?: boolean;
  ms?: number;
}

export interface MonoRun extends RunResult {
  checks: MonoCheck[];
  failed: MonoCheck[];
  /** The client's last line; absent when it died before. */
  summary?: { passed: number; failed: number; ms: number };
}

// ---------------------------------------------------------------------------------------------------------------
// Building

const hashOf = (parts: readonly (string | Buffer)[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(createHash('sha256').update(p).digest());
  return h.digest('hex').slice(0, 20);
};

const source = (name: string) => join(TEST_DIR, name);
const readSources = (names: readonly string[]) => Promise.all(names.map((n) => readFile(source(n))));
/** The build in `os.tmpdir()/<prefix>-<key>` (support/peers/build-cache.ts). */
const cachedMonoBuild = (
  prefix: string,
  key: string,
  outputs: readonly string[],
  build: (dir: string) => Promise<void>,
) => cachedBuild(join(tmpdir(), `${prefix}-${key}`), outputs, build);

let programs: Promise<MonoPrograms> | undefined;

/** E2EClient.exe and MonoHost.exe, compiled with mcs (once per source change; memoized per process). */
export function buildMonoPrograms(): Promise<MonoPrograms> {
  programs ??= (async () => {
    const all = [...new Set([...E2E_CLIENT_SOURCES, ...MONO_HOST_SOURCES])];
    const key = hashOf([findMonoTool('mcs'), ...all, ...(await readSources(all))]);
    const dir = await cachedMonoBuild('idb-mono-e2e', key, ['E2EClient.exe', 'MonoHost.exe'], async (work) => {
      await Promise.all([
        compileCSharp(E2E_CLIENT_SOURCES.map(source), { out: join(work, 'E2EClient.exe'), target: 'exe' }),
        compileCSharp(MONO_HOST_SOURCES.map(source), { out: join(work, 'MonoHost.exe'), target: 'exe' }),
      ]);
    });
    return { dir, e2eClient: join(dir, 'E2EClient.exe'), monoHost: join(dir, 'MonoHost.exe') };
  })();
  programs.catch(() => {
    programs = undefined;
  });
  return programs;
}

const svcutilClients = new Map<string, Promise<string>>();

/**
 * SvcutilClient.exe for the WSDL at `wsdlUrl` (an http: URL of `GET /IDBService?wsdl&datatable=anytype`): svcutil's
 * proxy compiled with SvcutilClient.cs. Cached under a hash of the WSDL text and the sources.
 */
export function buildSvcutilClient(wsdlUrl: string): Promise<string> {
  let built = svcutilClients.get(wsdlUrl);
  if (!built) {
    built = (async () => {
      const response = await fetch(wsdlUrl);
      if (!response.ok) throw new Error(`GET ${wsdlUrl}: ${response.status}`);
      const wsdl = await response.text();
      const key = hashOf([
        findMonoTool('svcutil'),
        findMonoTool('mcs'),
        wsdl,
        ...SVCUTIL_CLIENT_SOURCES,
        ...(await readSources(SVCUTIL_CLIENT_SOURCES)),
      ]);
      const dir = await cachedMonoBuild('idb-mono-svcutil', key, ['SvcutilClient.exe'], async (work) => {
        const { file } = await svcutil(wsdlUrl, work, { out: 'Proxy.cs' });
        await compileCSharp([file, ...SVCUTIL_CLIENT_SOURCES.map(source)], {
          out: join(work, 'SvcutilClient.exe'),
          target: 'exe',
        });
      });
      return join(dir, 'SvcutilClient.exe');
    })();
    svcutilClients.set(wsdlUrl, built);
    built.catch(() => svcutilClients.delete(wsdlUrl));
  }
  return built;
}

// ---------------------------------------------------------------------------------------------------------------
// Running the clients

/** The JSON lines of a client's stdout; any other line is kept as a failed check so nothing passes unseen. */
export function parseChecks(result: RunResult): MonoRun {
  const checks: MonoCheck[] = [];
  let summary: MonoRun['summary'];
  for (const line of result.stdout.split('\n')) {
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      checks.push({ check: 'stdout', ok: false, error: `not a JSON line: ${line}` });
      continue;
    }
    const record = parsed as Partial<MonoCheck> & { summary?: boolean; passed?: number; failed?: number };
    if (record.summary === true)
      summary = { passed: record.passed ?? 0, failed: record.failed ?? 0, ms: record.ms ?? 0 };
    else if (typeof record.check === 'string' && typeof record.ok === 'boolean') checks.push(record as MonoCheck);
    else checks.push({ check: 'stdout', ok: false, error: `not a check: ${line}` });
  }
  if (!summary)
    checks.push({
      check: 'summary',
      ok: false,
      error: `the client printed no summary (exit code ${result.code}): ${result.stderr.slice(-2000)}`,
    });
  else if (result.code !== (summary.failed === 0 ? 0 : 1))
    checks.push({
      check: 'exit-code',
      ok: false,
      expected: String(summary.failed === 0 ? 0 : 1),
      actual: String(result.code),
    });
  return { ...result, checks, failed: checks.filter((c) => !c.ok), ...(summary ? { summary } : {}) };
}

/** The failed checks, one a line, for an assertion message. */
export function describeFailures(run: MonoRun): string {
  const lines = run.failed.map(
    (c) => `${c.check}: ${c.error ?? `expected ${c.expected ?? '?'}, got ${c.actual ?? '?'}`}`,
  );
  return lines.length ? lines.join('\n') : 'no failed checks';
}

export interface E2EClientOptions {
  /** Which SQL answers to expect where the backends differ (default sqlite). */
  backend?: 'sqlite' | 'postgres';
  /** Sections to run, in this order (default all but smoke). */
  sections?: readonly E2ESection[];
  /** Heartbeat and smoke only: ReturnScalar must answer an Int32 42 (MonoHost). */
  hostSmoke?: boolean;
  /** The whole run; the process is killed after it (default 300 s). */
  timeoutMs?: number;
  /** The binding's send/open/close time-out per call (default 120 s). */
  callTimeoutSeconds?: number;
}

/** Runs E2EClient.exe against `endpoint` (`net.tcp://127.0.0.1:<port>/IDBService`) and parses its checks. */
export async function runE2EClient(endpoint: string, options: E2EClientOptions = {}): Promise<MonoRun> {
  const { e2eClient } = await buildMonoPrograms();
  const args = [endpoint, '--backend', options.backend ?? 'sqlite'];
  if (options.hostSmoke) args.push('--host-smoke');
  else if (options.sections) args.push('--sections', options.sections.join(','));
  if (options.callTimeoutSeconds !== undefined) args.push('--timeout-seconds', String(options.callTimeoutSeconds));
  return parseChecks(await runMono(e2eClient, args, { timeoutMs: options.timeoutMs ?? 300_000 }));
}

/** Builds (or reuses) SvcutilClient.exe from the WSDL at `wsdlUrl` and runs it against `endpoint`. */
export async function runSvcutilClient(
  wsdlUrl: string,
  endpoint: string,
  options: { hostSmoke?: boolean; timeoutMs?: number } = {},
): Promise<MonoRun> {
  const exe = await buildSvcutilClient(wsdlUrl);
  const args = [endpoint, ...(options.hostSmoke ? ['--host-smoke'] : [])];
  return parseChecks(await runMono(exe, args, { timeoutMs: options.timeoutMs ?? 120_000 }));
}

// ---------------------------------------------------------------------------------------------------------------
// MonoHost

export interface MonoHostProcess {
  endpoint: string;
  port: number;
  pid: number;
  /** What the host wrote to stderr so far. */
  stderr(): string;
  /** Closes its stdin (it exits), then kills it if it has not gone within 5 s. */
  stop(): Promise<void>;
}

export interface MonoHostOptions {
  /** Default: a free port (retried on a lost race). */
  port?: number;
  host?: string;
  readyTimeoutMs?: number;
}

/**
 * Starts MonoHost.exe (Heartbeat true, ReturnScalar 42, files and documents in memory, FileNotFound for an unknown
 * file, NotSupported for the other SQL operations) and resolves once it listens. Mono's ServiceHost takes about 50 ms
 * per call and channel and accepts connections slowly while many are open (see MonoHost.cs).
 */
export async function startMonoHost(options: MonoHostOptions = {}): Promise<MonoHostProcess> {
  const { monoHost } = await buildMonoPrograms();
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    try {
      return await launchMonoHost(monoHost, port, options.host ?? '127.0.0.1', options.readyTimeoutMs ?? 30_000);
    } catch (error) {
      if (options.port !== undefined || attempt >= 3) throw error;
    }
  }
}

function launchMonoHost(exe: string, port: number, host: string, readyTimeoutMs: number): Promise<MonoHostProcess> {
  const child: ChildProcessWithoutNullStreams = spawn(findMonoTool('mono'), ['--debug', exe, String(port), host], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolveReady, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`MonoHost did not report ready within ${readyTimeoutMs} ms\n${stdout}${stderr}`));
    }, readyTimeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`MonoHost exited (${code ?? signal}) before it was ready\n${stdout}${stderr}`));
    });
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const line = stdout.split('\n').find((l) => l.startsWith('{"ready":true'));
      if (!line) return;
      clearTimeout(timer);
      const ready = JSON.parse(line) as { port: number; endpoint: string };
      resolveReady({ endpoint: ready.endpoint, port: ready.port, pid: child.pid!, stderr: () => stderr, stop });
    });
  });
}
