/**
 * The Database port (src/idb/database.ts) on PostgreSQL through node-postgres (`pg`: its pool, its protocol
 * serializer and parser), each statement sent as one pg Submittable (`PortalStatement`).
 *
 * Decisions:
 * - One write, one round trip a statement: Parse (with the parameters' types), Bind, Describe, Execute and Sync go out
 *   together, as Npgsql sends them. The transaction's BEGIN and a statement time-out that changes ride in the same
 *   write as extended-protocol statements of their own, ahead of it; a BEGIN there opens a transaction block that
 *   outlives the Sync, as a simple BEGIN does. A call's own transaction (`runAlone`) is therefore one round trip: a
 *   reader's ROLLBACK and a writer's ReturnScalar's COMMIT ride in the statement's write, behind it (a failed
 *   statement has the server skip them); the COMMIT of a writer's statement that wrote nothing goes out without the
 *   answer waiting for it; only another statement that wrote waits for its COMMIT, a second round trip (see
 *   PostgresTransaction.readAlone and runAlone).
 * - 'read' opens `BEGIN READ ONLY` and runs a statement before the client's, because `SET TRANSACTION READ WRITE` is
 *   only refused once a query has run in the transaction: the mode is frozen before client SQL gets a chance.
 * - Client SQL always goes with the extended query protocol, so the server refuses more than one command (42601) and
 *   `COMMIT; INSERT …` can never escape the transaction. A statement of transaction control on its own (BEGIN,
 *   COMMIT, ROLLBACK, SAVEPOINT, …) is refused as AccessDenied before it is sent (see transactionControl). Unnamed statements: client SQL is rarely repeated, and a
 *   per-connection cache of it would only grow.
 * - Parameters are typed as the client sent them (see PARAMETER_TYPES), as text; a string goes untyped (OID 0), so the
 *   server reads it as it would read the literal, whatever type it infers (`'true'` for a bool, JSON text for a jsonb,
 *   `'\x00ff'` for a bytea); bytes go as bytea in binary. A DateTime goes as the client wrote it (PostgreSQL reads ISO
 *   8601 and rounds .NET's seventh digit to microseconds), never through a JS Date.
 * - Time-out: `SET LOCAL statement_timeout` ahead of a statement whose limit differs from the one already set in this
 *   transaction (SET LOCAL ends with the transaction, so nothing leaks into the pool). 57014 is Timeout.
 * - Row cap: the Execute asks for at most maxRows + 1 rows, so the server never sends more; one more than maxRows is
 *   QuotaExceeded, without any rows. With `firstRowOnly` (ReturnScalar) it asks for one row. A suspended portal is
 *   dropped by the transaction's next statement or its end.
 * - Every fault marks the transaction aborted (see the port); the object then refuses run and commit until rollback.
 *   A rollback while a statement runs cancels it first, so an abandoned request never waits for its own time-out.
 * - Values are read from the server's text form (see parseCell): bool a boolean, int2/int4/oid and float4/float8
 *   numbers, int8 a bigint, bytea a Uint8Array; everything else stays the server's text: numeric keeps its scale,
 *   date/timestamp/timestamptz are ISO (DateStyle ISO, session TimeZone UTC so timestamptz prints `+00`), uuid, json,
 *   time, interval and arrays are text. money is read as decimal text (lc_monetary C, symbol and grouping removed).
 * - Declared types: the OIDs of the built-in types map to names clrTypeOfDeclared knows; any other OID (enums, user
 *   types, arrays) is looked up once per Database with `format_type` on the statement's own connection.
 */
