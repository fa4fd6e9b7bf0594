/**
 * The connections of one open transaction of the SQLite backend (sqlite-database.ts lends a session to one
 * transaction at a time, as a pool lends a connection), on the main thread.
 *
 * - Two connections, opened when first needed: the writer's (`BEGIN IMMEDIATE`) and a `mode=ro` one for readers, so
 *   SQLite itself refuses a reader's write. How a connection is opened and a statement run is sqlite-connection.ts's.
 * - Nothing that can wait runs on this thread: a statement's first step (where a slow query, sort or write spends its
 *   time), `BEGIN IMMEDIATE` (which can wait for another process's write lock up to the busy time-out) and `COMMIT`
 *   (which syncs the WAL to disk) run on libsql's own threads; ROLLBACK, our checks and the reading of rows that are
 *   ready run here (rows yield to the event loop every 20 ms).
 * - Why not worker threads (the design until 2026-11): a call there took two thread hops each way and woke a sleeping
 *   worker, ~2x the CPU per statement of this; and ending a worker whose libsql task was still releasing its callback
 *   aborted the whole process now and then (SIGABRT in napi_release_threadsafe_function from a tokio thread, seen in
 *   the test suites under load).
 */
import {
  type Native,
  type NativeDatabase,
  type NativeStatement,
  type Outcome,
  close,
  openConnection,
  own,
  ownPragma,
  prepareKept,
  ownRows,
  type RunningStatement,
  runStatement,
  runWithin,
  type Statement,
  StatementError,
  statementFailure,
  type WireResult,
  worn,
} from './sqlite-connection.ts';
import { isPlainInsert } from './sqlite-statement-shape.ts';

export type SessionRequest =
  | { op: 'init' }
  | { op: 'begin'; access: 'read' | 'write' }
  | ({ op: 'run' } & Statement)
  /** BEGIN IMMEDIATE, run and commit: a call's write in a transaction of its own (its reads go to the readers) */
  | ({ op: 'write' } & Statement)
  | { op: 'commit' }
  | { op: 'rollback' };

export type SessionReply = Outcome<WireResult | undefined>;

const CLOSED = 'The database has been closed.';

/** The most text and parameter bytes of an INSERT run on the event loop (a larger one writes long enough to go off it). */
const PLAIN_INSERT_BYTES = 64 * 1024;
/** Whether a trigger (of the file or TEMP) could fire on a write: then no write runs on the event loop. */
const ANY_TRIGGER =
  "SELECT 1 FROM sqlite_schema WHERE type = 'trigger' UNION ALL SELECT 1 FROM temp.sqlite_schema WHERE type = 'trigger' LIMIT 1";

export class SqliteSession {
  private readonly connections = new Map<'read' | 'write', NativeDatabase>();
  private readonly triggerChecks = new WeakMap<NativeDatabase, NativeStatement>();
  /**
   * The trigger check found none in the open transaction, and only plain INSERTs have run since. A write transaction
   * holds the write lock from its BEGIN IMMEDIATE, so no other connection can change the schema until it ends, and
   * its own plain INSERTs cannot: the answer holds until a statement of another kind runs, or the transaction ends.
   * A request's second and later INSERTs skip the check (it was a tenth of such a call).
   */
  private triggerFree = false;
  /** The connection of the open transaction. */
  private current: NativeDatabase | undefined;
  /** The statement being run: interrupt() stops it. */
  private running: RunningStatement | undefined;
  private pending: Promise<unknown> | undefined;
  private ending: Promise<void> | undefined;

  constructor(
    private readonly native: Native,
    private readonly path: string,
    private readonly busyTimeoutMs: number,
  ) {}

  get usable(): boolean {
    return this.ending === undefined;
  }

  /** Never rejects: a failure answers with SQLite's code. One call at a time (the transaction serializes them). */
  call(request: SessionRequest): Promise<SessionReply> {
    if (!this.usable) return Promise.resolve({ ok: false, code: 'LOST', message: CLOSED });
    const reply = this.handle(request).then(
      (result): SessionReply => ({ ok: true, result }),
      (error: unknown): SessionReply => ({ ok: false, ...statementFailure(error) }),
    );
    this.pending = reply;
    return reply;
  }

  /** Stops the running statement, if there is one; its call then answers SQLITE_INTERRUPT. */
  interrupt(): void {
    this.running?.cancel();
  }

  /** Rolls back and closes the connections, once whatever runs has stopped. */
  end(): Promise<void> {
    this.ending ??= (async () => {
      this.interrupt();
      await this.pending;
      this.rollback();
      for (const db of [...this.connections.values()]) this.drop(db);
    })();
    return this.ending;
  }

  private async handle(request: SessionRequest): Promise<WireResult | undefined> {
    switch (request.op) {
      case 'run':
        return this.run(request);
      case 'write':
        return this.write(request);
      case 'init':
        this.init();
        return undefined;
      case 'begin':
        await this.begin(request.access);
        return undefined;
      case 'commit':
        await this.commit();
        this.renew();
        return undefined;
      case 'rollback':
        this.rollback();
        this.renew();
        return undefined;
    }
  }

