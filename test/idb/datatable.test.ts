import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  clrTypeOfDeclared,
  clrTypeOfValue,
  clrTypeOfValues,
  dateTimeModeOfDeclared,
  widenIntegerType,
} from '../../src/idb/column-types.ts';
import {
  DataTableError,
  encodeLocalName,
  formatCell,
  formatFloat,
  uniqueColumnNames,
  type DataColumn,
  type DataCell,
} from '../../src/idb/datatable.ts';
import { encodeBase64 } from '../../src/base64.ts';
import { writeDataTable } from '../../src/idb/datatable-writer.ts';

/**
 * A small XML canonicalizer for comparing documents: elements with expanded names ({ns}local), attributes sorted by
 * expanded name with namespace declarations dropped, entity references resolved, whitespace-only text between
 * elements dropped. Enough for the well-formed output under test; not a general parser.
 */
type Node = { name: string; attrs: [string, string][]; children: (Node | string)[] };
function canonical(xml: string): Node {
  const decode = (s: string) =>
    s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, e: string) =>
      e[0] === '#'
        ? String.fromCodePoint(Number(e[1] === 'x' || e[1] === 'X' ? `0${e.slice(1)}` : e.slice(1)))
        : ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[e]!,
    );
  const root: Node = { name: '#root', attrs: [], children: [] };
  const stack: { node: Node; ns: Map<string, string> }[] = [{ node: root, ns: new Map([['', '']]) }];
  const token = /<\?[\s\S]*?\?>|<(\/?)([\w:.-]+)((?:\s+[\w:.-]+\s*=\s*"[^"]*")*)\s*(\/?)>|([^<]+)/g;
  for (const m of xml.matchAll(token)) {
    const top = stack[stack.length - 1]!;
    if (m[5] !== undefined) {
      if (m[5].trim() !== '') top.node.children.push(decode(m[5]));
    } else if (m[2] !== undefined && m[1] === '/') {
      stack.pop();
    } else if (m[2] !== undefined) {
      const ns = new Map(top.ns);
      const raw = [...m[3]!.matchAll(/([\w:.-]+)\s*=\s*"([^"]*)"/g)].map((a) => [a[1]!, decode(a[2]!)] as const);
      for (const [k, v] of raw) if (k === 'xmlns' || k.startsWith('xmlns:')) ns.set(k === 'xmlns' ? '' : k.slice(6), v);
      const expand = (q: string, attr: boolean) => {
        const i = q.indexOf(':');
        if (i < 0) return attr ? q : `{${ns.get('')}}${q}`;
        return `{${ns.get(q.slice(0, i))}}${q.slice(i + 1)}`;
      };
      const attrs = raw
        .filter(([k]) => k !== 'xmlns' && !k.startsWith('xmlns:'))
        .map(([k, v]) => [expand(k, true), v] as [string, string])
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const node: Node = { name: expand(m[2], false), attrs, children: [] };
      top.node.children.push(node);
      if (m[4] !== '/') stack.push({ node, ns });
    }
  }
  return root;
}

const col = (name: string, type: DataColumn['type'], dateTimeMode?: DataColumn['dateTimeMode']): DataColumn =>
  dateTimeMode ? { name, type, dateTimeMode } : { name, type };