import pg from 'pg';
import type { ClrValueType } from '../../../idb/contract.ts';
import {
  DatabaseFault,
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
 * A cell from the server's text form of a value. Types not named here (numeric, date/time, uuid, json, arrays, …) stay
 * text.
 */
function parseCell(type: number, text: string | null): DataCell {
  if (text === null) return null;
  switch (type) {
    case 16:
      return text === 't';
    case 17:
      // `\x` then hex digits (bytea_output hex, the default since 9.0).
      return new Uint8Array(Buffer.from(text.slice(2), 'hex'));
    case 20:
      return BigInt(text);
    case 21:
    case 23:
    case 26:
    case 700:
    case 701:
      return Number(text); // also NaN, Infinity, -Infinity
    case 790:
      // lc_monetary C (set per connection) prints `$1,234.50` / `-$1,234.50`: the Decimal text is what is left.
      return text.replace(/[$,]/g, '');
    default:
      return text;
  }
}

/** Session settings every connection starts with (the startup packet's `options`), which the cells rely on. */
const SESSION_OPTIONS = ['DateStyle=ISO,YMD', 'TimeZone=UTC', 'lc_monetary=C', 'extra_float_digits=1']
  .map((setting) => `-c ${setting}`)
  .join(' ');

/** How long a new connection may take (pg waits without end by default). */
const CONNECT_TIMEOUT_MS = 30_000;

export function createPostgresDatabase(options: PostgresDatabaseOptions): Database {
  const config: pg.PoolConfig = {
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    application_name: 'idb-service',
    options: SESSION_OPTIONS,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  };
  const pool = new pg.Pool(config);
  // An idle connection that fails is dropped by the pool; without a listener its error would end the process.
  pool.on('error', () => {});
  const names = new Map<number, string>(TYPE_NAMES);

  /** The declared type names of result columns: built-ins from the table, others looked up once (format_type). */
  async function declaredTypes(client: pg.PoolClient, oids: number[]): Promise<(string | null)[]> {
    const missing = [...new Set(oids.filter((oid) => !names.has(oid)))];
    if (missing.length > 0) {
      // OIDs are unsigned integers from the protocol: safe as literals.
      const result = await client.query<[string, string]>({
        text: `SELECT oid::text, format_type(oid, NULL) FROM pg_type WHERE oid IN (${missing.join(',')})`,
        rowMode: 'array',
      });
      for (const [oid, name] of result.rows) names.set(Number(oid), name);
    }
    return oids.map((oid) => names.get(oid) ?? null);
  }

  async function connect(): Promise<pg.PoolClient> {
    try {
      const client = await pool.connect();
      // A connection that fails while in use: its statement fails (below); the error event must not end the process.
      if (!guarded.has(client)) {
        guarded.add(client);
        client.on('error', () => {});
      }
      return client;
    } catch (error) {
      throw toFault(error);
    }
  }

  const cancel = (client: pg.PoolClient, statement: PortalStatement) => cancelStatement(config, client, statement);

  /** A call's own transaction: its BEGIN and time-out go out with its statement (see PortalStatement). */
  async function open(access: 'read' | 'write', timeoutMs: number): Promise<PostgresTransaction> {
    const client = await connect();
    const begin = [access === 'read' ? 'BEGIN READ ONLY' : 'BEGIN', `SET LOCAL statement_timeout = ${timeoutMs}`];
    return new PostgresTransaction(client, declaredTypes, cancel, timeoutMs, begin);
  }

  /** A database request's transaction: BEGIN answered before the request is (its failure is the request's). */
  async function openRequest(access: 'read' | 'write'): Promise<PostgresTransaction> {
    const client = await connect();
    try {
      // Our own text: the simple protocol, two commands (see 'read' above).
      await client.query(access === 'read' ? 'BEGIN READ ONLY; SELECT 1' : 'BEGIN');
    } catch (error) {
      client.release(true);
      throw toFault(error);
    }
    return new PostgresTransaction(client, declaredTypes, cancel, undefined, undefined);
  }

  const database: Database = {
    dialect: 'postgres',
    async runAlone(access, text, values, limits) {
      const timeoutMs = Math.max(1, Math.ceil(limits.timeoutMs));
      // A writer's query runs as a reader's first, in one write with its ROLLBACK (a writer's needs the answer before
      // its COMMIT can be chosen: a second write). Should it write after all (a function that inserts, nextval, FOR
      // UPDATE), the server refuses it in the read-only transaction before it changes anything (25006), and it runs
      // again as a write. The SQLite backend does the same with its read-only connections.
      if (access === 'read' || READ_VERBS.has(firstWord(text) ?? '')) {
        const reader = await open('read', timeoutMs);
        try {
          return await reader.readAlone(text, values, limits);
        } catch (error) {
          await reader.rollback();
          if (access === 'read' || !(error instanceof ReadOnlyRefusal)) throw error;
        }
      }
      const transaction = await open('write', timeoutMs);
      try {
        return await transaction.runAlone(text, values, limits);
      } catch (error) {
        await transaction.rollback();
        throw error;
      }
    },
    begin: (access) => openRequest(access),
    async close() {
      await pool.end();
    },
  };
  return database;
}

/** Clients whose error event already has a listener (pool clients are reused). */
const guarded = new WeakSet<pg.PoolClient>();

const ABORTED = 'current transaction is aborted, commands ignored until end of transaction block';
const ABORTED_COMMIT = 'The transaction was aborted by an earlier error and has been rolled back.';
const ENDED = 'The transaction has already ended.';
/** A COMMIT of a transaction the server had already aborted answers ROLLBACK. */
const ROLLED_BACK = 'The transaction was rolled back by the database.';

class PostgresTransaction implements DatabaseTransaction {
  private state: 'open' | 'aborted' | 'ended' = 'open';
  /** Serializes calls: one statement at a time on the connection, and the time-out set for it. */
  private queue: Promise<unknown> = Promise.resolve();
  private running: PortalStatement | undefined;
  private released = false;
  /** A cancel request sent for a statement, until the server has taken it (see finish). */
  private cancelling: Promise<void> | undefined;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly declaredTypes: (client: pg.PoolClient, oids: number[]) => Promise<(string | null)[]>,
    private readonly cancel: (client: pg.PoolClient, statement: PortalStatement) => Promise<void>,
    /** The statement_timeout already set (or about to be, by `begin`) in this transaction, if any. */
    private timeoutMs: number | undefined,
    /** BEGIN and its settings, not sent yet: they go out ahead of the first statement, in its write. */
    private begin: string[] | undefined,
  ) {}

  run(sql: string, values: readonly SqlValue[], limits: StatementLimits): Promise<StatementResult> {
    // The serialized promise itself, which the queue already watches: a caller may look at its failure late.
    return this.serialize(async () => (await this.runNow(sql, values, limits, [])).result);
  }

  /**
   * A writer's call in a transaction of its own (begin, run and commit), in as few round trips as its answer allows.
   * A ReturnScalar sends its COMMIT in the statement's write: no row cap can refuse its answer once it ran, and after
   * a failed statement the server skips the COMMIT. Any other statement could still be refused by the row cap, so it
   * asks in the same write whether the transaction wrote anything (`txid_current_if_assigned`): if it did, the COMMIT
   * is awaited as before; if not, no COMMIT can fail, and it goes out without the answer waiting for it.
   */
  runAlone(sql: string, values: readonly SqlValue[], limits: StatementLimits): Promise<StatementResult> {
    return this.serialize(async () => {
      const firstRowOnly = limits.firstRowOnly === true;
      const { result, behind } = await this.runNow(sql, values, limits, [firstRowOnly ? 'COMMIT' : WROTE]);
      if (firstRowOnly) {
        if (behind[0]?.tag !== 'COMMIT') throw new DatabaseFault('SqlError', ROLLED_BACK, true);
        this.state = 'ended';
        this.release(false);
      } else if (behind[0]?.value != null) await this.commitNow();
      else {
        this.state = 'ended';
        void this.endWith('COMMIT');
      }
      return result;
    });
  }

  /**
   * A reader's call in a transaction of its own: its ROLLBACK goes out in the statement's write, so the call is one
   * write and one round trip, and the connection is free once the answer is in. A failed statement makes the server
   * skip the ROLLBACK: the caller's `rollback` sends it then.
   */
  readAlone(sql: string, values: readonly SqlValue[], limits: StatementLimits): Promise<StatementResult> {
    return this.serialize(async () => {
      const { result, behind } = await this.runNow(sql, values, limits, ['ROLLBACK']);
      this.state = 'ended';
      if (behind[0]?.tag === 'ROLLBACK') this.release(false);
      else await this.endWith('ROLLBACK');
      return result;
    });
  }

  commit(): Promise<void> {
    return this.serialize(() => this.commitNow());
  }

  private async commitNow(): Promise<void> {
    if (this.state !== 'open') {
      const ended = this.state === 'ended';
      await this.finish();
      throw new DatabaseFault('SqlError', ended ? ENDED : ABORTED_COMMIT, true);
    }
    this.state = 'ended';
    if (this.begin !== undefined) {
      // Nothing was ever sent: there is nothing to commit.
      this.release(false);
      return;
    }
    try {
      const result = await this.client.query('COMMIT');
      if (result.command !== 'COMMIT') throw new DatabaseFault('SqlError', ROLLED_BACK, true);
      this.release(false);
    } catch (error) {
      await this.endWith('ROLLBACK');
      throw toFault(error);
    }
  }

  async rollback(): Promise<void> {
    if (this.state === 'ended') return;
    this.state = 'ended';
    if (this.running !== undefined) this.cancelling = this.cancel(this.client, this.running);
    await this.queue.catch(() => {});
    await this.finish();
  }

  /** ROLLBACK and release, once; never throws. Not through the queue (commit calls it from inside). */
  private async finish(): Promise<void> {
    if (this.released) return;
    this.state = 'ended';
    if (this.begin !== undefined) {
      this.release(false);
      return;
    }
    // A cancel request travels on a connection of its own and may land after its statement is done, on whatever the
    // connection runs next: nothing more is sent here until the server has taken it.
    await this.cancelling;
    await this.endWith('ROLLBACK');
  }

  /**
   * Our own COMMIT or ROLLBACK, then the connection back to the pool; never rejects. A connection on which it failed
   * is broken: it has no transaction left, and is not given back for reuse.
   */
  private endWith(command: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    return this.client.query(command).then(
      () => this.release(false),
      () => this.release(true),
    );
  }

  private release(broken: boolean): void {
    if (this.released) return;
    this.released = true;
    this.client.release(broken);
  }

  private serialize<T>(task: () => Promise<T>): Promise<T> {
    const next = this.queue.then(task, task);
    this.queue = next.catch(() => {});
    return next;
  }

  private checkOpen(): void {
    if (this.state === 'aborted') throw new DatabaseFault('SqlError', ABORTED, true);
    if (this.state === 'ended') throw new DatabaseFault('SqlError', ENDED, true);
  }

  /** Runs a statement, and the statements `behind` it in the same write; their answers come back beside its result. */
  private async runNow(
    text: string,
    values: readonly SqlValue[],
    limits: StatementLimits,
    behind: readonly string[],
  ): Promise<{ result: StatementResult; behind: Answer['behind'] }> {
    this.checkOpen();
    // Refused before anything is sent, a BEGIN still waiting included.
    const control = transactionControl(text);
    if (control !== undefined) {
      this.state = 'aborted';
      throw new DatabaseFault(
        'AccessDenied',
        `${control} is not allowed in client SQL: the transaction is the service's (a database request's, or the call's own).`,
        true,
      );
    }
    const timeoutMs = Math.max(1, Math.ceil(limits.timeoutMs));
    const maxRows = Math.max(0, Math.floor(limits.maxRows));
    const firstRowOnly = limits.firstRowOnly === true;
    const ahead = this.begin ?? [];
    this.begin = undefined;
    if (this.timeoutMs !== timeoutMs) {
      ahead.push(`SET LOCAL statement_timeout = ${timeoutMs}`);
      this.timeoutMs = timeoutMs;
    }
    const statement = new PortalStatement(
      ahead,
      text,
      values.map(parameter),
      firstRowOnly ? 1 : Math.min(maxRows + 1, MAX_EXECUTE_ROWS),
      behind,
    );
    this.running = statement;
    try {
      this.client.query(statement);
      const answer = await statement.answer;
      if (!firstRowOnly && answer.rows.length > maxRows)
        throw new DatabaseFault('QuotaExceeded', `The result has more than ${maxRows} rows.`, true);
      const declared = await this.declaredTypes(
        this.client,
        answer.fields.map((f) => f.dataTypeID),
      );
      const columns: ResultColumn[] = answer.fields.map((f, i) => ({
        name: f.name,
        declaredType: declared[i] ?? null,
      }));
      const rows = answer.rows.map((row) => answer.fields.map((f, i) => parseCell(f.dataTypeID, row[i] ?? null)));
      return {
        result: { columns, rows, rowsAffected: firstRowOnly ? -1 : rowsAffected(answer.command) },
        behind: answer.behind,
      };
    } catch (error) {
      this.state = this.state === 'ended' ? 'ended' : 'aborted';
      throw toFault(error);
    } finally {
      this.running = undefined;
    }
  }
}

