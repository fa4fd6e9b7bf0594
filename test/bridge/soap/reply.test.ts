/**
 * writeReply (tcp-bridge/src/soap/reply.ts, dc-writer.ts): every operation's result written and read back, and
 * ReturnScalar with every ClrValue.
 */
import { describe, expect, it } from 'vitest';
import {
  attribute,
  boolText,
  bytesText,
  dateTimeText,
  decimalText,
  element,
  encodeEnvelopeOf,
  encodeEnvelopeParts,
  intText,
  qnameText,
  stringText,
  textToString,
  WriterSession,
  xmlns,
  type XmlContent,
  type XmlText,
} from '../../../tcp-bridge/src/binary-xml/index.ts';
import { writeReply } from '../../../tcp-bridge/src/soap/index.ts';
import { keptReplies } from '../../../tcp-bridge/src/soap/reply.ts';
import { concatBytes } from '../../../src/idb/index.ts';
import { OPERATIONS, type ClrValue, type OperationName, type Operations } from '../../../src/idb/contract.ts';
import { escapeAttribute, escapeText, type DataCell, type DataColumn } from '../../../src/idb/datatable.ts';
import { writeDataTable } from '../../../src/idb/datatable-writer.ts';
import {
  ANONYMOUS,
  child,
  DC,
  elements,
  MESSAGE_ID,
  path,
  records,
  SER,
  SOAP,
  TEMPURI,
  textOf,
  XSD,
  XSI,
} from '../../support/nettcp/soap.ts';
import { fileValue, GUID_A, GUID_B, GUID_C, OPTIONS, reply, resultOf, TICKS_2022 } from './helpers.ts';

const documentValue = (
  fields: Operations['GetDocumentByDocumentId']['result'] extends infer D
    ? D extends { Fields: infer F }
      ? F
      : never
    : never,
) => ({
  ContainerId: GUID_A,
  ContentType: null,
  CreatedUtc: '2023-04-05T06:07:08.9Z',
  DocumentId: GUID_C,
  Fields: fields,
  FileId: GUID_B,
  FileName: 'a.pdf',
  Length: 5_000_000_000n,
  Title: '',
});

const TABLE: DataColumn[] = [
  { name: 'id', type: 'Int32' },
  { name: 'name', type: 'String' },
  { name: 'amount', type: 'Decimal' },
  { name: 'uid', type: 'Guid' },
  { name: 'blob', type: 'Byte[]' },
  { name: 'at', type: 'DateTime', dateTimeMode: 'Utc' },
  { name: 'a b', type: 'Boolean' },
];
const TABLE_ROWS: DataCell[][] = [
  [
    0,
    'Tom & "Jerry" <x>\r\n\ttab',
    '12.50',
    GUID_A.toUpperCase(),
    Uint8Array.of(1, 2, 3),
    '2020-01-02 03:04:05+01',
    true,
  ],
  [1, '', null, null, null, null, false],
  [2, '1', '0', null, null, null, null],
];

/** Every operation's result, as the handlers return it. */
const RESULTS: { [K in OperationName]: Operations[K]['result'] } = {
  Heartbeat: true,
  CreateDatabaseRequest: GUID_A,
  CloseDatabaseRequest: false,
  ReturnDatatable: { xml: writeDataTable(TABLE, TABLE_ROWS) },
  ReturnScalar: { type: 'decimal', value: '-3.14' },
  ExecuteNonQuery: -1,
  NewFile: GUID_B,
  UpdateFile: true,
  GetFile: { ...fileValue, Content: Uint8Array.from({ length: 70_000 }, (_, i) => i % 251), Sha256: 'ab'.repeat(32) },
  DeleteFile: false,
  GetDocumentByDocumentId: documentValue([{ Name: 'Kind', Value: null }]),
  GetDocumentByContainerId: [documentValue(null), documentValue([])],
  NewFileIndex: GUID_C,
};

