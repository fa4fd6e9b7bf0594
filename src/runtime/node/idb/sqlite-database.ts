/**
 * The Database port (src/idb/database.ts) on an embedded SQLite file, through libsql's native module
 * (`libsql-linux-x64-gnu` 0.6.0-pre.41) in worker threads. The measurements behind it are in
 * docs/decisions/idb-sqlite-backend.md.
 *
 * Decisions:
 * - One worker thread per open transaction, each with its own connections (sqlite-worker.ts), so a slow statement
 *   blocks neither the event loop nor another transaction. Idle workers are kept for the next `begin` (`idleWorkers`),
 *   at most `maxConnections` exist; beyond that `begin` waits, as a connection pool does. A worker is terminated only
 *   when idle: terminating one during a statement leaks the connection and its write lock (measured).
 * - The file is switched to WAL once (readers and the writer do not block each other, and COMMIT does not fail
 *   because a reader is open). `begin('write')` is `BEGIN IMMEDIATE`: a second writer waits up to `busyTimeoutMs` for
 *   the first to end (in this process's WriteGate, then in SQLite's busy handler for other processes), then gets
 *   Timeout. `begin('read')` runs on a `mode=ro` connection inside BEGIN … ROLLBACK, so
 *   SQLite refuses a write itself (SQLITE_READONLY: AccessDenied).
 * - Client SQL cannot leave its transaction or the file: an authorizer denies ATTACH, DETACH, PRAGMA (also the
 *   `pragma_…` table functions), BEGIN/COMMIT/ROLLBACK and SAVEPOINT, as AccessDenied (a privilege the client lacks,
 *   as PostgreSQL's 42501). Text after the first statement (other than semicolons and comments) is SqlError and
 *   nothing runs: libsql would silently run the first statement only. Foreign keys are enforced, as on PostgreSQL.
 * - Time-out: every statement runs with libsql's `queryTimeout` = StatementLimits.timeoutMs (SQLITE_INTERRUPT:
 *   Timeout). An interrupted write ends SQLite's transaction; the object is aborted anyway (every fault aborts it).
 * - A rollback while a statement runs interrupts it: the worker calls `interrupt()` on the connection's own thread,
 *   which it can because a statement's first step (where a slow aggregate, sort or write spends its time) runs on
 *   libsql's asynchronous path. Once rows flow they are read synchronously and the interrupt is seen within 20 ms,
 *   or, inside one slow step, at the statement's own time-out. The run then fails with Timeout, as on PostgreSQL.
 * - Row cap: rows are counted as the worker reads them; at maxRows + 1 the statement is dropped and QuotaExceeded
 *   raised without rows.
 * - rowsAffected: SQLite's change count for INSERT, UPDATE, DELETE and REPLACE (also after `WITH …`), the number of
 *   rows returned when such a statement has RETURNING (one per row written), else -1. The verb is read from the text.
 * - Values: INTEGER a number when it is a safe integer, else a bigint; REAL a number (±Infinity included); TEXT a
 *   string; BLOB a Uint8Array; NULL null. declaredType is the column's declared type as written in CREATE TABLE
 *   (`INTEGER`, `varchar(10)`, `datetime`), null for expressions and untyped columns.
 * - Other faults: SQLITE_BUSY (the busy time-out ran out) is Timeout; SQLITE_AUTH and SQLITE_READONLY* are
 *   AccessDenied; everything else is SqlError with SQLite's message.
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ConfigError } from '../../../config.ts';
import {
  DatabaseFault,
  type Database,
  type DatabaseFaultName,
  type DatabaseTransaction,
  type SqlValue,
  type StatementLimits,
  type StatementResult,
} from '../../../idb/database.ts';
import type { DataCell } from '../../../idb/datatable.ts';
import type { BindValue, Native, Statement, WireResult } from './sqlite-connection.ts';
import { SqliteReaders } from './sqlite-readers.ts';
import type { WorkerData, WorkerReply, WorkerRequest } from './sqlite-worker.ts';
import { statementShape } from './sqlite-statement-shape.ts';
import { WriteGate } from './write-gate.ts';

export interface SqliteDatabaseOptions {
  /** The database file, created when missing (its folder must exist); relative to the working directory. */
  path: string;
  /** How long `begin('write')` waits while another transaction writes (default 5000 ms). */
  busyTimeoutMs?: number;
  /** How many transactions can be open at once, one worker thread each (default 10). */
  maxConnections?: number;
  /**
   * How many idle workers are kept for the next transaction (default: maxConnections). Starting a worker costs tens of
   * milliseconds: with fewer kept than the calls that run at once, every burst starts and ends workers (measured:
   * ReturnScalar on 8 channels had a p99 of 106 ms with 2 kept).
   */
  idleWorkers?: number;
}