/** Statements that end the transaction or open another (PREPARE only as PREPARE TRANSACTION). */
const TRANSACTION_CONTROL = new Set(['BEGIN', 'START', 'COMMIT', 'END', 'ROLLBACK', 'ABORT', 'SAVEPOINT', 'RELEASE']);

/**
 * The verb of a statement of transaction control, if the text is one. The server would run it: a client's COMMIT
 * inside a database request committed the request's work so far, every later statement of the request then ran in a
 * transaction of its own, and the request's rollback undid none of them. (Inside DO and CALL the server itself
 * refuses to end a transaction block.) Leading white space and comments (line comments, nested block comments) are skipped.
 */
function transactionControl(text: string): string | undefined {
  const words = wordsOf(text);
  const verb = words.next().value;
  if (verb === undefined) return undefined;
  if (TRANSACTION_CONTROL.has(verb)) return verb;
  if (verb !== 'PREPARE') return undefined;
  return words.next().value === 'TRANSACTION' ? 'PREPARE TRANSACTION' : undefined;
}

/** The verbs of statements that read, unless a function they call writes (see runAlone). */
const READ_VERBS = new Set(['SELECT', 'VALUES', 'TABLE']);

/** The first word of the statement, upper case (see wordsOf). */
function firstWord(text: string): string | undefined {
  return wordsOf(text).next().value;
}

