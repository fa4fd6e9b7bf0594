/**
 * One SQLite connection through libsql's native module, and one statement run on it: what the sessions
 * (sqlite-session.ts: transactions and writes) and the readers (sqlite-readers.ts: a call's read on its own) both
 * do, so it has one home here.
 *
 * - A connection has foreign keys on and an authorizer that denies client SQL ATTACH, DETACH and PRAGMA (pragma
 *   functions included); client transaction control and SAVEPOINT are refused by their verb, so our own BEGIN,
 *   COMMIT and ROLLBACK need no lifting of the authorizer (see CLIENT_SQL).
 * - A statement starts on libsql's asynchronous path (its first step runs on a libsql thread), so the event loop
 *   keeps serving other calls meanwhile and a rollback can call `interrupt()` on the connection. The remaining rows are read
 *   synchronously (an asynchronous hop per row costs ~0.1 ms), yielding to the event loop every 20 ms; a single slow
 *   step there ends by the statement's `queryTimeout`.
 * - Results are one flat array of cells (structured clone of nested row arrays costs the main thread ~5x more),
 *   integers as numbers when safe, blobs copied into buffers of their own.
 */
import { pathToFileURL } from 'node:url';
import type { ResultColumn } from '../../../idb/database.ts';
import type { DataCell } from '../../../idb/datatable.ts';
import { statementShape } from './sqlite-statement-shape.ts';

/** What a statement binds: the port's values, with booleans already 1/0. */
export type BindValue = null | number | bigint | string | Uint8Array;

/** A statement as the connection runs it: values bound as SQLite binds them, limits as whole numbers. */
export interface Statement {
  sql: string;
  values: BindValue[];
  timeoutMs: number;
  maxRows: number;
}

/** A statement's result: `cells` row after row, `columns.length` cells each. */
export interface WireResult {
  columns: ResultColumn[];
  cells: DataCell[];
  rowsAffected: number;
}

/** A failed statement: `code` is SQLite's (`SQLITE_READONLY`, …) or QUOTA and MULTIPLE, raised here. */
export interface StatementFailure {
  code: string;
  message: string;
}

/** What a session or the readers answer: never a rejection, a failure with SQLite's code (LOST once closed). */
export type Outcome<T> = { ok: true; result: T } | ({ ok: false } & StatementFailure);

export interface NativeDatabase {
  inTransaction(): boolean;
  authorizer(config: unknown): void;
  interrupt(): void;
  close(): void;
}
interface NativeRecord {
  readonly value: unknown;
  readonly done: boolean;
}
interface NativeRows {
  next(): Promise<NativeRecord>;
  close(): void;
}
interface NativeStatement {
  columns(): { name: string; type: string | null }[];
  raw(toggle?: boolean): NativeStatement;
  safeIntegers(toggle?: boolean): NativeStatement;
  run(params: unknown[], options: { queryTimeout: number }): Promise<{ changes: number }>;
  iterate(params: unknown[], options: { queryTimeout: number }): Promise<NativeRows>;
}
export interface Native {
  Database: new (path: string, options: { timeout: number }) => NativeDatabase;
  databasePrepareSync(db: NativeDatabase, sql: string): NativeStatement;
  databaseExecSync(db: NativeDatabase, sql: string): void;
  statementIterateSync(stmt: NativeStatement, params: unknown[]): NativeRows;
  iteratorNextSync(rows: NativeRows): NativeRecord;
}

// SQLite's authorizer action codes (sqlite3.h) and libsql's DENY / ALLOW policies. Transaction control
// (TRANSACTION, SAVEPOINT) is refused by its verb instead (TRANSACTION_VERBS): our own BEGIN, COMMIT and ROLLBACK
// then pass the authorizer as it is. Lifting it for them cost more than the statement: setting an authorizer expires
// every prepared statement of the connection, and those stay alive until garbage collection (measured: ~1 ms per
// lift with 20 000 of them, ~3 µs with none).
const ATTACH = 24;
const DETACH = 25;
const PRAGMA = 19;
const CLIENT_SQL = {
  rules: [ATTACH, DETACH, PRAGMA].map((action) => ({ action, policy: 1 })),
  defaultPolicy: 0,
};
/** The verbs of SQLite's transaction control: statements of their own, never inside another (or a trigger). */
const TRANSACTION_VERBS = new Set(['BEGIN', 'COMMIT', 'END', 'ROLLBACK', 'SAVEPOINT', 'RELEASE']);

const DML = new Set(['INSERT', 'UPDATE', 'DELETE', 'REPLACE']);
const YIELD_EVERY_MS = 20;

export class StatementError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The writer's connection (`write`: it creates the file) or a reader's (`read`: `mode=ro`, SQLite refuses writes). */
export function openConnection(
  native: Native,
  path: string,
  access: 'read' | 'write',
  busyTimeoutMs: number,
): NativeDatabase {
  const db = new native.Database(access === 'write' ? path : `${pathToFileURL(path).href}?mode=ro`, {
    timeout: busyTimeoutMs,
  });
  native.databaseExecSync(db, 'PRAGMA foreign_keys = ON');
  db.authorizer(CLIENT_SQL);
  return db;
}

