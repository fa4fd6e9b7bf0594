import { Worker } from 'node:worker_threads';
import type { EngineReport, PdfEngine } from '../../pdf/engine/port.ts';
import { EngineBusyError, type EngineStats } from '../../pdf/engine/queue.ts';
import type { QrExtractor } from '../../qr/extractor.ts';
import type { ScanOutcome } from '../../qr/scan.ts';
import type { EngineModules } from '../shared/deps.ts';

export interface WorkerEngineOptions {
  /** The engines compiled once in the main thread and shared: workers do not each compile (and hold) their own. */
  modules: EngineModules;
  workers: number;
  timeoutMs: number;
  /** QUEUE_TIMEOUT_MS: longest a document waits for a free worker; then it is refused with EngineBusyError. */
  queueTimeoutMs?: number;
  memoryLimitBytes: number;
}

/** What a worker is asked: the job kinds map to the PdfEngine and QrExtractor methods. */
export type EngineJob = { kind: 'inspect' | 'scan'; pdf: Uint8Array };
type Outcome = EngineReport | ScanOutcome;
type Job = EngineJob & {
  resolve: (r: Outcome) => void;
  reject: (e: Error) => void;
  queueTimer?: ReturnType<typeof setTimeout>;
};

/**
 * Runs PDFium in worker threads so a document can be stopped: WebAssembly cannot be interrupted from inside, but a
 * worker can be terminated. Each worker takes one document at a time and its clock starts when it does, so a
 * document past the time-out answers `too-complex` alone: its worker is replaced and the queue goes on. A document
 * that waits QUEUE_TIMEOUT_MS in the queue is refused (503 `overloaded`); the wait is never charged to PDF_TIMEOUT_MS.
 */
export class WorkerPdfEngine implements PdfEngine, QrExtractor, EngineStats {
  private readonly idle: EngineWorker[] = [];
  private readonly queue: Job[] = [];
  private readonly all: EngineWorker[];
  private restartCount = 0;

  constructor(private readonly options: WorkerEngineOptions) {
    this.all = Array.from(
      { length: Math.max(1, options.workers) },
      () => new EngineWorker(options, () => this.restartCount++),
    );
    this.idle.push(...this.all);
  }

  waiting(): number {
    return this.queue.length;
  }

  restarts(): number {
    return this.restartCount;
  }

  inspect(pdf: Uint8Array): Promise<EngineReport> {
    return this.run('inspect', pdf) as Promise<EngineReport>;
  }

  scan(pdf: Uint8Array): Promise<ScanOutcome> {
    return this.run('scan', pdf) as Promise<ScanOutcome>;
  }

  private run(kind: EngineJob['kind'], pdf: Uint8Array): Promise<Outcome> {
    return new Promise((resolve, reject) => {
      const job: Job = { kind, pdf, resolve, reject };
      this.queue.push(job);
      this.dispatch();
      const { queueTimeoutMs } = this.options;
      if (queueTimeoutMs !== undefined && this.queue.includes(job)) {
        job.queueTimer = setTimeout(() => {
          const at = this.queue.indexOf(job);
          if (at < 0) return;
          this.queue.splice(at, 1);
          reject(new EngineBusyError(queueTimeoutMs));
        }, queueTimeoutMs);
      }
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.all.map((w) => w.terminate()));
  }

  private dispatch(): void {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const worker = this.idle.pop()!;
      const job = this.queue.shift()!;
      clearTimeout(job.queueTimer);
      worker.run(job, this.options.timeoutMs).finally(() => {
        this.idle.push(worker);
        this.dispatch();
      });
    }
  }
}

/** One worker thread, replaced in place when it has to be stopped. */
class EngineWorker {
  private worker!: Worker;
  /** Settles when the worker has compiled the engine: start-up time is not charged to a document. */
  private ready!: Promise<void>;
  private current: { job: Job; timer: ReturnType<typeof setTimeout>; done: () => void } | undefined;

  constructor(
    private readonly options: WorkerEngineOptions,
    private readonly onRestart: () => void,
  ) {
    this.spawn();
  }

  async run(job: Job, timeoutMs: number): Promise<void> {
    await this.ready;
    return new Promise<void>((done) => {
      const timer = setTimeout(
        () => this.finish({ status: 'too-complex', reason: `time limit of ${timeoutMs} ms reached` }, true),
        timeoutMs,
      );
      this.current = { job, timer, done };
      // The buffer under the bytes is transferred, not copied (the engine port allows it): for a request, that is the
      // body the document was decoded in, so the document crosses to the worker without a copy.
      const { kind, pdf } = job;
      const transferable = pdf.buffer instanceof ArrayBuffer;
      this.worker.postMessage({ kind, pdf } satisfies EngineJob, transferable ? [pdf.buffer as ArrayBuffer] : []);
    });
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }

  private finish(outcome: Outcome | Error, restart: boolean): void {
    const current = this.current;
    if (!current) return;
    this.current = undefined;
    clearTimeout(current.timer);
    if (restart) {
      void this.worker.terminate();
      this.onRestart();
      this.spawn();
    }
    if (outcome instanceof Error) current.job.reject(outcome);
    else current.job.resolve(outcome);
    current.done();
  }

  private spawn(): void {
    const worker = new Worker(new URL('./pdf-worker.mjs', import.meta.url), {
      workerData: {
        modules: this.options.modules,
        memoryLimitBytes: this.options.memoryLimitBytes,
        timeoutMs: this.options.timeoutMs,
      },
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    worker.unref();
    let started: () => void;
    this.ready = new Promise((resolve) => (started = resolve));
    worker.on('message', (m: { ready?: true; result?: Outcome; error?: string }) => {
      if (worker !== this.worker) return;
      if (m.ready) started();
      // An engine that hit its memory ceiling leaves a full heap behind: a new thread gives it back at once.
      if (m.result) this.finish(m.result, m.result.status === 'too-complex');
      else if (m.error !== undefined) this.finish(new Error(m.error), false);
    });
    worker.on('error', () => {
      if (worker !== this.worker) return;
      if (this.current) this.finish({ status: 'too-complex', reason: 'the engine worker failed' }, true);
      else this.spawn();
    });
    this.worker = worker;
  }
}
