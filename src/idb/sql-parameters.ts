/**
 * Binds the `@name` parameter markers of client SQL (docs/contract/iidbservice.md: "Parameter markers in sql are @name
 * on every backend") to the QueryParameter values a call carries, and rewrites them into markers the backend's driver
 * binds by position. The SQL arrives written for the original backend, so the markers are found with the target
 * database's own lexical rules: a marker inside a string literal, a quoted identifier or a comment is text, never a
 * parameter, and is left exactly as written.
 *
 * Output per dialect:
 * - postgres: `$1`, `$2`, … (the extended-query protocol's markers, which postgres.js, node-postgres and Kysely raw
 *   SQL pass through), `values[n - 1]` for `$n`.
 * - sqlite: `?1`, `?2`, … (SQLite's numbered markers), `values[n - 1]` for `?n`, passed as the args array. Named
 *   binding is not used, because it is not handled the same way everywhere: `@libsql/client` over `file:` strips one
 *   prefix character from the object's keys and binds by name, its remote (Hrana) protocol leaves names to the server,
 *   D1 binds only `?` and `?NNN`, and SQLite compares names case-sensitively while the contract's are case-insensitive.
 *   A positional array means the same to every SQLite driver, and `?NNN` lets one name reuse its number.
 *
 * Decisions (each is pinned by test/idb/sql-parameters.test.ts):
 * - A marker is `@` followed by a name: a letter (any script) or `_`, then letters, combining marks, digits and `_`.
 *   Names match QueryParameter.Name case-insensitively (`toLowerCase`, as SQL Server's usual collations compare
 *   variables), and a Name may carry the leading `@` or not.
 * - Not markers: `@@name` (T-SQL globals such as `@@ROWCOUNT`; in PostgreSQL `@@` is the text-search match operator),
 *   an `@` directly after an identifier character (`a@b` is one identifier in T-SQL; an e-mail address in code is not a
 *   parameter) and `@` before a digit or nothing. On postgres these pass through as written; on sqlite see below.
 * - The same name reuses its number; numbers follow first use; values are the given values, unconverted (turning .NET
 *   values into driver values is the caller's business).
 * - A marker no parameter names is InvalidArgument naming it. Two parameters with the same name (ignoring case and the
 *   `@`) are InvalidArgument even when no marker uses them, as is a Name that no marker could ever name (null, empty,
 *   `:id`): both are client mistakes that SqlClient would also refuse.
 * - Parameters no marker uses are allowed and left out of `values` (SQL Server ignores unused sp_executesql parameters;
 *   PostgreSQL and SQLite would refuse or mis-bind surplus positional values).
 * - Markers of the database's own syntax that the call cannot fill are InvalidArgument rather than passed on: on
 *   postgres `$1` (it would silently take our first value); on sqlite `?`, `?NNN`, `:name`, `$name`, `#name` and an `@`
 *   that SQLite reads as a parameter though we do not (`a@b`, `@1`), because SQLite binds a parameter nobody set as
 * NULL   without a word. PostgreSQL's `?` (a jsonb operator) and `:name` (psql, not the server) are plain text.
 * - Unterminated strings, identifiers and comments run to the end of the text and are passed through unchanged, so the
 *   database reports its own syntax error (SQLite even accepts an unterminated block comment).
 *
 * - sqlserver: the SQL is T-SQL and `@name` is its own parameter syntax, so nothing is rewritten: every given parameter
 *   is passed by its name (without the `@`), as SqlCommand passes them to sp_executesql, and `names` says which value
 *   is which. An `@name` no parameter names is left to the server: it is a local variable (`DECLARE @n int`) or the
 *   server's "Must declare the scalar variable" error. The name checks above still apply.
 *
 * Lexical rules followed (everything else is code, where markers are looked for):
 * - both: `'…'` with `''`, `"…"` with `""`, `-- …` to the end of the line.
 * - sqlite: `` `…` `` with ` `` `, `[…]` (no escape: the first `]` ends it), `/* … *\/` not nested. No dollar quotes
 *   (`$tag$` is a parameter to SQLite, hence refused), no backslash escapes.
 * - postgres: `E'…'` (also `e'…'`) with backslash escapes, `/* … *\/` nested, dollar quotes `$$…$$` and `$tag$…$tag$`.
 *   Brackets are array subscripts there (`a[@i]` binds) and backticks mean nothing. `'…'` is read with
 *   standard_conforming_strings on (the default since PostgreSQL 9.1): a backslash there is an ordinary character.
 */

