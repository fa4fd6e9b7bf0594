/**
 * The shared Database suite: `databaseSuite(backend)` opens the backend, creates the `items` table and runs the parts
 * (statements and types, transactions and requests, limits and faults) in one describe. database.test.ts (SQLite),
 * database.postgres.peers.test.ts and database.sqlserver.peers.test.ts pick the backend.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import type { Database, DatabaseTransaction } from '../../src/idb/database.ts';
import { type Backend, LIMITS, type SuiteContext } from './database-backends.ts';
import { databaseLimitsSuite } from './database-limits-suite.ts';
import { databaseTransactionsSuite } from './database-transactions-suite.ts';
import { databaseTypesSuite } from './database-types-suite.ts';

export { type Backend, ENDLESS, fault, inTempDir, LIMITS, postgres, sqlite } from './database-backends.ts';

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

    const ctx: SuiteContext = {
      get db() {
        return db;
      },
      onSqlite,
      tsql,
      noSleep,
      inTransaction,
      count,
    };
    databaseTypesSuite(b, ctx);
    databaseTransactionsSuite(b, ctx);
    databaseLimitsSuite(b, ctx);
  });
}
