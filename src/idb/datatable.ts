import { encodeBase64 } from '../base64.ts';
import { integerRange, type ClrType, type DateTimeMode } from './column-types.ts';
import { formatTimeSpan } from './datatable-timespan.ts';
import { parseGuid } from './guid.ts';

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

const XSD = 'http://www.w3.org/2001/XMLSchema';
const MSDATA = 'urn:schemas-microsoft-com:xml-msdata';
const DIFFGR = 'urn:schemas-microsoft-com:xml-diffgram-v1';
const GUID_DATATYPE = 'System.Guid, mscorlib, Version=4.0.0.0, Culture=neutral, PublicKeyToken=b77a5c561934e089';

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

const DATE_TIME_OFFSET_DATATYPE =
  'System.DateTimeOffset, mscorlib, Version=4.0.0.0, Culture=neutral, PublicKeyToken=b77a5c561934e089';

/**
 * What DataContractSerializer writes inside the element of a DataTable result (`ReturnDatatableResult`): the inline
 * `xs:schema`, then the `diffgr:diffgram` with every row as inserted. Attribute order and element layout follow
 * .NET's XmlTreeGen and diffgram writer (see test/fixtures/datatable/, recorded with Mono); no indentation.
 */
export function writeDataTable(
  columns: readonly DataColumn[],
  rows: Iterable<readonly DataCell[]>,
  options: WriteDataTableOptions = {},
): string {
  const tableName = options.tableName ?? 'Table';
  if (tableName === '')
    throw new DataTableError('invalid-name', 'Cannot serialize the DataTable. DataTable name is not set.');
  checkText(tableName, 'the table name');
  const table = encodeLocalName(tableName);
  const names = columns.map((c) => {
    if (c.name === '') throw new DataTableError('invalid-name', 'A column has no name.');
    checkText(c.name, `column name ${JSON.stringify(c.name)}`);
    return encodeLocalName(c.name);
  });
  const seen = new Set<string>();
  for (const c of columns) {
    if (seen.has(c.name))
      throw new DataTableError('invalid-name', `A column named '${c.name}' already belongs to this DataTable.`);
    seen.add(c.name);
  }

  let out =
    `<xs:schema id="NewDataSet" xmlns="" xmlns:xs="${XSD}" xmlns:msdata="${MSDATA}">` +
    `<xs:element name="NewDataSet" msdata:IsDataSet="true" msdata:MainDataTable="${table}" msdata:UseCurrentLocale="true">` +
    `<xs:complexType><xs:choice minOccurs="0" maxOccurs="unbounded"><xs:element name="${table}"><xs:complexType><xs:sequence>`;
  columns.forEach((c, i) => {
    // XmlTreeGen's attribute order: name, msdata:DataType, msdata:DateTimeMode, type, minOccurs.
    out += `<xs:element name="${names[i]}"`;
    if (c.type === 'Guid') out += ` msdata:DataType="${GUID_DATATYPE}"`;
    if (c.type === 'DateTimeOffset') out += ` msdata:DataType="${DATE_TIME_OFFSET_DATATYPE}"`;
    const mode = c.dateTimeMode ?? 'Unspecified';
    if (c.type === 'DateTime' && mode !== 'UnspecifiedLocal') out += ` msdata:DateTimeMode="${mode}"`;
    out += ` type="${XSD_TYPE[c.type]}" minOccurs="0" />`;
  });
  out += `</xs:sequence></xs:complexType></xs:element></xs:choice></xs:complexType></xs:element></xs:schema>`;

  let body = '';
  let index = 0;
  for (const row of rows) {
    // diffgr:id is the table name (not encoded: it is an attribute value) and the 1-based row id.
    body += `<${table} diffgr:id="${escapeAttribute(tableName)}${index + 1}" msdata:rowOrder="${index}" diffgr:hasChanges="inserted">`;
    columns.forEach((c, i) => {
      const cell = row[i];
      if (cell == null) return;
      let text: string;
      try {
        text = escapeText(formatCell(c, cell));
      } catch (e) {
        if (e instanceof DataTableError)
          throw new DataTableError(e.kind, `Row ${index + 1}, column '${c.name}': ${e.message}`);
        throw e;
      }
      body += `<${names[i]}>${text}</${names[i]}>`;
    });
    body += `</${table}>`;
    index++;
  }
  // An empty table's diffgram is an empty element: .NET writes no DocumentElement when there is no row.
  const open = `<diffgr:diffgram xmlns:msdata="${MSDATA}" xmlns:diffgr="${DIFFGR}"`;
  out += index === 0 ? `${open} />` : `${open}><DocumentElement xmlns="">${body}</DocumentElement></diffgr:diffgram>`;
  return out;
}

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
  let n: bigint;
  if (typeof cell === 'bigint') n = cell;
  else if (typeof cell === 'number' && Number.isInteger(cell)) n = BigInt(cell);
  else if (typeof cell === 'string' && /^[+-]?\d+$/.test(cell)) n = BigInt(cell);
  else throw invalid(`an ${type}`, cell);
  const [min, max] = integerRange(type)!;
  if (n < min || n > max) throw new DataTableError('invalid-value', `${n} does not fit ${type}.`);
  return n.toString();
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

