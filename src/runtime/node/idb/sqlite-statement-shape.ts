/**
 * How SQLite reads a text of client SQL, without preparing it (sqlite-connection.ts refuses trailing statements and client transaction control with it,
 * counts rows affected by the verb, and sqlite-database.ts sends likely reads to a read-only connection first).
 */
// sqlite3_complete()'s tokens and transitions (SQLite's complete.c): rows are states, columns tokens. A `;` that
// takes a statement back to state 1 ends it; states 5-7 are the body of CREATE TRIGGER … BEGIN … END, whose
// statements end in semicolons of their own.
const SEMI = 0;
const SPACE = 1;
const OTHER = 2;
const KEYWORDS: ReadonlyMap<string, number> = new Map([
  ['EXPLAIN', 3],
  ['CREATE', 4],
  ['TEMP', 5],
  ['TEMPORARY', 5],
  ['TRIGGER', 6],
  ['END', 7],
]);
const NEXT = [
  [1, 0, 2, 3, 4, 2, 2, 2],
  [1, 1, 2, 3, 4, 2, 2, 2],
  [1, 2, 2, 2, 2, 2, 2, 2],
  [1, 3, 3, 2, 4, 2, 2, 2],
  [1, 4, 2, 2, 2, 4, 5, 2],
  [6, 5, 5, 5, 5, 5, 5, 5],
  [6, 6, 5, 5, 5, 5, 5, 7],
  [1, 7, 5, 5, 5, 5, 5, 5],
];

/**
 * The verbs of queries (StatementShape.verb, so `WITH …` counts by the statement after it): statements that usually
 * only read. sqlite-database.ts tries a writer's on a read-only connection first; sqlite-connection.ts reads their
 * rows as JSON (sqlite-json-rows.ts).
 */
export const QUERY_VERBS: ReadonlySet<string> = new Set(['SELECT', 'VALUES']);

export interface StatementShape {
  readonly started: boolean;
  readonly trailing: boolean;
  readonly verb: string;
}

/**
 * How SQLite reads the text: whether it holds a statement at all, whether anything but semicolons and comments
 * follows the first one (prepare would silently drop it), and the first statement's verb (`INSERT`, `SELECT`, …;
 * for `WITH …` the word after the common table expressions). Leading semicolons are skipped, as SQLite does.
 * Remembered per text (`remembered`).
 */
export const statementShape: (sql: string) => StatementShape = remembered(shapeOf);

function shapeOf(sql: string): StatementShape {
  let state = 0;
  let ended = false;
  let started = false;
  let verb = '';
  let depth = 0;
  let afterClose = false; // the last token was a `)` closing at depth 0: in a WITH, a common table expression ended
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    const start = i;
    let token = OTHER;
    if (c === ';') {
      token = SEMI;
      i++;
    } else if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f') {
      token = SPACE;
      i++;
    } else if (c === '-' && sql[i + 1] === '-') {
      token = SPACE;
      i = endOf(sql, '\n', i + 2);
    } else if (c === '/' && sql[i + 1] === '*') {
      token = SPACE;
      i = endOf(sql, '*/', i + 2);
    } else if (c === "'" || c === '"' || c === '`') {
      i = endOf(sql, c, i + 1);
    } else if (c === '[') {
      i = endOf(sql, ']', i + 1);
    } else if (isIdChar(sql.charCodeAt(i))) {
      while (i < sql.length && isIdChar(sql.charCodeAt(i))) i++;
    } else {
      i++;
    }
    if (ended) {
      if (token !== SEMI && token !== SPACE) return { started, trailing: true, verb };
      continue;
    }
    const word = token === OTHER && isIdChar(sql.charCodeAt(start)) ? sql.slice(start, i).toUpperCase() : undefined;
    if (word !== undefined) token = KEYWORDS.get(word) ?? OTHER;
    const next = NEXT[state]![token]!;
    if (token === SEMI && next === 1 && state > 1) ended = true;
    state = next;
    if (token === SEMI || token === SPACE) continue;
    if (!started) {
      started = true;
      verb = word ?? '';
    } else if (verb === 'WITH' && word !== undefined && afterClose && word !== 'AS') {
      verb = word;
    }
    if (c === '(') depth++;
    else if (c === ')') depth--;
    afterClose = c === ')' && depth === 0;
  }
  return { started, trailing: false, verb };
}