/**
 * The statement's leading words, upper case, read in place (a statement's text can be megabytes). White space and
 * comments (line comments, nested block comments) before each are skipped; they end at the first thing not a word.
 */
function* wordsOf(text: string): Generator<string, undefined> {
  let at = 0;
  for (;;) {
    for (;;) {
      while (at < text.length && /\s/.test(text[at]!)) at++;
      if (text.startsWith('--', at)) {
        const end = text.indexOf('\n', at);
        at = end < 0 ? text.length : end + 1;
      } else if (text.startsWith('/*', at)) {
        let depth = 0;
        while (at < text.length) {
          if (text.startsWith('/*', at)) {
            depth++;
            at += 2;
          } else if (text.startsWith('*/', at)) {
            at += 2;
            if (--depth === 0) break;
          } else at++;
        }
      } else break;
    }
    WORD.lastIndex = at;
    const found = WORD.exec(text)?.[0];
    if (found === undefined) return undefined;
    at += found.length;
    yield found.toUpperCase();
  }
}

const WORD = /[A-Za-z_]+/y;

/** The most rows one Execute can ask for (an int32); 0 would mean all of them. */
const MAX_EXECUTE_ROWS = 0x7fffffff;

interface Field {
  name: string;
  dataTypeID: number;
}

interface Answer {
  fields: Field[];
  rows: (string | null)[][];
  /** The statement's command tag (`INSERT 0 3`); undefined when its portal was suspended at the row limit. */
  command: string | undefined;
  /** The statements sent behind it, in order: each one's command tag and first value. */
  behind: { tag: string; value: string | null }[];
}

