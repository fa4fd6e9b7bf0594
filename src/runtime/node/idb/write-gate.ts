import { ByteBudget } from '../../../byte-budget.ts';
import { DatabaseFault } from '../../../idb/database.ts';

/**
 * One writing transaction at a time inside this process, first come first served. SQLite lets one transaction write;
 * a second `BEGIN IMMEDIATE` waits in SQLite's busy handler, which sleeps between tries in steps growing to 100 ms,
 * so writers queued there notice late that the lock is free (measured: 8 channels of writers' ReturnScalar, p99
 * 80 ms). Queued here instead (a budget of one), the next writer begins as soon as the previous one ends. SQLite's
 * busy time-out still covers other processes that write the same file.
 */
export class WriteGate {
  private readonly slot = new ByteBudget(1);
  private readonly refusals = new Set<(error: Error) => void>();

  /** Resolves with the function that lets the next writer in; faults Timeout after `timeoutMs` of waiting. */
  enter(timeoutMs: number): Promise<() => void> {
    if (this.slot.tryReserve(1)) return Promise.resolve(this.leaver());
    return new Promise((resolve, reject) => {
      const refuse = (error: Error) => {
        clearTimeout(timer);
        this.refusals.delete(refuse);
        withdraw();
        reject(error);
      };
      const withdraw = this.slot.wait(1, () => {
        clearTimeout(timer);
        this.refusals.delete(refuse);
        resolve(this.leaver());
      });
      const timer = setTimeout(
        () =>
          refuse(
            new DatabaseFault(
              'Timeout',
              `database is locked (waited ${timeoutMs} ms for another transaction's lock)`,
              true,
            ),
          ),
        timeoutMs,
      );
      this.refusals.add(refuse);
    });
  }

  /** The database is closing: nobody waiting gets in. */
  refuseAll(error: Error): void {
    for (const refuse of [...this.refusals]) refuse(error);
  }

  /** A function that hands the gate on once, however often it is called. */
  private leaver(): () => void {
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.slot.release(1);
    };
  }
}
