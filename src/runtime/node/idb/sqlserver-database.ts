/**
 * The Database port (src/idb/database.ts) on SQL Server over TDS through tedious (also Babelfish for PostgreSQL,
 * which speaks the same protocol and T-SQL). Settings: sqlserver-url.ts.
 *
 * Decisions:
 * - Client SQL is T-SQL sent as the original ADO.NET service sent it: a batch (SQL_BATCH) without parameters,
 *   sp_executesql with them, parameters named as the client named them and typed as AddWithValue would
 *   (sqlserver-values.ts). Batches are allowed, as SqlCommand allows them: the first result set with columns is the
 *   DataTable (Fill) or the scalar (ExecuteScalar); later result sets are read and dropped.
 * - `begin` takes a pooled connection and sends `BEGIN TRANSACTION`; 'read' takes it from the readers' pool, whose
 *   login has only `db_datareader`: SQL Server has no read-only transaction, so the server's permission check is
 *   what refuses a reader's write (AccessDenied). Without a readers' login `readOnlyEnforced` is false and 'read'
 *   uses the service's own login.
 * - T-SQL may end the transaction itself (`COMMIT`, `ROLLBACK`, an error that dooms it): the request's statements
 *   run at transaction depth 2 (two nested BEGIN TRANSACTIONs) and the depth (`@@TRANCOUNT`, asked after every
 *   statement: Babelfish sends no ENVCHANGE for T-SQL's own BEGIN/COMMIT) must still be 2, else the request is
 *   aborted (SqlError) and rolled back: a client's COMMIT only ends the inner level, so nothing escapes; a client's
 *   unbalanced BEGIN TRANSACTION is caught the same way. Client SQL reading @@TRANCOUNT sees 2 (SqlClient: 1).
 * - ExecuteNonQuery counts rows as SqlClient does: the DONE counts of every statement but SELECT, -1 when there is
 *   none (SET NOCOUNT ON, DDL, only SELECTs).
 * - Time-out: tedious' request time-out sends an attention; the transaction is marked aborted (Timeout). Row cap: at
 *   maxRows + 1 rows the request is cancelled and QuotaExceeded raised without rows; with `firstRowOnly`
 *   (ReturnScalar) the batch runs to its end and the rows after the first are dropped, as ExecuteScalar does. A
 *   rollback while a statement runs cancels it first. Every fault marks the transaction aborted; only rollback is
 *   left.
 * - A connection whose rollback failed or whose socket ended is closed, not pooled. If the bridge dies, the server
 *   sees the socket close and rolls the open transaction back: nothing half-done is ever committed.
 */
import { type Connection, Request } from 'tedious';
import type {
  Database,
  DatabaseTransaction,
  ResultColumn,
  SqlValue,
  StatementLimits,
  StatementResult,
} from '../../../idb/database.ts';
import { DatabaseFault, runInOwnTransaction } from '../../../idb/database.ts';
import type { DataCell } from '../../../idb/datatable.ts';
import { ConnectionPool, PoolTimeoutError } from './sqlserver-pool.ts';
import { CUR_CMD_SELECT } from './sqlserver-tedious.ts';
import { connectionConfig, type SqlServerSettings } from './sqlserver-url.ts';
import { cellOf, resultColumn, tdsParameter, toFault } from './sqlserver-values.ts';

/**
 * The transaction depth a request's statements run at: two nested BEGIN TRANSACTIONs, so that a COMMIT in client SQL
 * only ends the inner one and is caught (the depth is checked after every statement) before anything is committed.
 */
const DEPTH = 2;
const ABORTED = 'The transaction was aborted by an earlier error; only a rollback is possible.';

