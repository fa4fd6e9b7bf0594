import { clrTypeOfDeclared } from '../../src/idb/column-types.ts';
import { bindParameters } from '../../src/idb/sql-parameters.ts';
import { expect, it } from 'vitest';
import type { SqlValue } from '../../src/idb/database.ts';
import { type Backend, type SuiteContext, fault, LIMITS } from './database-backends.ts';

/** Statements and types: the mapped types round-trip with their declared type names, and parameters bind. Part of `databaseSuite` (database-suite.ts), inside its describe. */
export function databaseTypesSuite(b: Backend, ctx: SuiteContext): void {
  const { inTransaction, onSqlite } = ctx;

  it.runIf(b.name === 'postgres')('round-trips the mapped types with their declared type names', async () => {
    const big = new Uint8Array(1024 * 1024).map((_, i) => (i * 7) & 0xff);
    const result = await inTransaction('write', async (t) => {
      await t.run(
        `CREATE TABLE types (i int, s smallint, b bigint, n numeric(12,3), m money, r real, d double precision, f boolean, t text, v varchar(10),
          c char(3), y bytea, ts timestamp(6), tz timestamptz, dt date, u uuid, j jsonb)`,
        [],
        LIMITS,
      );
      await t.run(
        `INSERT INTO types VALUES (-2147483648, 32767, 9223372036854775807, 12345.500, 1234.5, 1.5, 0.1, true, 'Grüße 😀', 'ab', 'x',
          '\\x00ff10', '2024-02-29 23:59:59.123456', '2024-02-29 23:59:59.5+01', '2024-02-29', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '{"a": [1]}')`,
        [],
        LIMITS,
      );
      await t.run('INSERT INTO types (i) VALUES (NULL)', [], LIMITS);
      await t.run('INSERT INTO types (i, y) VALUES (1, $1)', [{ type: 'base64Binary', value: big }], LIMITS);
      return t.run('SELECT * FROM types ORDER BY i NULLS LAST', [], LIMITS);
    });
    const declared = result.columns.map((c) => c.declaredType);
    expect(declared).toEqual([
      'int4',
      'int2',
      'int8',
      'numeric',
      'money',
      'float4',
      'float8',
      'bool',
      'text',
      'varchar',
      'character',
      'bytea',
      'timestamp',
      'timestamptz',
      'date',
      'uuid',
      'jsonb',
    ]);
    expect(declared.map(clrTypeOfDeclared)).toEqual([
      'Int32',
      'Int16',
      'Int64',
      'Decimal',
      'Decimal',
      'Single',
      'Double',
      'Boolean',
      'String',
      'String',
      'String',
      'Byte[]',
      'DateTime',
      'DateTime',
      'DateTime',
      'Guid',
      undefined,
    ]);
    expect(result.columns.map((c) => c.name)).toEqual([
      'i',
      's',
      'b',
      'n',
      'm',
      'r',
      'd',
      'f',
      't',
      'v',
      'c',
      'y',
      'ts',
      'tz',
      'dt',
      'u',
      'j',
    ]);
    const [full, withBytes, nulls] = result.rows;
    expect(full).toEqual([
      -2147483648,
      32767,
      9223372036854775807n,
      '12345.500',
      '1234.50',
      1.5,
      0.1,
      true,
      'Grüße 😀',
      'ab',
      'x  ',
      new Uint8Array([0, 255, 16]),
      '2024-02-29 23:59:59.123456',
      '2024-02-29 22:59:59.5+00',
      '2024-02-29',
      'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
      '{"a": [1]}',
    ]);
    expect(full![11]).toBeInstanceOf(Uint8Array);
    expect(withBytes![0]).toBe(1);
    const bytes = withBytes![11] as Uint8Array;
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(Buffer.compare(bytes, big)).toBe(0); // not toEqual: element-wise comparison of 1 MiB takes seconds
    expect(nulls).toEqual(Array(17).fill(null));
  });

  it.runIf(onSqlite)(
    'round-trips SQLite values with the declared types as written; expressions have none',
    async () => {
      const big = new Uint8Array(1024 * 1024).map((_, i) => (i * 7) & 0xff);
      const result = await inTransaction('write', async (t) => {
        await t.run(
          `CREATE TABLE types (i integer, s smallint, b bigint, n numeric(12,3), r real, d double precision, f boolean, t text, v varchar(10),
          y blob, ts datetime, u uniqueidentifier, x)`,
          [],
          LIMITS,
        );
        await t.run(
          `INSERT INTO types VALUES (-2147483648, 32767, 9223372036854775807, 12345.500, 1.5, 0.1, true, 'Grüße 😀', 'ab',
          x'00ff10', '2024-02-29 23:59:59.123456', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1e999)`,
          [],
          LIMITS,
        );
        await t.run('INSERT INTO types (i) VALUES (NULL)', [], LIMITS);
        await t.run(
          'INSERT INTO types (i, y, x) VALUES (1, ?1, ?2)',
          [
            { type: 'base64Binary', value: big },
            { type: 'long', value: -(2n ** 62n) },
          ],
          LIMITS,
        );
        return t.run('SELECT *, i + 1 AS e FROM types ORDER BY i NULLS LAST', [], LIMITS);
      });
      const declared = result.columns.map((c) => c.declaredType);
      // libsql reports the names of SQLite's own types in upper case, others as written.
      expect(declared).toEqual([
        'INTEGER',
        'smallint',
        'bigint',
        'numeric(12,3)',
        'REAL',
        'double precision',
        'boolean',
        'TEXT',
        'varchar(10)',
        'BLOB',
        'datetime',
        'uniqueidentifier',
        null,
        null,
      ]);
      expect(declared.map(clrTypeOfDeclared)).toEqual([
        'Int32',
        'Int16',
        'Int64',
        'Decimal',
        'Single',
        'Double',
        'Boolean',
        'String',
        'String',
        'Byte[]',
        'DateTime',
        'Guid',
        undefined,
        undefined,
      ]);
      expect(result.columns.map((c) => c.name)).toEqual([
        'i',
        's',
        'b',
        'n',
        'r',
        'd',
        'f',
        't',
        'v',
        'y',
        'ts',
        'u',
        'x',
        'e',
      ]);
      const [full, withBytes, nulls] = result.rows;
      expect(full).toEqual([
        -2147483648,
        32767,
        9223372036854775807n, // beyond Number.MAX_SAFE_INTEGER: a bigint
        12345.5, // NUMERIC affinity stores a REAL
        1.5,
        0.1,
        1, // SQLite has no booleans
        'Grüße 😀',
        'ab',
        new Uint8Array([0, 255, 16]),
        '2024-02-29 23:59:59.123456',
        'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
        Infinity,
        -2147483647,
      ]);
      expect(full![9]).toBeInstanceOf(Uint8Array);
      expect(withBytes![0]).toBe(1);
      expect(withBytes![12]).toBe(-(2n ** 62n));
      const bytes = withBytes![9] as Uint8Array;
      expect(bytes.constructor).toBe(Uint8Array);
      expect(bytes.byteLength).toBe(bytes.buffer.byteLength); // its own buffer, not a view into a larger one
      expect(Buffer.compare(bytes, big)).toBe(0);
      expect(nulls).toEqual(Array(14).fill(null));
    },
  );

  it.runIf(b.name === 'postgres')('binds parameters from bindParameters, null included', async () => {
    const bound = bindParameters<SqlValue>(
      'SELECT @a::int + 1 AS a, @b::text AS b, @c::numeric AS c, @nothing::text AS n, @when::timestamptz AS w, @big::int8 AS g, @a::int AS again',
      [
        { name: 'a', value: { type: 'int', value: 41 } },
        { name: '@B', value: { type: 'string', value: 'x @a y' } },
        { name: 'c', value: { type: 'decimal', value: '1.10' } },
        { name: 'nothing', value: null },
        { name: 'when', value: { type: 'dateTime', value: '2024-01-02T03:04:05.678Z' } },
        { name: 'big', value: { type: 'long', value: 2n ** 62n } },
      ],
      'postgres',
    );
    if (!bound.ok) throw new Error(bound.message);
    const result = await inTransaction('read', (t) => t.run(bound.sql, bound.values, LIMITS));
    expect(result.rows).toEqual([[42, 'x @a y', '1.10', null, '2024-01-02 03:04:05.678+00', 2n ** 62n, 41]]);
    expect(result.columns.map((c) => c.declaredType)).toEqual([
      'int4',
      'text',
      'numeric',
      'text',
      'timestamptz',
      'int8',
      'int4',
    ]);
  });

  it.runIf(b.name === 'postgres')(
    'binds a string as the literal would, whatever type the server infers for it; typed booleans and bytes as before',
    async () => {
      // postgres.js (the driver before pg) ran an untyped string through the inferred type's serializer: 'true' for a bool was written
      // as false, JSON text became a JSON string, a bytea literal the bytes of its text.
      const text = (value: string): SqlValue => ({ type: 'string', value });
      const result = await inTransaction('write', async (t) => {
        await t.run('CREATE TABLE inferred (f boolean, j jsonb, y bytea, g boolean, z bytea)', [], LIMITS);
        await t.run(
          'INSERT INTO inferred VALUES ($1, $2, $3, $4, $5), ($6, $7, $8, NULL, NULL)',
          [
            text('true'),
            text('{"a": [1, "x"]}'),
            text('\\x00ff'),
            { type: 'boolean', value: true },
            { type: 'base64Binary', value: Uint8Array.of(1, 2) },
            text('f'),
            text('"just a string"'),
            text('\\x'),
          ],
          LIMITS,
        );
        return t.run('SELECT f, j, y, g, z, $1::bool AS p FROM inferred ORDER BY f DESC', [text('yes')], LIMITS);
      });
      expect(result.rows).toEqual([
        [true, '{"a": [1, "x"]}', Uint8Array.of(0, 255), true, Uint8Array.of(1, 2), true],
        [false, '"just a string"', new Uint8Array(0), null, null, true],
      ]);
    },
  );

  it.runIf(b.name === 'postgres')(
    'binds a DateTime as the client wrote it, whatever the time zone of the process: 100 ns digits rounded to microseconds by PostgreSQL',
    async () => {
      // postgres.js's own serializer (the driver before pg) made a JS Date of the text: a wall-clock time moved by the process's zone
      // (10:00 stored as 09:00 under Europe/Zurich), digits past the millisecond dropped.
      const zone = process.env.TZ;
      process.env.TZ = 'Europe/Zurich';
      try {
        const values: SqlValue[] = [
          { type: 'dateTime', value: '2024-02-29T23:59:59.1234567' },
          { type: 'dateTime', value: '2024-07-01T10:00:00' },
          { type: 'dateTime', value: '2024-03-01T10:00:00.5+01:00' },
          { type: 'dateTime', value: '0001-01-01T00:00:00' },
        ];
        const result = await inTransaction('write', async (t) => {
          await t.run('CREATE TABLE stamps (n int, at timestamp, tz timestamptz, d date)', [], LIMITS);
          await t.run('INSERT INTO stamps VALUES (1, $1, $3, $2), (2, $2, $1, $4)', values, LIMITS);
          return t.run('SELECT at, tz, d FROM stamps ORDER BY n', [], LIMITS);
        });
        expect(result.rows).toEqual([
          ['2024-02-29 23:59:59.123457', '2024-03-01 09:00:00.5+00', '2024-07-01'],
          ['2024-07-01 10:00:00', '2024-02-29 23:59:59.123457+00', '0001-01-01'],
        ]);
      } finally {
        if (zone === undefined) delete process.env.TZ;
        else process.env.TZ = zone;
      }
    },
  );

  it.runIf(onSqlite)(
    'binds parameters from bindParameters: null, booleans, non-ASCII text, bigint and a 1 MiB blob',
    async () => {
      const blob = new Uint8Array(1024 * 1024 + 3).map((_, i) => (i * 13) & 0xff).subarray(3); // a view with an offset
      const bound = bindParameters<SqlValue>(
        `SELECT @a + 1 AS a, @b AS b, @nothing AS n, typeof(@nothing) AS nt, @yes AS yes, @no AS no, @big AS g, @half AS h,
        @blob AS blob, length(@blob) AS len, typeof(@blob) AS bt, @a AS again, '@a' AS literal`,
        [
          { name: 'a', value: { type: 'int', value: 41 } },
          { name: '@B', value: { type: 'string', value: 'x @a y Grüße 😀 日本' } },
          { name: 'nothing', value: null },
          { name: 'yes', value: { type: 'boolean', value: true } },
          { name: 'no', value: { type: 'boolean', value: false } },
          { name: 'big', value: { type: 'long', value: 2n ** 62n } },
          { name: 'half', value: { type: 'double', value: 0.5 } },
          { name: 'blob', value: { type: 'base64Binary', value: blob } },
        ],
        'sqlite',
      );
      if (!bound.ok) throw new Error(bound.message);
      const result = await inTransaction('read', (t) => t.run(bound.sql, bound.values, LIMITS));
      const [row] = result.rows;
      expect(row!.slice(0, 8)).toEqual([42, 'x @a y Grüße 😀 日本', null, 'null', 1, 0, 2n ** 62n, 0.5]);
      expect(Buffer.compare(row![8] as Uint8Array, blob)).toBe(0);
      expect(row!.slice(9)).toEqual([1024 * 1024, 'blob', 41, '@a']);
      expect(result.columns.every((c) => c.declaredType === null)).toBe(true);

      // A value SQLite cannot hold is refused before it reaches SQLite, and the transaction is aborted.
      const t = await ctx.db.begin('read');
      const refused = await fault(t.run('SELECT ?1', [{ type: 'long', value: 2n ** 63n }], LIMITS));
      expect(refused).toMatchObject({ fault: 'SqlError', transactionAborted: true });
      expect(refused.message).toMatch(/64-bit/);
      expect((await fault(t.run('SELECT 1', [], LIMITS))).message).toMatch(/aborted/);
      await t.rollback();
    },
  );
}
