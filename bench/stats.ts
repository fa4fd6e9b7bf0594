/** Timing helpers: warm-up, an adaptive number of timed runs, nearest-rank percentiles. */

export interface Sample {
  /** Wall times in milliseconds, one per timed run. */
  ms: number[];
}

export interface MeasureOptions {
  /** Aim for this much timed work per row (ms). */
  targetMs: number;
  /** No further run once the next one would end past this (ms); at least `minRuns` are always done. */
  maxMs: number;
  minRuns: number;
  maxRuns: number;
  /** Warm-up calls when a call is cheap; a call over `heavyMs` gets a single warm-up. */
  warmups: number;
  heavyMs: number;
}

export const DEFAULT_MEASURE: MeasureOptions = {
  targetMs: 1500,
  maxMs: 3000,
  minRuns: 5,
  maxRuns: 50_000,
  warmups: 3,
  heavyMs: 250,
};

/**
 * Warms `fn` up (`warmups` calls, or one when a call takes over `heavyMs`), then times it until `targetMs` of timed
 * work is done (so N adapts to the cost of a call), with at least `minRuns` and at most `maxRuns` runs.
 */
export async function measure(fn: () => Promise<unknown>, options: Partial<MeasureOptions> = {}): Promise<Sample> {
  const o = { ...DEFAULT_MEASURE, ...options };
  for (let i = 0; i < o.warmups; i++) {
    const t = performance.now();
    await fn();
    if (performance.now() - t > o.heavyMs) break;
  }
  const ms: number[] = [];
  const started = performance.now();
  while (ms.length < o.maxRuns) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
    const elapsed = performance.now() - started;
    if (ms.length >= o.minRuns && elapsed >= o.targetMs) break;
    if (ms.length >= o.minRuns && elapsed + ms[ms.length - 1]! > o.maxMs) break;
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
