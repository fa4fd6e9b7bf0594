/**
 * The Database port (src/idb/database.ts) on PostgreSQL through postgres.js.
 *
 * Decisions:
 * - `begin` reserves a pool connection (`sql.reserve()`) and sends `BEGIN` there; 'read' sends `BEGIN READ ONLY`
 *   followed by `SELECT 1`, because `SET TRANSACTION READ WRITE` is only refused once a query has run in the
 *   transaction: the mode is frozen before client SQL gets a chance. A call's own transaction (`runAlone`) does not
 *   wait for BEGIN's answer before sending its statement: both go out in one write, and the statement's answer counts
 *   only after BEGIN's (open). A statement without parameters then costs one round trip with BEGIN (Parse to Sync in
 *   the same write); with parameters one more, since postgres.js describes the statement first to learn their types.
 *   A reader's ROLLBACK is not awaited.
 * - Client SQL always goes with the extended query protocol (`simple: false`), even without parameters, so the server
 *   refuses more than one command (42601) and `COMMIT; INSERT …` can never escape the transaction. Unnamed statements
 *   (`prepare: false`): client SQL is rarely repeated, and a per-connection cache of it would only grow.
 * - Time-out: `SET LOCAL statement_timeout` before a statement whose limit differs from the one already set in this
 *   transaction (SET LOCAL ends with the transaction, so nothing leaks into the pool). 57014 is Timeout.
 * - Row cap: rows are taken as they arrive (postgres.js `forEach`), the statement's Bind, Execute and Sync in one write;
 *   past maxRows they are dropped, the statement is cancelled and QuotaExceeded raised without any rows, so at most
 *   maxRows rows are ever kept. (A portal read in batches, postgres.js `cursor`, bounded the rows the server sent as
 *   well, but cost one round trip more a statement: its Sync waited for the last batch.) With `firstRowOnly`
 *   (ReturnScalar) the statement is a portal read one row at a time and closed after its first.
 * - Every fault marks the transaction aborted (see the port); the object then refuses run and commit until rollback.
 *   A rollback while a statement runs cancels it first, so an abandoned request never waits for its own time-out.
 * - Values are read from the server's text form (postgres.js `raw()`, see parseCell): bool a boolean, int2/int4/oid
 *   and float4/float8 numbers, int8 a bigint, bytea a Uint8Array; everything else stays the server's text: numeric
 *   keeps its scale, date/timestamp/timestamptz are ISO (DateStyle ISO, session TimeZone UTC so timestamptz prints
 *   `+00`), uuid, json, time, interval and arrays are text. money is read as
 *   decimal text (lc_monetary C, symbol and grouping removed).
 * - Declared types: the OIDs of the built-in types map to names clrTypeOfDeclared knows; any other OID (enums, user
 *   types, arrays) is looked up once per Database with `format_type` on the statement's own connection.
 */
import postgres from 'postgres';
import type { ClrValueType } from '../../../idb/contract.ts';
import {
  DatabaseFault,
  runInOwnTransaction,
  type Database,
  type DatabaseFaultName,
  type DatabaseTransaction,
  type ResultColumn,
  type SqlValue,
  type StatementLimits,
  type StatementResult,
} from '../../../idb/database.ts';
import type { DataCell } from '../../../idb/datatable.ts';

export interface PostgresDatabaseOptions {
  /** `postgres://user:pass@host:port/db` */
  url: string;
  /** Pool size: how many database requests can hold a connection at once (default 10). */
  maxConnections?: number;
}

type Sql = postgres.Sql<Record<string, unknown>>;
type Reserved = postgres.ReservedSql<Record<string, unknown>>;

/** Built-in type OIDs (pg_type.h) and the names reported as declared types. */
const TYPE_NAMES: ReadonlyMap<number, string> = new Map([
  [16, 'bool'],
  [17, 'bytea'],
  [18, 'char'],
  [19, 'name'],
  [20, 'int8'],
  [21, 'int2'],
  [23, 'int4'],
  [25, 'text'],
  [26, 'oid'],
  [114, 'json'],
  [142, 'xml'],
  [700, 'float4'],
  [701, 'float8'],
  [705, 'unknown'],
  [790, 'money'],
  // bpchar is `character(n)`; the name clrTypeOfDeclared knows.
  [1042, 'character'],
  [1043, 'varchar'],
  [1082, 'date'],
  [1083, 'time'],
  [1114, 'timestamp'],
  [1184, 'timestamptz'],
  [1186, 'interval'],
  [1266, 'timetz'],
  [1700, 'numeric'],
  [2950, 'uuid'],
  [3802, 'jsonb'],
]);

