import { describe, expect, it } from 'vitest';
import { bindParameters, type SqlDialect, type SqlParameter } from '../../src/idb/sql-parameters.ts';

/** The dialects whose markers are rewritten to positions (sqlserver keeps T-SQL's own, tested at the end). */
const DIALECTS: readonly Exclude<SqlDialect, 'sqlserver'>[] = ['sqlite', 'postgres'];
/** The positional marker each dialect's output uses. */
const MARK: Record<Exclude<SqlDialect, 'sqlserver'>, string> = { sqlite: '?', postgres: '$' };

const params = (entries: Record<string, unknown>): SqlParameter[] =>
  Object.entries(entries).map(([name, value]) => ({ name, value }));

/** Binds and expects success; `$n` in `expected` is written as `§n` and becomes the dialect's own marker. */
function bound(sql: string, entries: Record<string, unknown>, dialect: SqlDialect): { sql: string; values: unknown[] } {
  const result = bindParameters(sql, params(entries), dialect);
  if (!result.ok) throw new Error(`expected success, got: ${result.message}`);
  return { sql: result.sql, values: result.values };
}

const expectBound = (
  dialect: Exclude<SqlDialect, 'sqlserver'>,
  sql: string,
  entries: Record<string, unknown>,
  expected: string,
  values: unknown[],
): void => {
  expect(bound(sql, entries, dialect)).toEqual({ sql: expected.replaceAll('§', MARK[dialect]), values });
};

function refusal(sql: string, entries: Record<string, unknown>, dialect: SqlDialect): string {
  const result = bindParameters(sql, params(entries), dialect);
  if (result.ok) throw new Error(`expected InvalidArgument, got: ${result.sql}`);
  expect(result.fault).toBe('InvalidArgument');
  return result.message;
}

describe.each(DIALECTS)('bindParameters (%s): markers in code', (dialect) => {
  it('numbers markers by first use and lists values in that order', () => {
    expectBound(
      dialect,
      'select * from t where a = @a and b = @b',
      { b: 2, a: 1 },
      'select * from t where a = §1 and b = §2',
      [1, 2],
    );
  });

  it('reuses the number of a repeated name', () => {
    expectBound(dialect, 'select @x, @y, @x, @X', { x: 'x', y: 'y' }, 'select §1, §2, §1, §1', ['x', 'y']);
  });

  it('matches names case-insensitively, with or without the @ in the parameter name', () => {
    expectBound(dialect, 'select @CustomerId, @OrderNo', { '@customerid': 7, ORDERNO: 8 }, 'select §1, §2', [7, 8]);
    expectBound(dialect, 'select @id', { '@ID': 1 }, 'select §1', [1]);
  });

  it('finds markers next to operators and punctuation, without spaces', () => {
    expectBound(dialect, 'values(@a,@b)', { a: 1, b: 2 }, 'values(§1,§2)', [1, 2]);
    expectBound(dialect, "where x=@a||'s'", { a: 1 }, "where x=§1||'s'", [1]);
    expectBound(dialect, 'select -@a+@b*@c/@d', { a: 1, b: 2, c: 3, d: 4 }, 'select -§1+§2*§3/§4', [1, 2, 3, 4]);
    expectBound(dialect, "select 'a'@a", { a: 1 }, "select 'a'§1", [1]);
    expectBound(dialect, 'select "c"@a', { a: 1 }, 'select "c"§1', [1]);
    expectBound(dialect, 'select @a\n', { a: 1 }, 'select §1\n', [1]);
  });

  it('reads names of letters, digits and underscores, starting with a letter or underscore', () => {
    expectBound(dialect, 'select @_a1, @b_2_', { _a1: 1, b_2_: 2 }, 'select §1, §2', [1, 2]);
  });

  it('takes letters of any script in names', () => {
    expectBound(
      dialect,
      'select @größe, @Ñame, @名前',
      { GRÖSSE: 0, größe: 1, ñame: 2, '@名前': 3 },
      'select §1, §2, §3',
      [1, 2, 3],
    );
  });

  it('binds unicode values beside unicode strings and identifiers', () => {
    expectBound(
      dialect,
      `insert into "Bücher" ("Titel ✓") values ('Zürich 😀 @nicht', @titel)`,
      { titel: 'Genève 😀' },
      `insert into "Bücher" ("Titel ✓") values ('Zürich 😀 @nicht', §1)`,
      ['Genève 😀'],
    );
  });

  it('passes values through unchanged, whatever their type', () => {
    const bytes = new Uint8Array([1, 2]);
    const date = new Date(0);
    expect(
      bound('select @a, @b, @c, @d, @e', { a: null, b: bytes, c: date, d: 1n, e: undefined }, dialect).values,
    ).toEqual([null, bytes, date, 1n, undefined]);
  });

  it('allows parameters no marker uses and leaves them out of the values', () => {
    expectBound(dialect, 'select @b', { a: 1, b: 2, c: 3 }, 'select §1', [2]);
    expectBound(dialect, 'select 1', { a: 1 }, 'select 1', []);
  });

  it('returns text without markers as it is, with no values', () => {
    expectBound(dialect, '', {}, '', []);
    expectBound(dialect, 'select 1', {}, 'select 1', []);
    expectBound(dialect, 'select @', {}, 'select @', []);
  });
});

