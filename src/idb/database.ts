/**
 * The port through which the IIDBService database operations run client SQL (docs/contract/iidbservice.md: database
 * requests, ReturnDatatable / ReturnScalar / ExecuteNonQuery, "Rules users rely on"). Adapters: PostgreSQL through
 * node-postgres (src/runtime/node/idb/postgres-database.ts); an embedded SQLite file through libsql (its threads run what waits)
 * (src/runtime/node/idb/sqlite-database.ts). src/runtime/node/idb/open-database.ts picks one from a URL.
 *
 * Decisions:
 * - A DatabaseTransaction is one connection holding one open transaction: a database request, or the implicit one of a
 *   call with `requestId == Guid.Empty`. `begin('read')` gives a transaction the database itself keeps read-only, so a
 *   reader cannot write even through ReturnScalar; its refusal is `AccessDenied`.
 * - SQL reaches `run` with the backend's own positional markers (bindParameters in sql-parameters.ts) and must be one
 *   statement: a backend sends it so that `COMMIT; INSERT …` is refused, never run outside the transaction.
 * - Every fault ends the unit of work: after a DatabaseFault with `transactionAborted` the transaction refuses further
 *   `run` and `commit` (commit would otherwise silently roll back, or commit a half-done statement) and only `rollback`
 *   is left. Backends set `transactionAborted` for every fault they raise inside a transaction, QuotaExceeded
 *   included (the statement may have written before its rows exceeded the cap: nothing half-done is committed).
 * - Results are cells of the DataTable model (datatable.ts): decimals as strings (scale kept), int8 as bigint,
 *   date/time values as the database's text (wall clock, offset for time-zone-aware types), bytes as Uint8Array,
 *   uuid as text. `declaredType` is the type name the database reports (`int4`, `numeric`, `timestamptz`, `integer[]`),
 *   which clrTypeOfDeclared maps; null when there is none (a SQLite expression).
 * - SQLite has only storage classes: INTEGER is a number when it is a safe integer, else a bigint; REAL a number;
 *   NUMERIC columns hold integers or reals (no decimal text); booleans are 1/0; dates are whatever text was stored.
 */
import type { ClrType } from './column-types.ts';
import type { ClrValue } from './contract.ts';
import type { DataCell } from './datatable.ts';
import type { SqlDialect } from './sql-parameters.ts';

export type { SqlDialect } from './sql-parameters.ts';

/**
 * A bound value: a QueryParameter's value with its .NET type, or null. Each backend binds it as its own type:
 * - PostgreSQL types the parameter (int int4, short int2, long int8, decimal numeric, float float4, double float8,
 *   boolean bool, base64Binary bytea, guid uuid, dateTime timestamptz with an offset or `Z`, else timestamp), so
 *   `SELECT @x` answers the type the client sent, as SQL Server does; a string stays untyped and takes the type its
 *   use asks for, like a literal.
 * - SQLite has no such types: integers as INTEGER, float and double as REAL, boolean as 1/0, bytes as BLOB, and
 *   decimal, dateTime, guid and string as TEXT (a decimal keeps its digits; a NUMERIC column converts it).
 */
export type SqlValue = ClrValue | null;

export interface ResultColumn {
  name: string;
  declaredType: string | null;
  /** The .NET type when the backend knows it exactly (SQL Server's TDS types); else clrTypeOfDeclared decides. */
  clrType?: ClrType;
}

export interface StatementResult {
  columns: ResultColumn[];
  rows: DataCell[][];
  /** rows affected by INSERT/UPDATE/DELETE (and MERGE), else -1 (ADO.NET) */
  rowsAffected: number;
}

/**
 * - SqlError: the database refused the statement (syntax, constraint, type, …); the message is the server's, no stack.
 * - AccessDenied: a write in a read-only transaction, or a missing privilege.
 * - Timeout: the statement ran longer than StatementLimits.timeoutMs.
 * - QuotaExceeded: the result has more than StatementLimits.maxRows rows (no partial result is returned).
 */
export type DatabaseFaultName = 'SqlError' | 'AccessDenied' | 'Timeout' | 'QuotaExceeded';

export class DatabaseFault extends Error {
  override name = 'DatabaseFault';
  constructor(
    readonly fault: DatabaseFaultName,
    message: string,
    /** true when the backend ended the transaction (it must be rolled back) */
    readonly transactionAborted: boolean,
  ) {
    super(message);
  }
}

export interface StatementLimits {
  timeoutMs: number;
  maxRows: number;
  /**
   * ReturnScalar's statements: only the first row is read, as ADO.NET's ExecuteScalar reads it, and `maxRows` does
   * not apply. A write with RETURNING still writes every row (SQLite and PostgreSQL complete it on its first row; SQL
   * Server's rows after the first are read and dropped). rowsAffected is then -1.
   */
  firstRowOnly?: boolean;
}

/** One connection holding one open transaction: a database request's unit of work. */
export interface DatabaseTransaction {
  /**
   * Runs one statement; throws DatabaseFault. Calls on one transaction run one after the other.
   *
   * `values` are bound by position (see SqlDialect) and carry the .NET type the client sent (see SqlValue); on
   * sqlserver they are bound by name instead, `names[i]` naming `values[i]` (T-SQL's own `@name` parameters).
   */
  run(
    sql: string,
    values: readonly SqlValue[],
    limits: StatementLimits,
    names?: readonly string[],
  ): Promise<StatementResult>;
  /** Commits and releases the connection; throws DatabaseFault (the transaction is then rolled back and released). */
  commit(): Promise<void>;
  /** Rolls back and releases the connection; never throws; a second call (or one after commit) does nothing. */
  rollback(): Promise<void>;
}

export interface Database {
  readonly dialect: SqlDialect;
  /**
   * false when `begin('read')` cannot be kept read-only by the database (SQL Server without a read-only login): a
   * service with readers refuses to start on such a database. Absent: enforced.
   */
  readonly readOnlyEnforced?: boolean;
  begin(access: 'read' | 'write'): Promise<DatabaseTransaction>;
  /**
   * One statement in a transaction of its own (client SQL of a call with `requestId == Guid.Empty`): committed when
   * `access` is 'write' and it succeeds, else rolled back; throws DatabaseFault. The same as begin, run and commit
   * (`runInOwnTransaction`), but a backend may do it in fewer steps: SQLite sends it to its worker in one message, and
   * runs a writer's statement that turns out not to write beside other readers, without the writer's lock.
   */
  runAlone(
    access: 'read' | 'write',
    sql: string,
    values: readonly SqlValue[],
    limits: StatementLimits,
    names?: readonly string[],
  ): Promise<StatementResult>;
  close(): Promise<void>;
}

/** runAlone as begin, run and commit (write) or roll back (read). */
export async function runInOwnTransaction(
  database: Pick<Database, 'begin'>,
  access: 'read' | 'write',
  sql: string,
  values: readonly SqlValue[],
  limits: StatementLimits,
  names?: readonly string[],
): Promise<StatementResult> {
  const transaction = await database.begin(access);
  let result: StatementResult;
  try {
    result = await transaction.run(sql, values, limits, names);
    if (access === 'write') await transaction.commit();
  } catch (error) {
    await transaction.rollback();
    throw error;
  }
  // A read's answer does not wait for its ROLLBACK (a round trip on PostgreSQL); the connection goes back to the
  // pool once it is done, and rollback never throws.
  void transaction.rollback();
  return result;
}
