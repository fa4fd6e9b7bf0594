/**
 * Worker thread body of the SQLite backend (sqlite-database.ts): the connections of one worker, serving one
 * transaction at a time, with libsql's native functions (the `libsql` JS wrapper is not a dependency).
 *
 * - Two connections, opened when first needed: the writer's (`BEGIN IMMEDIATE`) and a `mode=ro` one for readers, so
 *   SQLite itself refuses a reader's write. Both have foreign keys on and an authorizer that denies client SQL
 *   ATTACH, DETACH, PRAGMA (pragma functions included), transaction control and SAVEPOINT; our own BEGIN, COMMIT and
 *   ROLLBACK run with it lifted for that one statement.
 * - A statement starts on libsql's asynchronous path (its first step runs on a libsql thread), so this thread keeps
 *   listening and an `interrupt` request can call `interrupt()` here, on the connection's own thread. The remaining
 *   rows are read synchronously (an asynchronous hop per row costs ~0.1 ms), yielding to messages every 20 ms; a
 *   single slow step there ends by the statement's `queryTimeout`.
 * - Results leave as one flat array of cells (structured clone of nested row arrays costs the main thread ~5x more),
 *   integers as numbers when safe, blobs copied into buffers of their own and transferred.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import type { ResultColumn } from '../../../idb/database.ts';
import type { DataCell } from '../../../idb/datatable.ts';
import { statementShape } from './sqlite-statement-shape.ts';

export interface WorkerData {
  /** Absolute path of the database file. */
  path: string;
  busyTimeoutMs: number;
  /** Absolute path of the native module, as resolved (and loaded) by the main thread. */
  native: string;
}

/** What run() binds: the port's values, with booleans already 1/0. */
export type BindValue = null | number | bigint | string | Uint8Array;

export type WorkerRequest =
  | { op: 'init' }
  | { op: 'begin'; access: 'read' | 'write' }
  | { op: 'run'; sql: string; values: BindValue[]; timeoutMs: number; maxRows: number }
  /** begin, run and commit (write) or roll back (read) in one message: a call's statement in a transaction of its own */
  | { op: 'alone'; access: 'read' | 'write'; sql: string; values: BindValue[]; timeoutMs: number; maxRows: number }
  | { op: 'commit' }
  | { op: 'rollback' }
  | { op: 'close' }
  /** Answered by nobody: stops the running statement, if any. */
  | { op: 'interrupt' };

/** A statement's result: `cells` row after row, `columns.length` cells each. */
export interface WireResult {
  columns: ResultColumn[];
  cells: DataCell[];
  rowsAffected: number;
}

/** `code` is SQLite's (`SQLITE_READONLY`, …) or QUOTA and MULTIPLE, raised here. */
export type WorkerReply = { ok: true; result?: WireResult } | { ok: false; code: string; message: string };