/** Whether the transaction has written anything: a transaction id once it has (PostgreSQL 10 and later). */
const WROTE = 'SELECT txid_current_if_assigned()';

/** The messages of pg's Connection a PortalStatement sends. */
interface Wire {
  stream: { cork(): void; uncork(): void };
  parse(message: { text: string; name: string; types: number[] }): void;
  bind(message: { portal: string; statement: string; values: (string | Buffer | null)[] }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string; rows: number }): void;
  sync(): void;
}

/**
 * One statement as a pg Submittable, in one write: the statements `ahead` of it (BEGIN, SET LOCAL: Parse, Bind and
 * Execute each, no rows), then its Parse with the parameters' types, Bind, Describe of the portal, Execute of at most
 * `rowLimit` rows, the statements `behind` it (COMMIT) and Sync. The client hands it the messages of the answer in order; an error ends it (the server
 * skips the rest up to the Sync, and the client gives the ReadyForQuery that follows to no statement).
 */
class PortalStatement {
  readonly answer: Promise<Answer>;
  private fields: Field[] = [];
  private readonly rows: (string | null)[][] = [];
  private command: string | undefined;
  private readonly behindAnswers: Answer['behind'] = [];
  /** The first value of the statement behind whose answer comes next. */
  private behindValue: string | null = null;
  /** Which statement's answer comes next: those ahead (counted down), the statement itself, or those behind. */
  private aheadLeft: number;
  private statementDone = false;
  private copyRefused = false;
  private settle!: { resolve: (answer: Answer) => void; reject: (error: unknown) => void };

