/**
 * Load on IIDBService over net.tcp with the benchmark's client (bench/nettcp-client.ts): `runLoad` drives N channels in
 * parallel, one call in flight each, and reports calls/s and latency percentiles; `main` is the command line of
 * `npx tsx bench/nettcp-client.ts`.
 */
import { percentile } from './stats.ts';
import { NetTcpChannel, type NetTcpChannelOptions } from './nettcp-client.ts';
import type { QueryParameterValue } from './nettcp-values.ts';

export interface LoadOptions extends NetTcpChannelOptions {
  endpoint: string;
  /** Channels (connections) in parallel, each with one call in flight. */
  channels: number;
  /** Measure for this long (default 3000 ms)… */
  durationMs?: number;
  /** …or stop each channel after this many calls. */
  callsPerChannel?: number;
  /** Untimed calls per channel first (default 5). */
  warmupCalls?: number;
  operation?: 'Heartbeat' | 'ReturnScalar';
  /** For ReturnScalar (default `SELECT 42`). */
  sql?: string;
  parameters?: QueryParameterValue[];
}

export interface LoadResult {
  endpoint: string;
  operation: string;
  channels: number;
  calls: number;
  errors: number;
  /** The first error seen, for the report. */
  firstError?: string;
  seconds: number;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Opens `channels` channels, calls in a loop on each until the time or count is reached, closes them. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const operation = options.operation ?? 'Heartbeat';
  const sql = options.sql ?? 'SELECT 42';
  const one = (c: NetTcpChannel): Promise<unknown> =>
    operation === 'Heartbeat' ? c.heartbeat() : c.returnScalar(sql, options.parameters);
  // Opened one after another: setup, not measured, and gentler on servers that accept slowly (Mono's ServiceHost takes
  // 0.1 to 2 s per connection while others are open).
  const channels: NetTcpChannel[] = [];
  try {
    for (let i = 0; i < options.channels; i++)
      channels.push(await NetTcpChannel.open(options.endpoint, { openTimeoutMs: 30_000, ...options }));
  } catch (error) {
    for (const c of channels) c.destroy();
    throw error;
  }
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  try {
    await Promise.all(
      channels.map(async (c) => {
        for (let i = 0; i < (options.warmupCalls ?? 5); i++) await one(c);
      }),
    );
    const started = performance.now();
    const deadline = started + (options.durationMs ?? 3000);
    await Promise.all(
      channels.map(async (c) => {
        for (
          let n = 0;
          options.callsPerChannel === undefined ? performance.now() < deadline : n < options.callsPerChannel;
          n++
        ) {
          const t = performance.now();
          try {
            await one(c);
            latencies.push(performance.now() - t);
          } catch (error) {
            errors++;
            firstError ??= error instanceof Error ? error.message : String(error);
            if (c.closed) return;
          }
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    return {
      endpoint: options.endpoint,
      operation,
      channels: options.channels,
      calls: latencies.length,
      errors,
      ...(firstError === undefined ? {} : { firstError }),
      seconds,
      callsPerSecond: latencies.length / seconds,
      p50Ms: percentile(latencies, 0.5),
      p99Ms: percentile(latencies, 0.99),
      maxMs: latencies.reduce((most, ms) => Math.max(most, ms), latencies.length ? -Infinity : NaN),
    };
  } finally {
    await Promise.all(channels.map((c) => c.close().catch(() => c.destroy())));
  }
}

export async function main(argv: string[]): Promise<void> {
  const endpoint = argv[0];
  if (!endpoint)
    throw new Error(
      'usage: tsx bench/nettcp-client.ts net.tcp://host:port/IDBService [--channels N] [--seconds S] [--op Heartbeat|ReturnScalar] [--sql TEXT]',
    );
  const flag = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const result = await runLoad({
    endpoint,
    channels: Number(flag('channels') ?? 8),
    durationMs: Number(flag('seconds') ?? 5) * 1000,
    operation: (flag('op') as LoadOptions['operation']) ?? 'Heartbeat',
    ...(flag('sql') ? { sql: flag('sql')! } : {}),
  });
  console.log(JSON.stringify(result));
}
