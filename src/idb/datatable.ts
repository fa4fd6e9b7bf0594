import { encodeBase64 } from '../base64.ts';
import { fitsInteger, type ClrType, type DateTimeMode } from './column-types.ts';
import { formatTimeSpan } from './datatable-timespan.ts';
import { parseGuid } from './guid.ts';

export { encodeLocalName } from './xml-names.ts';

export interface DataColumn {
  /** The column name as the database gave it; encoded for XML here (see encodeLocalName). */
  name: string;
  type: ClrType;
  /** DateTime columns only; default `Unspecified`. */
  dateTimeMode?: DateTimeMode;
}

/**
 * One cell. The column's type says how a value is read, so a cell carries no type of its own:
 * - null: the cell is left out of its row (a DBNull for the client).
 * - Int16/Int32/Int64: an integer number, a bigint, or a string of decimal digits (drivers return int8 as text).
 * - Decimal: a string (kept as written, so `12.50` keeps its scale like a .NET decimal does), a number or a bigint.
 * - Single/Double: a number.
 * - Boolean: a boolean, or 0/1 (SQLite stores booleans as integers).
 * - String: a string. Byte[]: a Uint8Array.
 * - DateTime: a string `YYYY-MM-DD[( |T)hh:mm[:ss[.fffffff]]][Z|±hh[:mm[:ss]]]` (how SQLite and Postgres print
 *   them; digits past the 7th, .NET's 100 ns tick, are cut), or a Date (read through its UTC fields).
 *   Utc columns: converted to UTC by the offset (none means already UTC), written with `Z`.
 *   Unspecified columns: the wall-clock value as written, an offset ignored, written without one.
 *   UnspecifiedLocal columns: written with the value's offset (`+00:00` for none, Z or a Date).
 * - Guid: a string in any of .NET's hyphenated forms (`d`, `b`) or 32 hex digits (`n`), any case.
 */
export type DataCell = null | boolean | number | bigint | string | Uint8Array | Date;

export interface WriteDataTableOptions {
  /** The DataTable's name: its row element and `msdata:MainDataTable`. The spec fixes `Table`. */
  tableName?: string;
}

/**
 * Why a table cannot be written. The handler turns it into an `InvalidArgument` fault: .NET itself refuses these
 * (XmlWriter throws on characters XML 1.0 cannot carry, XmlConvert on values out of range), so no client could have
 * received them either, and dropping or replacing data silently is worse than saying so.
 */
export class DataTableError extends Error {
  constructor(
    readonly kind: 'invalid-char' | 'invalid-value' | 'invalid-name',
    message: string,
  ) {
    super(message);
    this.name = 'DataTableError';
  }
}

/** The XSD type a column is declared with in the inline schema. */
export const XSD_TYPE: Readonly<Record<ClrType, string>> = {
  Byte: 'xs:unsignedByte',
  Int16: 'xs:short',
  Int32: 'xs:int',
  Int64: 'xs:long',
  Decimal: 'xs:decimal',
  Single: 'xs:float',
  Double: 'xs:double',
  Boolean: 'xs:boolean',
  String: 'xs:string',
  'Byte[]': 'xs:base64Binary',
  DateTime: 'xs:dateTime',
  Guid: 'xs:string',
  // XmlTreeGen has no XSD type for DateTimeOffset: anyType with msdata:DataType, like Guid's string.
  DateTimeOffset: 'xs:anyType',
  TimeSpan: 'xs:duration',
};

