import { DatabaseFault } from '../../../idb/database.ts';

/**
 * One writing transaction at a time inside this process, first come first served. SQLite lets one transaction write;
 * a second `BEGIN IMMEDIATE` waits in SQLite's busy handler, which sleeps between tries in steps growing to 100 ms,
 * so writers queued there notice late that the lock is free (measured: 8 channels of writers' ReturnScalar, p99
 * 80 ms). Queued here instead, the next writer begins as soon as the previous one ends. SQLite's busy time-out still
 * covers other processes that write the same file.
 */
export class WriteGate {
  private held = false;
  private readonly queue: { grant: () => void; refuse: (error: Error) => void }[] = [];

  /** Resolves with the function that lets the next writer in; faults Timeout after `timeoutMs` of waiting. */
  enter(timeoutMs: number): Promise<() => void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve(this.leaver());
    }
    return new Promise((resolve, reject) => {
      const entry = {
        grant: () => {
          clearTimeout(timer);
          resolve(this.leaver());
        },
        refuse: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        this.queue.splice(this.queue.indexOf(entry), 1);
        reject(new DatabaseFault('Timeout', `database is locked (waited ${timeoutMs} ms for another transaction's lock)`, true));
      }, timeoutMs);
      this.queue.push(entry);
    });
  }

  /** The database is closing: nobody waiting gets in. */
  refuseAll(error: Error): void {
    for (const entry of this.queue.splice(0)) entry.refuse(error);
  }

  /** A function that hands the gate on once, however often it is called. */
  private leaver(): () => void {
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const next = this.queue.shift();
      if (next) next.grant();
      else this.held = false;
    };
  }
}
