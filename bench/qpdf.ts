/** The peer: `qpdf --show-npages FILE`, one process per call, timed from spawn to exit. */
import { spawnSync } from 'node:child_process';
import type { Sample } from './stats.ts';

export function qpdfVersion(): string | undefined {
  const r = spawnSync('qpdf', ['--version'], { encoding: 'utf8', timeout: 5000 });
  if (r.error || r.status !== 0) return undefined;
  return r.stdout.split('\n')[0]?.trim();
}

export interface QpdfRun {
  sample: Sample;
  /** What the first call printed (the page count) or why it failed. */
  answer: string;
}

/**
 * Runs qpdf on `path`: `warmups` untimed calls, then timed calls until `targetMs` of work (at least `minRuns`).
 * Each call is bounded by `callTimeoutMs` (a bomb makes qpdf inflate 1 GiB: seconds and ~2 GB).
 */
export function runQpdf(
  path: string,
  o: { warmups: number; minRuns: number; targetMs: number; maxRuns: number; callTimeoutMs: number },
): QpdfRun {
  let answer = '';
  const call = () => {
    const t = performance.now();
    const r = spawnSync('qpdf', ['--show-npages', path], {
      encoding: 'utf8',
      timeout: o.callTimeoutMs,
      killSignal: 'SIGKILL',
      maxBuffer: 1 << 20,
    });
    const ms = performance.now() - t;
    if (!answer) {
      if (r.error)
        answer =
          (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT'
            ? `timed out after ${o.callTimeoutMs} ms`
            : r.error.message;
      else if (r.signal) answer = `killed by ${r.signal}`;
      else answer = `${r.stdout.trim() || '?'}${r.status === 0 ? '' : ` (exit ${r.status})`}`;
    }
    return ms;
  };
  for (let i = 0; i < o.warmups; i++) call();
  const ms: number[] = [];
  const started = performance.now();
  while (ms.length < o.maxRuns) {
    ms.push(call());
    if (ms.length >= o.minRuns && performance.now() - started >= o.targetMs) break;
  }
  return { sample: { ms }, answer };
}
