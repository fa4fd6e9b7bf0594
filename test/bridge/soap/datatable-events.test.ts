/** The bridge writes a DataTable from its recorded events: the same bytes as from the contract's text read back. */
import { describe, expect, it } from 'vitest';
import type { DataCell, DataColumn } from '../../../src/idb/datatable.ts';
import { recordDataTable, xmlText } from '../../../src/idb/datatable-writer.ts';
import { element, encodeDocument, type XmlContent, xmlns } from '../../../tcp-bridge/src/binary-xml/index.ts';
import { WriterSession } from '../../../tcp-bridge/src/binary-xml/dictionary.ts';
import { dataTableContent } from '../../../tcp-bridge/src/soap/datatable-xml.ts';
import { type XmlEventSource, XmlTape } from '../../../src/idb/xml-events.ts';

const columns: DataColumn[] = [
  { name: 'id', type: 'Int32' },
  { name: 'first name', type: 'String' },
  { name: 'amount', type: 'Decimal' },
  { name: 'at', type: 'DateTime', dateTimeMode: 'Utc' },
  { name: 'local', type: 'DateTime', dateTimeMode: 'UnspecifiedLocal' },
  { name: 'g', type: 'Guid' },
  { name: 'bin', type: 'Byte[]' },
  { name: 'ok', type: 'Boolean' },
];
const rows: DataCell[][] = [
  [
    1,
    'a & <b> "c"\r\n\ttab',
    '12.50',
    '2024-02-29 23:59:59.1234567+01:00',
    '2024-01-01T00:00:00',
    'd9f4b1c2-0000-4000-8000-000000000001',
    Uint8Array.of(0, 1, 255),
    true,
  ],
  [2, '', null, null, null, null, new Uint8Array(0), 0],
  [3, 'Grüße, 😀 — ✓ 日本', '-0.001', '0001-01-01', null, null, null, null],
];

/** A reply-like document around the table's content, with a session dictionary as the bridge writes replies. */
function bytes(content: XmlContent[]): Uint8Array {
  const result = element('', 'ReturnDatatableResult', [xmlns('', 'http://tempuri.org/')], content);
  return encodeDocument({ children: [result] }, { session: new WriterSession() });
}
const fromEvents = (events: XmlEventSource): Uint8Array =>
  bytes([{ kind: 'events', replay: (sink) => events.replay(sink) }]);

describe('a DataTable written from its events', () => {
  it('is the bytes of the nodes dataTableContent reads from the text of the same table', () => {
    for (const table of [rows, rows.slice(0, 1), []]) {
      const events = recordDataTable(columns, table);
      expect(Buffer.from(fromEvents(events))).toEqual(Buffer.from(bytes(dataTableContent(xmlText(events)))));
    }
    const renamed = recordDataTable([{ name: '1st', type: 'String' }], [['x']], { tableName: 'my table' });
    expect(Buffer.from(fromEvents(renamed))).toEqual(Buffer.from(bytes(dataTableContent(xmlText(renamed)))));
  });

  it('is the same for texts at the edges of the one-pass ASCII record: lengths 1, 2, 255, 256, non-ASCII anywhere', () => {
    const texts = [
      'x',
      '0',
      '1',
      'ab',
      'y'.repeat(255),
      'z'.repeat(256),
      `${'a'.repeat(254)}é`,
      'é',
      `€${'b'.repeat(300)}`,
    ];
    const table = recordDataTable(
      [{ name: 'text', type: 'String' }],
      texts.map((text) => [text]),
    );
    expect(Buffer.from(fromEvents(table))).toEqual(Buffer.from(bytes(dataTableContent(xmlText(table)))));
  });

  it('is the same recorded on a tape and replayed from it: a cell as one event or as its start, text and end', () => {
    const events = recordDataTable(columns, rows);
    const tape = new XmlTape();
    events.replay(tape);
    expect(xmlText(tape)).toBe(xmlText(events));
    expect(Buffer.from(fromEvents(tape))).toEqual(Buffer.from(fromEvents(events)));
  });

  it('refuses a prefix that is not declared, as the nodes would', () => {
    const undeclared = {
      kind: 'events' as const,
      replay: (sink: { start(n: string, a: string[]): void; end(): void }) => {
        sink.start('q:row', []);
        sink.end();
      },
    };
    expect(() => bytes([undeclared as XmlContent])).toThrow(/prefix "q" is not declared/);
  });
});