/** XML text of NBFX content (attributes in tree order), escaped as datatable.ts escapes. */
function xmlOf(nodes: XmlContent[]): string {
  return nodes
    .map((node) => {
      if (node.kind === 'text') return escapeText(textToString(node));
      if (node.kind !== 'element') throw new Error(node.kind);
      const name = node.prefix ? `${node.prefix}:${node.localName}` : node.localName;
      const attributes = node.attributes
        .map((a) =>
          a.kind === 'xmlns'
            ? ` ${a.prefix ? `xmlns:${a.prefix}` : 'xmlns'}="${escapeAttribute(a.uri)}"`
            : ` ${a.prefix ? `${a.prefix}:` : ''}${a.localName}="${escapeAttribute(textToString(a.value))}"`,
        )
        .join('');
      return node.children.length === 0
        ? `<${name}${attributes} />`
        : `<${name}${attributes}>${xmlOf(node.children)}</${name}>`;
    })
    .join('');
}

describe('writeReply: every operation, read back', () => {
  for (const operation of OPERATIONS) {
    it(operation, () => {
      const document = reply(operation, RESULTS[operation]);
      const envelope = path(document, 'Envelope');
      expect(textOf(path(envelope, 'Header', 'Action'))).toBe(`${TEMPURI}IIDBService/${operation}Response`);
      expect(path(envelope, 'Header', 'Action').attributes).toMatchObject([
        { prefix: 's', localName: 'mustUnderstand', namespace: SOAP, value: { type: 'One' } },
      ]);
      expect(path(envelope, 'Header', 'RelatesTo').children).toEqual([
        { kind: 'text', type: 'UniqueId', value: MESSAGE_ID },
      ]);
      expect(elements(path(envelope, 'Header')).map((e) => e.localName)).toEqual(['Action', 'RelatesTo']);
      const response = path(envelope, 'Body', `${operation}Response`);
      expect(response).toMatchObject({
        prefix: '',
        namespace: TEMPURI,
        attributes: [{ kind: 'xmlns', prefix: '', uri: TEMPURI }],
      });
      expect(elements(response).map((e) => [e.prefix, e.localName, e.namespace])).toEqual([
        ['', `${operation}Result`, TEMPURI],
      ]);
      if (operation === 'ReturnDatatable') {
        const result = path(response, 'ReturnDatatableResult');
        expect(result.attributes).toEqual([]);
        // The same XML but for the order of the declarations: attributes first, the element's own prefix first.
        const expected = RESULTS.ReturnDatatable.xml
          .replace(
            'xmlns="" xmlns:xs="http://www.w3.org/2001/XMLSchema"',
            'xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns=""',
          )
          .replace(
            'xmlns:msdata="urn:schemas-microsoft-com:xml-msdata" xmlns:diffgr="urn:schemas-microsoft-com:xml-diffgram-v1"',
            'xmlns:diffgr="urn:schemas-microsoft-com:xml-diffgram-v1" xmlns:msdata="urn:schemas-microsoft-com:xml-msdata"',
          );
        // An empty element is the same tree however the text wrote it.
        expect(xmlOf(result.children)).toBe(expected.replace(/<([\w:]+)><\/\1>/g, '<$1 />'));
      } else {
        expect(resultOf(document, operation)).toEqual(RESULTS[operation]);
      }
    });
  }

  it('writes the records DataContractSerializer has XmlBinaryWriter write', () => {
    const result = (operation: OperationName, value: unknown) =>
      path(reply(operation, value as never), 'Envelope', 'Body', `${operation}Response`, `${operation}Result`);
    expect(result('Heartbeat', true).children).toEqual([{ kind: 'text', type: 'True' }]);
    expect(result('ExecuteNonQuery', 0).children).toEqual([{ kind: 'text', type: 'Zero' }]);
    expect(result('ExecuteNonQuery', 300).children).toEqual([{ kind: 'text', type: 'Int16', value: 300 }]);
    // A Guid goes out as its text (XmlWriterDelegator.WriteGuid writes Guid.ToString() raw), as the capture shows.
    expect(result('NewFile', GUID_B).children).toEqual([{ kind: 'text', type: 'Chars8', value: GUID_B }]);
    const file = result('GetFile', RESULTS.GetFile);
    expect(file.attributes).toEqual(
      [
        { kind: 'xmlns', prefix: 'b', uri: DC },
        { kind: 'xmlns', prefix: 'i', uri: XSI },
      ].map((a) => expect.objectContaining(a)),
    );
    expect(elements(file).map((e) => `${e.prefix}:${e.localName}`)).toEqual([
      'b:Content',
      'b:ContentType',
      'b:CreatedUtc',
      'b:FileId',
      'b:FileName',
      'b:Length',
      'b:ModifiedUtc',
      'b:Sha256',
    ]);
    expect(child(file, 'Content').children[0]).toMatchObject({ type: 'Bytes32' });
    expect(child(file, 'CreatedUtc').children).toEqual([
      { kind: 'text', type: 'DateTime', ticks: TICKS_2022, dateKind: 1 },
    ]);
    expect(child(file, 'Length').children).toEqual([{ kind: 'text', type: 'Int8', value: 3 }]);
    const documents = result('GetDocumentByContainerId', RESULTS.GetDocumentByContainerId);
    expect(elements(documents).map((e) => `${e.prefix}:${e.localName}`)).toEqual(['b:DocumentData', 'b:DocumentData']);
    const first = elements(documents)[0]!;
    expect(child(first, 'Length').children).toEqual([{ kind: 'text', type: 'Int64', value: 5_000_000_000n }]);
    expect(child(first, 'Fields').attributes).toMatchObject([
      { prefix: 'i', localName: 'nil', value: { type: 'True' } },
    ]);
    expect(child(first, 'ContentType').attributes).toMatchObject([{ prefix: 'i', localName: 'nil' }]);
    // An empty string is an element without text (WriteString("") writes no record).
    expect(child(first, 'Title')).toMatchObject({ attributes: [], children: [] });
    expect(child(elements(documents)[1]!, 'Fields')).toMatchObject({ attributes: [], children: [] });
    const single = result('GetDocumentByDocumentId', RESULTS.GetDocumentByDocumentId);
    expect(elements(child(single, 'Fields')).map((e) => `${e.prefix}:${e.localName}`)).toEqual(['b:IndexField']);
  });

  it('writes null results as DataContractSerializer does: i:nil, with the contract declarations at a contract root', () => {
    const nilResult = (operation: OperationName) =>
      path(reply(operation, null as never), 'Envelope', 'Body', `${operation}Response`, `${operation}Result`);
    expect(records(nilResult('GetFile'))).toEqual(
      records(element('', 'GetFileResult', [attribute('i', 'nil', boolText(true)), xmlns('b', DC), xmlns('i', XSI)])),
    );
    expect(records(nilResult('GetDocumentByDocumentId')).attributes).toHaveLength(3);
    expect(records(nilResult('ReturnScalar'))).toEqual(
      records(element('', 'ReturnScalarResult', [attribute('i', 'nil', boolText(true)), xmlns('i', XSI)])),
    );
    expect(resultOf(reply('GetFile', null), 'GetFile')).toBeNull();
    expect(resultOf(reply('ReturnScalar', null), 'ReturnScalar')).toBeNull();
    expect(
      records(
        path(
          reply('GetDocumentByContainerId', []),
          'Envelope',
          'Body',
          'GetDocumentByContainerIdResponse',
          'GetDocumentByContainerIdResult',
        ),
      ),
    ).toEqual(records(element('', 'GetDocumentByContainerIdResult', [xmlns('b', DC), xmlns('i', XSI)])));
  });

  it('addresses the reply: RelatesTo as sent, To only for a ReplyTo that is not anonymous', () => {
    const other = reply('Heartbeat', true, { messageId: 'uuid:custom-1', replyTo: 'net.tcp://client/callback' });
    expect(path(other, 'Envelope', 'Header', 'RelatesTo').children).toEqual([
      { kind: 'text', type: 'Chars8', value: 'uuid:custom-1' },
    ]);
    const to = path(other, 'Envelope', 'Header', 'To');
    expect(textOf(to)).toBe('net.tcp://client/callback');
    expect(to.attributes).toMatchObject([{ localName: 'mustUnderstand', value: { type: 'One' } }]);
    // An upper-case urn:uuid is not what .NET's UniqueId prints: it goes back as the text it was.
    const upper = reply('Heartbeat', true, {
      messageId: MESSAGE_ID.toUpperCase().replace('URN:UUID', 'urn:uuid'),
      replyTo: ANONYMOUS,
    });
    expect(path(upper, 'Envelope', 'Header', 'RelatesTo').children[0]).toMatchObject({ type: 'Chars8' });
  });
});

