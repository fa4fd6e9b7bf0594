import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clrTypeOfDeclared } from '../src/idb/column-types.ts';
import { DatabaseFault, type Database, type DatabaseTransaction, type StatementLimits } from '../src/idb/database.ts';
import { bindParameters } from '../src/idb/sql-parameters.ts';
import { createPostgresDatabase } from '../src/runtime/node/postgres-database.ts';
import { startPostgres, type RunningPostgres } from './support/postgres.ts';

const LIMITS: StatementLimits = { timeoutMs: 5000, maxRows: 1000 };

let pg: RunningPostgres;
let db: Database;

beforeAll(async () => {
  pg = await startPostgres();
  db = createPostgresDatabase({ url: pg.url, maxConnections: 4 });
  const t = await db.begin('write');
  await t.run('CREATE TABLE items (id int PRIMARY KEY, name text)', [], LIMITS);
  await t.commit();
}, 60_000);

afterAll(async () => {
  await db?.close();
  await pg?.stop();
});

async function inTransaction<T>(access: 'read' | 'write', work: (t: DatabaseTransaction) => Promise<T>): Promise<T> {
  const t = await db.begin(access);
  try {
    return await work(t);
  } finally {
    await t.rollback();
  }
}

async function fault(promise: Promise<unknown>): Promise<DatabaseFault> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(DatabaseFault);
    return error as DatabaseFault;
  }
  throw new Error('expected a DatabaseFault');
}

async function count(where = 'true'): Promise<unknown> {
  return inTransaction('read', async (t) => (await t.run(`SELECT count(*) FROM items WHERE ${where}`, [], LIMITS)).rows[0]![0]);
}

