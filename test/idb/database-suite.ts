import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clrTypeOfDeclared } from '../../src/idb/column-types.ts';
import {
  DatabaseFault,
  type Database,
  type DatabaseTransaction,
  type SqlValue,
  type StatementLimits,
} from '../../src/idb/database.ts';
import { bindParameters } from '../../src/idb/sql-parameters.ts';
import { createPostgresDatabase } from '../../src/runtime/node/idb/postgres-database.ts';
import { createSqliteDatabase } from '../../src/runtime/node/idb/sqlite-database.ts';
import { startPostgres } from '../support/peers/postgres.ts';

export const LIMITS: StatementLimits = { timeoutMs: 5000, maxRows: 1000 };
/** How long a SQLite writer waits for another (short, so the waiting test is quick). */
const BUSY_TIMEOUT_MS = 300;

export interface Backend {
  name: 'sqlite' | 'postgres' | 'sqlserver';
  open(): Promise<{ db: Database; stop(): Promise<void> }>;
  /** `count(*)` as the backend returns it: int8 on PostgreSQL, an integer on SQLite. */
  count(n: number): unknown;
  /** A FROM item `g` with one column `x` counting from `from` to `to`. */
  series(from: number, to: number): string;
  /** A statement that runs `seconds` (PostgreSQL) or until its time-out (SQLite and Babelfish have no sleep). */
  sleep(seconds: number): string;
  /** `$n` markers for the backend's driver (on SQL Server `@pn`, the names its adapter gives unnamed values). */
  sql(text: string): string;
}

export const postgres: Backend = {
  name: 'postgres',
  async open() {
    const pg = await startPostgres();
    // Small batches, so results here span several (a result of a whole batch once lost its columns).
    const db = createPostgresDatabase({ url: pg.url, maxConnections: 4, batchRows: 10 });
    return {
      db,
      async stop() {
        await db.close();
        await pg.stop();
      },
    };
  },
  count: (n) => BigInt(n),
  series: (from, to) => `generate_series(${from}, ${to}) AS g(x)`,
  sleep: (seconds) => `SELECT pg_sleep(${seconds}), 1 AS done`,
  sql: (text) => text,
};

