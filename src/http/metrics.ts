import type { MetricsRegistry } from '../metrics.ts';
import type { EngineStats } from '../pdf/engine/queue.ts';
import { SCAN_PASSES, type ScanPass } from '../qr/scan.ts';
import type { ByteBudget } from '../byte-budget.ts';

/** Request latency buckets in seconds: from a health check to a 300 dpi scan of a large page. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The service's metrics (docs/contract/http.md, "Metrics"), the same names on every runtime:
 * - `http_requests_total{route,method,status}` and `http_request_duration_seconds{route}`: `route` is the route's
 *   path (`/api/v1/documents/validate`, `/health`, ...), or `other` for unknown paths, so scans of random URLs cannot
 *   grow the label set;
 * - `http_inflight_body_bytes` (of `http_inflight_body_limit_bytes`, MAX_INFLIGHT_MB): request bodies being read or
 *   worked on;
 * - `pdf_documents_waiting`: documents waiting for a PDF engine;
 * - `pdf_engine_restarts_total`: engines replaced (a worker thread stopped at PDF_TIMEOUT_MS or after its memory
 *   ceiling on Node; an engine instance dropped after an abort elsewhere);
 * - `qr_bills_found_total{pass}`: which extraction pass found each bill (src/qr/scan.ts).
 */
export class AppMetrics {
  private readonly requests;
  private readonly latency;
  private readonly bills;

  constructor(
    readonly registry: MetricsRegistry,
    private readonly routes: ReadonlySet<string>,
    sources: { budget: ByteBudget; engines?: EngineStats },
  ) {
    this.requests = registry.counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by route, method and status.',
      labelNames: ['route', 'method', 'status'],
    });
    this.latency = registry.histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by route.',
      labelNames: ['route'],
      buckets: LATENCY_BUCKETS,
    });
    this.bills = registry.counter({
      name: 'qr_bills_found_total',
      help: 'QR-bills found, by the extraction pass that found them.',
      labelNames: ['pass'],
    });
    for (const pass of SCAN_PASSES) this.bills.inc({ pass }, 0);
    registry.collected({
      name: 'http_inflight_body_bytes',
      help: 'Bytes of request bodies being read or worked on (bounded by MAX_INFLIGHT_MB).',
      type: 'gauge',
      read: () => sources.budget.reserved,
    });
    registry.collected({
      name: 'http_inflight_body_limit_bytes',
      help: 'MAX_INFLIGHT_MB in bytes.',
      type: 'gauge',
      read: () => sources.budget.limitBytes,
    });
    registry.collected({
      name: 'pdf_documents_waiting',
      help: 'Documents waiting for a PDF engine.',
      type: 'gauge',
      read: () => sources.engines?.waiting() ?? 0,
    });
    registry.collected({
      name: 'pdf_engine_restarts_total',
      help: 'PDF engines replaced after a time-out, their memory ceiling or a crash.',
      type: 'counter',
      read: () => sources.engines?.restarts() ?? 0,
    });
  }

  requestAnswered(path: string, method: string, status: number, seconds: number): void {
    const route = this.routes.has(path) ? path : 'other';
    this.requests.inc({ route, method, status: String(status) });
    this.latency.observe({ route }, seconds);
  }

  billFound(pass: ScanPass): void {
    this.bills.inc({ pass });
  }
}
