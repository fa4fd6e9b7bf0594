/**
 * What the SQL operations answer, from a StatementResult: the DataTable of ReturnDatatable and the `object` of
 * ReturnScalar, typed the same on every backend (docs/contract/iidbservice.md "DataTable results").
 *
 * Decisions:
 * - A declared type the spec's table does not name (json, time, interval, arrays, enums) becomes a String column when
 *   its values are text, else the type of its first value: a client gets the database's text rather than a fault.
 * - Integer columns widen (Int16 → Int32 → Int64) when a value does not fit, as the spec says for `int`.
 * - ReturnScalar is the first column of the first row, typed by that column; no row and a null cell are both nil
 *   (ADO.NET gives null and DBNull; DataContractSerializer cannot carry DBNull as `object`).
 * - Values that cannot be written as their column type (a text in an integer column, possible in SQLite) are an
 *   InvalidArgument fault naming row and column, never a silently changed value.
 */
import {
  clrTypeOfDeclared,
  clrTypeOfValues,
  dateTimeModeOfDeclared,
  widenIntegerType,
  type ClrType,
} from './column-types.ts';
import { IdbFault, type ClrValue, type DataTableResult } from './contract.ts';
import type { StatementResult } from './database.ts';
import { DataTableError, formatCell, uniqueColumnNames, type DataCell, type DataColumn } from './datatable.ts';
import { recordDataTable, xmlText } from './datatable-writer.ts';
import type { XmlEventSource } from './xml-events.ts';

/** The DataTable columns of a result: unique names, .NET types, DateTime modes. */
export function dataColumns(result: StatementResult): DataColumn[] {
  const names = uniqueColumnNames(result.columns.map((c) => c.name));
  return result.columns.map((column, i) => {
    const values = result.rows.map((row) => row[i]);
    const declared = column.clrType ?? clrTypeOfDeclared(column.declaredType);
    const type: ClrType = widenIntegerType(declared ?? clrTypeOfValues(values) ?? 'String', values);
    return type === 'DateTime'
      ? { name: names[i]!, type, dateTimeMode: dateTimeModeOfDeclared(column.declaredType) }
      : { name: names[i]!, type };
  });
}

/** ReturnDatatable's answer: the inline schema and diffgram, recorded (and checked) now, as text when asked. */
export function dataTableOf(result: StatementResult): DataTableResult {
  return new RecordedDataTable(asFault(() => recordDataTable(dataColumns(result), result.rows)));
}

/**
 * A class, not an object literal with a getter: V8 allocates a literal's getter pair in the old generation, and an
 * old object that points into the young one keeps what it points to alive through every scavenge until the next full
 * collection. With a literal, each call's table (its rows' texts, ~30 KB for 100 rows) was promoted: 2.2–3.3 MB per
 * scavenge, measured with `--trace-gc-nvp`; with the class, nothing.
 */
class RecordedDataTable implements DataTableResult {
  private text: string | undefined;

  constructor(readonly events: XmlEventSource) {}

  get xml(): string {
    this.text ??= xmlText(this.events);
    return this.text;
  }
}

/** ReturnScalar's answer: the first cell, typed by its column; null for no row or a null cell. */
export function scalarOf(result: StatementResult): ClrValue | null {
  const cell = result.rows[0]?.[0];
  if (cell == null || result.columns.length === 0) return null;
  const column = dataColumns({ ...result, rows: [result.rows[0]!] })[0]!;
  return asFault(() => clrValue(column, cell));
}

function clrValue(column: DataColumn, cell: Exclude<DataCell, null>): ClrValue {
  // formatCell checks range and form, and gives the invariant text every case below starts from.
  const text = formatCell(column, cell);
  switch (column.type) {
    case 'Byte': // no unsignedByte in the contract's values: the nearest wider type
    case 'Int16':
      return { type: 'short', value: Number(text) };
    case 'Int32':
      return { type: 'int', value: Number(text) };
    case 'Int64':
      return { type: 'long', value: BigInt(text) };
    case 'Decimal':
      return { type: 'decimal', value: text };
    case 'Single':
      return { type: 'float', value: Math.fround(cell as number) };
    case 'Double':
      return { type: 'double', value: cell as number };
    case 'Boolean':
      return { type: 'boolean', value: text === 'true' };
    case 'String':
      return { type: 'string', value: text };
    case 'Byte[]':
      return { type: 'base64Binary', value: cell as Uint8Array };
    case 'DateTime':
      return { type: 'dateTime', value: text };
    case 'DateTimeOffset': // no dateTimeOffset in the contract's values: the instant in UTC
      return { type: 'dateTime', value: formatCell({ ...column, type: 'DateTime', dateTimeMode: 'Utc' }, cell) };
    case 'TimeSpan':
      return { type: 'string', value: String(cell) };
    case 'Guid':
      return { type: 'guid', value: text };
  }
}

function asFault<T>(write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (error instanceof DataTableError)
      throw new IdbFault('InvalidArgument', `The result cannot be sent: ${error.message}`);
    throw error;
  }
}