describe.each(DIALECTS)('bindParameters (%s): what is not a marker', (dialect) => {
  it('leaves @@ names alone (T-SQL globals; the text-search operator in PostgreSQL)', () => {
    expectBound(dialect, 'select @@ROWCOUNT, @a', { a: 1 }, 'select @@ROWCOUNT, §1', [1]);
    expectBound(dialect, 'select @@@a', {}, 'select @@@a', []);
    expectBound(dialect, 'where doc @@ @q', { q: 'x' }, 'where doc @@ §1', ['x']);
  });

  it('finds markers inside brackets on postgres (subscripts) but not on sqlite (identifiers)', () => {
    const sql = 'select a[@i] from t';
    if (dialect === 'postgres') expectBound(dialect, sql, { i: 1 }, 'select a[§1] from t', [1]);
    else expectBound(dialect, sql, {}, sql, []);
  });
});

describe.each(DIALECTS)('bindParameters (%s): lexical contexts shared by both dialects', (dialect) => {
  const cases: [string, string][] = [
    ['single-quoted strings', "select '@a', @a, 'x @a y'"],
    ["strings with '' escapes", "select 'it''s @a', @a, '''@a'''"],
    ['double-quoted identifiers', 'select "@a", @a from "t @a"'],
    ['identifiers with "" escapes', 'select "a""@a", @a, """@a"""'],
    ['line comments', 'select @a -- and @a here\n, @a -- @a'],
    ['block comments', 'select /* @a */ @a /* multi\nline @a */'],
    ['comments and quotes inside each other', `select '/* @a' , @a, /* ' @a " */ @a, "-- @a", '-- @a'`],
  ];
  it.each(cases)('%s hide markers, and markers beside them bind', (_, sql) => {
    const result = bound(sql, { a: 1 }, dialect);
    expect(result.values).toEqual([1]);
    // Only markers outside the hiding contexts changed: the text with the marker put back is the original.
    expect(result.sql.replaceAll(`${MARK[dialect]}1`, '@a')).toBe(sql);
    expect(result.sql).toContain(`${MARK[dialect]}1`);
  });

  it('ends a line comment at the newline', () => {
    expectBound(dialect, 'select 1 -- @a\n+ @b', { b: 2 }, 'select 1 -- @a\n+ §1', [2]);
  });

  it('does not take an unknown name in a hidden context as a missing parameter', () => {
    expectBound(
      dialect,
      "select '@nobody' /* @nobody */ -- @nobody",
      {},
      "select '@nobody' /* @nobody */ -- @nobody",
      [],
    );
  });

  it.each([
    ['string', "select @a, 'abc @b"],
    ['identifier', 'select @a, "abc @b'],
    ['block comment', 'select @a /* abc @b'],
    ['line comment without newline', 'select @a -- abc @b'],
  ])('passes an unterminated %s through unchanged, for the database to report', (_, sql) => {
    expectBound(dialect, sql, { a: 1 }, sql.replace('@a', '§1'), [1]);
  });
});