describe('declared column types', () => {
  it.each([
    ['int', 'Int32'],
    ['INTEGER', 'Int32'],
    ['int4', 'Int32'],
    ['MediumInt', 'Int32'],
    ['int unsigned', 'Int32'],
    ['int(11)', 'Int32'],
    ['bigint', 'Int64'],
    ['int8', 'Int64'],
    ['UNSIGNED BIG INT', 'Int64'],
    ['smallint', 'Int16'],
    ['int2', 'Int16'],
    ['tinyint(1)', 'Int16'],
    ['numeric(10,2)', 'Decimal'],
    ['DECIMAL', 'Decimal'],
    ['money', 'Decimal'],
    ['real', 'Single'],
    ['float4', 'Single'],
    ['double', 'Double'],
    ['double precision', 'Double'],
    ['Double  Precision', 'Double'],
    ['float', 'Double'],
    ['float8', 'Double'],
    ['boolean', 'Boolean'],
    ['bool', 'Boolean'],
    ['bit', 'Boolean'],
    ['text', 'String'],
    ['varchar(20)', 'String'],
    ['VARCHAR', 'String'],
    ['char(1)', 'String'],
    ['nvarchar(max)', 'String'],
    ['nchar(5)', 'String'],
    ['clob', 'String'],
    ['character varying', 'String'],
    ['character varying(255)', 'String'],
    ['char varying(9)', 'String'],
    ['national character varying', 'String'],
    ['VARYING CHARACTER(255)', 'String'],
    ['NATIVE CHARACTER(70)', 'String'],
    ['blob', 'Byte[]'],
    ['bytea', 'Byte[]'],
    ['varbinary(max)', 'Byte[]'],
    ['binary(16)', 'Byte[]'],
    ['timestamp', 'DateTime'],
    ['timestamp(3)', 'DateTime'],
    ['timestamp with time zone', 'DateTime'],
    ['timestamp(6) without time zone', 'DateTime'],
    ['timestamptz', 'DateTime'],
    ['datetime', 'DateTime'],
    ['DATE', 'DateTime'],
    ['datetime2(7)', 'DateTime'],
    ['uuid', 'Guid'],
    ['uniqueidentifier', 'Guid'],
    ['GUID', 'Guid'],
  ] as const)('%s -> %s', (declared, type) => {
    expect(clrTypeOfDeclared(declared)).toBe(type);
  });

  it.each([null, undefined, '', '   ', 'json', 'jsonb', 'time', 'interval', 'int[]', '_int4', 'bit varying', 'xml'])(
    '%s is not in the table',
    (declared) => {
      expect(clrTypeOfDeclared(declared)).toBeUndefined();
    },
  );

  it('marks time-zone-aware DateTime columns Utc', () => {
    for (const d of ['timestamptz', 'TIMESTAMP WITH TIME ZONE', 'timestamp(3) with time zone', 'datetimeoffset(7)'])
      expect(dateTimeModeOfDeclared(d)).toBe('Utc');
    for (const d of ['timestamp', 'timestamp without time zone', 'datetime', 'date', null, 'datetime2'])
      expect(dateTimeModeOfDeclared(d)).toBe('Unspecified');
  });

  it('types a column without a declared type by its first non-null value', () => {
    expect(clrTypeOfValue(42)).toBe('Int64');
    expect(clrTypeOfValue(42n)).toBe('Int64');
    expect(clrTypeOfValue(4.5)).toBe('Double');
    expect(clrTypeOfValue('x')).toBe('String');
    expect(clrTypeOfValue(new Uint8Array(2))).toBe('Byte[]');
    expect(clrTypeOfValue(null)).toBeUndefined();
    expect(clrTypeOfValues([null, undefined, 'x', 1])).toBe('String');
    expect(clrTypeOfValues([null])).toBeUndefined();
  });

  it('widens int to Int64 only when a value does not fit', () => {
    expect(widenIntegerType('Int32', [1, -5, null, 2147483647])).toBe('Int32');
    expect(widenIntegerType('Int32', [1, 2147483648])).toBe('Int64');
    expect(widenIntegerType('Int32', [-2147483649n])).toBe('Int64');
    expect(widenIntegerType('Int16', [40000])).toBe('Int32');
    expect(widenIntegerType('Int16', [1, 2 ** 40])).toBe('Int64');
    expect(widenIntegerType('Int64', [2n ** 70n])).toBe('Int64');
    expect(widenIntegerType('Int32', [2 ** 63])).toBe('Int64');
    expect(widenIntegerType('Byte', [255, -0])).toBe('Byte');
    expect(widenIntegerType('Byte', [256])).toBe('Int16');
    expect(widenIntegerType('String', [2 ** 40])).toBe('String');
  });
});

