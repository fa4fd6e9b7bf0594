/**
 * One SQLite connection through libsql's native module, and one statement run on it: what the sessions
 * (sqlite-session.ts: transactions and writes) and the readers (sqlite-readers.ts: a call's read on its own) both
 * do, so it has one home here.
 *
 * - A connection has foreign keys on and an authorizer that denies client SQL ATTACH, DETACH and PRAGMA (pragma
 *   functions included); client transaction control and SAVEPOINT are refused by their verb, so our own BEGIN,
 *   COMMIT and ROLLBACK need no lifting of the authorizer (see CLIENT_SQL).
 * - runStatement: a statement starts on libsql's asynchronous path (its first step runs on a libsql thread), so the
 *   event loop keeps serving other calls meanwhile and a rollback can call `interrupt()` on the connection. The
 *   remaining rows are read synchronously (an asynchronous hop per row costs ~0.1 ms), yielding to the event loop
 *   every 20 ms; a single slow step there ends by the statement's `queryTimeout`.
 * - runWithin: a statement run whole on this thread within a small time budget, for reads that are cheap (the readers
 *   try it first, sqlite-readers.ts).
 * - Both read a query's rows (SELECT, VALUES) in one step where they can: SQLite writes them as one JSON text
 *   (sqlite-json-rows.ts), a third of the cost of libsql's row by row read; on runStatement's path that step runs on
 *   libsql's thread. Row by row remains for writes, a first row only, and any query the JSON statement cannot read.
 * - Statements are kept prepared per connection by their text (StatementCache), on both paths.
 * - Results are one flat array of cells, integers as numbers when safe, blobs copied into buffers of their own.
 */
import { pathToFileURL } from 'node:url';
import type { ResultColumn } from '../../../idb/database.ts';
import type { DataCell } from '../../../idb/datatable.ts';
import { appendJsonRows, JSON_ROWS_MAX, rowsAsJsonSql } from './sqlite-json-rows.ts';
import { QUERY_VERBS, statementShape } from './sqlite-statement-shape.ts';

/** What a statement binds: the port's values, with booleans already 1/0. */
export type BindValue = null | number | bigint | string | Uint8Array;

