import { PdfName, PdfRef, PdfStream, PdfString, PdfSyntaxError, type PdfDict, type PdfValue } from './objects.ts';

/** Containers nested deeper than this are refused, as qpdf does: no real file needs more, and it bounds the work. */
const MAX_NESTING = 500;

const WHITESPACE = new Uint8Array(256);
for (const c of [0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]) WHITESPACE[c] = 1;
const DELIMITER = new Uint8Array(256);
for (const c of '()<>[]{}/%') DELIMITER[c.charCodeAt(0)] = 1;

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isRegular = (c: number) => !WHITESPACE[c] && !DELIMITER[c];

type Frame = { kind: 'array'; items: PdfValue[] } | { kind: 'dict'; items: PdfValue[] };

/**
 * A cursor over PDF bytes that reads tokens and objects. Iterative (an explicit stack, not recursion),
 * so hostile nesting costs a counter, not the call stack.
 */
export class PdfParser {
  pos: number;

  constructor(
    readonly bytes: Uint8Array,
    pos = 0,
    /** Resolves an indirect stream /Length; returns undefined when it cannot. */
    private readonly resolveLength?: (ref: PdfRef) => number | undefined,
  ) {
    this.pos = pos;
  }

  skipWhitespaceAndComments(): void {
    const b = this.bytes;
    for (;;) {
      while (this.pos < b.length && WHITESPACE[b[this.pos]!]) this.pos++;
      if (b[this.pos] !== 0x25 /* % */) return;
      while (this.pos < b.length && b[this.pos] !== 0x0a && b[this.pos] !== 0x0d) this.pos++;
    }
  }

  /** Reads a bare keyword or number token without consuming it; `undefined` at a delimiter or the end. */
  peekToken(): string | undefined {
    this.skipWhitespaceAndComments();
    let end = this.pos;
    while (end < this.bytes.length && isRegular(this.bytes[end]!)) end++;
    return end === this.pos ? undefined : latin1(this.bytes, this.pos, end);
  }

  readToken(): string | undefined {
    const token = this.peekToken();
    if (token !== undefined) this.pos += token.length;
    return token;
  }

  /** Reads `num gen obj` and returns the pair, or undefined (cursor unchanged) when not there. */
  readObjectHeader(): { num: number; gen: number } | undefined {
    const start = this.pos;
    const num = this.readToken();
    const gen = this.readToken();
    const kw = this.readToken();
    if (num && gen && kw === 'obj' && /^\d+$/.test(num) && /^\d+$/.test(gen)) return { num: +num, gen: +gen };
    this.pos = start;
    return undefined;
  }

  /** Reads one object; a dictionary followed by `stream` becomes a PdfStream. */
  readObject(): PdfValue {
    const stack: Frame[] = [];
    for (;;) {
      let value: PdfValue;
      this.skipWhitespaceAndComments();
      if (this.pos >= this.bytes.length) throw new PdfSyntaxError('invalid', 'unexpected end of data');
      const c = this.bytes[this.pos]!;
      if (c === 0x5b /* [ */ || (c === 0x3c && this.bytes[this.pos + 1] === 0x3c)) {
        if (stack.length >= MAX_NESTING) throw new PdfSyntaxError('invalid', 'objects nested too deeply');
        this.pos += c === 0x5b ? 1 : 2;
        stack.push({ kind: c === 0x5b ? 'array' : 'dict', items: [] });
        continue;
      }
      if (c === 0x5d /* ] */ || (c === 0x3e && this.bytes[this.pos + 1] === 0x3e)) {
        const frame = stack.pop();
        const closesArray = c === 0x5d;
        if (!frame || (frame.kind === 'array') !== closesArray)
          throw new PdfSyntaxError('invalid', 'unbalanced brackets');
        this.pos += closesArray ? 1 : 2;
        value = frame.kind === 'array' ? frame.items : toDict(frame.items);
      } else {
        value = this.readScalar(stack.length > 0 ? stack[stack.length - 1]! : undefined);
      }
      if (stack.length === 0) return value instanceof Map ? this.maybeStream(value) : value;
      stack[stack.length - 1]!.items.push(value);
    }
  }