describe('cell formatting', () => {
  const fmt = (type: DataColumn['type'], cell: Exclude<DataCell, null>, mode?: DataColumn['dateTimeMode']) =>
    formatCell(col('c', type, mode), cell);

  it('writes integers and refuses what does not fit', () => {
    expect(fmt('Int32', 7)).toBe('7');
    expect(fmt('Int64', 9000000000n)).toBe('9000000000');
    expect(fmt('Int64', '-9223372036854775808')).toBe('-9223372036854775808');
    expect(() => fmt('Int64', 2n ** 63n)).toThrow(DataTableError);
    expect(() => fmt('Int16', 32768)).toThrow(/does not fit Int16/);
    expect(() => fmt('Int32', 1.5)).toThrow(DataTableError);
  });

  it('writes a number at the edges of each range as its BigInt would be written, safe or not', () => {
    expect(fmt('Int32', -0)).toBe('0');
    expect(fmt('Byte', 255)).toBe('255');
    expect(() => fmt('Byte', -1)).toThrow(/-1 does not fit Byte/);
    expect(fmt('Int32', -2147483648)).toBe('-2147483648');
    expect(() => fmt('Int32', 2147483648)).toThrow(/2147483648 does not fit Int32/);
    expect(fmt('Int64', Number.MAX_SAFE_INTEGER)).toBe('9007199254740991');
    expect(fmt('Int64', -(2 ** 60))).toBe('-1152921504606846976');
    expect(fmt('Int64', -(2 ** 63))).toBe('-9223372036854775808');
    // 2^63 is a double both bounds round to: only the exact comparison refuses it
    expect(() => fmt('Int64', 2 ** 63)).toThrow(/9223372036854775808 does not fit Int64/);
  });

  it('writes decimals invariantly, keeping their scale', () => {
    expect(fmt('Decimal', '12.50')).toBe('12.50');
    expect(fmt('Decimal', 12.5)).toBe('12.5');
    expect(fmt('Decimal', '+007.5')).toBe('7.5');
    expect(fmt('Decimal', '.5')).toBe('0.5');
    expect(fmt('Decimal', '-0.00')).toBe('0.00');
    expect(fmt('Decimal', 1e-7)).toBe('0.0000001');
    expect(fmt('Decimal', 1.5e21)).toBe('1500000000000000000000');
    expect(fmt('Decimal', 123n)).toBe('123');
    expect(fmt('Decimal', '79228162514264337593543950335')).toBe('79228162514264337593543950335');
    expect(() => fmt('Decimal', '79228162514264337593543950336')).toThrow(/range/);
    expect(() => fmt('Decimal', 'NaN')).toThrow(DataTableError);
  });

  it('writes doubles and singles as .NET round-trips them', () => {
    expect(formatFloat(1.5, false)).toBe('1.5');
    expect(formatFloat(0.1, false)).toBe('0.1');
    expect(formatFloat(Infinity, false)).toBe('INF');
    expect(formatFloat(-Infinity, false)).toBe('-INF');
    expect(formatFloat(NaN, false)).toBe('NaN');
    expect(formatFloat(-0, false)).toBe('-0');
    expect(formatFloat(1e14, false)).toBe('100000000000000');
    expect(formatFloat(1e15, false)).toBe('1E+15');
    expect(formatFloat(123456789012345680000, false)).toBe('1.2345678901234568E+20');
    expect(formatFloat(0.0001, false)).toBe('0.0001');
    expect(formatFloat(0.00001, false)).toBe('1E-05');
    expect(formatFloat(0.00012345, false)).toBe('0.00012345');
    expect(formatFloat(-999999999999999.9, false)).toBe('-999999999999999.9');
    expect(formatFloat(123456.789, false)).toBe('123456.789');
    expect(formatFloat(0.30000000000000004, false)).toBe('0.30000000000000004');
    expect(formatFloat(-1.7976931348623157e308, false)).toBe('-1.7976931348623157E+308');
    expect(formatFloat(5e-324, false)).toBe('5E-324');
    expect(formatFloat(0.1, true)).toBe('0.1');
    expect(formatFloat(Math.fround(2.71875), true)).toBe('2.71875');
    expect(formatFloat(1e7, true)).toBe('1E+07');
    expect(formatFloat(1234567, true)).toBe('1234567');
    expect(formatFloat(1e39, true)).toBe('INF');
  });

  it('writes booleans, bytes and guids', () => {
    expect(fmt('Boolean', true)).toBe('true');
    expect(fmt('Boolean', 0)).toBe('false');
    expect(fmt('Boolean', 1n)).toBe('true');
    expect(() => fmt('Boolean', 2)).toThrow(DataTableError);
    expect(fmt('Byte[]', new Uint8Array([1, 2, 3]))).toBe('AQID');
    expect(fmt('Byte[]', new Uint8Array())).toBe('');
    expect(encodeBase64(new TextEncoder().encode('any carnal pleasure.'))).toBe('YW55IGNhcm5hbCBwbGVhc3VyZS4=');
    expect(encodeBase64(new Uint8Array([0xff, 0xfe]))).toBe('//4=');
    const big = new Uint8Array(100_000).map((_, i) => i * 7);
    expect(encodeBase64(big)).toBe(Buffer.from(big).toString('base64'));
    expect(fmt('Guid', '{11111111-2222-3333-4444-55555555555A}')).toBe('11111111-2222-3333-4444-55555555555a');
    expect(fmt('Guid', '111111112222333344445555555555AB')).toBe('11111111-2222-3333-4444-5555555555ab');
    expect(() => fmt('Guid', '1111-2222')).toThrow(DataTableError);
  });

  it('writes DateTime as XmlConvert does per mode', () => {
    expect(fmt('DateTime', '2020-01-02 03:04:05')).toBe('2020-01-02T03:04:05');
    expect(fmt('DateTime', '2020-01-02')).toBe('2020-01-02T00:00:00');
    expect(fmt('DateTime', '2020-01-02T03:04:05.1200')).toBe('2020-01-02T03:04:05.12');
    expect(fmt('DateTime', '2020-01-02T03:04:05.000')).toBe('2020-01-02T03:04:05');
    expect(fmt('DateTime', '2020-01-02T03:04:05.123456789')).toBe('2020-01-02T03:04:05.1234567');
    // Unspecified keeps the wall clock as stored, whatever offset came with it.
    expect(fmt('DateTime', '2020-01-02T03:04:05+01:00')).toBe('2020-01-02T03:04:05');
    expect(fmt('DateTime', '2020-01-02 03:04:05.5+01', 'Utc')).toBe('2020-01-02T02:04:05.5Z');
    expect(fmt('DateTime', '2020-01-01 00:30:00-05:30', 'Utc')).toBe('2020-01-01T06:00:00Z');
    expect(fmt('DateTime', '2020-01-01 00:30:00+02', 'Utc')).toBe('2019-12-31T22:30:00Z');
    expect(fmt('DateTime', '2020-01-02 03:04:05', 'Utc')).toBe('2020-01-02T03:04:05Z');
    expect(fmt('DateTime', new Date(Date.UTC(2020, 0, 2, 3, 4, 5, 60)), 'Utc')).toBe('2020-01-02T03:04:05.06Z');
    expect(fmt('DateTime', new Date(Date.UTC(2020, 0, 2, 3, 4, 5)))).toBe('2020-01-02T03:04:05');
    expect(fmt('DateTime', '0050-06-01 12:00:00+01', 'Utc')).toBe('0050-06-01T11:00:00Z');
    expect(fmt('DateTime', '2020-01-02T03:04:05+01:00', 'UnspecifiedLocal')).toBe('2020-01-02T03:04:05+01:00');
    expect(fmt('DateTime', '2020-01-02T03:04:05-03:30', 'UnspecifiedLocal')).toBe('2020-01-02T03:04:05-03:30');
    expect(fmt('DateTime', '2020-01-02T03:04:05Z', 'UnspecifiedLocal')).toBe('2020-01-02T03:04:05+00:00');
    expect(() => fmt('DateTime', '2020-02-30')).toThrow(DataTableError);
    expect(() => fmt('DateTime', 'infinity')).toThrow(DataTableError);
    expect(() => fmt('DateTime', '0001-01-01 00:30:00+01', 'Utc')).toThrow(/range/);
    expect(() => fmt('DateTime', new Date(NaN))).toThrow(DataTableError);
  });

  it('refuses a value of the wrong kind', () => {
    expect(() => fmt('String', 5)).toThrow(DataTableError);
    expect(() => fmt('Double', '1.5')).toThrow(DataTableError);
    expect(() => fmt('Byte[]', 'AQID')).toThrow(DataTableError);
  });
});