/** The index after `close`, searched from `from`; the text's end when it is missing (unterminated). */
function endOf(sql: string, close: string, from: number): number {
  const at = sql.indexOf(close, from);
  return at < 0 ? sql.length : at + close.length;
}

/** SQLite's IdChar: ASCII letters and digits, `_`, `$` and every non-ASCII character. */
function isIdChar(code: number): boolean {
  return (
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    code === 0x5f ||
    code === 0x24 ||
    code >= 0x80
  );
}

/**
 * Whether the text is one INSERT of rows given in full: `INSERT INTO name [(columns)] VALUES (…)[, (…)…]`, each value
 * a literal, a parameter or an operator on those; no parenthesis inside a row (so no function call and no
 * subquery), no SELECT, REPLACE, ON CONFLICT or RETURNING. Its work is then bounded by its text (B-tree inserts,
 * index entries and foreign key lookups of the rows written) unless a trigger fires, which the caller checks.
 * Remembered per text (`remembered`).
 */
export const isPlainInsert: (sql: string) => boolean = remembered(plainInsert);

function plainInsert(sql: string): boolean {
  const tokens = significantTokens(sql);
  if (tokens === undefined) return false;
  let at = 0;
  const word = (w: string): boolean => tokens[at]?.toUpperCase() === w && ++at > 0;
  const name = (): boolean => {
    const t = tokens[at];
    if (t === undefined || !(isIdChar(t.charCodeAt(0)) || '"`['.includes(t[0]!)) || KEYWORD_STOPS.has(t.toUpperCase()))
      return false;
    at++;
    return true;
  };
  if (!word('INSERT') || !word('INTO') || !name()) return false;
  if (tokens[at] === '.') {
    at++;
    if (!name()) return false;
  }
  if (tokens[at] === '(') {
    for (at++; tokens[at] !== ')'; at++) if (tokens[at] === undefined || tokens[at] === '(') return false;
    at++;
  }
  if (!word('VALUES')) return false;
  for (;;) {
    if (tokens[at++] !== '(') return false;
    for (; tokens[at] !== ')'; at++) {
      const t = tokens[at];
      if (t === undefined || t === '(' || t.toUpperCase() === 'SELECT') return false;
    }
    at++;
    if (tokens[at] !== ',') break;
    at++;
  }
  while (tokens[at] === ';') at++;
  return at === tokens.length;
}

const KEYWORD_STOPS = new Set(['VALUES', 'SELECT', 'DEFAULT']);

/**
 * A function of the text alone, its answers kept for the last KEPT_TEXTS texts of at most KEPT_CHARS characters: a
 * client sends the same few statements again and again, and reading one again was a tenth of a cheap call's work.
 */
function remembered<T>(read: (sql: string) => T): (sql: string) => T {
  const known = new Map<string, T>();
  return (sql) => {
    if (sql.length > KEPT_CHARS) return read(sql);
    let answer = known.get(sql);
    if (answer === undefined) {
      answer = read(sql);
      // The oldest text makes room (a Map iterates in insertion order).
      if (known.size >= KEPT_TEXTS) known.delete(known.keys().next().value as string);
      known.set(sql, answer);
    }
    return answer;
  };
}
const KEPT_TEXTS = 256;
const KEPT_CHARS = 4096;

/** The text's tokens other than spaces and comments: words, quoted strings and names whole, other characters one each. */
function significantTokens(sql: string): string[] | undefined {
  const tokens: string[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    const start = i;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f') {
      i++;
      continue;
    }
    if (c === '-' && sql[i + 1] === '-') {
      i = endOf(sql, '\n', i + 2);
      continue;
    }
    if (c === '/' && sql[i + 1] === '*') {
      i = endOf(sql, '*/', i + 2);
      continue;
    }
    if (c === "'" || c === '"' || c === '`') {
      i = sql.indexOf(c, i + 1);
      if (i < 0) return undefined; // unterminated: let SQLite say what is wrong
      i++;
      // a doubled quote inside is one token with its halves ('it''s')
      while (sql[i] === c) {
        i = sql.indexOf(c, i + 1);
        if (i < 0) return undefined;
        i++;
      }
    } else if (c === '[') {
      i = sql.indexOf(']', i + 1);
      if (i < 0) return undefined;
      i++;
    } else if (isIdChar(sql.charCodeAt(i))) {
      while (i < sql.length && isIdChar(sql.charCodeAt(i))) i++;
    } else {
      i++;
    }
    tokens.push(sql.slice(start, i));
  }
  return tokens;
}