/**
 * A cell from the server's text form of a value (postgres.js `raw()`: no driver parsers involved, so nothing a pool
 * option or type fetch changes). Types not named here (numeric, date/time, uuid, json, arrays, …) stay text.
 */
function parseCell(type: number, raw: Buffer | null): DataCell {
  if (raw == null) return null;
  switch (type) {
    case 16:
      return raw[0] === 0x74; // 't'
    case 17:
      // `\x` then hex digits (bytea_output hex, the default since 9.0); a fresh Uint8Array, not a pooled Buffer.
      return new Uint8Array(Buffer.from(raw.toString('latin1', 2), 'hex'));
    case 20:
      return BigInt(raw.toString('latin1'));
    case 21:
    case 23:
    case 26:
    case 700:
    case 701:
      return Number(raw.toString('latin1')); // also NaN, Infinity, -Infinity
    case 790:
      // lc_monetary C (set per connection) prints `$1,234.50` / `-$1,234.50`: the Decimal text is what is left.
      return raw.toString('latin1').replace(/[$,]/g, '');
    default:
      return raw.toString('utf8');
  }
}

/**
 * How parameters are written for the types postgres.js would otherwise convert them into. A client's string is
 * untyped, so the server infers its type from the statement, and postgres.js then ran it through that type's
 * serializer: `'true'` for a bool became `f` (a string is not `true`), `'{"a": 1}'` for a jsonb became a JSON string
 * and `'\x00ff'` for a bytea the bytes of its text. A string now goes as written, as the literal would; our own typed
 * values (a boolean, bytes) keep their form. A DateTime goes as the client wrote it too (PostgreSQL reads ISO 8601,
 * and rounds .NET's seventh digit to microseconds): the date serializer made a JS Date of the text, which read a
 * wall-clock time in the bridge's time zone (10:00 was stored as 09:00 under Europe/Zurich) and kept milliseconds
 * only. The parse halves are never used: client rows are read raw, and our own queries read none of these types.
 */
const AS_WRITTEN: Record<string, postgres.PostgresType<unknown>> = {
  boolean: {
    to: 16,
    from: [16],
    serialize: (value) => (typeof value === 'string' ? value : value === true ? 't' : 'f'),
    parse: (text: string) => text,
  },
  bytea: {
    to: 17,
    from: [17],
    serialize: (value) =>
      typeof value === 'string' ? value : `\\x${Buffer.from(value as Uint8Array).toString('hex')}`,
    parse: (text: string) => text,
  },
  json: {
    to: 114,
    from: [114, 3802],
    serialize: (value) => (typeof value === 'string' ? value : JSON.stringify(value)),
    parse: (text: string) => text,
  },
  dateTime: {
    to: 1184,
    from: [1082, 1114, 1184],
    serialize: (value) => (value instanceof Date ? value.toISOString() : String(value)),
    parse: (text: string) => text,
  },
};

