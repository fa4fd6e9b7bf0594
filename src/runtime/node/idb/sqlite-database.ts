/**
 * The Database port (src/idb/database.ts) on an embedded SQLite file, through libsql's native module
 * (`libsql-linux-x64-gnu` 0.6.0-pre.41). The measurements behind it are in docs/decisions/idb-sqlite-backend.md.
 *
 * Decisions:
 * - One session per open transaction, each with its own connections (sqlite-session.ts), whose waiting work (a
 *   statement's first step, BEGIN IMMEDIATE, COMMIT) runs on libsql's threads, so a slow statement blocks neither the
 *   event loop nor another transaction. Idle sessions are kept for the next `begin` (`idleSessions`), at most
 *   `maxConnections` exist; beyond that `begin` waits, as a connection pool does. A call's read in a transaction of
 *   its own runs on a pool of read-only connections (sqlite-readers.ts).
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
 * - A rollback while a statement runs interrupts it: the session calls `interrupt()` on the connection,
 *   which it can because a statement's first step (where a slow aggregate, sort or write spends its time) runs on
 *   libsql's asynchronous path. Once rows flow they are read synchronously and the interrupt is seen within 20 ms,
 *   or, inside one slow step, at the statement's own time-out. The run then fails with Timeout, as on PostgreSQL.
 * - Row cap: rows are counted as they are read; at maxRows + 1 the statement is dropped and QuotaExceeded
 *   raised without rows. With `firstRowOnly` (ReturnScalar) the statement takes one step and is reset: on the event
 *   loop that is libsql's `get`, which makes no row iterator.
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
import { type SessionReply, SqliteSession } from './sqlite-session.ts';
import { QUERY_VERBS, statementShape } from './sqlite-statement-shape.ts';
import { WriteGate } from './write-gate.ts';

export interface SqliteDatabaseOptions {
  /** The database file, created when missing (its folder must exist); relative to the working directory. */
  path: string;
  /** How long `begin('write')` waits while another transaction writes (default 5000 ms). */
  busyTimeoutMs?: number;
  /** How many transactions can be open at once, each on connections of its own (default 10); as many reads more. */
  maxConnections?: number;
  /** How many idle sessions (their connections open) are kept for the next transaction (default: maxConnections). */
  idleSessions?: number;
}

const NATIVE_PACKAGE = 'libsql-linux-x64-gnu';
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** The native module, loaded here so that a platform without it is refused with advice at start. */
function loadNative(): Native {
  try {
    return createRequire(import.meta.url)(NATIVE_PACKAGE) as Native;
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    throw new ConfigError(
      `The embedded SQLite backend needs Linux x64 with glibc (the optional package ${NATIVE_PACKAGE}); it cannot be loaded on ` +
        `${process.platform} ${process.arch} (${reason}). Set DATABASE_URL=postgres://… to use PostgreSQL instead.`,
    );
  }
}