export type SqlDialect = 'sqlite' | 'postgres' | 'sqlserver';

/** QueryParameter as it comes off the wire; Name may be nil there. */
export interface SqlParameter<V = unknown> {
  name: string | null;
  value: V;
}

export type BoundSql<V = unknown> =
  | { ok: true; sql: string; values: V[]; names?: string[] }
  | { ok: false; fault: 'InvalidArgument'; message: string };

/** A marker's name, read at the character after the `@`. */
const MARKER_NAME = /[\p{L}_][\p{L}\p{M}\p{N}_]*/uy;
const WHOLE_NAME = /^[\p{L}_][\p{L}\p{M}\p{N}_]*$/u;
/** PostgreSQL's dollar-quote opening: `$`, an optional tag (an identifier without `$`), `$`. */
const DOLLAR_TAG = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;

/** Rewrites the `@name` markers of `sql` for `dialect` and lists the values to bind by position. */
export function bindParameters<V>(
  sql: string,
  parameters: readonly SqlParameter<V>[],
  dialect: SqlDialect,
): BoundSql<V> {
  const byKey = new Map<string, SqlParameter<V>>();
  for (const parameter of parameters) {
    const name = parameter.name;
    const bare = typeof name === 'string' && name.startsWith('@') ? name.slice(1) : name;
    if (typeof bare !== 'string' || !WHOLE_NAME.test(bare)) {
      return invalid(`The parameter name ${name === null ? 'null' : quoted(name)} is not a valid parameter name.`);
    }
    const key = bare.toLowerCase();
    if (byKey.has(key)) return invalid(`The parameter @${bare} is given more than once.`);
    byKey.set(key, parameter);
  }

  if (dialect === 'sqlserver') {
    const given = [...byKey.values()];
    return {
      ok: true,
      sql,
      values: given.map((p) => p.value),
      names: given.map((p) => (p.name!.startsWith('@') ? p.name!.slice(1) : p.name!)),
    };
  }
  const postgres = dialect === 'postgres';
  const plan = markerPlan(sql, postgres);
  const numbers = new Map<string, number>();
  const values: V[] = [];
  let out = plan.pieces[0]!;
  for (let m = 0; m < plan.markers.length; m++) {
    const { key, name } = plan.markers[m]!;
    const parameter = byKey.get(key);
    if (parameter === undefined) {
      return invalid(`The SQL uses the parameter @${name}, but no parameter of that name is given.`);
    }
    let number = numbers.get(key);
    if (number === undefined) {
      values.push(parameter.value);
      number = values.length;
      numbers.set(key, number);
    }
    out += (postgres ? '$' : '?') + number + plan.pieces[m + 1]!;
  }
  if (plan.refusal !== undefined) return invalid(plan.refusal);
  return { ok: true, sql: out, values };
}

/**
 * What binding needs of a text, found by reading it once: its `@name` markers in order, the SQL around them, and the
 * first marker of the database's own syntax (refused) after them. A refusal and a marker no parameter names are
 * reported in the order they stand in the text, as a scan that binds while it reads would.
 */
interface MarkerPlan {
  /** The SQL around the markers: `pieces[i]` before `markers[i]`, the last piece after the last marker. */
  pieces: string[];
  markers: { key: string; name: string }[];
  /** The refusal of the first marker of the database's own syntax, after the markers listed. */
  refusal?: string;
}

