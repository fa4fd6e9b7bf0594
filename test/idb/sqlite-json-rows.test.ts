/**
 * A read's rows in one step as JSON (src/runtime/node/idb/sqlite-json-rows.ts, used by runWithin and runStatement):
 * every result is compared with what libsql itself gives row by row for the same statement, on a real SQLite file.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DataCell } from '../../src/idb/datatable.ts';
import {
  close,
  type Native,
  type NativeDatabase,
  openConnection,
  own,
  runStatement,
  runWithin,
  type Statement,
  type WireResult,
  worn,
} from '../../src/runtime/node/idb/sqlite-connection.ts';
import { JSON_ROWS_MAX, rowsAsJsonSql } from '../../src/runtime/node/idb/sqlite-json-rows.ts';
import { inTempDir } from './database-suite.ts';

const native = createRequire(import.meta.url)('libsql-linux-x64-gnu') as Native;

/** The oracle: libsql's own row-by-row read of `sql` (integers as numbers when safe, as the connection gives them). */
function libsqlRows(db: NativeDatabase, sql: string, values: Statement['values'] = []): WireResult {
  const stmt = native.databasePrepareSync(db, sql).raw(true).safeIntegers(true);
  const rows = native.statementIterateSync(stmt, values);
  const cells: DataCell[] = [];
  for (let r = native.iteratorNextSync(rows); !r.done; r = native.iteratorNextSync(rows))
    for (const v of r.value as unknown[])
      cells.push(typeof v === 'bigint' && Number.isSafeInteger(Number(v)) ? Number(v) : (v as DataCell));
  const columns = stmt.columns().map((c) => ({ name: c.name, declaredType: c.type ?? null }));
  return { columns, cells, rowsAffected: -1 };
}

function request(sql: string, values: Statement['values'] = [], maxRows = 100_000): Statement {
  return { sql, values, timeoutMs: 10_000, maxRows };
}

/** Equal, minus zero told from zero (toEqual does, but says so less plainly) and blobs compared by their bytes. */
function expectSame(actual: WireResult, expected: WireResult): void {
  expect(actual.columns).toEqual(expected.columns);
  expect(actual.cells.length).toBe(expected.cells.length);
  actual.cells.forEach((cell, i) => {
    const want = expected.cells[i];
    if (want instanceof Uint8Array)
      expect([i, Buffer.from(cell as Uint8Array).toString('hex')]).toEqual([i, Buffer.from(want).toString('hex')]);
    else expect([i, Object.is(cell, want) ? 'same' : cell]).toEqual([i, 'same']);
  });
}

/** Runs `body` with a writer and a reader (whose statements on the loop may take up to `budgetMs`) on a new file. */
async function withFile(
  body: (writer: NativeDatabase, reader: NativeDatabase) => Promise<void>,
  budgetMs = 10_000,
): Promise<void> {
  await inTempDir(async (dir) => {
    const path = join(dir, 'db.sqlite');
    const writer = openConnection(native, path, 'write', 1000);
    const reader = openConnection(native, path, 'read', 1000, budgetMs);
    try {
      await body(writer, reader);
    } finally {
      close(reader);
      close(writer);
    }
  });
}

/** A xorshift generator: the same doubles on every run. */
function* doubles(count: number): Generator<number> {
  let state = 0x9e3779b97f4a7c15n;
  const bits = new DataView(new ArrayBuffer(8));
  for (let made = 0; made < count; ) {
    state ^= (state << 13n) & 0xffffffffffffffffn;
    state ^= state >> 7n;
    state ^= (state << 17n) & 0xffffffffffffffffn;
    bits.setBigUint64(0, state);
    const x =
      made % 2 === 0 ? bits.getFloat64(0) : (bits.getUint32(0) / 2 ** 32 - 0.5) * 10 ** ((bits.getUint32(4) % 40) - 20);
    if (Number.isNaN(x)) continue; // SQLite stores NaN as NULL
    made++;
    yield x;
  }
}

