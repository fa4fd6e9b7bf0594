/**
 * Values between the Database port and TDS, as SqlClient would have them (the original service was an ADO.NET
 * service over SqlCommand / SqlDataAdapter):
 * - Parameters are typed as `SqlParameterCollection.AddWithValue` infers from the CLR value: int Int, short SmallInt,
 *   long BigInt, decimal Decimal with the value's own precision and scale, float Real, double Float, boolean Bit,
 *   string NVarChar (nvarchar(4000), or max beyond), dateTime DateTime (SqlClient's choice for a DateTime: the
 *   wall-clock time as written, an offset ignored, rounded by the server to 1/300 s), base64Binary VarBinary, guid
 *   UniqueIdentifier, null an NVarChar NULL (DBNull).
 * - Columns get the .NET type SqlDataAdapter.Fill gives them, from the TDS type: tinyint Byte, smallint Int16, int
 *   Int32, bigint Int64, bit Boolean, decimal/numeric/money/smallmoney Decimal, real Single, float Double, the date
 *   and time types DateTime, datetimeoffset DateTimeOffset, time TimeSpan, character and xml types String, binary
 *   types (rowversion too) Byte[], uniqueidentifier Guid. sql_variant has no declared .NET type here (Object is not
 *   written): its values' own type decides, as for a SQLite expression.
 * - Cells: decimal, money, date and time values arrive as text (sqlserver-tedious.ts), bigint as text from tedious.
 */
import { TYPES } from 'tedious';
import type { DataType } from 'tedious/lib/data-type.js';
import type { ParameterOptions } from 'tedious/lib/request.js';
import type { ColumnMetadata } from 'tedious/lib/token/colmetadata-token-parser.js';
import type { ClrType } from '../../../idb/column-types.ts';
import { DatabaseFault, type DatabaseFaultName, type ResultColumn, type SqlValue } from '../../../idb/database.ts';
import type { DataCell } from '../../../idb/datatable.ts';

export interface TdsParameter {
  type: DataType;
  value: unknown;
  options?: ParameterOptions;
}

const WALL_CLOCK = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?/;

/**
 * SqlClient declares a variable-length parameter of size 0 (DBNull, "", an empty byte[]) at the type's largest size
 * (SqlCommand's BuildParamList): nvarchar(4000), varbinary(8000). tedious would declare an empty byte[] with length 0,
 * which the server refuses, and a null as nvarchar(1), which a `SET @p = …` in the batch would cut.
 */
const EMPTY_NVARCHAR = { length: 4000 };
const EMPTY_VARBINARY = { length: 8000 };

export function tdsParameter(value: SqlValue): TdsParameter {
  if (value === null) return { type: TYPES.NVarChar, value: null, options: EMPTY_NVARCHAR };
  switch (value.type) {
    case 'int':
      return { type: TYPES.Int, value: value.value };
    case 'short':
      return { type: TYPES.SmallInt, value: value.value };
    case 'long':
      return { type: TYPES.BigInt, value: value.value };
    case 'decimal': {
      const digits = value.value.replace(/^[-+]/, '').replace(/^0+(?=\d)/, '');
      const [whole = '', fraction = ''] = digits.split('.');
      const scale = fraction.length;
      const precision = Math.max(1, (whole === '0' ? 0 : whole.length) + scale, scale);
      return {
        type: TYPES.Decimal,
        value: value.value.replace(/^\+/, ''),
        options: { precision: Math.min(38, precision), scale },
      };
    }
    case 'float':
      return { type: TYPES.Real, value: value.value };
    case 'double':
      return { type: TYPES.Float, value: value.value };
    case 'boolean':
      return { type: TYPES.Bit, value: value.value };
    case 'string':
      return value.value === ''
        ? { type: TYPES.NVarChar, value: '', options: EMPTY_NVARCHAR }
        : { type: TYPES.NVarChar, value: value.value };
    case 'dateTime': {
      const m = WALL_CLOCK.exec(value.value);
      if (!m) throw new DatabaseFault('SqlError', `${value.value} is not a DateTime.`, true);
      const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as number[];
      const ms = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
      const date = new Date(Date.UTC(2000, 0, 1, h, mi, s, ms));
      date.setUTCFullYear(y!, mo! - 1, d);
      return { type: TYPES.DateTime, value: date };
    }
    case 'base64Binary':
      return {
        type: TYPES.VarBinary,
        value: Buffer.from(value.value.buffer, value.value.byteOffset, value.value.byteLength),
        ...(value.value.byteLength === 0 ? { options: EMPTY_VARBINARY } : {}),
      };
    case 'guid':
      return { type: TYPES.UniqueIdentifier, value: value.value };
  }
}