/** A cell's text as XmlConvert (and DataColumn's storage classes) write it, before XML escaping. */
export function formatCell(column: DataColumn, cell: Exclude<DataCell, null>): string {
  switch (column.type) {
    case 'Byte':
    case 'Int16':
    case 'Int32':
    case 'Int64':
      return formatInteger(column.type, cell);
    case 'DateTimeOffset':
      // XmlConvert.ToString(DateTimeOffset): the wall clock and its offset (`+00:00`, never `Z`).
      return formatDateTime(cell, 'UnspecifiedLocal');
    case 'TimeSpan': {
      const text = formatTimeSpan(cell);
      if (text === undefined) throw invalid('a TimeSpan', cell);
      return text;
    }
    case 'Decimal':
      return formatDecimal(cell);
    case 'Single':
      return formatFloat(expectNumber(cell), true);
    case 'Double':
      return formatFloat(expectNumber(cell), false);
    case 'Boolean':
      if (typeof cell === 'boolean') return cell ? 'true' : 'false';
      if (cell === 0 || cell === 1 || cell === 0n || cell === 1n) return cell === 1 || cell === 1n ? 'true' : 'false';
      throw invalid('a Boolean', cell);
    case 'String':
      if (typeof cell !== 'string') throw invalid('a String', cell);
      return cell;
    case 'Byte[]':
      if (!(cell instanceof Uint8Array)) throw invalid('a Byte[]', cell);
      return encodeBase64(cell);
    case 'DateTime':
      return formatDateTime(cell, column.dateTimeMode ?? 'Unspecified');
    case 'Guid':
      return formatGuid(cell);
  }
}

function invalid(what: string, cell: unknown): DataTableError {
  const shown =
    cell instanceof Uint8Array ? `${cell.length} bytes` : typeof cell === 'bigint' ? `${cell}n` : JSON.stringify(cell);
  return new DataTableError('invalid-value', `${shown} is not ${what}.`);
}

function expectNumber(cell: unknown): number {
  if (typeof cell !== 'number') throw invalid('a number', cell);
  return cell;
}

function formatInteger(type: ClrType, cell: unknown): string {
  let n: number | bigint;
  if (typeof cell === 'bigint') n = cell;
  // A safe integer as itself: String() writes it as BigInt would (-0 as 0), without a BigInt per cell.
  else if (typeof cell === 'number' && Number.isInteger(cell)) n = Number.isSafeInteger(cell) ? cell : BigInt(cell);
  else if (typeof cell === 'string' && /^[+-]?\d+$/.test(cell)) n = BigInt(cell);
  else throw invalid(`an ${type}`, cell);
  if (!fitsInteger(type, n)) throw new DataTableError('invalid-value', `${n} does not fit ${type}.`);
  return String(n);
}

// The largest .NET decimal, 2^96 - 1.
const DECIMAL_MAX = '79228162514264337593543950335';

/** Invariant decimal text: no exponent, no `+`, no superfluous leading zeros; trailing zeros kept (the scale). */
function formatDecimal(cell: unknown): string {
  let text: string;
  if (typeof cell === 'bigint') text = cell.toString();
  else if (typeof cell === 'number' && Number.isFinite(cell)) text = String(cell);
  else if (typeof cell === 'string') text = cell.trim();
  else throw invalid('a Decimal', cell);
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw invalid('a Decimal', cell);
  // Move the point by the exponent over the digits as written, so no digit is rounded away.
  const digits = m[2]! + (m[3] ?? '');
  const point = m[2]!.length + Number(m[4] ?? 0);
  let int = point <= 0 ? '0' : digits.slice(0, point).padEnd(point, '0');
  let frac = point <= 0 ? '0'.repeat(-point) + digits : digits.slice(point);
  if (m[4] !== undefined) frac = frac.replace(/0+$/, ''); // an exponent form has no scale to keep
  int = int.replace(/^0+(?=\d)/, '') || '0';
  if (int.length > DECIMAL_MAX.length || (int.length === DECIMAL_MAX.length && int > DECIMAL_MAX)) {
    throw new DataTableError('invalid-value', `${text} is outside the range of a .NET Decimal.`);
  }
  const zero = /^0$/.test(int) && /^0*$/.test(frac);
  return (m[1] === '-' && !zero ? '-' : '') + int + (frac === '' ? '' : `.${frac}`);
}

