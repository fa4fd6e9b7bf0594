/**
 * A call's read in a transaction of its own, on the main thread: a pool of read-only connections (sqlite-database.ts
 * sends `runAlone` reads here; transactions and writes have sessions of their own, sqlite-session.ts).
 *
 * A pool of its own, not sessions: a read needs no write gate, no BEGIN and no ROLLBACK, and many can run at once.
 *
 * A read is first run whole on this thread within SYNC_BUDGET_MS (runWithin in sqlite-connection.ts): most reads a
 * client sends take microseconds, and libsql's asynchronous path costs ~0.1 ms of CPU per thread hop, two per read.
 * Past the budget libsql interrupts it, which leaves no trace of a read in autocommit mode, and it runs again on the
 * asynchronous path: its first step on libsql's own thread (a slow query does not block the event loop, and two
 * slow reads overlap), its rows on this thread, yielding every 20 ms. Its text is remembered as slow for SLOW_FOR_MS
 * once that happened twice in a row, so a slow query costs the event loop two budgets per 10 s, not one per call.
 * Statements run within the budget are kept prepared per connection (StatementCache).
 * Measured (bench/dotnet.ts, 8 channels, bridge CPU per `SELECT @v` call): ~500 µs with reads on worker threads (the
 * design until 2026-11), ~280 µs with the asynchronous path from this thread, ~150 µs run within the budget.
 *
 * A read-only connection (`mode=ro`), the statement in autocommit mode: SQLite refuses a write itself (SQLITE_READONLY).
 *
 * A read whose program has no loop (runsWithoutLoop: a lookup by key, expressions of parameters) runs without the
 * budget, on a connection of its own that has none. The budget costs such a read more than the read itself: libsql
 * registers each bounded statement with its timer thread, which wakes once per statement to drop it (measured:
 * ReturnScalar on 8 channels 20–25% more calls/s without it, the bridge's CPU per call 112 → 87 µs), and it could
 * not interrupt such a program anyway (SQLite checks for an interrupt where a program loops). A text is looked at
 * (its EXPLAIN) the second time it runs within the budget, and its verdict is kept until the schema may have changed:
 * sqlite-database.ts calls `schemaChanging` around the COMMIT of a transaction that ran DDL, and no read runs that way
 * meanwhile (dropping an index turns a lookup into a scan). A read run that way that still takes longer than the
 * budget (the schema changed under another process's hand, say) goes back to the budget.
 */
import {
  close,
  type Native,
  type NativeDatabase,
  type Outcome,
  openConnection,
  own,
  type RunningStatement,
  runStatement,
  runsWithoutLoop,
  runWithin,
  type Statement,
  statementFailure,
  type WireResult,
  worn,
} from './sqlite-connection.ts';

/** How long a read may run on the event loop before it is interrupted and run again on libsql's threads. */
const SYNC_BUDGET_MS = 3;
/** How many texts of slow reads are remembered (then forgotten all at once: a forgotten one costs a budget again). */
const SLOW_KEPT = 1000;
/** How long a slow read's text is remembered: a slow read then costs the event loop one budget per this long. */
const SLOW_FOR_MS = 10_000;
/** How many texts' verdicts (runsWithoutLoop) are kept, and texts seen once (then forgotten all at once). */
const PROGRAMS_KEPT = 1000;
/** Longer texts are not judged (nor kept): clients repeat short statements. */
const JUDGED_TEXT_MAX = 4096;

