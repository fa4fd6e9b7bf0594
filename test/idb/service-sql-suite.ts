import { randomUUID } from 'node:crypto';
import type { ClrValue } from '../../src/idb/contract.ts';
import { describe, expect, it } from 'vitest';
import { EMPTY_GUID } from '../../src/idb/contract.ts';
import {
  MiB,
  writer,
  otherWriter,
  reader,
  bytes,
  service,
  fault,
  type ServiceSuiteContext,
} from './service-fixture.ts';

/** The SQL handlers: parameters and result types, rows affected, SqlError, the row cap and the time-out; and database requests (commit, rollback, ownership, broken connections, idle time-out, the cap per identity). Part of `serviceSuite` (service-suite.ts), inside its describe. */
export function serviceSqlSuite(ctx: ServiceSuiteContext): void {
  const { call, sql, scalar, count } = ctx;

  describe('SQL', () => {
    it('binds every parameter type, null, non-ASCII text and a 1 MiB blob, and types results from the declared types', async () => {
      await call(
        'ExecuteNonQuery',
        writer,
        sql(
          EMPTY_GUID,
          ctx.backend.tsql
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

      const sqlite = ctx.backend.endless.startsWith('WITH RECURSIVE');
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
      const missing = await fault(scalar('SELECT @nope'), ctx.backend.tsql ? 'SqlError' : 'InvalidArgument');
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
      const error = await fault(scalar(ctx.backend.tsql ? 'SELECT 1 FROM' : 'SELEC 1'), 'SqlError');
      expect(error.message).toMatch(/syntax/i);
      expect(error.message).not.toMatch(/\n\s+at /);
      await fault(scalar('SELECT * FROM no_such_table'), 'SqlError');
      const empty = await call('ReturnDatatable', reader, sql(EMPTY_GUID, 'SELECT id, name FROM items WHERE id < 0'));
      expect(empty.xml).toMatch(/<diffgr:diffgram [^>]*\/>$/);
      expect(empty.xml).toContain('<xs:element name="id" type="xs:int" minOccurs="0" />');
      expect(await scalar('SELECT id FROM items WHERE id < 0', {}, reader)).toBeNull();
    });

    it('faults QuotaExceeded above the row cap instead of truncating (ReturnScalar reads one row)', async () => {
      const capped = await service(ctx.backend, { maxRows: 50 });
      try {
        const series = (n: number) =>
          `WITH ${ctx.backend.tsql ? '' : 'RECURSIVE '}s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < ${n}) SELECT x FROM s`;
        expect((await capped.call('ReturnDatatable', reader, sql(EMPTY_GUID, series(50)))).xml).toContain(
          'diffgr:id="Table50"',
        );
        await fault(capped.call('ReturnDatatable', reader, sql(EMPTY_GUID, series(51))), 'QuotaExceeded');
        // ReturnScalar reads its first row only, as ADO.NET's ExecuteScalar: the cap does not concern it.
        expect(Number((await capped.call('ReturnScalar', reader, sql(EMPTY_GUID, series(5000))))?.value)).toBe(1);
      } finally {
        await capped.close();
      }
    });

    it('interrupts a statement at the time-out with a Timeout fault', async () => {
      const quick = await service(ctx.backend, { statementTimeoutMs: 300 });
      try {
        const started = performance.now();
        const error = await fault(quick.call('ReturnScalar', reader, sql(EMPTY_GUID, ctx.backend.endless)), 'Timeout');
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
      await fault(call('CloseDatabaseRequest', writer, { requestId: 'not-a-guid', commit: false }), 'InvalidArgument');
    });

    it('rolls back a request when its connection breaks, and keeps it over a clean close', async () => {
      // One after the other: on SQLite a database request holds the write lock until it ends.
      const lost = await call('CreateDatabaseRequest', { ...writer, connectionId: 'broken' }, { database: null });
      await call('ExecuteNonQuery', writer, sql(lost, "INSERT INTO items VALUES (3, 'lost')"));
      await ctx.idb.connectionClosed('broken', false);
      await fault(call('ExecuteNonQuery', writer, sql(lost, 'SELECT 1')), 'UnknownDatabaseRequest');
      expect(Number(await count('items WHERE id = 3'))).toBe(0);

      const kept = await call('CreateDatabaseRequest', { ...writer, connectionId: 'clean' }, { database: null });
      await call('ExecuteNonQuery', writer, sql(kept, "INSERT INTO items VALUES (3, 'kept')"));
      await ctx.idb.connectionClosed('clean', true);
      expect(
        await call('CloseDatabaseRequest', { ...writer, connectionId: 'next' }, { requestId: kept, commit: true }),
      ).toBe(true);
      expect(await scalar('SELECT name FROM items WHERE id = 3', {}, reader)).toEqual({
        type: 'string',
        value: 'kept',
      });
    });

    it('rolls back an idle request after DB_REQUEST_IDLE_MS, but not one whose statement runs long', async () => {
      const idle = await service(ctx.backend, { requestIdleMs: 300 });
      try {
        const id = await idle.call('CreateDatabaseRequest', writer, { database: null });
        await idle.call('ExecuteNonQuery', writer, sql(id, "INSERT INTO items VALUES (4, 'idle')"));
        await new Promise((resolve) => setTimeout(resolve, 700));
        await fault(idle.call('ExecuteNonQuery', writer, sql(id, 'SELECT 1')), 'UnknownDatabaseRequest');
        expect(Number(await count('items WHERE id = 4'))).toBe(0);

        const busy = await idle.call('CreateDatabaseRequest', writer, { database: null });
        const slow = ctx.backend.tsql
          ? 'WITH c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) SELECT count(*) FROM c OPTION (MAXRECURSION 0)'
          : ctx.backend.endless.startsWith('WITH')
            ? 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) FROM c'
            : 'SELECT pg_sleep(0.6)';
        await idle.call('ReturnScalar', writer, sql(busy, slow));
        expect(await idle.call('CloseDatabaseRequest', writer, { requestId: busy, commit: true })).toBe(true);
      } finally {
        await idle.close();
      }
    });

    it('caps the open requests of one identity', async () => {
      const capped = await service(ctx.backend, { maxRequestsPerIdentity: 1 });
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
}
