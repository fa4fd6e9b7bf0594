import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.ts';
import type { DatabaseTransaction } from '../../src/idb/database.ts';
import { openDatabase } from '../../src/runtime/node/idb/open-database.ts';
import {
  close,
  type Native,
  openConnection,
  own,
  runsWithoutLoop,
} from '../../src/runtime/node/idb/sqlite-connection.ts';
import { createSqliteDatabase } from '../../src/runtime/node/idb/sqlite-database.ts';
import { ENDLESS, LIMITS, databaseSuite, fault, inTempDir, sqlite } from './database-suite.ts';

databaseSuite(sqlite);

/**
 * How busy the event loop was while `work` ran (0: waiting for events the whole time, 1: running code the whole
 * time). A pause of the machine counts as waiting, so this tells a statement run on the loop from a loaded machine.
 */
async function loopBusy<T>(work: () => Promise<T>): Promise<{ result: T; busy: number }> {
  const before = performance.eventLoopUtilization();
  const result = await work();
  return { result, busy: performance.eventLoopUtilization(before).utilization };
}

describe('SQLite Database: close() and the pool of sessions', () => {
  it('ends all sessions on close; open transactions then fault and rollback stays quiet', async () => {
    await inTempDir(async (dir) => {
      const db = await createSqliteDatabase({ path: join(dir, 'db.sqlite'), busyTimeoutMs: 200 });
      const idle = await db.begin('write');
      await idle.run('CREATE TABLE t (x)', [], LIMITS);
      const busy = await db.begin('read');
      const running = busy.run(`SELECT count(*) FROM ${sqlite.series(1, ENDLESS)}`, [], {
        timeoutMs: 30_000,
        maxRows: 10,
      });
      await new Promise((r) => setTimeout(r, 100));
      const started = Date.now();
      await db.close();
      expect(Date.now() - started).toBeLessThan(2000); // the running statement was interrupted, not waited for
      expect(await fault(running)).toMatchObject({ fault: 'Timeout', message: expect.stringMatching(/closed/) });
      expect(await fault(idle.run('SELECT 1', [], LIMITS))).toMatchObject({
        fault: 'SqlError',
        message: expect.stringMatching(/closed/),
      });
      await idle.rollback();
      await busy.rollback();
      expect((await fault(db.begin('read'))).message).toMatch(/closed/);
      await db.close(); // twice is fine

      // What was not committed is gone, and the file opens again.
      const again = await createSqliteDatabase({ path: join(dir, 'db.sqlite') });
      const r = await again.begin('read');
      expect((await r.run("SELECT count(*) FROM sqlite_schema WHERE name = 't'", [], LIMITS)).rows).toEqual([[0]]);
      await r.rollback();
      await again.close();
    });
  });

  it('waits for a free session beyond maxConnections', async () => {
    await inTempDir(async (dir) => {
      const db = await createSqliteDatabase({ path: join(dir, 'db.sqlite'), maxConnections: 1 });
      const first = await db.begin('read');
      let second: DatabaseTransaction | undefined;
      const waiting = db.begin('read').then((t) => (second = t));
      await new Promise((r) => setTimeout(r, 100));
      expect(second).toBeUndefined();
      await first.rollback();
      await waiting;
      expect((await second!.run('SELECT 7', [], LIMITS)).rows).toEqual([[7]]);
      await second!.rollback();
      await db.close();
    });
  });
});

describe('SQLite: which programs run without a loop (runsWithoutLoop)', () => {
  it('tells lookups by key and expressions of parameters from scans, counts, lists, recursion and table functions', async () => {
    await inTempDir(async (dir) => {
      const native = createRequire(import.meta.url)('libsql-linux-x64-gnu') as Native;
      const path = join(dir, 'db.sqlite');
      const writer = openConnection(native, path, 'write', 1000);
      own(
        native,
        writer,
        'CREATE TABLE t (id INTEGER PRIMARY KEY, code TEXT UNIQUE, name TEXT, x INT); CREATE INDEX t_x ON t (x); ' +
          'CREATE VIEW v AS SELECT id, name FROM t; CREATE TABLE s (a INT, b INT, PRIMARY KEY (a, b)) WITHOUT ROWID',
      );
      const reader = openConnection(native, path, 'read', 1000, 3);
      const straight = [
        'SELECT ?1',
        'SELECT name FROM t WHERE id = ?1',
        'SELECT name FROM t WHERE code = ?1',
        'SELECT upper(name), x FROM t WHERE id = ?1 AND x > 3',
        "SELECT coalesce(name, 'none') FROM v WHERE id = ?1",
        'SELECT b FROM s WHERE a = ?1 AND b = ?2',
      ];
      const loops = [
        'SELECT count(*) FROM t', // one Count opcode, but it counts the whole b-tree
        'SELECT max(id) FROM t',
        'SELECT name FROM t WHERE x = ?1', // an index that is not UNIQUE: a range
        'SELECT b FROM s WHERE a = ?1',
        'SELECT name FROM t WHERE id IN (?1, ?2)',
        'SELECT (SELECT count(*) FROM t)',
        'WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c LIMIT 5',
        'SELECT * FROM json_each(?1)',
        'SELECT * FROM t',
        'PRAGMA user_version', // refused by the authorizer: its EXPLAIN fails
        'SELECT nonsense FROM',
      ];
      for (const sql of straight) expect([sql, runsWithoutLoop(native, reader, sql)]).toEqual([sql, true]);
      for (const sql of loops) expect([sql, runsWithoutLoop(native, reader, sql)]).toEqual([sql, false]);
      close(reader);
      close(writer);
    });
  });
});