export class SqliteReaders {
  private readonly idle: NativeDatabase[] = [];
  /** The texts of reads that ran out of the budget twice in a row, to when: they go to libsql's threads for a while. */
  private readonly slow = new Map<string, number>();
  /** The texts of reads that ran out of it once since they last ran within it. */
  private readonly struck = new Set<string>();
  private readonly running = new Set<RunningStatement>();
  private readonly waiting: ((db: NativeDatabase | undefined) => void)[] = [];
  /** Texts that ran within the budget once, and the verdicts of those that did again: true, no loop. */
  private readonly seen = new Set<string>();
  private readonly withoutLoop = new Map<string, boolean>();
  /** COMMITs in flight of transactions that ran DDL: no verdict is made or used meanwhile. */
  private schemaChanges = 0;
  /** The connection without a budget, for reads without a loop; used only synchronously, so one is enough. */
  private unbounded: NativeDatabase | undefined;
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
    if (request.timeoutMs > SYNC_BUDGET_MS && this.schemaChanges === 0 && this.withoutLoop.get(request.sql)) {
      const outcome = this.readUnbounded(request);
      if (outcome !== undefined) return outcome;
    }
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
    try {
      // In autocommit mode the statement is its own read transaction (one snapshot from its first step to its last
      // row): no BEGIN and ROLLBACK of ours needed. A time-out within the budget is the statement's own (and runs on
      // the asynchronous path, where a rollback can interrupt it).
      if (request.timeoutMs > SYNC_BUDGET_MS && !this.isSlow(request.sql)) {
        try {
          const result = runWithin(this.native, db, request);
          if (this.struck.size > 0) this.struck.delete(request.sql);
          this.judge(db, request.sql);
          return { ok: true, result };
        } catch (error) {
          const failure = statementFailure(error);
          if (failure.code !== 'SQLITE_INTERRUPT') return { ok: false, ...failure };
          this.strike(request.sql);
        }
      }
      return { ok: true, result: await runStatement(this.native, db, request, track) };
    } catch (error) {
      return { ok: false, ...statementFailure(error) };
    } finally {
      this.release(db, this.leftClean(db));
    }
  }

  /**
   * The read on the connection without a budget, whole, on this thread; undefined when that connection cannot be
   * opened (the read then goes the usual way). One that took longer than the budget after all loses its verdict.
   */
  private readUnbounded(request: Statement): Outcome<WireResult> | undefined {
    if (this.closed) return undefined;
    let db = this.unbounded;
    try {
      db ??= this.unbounded = openConnection(this.native, this.path, 'read', this.busyTimeoutMs);
    } catch {
      return undefined;
    }
    const started = performance.now();
    let outcome: Outcome<WireResult>;
    try {
      outcome = { ok: true, result: runWithin(this.native, db, request) };
    } catch (error) {
      outcome = { ok: false, ...statementFailure(error) };
    }
    // Judged again later (twice within the budget first): a pause of the process or the machine takes that long too.
    if (performance.now() - started > SYNC_BUDGET_MS) this.withoutLoop.delete(request.sql);
    if (!this.leftClean(db) || worn(db)) {
      this.unbounded = undefined;
      close(db);
    }
    return outcome;
  }

  /** Rolls back a read transaction left open; false when the connection can no longer be trusted. */
  private leftClean(db: NativeDatabase): boolean {
    try {
      if (db.inTransaction()) own(this.native, db, 'ROLLBACK');
      return true;
    } catch {
      return false;
    }
  }

  /** A text that ran within the budget: the second time, whether its program has a loop (on `db`, as it is now). */
  private judge(db: NativeDatabase, sql: string): void {
    if (this.schemaChanges > 0 || sql.length > JUDGED_TEXT_MAX || this.withoutLoop.has(sql)) return;
    if (!secondTime(this.seen, sql, PROGRAMS_KEPT)) return;
    if (this.withoutLoop.size >= PROGRAMS_KEPT) this.withoutLoop.clear();
    this.withoutLoop.set(sql, runsWithoutLoop(this.native, db, sql));
  }

  /**
   * The schema may change (a transaction that ran DDL commits): verdicts are forgotten, and none is made or used
   * until the returned function is called, once the COMMIT has ended.
   */
  schemaChanging(): () => void {
    this.schemaChanges++;
    this.withoutLoop.clear();
    return () => {
      this.schemaChanges--;
      this.withoutLoop.clear();
    };
  }

  /**
   * A read ran out of the budget: slow the second time in a row. Once could be a pause of the process (a garbage
   * collection) or of the machine (a busy core): the budget is time on the clock, not on the CPU.
   */
  private strike(sql: string): void {
    if (!secondTime(this.struck, sql, SLOW_KEPT)) return;
    if (this.slow.size >= SLOW_KEPT) this.slow.clear();
    this.slow.set(sql, performance.now());
  }

  /**
   * Whether a read ran out of the budget lately. Not for ever: a pause of the whole process (a garbage collection)
   * can run a cheap read out of it too.
   */
  private isSlow(sql: string): boolean {
    const since = this.slow.get(sql);
    if (since === undefined) return false;
    if (performance.now() - since < SLOW_FOR_MS) return true;
    this.slow.delete(sql);
    return false;
  }

  /** Interrupts running reads; resolves once every connection is closed (each read closes its own as it ends). */
  close(): Promise<void> {
    this.closed = true;
    for (const wake of this.waiting.splice(0)) wake(undefined);
    for (const state of this.running) state.cancel();
    for (const db of this.idle.splice(0)) this.drop(db);
    if (this.unbounded !== undefined) close(this.unbounded);
    this.unbounded = undefined;
    return this.open === 0 ? Promise.resolve() : new Promise((resolve) => (this.drained = resolve));
  }

  private acquire(): Promise<NativeDatabase | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    const db = this.idle.pop();
    if (db !== undefined) return Promise.resolve(db);
    if (this.open < this.maxConnections) {
      // A connection that cannot be opened throws here, which read() answers as the failure it is.
      const opened = openConnection(this.native, this.path, 'read', this.busyTimeoutMs, SYNC_BUDGET_MS);
      this.open++;
      return Promise.resolve(opened);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(db: NativeDatabase, trusted: boolean): void {
    if (!trusted || this.closed || worn(db)) {
      this.drop(db);
      return;
    }
    const waiter = this.waiting.shift();
    if (waiter) waiter(db);
    else this.idle.push(db);
  }

  private drop(db: NativeDatabase): void {
    this.open--;
    close(db);
    if (this.open === 0) this.drained?.();
  }
}

/**
 * Whether `text` is in `once` (taken out then): the second time in a row. Else it is put in, and `once` is emptied
 * first when it holds `kept` texts already.
 */
function secondTime(once: Set<string>, text: string, kept: number): boolean {
  if (once.delete(text)) return true;
  if (once.size >= kept) once.clear();
  once.add(text);
  return false;
}