describe('PostgreSQL Database', () => {
  it('round-trips the mapped types with their declared type names', async () => {
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
      await t.run('INSERT INTO types (i, y) VALUES (1, $1)', [big], LIMITS);
      return t.run('SELECT * FROM types ORDER BY i NULLS LAST', [], LIMITS);
    });
    const declared = result.columns.map((c) => c.declaredType);
    expect(declared).toEqual(['int4', 'int2', 'int8', 'numeric', 'money', 'float4', 'float8', 'bool', 'text', 'varchar', 'character', 'bytea', 'timestamp', 'timestamptz', 'date', 'uuid', 'jsonb']);
    expect(declared.map(clrTypeOfDeclared)).toEqual(['Int32', 'Int16', 'Int64', 'Decimal', 'Decimal', 'Single', 'Double', 'Boolean', 'String', 'String', 'String', 'Byte[]', 'DateTime', 'DateTime', 'DateTime', 'Guid', undefined]);
    expect(result.columns.map((c) => c.name)).toEqual(['i', 's', 'b', 'n', 'm', 'r', 'd', 'f', 't', 'v', 'c', 'y', 'ts', 'tz', 'dt', 'u', 'j']);
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

  it('binds parameters from bindParameters, null included', async () => {
    const bound = bindParameters(
      'SELECT @a::int + 1 AS a, @b::text AS b, @c::numeric AS c, @nothing::text AS n, @when::timestamptz AS w, @big::int8 AS g, @a::int AS again',
      [
        { name: 'a', value: 41 },
        { name: '@B', value: 'x @a y' },
        { name: 'c', value: '1.10' },
        { name: 'nothing', value: null },
        { name: 'when', value: new Date('2024-01-02T03:04:05.678Z') },
        { name: 'big', value: 2n ** 62n },
      ],
      'postgres',
    );
    if (!bound.ok) throw new Error(bound.message);
    const result = await inTransaction('read', (t) => t.run(bound.sql, bound.values, LIMITS));
    expect(result.rows).toEqual([[42, 'x @a y', '1.10', null, '2024-01-02 03:04:05.678+00', 2n ** 62n, 41]]);
    expect(result.columns.map((c) => c.declaredType)).toEqual(['int4', 'text', 'numeric', 'text', 'timestamptz', 'int8', 'int4']);
  });

  it('makes committed writes visible to other transactions, rolled back ones never', async () => {
    const writer = await db.begin('write');
    await writer.run('INSERT INTO items VALUES ($1, $2)', [1, 'committed'], LIMITS);
    expect(await count('id = 1')).toBe(0n); // not visible before the commit
    await writer.commit();
    expect(await count('id = 1')).toBe(1n);

    const undone = await db.begin('write');
    await undone.run('INSERT INTO items VALUES ($1, $2)', [2, 'rolled back'], LIMITS);
    await undone.rollback();
    await undone.rollback(); // a second rollback does nothing
    expect(await count('id = 2')).toBe(0n);
    expect((await fault(undone.run('SELECT 1', [], LIMITS))).fault).toBe('SqlError');
  });

  it('reports rows affected for INSERT, UPDATE and DELETE, and -1 otherwise', async () => {
    await inTransaction('write', async (t) => {
      expect((await t.run('CREATE TABLE counted (x int)', [], LIMITS)).rowsAffected).toBe(-1);
      expect((await t.run('INSERT INTO counted SELECT generate_series(1, 7)', [], LIMITS)).rowsAffected).toBe(7);
      expect((await t.run('UPDATE counted SET x = x + 1 WHERE x > 4', [], LIMITS)).rowsAffected).toBe(3);
      expect((await t.run('UPDATE counted SET x = 0 WHERE false', [], LIMITS)).rowsAffected).toBe(0);
      const returning = await t.run('DELETE FROM counted WHERE x < 3 RETURNING x', [], LIMITS);
      expect(returning.rowsAffected).toBe(2);
      expect(returning.rows).toEqual([[1], [2]]);
      const select = await t.run('SELECT x FROM counted', [], LIMITS);
      expect(select.rowsAffected).toBe(-1);
      expect(select.rows).toHaveLength(5);
      const empty = await t.run('SELECT x, x::text AS t FROM counted WHERE false', [], LIMITS);
      expect(empty).toEqual({ columns: [{ name: 'x', declaredType: 'int4' }, { name: 't', declaredType: 'text' }], rows: [], rowsAffected: -1 });
    });
  });

  it("refuses a 'read' transaction's writes as AccessDenied, escape through SET TRANSACTION included", async () => {
    const t = await db.begin('read');
    const refused = await fault(t.run('INSERT INTO items VALUES (10, $1)', ['reader'], LIMITS));
    expect(refused.fault).toBe('AccessDenied');
    expect(refused.transactionAborted).toBe(true);
    expect(refused.message).toMatch(/read-only transaction/);
    expect(refused.stack ?? '').not.toContain('postgres/src');
    await t.rollback();

    await inTransaction('read', async (reader) => {
      const escape = await fault(reader.run('SET TRANSACTION READ WRITE', [], LIMITS));
      expect(escape).toMatchObject({ fault: 'SqlError', transactionAborted: true });
      expect(escape.message).toMatch(/read-write mode must be set before any query/);
      expect((await fault(reader.run('INSERT INTO items VALUES (11, null)', [], LIMITS))).fault).toBe('SqlError'); // aborted: refused before reaching the server
    });
    await inTransaction('read', async (reader) => {
      const viaConfig = await fault(reader.run("SELECT set_config('transaction_read_only', 'off', true)", [], LIMITS));
      expect(viaConfig.message).toMatch(/read-write mode must be set before any query/);
    });
    expect(await count('id in (10, 11)')).toBe(0n);
  });

  it('refuses several commands in one statement, so COMMIT cannot escape the transaction', async () => {
    const t = await db.begin('write');
    const refused = await fault(t.run("COMMIT; INSERT INTO items VALUES (20, 'escaped')", [], LIMITS));
    expect(refused.fault).toBe('SqlError');
    expect(refused.message).toMatch(/multiple commands/);
    expect(refused.transactionAborted).toBe(true);
    const commit = await fault(t.commit()); // an aborted transaction cannot be committed; it is rolled back
    expect(commit.message).toMatch(/rolled back/);
    await t.rollback(); // after that, rollback does nothing
    expect(await count('id = 20')).toBe(0n);

    const syntax = await inTransaction('write', (w) => fault(w.run('SELEC 1', [], LIMITS)));
    expect(syntax).toMatchObject({ fault: 'SqlError', transactionAborted: true });
    expect(syntax.message).toMatch(/syntax error/);
  });

  it('times a slow statement out and aborts its transaction', async () => {
    const t = await db.begin('read');
    expect((await t.run('SELECT 1', [], { timeoutMs: 200, maxRows: 10 })).rows).toEqual([[1]]);
    const started = Date.now();
    const slow = await fault(t.run('SELECT pg_sleep(5)', [], { timeoutMs: 200, maxRows: 10 }));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(slow).toMatchObject({ fault: 'Timeout', transactionAborted: true });
    expect((await fault(t.run('SELECT 1', [], LIMITS))).message).toMatch(/aborted/);
    await t.rollback();
    // The connection went back to the pool in working order.
    expect(await count()).toBeTypeOf('bigint');
  });

  it('faults QuotaExceeded above the row cap, without partial rows', async () => {
    await inTransaction('read', async (t) => {
      expect((await t.run('SELECT generate_series(1, 25)', [], { timeoutMs: 5000, maxRows: 25 })).rows).toHaveLength(25);
    });
    const t = await db.begin('read');
    const over = await fault(t.run('SELECT generate_series(1, 5000000)', [], { timeoutMs: 5000, maxRows: 2500 }));
    expect(over).toMatchObject({ fault: 'QuotaExceeded', transactionAborted: true });
    expect(over.message).toContain('2500');
    await t.rollback();

    // A write whose RETURNING rows exceed the cap is not left for a commit.
    const w = await db.begin('write');
    expect((await fault(w.run("INSERT INTO items SELECT g, 'many' FROM generate_series(100, 130) g RETURNING id", [], { timeoutMs: 5000, maxRows: 10 }))).fault).toBe('QuotaExceeded');
    expect((await fault(w.commit())).fault).toBe('SqlError');
    await w.rollback();
    expect(await count("name = 'many'")).toBe(0n);
  });

  it('runs transactions side by side: a slow one blocks neither another nor the event loop', async () => {
    const slow = await db.begin('read');
    const fast = await db.begin('read');
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    try {
      const sleeping = slow.run('SELECT pg_sleep(0.6), 1 AS done', [], LIMITS);
      const started = Date.now();
      const quick = await fast.run('SELECT 2 AS quick', [], LIMITS);
      expect(quick.rows).toEqual([[2]]);
      expect(Date.now() - started).toBeLessThan(400);
      const done = await sleeping;
      expect(done.rows[0]![1]).toBe(1);
      expect(ticks).toBeGreaterThan(20);
    } finally {
      clearInterval(timer);
      await slow.rollback();
      await fast.rollback();
    }
  });

  it('cancels a running statement on rollback', async () => {
    const t = await db.begin('read');
    const running = t.run('SELECT pg_sleep(10)', [], { timeoutMs: 30_000, maxRows: 10 });
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await t.rollback();
    expect(Date.now() - started).toBeLessThan(2000);
    expect((await fault(running)).fault).toBe('Timeout'); // 57014, as for a time-out
  });
});