/** The SQL type name of a column as SQL Server spells it, and the .NET type Fill gives it. */
function typeOf(meta: ColumnMetadata): [string, ClrType | undefined] {
  const length = meta.dataLength ?? 0;
  switch (meta.type.name) {
    case 'TinyInt':
      return ['tinyint', 'Byte'];
    case 'SmallInt':
      return ['smallint', 'Int16'];
    case 'Int':
      return ['int', 'Int32'];
    case 'BigInt':
      return ['bigint', 'Int64'];
    case 'IntN':
      return length === 1
        ? ['tinyint', 'Byte']
        : length === 2
          ? ['smallint', 'Int16']
          : length === 8
            ? ['bigint', 'Int64']
            : ['int', 'Int32'];
    case 'Bit':
    case 'BitN':
      return ['bit', 'Boolean'];
    case 'Decimal':
    case 'DecimalN':
      return [`decimal(${meta.precision},${meta.scale})`, 'Decimal'];
    case 'Numeric':
    case 'NumericN':
      return [`numeric(${meta.precision},${meta.scale})`, 'Decimal'];
    case 'Money':
      return ['money', 'Decimal'];
    case 'SmallMoney':
      return ['smallmoney', 'Decimal'];
    case 'MoneyN':
      return [length === 4 ? 'smallmoney' : 'money', 'Decimal'];
    case 'Real':
      return ['real', 'Single'];
    case 'Float':
      return ['float', 'Double'];
    case 'FloatN':
      return length === 4 ? ['real', 'Single'] : ['float', 'Double'];
    case 'Date':
      return ['date', 'DateTime'];
    case 'DateTime':
      return ['datetime', 'DateTime'];
    case 'SmallDateTime':
      return ['smalldatetime', 'DateTime'];
    case 'DateTimeN':
      return [length === 4 ? 'smalldatetime' : 'datetime', 'DateTime'];
    case 'DateTime2':
      return [`datetime2(${meta.scale})`, 'DateTime'];
    case 'DateTimeOffset':
      return [`datetimeoffset(${meta.scale})`, 'DateTimeOffset'];
    case 'Time':
      return [`time(${meta.scale})`, 'TimeSpan'];
    case 'Char':
    case 'VarChar':
    case 'NChar':
    case 'NVarChar':
    case 'Text':
    case 'NText':
    case 'Xml':
      return [meta.type.name.toLowerCase(), 'String'];
    case 'Binary':
    case 'VarBinary':
    case 'Image':
    case 'UDT':
      return [meta.type.name.toLowerCase(), 'Byte[]'];
    case 'UniqueIdentifier':
      return ['uniqueidentifier', 'Guid'];
    case 'Variant':
      return ['sql_variant', undefined];
    default:
      return [meta.type.name.toLowerCase(), undefined];
  }
}

export function resultColumn(meta: ColumnMetadata): ResultColumn {
  const [declaredType, clrType] = typeOf(meta);
  return clrType === undefined ? { name: meta.colName, declaredType } : { name: meta.colName, declaredType, clrType };
}

/** A cell from tedious' value (after sqlserver-tedious.ts): bigint text to a bigint, bytes to a Uint8Array of their own. */
export function cellOf(meta: ColumnMetadata, value: unknown): DataCell {
  if (value == null) return null;
  if (Buffer.isBuffer(value)) return new Uint8Array(value);
  if (
    typeof value === 'string' &&
    (meta.type.name === 'BigInt' || (meta.type.name === 'IntN' && meta.dataLength === 8))
  )
    return BigInt(value);
  if (meta.type.name === 'UniqueIdentifier' && typeof value === 'string') return value.toLowerCase();
  if (value instanceof Date) return value; // a sql_variant's date: its UTC fields are the wall clock (useUTC)
  return value as DataCell;
}

/**
 * SQL Server's permission errors (MS docs, database engine errors): 229/230 a permission denied on an object or
 * column, 262 a statement permission (CREATE TABLE), 297 and 300 permissions of the user, 1088 an object that cannot
 * be found or has no permission, 3704 a drop denied.
 */
const PERMISSION_ERRORS = new Set([229, 230, 262, 297, 300, 1088, 3704, 15247]);

export function toFault(error: unknown, aborted = true): DatabaseFault {
  if (error instanceof DatabaseFault) return error;
  const e = error as { code?: unknown; number?: unknown; message?: unknown; errors?: unknown[] } | null;
  // Several server errors arrive as an AggregateError: the first is what SqlException.Message starts with.
  const first = Array.isArray(e?.errors) && e.errors.length > 0 ? (e.errors[0] as typeof e) : e;
  const message = typeof first?.message === 'string' ? first.message : String(error);
  let fault: DatabaseFaultName = 'SqlError';
  if (first?.code === 'ETIMEOUT' || first?.code === 'ECANCEL') fault = 'Timeout';
  else if (typeof first?.number === 'number' && PERMISSION_ERRORS.has(first.number)) fault = 'AccessDenied';
  else if (/permission denied/i.test(message)) fault = 'AccessDenied';
  return new DatabaseFault(fault, message, aborted);
}
