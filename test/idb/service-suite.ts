/**
 * The 13 IIDBService operations through the handlers, on each backend as deployed: the embedded SQLite file with the
 * folder store (service.test.ts), and a real PostgreSQL (started here) with S3-compatible storage (s3rver,
 * service.postgres.peers.test.ts). One suite, parameterized by backend, so both answer the same.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DATABASE, type DatabaseLimits } from '../../src/idb/config.ts';
import {
  EMPTY_GUID,
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
import { SchemaTooNewError } from '../../src/idb/schema.ts';
import { openIdbService, type IdbService } from '../../src/idb/service.ts';
import type { S3FilesConfig } from '../../src/idb/files-url.ts';
import { FolderFileStore } from '../../src/runtime/node/idb/folder-file-store.ts';
import { openDatabase } from '../../src/runtime/node/idb/open-database.ts';
import { startBabelfish } from '../support/peers/babelfish.ts';
import { startPostgres } from '../support/peers/postgres.ts';
import { startS3rver } from '../support/peers/s3rver.ts';

const MiB = 1024 * 1024;
const LIMITS: DatabaseLimits = {
  statementTimeoutMs: 10_000,
  maxRows: 1000,
  requestIdleMs: 60_000,
  maxRequestsPerIdentity: 4,
};
const ROLES = parseRoles(
  JSON.stringify({
    reader: ['accounting'],
    writer: ['CORP\\writer', 'other@CORP.EXAMPLE'],
    groups: { accounting: ['CORP\\reader', 'CORP\\auditor'] },
  }),
  'test roles',
);

const writer: Caller = { name: 'CORP\\Writer', anonymous: false, connectionId: 'c1' };
const otherWriter: Caller = { name: 'other@CORP.EXAMPLE', anonymous: false, connectionId: 'c2' };
const reader: Caller = { name: 'corp\\reader', anonymous: false, connectionId: 'c3' };
const stranger: Caller = { name: 'CORP\\mallory', anonymous: false, connectionId: 'c4' };

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

async function service(
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

async function fault(promise: Promise<unknown>, name: FaultName): Promise<IdbFault> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(IdbFault);
  expect((error as IdbFault).fault).toBe(name);
  return error as IdbFault;
}

const sha256 = (content: Uint8Array) => createHash('sha256').update(content).digest('hex');
const bytes = (length: number) => new Uint8Array(randomBytes(length));

/** The whole suite on one backend; `*.test.ts` files beside this one pick the backend. */
export function serviceSuite(label: string, start: () => Promise<Backend>): void {
  describe(`IIDBService on ${label}`, () => {
    let backend: Backend;
    let idb: IdbService;
    const call = <K extends OperationName>(operation: K, caller: Caller, args: Operations[K]['args']) =>
      idb.call(operation, caller, args);
    const sql = (requestId: string, text: string, parameters: Record<string, ClrValue | null> = {}) => ({
      requestId,
      sql: text,
      parameters: Object.entries(parameters).map(([Name, Value]) => ({ Name, Value })),
    });
    const scalar = (text: string, parameters: Record<string, ClrValue | null> = {}, caller = writer) =>
      call('ReturnScalar', caller, sql(EMPTY_GUID, text, parameters));
    const count = async (table: string) => (await scalar(`SELECT count(*) FROM ${table}`, {}, reader))?.value;

    beforeAll(async () => {
      backend = await start();
      idb = await service(backend);
      await call('ExecuteNonQuery', writer, sql(EMPTY_GUID, 'CREATE TABLE items (id int PRIMARY KEY, name text)'));
    }, 60_000);

    afterAll(async () => {
      await idb?.close();
      await backend?.stop();
    });

    describe('authorization', () => {
      it('answers Heartbeat to anybody, and nothing else to an identity without a role', async () => {
        expect(await call('Heartbeat', stranger, {})).toBe(true);
        expect(await call('Heartbeat', { name: 'anonymous', anonymous: true, connectionId: 'x' }, {})).toBe(true);
        const denied = await fault(scalar('SELECT 1', {}, stranger), 'AccessDenied');
        expect(denied.code).toBe('Sender');
        await fault(call('GetFile', stranger, { fileId: randomUUID() }), 'AccessDenied');
      });

      it('lets a reader read but not call writer operations', async () => {
        expect(await scalar('SELECT 1', {}, reader)).toEqual(
          backendInt() === 'long' ? { type: 'long', value: 1n } : { type: 'int', value: 1 },
        );
        await fault(call('ExecuteNonQuery', reader, sql(EMPTY_GUID, 'DELETE FROM items')), 'AccessDenied');
        await fault(call('CreateDatabaseRequest', reader, { database: null }), 'AccessDenied');
        await fault(call('NewFile', reader, { file: null }), 'AccessDenied');
        // A member of the group through a name in another case.
        expect(await call('GetFile', { ...reader, name: 'CORP\\AUDITOR' }, { fileId: randomUUID() })).toBeNull();
      });

      it("refuses a reader's write through ReturnScalar in the database itself", async () => {
        const denied = await fault(
          scalar(
            backend.tsql
              ? "INSERT INTO items (id, name) OUTPUT INSERTED.id VALUES (99, 'x')"
              : "INSERT INTO items (id, name) VALUES (99, 'x') RETURNING id",
            {},
            reader,
          ),
          'AccessDenied',
        );
        // SQL Server has no read-only transaction: the readers' login lacks the permission.
        expect(denied.message).toMatch(backend.tsql ? /permission/i : /read.?only|readonly/i);
        expect(Number(await count('items WHERE id = 99'))).toBe(0);
      });
    });

    // The scalar type of `SELECT 1` (no declared type): Int64 on SQLite (an expression), Int32 on PostgreSQL.
    const backendInt = () => (backend.endless.startsWith('WITH RECURSIVE') ? 'long' : 'int');

    describe('SQL', () => {
      it('binds every parameter type, null, non-ASCII text and a 1 MiB blob, and types results from the declared types', async () => {
        await call(
          'ExecuteNonQuery',
          writer,
          sql(
            EMPTY_GUID,
            backend.tsql
              ? 'CREATE TABLE params (k int, i int, s smallint, l bigint, d decimal(20,6), r real, f double precision, b bit, t nvarchar(max), dt datetime, bin varbinary(max), g uniqueidentifier)'
              : 'CREATE TABLE params (k int, i int, s smallint, l bigint, d decimal(20,6), r real, f double precision, b boolean, t text, dt timestamp, bin bytea, g uuid)',
          ),
        );
        const blob = bytes(MiB);
        const values: Record<string, ClrValue | null> = {
          i: { type: 'int', value: -2147483648 },
          s: { type: 'short', value: 32767 },
          l: { type: 'long', value: 9223372036854775807n },
          d: { type: 'decimal', value: '12345.678900' },
          r: { type: 'float', value: 1.5 },
          f: { type: 'double', value: 0.1 },
          b: { type: 'boolean', value: true },
          t: { type: 'string', value: 'Grüße, 😀 — ✓ 日本' },
          dt: { type: 'dateTime', value: '2024-02-29T23:59:59.123' },
          bin: { type: 'base64Binary', value: blob },
          g: { type: 'guid', value: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' },
        };
        const inserted = await call(
          'ExecuteNonQuery',
          writer,
          sql(EMPTY_GUID, 'INSERT INTO params VALUES (1, @i, @s, @l, @d, @r, @f, @b, @t, @dt, @bin, @g)', values),
        );
        expect(inserted).toBe(1);
        const nulls = Object.fromEntries(Object.keys(values).map((k) => [`@${k}`, null]));
        expect(
          await call(
            'ExecuteNonQuery',
            writer,
            sql(EMPTY_GUID, 'INSERT INTO params VALUES (2, @i, @s, @l, @d, @r, @f, @b, @t, @dt, @bin, @g)', nulls),
          ),
        ).toBe(1);

        const sqlite = backend.endless.startsWith('WITH RECURSIVE');
        for (const [column, value] of Object.entries(values)) {
          const got = await scalar(`SELECT ${column} FROM params WHERE k = 1`, {}, reader);
          // SQLite stores a decimal(20,6) value as a REAL (NUMERIC affinity), so its scale is not kept.
          const expected = column === 'd' && sqlite ? { type: 'decimal', value: '12345.6789' } : value;
          expect(got, column).toEqual(expected);
          expect(await scalar(`SELECT ${column} FROM params WHERE k = 2`, {}, reader), column).toBeNull();
        }
        const table = await call('ReturnDatatable', reader, sql(EMPTY_GUID, 'SELECT * FROM params ORDER BY k'));
        const types = [
          ...table.xml.matchAll(
            /<xs:element name="(\w+)"(?: msdata:DataType="([^"]+)")?(?: msdata:DateTimeMode="(\w+)")? type="([^"]+)"/g,
          ),
        ].map((m) => [m[1], m[4], m[2] ? 'Guid' : m[3]].filter(Boolean).join(' '));
        expect(types).toEqual([
          'k xs:int',
          'i xs:int',
          's xs:short',
          'l xs:long',
          'd xs:decimal',
          'r xs:float',
          'f xs:double',
          'b xs:boolean',
          't xs:string',
          'dt xs:dateTime Unspecified',
          'bin xs:base64Binary',
          'g xs:string Guid',
        ]);
        expect(table.xml).toContain('<t>Grüße, 😀 — ✓ 日本</t>');
        expect(table.xml).toContain('<dt>2024-02-29T23:59:59.123</dt>');
        expect(table.xml).toContain(`<bin>${Buffer.from(blob).toString('base64')}</bin>`);
        // The second row has every cell null: nothing but its key.
        expect(table.xml).toContain(
          '<Table diffgr:id="Table2" msdata:rowOrder="1" diffgr:hasChanges="inserted"><k>2</k></Table>',
        );
      });

      it('binds @name with or without the @ in the parameter name, case-insensitively', async () => {
        expect(await scalar('SELECT @Value', { value: { type: 'string', value: 'x' } })).toEqual({
          type: 'string',
          value: 'x',
        });
        expect(await scalar('SELECT @value', { '@VALUE': { type: 'string', value: 'y' } })).toEqual({
          type: 'string',
          value: 'y',
        });
        // T-SQL: an @name no parameter names is a variable, and the server says it is not declared.
        const missing = await fault(scalar('SELECT @nope'), backend.tsql ? 'SqlError' : 'InvalidArgument');
        expect(missing.message).toContain('@nope');
        await fault(scalar('   '), 'InvalidArgument');
      });

      it('counts rows affected by INSERT, UPDATE and DELETE, and -1 for other statements', async () => {
        expect(await call('ExecuteNonQuery', writer, sql(EMPTY_GUID, 'CREATE TABLE counted (id int)'))).toBe(-1);
        expect(await call('ExecuteNonQuery', writer, sql(EMPTY_GUID, 'INSERT INTO counted VALUES (1), (2), (3)'))).toBe(
          3,
        );
        expect(
          await call('ExecuteNonQuery', writer, sql(EMPTY_GUID, 'UPDATE counted SET id = id + 10 WHERE id > 1')),
        ).toBe(2);
        expect(await call('ExecuteNonQuery', writer, sql(EMPTY_GUID, 'DELETE FROM counted'))).toBe(3);
        expect(await call('ExecuteNonQuery', writer, sql(EMPTY_GUID, 'SELECT 1'))).toBe(-1);
      });

      it("answers the database's own message as SqlError, and an empty result as schema and empty diffgram", async () => {
        // (T-SQL reads `SELEC 1` as EXEC of a procedure SELEC.)
        const error = await fault(scalar(backend.tsql ? 'SELECT 1 FROM' : 'SELEC 1'), 'SqlError');
        expect(error.message).toMatch(/syntax/i);
        expect(error.message).not.toMatch(/\n\s+at /);
        await fault(scalar('SELECT * FROM no_such_table'), 'SqlError');
        const empty = await call('ReturnDatatable', reader, sql(EMPTY_GUID, 'SELECT id, name FROM items WHERE id < 0'));
        expect(empty.xml).toMatch(/<diffgr:diffgram [^>]*\/>$/);
        expect(empty.xml).toContain('<xs:element name="id" type="xs:int" minOccurs="0" />');
        expect(await scalar('SELECT id FROM items WHERE id < 0', {}, reader)).toBeNull();
      });

      it('faults QuotaExceeded above the row cap instead of truncating', async () => {
        const capped = await service(backend, { maxRows: 50 });
        try {
          const series = (n: number) =>
            `WITH ${backend.tsql ? '' : 'RECURSIVE '}s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < ${n}) SELECT x FROM s`;
          expect((await capped.call('ReturnDatatable', reader, sql(EMPTY_GUID, series(50)))).xml).toContain(
            'diffgr:id="Table50"',
          );
          await fault(capped.call('ReturnDatatable', reader, sql(EMPTY_GUID, series(51))), 'QuotaExceeded');
        } finally {
          await capped.close();
        }
      });

      it('interrupts a statement at the time-out with a Timeout fault', async () => {
        const quick = await service(backend, { statementTimeoutMs: 300 });
        try {
          const started = performance.now();
          const error = await fault(quick.call('ReturnScalar', reader, sql(EMPTY_GUID, backend.endless)), 'Timeout');
          expect(error.code).toBe('Receiver');
          expect(performance.now() - started).toBeLessThan(5000);
          expect(Number((await quick.call('ReturnScalar', reader, sql(EMPTY_GUID, 'SELECT 7')))?.value)).toBe(7);
        } finally {
          await quick.close();
        }
      });
    });

    describe('database requests', () => {
      it('keeps its writes invisible until committed, and drops them on rollback', async () => {
        const id = await call('CreateDatabaseRequest', writer, { database: null });
        expect(id).toMatch(/^[0-9a-f-]{36}$/);
        expect(await call('ExecuteNonQuery', writer, sql(id, "INSERT INTO items VALUES (1, 'one')"))).toBe(1);
        expect(await call('ReturnScalar', writer, sql(id, 'SELECT name FROM items WHERE id = 1'))).toEqual({
          type: 'string',
          value: 'one',
        });
        expect(Number(await count('items WHERE id = 1'))).toBe(0);
        expect(await call('CloseDatabaseRequest', writer, { requestId: id, commit: true })).toBe(true);
        expect(Number(await count('items WHERE id = 1'))).toBe(1);

        const second = await call('CreateDatabaseRequest', writer, { database: '' });
        await call('ExecuteNonQuery', writer, sql(second, "INSERT INTO items VALUES (2, 'two')"));
        expect(await call('CloseDatabaseRequest', writer, { requestId: second, commit: false })).toBe(true);
        expect(Number(await count('items WHERE id = 2'))).toBe(0);
        expect(await call('CloseDatabaseRequest', writer, { requestId: second, commit: true })).toBe(false);
      });

      it("answers another identity's request id exactly like an unknown one", async () => {
        const id = await call('CreateDatabaseRequest', writer, { database: 'default' });
        const foreign = await fault(call('ReturnScalar', otherWriter, sql(id, 'SELECT 1')), 'UnknownDatabaseRequest');
        const unknown = await fault(
          call('ReturnScalar', otherWriter, sql(randomUUID(), 'SELECT 1')),
          'UnknownDatabaseRequest',
        );
        expect(foreign.message.replace(id, 'ID')).toBe(unknown.message.replace(/[0-9a-f-]{36}/, 'ID'));
        expect(await call('CloseDatabaseRequest', otherWriter, { requestId: id, commit: true })).toBe(false);
        // The owner, under another spelling of its name and on another connection, still has it.
        expect(
          await call(
            'CloseDatabaseRequest',
            { name: 'corp\\WRITER', anonymous: false, connectionId: 'new' },
            { requestId: id, commit: false },
          ),
        ).toBe(true);
        await fault(call('CreateDatabaseRequest', writer, { database: 'elsewhere' }), 'UnknownDatabase');
        await fault(
          call('CloseDatabaseRequest', writer, { requestId: 'not-a-guid', commit: false }),
          'InvalidArgument',
        );
      });

      it('rolls back a request when its connection breaks, and keeps it over a clean close', async () => {
        // One after the other: on SQLite a database request holds the write lock until it ends.
        const lost = await call('CreateDatabaseRequest', { ...writer, connectionId: 'broken' }, { database: null });
        await call('ExecuteNonQuery', writer, sql(lost, "INSERT INTO items VALUES (3, 'lost')"));
        await idb.connectionClosed('broken', false);
        await fault(call('ExecuteNonQuery', writer, sql(lost, 'SELECT 1')), 'UnknownDatabaseRequest');
        expect(Number(await count('items WHERE id = 3'))).toBe(0);

        const kept = await call('CreateDatabaseRequest', { ...writer, connectionId: 'clean' }, { database: null });
        await call('ExecuteNonQuery', writer, sql(kept, "INSERT INTO items VALUES (3, 'kept')"));
        await idb.connectionClosed('clean', true);
        expect(
          await call('CloseDatabaseRequest', { ...writer, connectionId: 'next' }, { requestId: kept, commit: true }),
        ).toBe(true);
        expect(await scalar('SELECT name FROM items WHERE id = 3', {}, reader)).toEqual({
          type: 'string',
          value: 'kept',
        });
      });

      it('rolls back an idle request after DB_REQUEST_IDLE_MS, but not one whose statement runs long', async () => {
        const idle = await service(backend, { requestIdleMs: 300 });
        try {
          const id = await idle.call('CreateDatabaseRequest', writer, { database: null });
          await idle.call('ExecuteNonQuery', writer, sql(id, "INSERT INTO items VALUES (4, 'idle')"));
          await new Promise((resolve) => setTimeout(resolve, 700));
          await fault(idle.call('ExecuteNonQuery', writer, sql(id, 'SELECT 1')), 'UnknownDatabaseRequest');
          expect(Number(await count('items WHERE id = 4'))).toBe(0);

          const busy = await idle.call('CreateDatabaseRequest', writer, { database: null });
          const slow = backend.tsql
            ? 'WITH c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) SELECT count(*) FROM c OPTION (MAXRECURSION 0)'
            : backend.endless.startsWith('WITH')
              ? 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) FROM c'
              : 'SELECT pg_sleep(0.6)';
          await idle.call('ReturnScalar', writer, sql(busy, slow));
          expect(await idle.call('CloseDatabaseRequest', writer, { requestId: busy, commit: true })).toBe(true);
        } finally {
          await idle.close();
        }
      });

      it('caps the open requests of one identity', async () => {
        const capped = await service(backend, { maxRequestsPerIdentity: 1 });
        try {
          const id = await capped.call('CreateDatabaseRequest', writer, { database: null });
          const refused = await fault(
            capped.call('CreateDatabaseRequest', { ...writer, connectionId: 'other' }, { database: null }),
            'QuotaExceeded',
          );
          expect(refused.message).toMatch(/close one first/);
          await capped.call('CloseDatabaseRequest', writer, { requestId: id, commit: false });
          const again = await capped.call('CreateDatabaseRequest', writer, { database: null });
          await capped.call('CloseDatabaseRequest', writer, { requestId: again, commit: false });
        } finally {
          await capped.close();
        }
      });

      it('refuses to commit a request whose statement failed, and commits nothing of it', async () => {
        const id = await call('CreateDatabaseRequest', writer, { database: null });
        await call('ExecuteNonQuery', writer, sql(id, "INSERT INTO items VALUES (5, 'half')"));
        await fault(call('ExecuteNonQuery', writer, sql(id, "INSERT INTO items VALUES (5, 'duplicate')")), 'SqlError');
        await fault(call('CloseDatabaseRequest', writer, { requestId: id, commit: true }), 'SqlError');
        expect(Number(await count('items WHERE id = 5'))).toBe(0);
        expect(await call('CloseDatabaseRequest', writer, { requestId: id, commit: false })).toBe(false);
      });
    });

    describe('files and documents', () => {
      const file = (content: Uint8Array, name = 'bill.pdf') => ({
        Content: content,
        ContentType: 'application/pdf',
        CreatedUtc: '0001-01-01T00:00:00',
        FileId: EMPTY_GUID,
        FileName: name,
        Length: 0n,
        ModifiedUtc: '0001-01-01T00:00:00',
        Sha256: null,
      });

      it('stores, reads, replaces and deletes files of 0 bytes and 1 MiB', async () => {
        const empty = await call('NewFile', writer, { file: file(new Uint8Array(0), 'empty.txt') });
        const got = await call('GetFile', reader, { fileId: empty });
        expect(got).toEqual({
          Content: new Uint8Array(0),
          ContentType: 'application/pdf',
          CreatedUtc: '2026-01-02T03:04:05.678Z',
          FileId: empty,
          FileName: 'empty.txt',
          Length: 0n,
          ModifiedUtc: '2026-01-02T03:04:05.678Z',
          Sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
        });

        const content = bytes(MiB);
        const id = await call('NewFile', writer, { file: file(content) });
        const keysBefore = await backend.keys();
        const replacement = bytes(1000);
        expect(
          await call('UpdateFile', writer, {
            file: { ...file(replacement, 'new.bin'), ContentType: null, FileId: id },
          }),
        ).toBe(true);
        const updated = await call('GetFile', reader, { fileId: id });
        expect(updated).toMatchObject({
          Content: replacement,
          FileName: 'new.bin',
          ContentType: null,
          Length: 1000n,
          Sha256: sha256(replacement),
        });
        // The old content is gone from the store, the new one is there: one key replaced by another.
        const keysAfter = await backend.keys();
        expect(keysAfter.length).toBe(keysBefore.length);
        expect(keysAfter.filter((k) => !keysBefore.includes(k))).toHaveLength(1);

        expect(await call('UpdateFile', writer, { file: { ...file(content), FileId: randomUUID() } })).toBe(false);
        expect((await backend.keys()).length).toBe(keysAfter.length);
        expect(await call('DeleteFile', writer, { fileId: id })).toBe(true);
        expect(await call('GetFile', reader, { fileId: id })).toBeNull();
        expect(await call('DeleteFile', writer, { fileId: id })).toBe(false);
        expect((await backend.keys()).length).toBe(keysAfter.length - 1);
        await fault(call('NewFile', writer, { file: { ...file(content), Content: null } }), 'InvalidArgument');
        await fault(call('GetFile', reader, { fileId: '{bad}' }), 'InvalidArgument');
      });

      it('stores and reads a 50 MiB file', async () => {
        const content = bytes(50 * MiB);
        const id = await call('NewFile', writer, { file: file(content) });
        const got = await call('GetFile', reader, { fileId: id });
        expect(got!.Length).toBe(BigInt(50 * MiB));
        expect(Buffer.from(got!.Content!).equals(Buffer.from(content))).toBe(true);
        await call('DeleteFile', writer, { fileId: id });
      }, 60_000);

      it('files documents with their index fields, replaces them idempotently, and lists a container', async () => {
        const fileId = await call('NewFile', writer, { file: file(new TextEncoder().encode('%PDF-1.7')) });
        const containerId = randomUUID();
        const fields = [
          { Name: 'Iban', Value: 'CH4431999123000889012' },
          { Name: 'Amount', Value: '1949.75' },
          { Name: 'Note', Value: null },
        ];
        const first = await call('NewFileIndex', writer, {
          index: {
            ContainerId: containerId,
            DocumentId: EMPTY_GUID,
            Fields: fields,
            FileId: fileId,
            Title: 'Invoice 1',
          },
        });
        expect(first).toMatch(/^[0-9a-f-]{36}$/);
        expect(await call('GetDocumentByDocumentId', reader, { documentId: first })).toEqual({
          ContainerId: containerId,
          ContentType: 'application/pdf',
          CreatedUtc: '2026-01-02T03:04:05.678Z',
          DocumentId: first,
          Fields: fields,
          FileId: fileId,
          FileName: 'bill.pdf',
          Length: 8n,
          Title: 'Invoice 1',
        });

        // A chosen id that does not exist yet is created under that id; the same call again replaces, not duplicates.
        const chosen = randomUUID();
        const index = {
          ContainerId: containerId,
          DocumentId: chosen,
          Fields: [{ Name: 'Ref', Value: '21 00000 00003 13947 14300 09017' }],
          FileId: fileId,
          Title: 'Invoice 2',
        };
        expect(await call('NewFileIndex', writer, { index })).toBe(chosen);
        expect(
          await call('NewFileIndex', writer, {
            index: { ...index, Fields: [{ Name: 'Ref', Value: 'changed' }], Title: null },
          }),
        ).toBe(chosen);
        const listed = await call('GetDocumentByContainerId', reader, { containerId });
        expect(listed.map((d) => [d.DocumentId, d.Title, d.Fields])).toEqual(
          expect.arrayContaining([
            [first, 'Invoice 1', fields],
            [chosen, null, [{ Name: 'Ref', Value: 'changed' }]],
          ]),
        );
        expect(listed).toHaveLength(2);
        expect(await call('GetDocumentByContainerId', reader, { containerId: randomUUID() })).toEqual([]);
        expect(await call('GetDocumentByDocumentId', reader, { documentId: randomUUID() })).toBeNull();
        await fault(call('NewFileIndex', writer, { index: { ...index, FileId: randomUUID() } }), 'FileNotFound');
        await fault(call('NewFileIndex', writer, { index: null }), 'InvalidArgument');

        // The service's tables are readable like any table; deleting the file removes its documents and fields.
        expect(Number(await count(`idb_documents WHERE file_id = '${fileId}'`))).toBe(2);
        expect(await call('DeleteFile', writer, { fileId })).toBe(true);
        expect(await call('GetDocumentByContainerId', reader, { containerId })).toEqual([]);
        expect(Number(await count(`idb_index_fields WHERE document_id = '${first}'`))).toBe(0);
      });
    });

    describe('schema', () => {
      it('migrates once, and refuses a database from a newer version', async () => {
        const again = await service(backend);
        await again.close();
        expect(Number((await scalar('SELECT max(version) FROM idb_schema_version', {}, reader))?.value)).toBe(1);
        await call(
          'ExecuteNonQuery',
          writer,
          sql(EMPTY_GUID, 'INSERT INTO idb_schema_version VALUES (99, @now)', {
            now: { type: 'dateTime', value: '2030-01-01T00:00:00Z' },
          }),
        );
        try {
          await expect(service(backend)).rejects.toBeInstanceOf(SchemaTooNewError);
        } finally {
          await call('ExecuteNonQuery', writer, sql(EMPTY_GUID, 'DELETE FROM idb_schema_version WHERE version = 99'));
        }
      });
    });
  });
}
