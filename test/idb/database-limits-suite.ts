import { expect, it } from 'vitest';
import { type Backend, type SuiteContext, ENDLESS, fault, LIMITS, BUSY_TIMEOUT_MS } from './database-backends.ts';

/** Limits and faults: time-outs, the row cap, transactions side by side, cancelling, waiting writers, failing commits. Part of `databaseSuite` (database-suite.ts), inside its describe. */
export function databaseLimitsSuite(b: Backend, ctx: SuiteContext): void {
  const { inTransaction, count, onSqlite, tsql, noSleep } = ctx;
  /** A parent table and a child whose foreign key is checked only at COMMIT. */
  const deferredForeignKey = (parent: string, child: string) =>
    inTransaction('write', async (t) => {
      await t.run(`CREATE TABLE ${parent} (id INTEGER PRIMARY KEY)`, [], LIMITS);
      await t.run(
        `CREATE TABLE ${child} (parent_id int REFERENCES ${parent} (id) DEFERRABLE INITIALLY DEFERRED)`,
        [],
        LIMITS,
      );
      await t.commit();
    });

  it('times a slow statement out and aborts its transaction', async () => {
    const t = await ctx.db.begin('read');
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
      const t = await ctx.db.begin('write');
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
    const t = await ctx.db.begin('read');
    const over = await fault(
      t.run(`SELECT x FROM ${b.series(1, onSqlite ? ENDLESS : 5000000)}`, [], { timeoutMs: 5000, maxRows: 2500 }),
    );
    expect(over).toMatchObject({ fault: 'QuotaExceeded', transactionAborted: true });
    expect(over.message).toContain('2500');
    await t.rollback();

    // A write whose RETURNING rows exceed the cap is not left for a commit.
    const w = await ctx.db.begin('write');
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

  it('reads only the first row for firstRowOnly (ReturnScalar), past the row cap, and still writes every RETURNING row', async () => {
    const first = { timeoutMs: 5000, maxRows: 10, firstRowOnly: true };
    // On its own (a reader's path on SQLite) and in a transaction; far more rows than the cap.
    const alone = await ctx.db.runAlone('read', `SELECT x FROM ${b.series(7, 5000)}`, [], first);
    expect(alone.rows).toEqual([[7]]);
    expect(alone.columns.map((c) => c.name)).toEqual(['x']);
    await inTransaction('read', async (t) => {
      expect((await t.run(`SELECT x FROM ${b.series(3, 5000)}`, [], first)).rows).toEqual([[3]]);
      // The transaction goes on: nothing was left half-read.
      expect((await t.run(`SELECT x FROM ${b.series(1, 2)}`, [], LIMITS)).rows).toHaveLength(2);
      expect((await t.run(`SELECT x FROM ${b.series(1, 2)} WHERE x > 5`, [], first)).rows).toEqual([]);
    });
    const w = await ctx.db.begin('write');
    const written = await w.run(
      tsql
        ? `INSERT INTO items OUTPUT INSERTED.id SELECT x, 'first' FROM ${b.series(200, 230)}`
        : `INSERT INTO items SELECT x, 'first' FROM ${b.series(200, 230)} RETURNING id`,
      [],
      first,
    );
    expect(written.rows).toHaveLength(1);
    await w.commit();
    expect(await count("name = 'first'")).toBe(b.count(31));
  });

  it("commits a writer's firstRowOnly statement run alone, and leaves nothing of one that fails", async () => {
    const first = { timeoutMs: 5000, maxRows: 10, firstRowOnly: true };
    const insert = (from: number, to: number) =>
      tsql
        ? `INSERT INTO items OUTPUT INSERTED.id SELECT x, 'alone' FROM ${b.series(from, to)}`
        : `INSERT INTO items SELECT x, 'alone' FROM ${b.series(from, to)} RETURNING id`;
    expect((await ctx.db.runAlone('write', insert(300, 330), [], first)).rows).toHaveLength(1);
    expect(await count("name = 'alone'")).toBe(b.count(31));
    // 330 is taken: the statement fails, and none of its other rows stays.
    expect((await fault(ctx.db.runAlone('write', insert(330, 340), [], first))).fault).toBe('SqlError');
    expect(await count("name = 'alone'")).toBe(b.count(31));
    expect((await ctx.db.runAlone('write', insert(341, 341), [], first)).rows).toHaveLength(1);
    expect(await count("name = 'alone'")).toBe(b.count(32));
    // Without firstRowOnly: under the row cap committed, over it refused and rolled back.
    const capped = { timeoutMs: 5000, maxRows: 10 };
    expect((await ctx.db.runAlone('write', insert(350, 359), [], capped)).rows).toHaveLength(10);
    expect(await count("name = 'alone'")).toBe(b.count(42));
    expect((await fault(ctx.db.runAlone('write', insert(360, 370), [], capped))).fault).toBe('QuotaExceeded');
    expect(await count("name = 'alone'")).toBe(b.count(42));
    // Statements that write nothing, one after the other on the pool's connections, then one that does.
    for (let i = 0; i < 12; i++)
      expect((await ctx.db.runAlone('write', `SELECT x FROM ${b.series(1, 3)}`, [], capped)).rows).toHaveLength(3);
    expect((await ctx.db.runAlone('write', insert(371, 371), [], capped)).rows).toHaveLength(1);
    expect(await count("name = 'alone'")).toBe(b.count(43));
  });

  it.runIf(b.name === 'postgres')(
    "reports a writer's statement run alone whose COMMIT fails (a deferred foreign key) as SqlError",
    async () => {
      await deferredForeignKey('parent_alone', 'child_alone');
      // A ReturnScalar's COMMIT goes in its own write, another statement's is awaited after it.
      for (const firstRowOnly of [true, false]) {
        const failed = await fault(
          ctx.db.runAlone('write', 'INSERT INTO child_alone VALUES (5) RETURNING parent_id', [], {
            timeoutMs: 5000,
            maxRows: 10,
            firstRowOnly,
          }),
        );
        expect(failed.fault).toBe('SqlError');
        expect(failed.message).toMatch(/foreign key/);
      }
      expect((await ctx.db.runAlone('read', 'SELECT count(*) FROM child_alone', [], LIMITS)).rows).toEqual([[0n]]);
    },
  );

  it("ends a reader's call alone however it ends: answered, failed, refused by the row cap, timed out", async () => {
    // On PostgreSQL the ROLLBACK rides behind the statement, and a failed statement has the server skip it: each
    // connection of the pool must come back usable, with no transaction left open, whatever happened to the last read.
    const capped = { timeoutMs: 5000, maxRows: 10 };
    const slow = `SELECT count(*) FROM ${b.series(1, ENDLESS)}`;
    for (let i = 0; i < 6; i++) {
      expect((await ctx.db.runAlone('read', `SELECT x FROM ${b.series(1, 10)}`, [], capped)).rows).toHaveLength(10);
      expect((await fault(ctx.db.runAlone('read', `SELECT x FROM ${b.series(1, 11)}`, [], capped))).fault).toBe(
        'QuotaExceeded',
      );
      expect((await fault(ctx.db.runAlone('read', 'SELECT * FROM no_such_table', [], capped))).fault).toBe('SqlError');
      expect((await fault(ctx.db.runAlone('read', slow, [], { timeoutMs: 50, maxRows: 10 }))).fault).toBe('Timeout');
    }
    const t = await ctx.db.begin('write'); // would wait for a lock, or fail, were a read's transaction left open
    await t.run(`INSERT INTO items VALUES (900, 'after reads')`, [], LIMITS);
    await t.commit();
    expect(await count("name = 'after reads'")).toBe(b.count(1));
  });

  it.runIf(b.name === 'postgres')("runs a writer's query that writes after all again as a write, once", async () => {
    // A writer's SELECT goes first as a reader's (its ROLLBACK in the same write); refused there (25006), it runs
    // again in a transaction that can write: the sequence shows each ran to its end exactly once.
    await ctx.db.runAlone('write', 'CREATE SEQUENCE IF NOT EXISTS writer_reads', [], LIMITS);
    await ctx.db.runAlone('write', 'CREATE TABLE IF NOT EXISTS writer_reads_log (v bigint)', [], LIMITS);
    await ctx.db.runAlone(
      'write',
      'CREATE OR REPLACE FUNCTION writer_reads_note(v bigint) RETURNS bigint LANGUAGE sql AS ' +
        "'INSERT INTO writer_reads_log VALUES (v) RETURNING v'",
      [],
      LIMITS,
    );
    const capped = { timeoutMs: 5000, maxRows: 10 };
    expect((await ctx.db.runAlone('write', "SELECT nextval('writer_reads')", [], capped)).rows).toEqual([[1n]]);
    expect(
      (await ctx.db.runAlone('write', "SELECT writer_reads_note(nextval('writer_reads'))", [], capped)).rows,
    ).toEqual([[2n]]);
    expect((await ctx.db.runAlone('write', 'SELECT v FROM writer_reads_log FOR UPDATE', [], capped)).rows).toEqual([
      [2n],
    ]);
    // A reader's is refused, as before.
    const refused = await fault(ctx.db.runAlone('read', "SELECT nextval('writer_reads')", [], capped));
    expect(refused.fault).toBe('AccessDenied');
    expect((await ctx.db.runAlone('read', 'SELECT last_value FROM writer_reads', [], capped)).rows).toEqual([[2n]]);
  });

  it.runIf(b.name === 'postgres')('stops a firstRowOnly statement at its first row', async () => {
    // With postgres.js (the driver before pg) a reserved connection's CLOSE was undefined, which asked for the next
    // row instead: every row was read, one round trip each. The sequence shows how many rows the server produced.
    await inTransaction('write', async (t) => {
      await t.run('CREATE TEMP SEQUENCE first_row_only', [], LIMITS);
      const first = { timeoutMs: 5000, maxRows: 10, firstRowOnly: true };
      expect((await t.run(`SELECT nextval('first_row_only') FROM ${b.series(1, 50)}`, [], first)).rows).toEqual([[1n]]);
      expect((await t.run('SELECT last_value FROM first_row_only', [], LIMITS)).rows).toEqual([[1n]]);
    });
  });

  it.runIf(b.name === 'postgres')('refuses COPY FROM STDIN as SqlError, and the connection goes on', async () => {
    // The server waits for data the service never has: the copy is failed, and answered once the server is past it.
    for (let i = 0; i < 5; i++) {
      const refused = await fault(ctx.db.runAlone('write', 'COPY items FROM STDIN', [], LIMITS));
      expect(refused).toMatchObject({ fault: 'SqlError' });
      expect(refused.message).toMatch(/COPY FROM STDIN is not supported/);
    }
    expect(await count()).toBeTypeOf('bigint');
  });

  it.runIf(b.name === 'postgres')(
    'rolls back a running statement without its cancel reaching the next statement on its connection',
    async () => {
      // The rollback cancels the statement, which may be done before the cancel request lands: the request must not
      // then cancel what the connection runs next (here, on a pool of 4, the next transactions' statements).
      for (let i = 0; i < 40; i++) {
        const t = await ctx.db.begin('read');
        const running = t.run(`SELECT count(*) FROM ${b.series(1, 2000 + 50 * i)}`, [], LIMITS).catch(() => undefined);
        // Sent by the time the event loop comes round; the rollback then finds it running.
        await new Promise((sent) => setImmediate(sent));
        await t.rollback();
        await running;
        for (let j = 0; j < 4; j++)
          expect((await ctx.db.runAlone('read', `SELECT count(*) FROM ${b.series(1, 3000)}`, [], LIMITS)).rows).toEqual(
            [[3000n]],
          );
      }
    },
  );

  it('runs transactions side by side: a slow one blocks neither another nor the event loop', async () => {
    const slow = await ctx.db.begin('read');
    const fast = await ctx.db.begin('read');
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
    const t = await ctx.db.begin('read');
    const running = t.run(b.sleep(10), [], { timeoutMs: 30_000, maxRows: 10 });
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await t.rollback();
    expect(Date.now() - started).toBeLessThan(2000);
    expect((await fault(running)).fault).toBe('Timeout'); // 57014 on PostgreSQL, SQLITE_INTERRUPT on SQLite
  });

  it.runIf(onSqlite)('cancels a statement on rollback also while its rows are being read', async () => {
    const t = await ctx.db.begin('read');
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
    const first = await ctx.db.begin('write');
    try {
      let started = Date.now();
      const refused = await fault(ctx.db.begin('write'));
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
      const second = await ctx.db.begin('write');
      expect(Date.now() - started).toBeGreaterThanOrEqual(80);
      await second.rollback();
    } finally {
      await first.rollback();
    }
  });

  it.runIf(onSqlite)('rolls back when COMMIT fails (a deferred foreign key) and reports SqlError', async () => {
    await deferredForeignKey('parent', 'child');
    const t = await ctx.db.begin('write');
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
      const t = await ctx.db.begin('write');
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
}