/**
 * XmlConvert.ToString(double|float): INF, -INF, NaN, -0, otherwise .NET Core's shortest round-trip text ("R"):
 * the shortest digits that read back to the same value, in fixed notation unless the decimal exponent is above the
 * digit count (at least 15 for double, 7 for float) or below -4, then `d.dddE+XX` with at least two exponent digits.
 */
export function formatFloat(value: number, single: boolean): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'INF';
  if (value === -Infinity) return '-INF';
  if (Object.is(value, -0)) return '-0';
  if (value === 0) return '0';
  // In this range both write fixed notation with the shortest round-trip digits (ECMAScript's Number::toString
  // is that too), so JavaScript's own text is .NET's.
  if (!single && Math.abs(value) >= 1e-4 && Math.abs(value) < 1e15) return String(value);
  let exponential: string;
  if (single) {
    const f = Math.fround(value);
    if (!Number.isFinite(f)) return f > 0 ? 'INF' : '-INF';
    exponential = f.toExponential(8);
    for (let p = 0; p < 9; p++) {
      const s = f.toExponential(p);
      if (Math.fround(Number(s)) === f) {
        exponential = s;
        break;
      }
    }
  } else {
    exponential = value.toExponential();
  }
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(exponential)!;
  const digits = (m[2]! + (m[3] ?? '')).replace(/0+$/, '') || '0';
  const scale = Number(m[4]) + 1; // position of the decimal point relative to the first digit
  const maxDigits = Math.max(digits.length, single ? 7 : 15);
  const sign = m[1]!;
  if (scale > maxDigits || scale < -3) {
    const e = scale - 1;
    const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${mantissa}E${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  if (scale <= 0) return `${sign}0.${'0'.repeat(-scale)}${digits}`;
  if (scale >= digits.length) return sign + digits + '0'.repeat(scale - digits.length);
  return `${sign}${digits.slice(0, scale)}.${digits.slice(scale)}`;
}

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?$/i;

/**
 * XmlConvert's DateTime text: `yyyy-MM-ddTHH:mm:ss` and the fraction of `.FFFFFFF` (up to 7 digits, trailing zeros
 * dropped, no dot when none is left), then `Z` (Utc), nothing (Unspecified) or the offset (UnspecifiedLocal).
 */
function formatDateTime(cell: unknown, mode: DateTimeMode): string {
  let fields: number[]; // year, month, day, hour, minute, second
  let fraction: string;
  let offsetSeconds: number | undefined;
  if (cell instanceof Date) {
    if (Number.isNaN(cell.getTime())) throw invalid('a DateTime', 'Invalid Date');
    fields = utcFields(cell);
    fraction = String(cell.getUTCMilliseconds()).padStart(3, '0');
    offsetSeconds = 0;
  } else if (typeof cell === 'string') {
    const m = DATE_TIME.exec(cell.trim());
    if (!m) throw invalid('a DateTime', cell);
    fields = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0));
    fraction = (m[7] ?? '').slice(0, 7);
    offsetSeconds = m[8] === undefined ? undefined : parseOffset(m[8]);
    const [y, mo, d, h, mi, s] = fields as [number, number, number, number, number, number];
    const check = new Date(0);
    check.setUTCFullYear(y, mo - 1, d);
    if (mo < 1 || mo > 12 || check.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) throw invalid('a DateTime', cell);
  } else {
    throw invalid('a DateTime', cell);
  }

  let suffix = '';
  if (mode === 'Utc') {
    if (offsetSeconds) fields = shift(fields, -offsetSeconds);
    suffix = 'Z';
  } else if (mode === 'UnspecifiedLocal') {
    const o = offsetSeconds ?? 0;
    const abs = Math.abs(Math.trunc(o / 60)); // XmlConvert writes hours and minutes only
    suffix = `${o < 0 ? '-' : '+'}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`;
  }
  const [y, mo, d, h, mi, s] = fields as [number, number, number, number, number, number];
  if (y < 1 || y > 9999)
    throw new DataTableError('invalid-value', `${JSON.stringify(cell)} is outside the range of a .NET DateTime.`);
  fraction = fraction.replace(/0+$/, '');
  return `${String(y).padStart(4, '0')}-${pad2(mo)}-${pad2(d)}T${pad2(h)}:${pad2(mi)}:${pad2(s)}${fraction ? `.${fraction}` : ''}${suffix}`;
}