  constructor(
    private readonly ahead: readonly string[],
    private readonly text: string,
    private readonly parameters: readonly Parameter[],
    private readonly rowLimit: number,
    private readonly behind: readonly string[],
  ) {
    this.aheadLeft = ahead.length;
    this.answer = new Promise<Answer>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
  }

  submit(connection: pg.Connection): void {
    // pg's own messages (pg-protocol), typed here as pg sends them (its type declarations disagree).
    const wire = connection as unknown as Wire;
    // Our own statements around the client's: no parameters, no rows described.
    const plain = (text: string) => {
      wire.parse({ text, name: '', types: [] });
      wire.bind({ portal: '', statement: '', values: [] });
      wire.execute({ portal: '', rows: 0 });
    };
    wire.stream.cork();
    try {
      this.ahead.forEach(plain);
      wire.parse({ text: this.text, name: '', types: this.parameters.map((p) => p.type) });
      wire.bind({ portal: '', statement: '', values: this.parameters.map((p) => p.value) });
      wire.describe({ type: 'P', name: '' });
      wire.execute({ portal: '', rows: this.rowLimit });
      this.behind.forEach(plain);
      wire.sync();
    } finally {
      wire.stream.uncork();
    }
  }

  handleRowDescription(message: { fields: Field[] }): void {
    this.fields = message.fields;
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    if (this.statementDone) this.behindValue = message.fields[0] ?? null;
    else this.rows.push(message.fields);
  }

  handleCommandComplete(message: { text: string }): void {
    // One CommandComplete for each statement ahead, then the statement's (unless suspended or empty), then behind's.
    if (this.aheadLeft > 0) this.aheadLeft--;
    else if (!this.statementDone) {
      this.command = message.text;
      this.statementDone = true;
    } else {
      this.behindAnswers.push({ tag: message.text, value: this.behindValue });
      this.behindValue = null;
    }
  }

  handlePortalSuspended(): void {
    this.statementDone = true;
  }

  handleEmptyQuery(): void {
    this.statementDone = true;
  }

  /**
   * `COPY … FROM STDIN`: there is no stream to read from, so the statement fails. The server ignores a Sync while it
   * copies in (the batch's went by), and after the failure skips to the next: one more. COPY TO STDOUT's data is
   * dropped.
   */
  handleCopyInResponse(connection: { sendCopyFail(message: string): void; sync(): void }): void {
    this.copyRefused = true;
    connection.sendCopyFail('COPY FROM STDIN is not supported here.');
    connection.sync();
  }

  handleCopyData(): void {}

