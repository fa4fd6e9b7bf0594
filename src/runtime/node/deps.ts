import { availableParallelism } from 'node:os';
import { createApp } from '../../app.ts';
import type { HttpConfig } from '../../config.ts';
import { ByteBudget } from '../../byte-budget.ts';
import type { EndpointConfig } from '../../idb/config.ts';
import { collectDefaultMetrics } from 'prom-client';
import { loadEngineModules, serverDeps } from '../shared/deps.ts';
import { WorkerPdfEngine } from './worker-engine.ts';

/** The service as `npm start` runs it: the engines in a pool of worker threads (PDF_WORKERS, default one per core). */
export async function nodeService(config: HttpConfig, endpoint: EndpointConfig, workers = availableParallelism()) {
  const engine = new WorkerPdfEngine({
    modules: await loadEngineModules(),
    workers,
    timeoutMs: config.pdfTimeoutMs,
    queueTimeoutMs: config.queueTimeoutMs,
    memoryLimitBytes: config.pdfEngineMemoryBytes,
  });
  const deps = {
    ...serverDeps(config, endpoint, { engine, qr: engine, engineStats: engine }),
    budget: new ByteBudget(config.maxInflightBytes),
  };
  // Node's process metrics (resident memory, event loop lag, heap) beside the service's own.
  collectDefaultMetrics({ register: deps.metrics.registry });
  return { app: createApp(deps), deps, engine };
}