function checkText(text: string, where: string): void {
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
 * XmlConvert.EncodeLocalName: every character that cannot stand in an NCName at its place becomes `_xHHHH_`
 * (`_xHHHHHHHH_` for a character beyond the BMP), and an underscore that would otherwise read as the start of such
 * an escape becomes `_x005F_`, so that XmlConvert.DecodeName on the client gives back the name exactly.
 *
 * .NET decides by the XML 1.0 4th-edition name tables; this uses Unicode letters, marks and digits within the
 * 5th-edition name ranges, which agrees with those tables on every name a database is likely to produce (ASCII,
 * Latin, Greek, Cyrillic, CJK) and otherwise errs towards escaping. An escaped name decodes to the same name either
 * way; the result is always a valid name.
 */
export function encodeLocalName(name: string): string {
  // The positions of underscores that start `_xHHHH_` or `_xHHHHHHHH_`, found like .NET's regex (non-overlapping,
  // left to right; the lookbehind may see an underscore an earlier match consumed).
  const escapes = new Set<number>();
  for (const m of name.matchAll(/(?<=_)[Xx](?:[0-9a-fA-F]{4}|[0-9a-fA-F]{8})_/g)) escapes.add(m.index! - 1);
  let out = '';
  for (let i = 0; i < name.length; ) {
    const cp = name.codePointAt(i)!;
    const width = cp > 0xffff ? 2 : 1;
    const ok = i === 0 ? isNameStartChar(cp) : isNameChar(cp);
    if (!ok || escapes.has(i))
      out += `_x${cp
        .toString(16)
        .toUpperCase()
        .padStart(width === 2 ? 8 : 4, '0')}_`;
    else out += name.slice(i, i + width);
    i += width;
  }
  return out;
}

const LETTER = /^\p{L}$/u;
const MARK_OR_DIGIT = /^[\p{M}\p{Nd}]$/u;

// XML 1.0 5th edition NameStartChar ranges above ASCII (':' left out: a local name has none).
function in5thEditionStartRange(cp: number): boolean {
  return (
    (cp >= 0xc0 && cp <= 0xd6) ||
    (cp >= 0xd8 && cp <= 0xf6) ||
    (cp >= 0xf8 && cp <= 0x2ff) ||
    (cp >= 0x370 && cp <= 0x37d) ||
    (cp >= 0x37f && cp <= 0x1fff) ||
    (cp >= 0x2070 && cp <= 0x218f) ||
    (cp >= 0x2c00 && cp <= 0x2fef) ||
    (cp >= 0x3001 && cp <= 0xd7ff) ||
    (cp >= 0xf900 && cp <= 0xfdcf) ||
    (cp >= 0xfdf0 && cp <= 0xfffd)
  );
}

function isNameStartChar(cp: number): boolean {
  if (cp < 0x80) return (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a) || cp === 0x5f;
  // Beyond the BMP .NET's 4th-edition tables allow nothing; escaping is always safe.
  return cp <= 0xffff && in5thEditionStartRange(cp) && LETTER.test(String.fromCodePoint(cp));
}

function isNameChar(cp: number): boolean {
  if (isNameStartChar(cp)) return true;
  if (cp < 0x80) return (cp >= 0x30 && cp <= 0x39) || cp === 0x2d || cp === 0x2e;
  if (cp === 0xb7) return true;
  if (cp > 0xffff || !MARK_OR_DIGIT.test(String.fromCodePoint(cp))) return false;
  return in5thEditionStartRange(cp) || (cp >= 0x300 && cp <= 0x36f) || (cp >= 0x203f && cp <= 0x2040);
}

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