describe('SQLite Database: a read on its own', () => {
  it('runs on the event loop only within a small budget: past it, the read runs again off the loop, whole', async () => {
    await inTempDir(async (dir) => {
      const db = await createSqliteDatabase({ path: join(dir, 'db.sqlite') });
      const limits = { timeoutMs: 30_000, maxRows: 1_000_000 };
      const slowStep = `SELECT count(*) FROM ${sqlite.series(1, 5_000_000)}`;
      const manyRows = `SELECT x FROM ${sqlite.series(1, 100_000)}`;
      // Twice each: the first run is interrupted at the budget and run again; the second goes off the loop at once.
      for (let round = 0; round < 2; round++) {
        const step = await loopBusy(() => db.runAlone('read', slowStep, [], limits));
        expect(step.result.rows).toEqual([[5_000_000]]);
        // Run whole on the loop, the count (most of a second) would keep it busy all along: utilization ~1.
        expect(step.busy).toBeLessThan(0.5);
      }
      for (let round = 0; round < 2; round++) {
        const rows = await db.runAlone('read', manyRows, [], limits);
        expect(rows.rows.length).toBe(100_000);
        // every row once, in order: nothing of the interrupted run is left in the answer
        expect(rows.rows.every((row, at) => row[0] === at + 1)).toBe(true);
      }
      // A cheap read is answered as before, and the statement's own time-out still holds.
      expect((await db.runAlone('read', 'SELECT ?1 + 1', [{ type: 'long', value: 41n }], limits)).rows).toEqual([[42]]);
      expect(await fault(db.runAlone('read', slowStep, [], { timeoutMs: 50, maxRows: 10 }))).toMatchObject({
        fault: 'Timeout',
      });
      await db.close();
    });
  });
  it('runs a read without a loop without the budget, and gives the budget back when the schema turns it into a scan', async () => {
    await inTempDir(async (dir) => {
      const path = join(dir, 'db.sqlite');
      const db = await createSqliteDatabase({ path });
      const limits = { timeoutMs: 30_000, maxRows: 10, firstRowOnly: true };
      await db.runAlone('write', 'CREATE TABLE big (id INTEGER PRIMARY KEY, code TEXT, n INT)', [], LIMITS);
      await db.runAlone(
        'write',
        `INSERT INTO big (code, n) SELECT 'c' || x, x FROM ${sqlite.series(1, 400_000)}`,
        [],
        LIMITS,
      );
      await db.runAlone('write', 'CREATE UNIQUE INDEX big_code ON big (code)', [], LIMITS);
      const lookup = 'SELECT n FROM big WHERE code = ?1';
      const last = [{ type: 'string' as const, value: 'c400000' }];
      // Judged the second time it runs within the budget, then run without it: a lookup by a UNIQUE index.
      for (let i = 0; i < 4; i++) expect((await db.runAlone('read', lookup, last, limits)).rows).toEqual([[400_000]]);

      // Dropped in a request: the same text now scans the table (tens of milliseconds), and must not hold the loop.
      const request = await db.begin('write');
      await request.run('DROP INDEX big_code', [], LIMITS);
      await request.commit();
      for (let i = 0; i < 3; i++) {
        const scan = await loopBusy(() => db.runAlone('read', lookup, last, limits));
        expect(scan.result.rows).toEqual([[400_000]]);
        expect(scan.busy).toBeLessThan(0.5);
      }

      // Made straight again (another text: that one is remembered as slow for a while), then turned into a scan by
      // another process (here: another Database on the file), which this one cannot know of: the first run scans on
      // the loop, and gives the budget back for the next ones.
      await db.runAlone('write', 'CREATE UNIQUE INDEX big_code ON big (code)', [], LIMITS);
      const again = 'SELECT n AS m FROM big WHERE code = ?1';
      for (let i = 0; i < 4; i++) expect((await db.runAlone('read', again, last, limits)).rows).toEqual([[400_000]]);
      const other = await createSqliteDatabase({ path });
      await other.runAlone('write', 'DROP INDEX big_code', [], LIMITS);
      await other.close();
      expect((await db.runAlone('read', again, last, limits)).rows).toEqual([[400_000]]);
      const next = await loopBusy(() => db.runAlone('read', again, last, limits));
      expect(next.result.rows).toEqual([[400_000]]);
      expect(next.busy).toBeLessThan(0.5);
      await db.close();
    });
  });

  it('takes no second step for a first row only: a second row that fails is never computed', async () => {
    await inTempDir(async (dir) => {
      const db = await createSqliteDatabase({ path: join(dir, 'db.sqlite') });
      // The first row is 1; computing the second fails (integer overflow), as a slow one would take its time.
      const sql = 'SELECT 1 UNION ALL SELECT abs(-9223372036854775807 - 1)';
      const first = { timeoutMs: 30_000, maxRows: 10, firstRowOnly: true };
      expect(await fault(db.runAlone('read', sql, [], { timeoutMs: 30_000, maxRows: 10 }))).toMatchObject({
        fault: 'SqlError',
        message: expect.stringMatching(/overflow/),
      });
      // Alone (one step on the event loop) and in a request (the first step off the loop, the next ones on it).
      expect((await db.runAlone('read', sql, [], first)).rows).toEqual([[1]]);
      const request = await db.begin('read');
      expect((await request.run(sql, [], first)).rows).toEqual([[1]]);
      await request.rollback();
      await db.close();
    });
  });

  it('lets no statement of a connection be collected while that connection runs a statement off the loop', async () => {
    // libsql frees a statement or its rows under the connection's lock, on the thread that collects it: during a
    // statement on libsql's thread, that would hold the event loop until the statement ends.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    await inTempDir(async (dir) => {
      const db = await createSqliteDatabase({ path: join(dir, 'db.sqlite'), maxConnections: 1 });
      const slow = `SELECT count(*) FROM ${sqlite.series(1, 5_000_000)}`;
      for (let round = 0; round < 3; round++) {
        // Garbage of the one reader connection: statements of distinct texts and their rows.
        for (let i = 0; i < 200; i++) await db.runAlone('read', `SELECT ${round * 1000 + i}`, [], LIMITS);
        const measured = await loopBusy(async () => {
          const running = db.runAlone('read', slow, [], { timeoutMs: 30_000, maxRows: 10 });
          await new Promise((resolve) => setTimeout(resolve, 50));
          gc();
          await new Promise((resolve) => setTimeout(resolve, 10));
          return running;
        });
        expect(measured.result.rows).toEqual([[5_000_000]]);
        expect(measured.busy).toBeLessThan(0.5);
      }
      await db.close();
    });
  });

  it('keeps a read prepared without keeping its snapshot: it sees each commit and each change of the schema', async () => {
    await inTempDir(async (dir) => {
      const db = await createSqliteDatabase({ path: join(dir, 'db.sqlite') });
      await db.runAlone('write', 'CREATE TABLE t (a INTEGER)', [], LIMITS);
      for (let n = 1; n <= 3; n++) {
        await db.runAlone('write', 'INSERT INTO t (a) VALUES (?1)', [{ type: 'long', value: BigInt(n) }], LIMITS);
        // the same text each time, so the same prepared statement of a reader's connection
        expect((await db.runAlone('read', 'SELECT count(*), max(a) FROM t', [], LIMITS)).rows).toEqual([[n, n]]);
        const all = await db.runAlone('read', 'SELECT * FROM t', [], LIMITS);
        expect(all.columns.map((c) => c.name)).toEqual(n < 3 ? ['a'] : ['a', 'b']);
        if (n === 2) await db.runAlone('write', "ALTER TABLE t ADD COLUMN b TEXT DEFAULT 'x'", [], LIMITS);
      }
      expect((await db.runAlone('read', 'SELECT * FROM t WHERE a = 3', [], LIMITS)).rows).toEqual([[3, 'x']]);
      // A transaction of a writer commits beside the kept statements (none holds a read open).
      const tx = await db.begin('write');
      await tx.run('DELETE FROM t', [], LIMITS);
      await tx.commit();
      expect((await db.runAlone('read', 'SELECT count(*), max(a) FROM t', [], LIMITS)).rows).toEqual([[0, null]]);
      await db.close();
    });
  });
});

