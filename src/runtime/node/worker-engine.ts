import { Worker } from 'node:worker_threads';
import type { EngineReport, PdfEngine } from '../../pdf/engine/port.ts';

export interface WorkerEngineOptions {
  workers: number;
  timeoutMs: number;
  memoryLimitBytes: number;
}

type Pending = { resolve: (r: EngineReport) => void; reject: (e: Error) => void; timer: ReturnType<typeof setTimeout> };

/**
 * Runs PDFium in worker threads so a document can be stopped: WebAssembly cannot be interrupted from inside, but a
 * worker can be terminated. A call past the time-out answers `too-complex` and its worker is replaced.
 */
export class WorkerPdfEngine implements PdfEngine {
  private readonly slots: Slot[];
  private next = 0;

  constructor(private readonly options: WorkerEngineOptions) {
    this.slots = Array.from({ length: options.workers }, () => new Slot(options.memoryLimitBytes));
  }

  inspect(pdf: Uint8Array): Promise<EngineReport> {
    // The least busy worker takes the call; ties go round-robin.
    const start = this.next++ % this.slots.length;
    const slot = [...this.slots.slice(start), ...this.slots.slice(0, start)].reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    return slot.call(pdf, this.options.timeoutMs);
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.close()));
  }
}

class Slot {
  private worker!: Worker;
  readonly pending = new Map<number, Pending>();
  private ids = 0;

  constructor(private readonly memoryLimitBytes: number) {
    this.spawn();
  }

  call(pdf: Uint8Array, timeoutMs: number): Promise<EngineReport> {
    const id = ++this.ids;
    return new Promise<EngineReport>((resolve, reject) => {
      const timer = setTimeout(() => this.restart(`time limit of ${timeoutMs} ms reached`), timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.worker.postMessage({ id, pdf });
    });
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }

  private spawn(): void {
    this.worker = new Worker(new URL('./pdf-worker.mjs', import.meta.url), {
      workerData: { memoryLimitBytes: this.memoryLimitBytes },
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    this.worker.unref();
    this.worker.on('message', (m: { id?: number; report?: EngineReport; error?: string }) => {
      const p = m.id === undefined ? undefined : this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id!);
      clearTimeout(p.timer);
      if (m.report) p.resolve(m.report);
      else p.reject(new Error(m.error ?? 'PDF worker failed'));
    });
    const worker = this.worker;
    worker.on('error', () => {
      if (worker === this.worker) this.restart('worker failed');
    });
  }

  /** Every call queued on the stopped worker shares its fate: none of them can finish. */
  private restart(reason: string): void {
    void this.worker.terminate();
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.resolve({ status: 'too-complex', reason });
    }
    this.pending.clear();
    this.spawn();
  }
}