const NATIVE_PACKAGE = 'libsql-linux-x64-gnu';
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** The native module's path, loaded once here so that a platform without it is refused with advice at start. */
function loadNative(): string {
  try {
    const require = createRequire(import.meta.url);
    const path = require.resolve(NATIVE_PACKAGE);
    require(path);
    return path;
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    throw new ConfigError(
      `The embedded SQLite backend needs Linux x64 with glibc (the optional package ${NATIVE_PACKAGE}); it cannot be loaded on ` +
        `${process.platform} ${process.arch} (${reason}). Set DATABASE_URL=postgres://… to use PostgreSQL instead.`,
    );
  }
}

export async function createSqliteDatabase(options: SqliteDatabaseOptions): Promise<Database> {
  const data: WorkerData = {
    path: resolve(options.path),
    busyTimeoutMs: Math.max(0, options.busyTimeoutMs ?? 5000),
    native: loadNative(),
  };
  const maxConnections = Math.max(1, options.maxConnections ?? 10);
  const idleWorkers = Math.max(0, options.idleWorkers ?? maxConnections);
  const all = new Set<SqliteWorker>();
  const idle: SqliteWorker[] = [];
  const waiting: { resolve: (worker: SqliteWorker) => void; reject: (error: Error) => void }[] = [];
  let closing: Promise<void> | undefined;
  const writers = new WriteGate();
  const readers = new SqliteReaders(
    createRequire(import.meta.url)(data.native) as Native,
    data.path,
    data.busyTimeoutMs,
    maxConnections,
  );

  const spawn = (): SqliteWorker => {
    const worker = new SqliteWorker(data);
    all.add(worker);
    return worker;
  };
  const discard = (worker: SqliteWorker): void => {
    all.delete(worker);
    void worker.end();
    if (closing === undefined && waiting.length > 0 && all.size < maxConnections) waiting.shift()!.resolve(spawn());
  };
  const release = (worker: SqliteWorker): void => {
    if (closing !== undefined || !worker.usable) {
      discard(worker);
      return;
    }
    const waiter = waiting.shift();
    if (waiter) waiter.resolve(worker);
    else if (idle.length < idleWorkers) idle.push(worker);
    else discard(worker);
  };
  const acquire = (): Promise<SqliteWorker> => {
    for (let worker = idle.pop(); worker !== undefined; worker = idle.pop()) {
      if (worker.usable) return Promise.resolve(worker);
      discard(worker);
    }
    if (all.size < maxConnections) return Promise.resolve(spawn());
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  };

  const first = spawn();
  const opened = await first.call({ op: 'init' });
  if (!opened.ok) {
    all.delete(first);
    await first.end();
    throw new Error(`The SQLite database ${data.path} cannot be opened: ${opened.message}`);
  }
  release(first);

  /** A statement in a transaction of its own, on one worker, in one message (writes behind the write gate). */
  const alone = async (access: 'read' | 'write', request: Statement): Promise<WorkerReply> => {
    const leave = access === 'write' ? await writers.enter(data.busyTimeoutMs) : () => {};
    try {
      const worker = await acquire().catch((error: Error) => {
        throw new DatabaseFault('SqlError', error.message, true);
      });
      try {
        return await worker.call({ op: 'alone', access, ...request });
      } finally {
        release(worker);
      }
    } finally {
      leave();
    }
  };

  return {
    dialect: 'sqlite',
    async runAlone(access, sql, values, limits) {
      if (closing !== undefined) throw new DatabaseFault('SqlError', CLOSED, true);
      const request = statement(sql, values, limits);
      let reply: WorkerReply | undefined;
      // Reads run on the main thread's read-only connections (sqlite-readers.ts). A writer's query runs there first
      // too, beside other readers and without the writer's lock (its reads would otherwise wait for each other at
      // the write gate). Should it write after all, SQLite refuses it there before writing anything
      // (SQLITE_READONLY) and it runs again as a write, on a worker.
      if (access === 'read' || READS.has(statementShape(sql).verb)) {
        reply = await readers.read(request);
        if (access === 'write' && !reply.ok && reply.code.startsWith('SQLITE_READONLY')) reply = undefined;
      }
      reply ??= await alone(access, request);
      if (reply.ok) return toResult(reply.result!);
      const cancelled = reply.code === 'LOST' || closing !== undefined ? 'the database was closed' : undefined;
      throw toFault(reply, { busyTimeoutMs: data.busyTimeoutMs, timeoutMs: request.timeoutMs, cancelled });
    },
    async begin(access) {
      if (closing !== undefined) throw new DatabaseFault('SqlError', CLOSED, true);
      const leave = access === 'write' ? await writers.enter(data.busyTimeoutMs) : () => {};
      const worker = await acquire().catch((error: Error) => {
        leave();
        throw new DatabaseFault('SqlError', error.message, true);
      });
      const end = (ended: SqliteWorker): void => {
        release(ended);
        leave();
      };
      const reply = await worker.call({ op: 'begin', access });
      if (!reply.ok) {
        end(worker);
        throw toFault(reply, { busyTimeoutMs: data.busyTimeoutMs });
      }
      return new SqliteTransaction(worker, end, data.busyTimeoutMs);
    },
    close() {
      closing ??= (async () => {
        for (const waiter of waiting.splice(0)) waiter.reject(new Error(CLOSED));
        writers.refuseAll(new DatabaseFault('SqlError', CLOSED, true));
        idle.length = 0;
        // A worker or reader that is running a statement interrupts it and ends once it has stopped.
        await Promise.all([readers.close(), ...[...all].map((worker) => worker.end())]);
        all.clear();
      })();
      return closing;
    },
  };
}

