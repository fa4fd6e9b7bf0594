/**
 * BRIDGE_METRICS_PORT: the bridge's Prometheus metrics and health, on their own HTTP listener (loopback unless
 * BRIDGE_METRICS_HOST says otherwise), so an operator can scrape it without opening the net.tcp port to anyone.
 * prom-client writes the exposition format; gauges are read when scraped.
 *
 *   idb_bridge_connections                       open net.tcp connections
 *   idb_bridge_calls_total{operation,outcome}    calls answered, outcome `ok` or the fault's name
 *   idb_bridge_call_duration_seconds{operation}  call latency
 *   idb_bridge_database_requests_open            open database requests
 *   idb_bridge_handshakes_total{mechanism,outcome}  Windows-security logons, `established` or `refused`
 *   idb_bridge_refusals_total{reason}            connections refused or aborted: framing faults, ServerTooBusy, …
 *   idb_bridge_inflight_message_bytes            BRIDGE_MAX_INFLIGHT_MB reserved for partly received messages
 *   idb_bridge_inflight_waiting_connections      connections waiting for that budget
 *   idb_bridge_unsent_reply_bytes                reply bytes written and not yet taken by the clients' sockets
 * plus prom-client's default process metrics (memory, CPU, event loop lag).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BridgeObserver } from './streams.ts';

export interface BridgeGauges {
  connections(): number;
  openDatabaseRequests(): number;
  inflight(): { reservedBytes: number; waiting: number };
  unsentBytes(): number;
}

export class BridgeMetrics implements BridgeObserver {
  readonly registry = new Registry();
  private readonly calls: Counter<'operation' | 'outcome'>;
  private readonly latency: Histogram<'operation'>;
  private readonly handshakes: Counter<'mechanism' | 'outcome'>;
  private readonly refusals: Counter<'reason'>;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.calls = new Counter({
      name: 'idb_bridge_calls_total',
      help: 'Calls answered, by operation and outcome (ok or the fault name).',
      labelNames: ['operation', 'outcome'],
      registers,
    });
    this.latency = new Histogram({
      name: 'idb_bridge_call_duration_seconds',
      help: 'Call latency by operation.',
      labelNames: ['operation'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.handshakes = new Counter({
      name: 'idb_bridge_handshakes_total',
      help: 'Windows-security logons by mechanism and outcome.',
      labelNames: ['mechanism', 'outcome'],
      registers,
    });
    this.refusals = new Counter({
      name: 'idb_bridge_refusals_total',
      help: 'Connections refused or aborted by the bridge, by reason.',
      labelNames: ['reason'],
      registers,
    });
  }

  /** Gauges read from the running bridge at each scrape. */
  watch(gauges: BridgeGauges): void {
    const registers = [this.registry];
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    gauge('idb_bridge_connections', 'Open net.tcp connections.', gauges.connections);
    gauge('idb_bridge_database_requests_open', 'Open database requests.', gauges.openDatabaseRequests);
    gauge(
      'idb_bridge_inflight_message_bytes',
      'Bytes reserved for partly received messages (BRIDGE_MAX_INFLIGHT_MB).',
      () => gauges.inflight().reservedBytes,
    );
    gauge(
      'idb_bridge_inflight_waiting_connections',
      'Connections waiting for the in-flight message budget.',
      () => gauges.inflight().waiting,
    );
    gauge(
      'idb_bridge_unsent_reply_bytes',
      'Reply bytes written and not yet taken by the clients (at most one reply plus BRIDGE_MAX_UNSENT_KB each).',
      gauges.unsentBytes,
    );
  }

  call(operation: string, outcome: string, seconds: number): void {
    this.calls.inc({ operation, outcome });
    this.latency.observe({ operation }, seconds);
  }

  handshake(mechanism: string, outcome: 'established' | 'refused'): void {
    this.handshakes.inc({ mechanism, outcome });
  }

  refusal(reason: string): void {
    this.refusals.inc({ reason });
  }
}

export interface MetricsListener {
  port: number;
  close(): Promise<void>;
}

/** GET /metrics (Prometheus text) and GET /health (`{"status":"ok"}`); anything else 404. */
export async function serveMetrics(metrics: BridgeMetrics, host: string, port: number): Promise<MetricsListener> {
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://bridge').pathname;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
    } else if (path === '/metrics') {
      metrics.registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
        () => response.writeHead(500).end(),
      );
    } else if (path === '/health') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
