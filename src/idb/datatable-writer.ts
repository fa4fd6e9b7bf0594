/**
 * The DataTable of a ReturnDatatable as XML (src/idb/datatable.ts has the model and the cells' formatting): checked
 * and formatted once, then written as the contract's text or replayed by the bridge into binary XML.
 */
import {
  checkText,
  type DataCell,
  type DataColumn,
  DataTableError,
  escapeAttribute,
  escapeText,
  formatCell,
  type WriteDataTableOptions,
  XSD_TYPE,
} from './datatable.ts';
import { type XmlEventSource, XmlTape, type XmlSink } from './xml-events.ts';
import { encodeLocalName } from './xml-names.ts';

const XSD = 'http://www.w3.org/2001/XMLSchema';
const MSDATA = 'urn:schemas-microsoft-com:xml-msdata';
const DIFFGR = 'urn:schemas-microsoft-com:xml-diffgram-v1';
const GUID_DATATYPE = 'System.Guid, mscorlib, Version=4.0.0.0, Culture=neutral, PublicKeyToken=b77a5c561934e089';
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
  return xmlText(recordDataTable(columns, rows, options));
}

/**
 * writeDataTable's XML as events (xml-events.ts), every name and value checked and formatted here, so a table that
 * cannot be written fails here and not in whichever writer replays it.
 */
export function recordDataTable(
  columns: readonly DataColumn[],
  rows: Iterable<readonly DataCell[]>,
  options: WriteDataTableOptions = {},
): XmlEventSource {
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

  const out = new XmlTape();
  out.start('xs:schema', ['id', 'NewDataSet', 'xmlns', '', 'xmlns:xs', XSD, 'xmlns:msdata', MSDATA]);
  out.start('xs:element', [
    'name',
    'NewDataSet',
    'msdata:IsDataSet',
    'true',
    'msdata:MainDataTable',
    table,
    'msdata:UseCurrentLocale',
    'true',
  ]);
  out.start('xs:complexType', []);
  out.start('xs:choice', ['minOccurs', '0', 'maxOccurs', 'unbounded']);
  out.start('xs:element', ['name', table]);
  out.start('xs:complexType', []);
  out.start('xs:sequence', []);
  columns.forEach((c, i) => {
    // XmlTreeGen's attribute order: name, msdata:DataType, msdata:DateTimeMode, type, minOccurs.
    const attributes = ['name', names[i]!];
    if (c.type === 'Guid') attributes.push('msdata:DataType', GUID_DATATYPE);
    if (c.type === 'DateTimeOffset') attributes.push('msdata:DataType', DATE_TIME_OFFSET_DATATYPE);
    const mode = c.dateTimeMode ?? 'Unspecified';
    if (c.type === 'DateTime' && mode !== 'UnspecifiedLocal') attributes.push('msdata:DateTimeMode', mode);
    attributes.push('type', XSD_TYPE[c.type], 'minOccurs', '0');
    out.start('xs:element', attributes);
    out.end();
  });
  for (let i = 0; i < 7; i++) out.end();

  // The rows are kept as their cells' texts and replayed from them (DataTableRows): recording each row's events
  // (~45 entries a row) was a third of a 2 000-row table's writing, and most of its garbage.
  const texts: (string | undefined)[] = [];
  let count = 0;
  // A column's last cell and its text: values repeat down a column (dates, flags, states), and formatting a
  // DateTime was the dearest step of a 2 000-row table after reading it.
  const lastCells: unknown[] = columns.map(() => undefined);
  const lastTexts: string[] = columns.map(() => '');
  for (const row of rows) {
    count++;
    for (let i = 0; i < columns.length; i++) {
      const cell = row[i];
      if (cell == null) {
        texts.push(undefined);
        continue;
      }
      const c = columns[i]!;
      let text: string;
      try {
        if (cell === lastCells[i] && typeof cell !== 'object') text = lastTexts[i]!;
        else {
          text = formatCell(c, cell);
          // Only a String's text is the database's own: every other type's is formatted here, of ASCII alone.
          if (c.type === 'String') checkText(text, 'the value');
          lastCells[i] = cell;
          lastTexts[i] = text;
        }
      } catch (e) {
        if (e instanceof DataTableError)
          throw new DataTableError(e.kind, `Row ${count}, column '${c.name}': ${e.message}`);
        throw e;
      }
      texts.push(text);
    }
  }
  return new DataTableEvents(out, { tableName, table, names, texts, count });
}

interface DataTableRows {
  /** The table's name as given (diffgr:id's prefix) and as an element name (encodeLocalName). */
  tableName: string;
  table: string;
  /** The columns' element names. */
  names: readonly string[];
  /** Each row's cells' texts, row after row, `names.length` each; undefined for a null cell (no element). */
  texts: readonly (string | undefined)[];
  count: number;
}

/** A DataTable's events: its schema as recorded, then its diffgram written out of the rows' texts on each replay. */
class DataTableEvents implements XmlEventSource {
  constructor(
    private readonly schema: XmlTape,
    private readonly rows: DataTableRows,
  ) {}

  replay(sink: XmlSink): void {
    this.schema.replay(sink);
    const { tableName, table, names, texts, count } = this.rows;
    // An empty table's diffgram is an empty element: .NET writes no DocumentElement when there is no row.
    sink.start('diffgr:diffgram', ['xmlns:msdata', MSDATA, 'xmlns:diffgr', DIFFGR]);
    if (count > 0) sink.start('DocumentElement', ['xmlns', '']);
    for (let index = 0, at = 0; index < count; index++) {
      // diffgr:id is the table name (not encoded: it is an attribute value) and the 1-based row id.
      sink.start(table, [
        'diffgr:id',
        `${tableName}${index + 1}`,
        'msdata:rowOrder',
        String(index),
        'diffgr:hasChanges',
        'inserted',
      ]);
      for (let i = 0; i < names.length; i++, at++) {
        const text = texts[at];
        if (text === undefined) continue;
        sink.leaf(names[i]!, text);
      }
      sink.end();
    }
    if (count > 0) sink.end();
    sink.end();
  }
}

/** Recorded XML as text: an element without content as `<name ... />`, one with (even empty text) closed by name. */
export function xmlText(tape: XmlEventSource): string {
  let out = '';
  let open = false; // a start tag waits for its `>`
  const names: string[] = [];
  const sink: XmlSink = {
    start(name, attributes) {
      if (open) out += '>';
      out += `<${name}`;
      for (let i = 0; i < attributes.length; i += 2)
        out += ` ${attributes[i]}="${escapeAttribute(attributes[i + 1]!)}"`;
      names.push(name);
      open = true;
    },
    text(value) {
      if (open) out += '>';
      open = false;
      out += escapeText(value);
    },
    end() {
      const name = names.pop()!;
      out += open ? ' />' : `</${name}>`;
      open = false;
    },
    leaf(name, value) {
      if (open) out += '>';
      out += `<${name}>${escapeText(value)}</${name}>`;
      open = false;
    },
  };
  tape.replay(sink);
  return out;
}