  private readScalar(frame: Frame | undefined): PdfValue {
    const b = this.bytes;
    const c = b[this.pos]!;
    if (c === 0x2f /* / */) return this.readName();
    if (c === 0x28 /* ( */) return this.readLiteralString();
    if (c === 0x3c /* < */) return this.readHexString();
    const token = this.readToken();
    if (token === undefined) throw new PdfSyntaxError('invalid', `unexpected byte 0x${c.toString(16)}`);
    if (token === 'true') return true;
    if (token === 'false') return false;
    if (token === 'null') return null;
    if (token === 'R' && frame) return popReference(frame.items);
    const n = Number(token);
    if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(token) && Number.isFinite(n)) return n;
    throw new PdfSyntaxError('invalid', `unexpected token "${token.slice(0, 20)}"`);
  }

  private readName(): PdfName {
    const b = this.bytes;
    let end = ++this.pos;
    while (end < b.length && isRegular(b[end]!)) end++;
    const raw = latin1(b, this.pos, end);
    this.pos = end;
    return new PdfName(
      raw.includes('#')
        ? raw.replace(/#([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
        : raw,
    );
  }

  private readLiteralString(): PdfString {
    const b = this.bytes;
    const start = ++this.pos;
    let depth = 1;
    while (this.pos < b.length) {
      const c = b[this.pos++]!;
      if (c === 0x5c /* \ */) this.pos++;
      else if (c === 0x28) depth++;
      else if (c === 0x29 && --depth === 0) return new PdfString(b.subarray(start, this.pos - 1));
    }
    throw new PdfSyntaxError('invalid', 'unterminated string');
  }

  private readHexString(): PdfString {
    const b = this.bytes;
    const start = ++this.pos;
    while (this.pos < b.length && b[this.pos] !== 0x3e) this.pos++;
    if (this.pos >= b.length) throw new PdfSyntaxError('invalid', 'unterminated hex string');
    return new PdfString(b.subarray(start, this.pos++));
  }

  private maybeStream(dict: PdfDict): PdfDict | PdfStream {
    const save = this.pos;
    if (this.readToken() !== 'stream') {
      this.pos = save;
      return dict;
    }
    const b = this.bytes;
    if (b[this.pos] === 0x0d) this.pos++;
    if (b[this.pos] === 0x0a) this.pos++;
    const dataStart = this.pos;
    const declared = dict.get('Length');
    const length =
      typeof declared === 'number' ? declared : declared instanceof PdfRef ? this.resolveLength?.(declared) : undefined;
    let end =
      length !== undefined && Number.isInteger(length) && length >= 0 && dataStart + length <= b.length
        ? dataStart + length
        : -1;
    if (end < 0 || !startsWithKeyword(b, skipEol(b, end), 'endstream')) {
      // A wrong /Length is common in repaired files: fall back to the `endstream` keyword, as every reader does.
      end = indexOf(b, ENDSTREAM, dataStart);
      if (end < 0) throw new PdfSyntaxError('invalid', 'stream without endstream');
      if (b[end - 1] === 0x0a) end--;
      if (b[end - 1] === 0x0d) end--;
    }
    this.pos = end;
    return new PdfStream(dict, dataStart, b.subarray(dataStart, end));
  }
}

const ENDSTREAM = new TextEncoder().encode('endstream');

function popReference(items: PdfValue[]): PdfRef {
  const gen = items.pop();
  const num = items.pop();
  if (
    typeof num !== 'number' ||
    typeof gen !== 'number' ||
    !Number.isInteger(num) ||
    !Number.isInteger(gen) ||
    num < 0 ||
    gen < 0
  )
    throw new PdfSyntaxError('invalid', 'malformed reference');
  return new PdfRef(num, gen);
}

function toDict(items: PdfValue[]): PdfDict {
  const dict: PdfDict = new Map();
  for (let i = 0; i + 1 < items.length; i += 2) {
    const key = items[i];
    if (!(key instanceof PdfName)) throw new PdfSyntaxError('invalid', 'dictionary key is not a name');
    // A null value means the key is absent (ISO 32000-2 §7.3.7).
    if (items[i + 1] !== null) dict.set(key.value, items[i + 1]!);
  }
  return dict;
}

function skipEol(b: Uint8Array, pos: number): number {
  while (pos < b.length && WHITESPACE[b[pos]!]) pos++;
  return pos;
}

function startsWithKeyword(b: Uint8Array, pos: number, keyword: string): boolean {
  for (let i = 0; i < keyword.length; i++) if (b[pos + i] !== keyword.charCodeAt(i)) return false;
  return true;
}

export function indexOf(haystack: Uint8Array, needle: Uint8Array, from = 0): number {
  const first = needle[0]!;
  outer: for (
    let i = haystack.indexOf(first, from);
    i >= 0 && i + needle.length <= haystack.length;
    i = haystack.indexOf(first, i + 1)
  ) {
    for (let j = 1; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

export function lastIndexOf(haystack: Uint8Array, needle: Uint8Array, from = haystack.length - needle.length): number {
  const first = needle[0]!;
  outer: for (let i = haystack.lastIndexOf(first, from); i >= 0; i = i > 0 ? haystack.lastIndexOf(first, i - 1) : -1) {
    for (let j = 1; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function latin1(b: Uint8Array, start: number, end: number): string {
  let s = '';
  for (let i = start; i < end; i++) s += String.fromCharCode(b[i]!);
  return s;
}

export { isDigit };