const CLOSED = 'The database has been closed.';

/** Verbs of statements that usually only read (the verb after `WITH …` is the statement's own). */
const READS = new Set(['SELECT', 'VALUES']);

/** A statement as the worker takes it: values bound as SQLite binds them, limits as whole numbers. */
function statement(sql: string, values: readonly SqlValue[], limits: StatementLimits): Statement {
  return {
    sql,
    values: values.map(bindValue),
    timeoutMs: Math.max(1, Math.ceil(limits.timeoutMs)),
    maxRows: Math.max(0, Math.floor(limits.maxRows)),
  };
}

/** One worker thread, serving one request at a time: the pool lends it to one transaction, which serializes its calls. */
class SqliteWorker {
  private readonly thread: Worker;
  private pending: { settle: (reply: WorkerReply) => void; done: Promise<unknown> } | undefined;
  /** Why the thread takes no more requests. */
  private gone: string | undefined;
  private ending: Promise<void> | undefined;

  constructor(data: WorkerData) {
    this.thread = new Worker(new URL('./sqlite-worker.mjs', import.meta.url), { workerData: data });
    // Referenced only while a request is out: an idle pool does not keep the process alive, a pending statement does.
    this.thread.unref();
    this.thread.on('message', (reply: WorkerReply) => this.settle(reply));
    this.thread.on('error', (error) => this.lose(`The SQLite worker failed: ${error.message}`));
    this.thread.on('exit', () => this.lose(this.ending ? CLOSED : 'The SQLite worker stopped.'));
  }

  get usable(): boolean {
    return this.gone === undefined && this.ending === undefined;
  }

  /** Never rejects: a lost or closed worker answers as a failed request. */
  call(request: Exclude<WorkerRequest, { op: 'interrupt' }>): Promise<WorkerReply> {
    if (!this.usable) return Promise.resolve({ ok: false, code: 'LOST', message: this.gone ?? CLOSED });
    return this.send(request);
  }

  /** Stops the running statement, if there is one; its call then answers SQLITE_INTERRUPT. */
  interrupt(): void {
    if (this.pending !== undefined && this.gone === undefined)
      this.thread.postMessage({ op: 'interrupt' } satisfies WorkerRequest);
  }

  /** Rolls back, closes the connections and ends the thread, once whatever runs has stopped. */
  end(): Promise<void> {
    this.ending ??= (async () => {
      this.interrupt();
      await this.pending?.done;
      if (this.gone === undefined) await this.send({ op: 'close' });
      this.gone ??= CLOSED;
      await this.thread.terminate();
    })();
    return this.ending;
  }

  private send(request: WorkerRequest): Promise<WorkerReply> {
    let settle!: (reply: WorkerReply) => void;
    const reply = new Promise<WorkerReply>((resolve) => (settle = resolve));
    this.pending = { settle, done: reply };
    this.thread.ref();
    this.thread.postMessage(request);
    return reply;
  }

  private settle(reply: WorkerReply): void {
    const pending = this.pending;
    this.pending = undefined;
    this.thread.unref();
    pending?.settle(reply);
  }

  private lose(reason: string): void {
    this.gone ??= reason;
    this.settle({ ok: false, code: 'LOST', message: this.gone });
  }
}

const ABORTED = 'The transaction was aborted by an earlier error; only a rollback is left.';
const ABORTED_COMMIT = 'The transaction was aborted by an earlier error and has been rolled back.';
const ENDED = 'The transaction has already ended.';

class SqliteTransaction implements DatabaseTransaction {
  private state: 'open' | 'aborted' | 'ended' = 'open';
  /** Serializes calls: one request at a time goes to the worker. */
  private queue: Promise<unknown> = Promise.resolve();
  private running = false;
  private released = false;

  constructor(
    private readonly worker: SqliteWorker,
    private readonly release: (worker: SqliteWorker) => void,
    private readonly busyTimeoutMs: number,
  ) {}