describe('EncodeLocalName', () => {
  it.each([
    ['Name', 'Name'],
    ['first name', 'first_x0020_name'],
    ['1st', '_x0031_st'],
    ['a1-b.c', 'a1-b.c'],
    ['-x', '_x002D_x'],
    ['count(*)', 'count_x0028__x002A__x0029_'],
    ['a:b', 'a_x003A_b'],
    ['_id', '_id'],
    ['_x0020_', '_x005F_x0020_'],
    ['a_x0041__x0042_', 'a_x005F_x0041__x005F_x0042_'],
    // One underscore ends the first escape and starts the second: it is escaped once.
    ['_x0041_x0042_', '_x005F_x0041_x005F_x0042_'],
    ['a_X00410042_', 'a_x005F_X00410042_'],
    ['a_x004_', 'a_x004_'],
    ['Größe', 'Größe'],
    ['Preis€', 'Preis_x20AC_'],
    ['µ', '_x00B5_'],
    ['名前', '名前'],
    ['Ωmega', 'Ωmega'],
    ['smile😀', 'smile_x0001F600_'],
    ['a\tb', 'a_x0009_b'],
  ])('%j -> %j', (name, encoded) => {
    expect(encodeLocalName(name)).toBe(encoded);
  });
});

describe('uniqueColumnNames', () => {
  it('names unnamed columns and suffixes duplicates as ADO.NET does', () => {
    expect(uniqueColumnNames(['id', 'ID', 'id', 'name'])).toEqual(['id', 'ID1', 'id2', 'name']);
    expect(uniqueColumnNames(['', '', 'Column1'])).toEqual(['Column2', 'Column3', 'Column1']);
    expect(uniqueColumnNames(['a', 'a', 'a1'])).toEqual(['a', 'a2', 'a1']);
  });
});

