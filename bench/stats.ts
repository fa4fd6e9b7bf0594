/** Timing helpers: warm-up, an adaptive number of timed runs, nearest-rank percentiles. */

export interface Sample {
  /** Wall times in milliseconds, one per timed run. */
  ms: number[];
}

export interface MeasureOptions {
  /** Aim for this much timed work per row (ms). */
  targetMs: number;
  /** Hard stop for the timed runs of one row (ms); at least `minRuns` are always done. */
  maxMs: number;
  minRuns: number;
  maxRuns: number;
  /** Warm-up calls when a call is cheap; a call over `heavyMs` gets a single warm-up. */
  warmups: number;
  heavyMs: number;
}

export const DEFAULT_MEASURE: MeasureOptions = { targetMs: 1500, maxMs: 3000, minRuns: 5, maxRuns: 5000, warmups: 3, heavyMs: 250 };

/** Warms `fn` up, then times it N times, N chosen so the row takes about `targetMs`. */
export async function measure(fn: () => Promise<unknown>, options: Partial<MeasureOptions> = {}): Promise<Sample> {
  const o = { ...DEFAULT_MEASURE, ...options };
  let t = performance.now();
  await fn();
  let last = performance.now() - t;
  const warmups = last > o.heavyMs ? 0 : o.warmups - 1;
  for (let i = 0; i < warmups; i++) {
    t = performance.now();
    await fn();
    last = performance.now() - t;
  }
  const runs = Math.max(o.minRuns, Math.min(o.maxRuns, Math.round(o.targetMs / Math.max(last, 0.001))));
  const ms: number[] = [];
  const started = performance.now();
  for (let i = 0; i < runs; i++) {
    t = performance.now();
    await fn();
    ms.push(performance.now() - t);
    if (ms.length >= o.minRuns && performance.now() - started > o.maxMs) break;
  }
  return { ms };
}

/** Nearest-rank percentile (p in 0..1). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

export const p50 = (s: Sample) => percentile(s.ms, 0.5);
export const p95 = (s: Sample) => percentile(s.ms, 0.95);

/** Milliseconds with precision that suits their size. */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 10) return ms.toFixed(2);
  if (ms < 100) return ms.toFixed(1);
  return ms.toFixed(0);
}

export const fmtPair = (s: Sample | undefined) => (s && s.ms.length > 0 ? `${fmtMs(p50(s))} / ${fmtMs(p95(s))}` : '–');