describe('bindParameters (sqlite): SQLite-only contexts', () => {
  it('hides markers in [bracketed] identifiers, which end at the first ]', () => {
    expectBound('sqlite', 'select [@a], @a from [t @a]', { a: 1 }, 'select [@a], ?1 from [t @a]', [1]);
    expectBound('sqlite', 'select [a]@a', { a: 1 }, 'select [a]?1', [1]);
  });

  it('hides markers in `backtick` identifiers with `` escapes', () => {
    expectBound('sqlite', 'select `@a`, @a, `x``@a`', { a: 1 }, 'select `@a`, ?1, `x``@a`', [1]);
  });

  it('does not nest block comments, as SQLite does not', () => {
    expectBound('sqlite', 'select /* /* @a */ @a */', { a: 1 }, 'select /* /* @a */ ?1 */', [1]);
  });

  it('reads backslashes in strings as ordinary characters', () => {
    expectBound('sqlite', "select 'a\\', @a, E'\\', @b", { a: 1, b: 2 }, "select 'a\\', ?1, E'\\', ?2", [1, 2]);
  });

  it('ends a line comment at \\n only', () => {
    expectBound('sqlite', 'select 1 -- @x\r@y\n, @a', { a: 1 }, 'select 1 -- @x\r@y\n, ?1', [1]);
  });

  it('passes unterminated brackets and backticks through unchanged', () => {
    expectBound('sqlite', 'select @a, [abc @b', { a: 1 }, 'select ?1, [abc @b', [1]);
    expectBound('sqlite', 'select @a, `abc @b', { a: 1 }, 'select ?1, `abc @b', [1]);
  });

  it("refuses SQLite's own markers, which it would bind as NULL", () => {
    for (const [sql, marker] of [
      ['select ?', '?'],
      ['select ?12', '?12'],
      ['select :name', ':name'],
      ['select $name', '$name'],
      ['select #name', '#name'],
      ['select $$ @a $$', '$$'],
      ['select $tag$ x $tag$', '$tag$'],
      ['select a@b', '@b'],
      ['select @1', '@1'],
    ] as const) {
      expect(refusal(sql, { a: 1 }, 'sqlite'), sql).toContain(`"${marker}"`);
    }
  });

  it('leaves ?, :, $ and # alone where SQLite does not read a marker', () => {
    expectBound('sqlite', 'select \'?\', ":x", [$y] -- #z', {}, 'select \'?\', ":x", [$y] -- #z', []);
    expectBound('sqlite', 'select a$b, c$, @a', { a: 1 }, 'select a$b, c$, ?1', [1]);
    expectBound('sqlite', 'select x :: y, #', {}, 'select x :: y, #', []);
  });
});