export function createPostgresDatabase(options: PostgresDatabaseOptions): Database {
  const sql: Sql = postgres(options.url, {
    max: options.maxConnections ?? 10,
    // fetch_types stays on: with it off, postgres.js 3.4.9 never resolves a reserve() that opens a new connection.
    prepare: false,
    types: AS_WRITTEN,
    onnotice: () => {},
    connection: {
      application_name: 'idb-service',
      DateStyle: 'ISO, YMD',
      TimeZone: 'UTC',
      lc_monetary: 'C',
      extra_float_digits: '1',
    },
  });
  const names = new Map<number, string>(TYPE_NAMES);

  /** The declared type names of result columns: built-ins from the table, others looked up once (format_type). */
  async function declaredTypes(conn: Reserved, oids: number[]): Promise<(string | null)[]> {
    const missing = [...new Set(oids.filter((oid) => !names.has(oid)))];
    if (missing.length > 0) {
      // OIDs are unsigned integers from the protocol: safe as literals.
      const rows = await conn.unsafe<{ oid: number; name: string }[]>(
        `SELECT oid::int8 AS oid, format_type(oid, NULL) AS name FROM pg_type WHERE oid IN (${missing.join(',')})`,
      );
      for (const row of rows) names.set(Number(row.oid), row.name);
    }
    return oids.map((oid) => names.get(oid) ?? null);
  }

  /**
   * A reserved connection in a transaction; with `timeoutMs` its statement time-out is set in the same round trip.
   * BEGIN is sent, not awaited: the transaction's first statement goes out right behind it in the same write
   * (postgres.js pipelines a simple query), and waits for its answer before its own counts (`begun`). What could run
   * outside the transaction that way: nothing, since our BEGIN text fails only when the connection does, and the
   * statement behind it with it.
   */
  async function open(access: 'read' | 'write', timeoutMs?: number): Promise<PostgresTransaction> {
    let conn: Reserved;
    try {
      conn = await sql.reserve();
    } catch (error) {
      throw toFault(error);
    }
    // Our own text: the simple protocol.
    const begin = access === 'read' ? 'BEGIN READ ONLY' : 'BEGIN';
    const begun: Promise<unknown> = conn
      .unsafe(timeoutMs === undefined ? `${begin}; SELECT 1` : `${begin}; SET LOCAL statement_timeout = ${timeoutMs}`)
      .execute();
    return new PostgresTransaction(conn, sql.CLOSE, declaredTypes, timeoutMs, begun);
  }

  /** A database request's transaction: BEGIN answered before the request is (its failure is the request's). */
  async function openRequest(access: 'read' | 'write'): Promise<PostgresTransaction> {
    const transaction = await open(access);
    await transaction.begun();
    return transaction;
  }

  const database: Database = {
    dialect: 'postgres',
    // BEGIN and the statement's time-out sent with the statement (a call's statement was four round trips, then three,
    // now two and a ROLLBACK or COMMIT).
    runAlone: (access, text, values, limits) =>
      runInOwnTransaction(
        { begin: () => open(access, Math.max(1, Math.ceil(limits.timeoutMs))) },
        access,
        text,
        values,
        limits,
      ),
    begin: (access) => openRequest(access),
    async close() {
      await sql.end({ timeout: 5 });
    },
  };
  return database;
}

const ABORTED = 'current transaction is aborted, commands ignored until end of transaction block';
const ABORTED_COMMIT = 'The transaction was aborted by an earlier error and has been rolled back.';

class PostgresTransaction implements DatabaseTransaction {
  private state: 'open' | 'aborted' | 'ended' = 'open';
  /** Serializes calls: one statement at a time on the connection, and the time-out set for it. */
  private queue: Promise<unknown> = Promise.resolve();
  private running: postgres.PendingQuery<postgres.Row[]> | undefined;
  private released = false;
  /** A cancel request sent for a statement, until the server has taken it (see finish). */
  private cancelling: Promise<void> | undefined;

  constructor(
    private readonly conn: Reserved,
    /** postgres.js's CLOSE marker, which only the pool's sql carries (a reserved connection's has none). */
    private readonly closePortal: unknown,
    private readonly declaredTypes: (conn: Reserved, oids: number[]) => Promise<(string | null)[]>,
    /** The statement_timeout already set for this transaction, if any. */
    private timeoutMs: number | undefined,
    /** BEGIN, sent and not yet answered (see open). */
    private beginning: Promise<unknown> | undefined,
  ) {
    // Answered later, or never looked at when the transaction is rolled back first: not an unhandled rejection.
    beginning?.catch(() => {});
  }

  /** Resolves once BEGIN has been answered; a failed BEGIN ends the transaction and releases its connection. */
  async begun(): Promise<void> {
    const beginning = this.beginning;
    if (beginning === undefined) return;
    this.beginning = undefined;
    try {
      await beginning;
    } catch (error) {
      await this.finish();
      throw toFault(error);
    }
  }

  run(sql: string, values: readonly SqlValue[], limits: StatementLimits): Promise<StatementResult> {
    return this.serialize(() => this.runNow(sql, values, limits));
  }

