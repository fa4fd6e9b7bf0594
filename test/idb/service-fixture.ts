/**
 * What the parts of the IIDBService suite (service-suite.ts) share: the backends as deployed (SQLite with the folder
 * store, PostgreSQL with S3-compatible storage, SQL Server through Babelfish), the roles, callers and limits, the
 * service over a backend, an IdbFault catcher and the suite's context.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { DEFAULT_DATABASE, type DatabaseLimits } from '../../src/idb/config.ts';
import {
  IdbFault,
  type Caller,
  type ClrValue,
  type FaultName,
  type OperationName,
  type Operations,
} from '../../src/idb/contract.ts';
import type { Database } from '../../src/idb/database.ts';
import type { FileStore } from '../../src/idb/file-store.ts';
import { parseFilesUrl } from '../../src/idb/files-url.ts';
import { parseRoles } from '../../src/idb/roles.ts';
import { S3FileStore } from '../../src/idb/s3-file-store.ts';
import { openIdbService, type IdbService } from '../../src/idb/service.ts';
import type { S3FilesConfig } from '../../src/idb/files-url.ts';
import { FolderFileStore } from '../../src/runtime/node/idb/folder-file-store.ts';
import { openDatabase } from '../../src/runtime/node/idb/open-database.ts';
import { startBabelfish } from '../support/peers/babelfish.ts';
import { startPostgres } from '../support/peers/postgres.ts';
import { startS3rver } from '../support/peers/s3rver.ts';

export const MiB = 1024 * 1024;
export const LIMITS: DatabaseLimits = {
  statementTimeoutMs: 10_000,
  maxRows: 1000,
  requestIdleMs: 60_000,
  maxRequestsPerIdentity: 4,
};
export const ROLES = parseRoles(
  JSON.stringify({
    reader: ['accounting'],
    writer: ['CORP\\writer', 'other@CORP.EXAMPLE'],
    groups: { accounting: ['CORP\\reader', 'CORP\\auditor'] },
  }),
  'test roles',
);

export const writer: Caller = { name: 'CORP\\Writer', anonymous: false, connectionId: 'c1' };
export const otherWriter: Caller = { name: 'other@CORP.EXAMPLE', anonymous: false, connectionId: 'c2' };
export const reader: Caller = { name: 'corp\\reader', anonymous: false, connectionId: 'c3' };
export const stranger: Caller = { name: 'CORP\\mallory', anonymous: false, connectionId: 'c4' };

export interface Backend {
  /** a fresh Database on the same data each call */
  database(): Promise<Database>;
  files: FileStore;
  /** every content key the store holds */
  keys(): Promise<string[]>;
  /** a statement that runs until interrupted */
  endless: string;
  /** T-SQL instead of the SQL shared by SQLite and PostgreSQL (SQL Server over TDS, Babelfish here) */
  tsql?: boolean;
  stop(): Promise<void>;
}

/** SQL Server through Babelfish (test/support/peers/babelfish.ts), files in a folder. */
export async function sqlServerBackend(): Promise<Backend> {
  const [bbf, root] = await Promise.all([startBabelfish(), mkdtemp(join(tmpdir(), 'idb-service-'))]);
  const files = await FolderFileStore.open({ root: join(root, 'files') });
  return {
    database: () => openDatabase(bbf.url),
    files,
    keys: async () =>
      (await readdir(join(root, 'files'), { recursive: true }))
        .filter((name) => /[0-9a-f-]{36}$/.test(name))
        .map((name) => name.slice(-36)),
    // Babelfish has no WAITFOR: a join that runs for hours (a recursion answers a cancel only after seconds).
    endless: 'SELECT count_big(*) FROM sys.all_columns a CROSS JOIN sys.all_columns b CROSS JOIN sys.all_columns c',
    tsql: true,
    async stop() {
      await bbf.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}

export async function sqliteBackend(): Promise<Backend> {
  const root = await mkdtemp(join(tmpdir(), 'idb-service-'));
  const files = await FolderFileStore.open({ root: join(root, 'files') });
  return {
    database: () => openDatabase(`file:${join(root, 'idb.sqlite')}`),
    files,
    keys: async () =>
      (await readdir(join(root, 'files'), { recursive: true }))
        .filter((name) => /[0-9a-f-]{36}$/.test(name))
        .map((name) => name.slice(-36)),
    endless: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c',
    stop: () => rm(root, { recursive: true, force: true }),
  };
}

export async function postgresBackend(): Promise<Backend> {
  const [pg, s3] = await Promise.all([startPostgres(), startS3rver(['idb-service'])]);
  const config = parseFilesUrl(`s3://idb-service/files/?endpoint=${s3.endpoint}`, {
    AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
  }) as S3FilesConfig;
  const files = new S3FileStore(config);
  return {
    database: () => openDatabase(pg.url),
    files,
    keys: async () => {
      const listing = await (await fetch(`${s3.endpoint}/idb-service?list-type=2&prefix=files/`)).text();
      return [...listing.matchAll(/<Key>files\/([^<]+)<\/Key>/g)].map((m) => m[1]!);
    },
    endless: 'SELECT pg_sleep(3600)',
    async stop() {
      await Promise.all([pg.stop(), s3.stop()]);
    },
  };
}

/** The handlers over the backend's database and files, with the suite's roles and limits (`limits` overrides). */
export async function service(
  backend: Backend,
  limits: Partial<DatabaseLimits> = {},
  now = () => new Date('2026-01-02T03:04:05.678Z'),
): Promise<IdbService> {
  return openIdbService({
    databases: new Map([[DEFAULT_DATABASE, await backend.database()]]),
    files: backend.files,
    roles: ROLES,
    limits: { ...LIMITS, ...limits },
    utcNow: now,
    newId: randomUUID,
    logger: { log: () => {} },
  });
}

export async function fault(promise: Promise<unknown>, name: FaultName): Promise<IdbFault> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(IdbFault);
  expect((error as IdbFault).fault).toBe(name);
  return error as IdbFault;
}

export const sha256 = (content: Uint8Array) => createHash('sha256').update(content).digest('hex');
export const bytes = (length: number) => new Uint8Array(randomBytes(length));

/** What the parts of `serviceSuite` share: the backend and the service open on it (once `beforeAll` has run), and helpers. */
export interface ServiceSuiteContext {
  readonly backend: Backend;
  readonly idb: IdbService;
  call<K extends OperationName>(
    operation: K,
    caller: Caller,
    args: Operations[K]['args'],
  ): Promise<Operations[K]['result']>;
  /** The arguments of a SQL operation, parameters given by name. */
  sql(
    requestId: string,
    text: string,
    parameters?: Record<string, ClrValue | null>,
  ): { requestId: string; sql: string; parameters: { Name: string; Value: ClrValue | null }[] };
  /** ReturnScalar outside any request. */
  scalar(
    text: string,
    parameters?: Record<string, ClrValue | null>,
    caller?: Caller,
  ): Promise<Operations['ReturnScalar']['result']>;
  /** How many rows `table` (and whatever follows it, e.g. a WHERE) has, as a reader sees it. */
  count(table: string): Promise<unknown>;
  /** The scalar type of `SELECT 1` (no declared type): Int64 on SQLite (an expression), Int32 on PostgreSQL. */
  backendInt(): 'long' | 'int';
}