/**
 * Plans by text, per dialect, of the texts read most recently: a client sends the same few texts again and again,
 * and reading one was most of binding it (0.8 µs for a 57-character INSERT, more for the hundreds of characters of a
 * legacy client's queries). At most PLANNED_TEXTS texts of at most PLANNED_TEXT_LENGTH characters each.
 */
const PLANS = { sqlite: new Map<string, MarkerPlan>(), postgres: new Map<string, MarkerPlan>() };
const PLANNED_TEXTS = 256;
const PLANNED_TEXT_LENGTH = 4096;

function markerPlan(sql: string, postgres: boolean): MarkerPlan {
  const plans = postgres ? PLANS.postgres : PLANS.sqlite;
  let plan = plans.get(sql);
  if (plan === undefined) {
    plan = readMarkers(sql, postgres);
    if (sql.length <= PLANNED_TEXT_LENGTH) {
      if (plans.size >= PLANNED_TEXTS) plans.delete(plans.keys().next().value!);
      plans.set(sql, plan);
    }
  }
  return plan;
}

function readMarkers(sql: string, postgres: boolean): MarkerPlan {
  const plan: MarkerPlan = { pieces: [], markers: [] };
  const n = sql.length;
  let copied = 0; // sql[copied..i) is yet to be added to the pieces
  let i = 0;
  // Whether the previous character of code belongs to a word (identifier, keyword, number): an `@`, `$` or `E` there
  // continues the word instead of starting a marker, a dollar quote or an escape string.
  let afterWord = false;

  while (i < n) {
    const c = sql[i]!;
    const next = sql[i + 1];
    let end = -1; // end of a string, identifier or comment starting at i

    if (c === "'") end = skipQuoted(sql, i, "'");
    else if (c === '"') end = skipQuoted(sql, i, '"');
    else if (c === '-' && next === '-') end = skipLineComment(sql, i, postgres);
    else if (c === '/' && next === '*') end = skipBlockComment(sql, i, postgres);
    else if (!postgres && c === '`') end = skipQuoted(sql, i, '`');
    else if (!postgres && c === '[') end = skipTo(sql, i + 1, ']');
    else if (postgres && (c === 'E' || c === 'e') && next === "'" && !afterWord) end = skipEscapeString(sql, i + 1);
    else if (postgres && c === '$' && !afterWord) {
      if (next !== undefined && isDigit(next)) {
        const marker = quoted(sql.slice(i, wordEnd(sql, i + 1)));
        plan.refusal = `The SQL contains ${marker}, a PostgreSQL parameter marker; only @name markers can be bound.`;
        break;
      }
      DOLLAR_TAG.lastIndex = i;
      const tag = DOLLAR_TAG.exec(sql)?.[0];
      if (tag !== undefined) {
        const close = sql.indexOf(tag, i + tag.length);
        end = close < 0 ? n : close + tag.length;
      }
    }
    if (end >= 0) {
      i = end;
      afterWord = false;
      continue;
    }

    if (c === '@') {
      if (next === '@') {
        // @@ROWCOUNT and the like, or PostgreSQL's @@ operator: the whole run of @ and the word after it is left alone.
        let j = i;
        while (sql[j] === '@') j++;
        i = wordEnd(sql, j);
        afterWord = i > j;
        continue;
      }
      MARKER_NAME.lastIndex = i + 1;
      const name = afterWord ? undefined : MARKER_NAME.exec(sql)?.[0];
      if (name !== undefined) {
        plan.pieces.push(sql.slice(copied, i));
        plan.markers.push({ key: name.toLowerCase(), name });
        i += 1 + name.length;
        copied = i;
        afterWord = true;
        continue;
      }
    }

    if (!postgres) {
      const refused = sqliteParameter(sql, i, afterWord);
      if (refused !== null) {
        plan.refusal = `The SQL contains ${quoted(refused)}, which SQLite reads as a parameter marker; only @name markers bind.`;
        break;
      }
    }
    afterWord = isWordChar(c);
    i++;
  }
  plan.pieces.push(sql.slice(copied));
  return plan;
}

