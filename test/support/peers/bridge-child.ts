/**
 * The bridge in a child process of its own (`node --import tsx tcp-bridge/src/main.ts`, as `npm run bridge` runs the
 * bundle), so a test can read its memory from /proc and watch its log lines as events.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

export type LogLine = { level: string; msg: string } & Record<string, unknown>;

export class BridgeChild {
  readonly lines: LogLine[] = [];
  private readonly waiters = new Set<() => void>();
  private exited = false;

  private stderr = '';
  /** The port it listens on. */
  port = 0;

  private constructor(private readonly child: ChildProcess) {
    child.stderr!.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    createInterface({ input: child.stdout! }).on('line', (text) => {
      this.lines.push(JSON.parse(text) as LogLine);
      for (const wake of this.waiters) wake();
    });
    child.once('exit', () => {
      this.exited = true;
      for (const wake of this.waiters) wake();
    });
  }

  /** Starts the bridge with `env` (BRIDGE_PORT 0 unless given) and resolves once it listens. */
  static async start(env: Record<string, string>): Promise<BridgeChild> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'tcp-bridge/src/main.ts'], {
      env: { ...process.env, BRIDGE_PORT: '0', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const bridge = new BridgeChild(child);
    try {
      const [listening] = await bridge.waitForLines((line) => line.msg === 'bridge listening');
      bridge.port = Number(new URL(String(listening!.url).replace(/^net\.tcp:/, 'http:')).port);
    } catch (error) {
      throw new Error(`${(error as Error).message}: ${bridge.stderr}`);
    }
    return bridge;
  }

  /** Resolves once `count` log lines (from the start) satisfy `match`; rejects if the bridge exits first. */
  async waitForLines(match: (line: LogLine) => boolean, count = 1): Promise<LogLine[]> {
    for (;;) {
      const found = this.lines.filter(match);
      if (found.length >= count) return found;
      if (this.exited) throw new Error(`the bridge exited; ${found.length} of ${count} lines`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          resolve();
        };
        this.waiters.add(wake);
      });
    }
  }

  /** VmRSS (now) or VmHWM (peak) of the bridge process, in MiB. */
  memoryMB(field: 'VmRSS' | 'VmHWM'): number {
    const status = readFileSync(`/proc/${this.child.pid}/status`, 'utf8');
    const kB = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1];
    if (kB === undefined) throw new Error(`no ${field} in /proc/${this.child.pid}/status`);
    return Number(kB) / 1024;
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }
}
