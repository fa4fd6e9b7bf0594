import { randomUUID } from 'node:crypto';
/**
 * The 13 IIDBService operations through the handlers, on each backend as deployed: the embedded SQLite file with the
 * folder store (service.test.ts), a real PostgreSQL (started here) with S3-compatible storage (s3rver,
 * service.postgres.peers.test.ts), and SQL Server through Babelfish (service.sqlserver.peers.test.ts). One suite,
 * parameterized by backend, so all answer the same; authorization and the schema here, the SQL handlers and requests
 * in service-sql-suite.ts, files and documents in service-files-suite.ts, backends and helpers in service-fixture.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMPTY_GUID, type Caller, type ClrValue, type OperationName, type Operations } from '../../src/idb/contract.ts';
import { SchemaTooNewError } from '../../src/idb/schema.ts';
import type { IdbService } from '../../src/idb/service.ts';
import { type Backend, fault, reader, type ServiceSuiteContext, service, stranger, writer } from './service-fixture.ts';
import { serviceFilesSuite } from './service-files-suite.ts';
import { serviceSqlSuite } from './service-sql-suite.ts';

export { type Backend, postgresBackend, sqliteBackend, sqlServerBackend } from './service-fixture.ts';

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
    const ctx: ServiceSuiteContext = {
      get backend() {
        return backend;
      },
      get idb() {
        return idb;
      },
      call,
      sql,
      scalar,
      count,
      backendInt,
    };
    serviceSqlSuite(ctx);
    serviceFilesSuite(ctx);

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