interface NativeDatabase {
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
interface Native {
  Database: new (path: string, options: { timeout: number }) => NativeDatabase;
  databasePrepareSync(db: NativeDatabase, sql: string): NativeStatement;
  databaseExecSync(db: NativeDatabase, sql: string): void;
  statementIterateSync(stmt: NativeStatement, params: unknown[]): NativeRows;
  iteratorNextSync(rows: NativeRows): NativeRecord;
}

// SQLite's authorizer action codes (sqlite3.h) and libsql's DENY / ALLOW policies.
const ATTACH = 24;
const DETACH = 25;
const PRAGMA = 19;
const TRANSACTION = 22;
const SAVEPOINT = 32;
const CLIENT_SQL = {
  rules: [ATTACH, DETACH, PRAGMA, TRANSACTION, SAVEPOINT].map((action) => ({ action, policy: 1 })),
  defaultPolicy: 0,
};

const DML = new Set(['INSERT', 'UPDATE', 'DELETE', 'REPLACE']);
const YIELD_EVERY_MS = 20;

class WorkerError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const { path, busyTimeoutMs, native: nativePath } = workerData as WorkerData;
const native = createRequire(import.meta.url)(nativePath) as Native;
const connections = new Map<'read' | 'write', NativeDatabase>();
/** The connection of the open transaction. */
let current: NativeDatabase | undefined;
/** The statement being run: an interrupt request stops it. */
let running: { db: NativeDatabase; cancelled: boolean } | undefined;

function connection(access: 'read' | 'write'): NativeDatabase {
  let db = connections.get(access);
  if (db === undefined) {
    db = new native.Database(access === 'write' ? path : `${pathToFileURL(path).href}?mode=ro`, {
      timeout: busyTimeoutMs,
    });
    native.databaseExecSync(db, 'PRAGMA foreign_keys = ON');
    db.authorizer(CLIENT_SQL);
    connections.set(access, db);
  }
  return db;
}

/** Our own statement, past the authorizer. */
function own(db: NativeDatabase, sql: string): void {
  db.authorizer(null);
  try {
    native.databaseExecSync(db, sql);
  } finally {
    db.authorizer(CLIENT_SQL);
  }
}

/** Our own query's rows, read to the end so that no statement stays in progress (it would block COMMIT). */
function ownRows(db: NativeDatabase, sql: string): unknown[][] {
  db.authorizer(null);
  try {
    const rows = native.statementIterateSync(native.databasePrepareSync(db, sql).raw(true), []);
    const out: unknown[][] = [];
    for (let r = native.iteratorNextSync(rows); !r.done; r = native.iteratorNextSync(rows))
      out.push(r.value as unknown[]);
    return out;
  } finally {
    db.authorizer(CLIENT_SQL);
  }
}

function init(): void {
  // The writer's connection creates the file; WAL is a property of the file, kept from then on.
  const mode = ownRows(connection('write'), 'PRAGMA journal_mode = WAL')[0]?.[0];
  if (String(mode).toLowerCase() !== 'wal')
    throw new WorkerError(
      'SQLITE_ERROR',
      `the database cannot use WAL journal mode (it stays in ${String(mode)} mode)`,
    );
}

function begin(access: 'read' | 'write'): void {
  const db = connection(access);
  own(db, access === 'write' ? 'BEGIN IMMEDIATE' : 'BEGIN');
  current = db;
}

function commit(): void {
  const db = current;
  current = undefined;
  if (db === undefined) throw new WorkerError('SQLITE_ERROR', 'no transaction is open');
  try {
    own(db, 'COMMIT');
  } catch (error) {
    // A failed COMMIT (a deferred foreign key, say) leaves the transaction open.
    if (db.inTransaction()) ownOrDrop(db, 'ROLLBACK');
    throw error;
  }
  // TEMP objects committed here would outlive the request on this reused connection: start the next one afresh.
  try {
    if (ownRows(db, 'SELECT 1 FROM temp.sqlite_schema LIMIT 1').length > 0) drop(db);
  } catch {
    drop(db);
  }
}

function rollback(): void {
  const db = current;
  current = undefined;
  // An interrupted write (or a full disk) has already ended the transaction.
  if (db?.inTransaction()) ownOrDrop(db, 'ROLLBACK');
}

/** Runs our own statement; a connection where it fails is not trusted again. */
function ownOrDrop(db: NativeDatabase, sql: string): void {
  try {
    own(db, sql);
  } catch {
    drop(db);
  }
}

function drop(db: NativeDatabase): void {
  for (const [access, open] of connections) if (open === db) connections.delete(access);
  try {
    db.close();
  } catch {
    // closing is all that is left to do with it
  }
}

function close(): void {
  rollback();
  for (const db of [...connections.values()]) drop(db);
}

/** A statement in a transaction of its own: one message instead of three (begin, run, commit or rollback). */
async function alone(
  request: Extract<WorkerRequest, { op: 'alone' }>,
): Promise<{ result: WireResult; transfer: ArrayBuffer[] }> {
  begin(request.access);
  let outcome: { result: WireResult; transfer: ArrayBuffer[] };
  try {
    outcome = await run(request);
  } catch (error) {
    rollback();
    throw error;
  }
  if (request.access === 'write') commit();
  else rollback();
  return outcome;
}

async function run(
  request: Pick<Extract<WorkerRequest, { op: 'run' }>, 'sql' | 'values' | 'timeoutMs' | 'maxRows'>,
): Promise<{ result: WireResult; transfer: ArrayBuffer[] }> {
  const db = current;
  if (db === undefined) throw new WorkerError('SQLITE_ERROR', 'no transaction is open');
  const shape = statementShape(request.sql);
  if (shape.trailing) {
    throw new WorkerError(
      'MULTIPLE',
      'The SQL holds more than one statement; nothing was run. Send one statement per call.',
    );
  }
  if (!shape.started) return { result: { columns: [], cells: [], rowsAffected: -1 }, transfer: [] };
  const stmt = native.databasePrepareSync(db, request.sql);
  const columns = stmt.columns().map((c) => ({ name: c.name, declaredType: c.type ?? null }));
  const params = request.values.map((v) =>
    v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v,
  );
  const options = { queryTimeout: request.timeoutMs };
  const state = { db, cancelled: false };
  running = state;
  try {
    if (columns.length === 0) {
      const { changes } = await stmt.run(params, options);
      return { result: { columns, cells: [], rowsAffected: DML.has(shape.verb) ? changes : -1 }, transfer: [] };
    }
    const cells: DataCell[] = [];
    const transfer: ArrayBuffer[] = [];
    const rows = await stmt.raw(true).safeIntegers(true).iterate(params, options);
    let count = 0;
    try {
      let yielded = performance.now();
      for (let record = await rows.next(); !record.done; record = native.iteratorNextSync(rows)) {
        if (++count > request.maxRows)
          throw new WorkerError('QUOTA', `The result has more than ${request.maxRows} rows.`);
        for (const value of record.value as unknown[]) cells.push(toCell(value, transfer));
        if (performance.now() - yielded > YIELD_EVERY_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          if (state.cancelled) throw new WorkerError('SQLITE_INTERRUPT', 'interrupted');
          yielded = performance.now();
        }
      }
    } finally {
      rows.close();
    }
    // RETURNING gives one row per row written, which is what changes() counts.
    return { result: { columns, cells, rowsAffected: DML.has(shape.verb) ? count : -1 }, transfer };
  } finally {
    running = undefined;
  }
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function toCell(value: unknown, transfer: ArrayBuffer[]): DataCell {
  if (typeof value === 'bigint') return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value;
  if (value instanceof Uint8Array) {
    // A copy owns its whole buffer: cloning a view would copy (and expose) all of the buffer under it.
    const copy = new Uint8Array(value);
    transfer.push(copy.buffer);
    return copy;
  }
  return value as DataCell;
}

async function handle(
  request: Exclude<WorkerRequest, { op: 'interrupt' }>,
): Promise<{ result?: WireResult; transfer: ArrayBuffer[] }> {
  switch (request.op) {
    case 'run':
      return run(request);
    case 'alone':
      return alone(request);
    case 'init':
      init();
      break;
    case 'begin':
      begin(request.access);
      break;
    case 'commit':
      commit();
      break;
    case 'rollback':
      rollback();
      break;
    case 'close':
      close();
      break;
  }
  return { transfer: [] };
}

function failure(error: unknown): WorkerReply {
  if (error instanceof WorkerError) return { ok: false, code: error.code, message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  // libsql's native errors carry `{"libsqlError":true,"code":…,"message":…}` as their message.
  try {
    const parsed = JSON.parse(message) as { libsqlError?: boolean; code?: unknown; message?: unknown };
    if (parsed?.libsqlError) return { ok: false, code: String(parsed.code), message: String(parsed.message) };
  } catch {
    // a plain message (binding a value libsql refuses, say)
  }
  return { ok: false, code: 'SQLITE_ERROR', message };
}

parentPort!.on('message', (request: WorkerRequest) => {
  if (request.op === 'interrupt') {
    // Only a rollback or close sends it, so the next statement here is our ROLLBACK: a step with no statement
    // active clears an interrupt that came just after the statement had finished.
    if (running !== undefined) {
      running.cancelled = true;
      running.db.interrupt();
    }
    return;
  }
  handle(request).then(
    ({ result, transfer }) => parentPort!.postMessage({ ok: true, result } satisfies WorkerReply, transfer),
    (error: unknown) => parentPort!.postMessage(failure(error)),
  );
});