describe('bindParameters (postgres): PostgreSQL-only contexts', () => {
  it('hides markers in E strings, where a backslash escapes the quote', () => {
    expectBound('postgres', "select E'it\\'s @a', @a", { a: 1 }, "select E'it\\'s @a', $1", [1]);
    expectBound('postgres', "select e'\\\\', @a", { a: 1 }, "select e'\\\\', $1", [1]);
    expectBound('postgres', "select E'it''s @a', @a", { a: 1 }, "select E'it''s @a', $1", [1]);
  });

  it('reads backslashes in ordinary strings as characters (standard_conforming_strings)', () => {
    expectBound('postgres', "select 'a\\', @a", { a: 1 }, "select 'a\\', $1", [1]);
  });

  it('takes E after a word character as part of the word, not an escape string', () => {
    expectBound('postgres', "select namE'\\', @a", { a: 1 }, "select namE'\\', $1", [1]);
  });

  it('hides markers in dollar-quoted strings, with and without a tag', () => {
    expectBound('postgres', 'select $$ @a $$, @a', { a: 1 }, 'select $$ @a $$, $1', [1]);
    expectBound('postgres', 'select $fn$ @a $x$ @a $fn$, @a', { a: 1 }, 'select $fn$ @a $x$ @a $fn$, $1', [1]);
    expectBound('postgres', "select $$ it's @a $$, @a", { a: 1 }, "select $$ it's @a $$, $1", [1]);
    expectBound('postgres', 'select $Tag$ @a $tag$ @a $Tag$, @a', { a: 1 }, 'select $Tag$ @a $tag$ @a $Tag$, $1', [1]);
  });

  it('takes $ after a word character as part of an identifier, not a dollar quote', () => {
    expectBound('postgres', 'select a$b$, @a, c$$', { a: 1 }, 'select a$b$, $1, c$$', [1]);
  });

  it('nests block comments', () => {
    expectBound('postgres', 'select /* /* @a */ @a */ @a', { a: 1 }, 'select /* /* @a */ @a */ $1', [1]);
  });

  it('ends a line comment at \\r too', () => {
    expectBound('postgres', 'select 1 -- @x\r+ @a', { a: 1 }, 'select 1 -- @x\r+ $1', [1]);
  });

  it('passes an unterminated dollar quote, E string or nested comment through unchanged', () => {
    expectBound('postgres', 'select @a, $$ @b', { a: 1 }, 'select $1, $$ @b', [1]);
    expectBound('postgres', "select @a, E'\\' @b", { a: 1 }, "select $1, E'\\' @b", [1]);
    expectBound('postgres', 'select @a /* /* */ @b', { a: 1 }, 'select $1 /* /* */ @b', [1]);
  });

  it('leaves backticks, ?, :name and operators with @ as they are', () => {
    expectBound('postgres', 'select `x`, j ? @k, x::int, :v', { k: 'k' }, 'select `x`, j ? $1, x::int, :v', ['k']);
    expectBound('postgres', 'select a @> @b, @ -1, a<@ @c', { b: 1, c: 2 }, 'select a @> $1, @ -1, a<@ $2', [1, 2]);
  });

  it('leaves an @ after a word character alone', () => {
    expectBound('postgres', "select a@b, 'x'||user@host, @a", { a: 1 }, "select a@b, 'x'||user@host, $1", [1]);
  });

  it("refuses PostgreSQL's own $n markers, which would take the bound values", () => {
    expect(refusal('select $1, @a', { a: 1 }, 'postgres')).toContain('"$1"');
    expect(refusal('select $12x', {}, 'postgres')).toContain('"$12x"');
  });
});

describe.each(DIALECTS)('bindParameters (%s): refusals', (dialect) => {
  it('names a marker no parameter matches', () => {
    const message = refusal('select @a, @Missing', { a: 1 }, dialect);
    expect(message).toContain('@Missing');
  });

  it('refuses duplicate names, ignoring case and the @, even when unused', () => {
    expect(refusal('select 1', { id: 1, '@ID': 2 }, dialect)).toContain('more than once');
    expect(refusal('select @x', { x: 1, X: 2 }, dialect)).toContain('more than once');
  });

  it('refuses names no marker could ever name', () => {
    for (const name of [null, '', '@', '@@a', ':id', '1a', 'a b']) {
      const result = bindParameters('select 1', [{ name, value: 1 }], dialect);
      expect(result, String(name)).toMatchObject({ ok: false, fault: 'InvalidArgument' });
    }
  });
});

