/**
 * Worker thread body of the SQLite backend (sqlite-database.ts): the connections of one worker, serving one
 * transaction at a time, with libsql's native functions (the `libsql` JS wrapper is not a dependency).
 *
 * - Two connections, opened when first needed: the writer's (`BEGIN IMMEDIATE`) and a `mode=ro` one for readers, so
 *   SQLite itself refuses a reader's write. How a connection is opened and a statement run is sqlite-connection.ts's.
 * - A statement's first step runs on libsql's asynchronous path, so this thread keeps listening and an `interrupt`
 *   request can call `interrupt()` here, on the connection's own thread.
 * - Results leave as one flat array of cells, blobs in buffers of their own, transferred.
 */
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import {
  type Native,
  type NativeDatabase,
  openConnection,
  own,
  ownPragma,
  ownRows,
  type RunningStatement,
  runStatement,
  type Statement,
  StatementError,
  statementFailure,
  type WireResult,
} from './sqlite-connection.ts';

export type { BindValue, Statement, WireResult } from './sqlite-connection.ts';

export interface WorkerData {
  /** Absolute path of the database file. */
  path: string;
  busyTimeoutMs: number;
  /** Absolute path of the native module, as resolved (and loaded) by the main thread. */
  native: string;
}

export type WorkerRequest =
  | { op: 'init' }
  | { op: 'begin'; access: 'read' | 'write' }
  | ({ op: 'run' } & Statement)
  /** begin, run and commit (write) or roll back (read) in one message: a call's statement in a transaction of its own */
  | ({ op: 'alone'; access: 'read' | 'write' } & Statement)
  | { op: 'commit' }
  | { op: 'rollback' }
  | { op: 'close' }
  /** Answered by nobody: stops the running statement, if any. */
  | { op: 'interrupt' };

/** `code` is SQLite's (`SQLITE_READONLY`, …) or QUOTA and MULTIPLE, raised by the connection. */
export type WorkerReply = { ok: true; result?: WireResult } | { ok: false; code: string; message: string };

const { path, busyTimeoutMs, native: nativePath } = workerData as WorkerData;
const native = createRequire(import.meta.url)(nativePath) as Native;
const connections = new Map<'read' | 'write', NativeDatabase>();
/** The connection of the open transaction. */
let current: NativeDatabase | undefined;
/** The statement being run: an interrupt request stops it. */
let running: RunningStatement | undefined;

function connection(access: 'read' | 'write'): NativeDatabase {
  let db = connections.get(access);
  if (db === undefined) {
    db = openConnection(native, path, access, busyTimeoutMs);
    connections.set(access, db);
  }
  return db;
}

function init(): void {
  // The writer's connection creates the file; WAL is a property of the file, kept from then on.
  const mode = ownPragma(native, connection('write'), 'PRAGMA journal_mode = WAL')[0]?.[0];
  if (String(mode).toLowerCase() !== 'wal')
    throw new StatementError(
      'SQLITE_ERROR',
      `the database cannot use WAL journal mode (it stays in ${String(mode)} mode)`,
    );
}

function begin(access: 'read' | 'write'): void {
  const db = connection(access);
  own(native, db, access === 'write' ? 'BEGIN IMMEDIATE' : 'BEGIN');
  current = db;
}

function commit(): void {
  const db = current;
  current = undefined;
  if (db === undefined) throw new StatementError('SQLITE_ERROR', 'no transaction is open');
  try {
    own(native, db, 'COMMIT');
  } catch (error) {
    // A failed COMMIT (a deferred foreign key, say) leaves the transaction open.
    if (db.inTransaction()) ownOrDrop(db, 'ROLLBACK');
    throw error;
  }
  // TEMP objects committed here would outlive the request on this reused connection: start the next one afresh.
  try {
    if (ownRows(native, db, 'SELECT 1 FROM temp.sqlite_schema LIMIT 1').length > 0) drop(db);
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
    own(native, db, sql);
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
async function alone(request: Extract<WorkerRequest, { op: 'alone' }>, transfer: ArrayBuffer[]): Promise<WireResult> {
  begin(request.access);
  let result: WireResult;
  try {
    result = await run(request, transfer);
  } catch (error) {
    rollback();
    throw error;
  }
  if (request.access === 'write') commit();
  else rollback();
  return result;
}

function run(request: Statement, transfer: ArrayBuffer[]): Promise<WireResult> {
  if (current === undefined) throw new StatementError('SQLITE_ERROR', 'no transaction is open');
  return runStatement(native, current, request, (state) => (running = state), transfer);
}

async function handle(
  request: Exclude<WorkerRequest, { op: 'interrupt' }>,
  transfer: ArrayBuffer[],
): Promise<WireResult | undefined> {
  switch (request.op) {
    case 'run':
      return run(request, transfer);
    case 'alone':
      return alone(request, transfer);
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
  return undefined;
}

parentPort!.on('message', (request: WorkerRequest) => {
  if (request.op === 'interrupt') {
    // Only a rollback or close sends it, so the next statement here is our ROLLBACK: a step with no statement
    // active clears an interrupt that came just after the statement had finished.
    running?.cancel();
    return;
  }
  const transfer: ArrayBuffer[] = [];
  handle(request, transfer).then(
    (result) => parentPort!.postMessage({ ok: true, result } satisfies WorkerReply, transfer),
    (error: unknown) => parentPort!.postMessage({ ok: false, ...statementFailure(error) } satisfies WorkerReply),
  );
});