  commit(): Promise<void> {
    return this.serialize(async () => {
      if (this.state !== 'open') {
        const ended = this.state === 'ended';
        await this.finish();
        throw new DatabaseFault('SqlError', ended ? 'The transaction has already ended.' : ABORTED_COMMIT, true);
      }
      this.state = 'ended';
      try {
        const result = await this.conn.unsafe('COMMIT');
        // A COMMIT of a transaction the server had already aborted answers ROLLBACK.
        if (result.command !== 'COMMIT')
          throw new DatabaseFault('SqlError', 'The transaction was rolled back by the database.', true);
      } catch (error) {
        await this.conn.unsafe('ROLLBACK').catch(() => {});
        throw toFault(error);
      } finally {
        this.released = true;
        this.conn.release();
      }
    });
  }

  async rollback(): Promise<void> {
    if (this.state === 'ended') return;
    this.state = 'ended';
    if (this.running !== undefined) this.cancelling = cancelStatement(this.running);
    await this.queue.catch(() => {});
    await this.finish();
  }

  /** ROLLBACK and release, once; never throws. Not through the queue (commit calls it from inside). */
  private async finish(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.state = 'ended';
    try {
      // A cancel request travels on a connection of its own and may land after its statement is done, on whatever
      // the connection runs next: nothing more is sent here until the server has taken it.
      await this.cancelling;
      await this.conn.unsafe('ROLLBACK');
    } catch {
      // A broken connection has no transaction left; postgres.js replaces it in the pool.
    } finally {
      this.conn.release();
    }
  }

  private serialize<T>(task: () => Promise<T>): Promise<T> {
    const next = this.queue.then(task, task);
    this.queue = next.catch(() => {});
    return next;
  }

  private checkOpen(): void {
    if (this.state === 'aborted') throw new DatabaseFault('SqlError', ABORTED, true);
    if (this.state === 'ended') throw new DatabaseFault('SqlError', 'The transaction has already ended.', true);
  }

  private async runNow(text: string, values: readonly SqlValue[], limits: StatementLimits): Promise<StatementResult> {
    this.checkOpen();
    const timeoutMs = Math.max(1, Math.ceil(limits.timeoutMs));
    const maxRows = Math.max(0, Math.floor(limits.maxRows));
    let overCap = false;
    try {
      if (this.timeoutMs !== timeoutMs) {
        await this.conn.unsafe(`SET LOCAL statement_timeout = ${timeoutMs}`);
        this.timeoutMs = timeoutMs;
      }
      const raw: (Buffer | null)[][] = [];
      const query = this.conn
        .unsafe(
          text,
          values.map((v) => parameter(this.conn, v)) as postgres.ParameterOrJSON<never>[],
          // `simple` is no typed option, but postgres.js honours it: false forces the extended protocol.
          { prepare: false, simple: false } as postgres.UnsafeQueryOptions,
        )
        .raw();
      this.running = query as unknown as postgres.PendingQuery<postgres.Row[]>;
      let batchColumns: postgres.ColumnList<string> | undefined;
      let reading: Promise<postgres.RowList<postgres.Row[]>>;
      if (limits.firstRowOnly === true) {
        // A portal read one row at a time, closed after its first (Close and Sync); a write's RETURNING rows are all
        // written by then (PostgreSQL completes such a portal on its first Execute).
        reading = query.cursor(1, (batch) => {
          if (raw.length === 0) raw.push(...(batch as unknown as (Buffer | null)[][]).slice(0, 1));
          batchColumns ??= columnsOfBatch(batch);
          // Anything else (a reserved connection's `CLOSE` is undefined) fetched the next row, one round trip a row.
          return this.closePortal;
        }) as unknown as Promise<postgres.RowList<postgres.Row[]>>;
      } else {
        // Rows as they arrive, the statement's Execute and Sync in one write: a cursor costs a round trip more (its
        // Sync waits for the last batch). Past the cap, rows are dropped, never kept, and the statement is cancelled;
        // its answer, whichever comes, is QuotaExceeded.
        reading = query.forEach((row) => {
          if (raw.length < maxRows) raw.push(row as unknown as (Buffer | null)[]);
          else if (!overCap) {
            overCap = true;
            this.cancelling = cancelStatement(query);
          }
        }) as unknown as Promise<postgres.RowList<postgres.Row[]>>;
      }
      // Sent now, behind a BEGIN still on its way (open), whose answer comes first and decides.
      (reading as unknown as { execute(): unknown }).execute();
      const begun = this.begun();
      begun.catch(() => reading.catch(() => {}));
      await begun;
      const result = await reading;
      if (overCap) throw new RowCapReached();
      const described = batchColumns ?? result.statement?.columns ?? result.columns ?? [];
      const declared = await this.declaredTypes(
        this.conn,
        described.map((c) => c.type),
      );
      const columns: ResultColumn[] = described.map((c, i) => ({ name: c.name, declaredType: declared[i] ?? null }));
      const rows = raw.map((row) => described.map((c, i) => parseCell(c.type, row[i] ?? null)));
      return {
        columns,
        rows,
        rowsAffected: limits.firstRowOnly === true ? -1 : rowsAffected(result.command, result.count),
      };
    } catch (error) {
      this.state = this.state === 'ended' ? 'ended' : 'aborted';
      if (overCap) throw new DatabaseFault('QuotaExceeded', `The result has more than ${maxRows} rows.`, true);
      throw toFault(error);
    } finally {
      this.running = undefined;
    }
  }
}