  private connection(access: 'read' | 'write'): NativeDatabase {
    let db = this.connections.get(access);
    if (db === undefined) {
      db = openConnection(this.native, this.path, access, this.busyTimeoutMs);
      this.connections.set(access, db);
    }
    return db;
  }

  private init(): void {
    // The writer's connection creates the file; WAL is a property of the file, kept from then on.
    const mode = ownPragma(this.native, this.connection('write'), 'PRAGMA journal_mode = WAL')[0]?.[0];
    if (String(mode).toLowerCase() !== 'wal')
      throw new StatementError(
        'SQLITE_ERROR',
        `the database cannot use WAL journal mode (it stays in ${String(mode)} mode)`,
      );
  }

  private async begin(access: 'read' | 'write'): Promise<void> {
    const db = this.connection(access);
    // A deferred BEGIN takes no lock and returns at once; BEGIN IMMEDIATE may wait for another process's writer.
    if (access === 'write') await this.ownOffThread(db, 'BEGIN IMMEDIATE');
    else own(this.native, db, 'BEGIN');
    this.current = db;
    this.triggerFree = false;
  }

  private async commit(): Promise<void> {
    const db = this.current;
    this.current = undefined;
    if (db === undefined) throw new StatementError('SQLITE_ERROR', 'no transaction is open');
    try {
      await this.ownOffThread(db, 'COMMIT');
    } catch (error) {
      // A failed COMMIT (a deferred foreign key, say) leaves the transaction open.
      if (db.inTransaction()) this.ownOrDrop(db, 'ROLLBACK');
      throw error;
    }
    // TEMP objects committed here would outlive the request on this reused connection: start the next one afresh.
    try {
      if (ownRows(this.native, db, 'SELECT 1 FROM temp.sqlite_schema LIMIT 1').length > 0) this.drop(db);
    } catch {
      this.drop(db);
    }
  }

  private rollback(): void {
    const db = this.current;
    this.current = undefined;
    // An interrupted write (or a full disk) has already ended the transaction.
    if (db?.inTransaction()) this.ownOrDrop(db, 'ROLLBACK');
  }

  /** A write in a transaction of its own. */
  private async write(request: Statement): Promise<WireResult> {
    await this.begin('write');
    let result: WireResult;
    try {
      result = await this.run(request);
    } catch (error) {
      this.rollback();
      throw error;
    }
    await this.commit();
    return result;
  }

  private run(request: Statement): Promise<WireResult> | WireResult {
    const db = this.current;
    if (db === undefined) throw new StatementError('SQLITE_ERROR', 'no transaction is open');
    // An INSERT of a few given rows takes microseconds: on this thread, not across libsql's (~0.1 ms of CPU a hop).
    if (db === this.connections.get('write') && this.boundedByItsText(request)) {
      this.triggerFree ||= !this.anyTrigger(db);
      if (this.triggerFree) return runWithin(this.native, db, request);
    } else this.triggerFree = false;
    return runStatement(this.native, db, request, (state) => {
      this.running = state;
    });
  }

  /** A plain INSERT (isPlainInsert) of at most PLAIN_INSERT_BYTES of text and parameters. */
  private boundedByItsText(request: Statement): boolean {
    let bytes = request.sql.length;
    for (const value of request.values)
      bytes += value instanceof Uint8Array ? value.byteLength : typeof value === 'string' ? value.length * 3 : 8;
    return bytes <= PLAIN_INSERT_BYTES && isPlainInsert(request.sql);
  }

  /**
   * A scan of the schema tables, its statement kept prepared per connection: ~2 µs (preparing it each time was ~60,
   * reading it as rows ~10).
   */
  private anyTrigger(db: NativeDatabase): boolean {
    let check = this.triggerChecks.get(db);
    if (check === undefined) {
      check = prepareKept(this.native, db, ANY_TRIGGER);
      this.triggerChecks.set(db, check);
    }
    return this.native.statementGetSync(check, []) !== undefined;
  }

  /** Our own statement on libsql's thread (it may wait on a lock or the disk). */
  private async ownOffThread(db: NativeDatabase, sql: string): Promise<void> {
    // queryTimeout 0: no limit of ours (the connection's busy time-out bounds the wait for a lock).
    await prepareKept(this.native, db, sql).run([], { queryTimeout: 0 });
  }

  /** Runs our own statement; a connection where it fails is not trusted again. */
  private ownOrDrop(db: NativeDatabase, sql: string): void {
    try {
      own(this.native, db, sql);
    } catch {
      this.drop(db);
    }
  }

  private drop(db: NativeDatabase): void {
    for (const [access, open] of this.connections) if (open === db) this.connections.delete(access);
    close(db);
  }

  /** Between transactions: a connection that holds many of its statements is closed (see `worn`). */
  private renew(): void {
    for (const db of [...this.connections.values()]) if (worn(db)) this.drop(db);
  }
}