/** Our own transaction control (BEGIN, COMMIT, ROLLBACK: the authorizer lets them by) or query. */
export function own(native: Native, db: NativeDatabase, sql: string): void {
  native.databaseExecSync(db, sql);
}

/** Our own query's rows, read to the end so that no statement stays in progress (it would block COMMIT). */
export function ownRows(native: Native, db: NativeDatabase, sql: string): unknown[][] {
  const rows = native.statementIterateSync(native.databasePrepareSync(db, sql).raw(true), []);
  const out: unknown[][] = [];
  for (let r = native.iteratorNextSync(rows); !r.done; r = native.iteratorNextSync(rows))
    out.push(r.value as unknown[]);
  return out;
}

/** Our own PRAGMA, with the authorizer lifted for it (once per connection: see CLIENT_SQL). */
export function ownPragma(native: Native, db: NativeDatabase, sql: string): unknown[][] {
  db.authorizer(null);
  try {
    return ownRows(native, db, sql);
  } finally {
    db.authorizer(CLIENT_SQL);
  }
}

/** Set while a statement runs; `cancel` (from a rollback or close) interrupts it. */
export class RunningStatement {
  cancelled = false;
  constructor(readonly db: NativeDatabase) {}
  cancel(): void {
    this.cancelled = true;
    this.db.interrupt();
  }
}

/**
 * Runs client SQL on `db` inside the transaction the caller opened. `started` is told of the running statement (so
 * that it can be cancelled) and `blobs` collects the buffers of blob cells (to transfer them to another thread).
 */
export async function runStatement(
  native: Native,
  db: NativeDatabase,
  request: Statement,
  started: (running: RunningStatement | undefined) => void = () => {},
  blobs: ArrayBuffer[] = [],
): Promise<WireResult> {
  const shape = statementShape(request.sql);
  if (shape.trailing) {
    throw new StatementError(
      'MULTIPLE',
      'The SQL holds more than one statement; nothing was run. Send one statement per call.',
    );
  }
  if (!shape.started) return { columns: [], cells: [], rowsAffected: -1 };
  if (TRANSACTION_VERBS.has(shape.verb)) throw new StatementError('SQLITE_AUTH', 'not authorized');
  const stmt = native.databasePrepareSync(db, request.sql);
  const columns = stmt.columns().map((c) => ({ name: c.name, declaredType: c.type ?? null }));
  const params = request.values.map((v) =>
    v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v,
  );
  const options = { queryTimeout: request.timeoutMs };
  const state = new RunningStatement(db);
  started(state);
  try {
    if (columns.length === 0) {
      const { changes } = await stmt.run(params, options);
      return { columns, cells: [], rowsAffected: DML.has(shape.verb) ? changes : -1 };
    }
    const cells: DataCell[] = [];
    const rows = await stmt.raw(true).safeIntegers(true).iterate(params, options);
    let count = 0;
    try {
      let yielded = performance.now();
      for (let record = await rows.next(); !record.done; record = native.iteratorNextSync(rows)) {
        if (++count > request.maxRows)
          throw new StatementError('QUOTA', `The result has more than ${request.maxRows} rows.`);
        for (const value of record.value as unknown[]) cells.push(toCell(value, blobs));
        if (performance.now() - yielded > YIELD_EVERY_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          if (state.cancelled) throw new StatementError('SQLITE_INTERRUPT', 'interrupted');
          yielded = performance.now();
        }
      }
    } finally {
      rows.close();
    }
    // RETURNING gives one row per row written, which is what changes() counts.
    return { columns, cells, rowsAffected: DML.has(shape.verb) ? count : -1 };
  } finally {
    started(undefined);
  }
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function toCell(value: unknown, blobs: ArrayBuffer[]): DataCell {
  if (typeof value === 'bigint') return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value;
  if (value instanceof Uint8Array) {
    // A copy owns its whole buffer: cloning a view would copy (and expose) all of the buffer under it.
    const copy = new Uint8Array(value);
    blobs.push(copy.buffer);
    return copy;
  }
  return value as DataCell;
}

/** A thrown error as SQLite's code and message. */
export function statementFailure(error: unknown): StatementFailure {
  if (error instanceof StatementError) return { code: error.code, message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  // libsql's native errors carry `{"libsqlError":true,"code":…,"message":…}` as their message.
  try {
    const parsed = JSON.parse(message) as { libsqlError?: boolean; code?: unknown; message?: unknown };
    if (parsed?.libsqlError) return { code: String(parsed.code), message: String(parsed.message) };
  } catch {
    // a plain message (binding a value libsql refuses, say)
  }
  return { code: 'SQLITE_ERROR', message };
}
