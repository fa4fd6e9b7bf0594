/**
 * The Database suite on SQL Server over TDS, against Babelfish (test/support/peers/babelfish.ts), and what only T-SQL
 * has: Fill's .NET types per SQL type, AddWithValue's parameter types, SqlCommand's counts for batches.
 * Babelfish's own differences (its README) are not held against SQL Server here: where a value shows one, the
 * comment says so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, DatabaseTransaction, SqlValue } from '../../src/idb/database.ts';
import { dataTableOf } from '../../src/idb/results.ts';
import { bindParameters } from '../../src/idb/sql-parameters.ts';
import { openDatabase } from '../../src/runtime/node/idb/open-database.ts';
import { type RunningBabelfish, startBabelfish } from '../support/peers/babelfish.ts';
import { needPeers, PEERS } from '../support/peers.ts';
import { type Backend, databaseSuite, fault, LIMITS } from './database-suite.ts';

const ENDLESS = 'SELECT count_big(*) FROM sys.all_columns a CROSS JOIN sys.all_columns b CROSS JOIN sys.all_columns c';

const sqlserver: Backend = {
  name: 'sqlserver',
  async open() {
    const bbf = await startBabelfish();
    const db = await openDatabase(`${bbf.url}&maxConnections=4`);
    return {
      db,
      async stop() {
        await db.close();
        await bbf.stop();
      },
    };
  },
  count: (n) => n,
  series: (from, to) =>
    `(SELECT TOP (${to - from + 1}) CAST(ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) + ${from - 1} AS int) AS x
       FROM sys.all_columns a CROSS JOIN sys.all_columns b CROSS JOIN sys.all_columns c) AS g`,
  sleep: () => ENDLESS,
  sql: (text) => text.replace(/\$(\d+)/g, '@p$1'),
};

describe.skipIf(needPeers('idb database on SQL Server', PEERS.babelfish))('SQL Server (Babelfish)', () => {
  databaseSuite(sqlserver);

  describe('Database: sqlserver, T-SQL as SqlClient runs it', () => {
    let bbf: RunningBabelfish;
    let db: Database;
    beforeAll(async () => {
      bbf = await startBabelfish();
      db = await openDatabase(bbf.url);
    }, 60_000);
    afterAll(async () => {
      await db?.close();
      await bbf?.stop();
    });
    async function inTransaction<T>(work: (t: DatabaseTransaction) => Promise<T>): Promise<T> {
      const t = await db.begin('write');
      try {
        return await work(t);
      } finally {
        await t.rollback();
      }
    }

    it('types columns as SqlDataAdapter.Fill does, and keeps every digit, tick and offset', async () => {
      const result = await inTransaction(async (t) => {
        await t.run(
          `CREATE TABLE types (ti tinyint, si smallint, i int, bi bigint, b bit, d decimal(38,10), n numeric(5,2), m money,
             sm smallmoney, r real, f float, dt date, dtm datetime, d2 datetime2(7), sd smalldatetime, dto datetimeoffset(7),
             tm time(7), c char(3), vc varchar(10), nc nvarchar(20), x xml, bin binary(2), vb varbinary(max), g uniqueidentifier)`,
          [],
          LIMITS,
        );
        await t.run(
          `INSERT INTO types VALUES (255, -32768, -2147483648, 9223372036854775807, 1, 1234567890123456789012345678.0123456789,
             -123.45, 922337203685477.5807, -214748.3648, 1.5, 0.1, '2024-02-29', '2024-02-29 23:59:59.997',
             '2024-02-29 23:59:59.123456', '2024-02-29 23:59', '2024-02-29 23:59:59.5 +05:30', '12:34:56.123456', 'ab',
             'x', N'Grüße 😀', '<a>1</a>', 0x00ff, 0x0102, 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11')`,
          [],
          LIMITS,
        );
        await t.run('INSERT INTO types (ti) VALUES (NULL)', [], LIMITS);
        return t.run('SELECT * FROM types ORDER BY ti DESC', [], LIMITS);
      });
      expect(result.columns.map((c) => c.clrType)).toEqual([
        'Byte',
        'Int16',
        'Int32',
        'Int64',
        'Boolean',
        'Decimal',
        'Decimal',
        'Decimal',
        'Decimal',
        'Single',
        'Double',
        'DateTime',
        'DateTime',
        'DateTime',
        'DateTime',
        'DateTimeOffset',
        'TimeSpan',
        'String',
        'String',
        'String',
        'String',
        'Byte[]',
        'Byte[]',
        'Guid',
      ]);
      const [full, nulls] = result.rows;
      expect(full).toEqual([
        255,
        -32768,
        -2147483648,
        9223372036854775807n,
        true,
        '1234567890123456789012345678.0123456789',
        '-123.45',
        '922337203685477.5807',
        '-214748.3648',
        1.5,
        0.1,
        '2024-02-29',
        '2024-02-29 23:59:59.9970000',
        '2024-02-29 23:59:59.1234560', // Babelfish keeps microseconds (PostgreSQL): SQL Server would give .1234560 too, written as .123456
        '2024-02-29 23:59:00.0000000',
        '2024-02-29 23:59:59.5000000+05:30',
        '12:34:56.1234560',
        'ab ',
        'x',
        'Grüße 😀',
        '<a>1</a>',
        new Uint8Array([0, 255]),
        new Uint8Array([1, 2]),
        'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
      ]);
      expect(nulls).toEqual(Array(24).fill(null));
      // The DataTable: Byte, DateTimeOffset and TimeSpan as .NET writes them.
      const xml = dataTableOf(result).xml;
      expect(xml).toContain('<xs:element name="ti" type="xs:unsignedByte" minOccurs="0" />');
      expect(xml).toContain('<xs:element name="tm" type="xs:duration" minOccurs="0" />');
      expect(xml).toMatch(/<xs:element name="dto" msdata:DataType="System.DateTimeOffset, [^"]+" type="xs:anyType"/);
      expect(xml).toContain('<dto>2024-02-29T23:59:59.5+05:30</dto>');
      expect(xml).toContain('<tm>PT12H34M56.123456S</tm>');
      expect(xml).toContain('<m>922337203685477.5807</m>');
    });

    it('binds @name parameters natively, typed as AddWithValue infers them', async () => {
      const bound = bindParameters<SqlValue>(
        `SELECT @i AS i, @s AS s, @l AS l, @d AS d, @f AS f, @r AS r, @b AS b, CAST(@t AS nvarchar(40)) AS t, @w AS w,
           @y AS y, @g AS g, @n AS n, SQL_VARIANT_PROPERTY(@w, 'BaseType') AS wt, SQL_VARIANT_PROPERTY(@d, 'Precision') AS dp`,
        [
          { name: 'i', value: { type: 'int', value: 41 } },
          { name: '@S', value: { type: 'short', value: -7 } },
          { name: 'l', value: { type: 'long', value: 2n ** 62n } },
          { name: 'd', value: { type: 'decimal', value: '12345678901234567890.125' } },
          { name: 'f', value: { type: 'float', value: 0.5 } },
          { name: 'r', value: { type: 'double', value: 0.1 } },
          { name: 'b', value: { type: 'boolean', value: true } },
          { name: 't', value: { type: 'string', value: 'Grüße 日本' } },
          { name: 'w', value: { type: 'dateTime', value: '2024-01-02T03:04:05.678Z' } },
          { name: 'y', value: { type: 'base64Binary', value: new Uint8Array([1, 2, 3]) } },
          { name: 'g', value: { type: 'guid', value: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' } },
          { name: 'n', value: null },
        ],
        'sqlserver',
      );
      if (!bound.ok) throw new Error(bound.message);
      const result = await inTransaction((t) => t.run(bound.sql, bound.values, LIMITS, bound.names));
      expect(result.columns.slice(0, 11).map((c) => c.clrType)).toEqual([
        'Int32',
        'Int16',
        'Int64',
        'Decimal',
        'Single',
        'Double',
        'Boolean',
        'String',
        'DateTime',
        'Byte[]',
        'Guid',
      ]);
      expect(result.rows[0]!.slice(0, 12)).toEqual([
        41,
        -7,
        2n ** 62n,
        '12345678901234567890.125',
        0.5,
        0.1,
        true,
        'Grüße 日本',
        // SqlClient sends a DateTime as datetime: the server rounds to 1/300 s (.678 becomes .677).
        '2024-01-02 03:04:05.6770000',
        new Uint8Array([1, 2, 3]),
        'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
        null,
      ]);
      expect(String(result.rows[0]![12])).toMatch(/^datetime$/i);
    });

    it('declares empty and null parameters as SqlClient does: varbinary(8000), nvarchar(4000)', async () => {
      const bound = bindParameters<SqlValue>(
        `DECLARE @kept TABLE (b varbinary(16) NOT NULL);
         INSERT INTO @kept VALUES (@y);
         SET @n = REPLICATE(N'x', 10); SET @s = REPLICATE(N'x', 10);
         SELECT b, DATALENGTH(b) AS length, @y AS y, @n AS n, @s AS s FROM @kept`,
        [
          { name: 'y', value: { type: 'base64Binary', value: new Uint8Array(0) } },
          { name: 'n', value: null },
          { name: 's', value: { type: 'string', value: '' } },
        ],
        'sqlserver',
      );
      if (!bound.ok) throw new Error(bound.message);
      const result = await inTransaction((t) => t.run(bound.sql, bound.values, LIMITS, bound.names));
      // An empty byte[] is a value, not NULL; DBNull and "" are nvarchar(4000), so SET keeps all ten characters.
      expect(result.rows).toEqual([[new Uint8Array(0), 0, new Uint8Array(0), 'x'.repeat(10), 'x'.repeat(10)]]);
    });

    it('counts rows as SqlCommand.ExecuteNonQuery: batches add up, SELECTs and NOCOUNT do not count', async () => {
      await inTransaction(async (t) => {
        const affected = async (sql: string) => (await t.run(sql, [], LIMITS)).rowsAffected;
        expect(await affected('CREATE TABLE counted (id int IDENTITY PRIMARY KEY, x int)')).toBe(-1);
        expect(await affected('INSERT INTO counted (x) VALUES (1), (2), (3)')).toBe(3);
        expect(await affected('UPDATE counted SET x = x + 1 WHERE x > 1; DELETE FROM counted WHERE x = 1')).toBe(3);
        expect(await affected('SELECT * FROM counted')).toBe(-1);
        expect(await affected('SET NOCOUNT ON; UPDATE counted SET x = 0')).toBe(-1);
        expect(await affected('UPDATE counted SET x = 5 WHERE 1 = 0')).toBe(0);
        expect(await affected('CREATE PROCEDURE bump AS UPDATE counted SET x = x + 1')).toBe(-1);
        expect(await affected('EXEC bump')).toBe(2);
        // The first result set with columns is the answer (Fill, ExecuteScalar); the count still adds up.
        const batch = await t.run(
          'INSERT INTO counted (x) VALUES (9); SELECT SCOPE_IDENTITY() AS id; SELECT 2 AS second',
          [],
          LIMITS,
        );
        expect(batch.columns.map((c) => c.name)).toEqual(['id']);
        expect(batch.rows).toEqual([['4']]); // SCOPE_IDENTITY() is numeric(38,0): Decimal
        expect(batch.rowsAffected).toBe(1);
        const local = await t.run('DECLARE @n int = 3; SELECT @n * 2 AS six', [], LIMITS);
        expect(local.rows).toEqual([[6]]);
      });
    });

    it('refuses a batch that leaves a transaction of its own open, and rolls it all back', async () => {
      const t = await db.begin('write');
      await t.run('CREATE TABLE opened (x int)', [], LIMITS);
      const refused = await fault(t.run('BEGIN TRANSACTION; INSERT INTO opened VALUES (1)', [], LIMITS));
      expect(refused).toMatchObject({ fault: 'SqlError', transactionAborted: true });
      expect(refused.message).toMatch(/left a transaction of its own open/);
      await t.rollback();
      expect(await bbf.admin("SELECT count(*) FROM sys.tables WHERE name = 'opened'")).toEqual([[0]]);
    });
  });
});