export const ENDLESS = 1e12;
export const sqlite: Backend = {
  name: 'sqlite',
  async open() {
    const dir = await mkdtemp(join(tmpdir(), 'idb-sqlite-'));
    const db = await createSqliteDatabase({
      path: join(dir, 'test.sqlite'),
      busyTimeoutMs: BUSY_TIMEOUT_MS,
      maxConnections: 4,
    });
    return {
      db,
      async stop() {
        await db.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
  count: (n) => n,
  series: (from, to) =>
    `(WITH RECURSIVE s(x) AS (SELECT ${from} UNION ALL SELECT x + 1 FROM s WHERE x < ${to}) SELECT x FROM s) AS g`,
  sleep: () => `SELECT count(*) FROM ${sqlite.series(1, ENDLESS)}`,
  sql: (text) => text.replace(/\$(\d+)/g, '?$1'),
};

/** Runs `work` with a fresh temp folder, removed afterwards. */
export async function inTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'idb-database-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function fault(promise: Promise<unknown>): Promise<DatabaseFault> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(DatabaseFault);
    return error as DatabaseFault;
  }
  throw new Error('expected a DatabaseFault');
}

/** The whole suite on one backend; `*.test.ts` files beside this one pick the backend. */
export function databaseSuite(b: Backend): void {
  describe(`Database: ${b.name}`, () => {
    let db: Database;
    let stop: () => Promise<void>;
    const onSqlite = b.name === 'sqlite';
    const tsql = b.name === 'sqlserver';
    // No sleep statement: a slow statement runs until its time-out.
    const noSleep = onSqlite || tsql;

    beforeAll(async () => {
      ({ db, stop } = await b.open());
      const t = await db.begin('write');
      await t.run(`CREATE TABLE items (id int PRIMARY KEY, name ${tsql ? 'nvarchar(100)' : 'text'})`, [], LIMITS);
      await t.commit();
    }, 60_000);

    afterAll(async () => {
      await stop?.();
    });

    async function inTransaction<T>(
      access: 'read' | 'write',
      work: (t: DatabaseTransaction) => Promise<T>,
    ): Promise<T> {
      const t = await db.begin(access);
      try {
        return await work(t);
      } finally {
        await t.rollback();
      }
    }

    async function count(where = tsql ? '1 = 1' : 'true'): Promise<unknown> {
      return inTransaction(
        'read',
        async (t) => (await t.run(`SELECT count(*) FROM items WHERE ${where}`, [], LIMITS)).rows[0]![0],
      );
    }

    it.runIf(b.name === 'postgres')('round-trips the mapped types with their declared type names', async () => {
      const big = new Uint8Array(1024 * 1024).map((_, i) => (i * 7) & 0xff);
      const result = await inTransaction('write', async (t) => {
        await t.run(
          `CREATE TABLE types (i int, s smallint, b bigint, n numeric(12,3), m money, r real, d double precision, f boolean, t text, v varchar(10),
          c char(3), y bytea, ts timestamp(6), tz timestamptz, dt date, u uuid, j jsonb)`,
          [],
          LIMITS,
        );
        await t.run(
          `INSERT INTO types VALUES (-2147483648, 32767, 9223372036854775807, 12345.500, 1234.5, 1.5, 0.1, true, 'Grüße 😀', 'ab', 'x',
          '\\x00ff10', '2024-02-29 23:59:59.123456', '2024-02-29 23:59:59.5+01', '2024-02-29', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '{"a": [1]}')`,
          [],
          LIMITS,
        );
        await t.run('INSERT INTO types (i) VALUES (NULL)', [], LIMITS);
        await t.run('INSERT INTO types (i, y) VALUES (1, $1)', [{ type: 'base64Binary', value: big }], LIMITS);
        return t.run('SELECT * FROM types ORDER BY i NULLS LAST', [], LIMITS);
      });
      const declared = result.columns.map((c) => c.declaredType);
      expect(declared).toEqual([
        'int4',
        'int2',
        'int8',
        'numeric',
        'money',
        'float4',
        'float8',
        'bool',
        'text',
        'varchar',
        'character',
        'bytea',
        'timestamp',
        'timestamptz',
        'date',
        'uuid',
        'jsonb',
      ]);
      expect(declared.map(clrTypeOfDeclared)).toEqual([
        'Int32',
        'Int16',
        'Int64',
        'Decimal',
        'Decimal',
        'Single',
        'Double',
        'Boolean',
        'String',
        'String',
        'String',
        'Byte[]',
        'DateTime',
        'DateTime',
        'DateTime',
        'Guid',
        undefined,
      ]);
      expect(result.columns.map((c) => c.name)).toEqual([
        'i',
        's',
        'b',
        'n',
        'm',
        'r',
        'd',
        'f',
        't',
        'v',
        'c',
        'y',
        'ts',
        'tz',
        'dt',
        'u',
        'j',
      ]);
      const [full, withBytes, nulls] = result.rows;
      expect(full).toEqual([
        -2147483648,
        32767,
        9223372036854775807n,
        '12345.500',
        '1234.50',
        1.5,
        0.1,
        true,
        'Grüße 😀',
        'ab',
        'x  ',
        new Uint8Array([0, 255, 16]),
        '2024-02-29 23:59:59.123456',
        '2024-02-29 22:59:59.5+00',
        '2024-02-29',
        'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
        '{"a": [1]}',
      ]);
      expect(full![11]).toBeInstanceOf(Uint8Array);
      expect(withBytes![0]).toBe(1);
      const bytes = withBytes![11] as Uint8Array;
      expect(bytes).toBeInstanceOf(Uint8Array);
      expect(Buffer.compare(bytes, big)).toBe(0); // not toEqual: element-wise comparison of 1 MiB takes seconds
      expect(nulls).toEqual(Array(17).fill(null));
    });

    it.runIf(onSqlite)(
      'round-trips SQLite values with the declared types as written; expressions have none',
      async () => {
        const big = new Uint8Array(1024 * 1024).map((_, i) => (i * 7) & 0xff);
        const result = await inTransaction('write', async (t) => {
          await t.run(
            `CREATE TABLE types (i integer, s smallint, b bigint, n numeric(12,3), r real, d double precision, f boolean, t text, v varchar(10),
          y blob, ts datetime, u uniqueidentifier, x)`,
            [],
            LIMITS,
          );
          await t.run(
            `INSERT INTO types VALUES (-2147483648, 32767, 9223372036854775807, 12345.500, 1.5, 0.1, true, 'Grüße 😀', 'ab',
          x'00ff10', '2024-02-29 23:59:59.123456', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1e999)`,
            [],
            LIMITS,
          );
          await t.run('INSERT INTO types (i) VALUES (NULL)', [], LIMITS);
          await t.run(
            'INSERT INTO types (i, y, x) VALUES (1, ?1, ?2)',
            [
              { type: 'base64Binary', value: big },
              { type: 'long', value: -(2n ** 62n) },
            ],
            LIMITS,
          );
          return t.run('SELECT *, i + 1 AS e FROM types ORDER BY i NULLS LAST', [], LIMITS);
        });
        const declared = result.columns.map((c) => c.declaredType);
        // libsql reports the names of SQLite's own types in upper case, others as written.
        expect(declared).toEqual([
          'INTEGER',
          'smallint',
          'bigint',
          'numeric(12,3)',
          'REAL',
          'double precision',
          'boolean',
          'TEXT',
          'varchar(10)',
          'BLOB',
          'datetime',
          'uniqueidentifier',
          null,
          null,
        ]);
        expect(declared.map(clrTypeOfDeclared)).toEqual([
          'Int32',
          'Int16',
          'Int64',
          'Decimal',
          'Single',
          'Double',
          'Boolean',
          'String',
          'String',
          'Byte[]',
          'DateTime',
          'Guid',
          undefined,
          undefined,
        ]);
        expect(result.columns.map((c) => c.name)).toEqual([
          'i',
          's',
          'b',
          'n',
          'r',
          'd',
          'f',
          't',
          'v',
          'y',
          'ts',
          'u',
          'x',
          'e',
        ]);
        const [full, withBytes, nulls] = result.rows;
        expect(full).toEqual([
          -2147483648,
          32767,
          9223372036854775807n, // beyond Number.MAX_SAFE_INTEGER: a bigint
          12345.5, // NUMERIC affinity stores a REAL
          1.5,
          0.1,
          1, // SQLite has no booleans
          'Grüße 😀',
          'ab',
          new Uint8Array([0, 255, 16]),
          '2024-02-29 23:59:59.123456',
          'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
          Infinity,
          -2147483647,
        ]);
        expect(full![9]).toBeInstanceOf(Uint8Array);
        expect(withBytes![0]).toBe(1);
        expect(withBytes![12]).toBe(-(2n ** 62n));
        const bytes = withBytes![9] as Uint8Array;
        expect(bytes.constructor).toBe(Uint8Array);
        expect(bytes.byteLength).toBe(bytes.buffer.byteLength); // its own buffer, not a view into a larger one
        expect(Buffer.compare(bytes, big)).toBe(0);
        expect(nulls).toEqual(Array(14).fill(null));
      },
    );

    it.runIf(b.name === 'postgres')('binds parameters from bindParameters, null included', async () => {
      const bound = bindParameters<SqlValue>(
        'SELECT @a::int + 1 AS a, @b::text AS b, @c::numeric AS c, @nothing::text AS n, @when::timestamptz AS w, @big::int8 AS g, @a::int AS again',
        [
          { name: 'a', value: { type: 'int', value: 41 } },
          { name: '@B', value: { type: 'string', value: 'x @a y' } },
          { name: 'c', value: { type: 'decimal', value: '1.10' } },
          { name: 'nothing', value: null },
          { name: 'when', value: { type: 'dateTime', value: '2024-01-02T03:04:05.678Z' } },
          { name: 'big', value: { type: 'long', value: 2n ** 62n } },
        ],
        'postgres',
      );
      if (!bound.ok) throw new Error(bound.message);
      const result = await inTransaction('read', (t) => t.run(bound.sql, bound.values, LIMITS));
      expect(result.rows).toEqual([[42, 'x @a y', '1.10', null, '2024-01-02 03:04:05.678+00', 2n ** 62n, 41]]);
      expect(result.columns.map((c) => c.declaredType)).toEqual([
        'int4',
        'text',
        'numeric',
        'text',
        'timestamptz',
        'int8',
        'int4',
      ]);
    });

    it.runIf(onSqlite)(
      'binds parameters from bindParameters: null, booleans, non-ASCII text, bigint and a 1 MiB blob',
      async () => {
        const blob = new Uint8Array(1024 * 1024 + 3).map((_, i) => (i * 13) & 0xff).subarray(3); // a view with an offset
        const bound = bindParameters<SqlValue>(
          `SELECT @a + 1 AS a, @b AS b, @nothing AS n, typeof(@nothing) AS nt, @yes AS yes, @no AS no, @big AS g, @half AS h,
        @blob AS blob, length(@blob) AS len, typeof(@blob) AS bt, @a AS again, '@a' AS literal`,
          [
            { name: 'a', value: { type: 'int', value: 41 } },
            { name: '@B', value: { type: 'string', value: 'x @a y Grüße 😀 日本' } },
            { name: 'nothing', value: null },
            { name: 'yes', value: { type: 'boolean', value: true } },
            { name: 'no', value: { type: 'boolean', value: false } },
            { name: 'big', value: { type: 'long', value: 2n ** 62n } },
            { name: 'half', value: { type: 'double', value: 0.5 } },
            { name: 'blob', value: { type: 'base64Binary', value: blob } },
          ],
          'sqlite',
        );
        if (!bound.ok) throw new Error(bound.message);
        const result = await inTransaction('read', (t) => t.run(bound.sql, bound.values, LIMITS));
        const [row] = result.rows;
        expect(row!.slice(0, 8)).toEqual([42, 'x @a y Grüße 😀 日本', null, 'null', 1, 0, 2n ** 62n, 0.5]);
        expect(Buffer.compare(row![8] as Uint8Array, blob)).toBe(0);
        expect(row!.slice(9)).toEqual([1024 * 1024, 'blob', 41, '@a']);
        expect(result.columns.every((c) => c.declaredType === null)).toBe(true);

        // A value SQLite cannot hold is refused before it reaches SQLite, and the transaction is aborted.
        const t = await db.begin('read');
        const refused = await fault(t.run('SELECT ?1', [{ type: 'long', value: 2n ** 63n }], LIMITS));
        expect(refused).toMatchObject({ fault: 'SqlError', transactionAborted: true });
        expect(refused.message).toMatch(/64-bit/);
        expect((await fault(t.run('SELECT 1', [], LIMITS))).message).toMatch(/aborted/);
        await t.rollback();
      },
    );

    it('makes committed writes visible to other transactions, rolled back ones never', async () => {
      const writer = await db.begin('write');
      await writer.run(
        b.sql('INSERT INTO items VALUES ($1, $2)'),
        [
          { type: 'int', value: 1 },
          { type: 'string', value: 'committed' },
        ],
        LIMITS,
      );
      expect(await count('id = 1')).toBe(b.count(0)); // not visible before the commit
      await writer.commit();
      expect(await count('id = 1')).toBe(b.count(1));

      const undone = await db.begin('write');
      await undone.run(
        b.sql('INSERT INTO items VALUES ($1, $2)'),
        [
          { type: 'int', value: 2 },
          { type: 'string', value: 'rolled back' },
        ],
        LIMITS,
      );
      await undone.rollback();
      await undone.rollback(); // a second rollback does nothing
      expect(await count('id = 2')).toBe(b.count(0));
      expect((await fault(undone.run('SELECT 1', [], LIMITS))).fault).toBe('SqlError');
    });

    it.skipIf(tsql)('reports rows affected for INSERT, UPDATE and DELETE, and -1 otherwise', async () => {
      await inTransaction('write', async (t) => {
        expect((await t.run('CREATE TABLE counted (x int)', [], LIMITS)).rowsAffected).toBe(-1);
        expect((await t.run(`INSERT INTO counted SELECT x FROM ${b.series(1, 7)}`, [], LIMITS)).rowsAffected).toBe(7);
        expect((await t.run('UPDATE counted SET x = x + 1 WHERE x > 4', [], LIMITS)).rowsAffected).toBe(3);
        expect((await t.run('UPDATE counted SET x = 0 WHERE false', [], LIMITS)).rowsAffected).toBe(0);
        const returning = await t.run('DELETE FROM counted WHERE x < 3 RETURNING x', [], LIMITS);
        expect(returning.rowsAffected).toBe(2);
        expect(returning.rows).toEqual([[1], [2]]);
        const select = await t.run('SELECT x FROM counted', [], LIMITS);
        expect(select.rowsAffected).toBe(-1);
        expect(select.rows).toHaveLength(5);
        const empty = await t.run('SELECT x, CAST(x AS text) AS t FROM counted WHERE false', [], LIMITS);
        const declared = onSqlite ? ['INT', null] : ['int4', 'text'];
        expect(empty).toEqual({
          columns: [
            { name: 'x', declaredType: declared[0] },
            { name: 't', declaredType: declared[1] },
          ],
          rows: [],
          rowsAffected: -1,
        });
        // WITH before the verb, in both dialects.
        expect(
          (
            await t.run(
              'WITH doomed AS (SELECT 6 AS v) DELETE FROM counted WHERE x IN (SELECT v FROM doomed)',
              [],
              LIMITS,
            )
          ).rowsAffected,
        ).toBe(1);
        const cte = await t.run(
          'WITH RECURSIVE w(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM w WHERE v < 3) SELECT v FROM w',
          [],
          LIMITS,
        );
        expect(cte).toMatchObject({ rows: [[1], [2], [3]], rowsAffected: -1 });
        if (onSqlite) {
          expect((await t.run('REPLACE INTO counted (rowid, x) VALUES (1, 100)', [], LIMITS)).rowsAffected).toBe(1);
          expect(
            await t.run('WITH n(v) AS (SELECT 9) INSERT INTO counted SELECT v FROM n RETURNING x, x * 2', [], LIMITS),
          ).toMatchObject({ rows: [[9, 18]], rowsAffected: 1 });
          expect((await t.run('CREATE INDEX counted_x ON counted (x)', [], LIMITS)).rowsAffected).toBe(-1);
          expect(await t.run('  -- nothing but a comment', [], LIMITS)).toEqual({
            columns: [],
            rows: [],
            rowsAffected: -1,
          });
        }
      });
    });

    it("refuses a 'read' transaction's writes as AccessDenied", async () => {
      const t = await db.begin('read');
      const refused = await fault(
        t.run(b.sql('INSERT INTO items VALUES (10, $1)'), [{ type: 'string', value: 'reader' }], LIMITS),
      );
      expect(refused.fault).toBe('AccessDenied');
      expect(refused.transactionAborted).toBe(true);
      expect(refused.message).toMatch(
        onSqlite ? /attempt to write a readonly database/ : tsql ? /permission/ : /read-only transaction/,
      );
      expect(refused.stack ?? '').not.toContain('postgres/src');
      await t.rollback();

      if (onSqlite) {
        // SQLite refuses it on the connection: DDL and a pragma to lift it are refused too.
        for (const sql of ['CREATE TABLE reader_made (x)', 'DELETE FROM items', 'PRAGMA query_only = 0']) {
          expect(await inTransaction('read', (reader) => fault(reader.run(sql, [], LIMITS)))).toMatchObject({
            fault: 'AccessDenied',
            transactionAborted: true,
          });
        }
      } else if (tsql) {
        // The readers' login has SELECT only: DDL and deletes are refused by the server's permissions.
        for (const sql of ['CREATE TABLE reader_made (x int)', 'DELETE FROM items']) {
          expect(await inTransaction('read', (reader) => fault(reader.run(sql, [], LIMITS))), sql).toMatchObject({
            fault: 'AccessDenied',
            transactionAborted: true,
          });
        }
      } else {
        await inTransaction('read', async (reader) => {
          const escaped = await fault(reader.run('SET TRANSACTION READ WRITE', [], LIMITS));
          expect(escaped).toMatchObject({ fault: 'SqlError', transactionAborted: true });
          expect(escaped.message).toMatch(/read-write mode must be set before any query/);
          expect((await fault(reader.run('INSERT INTO items VALUES (11, null)', [], LIMITS))).fault).toBe('SqlError'); // aborted: refused before reaching the server
        });
        await inTransaction('read', async (reader) => {
          const viaConfig = await fault(
            reader.run("SELECT set_config('transaction_read_only', 'off', true)", [], LIMITS),
          );
          expect(viaConfig.message).toMatch(/read-write mode must be set before any query/);
        });
      }
      expect(await count('id in (10, 11)')).toBe(b.count(0));
    });

    it.runIf(onSqlite)(
      'refuses ATTACH, DETACH, PRAGMA, transaction control and SAVEPOINT in client SQL as AccessDenied',
      async () => {
        const elsewhere = join(tmpdir(), `idb-attach-${process.pid}-${Date.now()}.sqlite`);
        const statements = [
          `ATTACH '${elsewhere}' AS other`,
          'DETACH main',
          'PRAGMA foreign_keys = OFF',
          'PRAGMA journal_mode',
          "SELECT * FROM pragma_table_info('items')",
          'BEGIN',
          'COMMIT',
          'ROLLBACK',
          'SAVEPOINT s',
          'RELEASE s',
        ];
        for (const access of ['read', 'write'] as const) {
          for (const sql of statements) {
            const refused = await inTransaction(access, (t) => fault(t.run(sql, [], LIMITS)));
            expect(refused, `${access}: ${sql}`).toMatchObject({ fault: 'AccessDenied', transactionAborted: true });
            expect(refused.message).toMatch(/Not authorized/);
          }
        }
        expect(existsSync(elsewhere)).toBe(false);
      },
    );

    it('refuses several commands in one statement, so COMMIT cannot escape the transaction', async () => {
      const t = await db.begin('write');
      const refused = await fault(t.run("COMMIT; INSERT INTO items VALUES (20, 'escaped')", [], LIMITS));
      expect(refused.fault).toBe('SqlError');
      // T-SQL runs batches (SqlCommand does): the COMMIT ends only the inner of two transaction levels, and the
      // adapter finds the level gone after the batch.
      expect(refused.message).toMatch(
        onSqlite ? /more than one statement/ : tsql ? /ended the request.s transaction/ : /multiple commands/,
      );
      expect(refused.transactionAborted).toBe(true);
      const commit = await fault(t.commit()); // an aborted transaction cannot be committed; it is rolled back
      expect(commit.message).toMatch(/rolled back/);
      await t.rollback(); // after that, rollback does nothing
      expect(await count('id = 20')).toBe(b.count(0));

      const syntax = await inTransaction('write', (w) => fault(w.run(tsql ? 'SELECT 1 FROM' : 'SELEC 1', [], LIMITS)));
      expect(syntax).toMatchObject({ fault: 'SqlError', transactionAborted: true });
      expect(syntax.message).toMatch(/syntax error/);
    });

    it.runIf(onSqlite)(
      'runs one statement with trailing semicolons and comments, and refuses any second statement unrun',
      async () => {
        await inTransaction('write', async (t) => {
          expect((await t.run('SELECT 1;', [], LIMITS)).rows).toEqual([[1]]);
          expect((await t.run('SELECT 2; ; -- done\n/* really */', [], LIMITS)).rows).toEqual([[2]]);
          expect((await t.run(';; SELECT 3', [], LIMITS)).rows).toEqual([[3]]);
          const quoted = await t.run('SELECT \';\' AS a, 1 AS "x;y", 2 AS [p;q], 3 AS `r;s` /* ; */ -- ;', [], LIMITS);
          expect(quoted.rows).toEqual([[';', 1, 2, 3]]);
          expect(quoted.columns.map((c) => c.name)).toEqual(['a', 'x;y', 'p;q', 'r;s']);
          // A trigger's body has semicolons of its own; it ends at END.
          await t.run('CREATE TABLE audit (id int)', [], LIMITS);
          await t.run(
            'CREATE TEMP TRIGGER items_audit AFTER INSERT ON items BEGIN INSERT INTO audit VALUES (new.id); SELECT 1; END;',
            [],
            LIMITS,
          );
          await t.run("INSERT INTO items VALUES (21, 'audited')", [], LIMITS);
          expect((await t.run('SELECT id FROM audit', [], LIMITS)).rows).toEqual([[21]]);
        });
        for (const sql of [
          'SELECT 1; DELETE FROM items',
          "SELECT 'a;' ; DELETE FROM items",
          'SELECT 1 -- x\n; DELETE FROM items',
          'CREATE TEMP TRIGGER t2 AFTER INSERT ON items BEGIN SELECT 1; END; DELETE FROM items',
        ]) {
          const w = await db.begin('write');
          await w.run("INSERT INTO items VALUES (22, 'kept')", [], LIMITS);
          expect(await fault(w.run(sql, [], LIMITS)), sql).toMatchObject({
            fault: 'SqlError',
            transactionAborted: true,
          });
          await w.rollback();
        }
        // In a reader the INSERT would be AccessDenied: SqlError shows it never reached SQLite.
        const reader = await inTransaction('read', (r) =>
          fault(r.run("SELECT 1; INSERT INTO items VALUES (24, 'never')", [], LIMITS)),
        );
        expect(reader).toMatchObject({ fault: 'SqlError', message: expect.stringMatching(/nothing was run/) });
        expect(await count('id >= 21')).toBe(0);
      },
    );

    it('times a slow statement out and aborts its transaction', async () => {
      const t = await db.begin('read');
      expect((await t.run('SELECT 1', [], { timeoutMs: 200, maxRows: 10 })).rows).toEqual([[1]]);
      const started = Date.now();
      const slow = await fault(t.run(b.sleep(5), [], { timeoutMs: 200, maxRows: 10 }));
      expect(Date.now() - started).toBeLessThan(2000);
      expect(slow).toMatchObject({ fault: 'Timeout', transactionAborted: true });
      expect((await fault(t.run('SELECT 1', [], LIMITS))).message).toMatch(/aborted/);
      await t.rollback();
      // The connection went back to the pool in working order.
      expect(await count()).toBeTypeOf(onSqlite || tsql ? 'number' : 'bigint');
    });

    it.runIf(onSqlite)(
      'interrupts a slow write: its transaction refuses run and commit, and nothing is written',
      async () => {
        const t = await db.begin('write');
        await t.run("INSERT INTO items VALUES (30, 'before the slow one')", [], LIMITS);
        const started = Date.now();
        const slow = await fault(
          t.run(`UPDATE items SET name = (SELECT count(*) FROM ${b.series(1, ENDLESS)}) WHERE id = 30`, [], {
            timeoutMs: 200,
            maxRows: 10,
          }),
        );
        expect(Date.now() - started).toBeLessThan(2000);
        expect(slow).toMatchObject({ fault: 'Timeout', transactionAborted: true });
        expect(slow.message).toMatch(/200 ms/);
        expect((await fault(t.run('SELECT 1', [], LIMITS))).message).toMatch(/aborted/);
        expect(await fault(t.commit())).toMatchObject({ fault: 'SqlError', transactionAborted: true });
        await t.rollback();
        expect(await count('id = 30')).toBe(0);
        await inTransaction('write', async (w) =>
          expect((await w.run("INSERT INTO items VALUES (31, 'after')", [], LIMITS)).rowsAffected).toBe(1),
        );
      },
    );

    it('faults QuotaExceeded above the row cap, without partial rows', async () => {
      await inTransaction('read', async (t) => {
        const all = await t.run(`SELECT x FROM ${b.series(1, 25)}`, [], { timeoutMs: 5000, maxRows: 25 });
        expect(all.rows).toHaveLength(25);
        expect(all.columns.map((c) => c.name)).toEqual(['x']);
        const whole = await t.run(`SELECT x FROM ${b.series(1, 20)}`, [], { timeoutMs: 5000, maxRows: 25 });
        expect(whole.columns.map((c) => c.name)).toEqual(['x']);
      });
      const t = await db.begin('read');
      const over = await fault(
        t.run(`SELECT x FROM ${b.series(1, onSqlite ? ENDLESS : 5000000)}`, [], { timeoutMs: 5000, maxRows: 2500 }),
      );
      expect(over).toMatchObject({ fault: 'QuotaExceeded', transactionAborted: true });
      expect(over.message).toContain('2500');
      await t.rollback();

      // A write whose RETURNING rows exceed the cap is not left for a commit.
      const w = await db.begin('write');
      expect(
        (
          await fault(
            w.run(
              tsql
                ? `INSERT INTO items OUTPUT INSERTED.id SELECT x, 'many' FROM ${b.series(100, 130)}`
                : `INSERT INTO items SELECT x, 'many' FROM ${b.series(100, 130)} RETURNING id`,
              [],
              {
                timeoutMs: 5000,
                maxRows: 10,
              },
            ),
          )
        ).fault,
      ).toBe('QuotaExceeded');
      expect((await fault(w.commit())).fault).toBe('SqlError');
      await w.rollback();
      expect(await count("name = 'many'")).toBe(b.count(0));
    });

    it('runs transactions side by side: a slow one blocks neither another nor the event loop', async () => {
      const slow = await db.begin('read');
      const fast = await db.begin('read');
      let ticks = 0;
      const timer = setInterval(() => ticks++, 10);
      try {
        // SQLite has no sleep: its slow statement runs until its 600 ms time-out.
        const sleeping = slow.run(b.sleep(0.6), [], noSleep ? { timeoutMs: 600, maxRows: 10 } : LIMITS);
        const started = Date.now();
        const quick = await fast.run('SELECT 2 AS quick', [], LIMITS);
        expect(quick.rows).toEqual([[2]]);
        expect(Date.now() - started).toBeLessThan(400);
        if (noSleep) expect((await fault(sleeping)).fault).toBe('Timeout');
        else expect((await sleeping).rows[0]![1]).toBe(1);
        expect(ticks).toBeGreaterThan(20);
      } finally {
        clearInterval(timer);
        await slow.rollback();
        await fast.rollback();
      }
    });

    it('cancels a running statement on rollback', async () => {
      const t = await db.begin('read');
      const running = t.run(b.sleep(10), [], { timeoutMs: 30_000, maxRows: 10 });
      await new Promise((r) => setTimeout(r, 100));
      const started = Date.now();
      await t.rollback();
      expect(Date.now() - started).toBeLessThan(2000);
      expect((await fault(running)).fault).toBe('Timeout'); // 57014 on PostgreSQL, SQLITE_INTERRUPT on SQLite
    });

    it.runIf(onSqlite)('cancels a statement on rollback also while its rows are being read', async () => {
      const t = await db.begin('read');
      // Rows keep coming (one per 100000 steps), so the statement is past its first step when the rollback comes.
      const running = t.run(`SELECT x FROM ${b.series(1, ENDLESS)} WHERE x % 100000 = 0`, [], {
        timeoutMs: 30_000,
        maxRows: 1_000_000,
      });
      await new Promise((r) => setTimeout(r, 300));
      const started = Date.now();
      await t.rollback();
      expect(Date.now() - started).toBeLessThan(2000);
      expect(await fault(running)).toMatchObject({ fault: 'Timeout', message: expect.stringMatching(/rolled back/) });
    });

    it.runIf(onSqlite)('lets a writer wait for another up to the busy time-out, then faults Timeout', async () => {
      const first = await db.begin('write');
      try {
        let started = Date.now();
        const refused = await fault(db.begin('write'));
        const waited = Date.now() - started;
        expect(refused).toMatchObject({ fault: 'Timeout' });
        expect(refused.message).toMatch(/database is locked/);
        expect(waited).toBeGreaterThanOrEqual(BUSY_TIMEOUT_MS - 50);
        expect(waited).toBeLessThan(BUSY_TIMEOUT_MS + 1500);
        // Readers are not held up by the writer.
        expect(await count()).toBeTypeOf('number');

        // A writer that ends within the time-out lets the next one in.
        started = Date.now();
        setTimeout(() => void first.commit(), 100);
        const second = await db.begin('write');
        expect(Date.now() - started).toBeGreaterThanOrEqual(80);
        await second.rollback();
      } finally {
        await first.rollback();
      }
    });

    it.runIf(onSqlite)('rolls back when COMMIT fails (a deferred foreign key) and reports SqlError', async () => {
      await inTransaction('write', async (t) => {
        await t.run('CREATE TABLE parent (id INTEGER PRIMARY KEY)', [], LIMITS);
        await t.run(
          'CREATE TABLE child (parent_id int REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)',
          [],
          LIMITS,
        );
        await t.commit();
      });
      const t = await db.begin('write');
      await t.run('INSERT INTO child VALUES (5)', [], LIMITS);
      const failed = await fault(t.commit());
      expect(failed).toMatchObject({ fault: 'SqlError', transactionAborted: true });
      expect(failed.message).toMatch(/FOREIGN KEY constraint failed/);
      await t.rollback();
      expect(
        await inTransaction('read', async (r) => (await r.run('SELECT count(*) FROM child', [], LIMITS)).rows),
      ).toEqual([[0]]);
      // The writer's lock was released with it.
      await inTransaction('write', async (w) =>
        expect((await w.run('SELECT count(*) FROM child', [], LIMITS)).rows).toEqual([[0]]),
      );
    });

    it.runIf(onSqlite)(
      'starts every transaction without TEMP objects an earlier one committed on the same connection',
      async () => {
        const t = await db.begin('write');
        await t.run('CREATE TEMP TABLE scratch (x)', [], LIMITS);
        await t.run('CREATE TEMP VIEW items AS SELECT 1 AS id, 2 AS name', [], LIMITS); // would shadow main.items
        await t.commit();
        for (const access of ['write', 'read'] as const) {
          await inTransaction(access, async (next) => {
            expect((await next.run('SELECT count(*) FROM temp.sqlite_schema', [], LIMITS)).rows).toEqual([[0]]);
          });
        }
      },
    );
  });
}
