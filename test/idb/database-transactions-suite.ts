import { expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Backend, type SuiteContext, fault, LIMITS } from './database-backends.ts';

/** Transactions and requests: isolation, rows affected, what a read transaction and client SQL may not do. Part of `databaseSuite` (database-suite.ts), inside its describe. */
export function databaseTransactionsSuite(b: Backend, ctx: SuiteContext): void {
  const { inTransaction, count, onSqlite, tsql } = ctx;

  it('makes committed writes visible to other transactions, rolled back ones never', async () => {
    const writer = await ctx.db.begin('write');
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

    const undone = await ctx.db.begin('write');
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
    const t = await ctx.db.begin('read');
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

  it.runIf(b.name === 'postgres')(
    "refuses transaction control in client SQL as AccessDenied, so a request's work stays its own",
    async () => {
      // The server ran them: a COMMIT in a request committed its work so far, and the statements after it each
      // committed on their own, beyond the request's rollback.
      const t = await ctx.db.begin('write');
      await t.run("INSERT INTO items VALUES (21, 'before')", [], LIMITS);
      const refused = await fault(t.run('COMMIT', [], LIMITS));
      expect(refused).toMatchObject({ fault: 'AccessDenied', transactionAborted: true });
      expect(refused.message).toMatch(/COMMIT is not allowed in client SQL/);
      await t.rollback();
      expect(await count('id = 21')).toBe(b.count(0));
      const statements = [
        'BEGIN',
        'start transaction',
        'END',
        'ROLLBACK',
        'abort',
        'SAVEPOINT s',
        'RELEASE SAVEPOINT s',
        "PREPARE TRANSACTION 'x'",
        '/* a /* nested */ comment */ COMMIT',
        '-- a comment\n  commit work',
      ];
      for (const access of ['read', 'write'] as const)
        for (const sql of statements) {
          const denied = await inTransaction(access, (w) => fault(w.run(sql, [], LIMITS)));
          expect(denied, `${access}: ${sql}`).toMatchObject({ fault: 'AccessDenied', transactionAborted: true });
        }
      // Statements that only look like it run.
      await inTransaction('write', async (w) => {
        expect((await w.run("SELECT 'COMMIT' AS commit", [], LIMITS)).rows).toEqual([['COMMIT']]);
        await w.run('PREPARE p AS SELECT 1', [], LIMITS);
        expect((await w.run('EXECUTE p', [], LIMITS)).rows).toEqual([[1]]);
      });
    },
  );

  it('refuses several commands in one statement, so COMMIT cannot escape the transaction', async () => {
    const t = await ctx.db.begin('write');
    const refused = await fault(t.run("COMMIT; INSERT INTO items VALUES (20, 'escaped')", [], LIMITS));
    // PostgreSQL refuses it by its first verb before the server sees it (the test before this one); the server
    // would refuse the two commands too. T-SQL runs batches (SqlCommand does): the COMMIT ends only the inner of two
    // transaction levels, and the adapter finds the level gone after the batch.
    expect(refused.fault).toBe(onSqlite || tsql ? 'SqlError' : 'AccessDenied');
    expect(refused.message).toMatch(
      onSqlite ? /more than one statement/ : tsql ? /ended the request.s transaction/ : /COMMIT is not allowed/,
    );
    if (!onSqlite && !tsql) {
      // Without the verb in front, the server's own refusal of a second command.
      const second = await inTransaction('write', (w) =>
        fault(w.run("SELECT 1; INSERT INTO items VALUES (20, 'escaped')", [], LIMITS)),
      );
      expect(second).toMatchObject({ fault: 'SqlError', message: expect.stringMatching(/multiple commands/) });
    }
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
        const w = await ctx.db.begin('write');
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
}
