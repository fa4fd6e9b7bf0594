/** Starts the real Node server as a child process and reads the memory of the process that serves. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

/** Every child this process started (its own process group each), killed on exit, error or signal. */
const children = new Set<ChildProcess>();

export function killAllChildren(): void {
  for (const child of children) killGroup(child);
  children.clear();
}

export function track(child: ChildProcess): void {
  children.add(child);
  child.once('exit', () => children.delete(child));
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL'); // the whole group
  } catch {
    try {
      child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      s.close(() => resolvePort(port));
    });
  });
}

export interface RunningServer {
  url: string;
  port: number;
  /** The server's node process (`npm start`'s bundle runs in the spawned process itself). */
  serverPid: number;
  startMs: number;
  stop(): Promise<void>;
  /** Last lines the server wrote, for error messages. */
  output(): string;
}

export async function startServer(env: Record<string, string> = {}, timeoutMs = 30_000): Promise<RunningServer> {
  const port = await freePort();
  const started = performance.now();
  // As `npm start` runs it: the esbuild bundle on plain node (built once per bench run, see buildNodeEntry).
  const child = spawn(process.execPath, ['dist/node/main.mjs'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // own process group, so the whole tree can be killed at once
  });
  track(child);
  let tail = '';
  const keep = (d: Buffer) => {
    tail = (tail + d.toString('utf8')).slice(-4000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        /* gone */
      }
      const timer = setTimeout(() => killGroup(child), 3000);
      await exited;
      clearTimeout(timer);
    }
    // anything the server started is in the same group; make sure nothing lingers
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  };

  try {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`server exited early (${child.exitCode ?? child.signalCode}):\n${tail}`);
      if (performance.now() > deadline)
        throw new Error(`server did not answer /health within ${timeoutMs} ms:\n${tail}`);
      try {
        const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
        await res.arrayBuffer();
        if (res.ok) break;
      } catch {
        /* not listening yet */
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    const startMs = performance.now() - started;
    return { url, port, serverPid: child.pid!, startMs, stop, output: () => tail };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** A field of /proc/<pid>/status in MB (VmHWM = peak resident set, VmRSS = current). */
export function procMemMB(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/**
 * The CPU time (user and system, every thread) a process has used so far, in µs; NaN once it is gone. Read before and
 * after a row, it is the server's CPU for that row (clock ticks: 10 ms each, fine over a row of seconds).
 */
export function procCpuMicros(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * (1e6 / CLOCK_TICKS_PER_SECOND);
  } catch {
    return NaN;
  }
}
/** USER_HZ, 100 on every Linux architecture the bench runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

export interface CannedResponder<Operation extends string = 'Heartbeat'> {
  name: string;
  endpoint: string;
  /** Heartbeat; with `relates` also ExecuteNonQuery (its database request opened and closed), canned results. */
  operations: readonly Operation[];
  rssMB(): number;
  cpuMicros(): number;
  stop(): Promise<void>;
}

/**
 * bench/canned-responder.ts in a process of its own (through tsx), like the servers it is compared with; `relates`
 * for a WCF client, which waits for replies with RelatesTo.
 */
export function startCannedResponder(options?: { relates?: false }): Promise<CannedResponder>;
export function startCannedResponder(options: {
  relates: true;
}): Promise<CannedResponder<'Heartbeat' | 'ExecuteNonQuery'>>;
export async function startCannedResponder(
  options: { relates?: boolean } = {},
): Promise<CannedResponder<'Heartbeat' | 'ExecuteNonQuery'>> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/canned-responder.ts', ...(options.relates ? ['--relates'] : [])],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  track(child);
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once('exit', (code) => reject(new Error(`canned responder exited (${code})`)));
  });
  return {
    name: options.relates ? 'canned responder (RelatesTo)' : 'canned responder',
    endpoint: `net.tcp://localhost:${port}/IDBService`,
    operations: options.relates ? ['Heartbeat', 'ExecuteNonQuery'] : ['Heartbeat'],
    rssMB: () => procMemMB(child.pid!, 'VmHWM'),
    cpuMicros: () => procCpuMicros(child.pid!),
    async stop() {
      child.stdin!.end();
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** An answer of the service: status, the parsed JSON body (undefined if not JSON), and the problem name if any. */
export interface ServiceAnswer {
  status: number;
  json: Record<string, unknown> | undefined;
  problem: string;
}

/** POSTs a prepared JSON body to the running server and reads the whole answer. */
export async function postBody(url: string, path: string, body: Uint8Array<ArrayBuffer>): Promise<ServiceAnswer> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return {
    status: res.status,
    json,
    problem: typeof json?.type === 'string' ? (json.type.split('/').pop() ?? '') : '',
  };
}

export interface RunningBridgeProcess {
  port: number;
  endpoint: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * The bridge as `npm run bridge` runs it (dist/node/bridge.mjs, built by the caller) in its own process group, with
 * `env` over the inherited environment; resolves once it listens on a free port.
 */
export async function startBridgeProcess(
  env: Record<string, string>,
  timeoutMs = 20_000,
): Promise<RunningBridgeProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/node/bridge.mjs'], {
    cwd: ROOT,
    env: { ...process.env, ...env, BRIDGE_PORT: String(port), LOG_LEVEL: 'info' }, // "bridge listening" is an info line
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  track(child);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const take = (d: Buffer) => {
      output = (output + d.toString()).slice(-4000);
      if (output.includes('"bridge listening"')) resolve();
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    child.once('exit', (code) => reject(new Error(`bridge exited (${code}): ${output}`)));
    setTimeout(() => reject(new Error(`bridge did not start within ${timeoutMs} ms: ${output}`)), timeoutMs).unref();
  });
  return {
    port,
    endpoint: `net.tcp://localhost:${port}/IDBService`,
    pid: child.pid!,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(-child.pid!, 'SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    },
  };
}
