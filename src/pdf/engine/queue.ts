import type { QrExtractor } from '../../qr/extractor.ts';
import type { PdfEngine } from './port.ts';

/** A document waited QUEUE_TIMEOUT_MS for a PDF engine: answered 503 `overloaded`, never `pdf-too-complex`. */
export class EngineBusyError extends Error {
  override name = 'EngineBusyError';
  constructor(readonly waitedMs: number) {
    super(`no PDF engine became free within ${waitedMs} ms (QUEUE_TIMEOUT_MS)`);
  }
}

/** What the engines tell the metrics: documents waiting for an engine, and engines restarted so far. */
export interface EngineStats {
  waiting(): number;
  restarts(): number;
}

/**
 * The PDF engines of this thread (Bun, Deno, Workers, the CLI) take one document at a time: a document waits here for
 * its turn, at most `queueTimeoutMs`, and its PDF_TIMEOUT_MS budget starts when its turn comes (the scan and the
 * structure reader start their clocks when called). The Node entry has its own queue in front of its worker threads.
 */
export class EngineQueue implements EngineStats {
  private busy = false;
  private readonly waiters: { start: () => void }[] = [];
  private restartCount = 0;

  constructor(private readonly queueTimeoutMs: number) {}

  waiting(): number {
    return this.waiters.length;
  }

  restarts(): number {
    return this.restartCount;
  }

  /** Counts an engine instance dropped after an abort (out of memory under its ceiling, a trap). */
  restarted(): void {
    this.restartCount++;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.turn();
    try {
      return await work();
    } finally {
      const next = this.waiters.shift();
      if (next) next.start();
      else this.busy = false;
    }
  }

  /** The engines, each call taking its turn here. */
  wrap(engines: { engine: PdfEngine; qr: QrExtractor }): { engine: PdfEngine; qr: QrExtractor } {
    return {
      engine: { inspect: (pdf) => this.run(() => engines.engine.inspect(pdf)) },
      qr: { scan: (pdf) => this.run(() => engines.qr.scan(pdf)) },
    };
  }

  private turn(): Promise<void> {
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        start: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new EngineBusyError(this.queueTimeoutMs));
      }, this.queueTimeoutMs);
      this.waiters.push(waiter);
    });
  }
}
