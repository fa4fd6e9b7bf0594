/**
 * A JSON object read from its bytes, where one member (the document) may be megabytes of Base64: that member's string
 * is kept as a view of the body's bytes, never turned into a JavaScript string, so a 64 MiB body is held once instead
 * of three times (chunks, text, parsed value). Every other member goes through JSON.parse.
 */

/** The raw contents of a JSON string member: ASCII bytes after resolving escapes. */
export class RawJsonString {
  constructor(readonly bytes: Uint8Array) {}
}

/** A member's value together with its JSON text as sent, for members passed back to the client untouched. */
export class JsonWithText {
  constructor(
    readonly value: unknown,
    readonly text: string,
  ) {}
}

/** Members (compared case-insensitively) to keep as bytes (string values only) or with their text. */
export interface RawMembers {
  bytes?: readonly string[];
  text?: readonly string[];
}

export class JsonSyntaxError extends Error {
  override name = 'JsonSyntaxError';
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isSpace = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * Parses a top-level JSON object. Members named in `raw.bytes` whose value is a string come back as RawJsonString,
 * members named in `raw.text` as JsonWithText; all others as JSON.parse gives them. A later duplicate member wins,
 * as in JSON.parse.
 */
export function parseJsonObject(body: Uint8Array, raw: RawMembers = {}): Record<string, unknown> {
  const asBytes = new Set(raw.bytes?.map((n) => n.toLowerCase()));
  const withText = new Set(raw.text?.map((n) => n.toLowerCase()));
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const members: Record<string, unknown> = {};
  let pos = skipSpace(body, 0);
  if (body[pos] !== 0x7b /* { */)
    throw new JsonSyntaxError(pos >= body.length ? 'The body is empty.' : 'Expected a JSON object.');
  pos = skipSpace(body, pos + 1);
  if (body[pos] === 0x7d /* } */) pos++;
  else {
    for (;;) {
      if (body[pos] !== QUOTE) throw new JsonSyntaxError(`Expected a property name at byte ${pos}.`);
      const keyEnd = stringEnd(body, pos);
      const key = parseValue(decoder, body, pos, keyEnd) as string;
      pos = skipSpace(body, keyEnd);
      if (body[pos] !== 0x3a /* : */) throw new JsonSyntaxError(`Expected ':' at byte ${pos}.`);
      pos = skipSpace(body, pos + 1);
      const valueEnd = valueEndAt(body, pos);
      const name = key.toLowerCase();
      if (asBytes.has(name) && body[pos] === QUOTE)
        members[key] = new RawJsonString(unescapeAscii(body.subarray(pos + 1, valueEnd - 1)));
      else {
        const value = parseValue(decoder, body, pos, valueEnd);
        members[key] = withText.has(name)
          ? new JsonWithText(value, decoder.decode(body.subarray(pos, valueEnd)))
          : value;
      }
      pos = skipSpace(body, valueEnd);
      if (body[pos] === 0x2c /* , */) {
        pos = skipSpace(body, pos + 1);
        continue;
      }
      if (body[pos] === 0x7d) {
        pos++;
        break;
      }
      throw new JsonSyntaxError(`Expected ',' or '}' at byte ${pos}.`);
    }
  }
  if (skipSpace(body, pos) !== body.length)
    throw new JsonSyntaxError(`Unexpected data after the object at byte ${pos}.`);
  return members;
}

/** JSON.parse of one value; its error messages differ between JavaScript engines, so they are replaced by one of ours. */
function parseValue(decoder: TextDecoder, body: Uint8Array, start: number, end: number): unknown {
  let text: string;
  try {
    text = decoder.decode(body.subarray(start, end));
  } catch {
    throw new JsonSyntaxError('The body is not valid UTF-8.');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new JsonSyntaxError(`Invalid JSON value at byte ${start}.`);
  }
}

function skipSpace(b: Uint8Array, pos: number): number {
  while (isSpace(b[pos])) pos++;
  return pos;
}

/**
 * Position just after the closing quote of the string that starts at `pos`: the first quote not escaped by an odd
 * run of backslashes, found with native searches (a document string is megabytes). Its contents are checked later:
 * by JSON.parse, or for a raw member by the Base64 decoder (which reads a raw tab or line break as the whitespace it
 * is, the one leniency).
 */
function stringEnd(b: Uint8Array, pos: number): number {
  for (let q = b.indexOf(QUOTE, pos + 1); q >= 0; q = b.indexOf(QUOTE, q + 1)) {
    let backslashes = 0;
    while (b[q - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return q + 1;
  }
  throw new JsonSyntaxError('Unterminated string.');
}

/** Position just after the value starting at `pos` (its syntax is checked by JSON.parse, or by unescapeAscii). */
function valueEndAt(b: Uint8Array, pos: number): number {
  if (b[pos] === QUOTE) return stringEnd(b, pos);
  let depth = 0;
  for (let i = pos; i < b.length; i++) {
    const c = b[i]!;
    if (c === QUOTE) i = stringEnd(b, i) - 1;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) return i;
      if (--depth === 0) return i + 1;
    } else if (depth === 0 && (c === 0x2c || isSpace(c))) return i;
  }
  if (depth === 0 && b.length > pos) return b.length;
  throw new JsonSyntaxError('Unexpected end of the body.');
}

/** `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`: the byte each stands for; -1 for the others. */
const SIMPLE_ESCAPES = new Int16Array(256).fill(-1);
for (const [e, v] of [
  [0x22, 0x22],
  [0x5c, 0x5c],
  [0x2f, 0x2f],
  [0x62, 0x08],
  [0x66, 0x0c],
  [0x6e, 0x0a],
  [0x72, 0x0d],
  [0x74, 0x09],
] as const)
  SIMPLE_ESCAPES[e] = v;

/**
 * A JSON string's contents with escapes resolved, as bytes. Only ASCII can be Base64, so a non-ASCII character (escaped
 * or not) becomes 0xFF, which no Base64 alphabet contains. Without escapes (the usual case) this is a view, not a copy.
 */
function unescapeAscii(s: Uint8Array): Uint8Array {
  if (s.indexOf(BACKSLASH) < 0) return s;
  const out = new Uint8Array(s.length);
  let o = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c !== BACKSLASH) {
      out[o++] = c;
      continue;
    }
    const e = s[++i] ?? 0;
    if (SIMPLE_ESCAPES[e]! >= 0) out[o++] = SIMPLE_ESCAPES[e]!;
    else if (e === 0x75 /* u */) {
      const hex = String.fromCharCode(...s.subarray(i + 1, i + 5));
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new JsonSyntaxError('Invalid \\u escape.');
      const code = parseInt(hex, 16);
      out[o++] = code < 0x80 ? code : 0xff;
      i += 4;
    } else throw new JsonSyntaxError('Invalid escape in a string.');
  }
  return out.subarray(0, o);
}