export function createSqlServerDatabase(settings: SqlServerSettings): Database {
  const pool = (login: SqlServerSettings['login']) =>
    new ConnectionPool({
      config: connectionConfig(settings, login),
      max: settings.maxConnections,
      acquireTimeoutMs: settings.acquireTimeoutMs,
    });
  const writers = pool(settings.login);
  const readers = settings.readerLogin === undefined ? undefined : pool(settings.readerLogin);
  return {
    dialect: 'sqlserver',
    readOnlyEnforced: readers !== undefined,
    async begin(access) {
      // Without a readers' login, 'read' runs as the service's login: only its own reads, and writers', reach it then
      // (the service refuses to start with readers configured, see readOnlyEnforced).
      const from = access === 'read' ? (readers ?? writers) : writers;
      let connection: Connection;
      try {
        connection = await from.acquire();
      } catch (error) {
        if (error instanceof PoolTimeoutError) throw new DatabaseFault('Timeout', error.message, false);
        throw toFault(error, false);
      }
      const transaction = new SqlServerTransaction(connection, (broken) => from.release(connection, broken));
      try {
        await transaction.start();
      } catch (error) {
        await transaction.rollback();
        throw toFault(error, false);
      }
      return transaction;
    },
    // Begin, the statement and commit or roll back, as the other calls: SQL Server has no cheaper path for it.
    runAlone(access, sql, values, limits, names) {
      return runInOwnTransaction(this, access, sql, values, limits, names);
    },
    async close() {
      await Promise.all([writers.close(), readers?.close()]);
    },
  };
}

class SqlServerTransaction implements DatabaseTransaction {
  private state: 'open' | 'aborted' | 'ended' = 'open';
  private queue: Promise<unknown> = Promise.resolve();
  private running: Request | undefined;
  private released = false;

  constructor(
    private readonly connection: Connection,
    private readonly release: (broken: boolean) => void,
  ) {}

  /** Our own batch, outside the queue, ending in `SELECT @@TRANCOUNT`: the transaction depth it leaves. */
  private exec(sql: string): Promise<number> {
    return new Promise((resolve, reject) => {
      let depth = -1;
      const request = new Request(`${sql}; SELECT @@TRANCOUNT`, (error) => (error ? reject(error) : resolve(depth)));
      request.on('row', (cells) => {
        depth = Number(cells[0]?.value);
      });
      this.connection.execSqlBatch(request);
    });
  }

  /** The transaction depth now (one round trip). */
  private depth(): Promise<number> {
    return this.exec('SET NOCOUNT OFF');
  }

  async start(): Promise<void> {
    const depth = await this.exec(
      'SET XACT_ABORT OFF; SET IMPLICIT_TRANSACTIONS OFF; BEGIN TRANSACTION; BEGIN TRANSACTION',
    );
    if (depth !== DEPTH) throw new DatabaseFault('SqlError', `The server began no transaction (depth ${depth}).`, true);
  }

  run(sql: string, values: readonly SqlValue[], limits: StatementLimits, names?: readonly string[]) {
    return this.serialize(() => this.runNow(sql, values, names ?? [], limits));
  }

  commit(): Promise<void> {
    return this.serialize(async () => {
      if (this.state !== 'open') {
        const ended = this.state === 'ended';
        await this.finish();
        throw new DatabaseFault(
          'SqlError',
          ended ? 'The transaction has already ended.' : 'The transaction was aborted and has been rolled back.',
          true,
        );
      }
      this.state = 'ended';
      try {
        if ((await this.exec('COMMIT TRANSACTION; COMMIT TRANSACTION')) !== 0) {
          throw new DatabaseFault(
            'SqlError',
            'The SQL left a transaction of its own open (BEGIN TRANSACTION without COMMIT): everything was rolled back.',
            true,
          );
        }
      } catch (error) {
        this.released = false;
        await this.finish();
        throw toFault(error);
      }
      this.released = true;
      this.release(false);
    });
  }

  async rollback(): Promise<void> {
    if (this.state === 'ended' && this.released) return;
    this.state = 'ended';
    if (this.running !== undefined) this.connection.cancel();
    await this.queue.catch(() => {});
    await this.finish();
  }