  handleError(error: unknown): void {
    // The server reports the refused copy as canceled (57014), which is not a time-out.
    if (this.copyRefused)
      error = Object.assign(new Error('COPY FROM STDIN is not supported: the service has no data to send.'), {
        code: '0A000',
      });
    this.settle.reject(error);
  }

  handleReadyForQuery(): void {
    this.settle.resolve({ fields: this.fields, rows: this.rows, command: this.command, behind: this.behindAnswers });
  }
}

/**
 * Cancels a running statement; resolves once the server has taken the request, never rejects. The server signals the
 * statement's backend before it closes the request's connection, and a signal that finds the backend waiting for a
 * command is dropped (postgres.c, DoingCommandRead): what is sent on the connection after this resolves cannot be
 * cancelled by it. Bounded, since a statement not yet sent is only taken off the queue.
 */
function cancelStatement(config: pg.PoolConfig, client: pg.PoolClient, statement: PortalStatement): Promise<void> {
  // pg's Client.cancel, called on a client of its own: it connects and sends the request when the statement is the
  // one running, and otherwise takes it off the queue.
  const canceller = new pg.Client(config) as unknown as {
    connection: NodeJS.EventEmitter;
    cancel(client: unknown, query: unknown): void;
  };
  if ((client as unknown as { activeQuery: unknown }).activeQuery !== statement) {
    // Still queued behind the answer to an earlier statement (or answered already, which this leaves as it was).
    canceller.cancel(client, statement);
    statement.handleError(Object.assign(new Error('canceling statement due to user request'), { code: '57014' }));
    return Promise.resolve();
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  return new Promise<void>((resolve) => {
    timer = setTimeout(resolve, CANCEL_WAIT_MS);
    canceller.connection.once('end', () => resolve());
    canceller.connection.on('error', () => resolve());
    canceller.cancel(client, statement);
  }).finally(() => clearTimeout(timer));
}

/** The longest finish waits for a cancel request to be taken (it takes a few milliseconds). */
const CANCEL_WAIT_MS = 5000;

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

/** A parameter as Bind sends it: its type for Parse, its text (or bytea's bytes, in binary) or null. */
interface Parameter {
  type: number;
  value: string | Buffer | null;
}

function parameter(value: SqlValue): Parameter {
  if (value === null) return { type: 0, value: null };
  switch (value.type) {
    case 'string':
      return { type: 0, value: value.value };
    case 'base64Binary':
      return { type: 17, value: Buffer.from(value.value.buffer, value.value.byteOffset, value.value.byteLength) };
    case 'boolean':
      return { type: 16, value: value.value ? 't' : 'f' };
    case 'dateTime':
      // With an offset or Z the value is an instant (timestamptz), else a wall-clock time (timestamp).
      return { type: /(?:Z|[+-]\d\d:?\d\d)$/i.test(value.value) ? 1184 : 1114, value: value.value };
    default:
      // As text: NaN and ±Infinity are spelled as PostgreSQL reads them, a bigint keeps every digit.
      return { type: PARAMETER_TYPES[value.type], value: String(value.value) };
  }
}

/** Rows affected from a command tag (`INSERT 0 3`, `UPDATE 2`); -1 for other commands and a suspended portal. */
function rowsAffected(command: string | undefined): number {
  if (command === undefined) return -1;
  switch (command.split(' ', 1)[0]) {
    case 'INSERT':
    case 'UPDATE':
    case 'DELETE':
    case 'MERGE':
      return Number(command.slice(command.lastIndexOf(' ') + 1)) || 0;
    default:
      return -1;
  }
}

/** A write refused in a read-only transaction (25006): a writer's query that wrote runs again as a write (runAlone). */
class ReadOnlyRefusal extends DatabaseFault {}

function toFault(error: unknown): DatabaseFault {
  if (error instanceof DatabaseFault) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === '25006') return new ReadOnlyRefusal('AccessDenied', message, true);
  let fault: DatabaseFaultName = 'SqlError';
  if (code === '57014') fault = 'Timeout';
  else if (code === '42501') fault = 'AccessDenied';
  return new DatabaseFault(fault, message, true);
}