describe('writeReply: replies written from the bytes a session keeps', () => {
  /** Replies of every operation, several times over, with the addressing of each kind a client sends. */
  function* replies() {
    const addressings = [
      { messageId: MESSAGE_ID, replyTo: ANONYMOUS },
      { messageId: 'urn:uuid:00000000-0000-4000-8000-00000000000a' },
      { messageId: 'urn:example:not-a-guid', replyTo: ANONYMOUS },
      { messageId: 'urn:uuid:00000000-0000-4000-8000-00000000000b', replyTo: 'net.tcp://client/replies' },
      {},
    ];
    for (let round = 0; round < 3; round++) {
      for (const [i, operation] of OPERATIONS.entries()) {
        const addressing = addressings[(round + i) % addressings.length]!;
        yield writeReply(addressing, operation, RESULTS[operation], OPTIONS);
      }
      for (const [value] of SCALARS) yield writeReply(addressings[round]!, 'ReturnScalar', value, OPTIONS);
      yield writeReply(addressings[0]!, 'ExecuteNonQuery', round, OPTIONS);
      yield writeReply(addressings[1]!, 'GetDocumentByDocumentId', null, OPTIONS);
      yield writeReply(addressings[0]!, 'GetDocumentByContainerId', [], OPTIONS);
    }
  }

  // The whole quota, one spent after a few replies, and one too small for the first reply's strings.
  for (const quota of [undefined, 600, 40]) {
    it(`writes each reply's bytes and strings as its tree gives them (session quota ${quota ?? 'default'})`, () => {
      const kept = new WriterSession(quota);
      const fromTree = new WriterSession(quota);
      for (const reply of replies()) {
        const bytes = concatBytes(encodeEnvelopeOf(reply, kept));
        const expected = concatBytes(encodeEnvelopeParts({ children: reply.children }, fromTree));
        expect(Buffer.from(bytes).equals(Buffer.from(expected))).toBe(true);
        expect([kept.count, kept.bytesUsed]).toEqual([fromTree.count, fromTree.bytesUsed]);
      }
      // Every operation's replies after its first came from the kept bytes: the comparison above is not empty.
      expect(keptReplies(kept)).toBe(OPERATIONS.length);
    });
  }
});