describe('writeDataTable', () => {
  it('writes schema and diffgram, leaving null cells out', () => {
    const xml = writeDataTable(
      [col('Id', 'Int32'), col('Name', 'String'), col('At', 'DateTime', 'Utc'), col('Day', 'DateTime')],
      [
        [1, 'a<b & "c"\r\n', '2020-01-02T03:04:05Z', '2020-01-02'],
        [2, null, null, null],
      ],
    );
    expect(xml).toContain('msdata:MainDataTable="Table"');
    expect(xml).toContain('<xs:element name="At" msdata:DateTimeMode="Utc" type="xs:dateTime" minOccurs="0" />');
    expect(xml).toContain(
      '<xs:element name="Day" msdata:DateTimeMode="Unspecified" type="xs:dateTime" minOccurs="0" />',
    );
    expect(xml).toContain(
      '<Table diffgr:id="Table1" msdata:rowOrder="0" diffgr:hasChanges="inserted"><Id>1</Id><Name>a&lt;b &amp; "c"&#xD;\n</Name><At>2020-01-02T03:04:05Z</At><Day>2020-01-02T00:00:00</Day></Table>',
    );
    expect(xml).toContain(
      '<Table diffgr:id="Table2" msdata:rowOrder="1" diffgr:hasChanges="inserted"><Id>2</Id></Table></DocumentElement></diffgr:diffgram>',
    );
    const doc = canonical(xml);
    expect(doc.children.map((n) => (n as Node).name)).toEqual([
      '{http://www.w3.org/2001/XMLSchema}schema',
      '{urn:schemas-microsoft-com:xml-diffgram-v1}diffgram',
    ]);
  });

  it('encodes column and table names in elements, not in diffgr:id', () => {
    const xml = writeDataTable([col('first name', 'String')], [['x']], { tableName: 'my table' });
    expect(xml).toContain('msdata:MainDataTable="my_x0020_table"');
    expect(xml).toContain('<xs:element name="first_x0020_name" type="xs:string" minOccurs="0" />');
    expect(xml).toContain(
      '<my_x0020_table diffgr:id="my table1" msdata:rowOrder="0" diffgr:hasChanges="inserted"><first_x0020_name>x</first_x0020_name></my_x0020_table>',
    );
  });

  it('writes an empty diffgram for no rows', () => {
    expect(writeDataTable([col('X', 'Int32')], [])).toMatch(
      /<\/xs:schema><diffgr:diffgram xmlns:msdata="[^"]+" xmlns:diffgr="[^"]+" \/>$/,
    );
  });

  it('refuses characters XML 1.0 cannot carry, duplicate and missing names', () => {
    expect(() => writeDataTable([col('s', 'String')], [['a\u0001b']])).toThrow(/Row 1, column 's': .*U\+0001/);
    expect(() => writeDataTable([col('s', 'String')], [['\uD800']])).toThrow(DataTableError);
    expect(() => writeDataTable([col('s', 'String')], [['\uFFFF']])).toThrow(DataTableError);
    expect(writeDataTable([col('s', 'String')], [['😀\t']])).toContain('<s>😀\t</s>');
    expect(() => writeDataTable([col('a', 'String'), col('a', 'Int32')], [])).toThrow(/already belongs/);
    expect(() => writeDataTable([col('', 'String')], [])).toThrow(DataTableError);
    expect(() => writeDataTable([col('a', 'String')], [], { tableName: '' })).toThrow(/name is not set/);
  });

  it('writes a value repeated down a column each time, and still checks each other value', () => {
    const xml = writeDataTable(
      [col('d', 'DateTime'), col('n', 'Int32')],
      [
        ['2020-01-02 03:04:05', 7],
        ['2020-01-02 03:04:05', 7],
        ['2020-01-03', 8],
      ],
    );
    expect(xml.match(/<d>2020-01-02T03:04:05<\/d><n>7<\/n>/g)).toHaveLength(2);
    expect(xml).toContain('<d>2020-01-03T00:00:00</d><n>8</n>');
    expect(() => writeDataTable([col('n', 'Int32')], [[7], [7], ['x']])).toThrow(/Row 3, column 'n'/);
    expect(() => writeDataTable([col('n', 'Int32')], [[7], [7], [2 ** 40]])).toThrow(/Row 3, column 'n'/);
  });
});

