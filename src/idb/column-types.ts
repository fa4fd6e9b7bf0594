/**
 * The .NET type of a result column, from its declared type name (docs/contract/iidbservice.md, "DataTable results") or,
 * for a column without one (a SQLite expression), from its first non-null value. The same on every backend, so a client
 * sees the same DataTable whichever database answers.
 */
export type ClrType =
  | 'Byte'
  | 'Int16'
  | 'Int32'
  | 'Int64'
  | 'Decimal'
  | 'Single'
  | 'Double'
  | 'Boolean'
  | 'String'
  | 'Byte[]'
  | 'DateTime'
  | 'Guid'
  // SQL Server's tinyint, datetimeoffset and time (ResultColumn.clrType); no declared type name maps to them.
  | 'DateTimeOffset'
  | 'TimeSpan';

/**
 * How a DateTime column is written. `Unspecified` (wall-clock, no offset) and `Utc` (written with `Z`) are what the
 * service uses; `UnspecifiedLocal` is .NET's own default (no schema attribute, values with the writer's local offset),
 * kept so output can be compared with captures of a real DataTable.
 */
export type DateTimeMode = 'Unspecified' | 'Utc' | 'UnspecifiedLocal';

const BY_NAME: ReadonlyMap<string, ClrType> = new Map(
  (
    [
      ['Int32', ['int', 'integer', 'int4', 'mediumint']],
      ['Int64', ['bigint', 'int8', 'big int']],
      ['Int16', ['smallint', 'int2', 'tinyint']],
      ['Decimal', ['numeric', 'decimal', 'money', 'smallmoney']],
      ['Single', ['real', 'float4']],
      ['Double', ['double', 'double precision', 'float', 'float8']],
      ['Boolean', ['boolean', 'bool', 'bit']],
      [
        'String',
        [
          'text',
          'varchar',
          'char',
          'nvarchar',
          'nchar',
          'clob',
          'character varying',
          'character',
          'varying character',
          'nvarchar2',
          'varchar2',
          'ntext',
          'tinytext',
          'mediumtext',
          'longtext',
        ],
      ],
      ['Byte[]', ['blob', 'bytea', 'varbinary', 'binary', 'tinyblob', 'mediumblob', 'longblob', 'image']],
      ['DateTime', ['timestamp', 'datetime', 'date', 'timestamptz', 'datetime2', 'smalldatetime', 'datetimeoffset']],
      ['Guid', ['uuid', 'uniqueidentifier', 'guid']],
    ] as const
  ).flatMap(([type, names]) => names.map((name) => [name, type] as const)),
);

// Words that qualify a type without changing which .NET type it maps to: MySQL's `int unsigned`, SQLite's
// `NATIVE CHARACTER`, SQL's `NATIONAL CHAR VARYING`. An unsigned int that exceeds Int32 is widened like any int.
const NOISE = new Set(['unsigned', 'signed', 'zerofill', 'national', 'native']);

/**
 * Reduces a declared type to the words that name it: lower case, parameters (`(10,2)`), array brackets kept out of
 * it (an array is no scalar type: `int[]` stays unknown), time-zone clauses dropped (see dateTimeModeOfDeclared).
 */
function normalize(declared: string): string | undefined {
  let s = declared.toLowerCase().replace(/\([^)]*\)/g, ' ');
  if (s.includes('[')) return undefined;
  s = s.replace(/\b(with|without) (local )?time zone\b/g, ' ');
  const words = s.split(/\s+/).filter((w) => w.length > 0 && !NOISE.has(w));
  // `char varying` is `character varying`; `nchar varying` likewise.
  if (words.length === 2 && words[1] === 'varying' && /^n?char(acter)?$/.test(words[0]!)) return 'character varying';
  return words.join(' ');
}

/**
 * The .NET type of a declared column type, case-insensitive, with parameters and modifiers ignored:
 * `varchar(20)` String, `numeric(10,2)` Decimal, `timestamp(3) with time zone` DateTime, `int unsigned` Int32.
 * undefined for a type the spec's table does not name (json, time, interval, arrays, ...): the caller decides.
 */