export async function createSqliteDatabase(options: SqliteDatabaseOptions): Promise<Database> {
  const path = resolve(options.path);
  const busyTimeoutMs = Math.max(0, options.busyTimeoutMs ?? 5000);
  const native = loadNative();
  const maxConnections = Math.max(1, options.maxConnections ?? 10);
  const idleSessions = Math.max(0, options.idleSessions ?? maxConnections);
  const all = new Set<SqliteSession>();
  const idle: SqliteSession[] = [];
  const waiting: { resolve: (session: SqliteSession) => void; reject: (error: Error) => void }[] = [];
  let closing: Promise<void> | undefined;
  const writers = new WriteGate();
  const readers = new SqliteReaders(native, path, busyTimeoutMs, maxConnections);

  const spawn = (): SqliteSession => {
    const session = new SqliteSession(native, path, busyTimeoutMs);
    all.add(session);
    return session;
  };
  const discard = (session: SqliteSession): void => {
    all.delete(session);
    void session.end();
    if (closing === undefined && waiting.length > 0 && all.size < maxConnections) waiting.shift()!.resolve(spawn());
  };
  const release = (session: SqliteSession): void => {
    if (closing !== undefined || !session.usable) {
      discard(session);
      return;
    }
    const waiter = waiting.shift();
    if (waiter) waiter.resolve(session);
    else if (idle.length < idleSessions) idle.push(session);
    else discard(session);
  };
  const acquire = (): Promise<SqliteSession> => {
    for (let session = idle.pop(); session !== undefined; session = idle.pop()) {
      if (session.usable) return Promise.resolve(session);
      discard(session);
    }
    if (all.size < maxConnections) return Promise.resolve(spawn());
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  };

  const first = spawn();
  const opened = await first.call({ op: 'init' });
  if (!opened.ok) {
    all.delete(first);
    await first.end();
    throw new Error(`The SQLite database ${path} cannot be opened: ${opened.message}`);
  }
  release(first);

  /** A write in a transaction of its own, behind the write gate. */
  const write = async (request: Statement): Promise<SessionReply> => {
    const leave = await writers.enter(busyTimeoutMs);
    try {
      const session = await acquire().catch((error: Error) => {
        throw new DatabaseFault('SqlError', error.message, true);
      });
      try {
        return await session.call({ op: 'write', ...request });
      } finally {
        release(session);
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
      let reply: SessionReply | undefined;
      // Reads run on the main thread's read-only connections (sqlite-readers.ts). A writer's query runs there first
      // too, beside other readers and without the writer's lock (its reads would otherwise wait for each other at
      // the write gate). Should it write after all, SQLite refuses it there before writing anything
      // (SQLITE_READONLY) and it runs again as a write.
      // A reader's call never comes to the write below: its verb is only needed for a writer's.
      const verb = access === 'write' ? statementShape(sql).verb : undefined;
      if (verb === undefined || QUERY_VERBS.has(verb)) {
        reply = await readers.read(request);
        if (access === 'write' && !reply.ok && reply.code.startsWith('SQLITE_READONLY')) reply = undefined;
      }
      if (reply === undefined) {
        // DDL may change what a read's program does (sqlite-readers.ts keeps verdicts on them).
        const changed = SCHEMA_VERBS.has(verb!) ? readers.schemaChanging() : undefined;
        try {
          reply = await write(request);
        } finally {
          changed?.();
        }
      }
      if (reply.ok) return toResult(reply.result!);
      const cancelled = reply.code === 'LOST' || closing !== undefined ? 'the database was closed' : undefined;
      throw toFault(reply, { busyTimeoutMs, timeoutMs: request.timeoutMs, cancelled });
    },
    async begin(access) {
      if (closing !== undefined) throw new DatabaseFault('SqlError', CLOSED, true);
      const leave = access === 'write' ? await writers.enter(busyTimeoutMs) : () => {};
      const session = await acquire().catch((error: Error) => {
        leave();
        throw new DatabaseFault('SqlError', error.message, true);
      });
      const end = (ended: SqliteSession): void => {
        release(ended);
        leave();
      };
      const reply = await session.call({ op: 'begin', access });
      if (!reply.ok) {
        end(session);
        throw toFault(reply, { busyTimeoutMs });
      }
      return new SqliteTransaction(session, end, busyTimeoutMs, () => readers.schemaChanging());
    },
    close() {
      closing ??= (async () => {
        for (const waiter of waiting.splice(0)) waiter.reject(new Error(CLOSED));
        writers.refuseAll(new DatabaseFault('SqlError', CLOSED, true));
        idle.length = 0;
        // A session or reader that is running a statement interrupts it and ends once it has stopped.
        await Promise.all([readers.close(), ...[...all].map((session) => session.end())]);
        all.clear();
      })();
      return closing;
    },
  };
}

const CLOSED = 'The database has been closed.';

/** Verbs of statements that change the schema (ATTACH, DETACH and PRAGMA are refused to client SQL). */
const SCHEMA_VERBS = new Set(['CREATE', 'DROP', 'ALTER', 'ANALYZE', 'REINDEX', 'VACUUM']);

/** A statement as a connection takes it: values bound as SQLite binds them, limits as whole numbers. */
function statement(sql: string, values: readonly SqlValue[], limits: StatementLimits): Statement {
  return {
    sql,
    values: values.map(bindValue),
    timeoutMs: Math.max(1, Math.ceil(limits.timeoutMs)),
    maxRows: Math.max(0, Math.floor(limits.maxRows)),
    ...(limits.firstRowOnly ? { firstRowOnly: true } : {}),
  };
}

const ABORTED = 'The transaction was aborted by an earlier error; only a rollback is left.';
const ABORTED_COMMIT = 'The transaction was aborted by an earlier error and has been rolled back.';
const ENDED = 'The transaction has already ended.';

class SqliteTransaction implements DatabaseTransaction {
  private state: 'open' | 'aborted' | 'ended' = 'open';
  /** Serializes calls: one request at a time goes to the session. */
  private queue: Promise<unknown> = Promise.resolve();
  private running = false;
  private released = false;
  /** Whether it ran DDL: its COMMIT is then announced to the readers (schemaChanging). */
  private changesSchema = false;

  constructor(
    private readonly session: SqliteSession,
    private readonly release: (session: SqliteSession) => void,
    private readonly busyTimeoutMs: number,
    private readonly schemaChanging: () => () => void,
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
      // A failed COMMIT is rolled back by the session.
      const changed = this.changesSchema ? this.schemaChanging() : undefined;
      const reply = await this.session.call({ op: 'commit' }).finally(() => changed?.());
      this.release(this.session);
      if (!reply.ok) throw toFault(reply, { busyTimeoutMs: this.busyTimeoutMs });
    });
  }

  async rollback(): Promise<void> {
    if (this.state === 'ended') return;
    this.state = 'ended';
    if (this.running) this.session.interrupt();
    await this.queue;
    await this.finish();
  }

  /** ROLLBACK and release, once. Not through the queue (commit calls it from inside). */
  private async finish(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.state = 'ended';
    await this.session.call({ op: 'rollback' });
    this.release(this.session);
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
    if (SCHEMA_VERBS.has(statementShape(sql).verb)) this.changesSchema = true;
    this.running = true;
    const reply = await this.session.call({ op: 'run', ...request });
    this.running = false;
    if (reply.ok) return toResult(reply.result!);
    const rolledBack = this.abort();
    const cancelled = rolledBack
      ? 'its transaction was rolled back'
      : this.session.usable
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
  reply: Extract<SessionReply, { ok: false }>,
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
