/**
 * The MetricsRegistry port on prom-client, for every runtime. prom-client's package entry also loads its push
 * gateway, cluster and process collectors (node:http, zlib, cluster, v8, fs), so only its Registry, Counter, Gauge and
 * Histogram modules are imported: their one Node import, `util` (to format error messages), is Node's own on Node,
 * Bun and Deno, and a small Web-API stand-in on Workers (the `[alias]` of wrangler.toml,
 * src/runtime/workers/util-shim.ts). The exposition text is prom-client's on all four.
 */
import Counter from 'prom-client/lib/counter.js';
import Gauge from 'prom-client/lib/gauge.js';
import Histogram from 'prom-client/lib/histogram.js';
import Registry from 'prom-client/lib/registry.js';
import type { CounterMetric, HistogramMetric, Labels, MetricsRegistry } from '../../metrics.ts';

export class PromMetricsRegistry implements MetricsRegistry {
  /** prom-client's registry, for runtime-specific collectors (Node's process metrics). */
  readonly registry = new Registry();

  counter(o: { name: string; help: string; labelNames?: readonly string[] }): CounterMetric {
    const counter = new Counter({
      name: o.name,
      help: o.help,
      labelNames: [...(o.labelNames ?? [])],
      registers: [this.registry],
    });
    return { inc: (labels: Labels = {}, by = 1) => counter.inc(labels, by) };
  }

  histogram(o: {
    name: string;
    help: string;
    labelNames?: readonly string[];
    buckets: readonly number[];
  }): HistogramMetric {
    const histogram = new Histogram({
      name: o.name,
      help: o.help,
      labelNames: [...(o.labelNames ?? [])],
      buckets: [...o.buckets],
      registers: [this.registry],
    });
    return { observe: (labels: Labels, value: number) => histogram.observe(labels, value) };
  }

  collected(o: { name: string; help: string; type: 'gauge' | 'counter'; read: () => number }): void {
    const { read } = o;
    if (o.type === 'gauge') {
      new Gauge({
        name: o.name,
        help: o.help,
        registers: [this.registry],
        collect() {
          this.set(read());
        },
      });
    } else {
      new Counter({
        name: o.name,
        help: o.help,
        registers: [this.registry],
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    }
  }

  async render(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