export function clrTypeOfDeclared(declared: string | null | undefined): ClrType | undefined {
  if (declared == null) return undefined;
  const name = normalize(declared);
  return name === undefined || name === '' ? undefined : BY_NAME.get(name);
}

/**
 * Whether a DateTime column holds time-zone-aware values (`timestamptz`, `timestamp with time zone`, SQL Server's
 * `datetimeoffset`): those are written in UTC with `Z`; everything else as the stored wall-clock value.
 */
export function dateTimeModeOfDeclared(declared: string | null | undefined): 'Unspecified' | 'Utc' {
  if (declared == null) return 'Unspecified';
  const s = declared.toLowerCase().replace(/\([^)]*\)/g, ' ');
  return /\btimestamptz\b|\bwith time zone\b|\bdatetimeoffset\b/.test(s) ? 'Utc' : 'Unspecified';
}

/**
 * The type of a column without a declared type, from its first non-null value: integer Int64, other numbers
 * Double, text String, bytes Byte[] (and, for drivers that produce them, booleans and dates). undefined for a
 * null value or anything else.
 */
export function clrTypeOfValue(value: unknown): ClrType | undefined {
  switch (typeof value) {
    case 'bigint':
      return 'Int64';
    case 'number':
      return Number.isInteger(value) ? 'Int64' : 'Double';
    case 'string':
      return 'String';
    case 'boolean':
      return 'Boolean';
    default:
      if (value instanceof Uint8Array) return 'Byte[]';
      if (value instanceof Date) return 'DateTime';
      return undefined;
  }
}

/** clrTypeOfValue applied to the first non-null value of a column. */
export function clrTypeOfValues(values: Iterable<unknown>): ClrType | undefined {
  for (const v of values) if (v != null) return clrTypeOfValue(v);
  return undefined;
}

/** The integer types, narrowest first, with their inclusive bounds as BigInts and as doubles (see fits). */
type IntegerRange = readonly [type: ClrType, min: bigint, max: bigint, minNumber: number, maxNumber: number];
const RANGES: readonly IntegerRange[] = (
  [
    ['Byte', 0n, 255n],
    ['Int16', -(2n ** 15n), 2n ** 15n - 1n],
    ['Int32', -(2n ** 31n), 2n ** 31n - 1n],
    ['Int64', -(2n ** 63n), 2n ** 63n - 1n],
  ] as const
).map(([type, min, max]) => [type, min, max, Number(min), Number(max)]);

/**
 * Whether integer `n` fits integer type `type`. A safe integer is compared as a number (no BigInt made per cell): the
 * bounds below Int64 are exact doubles, and Int64's, rounded, still hold every safe integer.
 */
export function fitsInteger(type: ClrType, n: number | bigint): boolean {
  const range = RANGES.find(([t]) => t === type);
  return range !== undefined && fits(range, n);
}

function fits([, min, max, minNumber, maxNumber]: IntegerRange, n: number | bigint): boolean {
  if (typeof n === 'number' && Number.isSafeInteger(n)) return n >= minNumber && n <= maxNumber;
  const big = BigInt(n);
  return big >= min && big <= max;
}

/**
 * The spec's widening rule, "int ... Int32 (Int64 if a value does not fit)", applied to Byte and Int16 as well (a SQLite
 * `smallint` or MySQL `smallint unsigned` column can hold more than Int16): the narrowest of the declared type,
 * Int32 and Int64 that holds every integer value. Other types and values that are no integers are left alone (the
 * writer refuses what does not fit its column).
 */
export function widenIntegerType(type: ClrType, values: Iterable<unknown>): ClrType {
  let at = RANGES.findIndex(([t]) => t === type);
  if (at < 0 || at === RANGES.length - 1) return type;
  for (const v of values) {
    if (typeof v !== 'bigint' && !(typeof v === 'number' && Number.isInteger(v))) continue;
    while (at < RANGES.length - 1 && !fits(RANGES[at]!, v)) at++;
  }
  return RANGES[at]![0];
}