describe.each(DIALECTS)('bindParameters (%s): a text read once, bound again', (dialect) => {
  // The markers of a text are read once and kept: every later call binds its own parameters to them.
  it('binds each call its own values, and refuses a call that lacks one', () => {
    const sql = 'select @a, @b, @a from t';
    expectBound(dialect, sql, { a: 1, b: 2 }, 'select §1, §2, §1 from t', [1, 2]);
    expectBound(dialect, sql, { B: 'y', '@A': 'x', c: 3 }, 'select §1, §2, §1 from t', ['x', 'y']);
    expect(refusal(sql, { a: 1 }, dialect)).toContain('@b');
    expectBound(dialect, sql, { a: 5, b: 6 }, 'select §1, §2, §1 from t', [5, 6]);
  });

  it('reports a missing parameter and a marker of the database in the order they stand, every time', () => {
    const own = dialect === 'sqlite' ? '?1' : '$1';
    const missingFirst = `select @x, ${own}`;
    const ownFirst = `select ${own}, @x`;
    for (let call = 0; call < 2; call++) {
      expect(refusal(missingFirst, {}, dialect)).toContain('@x');
      expect(refusal(missingFirst, { x: 1 }, dialect)).toContain(own);
      expect(refusal(ownFirst, {}, dialect)).toContain(own);
    }
  });

  it('binds texts longer than it keeps, and more texts than it keeps', () => {
    const long = `select @a${' '.repeat(5000)}, @b`;
    for (let call = 0; call < 2; call++) {
      expectBound(dialect, long, { a: 1, b: 2 }, `select §1${' '.repeat(5000)}, §2`, [1, 2]);
    }
    for (let round = 0; round < 2; round++) {
      for (let k = 0; k < 300; k++) expectBound(dialect, `select @a + ${k}`, { a: k }, `select §1 + ${k}`, [k]);
    }
  });
});

describe('bindParameters: a generated cross-check', () => {
  // Random pieces from every context, joined: the markers in code are exactly the ones replaced, in order.
  const CODE = ['select ', ', ', ' + ', '(', ')', ' = ', '\n'];
  const HIDDEN: Record<Exclude<SqlDialect, 'sqlserver'>, string[]> = {
    sqlite: ["'@h'", "'it''s @h'", '"@h"', '[@h]', '`@h`', '-- @h\n', '/* @h */'],
    postgres: ["'@h'", "E'\\'@h'", '"@h"', '-- @h\n', '/* /* @h */ @h */', '$$@h$$', '$q$ @h $q$'],
  };
  let seed = 42;
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  it.each(DIALECTS)('%s', (dialect) => {
    for (let round = 0; round < 200; round++) {
      let sql = '';
      let expected = '';
      const used: string[] = [];
      for (let k = 0; k < 12; k++) {
        const pick = random(3);
        if (pick === 0) {
          const piece = CODE[random(CODE.length)]!;
          sql += piece;
          expected += piece;
        } else if (pick === 1) {
          const piece = HIDDEN[dialect][random(HIDDEN[dialect].length)]!;
          sql += piece;
          expected += piece;
        } else {
          const name = ['p', 'q', 'r'][random(3)]!;
          if (!used.includes(name)) used.push(name);
          sql += ` @${name} `;
          expected += ` ${MARK[dialect]}${used.indexOf(name) + 1} `;
        }
      }
      expect(bound(sql, { p: 'P', q: 'Q', r: 'R' }, dialect)).toEqual({
        sql: expected,
        values: used.map((n) => n.toUpperCase()),
      });
    }
  });
});

describe('bindParameters: sqlserver', () => {
  it('passes T-SQL through and every given parameter by its name, local variables left to the server', () => {
    const sql = "DECLARE @n int = 1; SELECT @Id AS id, @n AS n, '@id' AS literal -- @Id";
    expect(
      bindParameters<unknown>(
        sql,
        [
          { name: '@Id', value: 7 },
          { name: 'unused', value: 'x' },
        ],
        'sqlserver',
      ),
    ).toEqual({ ok: true, sql, values: [7, 'x'], names: ['Id', 'unused'] });
  });

  it('refuses the same name twice and names no marker could name, as SqlClient does', () => {
    expect(bindParameters('SELECT @a', params({ a: 1, '@A': 2 }), 'sqlserver')).toMatchObject({ ok: false });
    expect(bindParameters('SELECT 1', [{ name: ':a', value: 1 }], 'sqlserver')).toMatchObject({ ok: false });
  });
});