/** ReturnScalar's results of every ClrValue: the type its record is written as, and the record. */
const SCALARS: [ClrValue, string, string, XmlText[]][] = [
  [{ type: 'int', value: 42 }, XSD, 'int', [intText(42)]],
  [{ type: 'int', value: -2147483648 }, XSD, 'int', [intText(-2147483648)]],
  [{ type: 'short', value: 1 }, XSD, 'short', [{ kind: 'text', type: 'One' }]],
  [{ type: 'long', value: 2n ** 62n }, XSD, 'long', [intText(2n ** 62n)]],
  [{ type: 'long', value: 7n }, XSD, 'long', [intText(7)]],
  [{ type: 'decimal', value: '12.50' }, XSD, 'decimal', [decimalText('12.50')]],
  [{ type: 'float', value: 2.5 }, XSD, 'float', [{ kind: 'text', type: 'Float', value: 2.5 }]],
  [{ type: 'float', value: 3 }, XSD, 'float', [intText(3)]],
  [{ type: 'float', value: -Infinity }, XSD, 'float', [{ kind: 'text', type: 'Float', value: -Infinity }]],
  [{ type: 'double', value: 0.1 }, XSD, 'double', [{ kind: 'text', type: 'Double', value: 0.1 }]],
  [{ type: 'double', value: 0.5 }, XSD, 'double', [{ kind: 'text', type: 'Float', value: 0.5 }]],
  [{ type: 'double', value: NaN }, XSD, 'double', [{ kind: 'text', type: 'Double', value: NaN }]],
  [{ type: 'boolean', value: false }, XSD, 'boolean', [{ kind: 'text', type: 'False' }]],
  [{ type: 'string', value: 'hello' }, XSD, 'string', [stringText('hello')]],
  [{ type: 'string', value: '' }, XSD, 'string', []],
  [{ type: 'dateTime', value: '2022-01-01T00:00:00' }, XSD, 'dateTime', [dateTimeText(TICKS_2022, 0)]],
  [{ type: 'dateTime', value: '2022-01-01T00:00:00.5Z' }, XSD, 'dateTime', [dateTimeText(TICKS_2022 + 5_000_000n, 1)]],
  [{ type: 'dateTime', value: '2022-01-01T01:00:00+01:00' }, XSD, 'dateTime', [dateTimeText(TICKS_2022, 2)]],
  [{ type: 'base64Binary', value: Uint8Array.of(9) }, XSD, 'base64Binary', [bytesText(Uint8Array.of(9))]],
  [{ type: 'guid', value: GUID_A }, SER, 'guid', [stringText(GUID_A)]],
];