const pad2 = (n: number): string => String(n).padStart(2, '0');

function utcFields(d: Date): number[] {
  return [
    d.getUTCFullYear(),
    d.getUTCMonth() + 1,
    d.getUTCDate(),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
  ];
}

/** Moves wall-clock fields by whole seconds (the fraction is unaffected); setUTCFullYear keeps years below 100 as given. */
function shift(fields: number[], seconds: number): number[] {
  const [y, mo, d, h, mi, s] = fields as [number, number, number, number, number, number];
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, s + seconds, 0);
  return utcFields(t);
}

function parseOffset(text: string): number {
  if (text.toUpperCase() === 'Z') return 0;
  const digits = text.slice(1).replace(/:/g, '');
  const seconds =
    Number(digits.slice(0, 2)) * 3600 + Number(digits.slice(2, 4) || 0) * 60 + Number(digits.slice(4, 6) || 0);
  return text[0] === '-' ? -seconds : seconds;
}

/** Guid.ToString(): lower-case `d` format. */
function formatGuid(cell: unknown): string {
  const guid = typeof cell === 'string' ? parseGuid(cell) : undefined;
  if (guid === undefined) throw invalid('a Guid', cell);
  return guid;
}

// Characters XML 1.0 cannot carry: C0 controls but tab, LF and CR; unpaired surrogates (the u flag makes a pair one
// code point, so only lone halves fall in the range); U+FFFE and U+FFFF.
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters XML 1.0 forbids
const INVALID_XML_CHAR = /[\0-\x08\x0B\x0C\x0E-\x1F\uD800-\uDFFF\uFFFE\uFFFF]/u;

export function checkText(text: string, where: string): void {
  const m = INVALID_XML_CHAR.exec(text);
  if (m) {
    const code = m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    throw new DataTableError('invalid-char', `${where} contains U+${code}, which XML 1.0 cannot carry.`);
  }
}

/** Element text: `&`, `<`, `>` escaped, and CR as a reference so that a parser's line-end normalization keeps it. */
export function escapeText(text: string): string {
  checkText(text, 'the value');
  return text.replace(/[&<>\r]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&#xD;'));
}

/** Attribute value in double quotes: also `"` and the whitespace characters attribute normalization would fold. */
export function escapeAttribute(text: string): string {
  checkText(text, 'the attribute');
  return text.replace(/[&<>"\t\n\r]/g, (c) => ATTRIBUTE_ESCAPES[c]!);
}

const ATTRIBUTE_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  '\t': '&#x9;',
  '\n': '&#xA;',
  '\r': '&#xD;',
};

/**
 * Column names a DataTable accepts, made as ADO.NET's DataAdapter makes them from a result: an unnamed column is
 * `Column1`, `Column2`, ...; a name already taken (compared case-insensitively) gets the smallest free suffix 1, 2, ...
 * (`id`, `id1`). For the handlers, before writeDataTable, which refuses duplicates.
 */
export function uniqueColumnNames(names: readonly string[]): string[] {
  const taken = new Set(names.filter((n) => n !== '').map((n) => n.toLowerCase()));
  const used = new Set<string>();
  return names.map((name) => {
    const base = name === '' ? 'Column' : name;
    let candidate = name;
    if (name === '' || used.has(name.toLowerCase())) {
      let k = 1;
      while (taken.has(`${base}${k}`.toLowerCase()) || used.has(`${base}${k}`.toLowerCase())) k++;
      candidate = `${base}${k}`;
    }
    used.add(candidate.toLowerCase());
    taken.add(candidate.toLowerCase());
    return candidate;
  });
}