/**
 * The parameter marker SQLite's tokenizer reads at i (`?`, `?NNN`, or `@`, `:`, `#`, `$` followed by identifier
 * characters), or null. Called only where our own `@name` marker did not match.
 */
function sqliteParameter(sql: string, i: number, afterWord: boolean): string | null {
  const c = sql[i]!;
  if (c === '?') {
    let j = i + 1;
    while (j < sql.length && isDigit(sql[j]!)) j++;
    return sql.slice(i, j);
  }
  // `$` is an identifier character in SQLite, so `a$b` is one name; `@`, `:` and `#` are not, so `a@b` is `a` and `@b`.
  if (c === '@' || c === ':' || c === '#' || (c === '$' && !afterWord)) {
    const end = wordEnd(sql, i + 1);
    if (end > i + 1) return sql.slice(i, end);
  }
  return null;
}

/** Identifier characters as both SQLite and PostgreSQL read them: ASCII letters, digits, `_`, `$` and any non-ASCII. */
function isWordChar(c: string): boolean {
  const code = c.charCodeAt(0);
  return (
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    c === '_' ||
    c === '$' ||
    code >= 0x80
  );
}

const isDigit = (c: string): boolean => c >= '0' && c <= '9';

function wordEnd(sql: string, from: number): number {
  let j = from;
  while (j < sql.length && isWordChar(sql[j]!)) j++;
  return j;
}

/** A quoted string or identifier from its opening quote at `start`; a doubled quote stands for one. */
function skipQuoted(sql: string, start: number, quote: string): number {
  let j = start + 1;
  for (;;) {
    const close = sql.indexOf(quote, j);
    if (close < 0) return sql.length;
    if (sql[close + 1] !== quote) return close + 1;
    j = close + 2;
  }
}

/** PostgreSQL's E'…' from its quote at `start`: a backslash escapes the next character, `''` is a quote. */
function skipEscapeString(sql: string, start: number): number {
  let j = start + 1;
  while (j < sql.length) {
    const c = sql[j];
    if (c === '\\') j += 2;
    else if (c === "'") {
      if (sql[j + 1] !== "'") return j + 1;
      j += 2;
    } else j++;
  }
  return sql.length;
}

function skipTo(sql: string, from: number, close: string): number {
  const at = sql.indexOf(close, from);
  return at < 0 ? sql.length : at + close.length;
}

/** `--` to the line end, which stays code: SQLite ends the comment at \n only, PostgreSQL at \n or \r. */
function skipLineComment(sql: string, start: number, postgres: boolean): number {
  for (let j = start + 2; j < sql.length; j++) {
    if (sql[j] === '\n' || (postgres && sql[j] === '\r')) return j;
  }
  return sql.length;
}

/** `/* … *\/`; PostgreSQL (like SQL Server) nests them, SQLite ends at the first `*\/`. */
function skipBlockComment(sql: string, start: number, nested: boolean): number {
  if (!nested) return skipTo(sql, start + 2, '*/');
  let depth = 1;
  let j = start + 2;
  while (j < sql.length) {
    if (sql[j] === '/' && sql[j + 1] === '*') {
      depth++;
      j += 2;
    } else if (sql[j] === '*' && sql[j + 1] === '/') {
      j += 2;
      if (--depth === 0) return j;
    } else j++;
  }
  return sql.length;
}

/** A piece of the caller's text in quotes for a message, cut short so no message carries a long piece of it. */
function quoted(value: string, max = 40): string {
  const chars = Array.from(value); // by code point, so a cut never splits a surrogate pair
  return `"${chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : value}"`;
}

const invalid = (message: string): BoundSql<never> => ({ ok: false, fault: 'InvalidArgument', message });
