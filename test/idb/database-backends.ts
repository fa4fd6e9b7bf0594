/**
 * The database backends the shared suite (database-suite.ts) runs on, and what its parts share: the statement
 * limits, the backends' SQL dialect helpers, a temp folder, a DatabaseFault catcher and the suite's context.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import {
  DatabaseFault,
  type Database,
  type DatabaseTransaction,
  type StatementLimits,
} from '../../src/idb/database.ts';
import { createPostgresDatabase } from '../../src/runtime/node/idb/postgres-database.ts';
import { createSqliteDatabase } from '../../src/runtime/node/idb/sqlite-database.ts';
import { startPostgres } from '../support/peers/postgres.ts';

export const LIMITS: StatementLimits = { timeoutMs: 5000, maxRows: 1000 };
/** How long a SQLite writer waits for another (short, so the waiting test is quick). */
export const BUSY_TIMEOUT_MS = 300;

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
    const db = createPostgresDatabase({ url: pg.url, maxConnections: 4 });
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

/** What the parts of `databaseSuite` share: the open database (once `beforeAll` has run) and helpers over it. */
export interface SuiteContext {
  readonly db: Database;
  onSqlite: boolean;
  /** SQL Server (Babelfish): T-SQL. */
  tsql: boolean;
  /** No sleep statement: a slow statement runs until its time-out. */
  noSleep: boolean;
  /** Runs `work` in a transaction that is rolled back afterwards. */
  inTransaction<T>(access: 'read' | 'write', work: (t: DatabaseTransaction) => Promise<T>): Promise<T>;
  /** `count(*)` of the `items` table's rows matching `where`. */
  count(where?: string): Promise<unknown>;
}