describe('SQLite Database: an INSERT of given rows runs on the event loop, unless a trigger could fire', () => {
  it('runs plain INSERTs in a request as any other statement, and a triggered one off the loop', async () => {
    await inTempDir(async (dir) => {
      const db = await createSqliteDatabase({ path: join(dir, 'db.sqlite') });
      await db.runAlone('write', 'CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)', [], LIMITS);
      await db.runAlone('write', 'CREATE TABLE big (x)', [], LIMITS);
      await db.runAlone('write', `INSERT INTO big SELECT x FROM ${sqlite.series(1, 4000)}`, [], LIMITS);
      const insert = 'INSERT INTO t (a, b) VALUES (?1, ?2)';
      const tx = await db.begin('write');
      for (let a = 1; a <= 3; a++) {
        const r = await tx.run(
          insert,
          [
            { type: 'long', value: BigInt(a) },
            { type: 'string', value: `v${a}` },
          ],
          LIMITS,
        );
        expect(r.rowsAffected).toBe(1);
      }
      // A constraint violation is the statement's SqlError; the transaction is aborted as after any fault.
      expect(await fault(tx.run(insert, [{ type: 'long', value: 1n }, null], LIMITS))).toMatchObject({
        fault: 'SqlError',
        message: expect.stringMatching(/UNIQUE/),
      });
      await tx.rollback();
      expect((await db.runAlone('read', 'SELECT count(*) FROM t', [], LIMITS)).rows).toEqual([[0]]);

      // A trigger makes the same INSERT slow (a count over 16 million pairs): it must not stall the loop.
      await db.runAlone('write', 'CREATE TABLE log (n)', [], LIMITS);
      await db.runAlone(
        'write',
        'CREATE TRIGGER slow AFTER INSERT ON t BEGIN INSERT INTO log SELECT count(*) FROM big a, big b WHERE a.x + b.x > 0; END',
        [],
        LIMITS,
      );
      const again = await db.begin('write');
      const triggered = await loopBusy(() =>
        again.run(
          insert,
          [
            { type: 'long', value: 7n },
            { type: 'string', value: 'x' },
          ],
          { timeoutMs: 30_000, maxRows: 10 },
        ),
      );
      await again.commit();
      expect((await db.runAlone('read', 'SELECT n FROM log', [], LIMITS)).rows).toEqual([[16_000_000]]);
      // Run on the loop, the INSERT (a few hundred milliseconds) would keep it busy all along.
      expect(triggered.busy).toBeLessThan(0.5);

      // Within one request: plain INSERTs while there is no trigger (the check is made once), then the request
      // creates one itself, and its next INSERT must not run on the loop either.
      await db.runAlone('write', 'DROP TRIGGER slow', [], LIMITS);
      const request = await db.begin('write');
      for (let a = 10; a <= 12; a++) await request.run(insert, [{ type: 'long', value: BigInt(a) }, null], LIMITS);
      await request.run(
        'CREATE TRIGGER slow AFTER INSERT ON t BEGIN INSERT INTO log SELECT count(*) FROM big a, big b WHERE a.x + b.x > 0; END',
        [],
        LIMITS,
      );
      const inRequest = await loopBusy(() =>
        request.run(insert, [{ type: 'long', value: 13n }, null], { timeoutMs: 30_000, maxRows: 10 }),
      );
      await request.commit();
      expect((await db.runAlone('read', 'SELECT count(*) FROM log', [], LIMITS)).rows).toEqual([[2]]);
      expect(inRequest.busy).toBeLessThan(0.5);
      await db.close();
    });
  });
});