  /** ROLLBACK (when a transaction is still open) and release, once; never throws. */
  private async finish(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.state = 'ended';
    let broken = false;
    try {
      broken = (await this.exec('IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION')) !== 0;
    } catch {
      broken = true; // state unknown: the connection is closed, and the server rolls back with it
    }
    this.release(broken);
  }

  private serialize<T>(task: () => Promise<T>): Promise<T> {
    const next = this.queue.then(task, task);
    this.queue = next.catch(() => {});
    return next;
  }

  private async runNow(
    sql: string,
    values: readonly SqlValue[],
    names: readonly string[],
    limits: StatementLimits,
  ): Promise<StatementResult> {
    if (this.state === 'aborted') throw new DatabaseFault('SqlError', ABORTED, true);
    if (this.state === 'ended') throw new DatabaseFault('SqlError', 'The transaction has already ended.', true);
    const result = await this.send(sql, values, names, limits);
    let depth: number;
    try {
      depth = await this.depth();
    } catch (error) {
      this.state = 'aborted';
      throw toFault(error);
    }
    if (depth !== DEPTH) {
      this.state = 'aborted';
      throw new DatabaseFault(
        'SqlError',
        depth < DEPTH
          ? 'The SQL ended the request\u2019s transaction (COMMIT or ROLLBACK); the request is over.'
          : 'The SQL left a transaction of its own open (BEGIN TRANSACTION without COMMIT); the request is over.',
        true,
      );
    }
    return result;
  }

  /** One client statement or batch; rejects with the fault and marks the transaction aborted. */
  private send(
    sql: string,
    values: readonly SqlValue[],
    names: readonly string[],
    limits: StatementLimits,
  ): Promise<StatementResult> {
    const maxRows = Math.max(0, Math.floor(limits.maxRows));
    return new Promise<StatementResult>((resolve, reject) => {
      let columns: ResultColumn[] | undefined;
      let metadata: Parameters<typeof cellOf>[0][] = [];
      let resultSets = 0;
      const rows: DataCell[][] = [];
      let affected = -1;
      let overCap = false;
      const request = new Request(sql, (error) => {
        this.running = undefined;
        if (error || overCap) {
          this.state = this.state === 'ended' ? 'ended' : 'aborted';
          if (overCap) reject(new DatabaseFault('QuotaExceeded', `The result has more than ${maxRows} rows.`, true));
          else reject(toFault(error));
          return;
        }
        resolve({ columns: columns ?? [], rows, rowsAffected: limits.firstRowOnly ? -1 : affected });
      });
      request.setTimeout(Math.max(1, Math.ceil(limits.timeoutMs)));
      request.on('columnMetadata', (meta) => {
        resultSets++;
        if (resultSets === 1) {
          metadata = Array.isArray(meta) ? meta : Object.values(meta);
          columns = metadata.map(resultColumn);
        }
      });
      request.on('row', (cells) => {
        if (resultSets !== 1 || overCap) return;
        // ExecuteScalar's way: the batch runs to its end, the rows after the first are read and dropped.
        if (limits.firstRowOnly && rows.length === 1) return;
        if (rows.length >= maxRows) {
          overCap = true;
          rows.length = 0;
          this.connection.cancel();
          return;
        }
        const list = Array.isArray(cells) ? cells : Object.values(cells);
        rows.push(list.map((cell, i) => cellOf(metadata[i]!, cell.value)));
      });
      const count = (rowCount: number | undefined) => {
        const command = (request as unknown as { lastCurCmd?: number }).lastCurCmd;
        if (rowCount !== undefined && command !== CUR_CMD_SELECT) affected = Math.max(affected, 0) + rowCount;
      };
      request.on('done', count);
      request.on('doneInProc', count);
      request.on('doneProc', count);
      this.running = request;
      if (values.length === 0) this.connection.execSqlBatch(request);
      else {
        values.forEach((value, i) => {
          const p = tdsParameter(value);
          request.addParameter(names[i] ?? `p${i + 1}`, p.type, p.value, p.options);
        });
        this.connection.execSql(request);
      }
    });
  }
}
