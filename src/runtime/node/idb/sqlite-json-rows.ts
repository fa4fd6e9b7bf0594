/**
 * A read's rows in one step: SQLite writes them as one JSON text, which is parsed here (sqlite-connection.ts runs the
 * statement this builds and falls back to reading row by row whenever it cannot be used).
 *
 * Why: libsql reads a row for ~3 µs whatever its width (libsql-js 0.6.0-pre.41 `iterator_next_sync`: a native call
 * into its async runtime, a Record object with the column names cloned into it, then an array made for its value).
 * The same rows written by SQLite's `json_group_array` and parsed by `JSON.parse` cost ~1 µs a row (measured on the
 * bench's table: 100 rows 310 → 115 µs, 2 000 rows 6.0 → 2.4 ms). npm serves no libsql with a cheaper row.
 *
 * The statement reads the client's statement as a subquery, its first `limit + 1` rows (the row cap, or JSON_ROWS_MAX):
 *
 *     SELECT *, json_group_array(json_array(<cell>, …)) OVER () AS json_rows
 *       FROM (SELECT * FROM (<client SQL>) LIMIT <n>)
 *
 * - The window function, not a plain aggregate: its first row carries the subquery's own columns too, so the
 *   statement's columns after its step are the client statement's, as SQLite compiles it now (names and declared
 *   types after a schema change, which a kept statement of the client's text would report only after a step of its
 *   own). A window function also keeps SQLite from flattening the subquery, so each cell is computed once and the
 *   rows come in the subquery's order (its ORDER BY is kept: the outer query has neither ORDER BY nor a join).
 * - Cells are referenced by the names the client statement's columns have; a statement whose names repeat (SQLite
 *   would rename the second `a` to `a:1` in a subquery) is not read this way. The names are checked against the
 *   columns after the step: a schema changed since (a column renamed, added, dropped) fails there or at the step,
 *   and the call reads row by row.
 * - Every value keeps what the row-by-row read gives: text as JSON text; integers as JSON numbers when they are safe,
 *   else tagged `["i", digits]`; reals tagged `["r", m, k]` (realExpression); blobs tagged `["x", hex]`; NULL as
 *   null.
 * Parameters keep their numbers: the client's text is the only one in the statement that has any.
 */
import type { DataCell } from '../../../idb/datatable.ts';

/**
 * The most rows read this way: a larger result is read row by row, as before, yielding to the event loop as it goes.
 * Why: the JSON text is parsed in one piece on the event loop (measured: 100 000 rows of the bench's six columns held
 * the loop for 140–220 ms, against 75–110 ms of the longest pause reading them row by row); 10 000 rows hold it for
 * ~15 ms. A result past it has cost its JSON statement once, and its text is read row by row from then on.
 */
export const JSON_ROWS_MAX = 10_000;

/** More arguments than SQLite's json_array takes in some builds (SQLITE_MAX_FUNCTION_ARG is 127 by default). */
const MAX_COLUMNS = 100;
const SAFE = '9007199254740991';

/** `c` (a column of the subquery) as a JSON value the decoder below turns back into the cell libsql would give. */
function cellExpression(name: string): string {
  const c = `\`${name.replaceAll('`', '``')}\``;
  return (
    `CASE typeof(${c}) WHEN 'text' THEN ${c}` +
    ` WHEN 'integer' THEN iif(${c} BETWEEN -${SAFE} AND ${SAFE}, ${c}, json_array('i', CAST(${c} AS TEXT)))` +
    ` WHEN 'real' THEN ${realExpression(c)}` +
    ` WHEN 'blob' THEN json_array('x', hex(${c})) END`
  );
}

/**
 * A real as `["r", m, k]`, its value m × 2^k exactly. Not as text: SQLite's printf is not exact past 15 digits
 * (measured: `%!.17g` gives 1e300 as 9.9999999999999996e+299, and 10% of random doubles come back changed; JSON's
 * own form has 15 digits). k is chosen with m an integer below 2^55: a binary exponent of c found by its logarithm
 * (`ln` / ln 2, off by one at most, which the margin takes), less 53; never below -1074, where subnormals have
 * their last bit. Dividing by a power of two is exact, and so is m × 2^k in JavaScript. Zero keeps its sign (SQLite
 * prints -0.0 as 0.0; atan2 tells them apart), infinities are JSON's 9e999. Checked on 300 000 random doubles.
 */
function realExpression(c: string): string {
  const k = `max(CAST(floor(ln(abs(${c})) / ${Math.LN2}) AS INTEGER) - 53, -1074)`;
  return (
    `CASE WHEN ${c} = 0.0 THEN iif(atan2(${c}, -1.0) < 0.0, json('-0.0'), ${c})` +
    ` WHEN abs(${c}) > ${Number.MAX_VALUE} THEN json(iif(${c} > 0.0, '9e999', '-9e999'))` +
    ` ELSE json_array('r', CAST(${c} / power(2.0, ${k}) AS INTEGER), ${k}) END`
  );
}

/**
 * The statement that reads the rows of `sql` (a single SELECT or VALUES, whose columns are `names`) as JSON, at most
 * `limit + 1` of them (so that a result of more than `limit` rows can be told), or undefined when it cannot: no
 * column, too many, or names that repeat.
 */
export function rowsAsJsonSql(sql: string, names: readonly string[], limit: number): string | undefined {
  if (names.length === 0 || names.length > MAX_COLUMNS) return undefined;
  if (new Set(names.map((name) => name.toLowerCase())).size !== names.length) return undefined;
  // A trailing `;` would end the subquery; a trailing `--` comment is ended by the line break.
  const body = sql.replace(/[\s;]+$/, '');
  const cells = names.map(cellExpression).join(', ');
  return `SELECT *, json_group_array(json_array(${cells})) OVER () AS json_rows FROM (SELECT * FROM (${body}\n) LIMIT ${limit + 1})`;
}

/**
 * Appends the cells of `json` (rows of `width` cells, as rowsAsJsonSql's statement writes them) to `cells`; returns
 * how many rows there were. Throws on a row of another width.
 */
export function appendJsonRows(json: string, width: number, cells: DataCell[]): number {
  const rows = JSON.parse(json) as unknown[][];
  for (const row of rows) {
    if (row.length !== width) throw new Error(`a row of ${row.length} cells, not ${width}`);
    for (const value of row)
      cells.push(typeof value === 'object' && value !== null ? tagged(value as unknown[]) : (value as DataCell));
  }
  return rows.length;
}

function tagged([tag, value, exponent]: unknown[]): DataCell {
  if (tag === 'r') return (value as number) * 2 ** (exponent as number);
  const text = value as string;
  if (tag === 'i') return BigInt(text);
  // A copy of its own: Buffer.from may hand out a slice of a shared pool.
  return new Uint8Array(Buffer.from(text, 'hex'));
}
