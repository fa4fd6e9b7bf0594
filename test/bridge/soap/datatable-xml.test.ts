/**
 * The DataTable XML (tcp-bridge/src/soap/datatable-xml.ts): a DataTable's XML text as NBFX elements, what it refuses,
 * and empty and large tables read back.
 */
import { describe, expect, it } from 'vitest';
import { attribute, element, stringText, xmlns } from '../../../tcp-bridge/src/binary-xml/index.ts';
import { dataTableContent, DataTableXmlError } from '../../../tcp-bridge/src/soap/datatable-xml.ts';
import type { DataCell } from '../../../src/idb/datatable.ts';
import { writeDataTable } from '../../../src/idb/datatable-writer.ts';
import { child, elements, path, records, textOf } from '../../support/nettcp/soap.ts';
import { reply } from './helpers.ts';

describe('the DataTable XML', () => {
  it('becomes NBFX elements: values as WriteString text, attributes before declarations, own prefix first', () => {
    const nodes = dataTableContent(
      '<a:t x="0" xmlns:b="urn:b" xmlns:a="urn:a"><b:c b:y="1">1</b:c><d xmlns="">&amp;&lt;&gt;&quot;&#xD;&#x9;&#xA;&#65;</d><e/></a:t>',
    );
    expect(records(nodes)).toEqual(
      records([
        element(
          'a',
          't',
          [attribute('', 'x', { kind: 'text', type: 'Zero' }), xmlns('a', 'urn:a'), xmlns('b', 'urn:b')],
          [
            element('b', 'c', [attribute('b', 'y', { kind: 'text', type: 'One' })], [{ kind: 'text', type: 'One' }]),
            element('', 'd', [xmlns('', '')], [stringText('&<>"\r\t\nA')]),
            element('', 'e'),
          ],
        ),
      ]),
    );
    // Literal line ends and attribute white space are normalized as an XML parser would.
    expect(records(dataTableContent('<a v="x\ty">1\r\n2\r3</a>'))).toEqual(
      records([element('', 'a', [attribute('', 'v', 'x y')], [stringText('1\n2\n3')])]),
    );
  });

  it('refuses what datatable.ts never writes', () => {
    for (const xml of [
      '<a><!-- c --></a>',
      '<a><![CDATA[x]]></a>',
      '<?xml version="1.0"?><a/>',
      '<a>&nbsp;</a>',
      '<a></b>',
      '<a>',
      'x<a/>',
      '<p:a/>',
      '<a p:x="1"/>',
      '<a x=1/>',
      '<a x="<"/>',
      '</a>',
    ]) {
      expect(() => dataTableContent(xml), xml).toThrow(DataTableXmlError);
    }
  });

  it('reads back an empty table and a large one', () => {
    const empty = writeDataTable([{ name: 'x', type: 'Int32' }], []);
    const emptyResult = path(
      reply('ReturnDatatable', { xml: empty }),
      'Envelope',
      'Body',
      'ReturnDatatableResponse',
      'ReturnDatatableResult',
    );
    expect(elements(emptyResult).map((e) => e.localName)).toEqual(['schema', 'diffgram']);
    expect(elements(emptyResult)[1]!.children).toEqual([]);
    const rows: DataCell[][] = Array.from({ length: 5000 }, (_, i) => [i, `row ${i}`]);
    const big = writeDataTable(
      [
        { name: 'n', type: 'Int64' },
        { name: 's', type: 'String' },
      ],
      rows,
    );
    const result = path(
      reply('ReturnDatatable', { xml: big }),
      'Envelope',
      'Body',
      'ReturnDatatableResponse',
      'ReturnDatatableResult',
    );
    const table = elements(path(result, 'diffgram', 'DocumentElement'));
    expect(table).toHaveLength(5000);
    expect(textOf(child(table[4999]!, 's'))).toBe('row 4999');
  });
});
