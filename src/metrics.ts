/**
 * The port through which the core records metrics: a registry of counters, histograms and gauges that renders the
 * Prometheus text format. The names and labels are the core's (src/http/metrics.ts); each runtime supplies the
 * registry (prom-client's, src/runtime/shared/prometheus.ts), because the library needs more than Web APIs.
 */
export type Labels = Record<string, string>;

export interface CounterMetric {
  inc(labels?: Labels, by?: number): void;
}

export interface HistogramMetric {
  observe(labels: Labels, value: number): void;
}

export interface MetricsRegistry {
  counter(options: { name: string; help: string; labelNames?: readonly string[] }): CounterMetric;
  histogram(options: {
    name: string;
    help: string;
    labelNames?: readonly string[];
    buckets: readonly number[];
  }): HistogramMetric;
  /** A value read when scraped: a gauge, or a counter kept elsewhere (a total that only grows). */
  collected(options: { name: string; help: string; type: 'gauge' | 'counter'; read: () => number }): void;
  /** The exposition: its Content-Type and text. */
  render(): Promise<{ contentType: string; text: string }>;
}