describe('writeReply: ReturnScalar with every ClrValue', () => {
  for (const [value, ns, type, content] of SCALARS) {
    it(`${type} ${String(value.value)}`, () => {
      const document = reply('ReturnScalar', value);
      const result = path(document, 'Envelope', 'Body', 'ReturnScalarResponse', 'ReturnScalarResult');
      // As the capture shows: i:type as a QName in b, then xmlns:b and xmlns:i.
      expect(records(result)).toEqual(
        records(
          element(
            '',
            'ReturnScalarResult',
            [attribute('i', 'type', qnameText('b', type)), xmlns('b', ns), xmlns('i', XSI)],
            content,
          ),
        ),
      );
      expect(result.attributes[0]).toMatchObject({ value: { type: 'QNameDictionary', prefix: 'b', localName: type } });
      const back = resultOf(document, 'ReturnScalar') as ClrValue;
      // A Local value comes back as its UTC instant; everything else as it was.
      expect(back).toEqual(
        type === 'dateTime' && value.value === '2022-01-01T01:00:00+01:00'
          ? { type, value: '2022-01-01T00:00:00Z' }
          : value,
      );
    });
  }

  it('falls back to text for a value its record cannot hold', () => {
    const early = reply('ReturnScalar', { type: 'dateTime', value: '0001-01-01T00:00:00+01:00' });
    expect(path(early, 'Envelope', 'Body', 'ReturnScalarResponse', 'ReturnScalarResult').children).toEqual([
      stringText('0001-01-01T00:00:00+01:00'),
    ]);
    const wide = reply('ReturnScalar', { type: 'decimal', value: '79228162514264337593543950336' });
    expect(path(wide, 'Envelope', 'Body', 'ReturnScalarResponse', 'ReturnScalarResult').children[0]).toMatchObject({
      type: 'Chars8',
    });
  });
});