describe('openDatabase', () => {
  it('opens SQLite for file: URLs (relative, absolute, file:///), creating the folders', () =>
    inTempDir(async (dir) => {
      const relativePath = relative(process.cwd(), join(dir, 'rel', 'a', 'idb.sqlite'));
      const urls = [
        `file:./${relativePath}`,
        `file:${join(dir, 'abs', 'b', 'idb.sqlite')}`,
        pathToFileURL(join(dir, 'url form', 'idb.sqlite')).href,
      ];
      for (const url of urls) {
        const db = await openDatabase(url);
        expect(db.dialect).toBe('sqlite');
        await db.close();
      }
      expect(existsSync(join(dir, 'rel', 'a', 'idb.sqlite'))).toBe(true);
      expect(existsSync(join(dir, 'abs', 'b', 'idb.sqlite'))).toBe(true);
      expect(existsSync(join(dir, 'url form', 'idb.sqlite'))).toBe(true); // %20 decoded
    }));

  it('picks PostgreSQL for postgres:// and postgresql:// (connecting only when used)', async () => {
    for (const url of ['postgres://u:secret@127.0.0.1:1/db', 'postgresql://u@127.0.0.1:1/db']) {
      const db = await openDatabase(url);
      expect(db.dialect).toBe('postgres');
      await db.close();
    }
  });

  it('refuses other URLs with a ConfigError that never repeats a password', async () => {
    for (const url of [
      'mysql://admin:s3cret@db/x',
      'postgres://admin:s3cret@[::1',
      'sqlite:./x.db',
      's3cret',
      'file:./x.db?mode=ro',
      'file:',
      'file://server/share/x.db',
    ]) {
      const error = await openDatabase(url).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, url).toBeInstanceOf(ConfigError);
      expect((error as Error).message).not.toContain('s3cret');
    }
  });
});
