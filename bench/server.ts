/** Starts the real Node server as a child process and reads the memory of the process that serves. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
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
  /** The spawned server process. */
  launcherPid: number;
  /** The node process that holds the listening socket. */
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
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`server exited early (${child.exitCode ?? child.signalCode}):\n${tail}`);
      if (performance.now() > deadline) throw new Error(`server did not answer /health within ${timeoutMs} ms:\n${tail}`);
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
    const serverPid = listeningPid(child.pid!, port) ?? deepestDescendant(child.pid!);
    return { url, port, launcherPid: child.pid!, serverPid, startMs, stop, output: () => tail };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Descendants of `pid`, breadth first (from /proc/<pid>/task/<tid>/children). */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0 && out.length < 1000) {
    const p = queue.shift()!;
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      let kids = '';
      try {
        kids = readFileSync(`/proc/${p}/task/${tid}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const k of kids.trim().split(/\s+/).filter(Boolean).map(Number)) {
        out.push(k);
        queue.push(k);
      }
    }
  }
  return out;
}

function deepestDescendant(pid: number): number {
  const all = descendants(pid);
  return all[all.length - 1] ?? pid;
}

/** The process among `root` and its descendants whose open files include the socket listening on `port`. */
function listeningPid(root: number, port: number): number | undefined {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT, st 0A is LISTEN, inode is field 9
      const local = f[1];
      if (!local || f[3] !== '0A') continue;
      if (parseInt(local.split(':')[1] ?? '', 16) === port && f[9]) inodes.add(`socket:[${f[9]}]`);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const pid of [root, ...descendants(root)]) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (inodes.has(readlinkSync(`/proc/${pid}/fd/${fd}`))) return pid;
      } catch {
        /* closed meanwhile */
      }
    }
  }
  return undefined;
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

export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '?';
  }
}

/** An answer of the service: status, the parsed JSON body (undefined if not JSON), and the problem name if any. */
export interface ServiceAnswer {
  status: number;
  json: Record<string, unknown> | undefined;
  problem: string;
}

/** POSTs a prepared JSON body to the running server and reads the whole answer. */
export async function postBody(url: string, path: string, body: Uint8Array<ArrayBuffer>): Promise<ServiceAnswer> {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: res.status, json, problem: typeof json?.type === 'string' ? (json.type.split('/').pop() ?? '') : '' };
}