describe('SQLite: a read whose rows come as JSON in one step', () => {
  it('gives every value as libsql gives it row by row: integers to 2^63, every double, minus zero, infinities, text, blobs, NULL', async () => {
    await withFile(async (writer, reader) => {
      own(native, writer, 'CREATE TABLE v (x)'); // no affinity: each value stays as it was bound
      const insert = native.databasePrepareSync(writer, 'INSERT INTO v VALUES (?1)');
      const values: Statement['values'] = [
        null,
        0,
        -1,
        2 ** 53 - 1,
        -(2 ** 53 - 1),
        2n ** 53n,
        -(2n ** 63n),
        2n ** 63n - 1n,
        0.0,
        -0.0,
        0.1,
        1 / 3,
        1e300,
        -1e300,
        5e-324,
        2.2250738585072014e-308,
        2.225073858507201e-308,
        Number.MAX_VALUE,
        Number.POSITIVE_INFINITY,
        Number.NEGATIVE_INFINITY,
        2 ** 53 + 2,
        (2 ** 53 - 1) / 2, // every bit of the mantissa set
        '',
        'a"b\\c\n\t\u0001</x>',
        'é😀',

        'x'.repeat(100_000),
        new Uint8Array(),
        new Uint8Array([0, 255]),
        Uint8Array.from({ length: 1000 }, (_, i) => (i * 7) % 256),
        ...doubles(3000),
      ];
      own(native, writer, 'BEGIN');
      for (const v of values) native.statementRunSync(insert, [v instanceof Uint8Array ? Buffer.from(v) : v]);
      own(native, writer, 'COMMIT');
      const sql = 'SELECT x, typeof(x) AS kind FROM v ORDER BY rowid DESC';
      const expected = libsqlRows(reader, sql);
      expect(expected.cells.length).toBe(values.length * 2);
      expectSame(runWithin(native, reader, request(sql)), expected);
      expectSame(await runStatement(native, reader, request(sql)), expected);
      // Kept: the second run of the text uses the JSON statement made by the first.
      expectSame(runWithin(native, reader, request(sql)), expected);
      // One difference, for the better: libsql's row by row read ends a text at its first NUL; SQLite's JSON has it.
      native.statementRunSync(insert, ['a\u0000b']);
      const last = 'SELECT x FROM v WHERE rowid = (SELECT max(rowid) FROM v)';
      expect(libsqlRows(reader, last).cells).toEqual(['a']);
      expect(runWithin(native, reader, request(last)).cells).toEqual(['a\u0000b']);
    });
  });

  it('keeps no row iterator: a connection reading many rows is not worn out (one read row by row is, to compare)', async () => {
    await withFile(async (writer, reader) => {
      own(native, writer, 'CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)');
      own(
        native,
        writer,
        "INSERT INTO t WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 50) SELECT i, 'n' || i FROM c",
      );
      for (let i = 0; i < 300; i++)
        expect(runWithin(native, reader, request('SELECT id, name FROM t')).cells.length).toBe(100);
      expect(worn(reader)).toBe(false);
      // Repeated names cannot be referenced in a subquery: that read goes row by row, an iterator kept per call.
      for (let i = 0; i < 300; i++)
        expect(runWithin(native, reader, request('SELECT id, id FROM t')).cells.length).toBe(100);
      expect(worn(reader)).toBe(true);
    });
  });

  it('computes each cell once, in the order the statement gives', async () => {
    await withFile(async (_writer, reader) => {
      // Were a cell computed again for each use in the JSON statement, its type and its value would disagree in
      // about half of the rows, the read would fail and go row by row, and the connection would wear out.
      const sql =
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200) SELECT i, CASE WHEN random() % 2 = 0 THEN 1 ELSE 'one' END AS v FROM c ORDER BY i DESC";
      for (let run = 0; run < 300; run++) {
        const { cells } = runWithin(native, reader, request(sql));
        expect(cells.filter((_, at) => at % 2 === 0)).toEqual(Array.from({ length: 200 }, (_, at) => 200 - at));
        expect(cells.filter((cell, at) => at % 2 === 1 && cell !== 1 && cell !== 'one')).toEqual([]);
      }
      expect(worn(reader)).toBe(false);
    });
  });

  it("reports the statement's columns: names, declared types, expressions; parameters, VALUES, WITH, a trailing ; or comment", async () => {
    await withFile(async (writer, reader) => {
      own(
        native,
        writer,
        'CREATE TABLE t (id INTEGER PRIMARY KEY, label VARCHAR(40), amount DECIMAL(10,2), at TIMESTAMP)',
      );
      own(
        native,
        writer,
        "INSERT INTO t VALUES (1, 'one', 1.5, '2024-03-01 10:00:00'), (2, 'two', 2.25, NULL), (3, NULL, NULL, NULL)",
      );
      const cases: [string, Statement['values']][] = [
        ['SELECT * FROM t', []],
        ['SELECT id AS "the id", upper(label), amount * 2, `at` FROM t ORDER BY id DESC', []],
        ['SELECT count(*), max(amount), group_concat(label) FROM t', []],
        ['SELECT id FROM t WHERE id > ?2 AND id < ?1', [3, 1]],
        ['SELECT label FROM t WHERE id = @id OR label = :label', [1, 'two']],
        ["VALUES (1, 'a'), (2, 'b')", []],
        ['WITH big AS (SELECT * FROM t WHERE amount > 2) SELECT id, label FROM big', []],
        ['SELECT id FROM t ORDER BY id;  ', []],
        ['SELECT id FROM t -- the ids', []],
        ['SELECT id FROM t WHERE id > 5', []], // no row: columns all the same
        ['SELECT 1 AS a, 2 AS A', []], // names that repeat, told apart by case only: read row by row
      ];
      for (const [sql, values] of cases) {
        const expected = libsqlRows(reader, sql, values);
        expectSame(runWithin(native, reader, request(sql, values)), expected);
        expectSame(await runStatement(native, reader, request(sql, values)), expected);
      }
    });
  });

  it('follows a schema changed by another connection: a column added, renamed, a table made again with other types', async () => {
    await withFile(async (writer, reader) => {
      own(native, writer, "CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (1, 'x'), (2, 'y')");
      const sql = 'SELECT * FROM t';
      const read = async (): Promise<void> => {
        const expected = libsqlRows(reader, sql);
        expectSame(runWithin(native, reader, request(sql)), expected);
        expectSame(runWithin(native, reader, request(sql)), expected);
        expectSame(await runStatement(native, reader, request(sql)), expected);
      };
      await read();
      own(native, writer, 'ALTER TABLE t ADD COLUMN c REAL DEFAULT 7.5');
      await read();
      own(native, writer, 'ALTER TABLE t RENAME COLUMN b TO bb');
      await read();
      own(
        native,
        writer,
        "DROP TABLE t; CREATE TABLE t (a TEXT, bb BLOB, c INTEGER); INSERT INTO t VALUES ('1', x'01', 3)",
      );
      await read();
      expect(runWithin(native, reader, request(sql)).columns.map((c) => c.declaredType)).toEqual([
        'TEXT',
        'BLOB',
        'INTEGER',
      ]);
    });
  });

  it('refuses a result of more rows than allowed, on the loop and off it; a result of just that many passes', async () => {
    await withFile(async (writer, reader) => {
      own(native, writer, 'CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1), (2), (3)');
      expect(() => runWithin(native, reader, request('SELECT id FROM t', [], 2))).toThrow(/more than 2 rows/);
      await expect(runStatement(native, reader, request('SELECT id FROM t', [], 2))).rejects.toThrow(
        /more than 2 rows/,
      );
      expect(runWithin(native, reader, request('SELECT id FROM t', [], 3)).cells).toEqual([1, 2, 3]);
      // Past JSON_ROWS_MAX rows the result is read row by row: whole, and refused past the cap all the same.
      const many = `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${JSON_ROWS_MAX + 5}) SELECT i FROM c`;
      const all = Array.from({ length: JSON_ROWS_MAX + 5 }, (_, i) => i + 1);
      expect(runWithin(native, reader, request(many)).cells).toEqual(all);
      expect((await runStatement(native, reader, request(many))).cells).toEqual(all);
      expect(() => runWithin(native, reader, request(many, [], JSON_ROWS_MAX + 4))).toThrow(/more than 10004 rows/);
    });
  });

  it("gives a failing statement's own error", async () => {
    await withFile(async (_writer, reader) => {
      const sql =
        'WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 5) SELECT iif(i = 4, abs(-9223372036854775808), i) FROM c';
      expect(() => runWithin(native, reader, request(sql))).toThrow(/integer overflow/);
      await expect(runStatement(native, reader, request(sql))).rejects.toThrow(/integer overflow/);
      expect(() => runWithin(native, reader, request('SELECT nope FROM nowhere'))).toThrow(/no such table: nowhere/);
    });
  });
});

describe('rowsAsJsonSql', () => {
  it('builds no statement for no columns, more than 100, or names that repeat in any case', () => {
    expect(rowsAsJsonSql('SELECT 1', [], 10)).toBeUndefined();
    expect(
      rowsAsJsonSql(
        'SELECT 1',
        Array.from({ length: 101 }, (_, i) => `c${i}`),
        10,
      ),
    ).toBeUndefined();
    expect(rowsAsJsonSql('SELECT 1 AS a, 2 AS A', ['a', 'A'], 10)).toBeUndefined();
    expect(rowsAsJsonSql('SELECT 1 AS `a``b`', ['a`b'], 10)).toMatch(/`a``b`/);
  });
});