describe('DataTable XML as .NET writes it', () => {
  // Two DataContractSerializer outputs recorded with Mono (test/fixtures/datatable/record.ts); each DataTable
  // element's content is what we write.
  const capture = readFileSync(
    join(import.meta.dirname, '..', 'fixtures', 'datatable', 'datatable-dcs-xml.txt'),
    'utf8',
  );
  const documents = [...capture.matchAll(/<DataTable [^>]*>([\s\S]*?)<\/DataTable>/g)].map((m) => m[1]!);

  it('has the two documents', () => {
    expect(documents).toHaveLength(2);
  });

  it('matches a table with every kind of column and a row of nulls', () => {
    const columns: DataColumn[] = [
      col('Id', 'Int32'),
      col('Name', 'String'),
      col('Amount', 'Decimal'),
      col('Flag', 'Boolean'),
      col('Uid', 'Guid'),
      col('Blob', 'Byte[]'),
      // The capture is a default DataTable column (UnspecifiedLocal, written in Europe/Berlin time).
      col('When', 'DateTime', 'UnspecifiedLocal'),
      col('Big', 'Int64'),
    ];
    const rows: DataCell[][] = [
      [
        1,
        'alpha',
        '12.5',
        true,
        '11111111-2222-3333-4444-555555555555',
        new Uint8Array([1, 2, 3]),
        '2020-01-02 03:04:05+01',
        9000000000n,
      ],
      [2, null, null, false, null, null, null, null],
    ];
    const ours = writeDataTable(columns, rows, { tableName: 'Result' });
    expect(canonical(ours)).toEqual(canonical(documents[0]!));
  });

  it('matches an empty table', () => {
    const ours = writeDataTable([col('X', 'Int32')], [], { tableName: 'Empty' });
    expect(canonical(ours)).toEqual(canonical(documents[1]!));
  });

  it('the canonicalizer sees differences', () => {
    const ours = writeDataTable([col('X', 'Int64')], [], { tableName: 'Empty' });
    expect(canonical(ours)).not.toEqual(canonical(documents[1]!));
  });
});