  run(sql: string, values: readonly SqlValue[], limits: StatementLimits): Promise<StatementResult> {
    return this.serialize(() => this.runNow(sql, values, limits));
  }

  commit(): Promise<void> {
    return this.serialize(async () => {
      if (this.state !== 'open') {
        const refused = this.refusal(ABORTED_COMMIT);
        await this.finish();
        throw refused;
      }
      this.state = 'ended';
      this.released = true;
      // A failed COMMIT is rolled back in the worker.
      const reply = await this.worker.call({ op: 'commit' });
      this.release(this.worker);
      if (!reply.ok) throw toFault(reply, { busyTimeoutMs: this.busyTimeoutMs });
    });
  }

  async rollback(): Promise<void> {
    if (this.state === 'ended') return;
    this.state = 'ended';
    if (this.running) this.worker.interrupt();
    await this.queue;
    await this.finish();
  }

  /** ROLLBACK and release, once. Not through the queue (commit calls it from inside). */
  private async finish(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.state = 'ended';
    await this.worker.call({ op: 'rollback' });
    this.release(this.worker);
  }

  private serialize<T>(task: () => Promise<T>): Promise<T> {
    const next = this.queue.then(task, task);
    this.queue = next.catch(() => {});
    return next;
  }

  private async runNow(sql: string, values: readonly SqlValue[], limits: StatementLimits): Promise<StatementResult> {
    if (this.state !== 'open') throw this.refusal(ABORTED);
    let request: Statement;
    try {
      request = statement(sql, values, limits);
    } catch (error) {
      this.abort();
      throw error;
    }
    const { timeoutMs } = request;
    this.running = true;
    const reply = await this.worker.call({ op: 'run', ...request });
    this.running = false;
    if (reply.ok) return toResult(reply.result!);
    const rolledBack = this.abort();
    const cancelled = rolledBack
      ? 'its transaction was rolled back'
      : this.worker.usable
        ? undefined
        : 'the database was closed';
    throw toFault(reply, { busyTimeoutMs: this.busyTimeoutMs, timeoutMs, cancelled });
  }

  /** What a call gets once the transaction is no longer open. */
  private refusal(whenAborted: string): DatabaseFault {
    return new DatabaseFault('SqlError', this.state === 'ended' ? ENDED : whenAborted, true);
  }

  /** Marks the transaction aborted; true when a rollback has ended it meanwhile (and interrupted the statement). */
  private abort(): boolean {
    if (this.state === 'ended') return true;
    this.state = 'aborted';
    return false;
  }
}

/** A value as SQLite binds it (see SqlValue in database.ts). */
function bindValue(value: SqlValue, index: number): BindValue {
  if (value === null) return null;
  switch (value.type) {
    case 'boolean':
      return value.value ? 1 : 0;
    case 'long':
      if (value.value >= INT64_MIN && value.value <= INT64_MAX) return value.value;
      throw new DatabaseFault(
        'SqlError',
        `Parameter ?${index + 1} (${value.value}) does not fit a 64-bit integer.`,
        true,
      );
    default:
      return value.value;
  }
}

function toResult({ columns, cells, rowsAffected }: WireResult): StatementResult {
  const rows: DataCell[][] = [];
  const width = columns.length;
  if (width > 0) for (let at = 0; at < cells.length; at += width) rows.push(cells.slice(at, at + width));
  return { columns, rows, rowsAffected };
}

const NOT_AUTHORIZED =
  'Not authorized: client SQL cannot use ATTACH, DETACH, PRAGMA, BEGIN, COMMIT, ROLLBACK or SAVEPOINT.';

function toFault(
  reply: Extract<WorkerReply, { ok: false }>,
  context: { busyTimeoutMs: number; timeoutMs?: number; cancelled?: string },
): DatabaseFault {
  const { code } = reply;
  let fault: DatabaseFaultName = 'SqlError';
  let message = reply.message;
  if (code === 'SQLITE_INTERRUPT') {
    fault = 'Timeout';
    message = context.cancelled
      ? `The statement was interrupted: ${context.cancelled}.`
      : `The statement ran longer than ${context.timeoutMs} ms and was interrupted.`;
  } else if (code === 'QUOTA') {
    fault = 'QuotaExceeded';
  } else if (code === 'SQLITE_AUTH') {
    fault = 'AccessDenied';
    message = NOT_AUTHORIZED;
  } else if (code.startsWith('SQLITE_READONLY')) {
    fault = 'AccessDenied';
  } else if (code.startsWith('SQLITE_BUSY')) {
    fault = 'Timeout';
    message = `${message} (waited ${context.busyTimeoutMs} ms for another transaction's lock)`;
  }
  return new DatabaseFault(fault, message, true);
}