/** A statement as the connection runs it: values bound as SQLite binds them, limits as whole numbers. */
export interface Statement {
  sql: string;
  values: BindValue[];
  timeoutMs: number;
  maxRows: number;
  /** Its first row only, the row cap not applied (StatementLimits.firstRowOnly). */
  firstRowOnly?: boolean;
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
export interface NativeStatement {
  columns(): { name: string; type: string | null }[];
  raw(toggle?: boolean): NativeStatement;
  safeIntegers(toggle?: boolean): NativeStatement;
  run(params: unknown[], options: { queryTimeout: number }): Promise<{ changes: number }>;
  iterate(params: unknown[], options: { queryTimeout: number }): Promise<NativeRows>;
}
export interface Native {
  /** `defaultQueryTimeout`: the time limit (ms) of a statement run without a `queryTimeout` of its own. */
  Database: new (
    path: string,
    options: { timeout: number; defaultQueryTimeout?: number },
  ) => NativeDatabase;
  databasePrepareSync(db: NativeDatabase, sql: string): NativeStatement;
  databaseExecSync(db: NativeDatabase, sql: string): void;
  statementRunSync(stmt: NativeStatement, params: unknown[]): { changes: number };
  /** The first row (an object by column name), or undefined when there is none. */
  statementGetSync(stmt: NativeStatement, params: unknown[]): unknown;
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

/**
 * What is kept per open connection: its prepared statements for runWithin (StatementCache), and in `retained` every
 * statement and row iterator it has handed out, kept until the connection is closed (`close`). Why the latter:
 * libsql frees one, when the garbage collector finalizes it, under its connection's lock and on the main thread; were
 * the connection running a statement on libsql's thread at that moment, the event loop would wait for that statement
 * to end (measured: a 10 ms timer took 0.8 s during a 0.8 s query; test in database.test.ts). A closed connection
 * runs nothing, so its objects can go then. A connection holding RETAINED_MAX of them is `worn`: its owner closes it
 * once it is idle and opens another when needed (~0.1 ms), which bounds the memory kept.
 */
const connections = new WeakMap<NativeDatabase, { retained: unknown[]; statements: StatementCache }>();
const RETAINED_MAX = 256;
/**
 * A connection cannot be closed inside a transaction: one that runs thousands of distinct statements lets its oldest
 * go past this many, taking the risk above for them rather than holding memory without bound.
 */
const RETAINED_HARD_MAX = 4096;

function keep<T>(db: NativeDatabase, object: T): T {
  const kept = connections.get(db)?.retained;
  if (kept !== undefined) {
    if (kept.length >= RETAINED_HARD_MAX) kept.splice(0, RETAINED_HARD_MAX / 2);
    kept.push(object);
  }
  return object;
}

/** Whether the connection holds enough of its statements to be closed and opened anew once idle (see `retained`). */
export function worn(db: NativeDatabase): boolean {
  return (connections.get(db)?.retained.length ?? 0) >= RETAINED_MAX;
}

/** Closes the connection and lets go of its statements; never throws. */
export function close(db: NativeDatabase): void {
  try {
    db.close();
  } catch {
    // closing is all that is left to do with it
  }
  connections.delete(db);
}

/** A statement of `db`, kept as long as the connection (see `retained`). */
export function prepareKept(native: Native, db: NativeDatabase, sql: string): NativeStatement {
  return keep(db, native.databasePrepareSync(db, sql));
}

/**
 * The writer's connection (`write`: it creates the file) or a reader's (`read`: `mode=ro`, SQLite refuses writes).
 * `syncBudgetMs` bounds the statements run on the event loop (runWithin): libsql interrupts such a statement once
 * that long has passed since it started, rows included; statements on the asynchronous path set their own limit.
 */
export function openConnection(
  native: Native,
  path: string,
  access: 'read' | 'write',
  busyTimeoutMs: number,
  syncBudgetMs?: number,
): NativeDatabase {
  const db = new native.Database(access === 'write' ? path : `${pathToFileURL(path).href}?mode=ro`, {
    timeout: busyTimeoutMs,
    ...(syncBudgetMs === undefined ? {} : { defaultQueryTimeout: syncBudgetMs }),
  });
  connections.set(db, { retained: [], statements: new StatementCache() });
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
  const rows = keep(db, native.statementIterateSync(prepareKept(native, db, sql).raw(true), []));
  const out: unknown[][] = [];
  for (let r = native.iteratorNextSync(rows); !r.done; r = native.iteratorNextSync(rows))
    out.push(r.value as unknown[]);
  return out;
}

// The opcodes of a program without a loop (runsWithoutLoop). Each does work bounded by its operands: a seek is a walk
// down one b-tree, a function call is bounded by its arguments (and no interrupt can stop one midway, so a time
// budget does not bound it either). Not here, whatever their jumps: Count (it counts a whole b-tree), Rewind, Last,
// Next, Prev, the sorter's, Gosub and Return, coroutines, virtual tables' (VFilter, VNext), OpenEphemeral.
const STRAIGHT_OPCODES = new Set(
  (
    'Variable ResultRow Halt OpenRead Column Affinity TypeCheck DeferredSeek Rowid IdxRowid NullRow ' +
    'Close ColumnsUsed Integer Int64 Real String8 String Null SoftNull Blob Copy SCopy IntCopy CollSeq ' +
    'Function PureFunc Add Subtract Multiply Divide Remainder Concat BitAnd BitOr ShiftLeft ShiftRight ' +
    'BitNot Not And Or Cast RealAffinity ZeroOrNull IsTrue Noop'
  ).split(' '),
);
/** Opcodes whose P2 is where they may jump: allowed forward only, inside the body. */
const JUMP_OPCODES = new Set(
  (
    'Goto If IfNot IsNull NotNull IfNullRow IsType MustBeInt Once Eq Ne Lt Le Gt Ge ElseEq SeekRowid ' +
    'NotExists SeekGE SeekGT SeekLE SeekLT IdxGT IdxGE IdxLT IdxLE'
  ).split(' '),
);
/** What the prologue after the body holds (Init jumps to it, it jumps back to the body's start): locks, constants. */
const PROLOGUE_OPCODES = new Set('Transaction TableLock Integer Int64 Real String8 String Null Blob'.split(' '));

/**
 * Whether SQLite's program for `sql`, as `db` compiles it now (its EXPLAIN), runs without a loop: every jump goes
 * forward, every opcode is one of STRAIGHT_OPCODES. Such a statement ends after a bounded number of steps, each
 * bounded by its operands: a point lookup by key (`WHERE id = @id`, or a UNIQUE index's columns), expressions of
 * parameters. SQLite checks for an interrupt only where a program loops, so a time budget could not interrupt such
 * a program anywhere anyway (sqlite-readers.ts runs them without one). False for anything it cannot read, or whose
 * EXPLAIN fails (the statement's own run reports why).
 */
export function runsWithoutLoop(native: Native, db: NativeDatabase, sql: string): boolean {
  let program: unknown[][];
  try {
    program = ownRows(native, db, `EXPLAIN ${sql}`);
  } catch {
    return false;
  }
  const [init] = program;
  if (init?.[1] !== 'Init') return false;
  const prologue = Number(init[3]);
  const last = program.length - 1;
  for (let i = 1; i <= last; i++) {
    const [address, opcode, , p2] = program[i] as [number, string, unknown, number];
    if (address !== i) return false;
    if (i < prologue) {
      if (JUMP_OPCODES.has(opcode) ? !(p2 > i && p2 < prologue) : !STRAIGHT_OPCODES.has(opcode)) return false;
    } else if (i === last ? !(opcode === 'Goto' && p2 === 1) : !PROLOGUE_OPCODES.has(opcode)) return false;
  }
  return prologue > 1 && prologue <= last;
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
 * A statement of client SQL ready to run on a connection: taken from its kept statements (StatementCache) or
 * prepared now. Nothing to run (only comments) is an empty result.
 */
type Taken = { kept: KeptStatement; columns: ResultColumn[] | undefined } | { empty: WireResult };

/** `columns` when it was prepared now (they are current); a kept one's are read after its first step. */
function take(native: Native, db: NativeDatabase, sql: string): Taken {
  const kept = connections.get(db)?.statements.take(sql);
  if (kept !== undefined) return { kept, columns: undefined };
  const shape = statementShape(sql);
  if (shape.trailing) {
    throw new StatementError(
      'MULTIPLE',
      'The SQL holds more than one statement; nothing was run. Send one statement per call.',
    );
  }
  if (!shape.started) return { empty: { columns: [], cells: [], rowsAffected: -1 } };
  if (TRANSACTION_VERBS.has(shape.verb)) throw new StatementError('SQLITE_AUTH', 'not authorized');
  const stmt = prepareKept(native, db, sql);
  const columns = columnsOf(stmt);
  // Rows as arrays, integers as BigInt (toCell narrows them): set once, the statement keeps its modes while kept.
  if (columns.length > 0) stmt.raw(true).safeIntegers(true);
  return {
    kept: { stmt, dml: DML.has(shape.verb), rows: columns.length > 0, read: QUERY_VERBS.has(shape.verb) },
    columns,
  };
}

/** Gives a statement that ran without error back to its connection's kept statements. */
function give(db: NativeDatabase, sql: string, kept: KeptStatement): void {
  connections.get(db)?.statements.give(sql, kept);
}

function columnsOf(stmt: NativeStatement): ResultColumn[] {
  return stmt.columns().map((c) => ({ name: c.name, declaredType: c.type ?? null }));
}

function paramsOf(request: Statement): unknown[] {
  return request.values.map((v) => (v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v));
}

/**
 * A connection's prepared statements by their text, the most recently used kept: preparing costs ~10 µs, as much as
 * running a `SELECT @v`. SQLite prepares a kept statement again itself when the schema has changed; its columns are
 * read again after its first step for that reason. A statement is taken out while it runs and given back only
 * after it ran without error.
 */
interface KeptStatement {
  stmt: NativeStatement;
  dml: boolean;
  /** Whether it returns rows (its columns, when it does, are read again after each first step). */
  rows: boolean;
  /** Whether it is a query (SELECT, VALUES) whose rows may be read as JSON. */
  read: boolean;
  /** The statement reading its rows as JSON; null once that failed for a statement never used. */
  json?: JsonStatement | null;
}

/** A statement built by rowsAsJsonSql for a kept one: the names it references, how many rows it reads at most. */
interface JsonStatement {
  stmt: NativeStatement;
  names: string[];
  /** The row cap it was built for: it reads that many rows and one more, JSON_ROWS_MAX and one more at most. */
  maxRows: number;
  /** Whether it has answered once: a failure then is taken as the schema's change (built again next time). */
  used: boolean;
}

class StatementCache {
  private readonly byText = new Map<string, KeptStatement>();
  constructor(private readonly size = 64) {}

  take(sql: string): KeptStatement | undefined {
    const kept = this.byText.get(sql);
    if (kept !== undefined) this.byText.delete(sql);
    return kept;
  }

  give(sql: string, kept: KeptStatement): void {
    this.byText.set(sql, kept);
    if (this.byText.size > this.size) this.byText.delete(this.byText.keys().next().value!);
  }
}

/**
 * The JSON statement of a kept query (built now if need be), or undefined when its rows are read row by row: not a
 * query, its first row only, or no such statement can be built for it (sqlite-json-rows.ts).
 */
function jsonStatement(
  native: Native,
  db: NativeDatabase,
  request: Statement,
  kept: KeptStatement,
): JsonStatement | undefined {
  if (!kept.read || request.firstRowOnly || kept.json === null) return undefined;
  if (kept.json !== undefined && kept.json.maxRows === request.maxRows) return kept.json;
  // The kept statement's columns as last read: should they be stale, the check after the step finds it.
  const names = columnsOf(kept.stmt).map((c) => c.name);
  const { maxRows } = request;
  const sql = rowsAsJsonSql(request.sql, names, Math.min(maxRows, JSON_ROWS_MAX));
  try {
    kept.json =
      sql === undefined ? null : { stmt: prepareKept(native, db, sql).raw(true), names, maxRows, used: false };
  } catch {
    kept.json = null; // SQLite cannot read this text as a subquery (a trailing comment after a `;`, say)
  }
  return kept.json ?? undefined;
}

/**
 * The result from the JSON statement's first row (undefined: no row), or undefined when its columns, as SQLite
 * compiled it for this step, are no longer the names it was built for: the caller reads row by row then, and the
 * statement is built again next time from the kept statement's columns, which that read brings up to date.
 */
function jsonResult(
  kept: KeptStatement,
  json: JsonStatement,
  request: Statement,
  record: unknown[] | undefined,
): WireResult | undefined {
  const columns = columnsOf(json.stmt);
  columns.pop();
  if (columns.length !== json.names.length || columns.some((c, i) => c.name !== json.names[i])) {
    kept.json = undefined;
    return undefined;
  }
  json.used = true;
  const cells: DataCell[] = [];
  const count = record === undefined ? 0 : appendJsonRows(record[columns.length] as string, columns.length, cells);
  if (count > request.maxRows) throw tooManyRows(request);
  if (count > JSON_ROWS_MAX) {
    kept.json = null; // a large result: read row by row (JSON_ROWS_MAX)
    return undefined;
  }
  return { columns, cells, rowsAffected: -1 };
}

/**
 * After the JSON statement failed: an interrupt (the budget, a cancel) is the statement's own and is thrown again, as
 * is a result of too many rows; after any other failure the call reads row by row, which gives the client statement's
 * own error if it has one.
 */
function jsonFailed(kept: KeptStatement, json: JsonStatement, error: unknown): void {
  if (error instanceof StatementError || statementFailure(error).code === 'SQLITE_INTERRUPT') throw error;
  kept.json = json.used ? undefined : null;
}

/**
 * Runs client SQL on `db` inside the transaction the caller opened, its first step on libsql's asynchronous path.
 * `started` is told of the running statement, so that it can be cancelled.
 */
export async function runStatement(
  native: Native,
  db: NativeDatabase,
  request: Statement,
  started: (running: RunningStatement | undefined) => void = () => {},
): Promise<WireResult> {
  const taken = take(native, db, request.sql);
  if ('empty' in taken) return taken.empty;
  const { kept } = taken;
  const params = paramsOf(request);
  const options = { queryTimeout: request.timeoutMs };
  const state = new RunningStatement(db);
  started(state);
  try {
    let result: WireResult;
    if (!kept.rows) {
      const { changes } = await kept.stmt.run(params, options);
      result = { columns: [], cells: [], rowsAffected: kept.dml ? changes : -1 };
    } else {
      const json = jsonStatement(native, db, request, kept);
      result =
        (json && (await readJsonRows(db, request, kept, json, params, options, state))) ??
        (await readRows(native, db, request, kept, params, options, state));
    }
    give(db, request.sql, kept);
    return result;
  } finally {
    started(undefined);
  }
}

/** runStatement's rows through the JSON statement, its one step on libsql's thread; undefined: read them row by row. */
async function readJsonRows(
  db: NativeDatabase,
  request: Statement,
  kept: KeptStatement,
  json: JsonStatement,
  params: unknown[],
  options: { queryTimeout: number },
  state: RunningStatement,
): Promise<WireResult | undefined> {
  try {
    const rows = keep(db, await json.stmt.iterate(params, options));
    try {
      const record = await rows.next();
      return jsonResult(kept, json, request, record.done ? undefined : (record.value as unknown[]));
    } finally {
      rows.close();
    }
  } catch (error) {
    if (state.cancelled) throw error;
    jsonFailed(kept, json, error);
    return undefined;
  }
}

/** runStatement's rows, read one by one: the first step on libsql's thread, the others on this one. */
async function readRows(
  native: Native,
  db: NativeDatabase,
  request: Statement,
  kept: KeptStatement,
  params: unknown[],
  options: { queryTimeout: number },
  state: RunningStatement,
): Promise<WireResult> {
  const cells: DataCell[] = [];
  const rows = keep(db, await kept.stmt.iterate(params, options));
  let count = 0;
  let columns: ResultColumn[] | undefined;
  try {
    let yielded = performance.now();
    for (let record = await rows.next(); !record.done; record = native.iteratorNextSync(rows)) {
      columns ??= columnsOf(kept.stmt);
      if (++count > request.maxRows && !request.firstRowOnly) throw tooManyRows(request);
      for (const value of record.value as unknown[]) cells.push(toCell(value));
      // No second step, which could be a slow one on this thread: a write's RETURNING rows are all written by the
      // first, so closing after it ends nothing early.
      if (request.firstRowOnly) break;
      if (performance.now() - yielded > YIELD_EVERY_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        if (state.cancelled) throw new StatementError('SQLITE_INTERRUPT', 'interrupted');
        yielded = performance.now();
      }
    }
  } finally {
    rows.close();
  }
  // after the first step: a kept statement prepared again for a changed schema may have other columns
  columns ??= columnsOf(kept.stmt);
  // RETURNING gives one row per row written, which is what changes() counts.
  return { columns, cells, rowsAffected: kept.dml && !request.firstRowOnly ? count : -1 };
}

/**
 * Runs client SQL on `db` on this thread, rows included. Why: a statement on libsql's asynchronous path costs
 * ~0.1 ms of CPU per thread hop, a `SELECT @v` run here ~5 µs. Only for statements whose time is bounded: on a
 * connection with a `syncBudgetMs` (openConnection) libsql interrupts the statement past it (SQLITE_INTERRUPT), which
 * leaves no trace of a read in autocommit mode (an interrupted write inside a transaction would roll back the whole
 * transaction); else for a statement whose work its text bounds (isPlainInsert, sqlite-session.ts).
 */
export function runWithin(native: Native, db: NativeDatabase, request: Statement): WireResult {
  const taken = take(native, db, request.sql);
  if ('empty' in taken) return taken.empty;
  const { kept } = taken;
  const { stmt, dml } = kept;
  let { columns } = taken;
  const params = paramsOf(request);
  if (!kept.rows) {
    const { changes } = native.statementRunSync(stmt, params);
    give(db, request.sql, kept);
    return { columns: [], cells: [], rowsAffected: dml ? changes : -1 };
  }
  if (request.firstRowOnly) {
    // One step and a reset (libsql's get): no row iterator made and kept (~8 µs of a ~10 µs statement).
    const record = native.statementGetSync(stmt, params) as unknown[] | undefined;
    const first = { columns: columns ?? columnsOf(stmt), cells: record?.map(toCell) ?? [], rowsAffected: -1 };
    give(db, request.sql, kept);
    return first;
  }
  const json = jsonStatement(native, db, request, kept);
  if (json !== undefined) {
    let result: WireResult | undefined;
    try {
      result = jsonResult(kept, json, request, native.statementGetSync(json.stmt, params) as unknown[] | undefined);
    } catch (error) {
      jsonFailed(kept, json, error);
    }
    if (result !== undefined) {
      give(db, request.sql, kept);
      return result;
    }
  }
  const cells: DataCell[] = [];
  const rows = keep(db, native.statementIterateSync(stmt, params));
  let count = 0;
  try {
    let record = native.iteratorNextSync(rows);
    // after the first step: a kept statement prepared again for a changed schema may have other columns
    columns ??= columnsOf(stmt);
    for (; !record.done; record = native.iteratorNextSync(rows)) {
      if (++count > request.maxRows) throw tooManyRows(request);
      for (const value of record.value as unknown[]) cells.push(toCell(value));
    }
  } finally {
    rows.close();
  }
  give(db, request.sql, kept);
  return { columns, cells, rowsAffected: dml ? count : -1 };
}

function tooManyRows(request: Statement): StatementError {
  return new StatementError('QUOTA', `The result has more than ${request.maxRows} rows.`);
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function toCell(value: unknown): DataCell {
  if (typeof value === 'bigint') return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value;
  if (value instanceof Uint8Array) {
    // A copy of its own: the cell outlives the statement, and a view would keep (and expose) the buffer under it.
    return new Uint8Array(value);
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