class RowCapReached extends Error {}

/**
 * Cancels a running statement; resolves once the server has taken the request, never rejects. The server signals the
 * statement's backend before it closes the request's connection, and a signal that finds the backend waiting for a
 * command is dropped: what is sent on the connection after this resolves cannot be cancelled by it. postgres.js's
 * `cancel()` drops that promise; the canceller it calls returns it (postgres.js 3.4 internals, the version pinned).
 */
function cancelStatement(query: unknown): Promise<void> {
  const pending = query as { canceller?: ((query: unknown) => Promise<unknown>) | null; cancel(): unknown };
  const canceller = pending.canceller;
  if (typeof canceller !== 'function') {
    pending.cancel();
    return Promise.resolve();
  }
  pending.canceller = null;
  // Bounded: a statement still queued behind another is cancelled only once it starts, which a broken connection
  // never lets happen.
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    canceller(query).then(
      () => {},
      () => {},
    ),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CANCEL_WAIT_MS);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** The longest finish waits for a cancel request to be taken (it takes a few milliseconds). */
const CANCEL_WAIT_MS = 5000;

/** The columns ride on the batches: once a result spans a whole batch, the final result no longer has them. */
function columnsOfBatch(batch: unknown): postgres.ColumnList<string> | undefined {
  const described = batch as {
    statement?: { columns: postgres.ColumnList<string> };
    columns?: postgres.ColumnList<string>;
  };
  return described.statement?.columns ?? described.columns;
}

/** Parameter type OIDs per .NET type (see SqlValue); 0 leaves the type to the server, as for a literal. */
const PARAMETER_TYPES: Readonly<Record<ClrValueType, number>> = {
  int: 23,
  short: 21,
  long: 20,
  decimal: 1700,
  float: 700,
  double: 701,
  boolean: 16,
  string: 0,
  dateTime: 1114,
  base64Binary: 17,
  guid: 2950,
};

function parameter(conn: Reserved, value: SqlValue): unknown {
  if (value === null) return null;
  switch (value.type) {
    case 'string':
      return value.value;
    case 'base64Binary':
      return value.value; // postgres.js sends a Uint8Array as bytea
    case 'boolean':
      return conn.typed(value.value, 16);
    case 'dateTime':
      // With an offset or Z the value is an instant (timestamptz), else a wall-clock time (timestamp).
      return conn.typed(value.value, /(?:Z|[+-]\d\d:?\d\d)$/i.test(value.value) ? 1184 : 1114);
    default:
      // As text: NaN and ±Infinity are spelled as PostgreSQL reads them, a bigint keeps every digit.
      return conn.typed(String(value.value), PARAMETER_TYPES[value.type]);
  }
}

function rowsAffected(command: string | undefined, count: number | null | undefined): number {
  switch (command) {
    case 'INSERT':
    case 'UPDATE':
    case 'DELETE':
    case 'MERGE':
      return typeof count === 'number' ? count : 0;
    default:
      return -1;
  }
}

function toFault(error: unknown): DatabaseFault {
  if (error instanceof DatabaseFault) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  let fault: DatabaseFaultName = 'SqlError';
  if (code === '57014') fault = 'Timeout';
  else if (code === '25006' || code === '42501') fault = 'AccessDenied';
  return new DatabaseFault(fault, message, true);
}
