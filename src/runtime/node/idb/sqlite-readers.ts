/**
 * A call's read in a transaction of its own, on the main thread: a pool of read-only connections (sqlite-database.ts
 * sends `runAlone` reads here; transactions and writes have sessions of their own, sqlite-session.ts).
 *
 * A pool of its own, not sessions: a read needs no write gate, no BEGIN and no ROLLBACK, and many can run at once.
 * The statement's first step runs on libsql's own thread (a slow query does not block the event loop, and two slow
 * reads overlap); the rows are read on this thread, yielding to the event loop every 20 ms (sqlite-connection.ts).
 * Measured against reads on worker threads (the design until 2026-11): ~280 µs of bridge CPU per `SELECT @v` instead
 * of ~500 µs, CoreWCF's whole call being ~200 µs (bench/dotnet.ts, 8 channels).
 *
 * A read-only connection (`mode=ro`), the statement in autocommit mode: SQLite refuses a write itself (SQLITE_READONLY).
 */
import {
  type Native,
  type NativeDatabase,
  type Outcome,
  openConnection,
  own,
  type RunningStatement,
  runStatement,
  type Statement,
  statementFailure,
  type WireResult,
} from './sqlite-connection.ts';

export class SqliteReaders {
  private readonly idle: NativeDatabase[] = [];
  private readonly running = new Set<RunningStatement>();
  private readonly waiting: ((db: NativeDatabase | undefined) => void)[] = [];
  private open = 0;
  private closed = false;
  private drained: (() => void) | undefined;

  constructor(
    private readonly native: Native,
    private readonly path: string,
    private readonly busyTimeoutMs: number,
    /** How many reads run at once; more wait for a connection. */
    private readonly maxConnections: number,
  ) {}

  /** Never rejects: a failure answers with SQLite's code, as a session's reply does. */
  async read(request: Statement): Promise<Outcome<WireResult>> {
    let db: NativeDatabase | undefined;
    try {
      db = await this.acquire();
    } catch (error) {
      return { ok: false, ...statementFailure(error) };
    }
    if (db === undefined) return { ok: false, code: 'LOST', message: 'The database has been closed.' };
    let mine: RunningStatement | undefined;
    const track = (state: RunningStatement | undefined): void => {
      if (state !== undefined) {
        mine = state;
        this.running.add(state);
      } else if (mine !== undefined) this.running.delete(mine);
    };
    let trusted = true;
    try {
      // In autocommit mode the statement is its own read transaction (one snapshot from its first step to its last
      // row): no BEGIN and ROLLBACK of ours needed.
      return { ok: true, result: await runStatement(this.native, db, request, track) };
    } catch (error) {
      return { ok: false, ...statementFailure(error) };
    } finally {
      try {
        if (db.inTransaction()) own(this.native, db, 'ROLLBACK');
      } catch {
        trusted = false;
      }
      this.release(db, trusted);
    }
  }

  /** Interrupts running reads; resolves once every connection is closed (each read closes its own as it ends). */
  close(): Promise<void> {
    this.closed = true;
    for (const wake of this.waiting.splice(0)) wake(undefined);
    for (const state of this.running) state.cancel();
    for (const db of this.idle.splice(0)) this.drop(db);
    return this.open === 0 ? Promise.resolve() : new Promise((resolve) => (this.drained = resolve));
  }

  private acquire(): Promise<NativeDatabase | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    const db = this.idle.pop();
    if (db !== undefined) return Promise.resolve(db);
    if (this.open < this.maxConnections) {
      // A connection that cannot be opened throws here, which read() answers as the failure it is.
      const opened = openConnection(this.native, this.path, 'read', this.busyTimeoutMs);
      this.open++;
      return Promise.resolve(opened);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(db: NativeDatabase, trusted: boolean): void {
    if (!trusted || this.closed) {
      this.drop(db);
      return;
    }
    const waiter = this.waiting.shift();
    if (waiter) waiter(db);
    else this.idle.push(db);
  }

  private drop(db: NativeDatabase): void {
    this.open--;
    try {
      db.close();
    } catch {
      // closing is all that is left to do with it
    }
    if (this.open === 0) this.drained?.();
  }
}
