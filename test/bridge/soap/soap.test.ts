/**
 * The SOAP 1.2 / WS-Addressing / DataContract layer of the tcp-bridge (tcp-bridge/src/soap): the Mono capture's
 * requests and replies, requests for every operation as a WCF client writes them, replies for every operation read
 * back, the `object` values, nil, faults, mustUnderstand and action routing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  attribute,
  boolText,
  bytesText,
  dateTimeText,
  decimalText,
  decodeEnvelope,
  element,
  encodeEnvelope,
  formatDateTime,
  intText,
  qnameText,
  ReaderSession,
  stringText,
  textToString,
  uuidText,
  WriterSession,
  xmlns,
  type XmlContent,
  type XmlDocument,
  type XmlElement,
  type XmlText,
} from '../../../tcp-bridge/src/binary-xml/index.ts';
import { ClientFramingDecoder, ServerFramingDecoder } from '../../../tcp-bridge/src/framing/index.ts';
import {
  readRequest,
  SoapFault,
  writeFault,
  writeReply,
  type SoapRequest,
} from '../../../tcp-bridge/src/soap/index.ts';
import { SIGNATURES } from '../../../tcp-bridge/src/soap/contract-types.ts';
import { readValue } from '../../../tcp-bridge/src/soap/dc-reader.ts';
import { dataTableContent, DataTableXmlError } from '../../../tcp-bridge/src/soap/datatable-xml.ts';
import { enterScope, ROOT_SCOPE } from '../../../tcp-bridge/src/soap/tree.ts';
import { parseDateTime, parseGuid } from '../../../tcp-bridge/src/soap/xsd.ts';
import {
  EMPTY_GUID,
  IdbFault,
  OPERATIONS,
  type ClrValue,
  type FaultName,
  type OperationName,
  type Operations,
} from '../../../src/idb/contract.ts';
import { escapeAttribute, escapeText, type DataCell, type DataColumn } from '../../../src/idb/datatable.ts';
import { writeDataTable } from '../../../src/idb/datatable-writer.ts';
import { readTcpConversation } from '../../support/nettcp/pcap.ts';
import {
  adoptKeys,
  ANONYMOUS,
  child,
  contractRoot,
  DC,
  elements,
  member,
  MESSAGE_ID,
  nil,
  param,
  path,
  records,
  request,
  SER,
  SOAP,
  TEMPURI,
  text,
  textOf,
  typed,
  wire,
  WSA,
  XSD,
  XSI,
} from '../../support/nettcp/soap.ts';

const OPTIONS = { serviceNamespace: TEMPURI };
const FAULT_ACTION = `${WSA}/soap/fault`;

/** readRequest's SoapFault, or a failure when it accepts the document. */
function refusal(document: XmlDocument, options = OPTIONS): SoapFault {
  try {
    readRequest(document, options);
  } catch (error) {
    if (error instanceof SoapFault) return error;
    throw error;
  }
  throw new Error('the request was accepted');
}

function expectInvalidArgument(document: XmlDocument, reason?: RegExp): SoapFault {
  const fault = refusal(document);
  expect(fault).toMatchObject({ code: 'Sender', subcode: { name: 'InvalidArgument', namespace: TEMPURI } });
  if (reason) expect(fault.reason).toMatch(reason);
  return fault;
}

/** Walks down by local names, entering each element's xmlns scope. */
function scoped(root: XmlDocument, ...names: string[]): { element: XmlElement; scope: ReturnType<typeof enterScope> } {
  let scope = ROOT_SCOPE;
  let at: XmlElement | XmlDocument = root;
  for (const name of names) {
    const next = child(at, name);
    scope = enterScope(scope, next);
    at = next;
  }
  return { element: at as XmlElement, scope };
}

/** An operation's result read back from a reply with the request-side reader (the same DataContract rules). */
function resultOf(reply: XmlDocument, operation: OperationName): unknown {
  const { element: result, scope } = scoped(reply, 'Envelope', 'Body', `${operation}Response`, `${operation}Result`);
  return readValue(SIGNATURES[operation].result, result, scope);
}

const reply = <K extends OperationName>(
  operation: K,
  result: Operations[K]['result'],
  addressing = { messageId: MESSAGE_ID, replyTo: ANONYMOUS },
) => wire(writeReply(addressing, operation, result, OPTIONS));

// ---------------------------------------------------------------------------------------------------------------

describe('SOAP layer on the Mono capture (SecurityMode.None, Heartbeat and ReturnScalar channels)', () => {
  const pcap = new Uint8Array(
    readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'nettcp', 'mono-none.pcap')),
  );
  /** Requests and replies of the capture's `index`th channel (test/fixtures/nettcp/README.md). */
  const channel = (index: number) => {
    const conversation = readTcpConversation(pcap, index);
    const decoder = new ServerFramingDecoder({ acceptVia: () => true });
    const requests = decoder.push(conversation.client).flatMap((e) => (e.type === 'sizedEnvelope' ? [e.payload] : []));
    const replies = new ClientFramingDecoder()
      .push(conversation.server)
      .flatMap((e) => (e.type === 'sizedEnvelope' ? [e.payload] : []));
    const inbound = new ReaderSession();
    const outbound = new ReaderSession();
    return {
      via: `net.tcp://127.0.0.1:${conversation.serverPort}/IDBService`,
      requestDocs: requests.map((p) => decodeEnvelope(p, inbound).document),
      replies,
      replyEnvelopes: replies.map((p) => decodeEnvelope(p, outbound)),
    };
  };
  const heartbeats = channel(0);
  const scalars = channel(1);
  const messageIdOf = (document: XmlDocument): string =>
    textToString(path(document, 'Envelope', 'Header', 'MessageID').children[0] as XmlText);

  it('reads every captured request: action, operation, arguments, MessageID, ReplyTo, To', () => {
    const expected: [typeof heartbeats, OperationName, unknown][] = [
      [heartbeats, 'Heartbeat', {}],
      [heartbeats, 'Heartbeat', {}],
      [scalars, 'ReturnScalar', { requestId: EMPTY_GUID, sql: 'SELECT 42', parameters: null }],
      [
        scalars,
        'ReturnScalar',
        {
          requestId: EMPTY_GUID,
          sql: 'SELECT @x',
          parameters: [
            { Name: '@x', Value: { type: 'string', value: 'ignored' } },
            { Name: 'y', Value: { type: 'int', value: 7 } },
          ],
        },
      ],
    ];
    const documents = [...heartbeats.requestDocs, ...scalars.requestDocs];
    expect(documents).toHaveLength(4);
    documents.forEach((document, i) => {
      const [from, operation, args] = expected[i]!;
      const messageId = messageIdOf(document);
      expect(messageId).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
      expect(readRequest(document, OPTIONS), `request ${i}`).toEqual({
        action: `http://tempuri.org/IIDBService/${operation}`,
        messageId,
        replyTo: ANONYMOUS,
        to: from.via,
        operation,
        args,
      });
    });
  });

  const ours = (from: typeof heartbeats, i: number, operation: OperationName, result: unknown): XmlDocument =>
    writeReply(readRequest(from.requestDocs[i]!, OPTIONS), operation, result as never, OPTIONS);
  const answers: [typeof heartbeats, number, OperationName, unknown][] = [
    [heartbeats, 0, 'Heartbeat', true],
    [heartbeats, 1, 'Heartbeat', true],
    [scalars, 0, 'ReturnScalar', { type: 'int', value: 42 }],
    [scalars, 1, 'ReturnScalar', { type: 'int', value: 42 }],
  ];

  it('writes the replies Mono wrote, record for record (Heartbeat true, ReturnScalar a boxed Int32)', () => {
    for (const [from, i, operation, result] of answers)
      expect(records(ours(from, i, operation, result)), `${operation} ${i}`).toEqual(
        records(from.replyEnvelopes[i]!.document),
      );
  });

  it('writes those replies byte for byte given the same dictionary choices (the session strings are the transport’s)', () => {
    for (const from of [heartbeats, scalars]) {
      const session = new WriterSession();
      from.replyEnvelopes.forEach(({ strings, document }, i) => {
        const [, , operation, result] = answers.find(([f, n]) => f === from && n === i)!;
        const tree = ours(from, i, operation, result);
        adoptKeys(tree.children[0]!, document.children[0]!);
        const bytes = encodeEnvelope(tree, session, { strings, useDictionaries: false });
        expect(Buffer.from(bytes).toString('hex'), `${operation} ${i}`).toBe(
          Buffer.from(from.replies[i]!).toString('hex'),
        );
      });
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------

const GUID_A = '0f8fad5b-d9cb-469f-a165-70867728950e';
const GUID_B = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const GUID_C = 'a8098c1a-f86e-11da-bd1a-00112444be1e';
/** 2022-01-01T00:00:00 as DateTime ticks. */
const TICKS_2022 = 0x08d9ccb9a7734000n;

const sqlParams = (params: XmlElement[] | null): XmlElement[] => [
  param('requestId', text(GUID_A)),
  param('sql', text('select @id')),
  params === null ? param('parameters', [], [nil(), xmlns('i', XSI)]) : param('parameters', params, contractRoot()),
];

const queryParameter = (name: string, value: XmlElement): XmlElement =>
  member('QueryParameter', [member('Name', text(name)), value]);

const fileData = (): XmlElement =>
  param(
    'file',
    [
      member('Content', [bytesText(Uint8Array.of(1, 2, 3))]),
      member('ContentType', text('text/plain')),
      member('CreatedUtc', [dateTimeText(TICKS_2022, 1)]),
      member('FileId', text(GUID_B)),
      member('FileName', text('a.txt')),
      member('Length', [intText(3)]),
      member('ModifiedUtc', [dateTimeText(TICKS_2022, 1)]),
      member('Sha256', [], [nil()]),
    ],
    contractRoot(),
  );

const fileValue = {
  Content: Uint8Array.of(1, 2, 3),
  ContentType: 'text/plain',
  CreatedUtc: '2022-01-01T00:00:00Z',
  FileId: GUID_B,
  FileName: 'a.txt',
  Length: 3n,
  ModifiedUtc: '2022-01-01T00:00:00Z',
  Sha256: null,
};

const indexField = (name: string, value: string | null): XmlElement =>
  member('IndexField', [
    member('Name', text(name)),
    value === null ? member('Value', [], [nil()]) : member('Value', text(value)),
  ]);

/** Every operation as a .NET client writes it, and the arguments it carries. */
const CALLS: { [K in OperationName]: [XmlElement[], Operations[K]['args']] } = {
  Heartbeat: [[], {}],
  CreateDatabaseRequest: [[param('database', text('reports'))], { database: 'reports' }],
  CloseDatabaseRequest: [
    [param('requestId', text(GUID_A)), param('commit', [boolText(true)])],
    { requestId: GUID_A, commit: true },
  ],
  ReturnDatatable: [
    sqlParams([queryParameter('@id', typed('Value', 'int', [intText(7)]))]),
    { requestId: GUID_A, sql: 'select @id', parameters: [{ Name: '@id', Value: { type: 'int', value: 7 } }] },
  ],
  ReturnScalar: [sqlParams(null), { requestId: GUID_A, sql: 'select @id', parameters: null }],
  ExecuteNonQuery: [
    sqlParams([
      queryParameter('a', typed('Value', 'string', text('x'))),
      queryParameter('b', member('Value', [], [nil()])),
    ]),
    {
      requestId: GUID_A,
      sql: 'select @id',
      parameters: [
        { Name: 'a', Value: { type: 'string', value: 'x' } },
        { Name: 'b', Value: null },
      ],
    },
  ],
  NewFile: [[fileData()], { file: fileValue }],
  UpdateFile: [[fileData()], { file: fileValue }],
  GetFile: [[param('fileId', text(GUID_B))], { fileId: GUID_B }],
  DeleteFile: [[param('fileId', text(GUID_B))], { fileId: GUID_B }],
  GetDocumentByDocumentId: [[param('documentId', text(GUID_C))], { documentId: GUID_C }],
  GetDocumentByContainerId: [[param('containerId', text(GUID_C))], { containerId: GUID_C }],
  NewFileIndex: [
    [
      param(
        'index',
        [
          member('ContainerId', text(GUID_A)),
          member('DocumentId', text(EMPTY_GUID)),
          member('Fields', [indexField('Kind', 'invoice'), indexField('Note', null)]),
          member('FileId', text(GUID_B)),
          member('Title', text('Invoice 7')),
        ],
        contractRoot(),
      ),
    ],
    {
      index: {
        ContainerId: GUID_A,
        DocumentId: EMPTY_GUID,
        Fields: [
          { Name: 'Kind', Value: 'invoice' },
          { Name: 'Note', Value: null },
        ],
        FileId: GUID_B,
        Title: 'Invoice 7',
      },
    },
  ],
};

describe('readRequest: every operation as a WCF client sends it', () => {
  for (const operation of OPERATIONS) {
    it(operation, () => {
      const [params, args] = CALLS[operation];
      const read: SoapRequest = readRequest(wire(request(operation, params)), OPTIONS);
      expect(read).toEqual({
        action: `${TEMPURI}IIDBService/${operation}`,
        messageId: MESSAGE_ID,
        replyTo: ANONYMOUS,
        to: 'net.tcp://localhost:8808/IDBService',
        operation,
        args,
      });
    });
  }

  it('routes by the action rule with a namespace that does not end in "/"', () => {
    const options = { serviceNamespace: 'urn:example:idb' };
    const document = request('GetFile', [param('fileId', text(GUID_B))], { ns: 'urn:example:idb' });
    expect(readRequest(wire(document), options)).toMatchObject({
      action: 'urn:example:idb/IIDBService/GetFile',
      operation: 'GetFile',
      args: { fileId: GUID_B },
    });
    // The same message under the other namespace is not this service's.
    expect(refusal(wire(document))).toMatchObject({ subcode: { name: 'ActionNotSupported' } });
  });

  it('reads members in any order, skips unknown elements, refuses a member given twice, defaults missing ones', () => {
    const reversed = [...CALLS.NewFileIndex[0][0]!.children].reverse() as XmlElement[];
    const index = param('index', [member('Unknown', text('x')), ...reversed], contractRoot());
    expect(readRequest(wire(request('NewFileIndex', [index])), OPTIONS).args).toEqual(CALLS.NewFileIndex[1]);
    const twice = param('file', [member('FileName', text('a')), member('FileName', text('b'))], contractRoot());
    expectInvalidArgument(wire(request('NewFile', [twice])), /FileName.*twice/);
    const sparse = param('file', [member('FileName', text('a'))], contractRoot());
    expect(readRequest(wire(request('NewFile', [sparse])), OPTIONS).args).toEqual({
      file: {
        Content: null,
        ContentType: null,
        CreatedUtc: '0001-01-01T00:00:00',
        FileId: EMPTY_GUID,
        FileName: 'a',
        Length: 0n,
        ModifiedUtc: '0001-01-01T00:00:00',
        Sha256: null,
      },
    });
    // Parameters too: in any order, missing ones defaulted (WCF leaves a missing part its default).
    const args = readRequest(wire(request('CloseDatabaseRequest', [param('commit', [boolText(true)])])), OPTIONS).args;
    expect(args).toEqual({ requestId: EMPTY_GUID, commit: true });
  });

  it('reads values written as text as well as typed records', () => {
    const file = param(
      'file',
      [
        member('Content', text('AQID')),
        member('CreatedUtc', text('2022-01-01T00:00:00.1234567+01:00')),
        member('FileId', text(`{${GUID_B.toUpperCase()}}`)),
        member('Length', text(' 9000000000 ')),
        member('ModifiedUtc', [dateTimeText(TICKS_2022, 2)]),
      ],
      contractRoot(),
    );
    expect(readRequest(wire(request('UpdateFile', [file])), OPTIONS).args).toEqual({
      file: {
        Content: Uint8Array.of(1, 2, 3),
        ContentType: null,
        CreatedUtc: '2022-01-01T00:00:00.1234567+01:00',
        FileId: GUID_B,
        FileName: null,
        Length: 9000000000n,
        // A Local DateTime record holds the UTC instant; it reads as that instant with Z.
        ModifiedUtc: '2022-01-01T00:00:00Z',
        Sha256: null,
      },
    });
    const close = [param('requestId', [uuidText(GUID_A)]), param('commit', text('0'))];
    expect(readRequest(wire(request('CloseDatabaseRequest', close)), OPTIONS).args).toEqual({
      requestId: GUID_A,
      commit: false,
    });
    // Content split over several Bytes records (as XmlBinaryWriter writes large arrays) is one array.
    const chunked = param(
      'file',
      [member('Content', [bytesText(Uint8Array.of(1)), bytesText(Uint8Array.of(2, 3))])],
      contractRoot(),
    );
    expect(
      (readRequest(wire(request('NewFile', [chunked])), OPTIONS).args as { file: { Content: Uint8Array } }).file
        .Content,
    ).toEqual(Uint8Array.of(1, 2, 3));
  });

  it('refuses values that are not of their type', () => {
    const cases: [string, XmlElement[]][] = [
      ['requestId', [param('requestId', text('not-a-guid')), param('commit', [boolText(true)])]],
      ['commit', [param('requestId', text(GUID_A)), param('commit', text('yes'))]],
      ['Length', [param('file', [member('Length', text('12.5'))], contractRoot())]],
      ['Length', [param('file', [member('Length', text('9223372036854775808'))], contractRoot())]],
      ['Content', [param('file', [member('Content', text('AQI'))], contractRoot())]],
      ['CreatedUtc', [param('file', [member('CreatedUtc', text('2022-02-30T00:00:00'))], contractRoot())]],
      ['CreatedUtc', [param('file', [member('CreatedUtc', text('2022-01-01'))], contractRoot())]],
      ['FileName', [param('file', [member('FileName', [element('b', 'x')])], contractRoot())]],
    ];
    const operations = { requestId: 'CloseDatabaseRequest', commit: 'CloseDatabaseRequest' } as Record<
      string,
      OperationName
    >;
    for (const [what, params] of cases) {
      const fault = expectInvalidArgument(wire(request(operations[what] ?? 'NewFile', params)));
      expect(fault.addressing.messageId, what).toBe(MESSAGE_ID);
    }
  });

  it('refuses an array holding anything but its items', () => {
    const wrong = sqlParams([member('IndexField', [])]);
    expectInvalidArgument(wire(request('ReturnScalar', wrong)), /parameters.*QueryParameter/);
  });
});

// ---------------------------------------------------------------------------------------------------------------

/** ReturnScalar with one parameter whose Value is `value`; the arguments' one ClrValue read back. */
function clrValueOf(value: XmlElement, { onWire = true } = {}): ClrValue | null {
  const document = request('ReturnScalar', sqlParams([queryParameter('p', value)]));
  const args = readRequest(onWire ? wire(document) : document, OPTIONS).args as Operations['ReturnScalar']['args'];
  return args.parameters![0]!.Value;
}

describe('object values: every i:type, as records and as text', () => {
  const cases: [string, string, XmlContent[], ClrValue][] = [
    ['int record', 'int', [intText(-7)], { type: 'int', value: -7 }],
    ['int text', 'int', text(' 2147483647 '), { type: 'int', value: 2147483647 }],
    ['short', 'short', [intText(-32768)], { type: 'short', value: -32768 }],
    ['long record', 'long', [intText(-(2n ** 63n))], { type: 'long', value: -(2n ** 63n) }],
    ['long text', 'long', text('9007199254740993'), { type: 'long', value: 9007199254740993n }],
    ['string', 'string', text('héllo ✓'), { type: 'string', value: 'héllo ✓' }],
    ['empty string', 'string', [], { type: 'string', value: '' }],
    ['decimal record', 'decimal', [decimalText('12.50')], { type: 'decimal', value: '12.50' }],
    ['decimal text', 'decimal', text('+.5'), { type: 'decimal', value: '0.5' }],
    ['double record', 'double', [{ kind: 'text', type: 'Double', value: 0.1 }], { type: 'double', value: 0.1 }],
    ['double text', 'double', text('1.5E+300'), { type: 'double', value: 1.5e300 }],
    ['double INF', 'double', text('-INF'), { type: 'double', value: -Infinity }],
    ['double NaN', 'double', text('NaN'), { type: 'double', value: NaN }],
    [
      'float record',
      'float',
      [{ kind: 'text', type: 'Float', value: Math.fround(0.1) }],
      { type: 'float', value: Math.fround(0.1) },
    ],
    ['float text', 'float', text('0.1'), { type: 'float', value: Math.fround(0.1) }],
    ['float as an integer record', 'float', [intText(3)], { type: 'float', value: 3 }],
    ['boolean record', 'boolean', [boolText(false)], { type: 'boolean', value: false }],
    ['boolean text', 'boolean', text('1'), { type: 'boolean', value: true }],
    [
      'dateTime Utc record',
      'dateTime',
      [dateTimeText(TICKS_2022 + 1234567n, 1)],
      { type: 'dateTime', value: '2022-01-01T00:00:00.1234567Z' },
    ],
    [
      'dateTime Unspecified record',
      'dateTime',
      [dateTimeText(TICKS_2022, 0)],
      { type: 'dateTime', value: '2022-01-01T00:00:00' },
    ],
    [
      'dateTime text with offset',
      'dateTime',
      text('2022-06-01T12:00:00+02:00'),
      { type: 'dateTime', value: '2022-06-01T12:00:00+02:00' },
    ],
    [
      'base64Binary record',
      'base64Binary',
      [bytesText(Uint8Array.of(0, 255))],
      { type: 'base64Binary', value: Uint8Array.of(0, 255) },
    ],
    ['base64Binary text', 'base64Binary', text('AP8='), { type: 'base64Binary', value: Uint8Array.of(0, 255) }],
    ['empty base64Binary', 'base64Binary', [], { type: 'base64Binary', value: new Uint8Array(0) }],
  ];
  for (const [name, type, content, expected] of cases) {
    it(name, () => expect(clrValueOf(typed('Value', type, content))).toEqual(expected));
  }

  it('guid, in the Serialization namespace (text, and the Guid record)', () => {
    expect(clrValueOf(typed('Value', 'guid', text(GUID_A.toUpperCase()), SER))).toEqual({
      type: 'guid',
      value: GUID_A,
    });
    expect(clrValueOf(typed('Value', 'guid', [uuidText(GUID_A)], SER))).toEqual({ type: 'guid', value: GUID_A });
  });

  it('resolves the QName prefix through the declarations in scope, wherever they are', () => {
    const onValue = member('Value', [intText(5)], [attribute('i', 'type', 'x:int'), xmlns('x', XSD)]);
    expect(clrValueOf(onValue)).toEqual({ type: 'int', value: 5 });
    // Declared on the parameters element, and as a QNameDictionary record.
    const parameters = param(
      'parameters',
      [queryParameter('p', member('Value', [intText(5)], [attribute('i', 'type', qnameText('d', 'long'))]))],
      [...contractRoot(), xmlns('d', XSD)],
    );
    const document = request('ReturnScalar', [param('requestId', text(GUID_A)), param('sql', text('x')), parameters]);
    expect(
      (readRequest(wire(document), OPTIONS).args as Operations['ReturnScalar']['args']).parameters![0]!.Value,
    ).toEqual({ type: 'long', value: 5n });
    // The default namespace: an unprefixed QName.
    const unprefixed = member('Value', text('true'), [attribute('i', 'type', 'boolean'), xmlns('', XSD)]);
    expect(clrValueOf(unprefixed)).toEqual({ type: 'boolean', value: true });
    // A prefix redeclared closer in wins (x is ser on the parameters, XSD on the Value).
    const shadowedValue = member('Value', text('x'), [attribute('i', 'type', 'x:string'), xmlns('x', XSD)]);
    const shadowing = param('parameters', [queryParameter('p', shadowedValue)], [...contractRoot(), xmlns('x', SER)]);
    const shadowedDoc = request('ReturnScalar', [param('requestId', text(GUID_A)), param('sql', text('x')), shadowing]);
    expect(
      (readRequest(wire(shadowedDoc), OPTIONS).args as Operations['ReturnScalar']['args']).parameters![0]!.Value,
    ).toEqual({ type: 'string', value: 'x' });
    // Redeclaring the member's own prefix moves the member out of the contracts namespace: an unknown element, skipped.
    expect(clrValueOf(member('Value', text('x'), [attribute('i', 'type', 'b:string'), xmlns('b', XSD)]))).toBeNull();
  });

  it('refuses an i:type it does not know, in the wrong namespace, with an undeclared prefix, or missing', () => {
    const wrong: [XmlElement, RegExp][] = [
      [typed('Value', 'char', [intText(65)], SER), /char/],
      [typed('Value', 'anyURI', text('urn:x')), /anyURI/],
      [typed('Value', 'duration', text('PT1S'), SER), /duration/],
      [typed('Value', 'int', [intText(1)], SER), /Serialization.*int/],
      [typed('Value', 'guid', text(GUID_A), XSD), /XMLSchema\}guid/],
      [typed('Value', 'toString', text('x')), /toString/],
      [member('Value', [intText(1)], [attribute('i', 'type', 'q:int')]), /prefix 'q'/],
      [member('Value', [intText(1)]), /without i:type/],
      [member('Value', [intText(1)], [attribute('i', 'type', 'a:b:c'), xmlns('a', XSD)]), /qualified name/],
    ];
    for (const [value, reason] of wrong) {
      expectInvalidArgument(wire(request('ReturnScalar', sqlParams([queryParameter('p', value)]))), reason);
    }
  });

  it('refuses values outside their type', () => {
    const bad: XmlElement[] = [
      typed('Value', 'int', text('2147483648')),
      typed('Value', 'short', [intText(40000)]),
      typed('Value', 'int', text('1.0')),
      typed('Value', 'decimal', text('1e5')),
      typed('Value', 'decimal', text('79228162514264337593543950336')),
      typed('Value', 'double', text('Infinity')),
      typed('Value', 'boolean', text('True')),
      typed('Value', 'dateTime', text('2022-01-01T24:00:00')),
      typed('Value', 'base64Binary', text('A===')),
      typed('Value', 'guid', text('0f8fad5b-d9cb-469f-a165-70867728950'), SER),
      typed('Value', 'int', [element('b', 'x')]),
    ];
    for (const value of bad)
      expectInvalidArgument(wire(request('ReturnScalar', sqlParams([queryParameter('p', value)]))));
  });
});

describe('nil', () => {
  it('is accepted wherever the type is a reference type', () => {
    const n = (name: string) => member(name, [], [nil()]);
    expect(
      readRequest(wire(request('CreateDatabaseRequest', [param('database', [], [nil(), xmlns('i', XSI)])])), OPTIONS)
        .args,
    ).toEqual({ database: null });
    const allNil = param('sql', [], [nil(), xmlns('i', XSI)]);
    expect(
      readRequest(
        wire(
          request('ExecuteNonQuery', [
            param('requestId', text(GUID_A)),
            allNil,
            param('parameters', [], [nil(), xmlns('i', XSI)]),
          ]),
        ),
        OPTIONS,
      ).args,
    ).toEqual({
      requestId: GUID_A,
      sql: null,
      parameters: null,
    });
    expect(
      readRequest(
        wire(request('ReturnScalar', sqlParams([member('QueryParameter', [n('Name'), n('Value')])]))),
        OPTIONS,
      ).args,
    ).toMatchObject({
      parameters: [{ Name: null, Value: null }],
    });
    expect(readRequest(wire(request('NewFile', [param('file', [], [nil(), xmlns('i', XSI)])])), OPTIONS).args).toEqual({
      file: null,
    });
    const file = param('file', [n('Content'), n('ContentType'), n('FileName'), n('Sha256')], contractRoot());
    expect(readRequest(wire(request('UpdateFile', [file])), OPTIONS).args).toMatchObject({
      file: { Content: null, ContentType: null, FileName: null, Sha256: null },
    });
    expect(
      readRequest(wire(request('NewFileIndex', [param('index', [], [nil(), xmlns('i', XSI)])])), OPTIONS).args,
    ).toEqual({ index: null });
    const index = param('index', [n('Fields'), n('Title'), member('FileId', text(GUID_B))], contractRoot());
    expect(readRequest(wire(request('NewFileIndex', [index])), OPTIONS).args).toMatchObject({
      index: { Fields: null, Title: null },
    });
    // i:nil="1" and i:nil="false" (a value present).
    const one = param('database', [], [attribute('i', 'nil', '1'), xmlns('i', XSI)]);
    expect(readRequest(wire(request('CreateDatabaseRequest', [one])), OPTIONS).args).toEqual({ database: null });
    const notNil = param('database', text('x'), [attribute('i', 'nil', 'false'), xmlns('i', XSI)]);
    expect(readRequest(wire(request('CreateDatabaseRequest', [notNil])), OPTIONS).args).toEqual({ database: 'x' });
  });

  it('is refused for value types, for array items, and when it is not a boolean', () => {
    const nilParam = (name: string) => param(name, [], [nil(), xmlns('i', XSI)]);
    expectInvalidArgument(
      wire(request('CloseDatabaseRequest', [nilParam('requestId'), param('commit', [boolText(true)])])),
      /requestId.*nil/,
    );
    expectInvalidArgument(
      wire(request('CloseDatabaseRequest', [param('requestId', text(GUID_A)), nilParam('commit')])),
      /commit.*nil/,
    );
    for (const name of ['FileId', 'Length', 'CreatedUtc']) {
      expectInvalidArgument(
        wire(request('NewFile', [param('file', [member(name, [], [nil()])], contractRoot())])),
        new RegExp(`${name}.*nil`),
      );
    }
    expectInvalidArgument(
      wire(request('ReturnScalar', sqlParams([member('QueryParameter', [], [nil()])]))),
      /item.*nil/,
    );
    expectInvalidArgument(
      wire(request('CreateDatabaseRequest', [param('database', [], [attribute('i', 'nil', 'yes'), xmlns('i', XSI)])])),
      /nil="yes"/,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------

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

describe('writeReply: ReturnScalar with every ClrValue', () => {
  const cases: [ClrValue, string, string, XmlText[]][] = [
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
    [
      { type: 'dateTime', value: '2022-01-01T00:00:00.5Z' },
      XSD,
      'dateTime',
      [dateTimeText(TICKS_2022 + 5_000_000n, 1)],
    ],
    [{ type: 'dateTime', value: '2022-01-01T01:00:00+01:00' }, XSD, 'dateTime', [dateTimeText(TICKS_2022, 2)]],
    [{ type: 'base64Binary', value: Uint8Array.of(9) }, XSD, 'base64Binary', [bytesText(Uint8Array.of(9))]],
    [{ type: 'guid', value: GUID_A }, SER, 'guid', [stringText(GUID_A)]],
  ];
  for (const [value, ns, type, content] of cases) {
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

// ---------------------------------------------------------------------------------------------------------------

/** The parts of a fault reply a WCF client reads, resolved: code chain, reason, language, headers. */
function readFault(document: XmlDocument) {
  const { element: fault, scope } = scoped(document, 'Envelope', 'Body', 'Fault');
  const codes: { name: string; namespace: string }[] = [];
  let code: XmlElement | undefined = child(fault, 'Code');
  let codeScope = enterScope(scope, code);
  while (code) {
    const value = child(code, 'Value');
    const valueScope = enterScope(codeScope, value);
    const [prefix, name] = textOf(value).split(':') as [string, string];
    codes.push({ name, namespace: valueScope.get(prefix)! });
    code = code.children.find((c): c is XmlElement => c.kind === 'element' && c.localName === 'Subcode');
    if (code) codeScope = enterScope(codeScope, code);
  }
  const text = path(fault, 'Reason', 'Text');
  const header = path(document, 'Envelope', 'Header');
  return {
    codes,
    reason: textOf(text),
    lang: text.attributes.map((a) =>
      a.kind === 'attribute' ? `${a.prefix}:${a.localName}=${textToString(a.value)}` : '',
    ),
    action: textOf(child(header, 'Action')),
    relatesTo: header.children.some((c) => c.kind === 'element' && c.localName === 'RelatesTo')
      ? textOf(child(header, 'RelatesTo'))
      : undefined,
    headers: elements(header).map((e) => e.localName),
    parts: elements(fault).map((e) => e.localName),
  };
}

describe('writeFault', () => {
  const names: FaultName[] = [
    'AccessDenied',
    'UnknownDatabaseRequest',
    'UnknownDatabase',
    'SqlError',
    'InvalidArgument',
    'FileNotFound',
    'QuotaExceeded',
    'Timeout',
    'NotSupported',
    'InternalError',
  ];
  for (const name of names) {
    it(`${name}: Sender/Receiver with the fault name in the service namespace as Subcode`, () => {
      const fault = new IdbFault(name, `${name} happened.`);
      const document = wire(writeFault({ messageId: MESSAGE_ID, replyTo: ANONYMOUS }, fault, OPTIONS));
      expect(readFault(document)).toEqual({
        codes: [
          { name: fault.code, namespace: SOAP },
          { name, namespace: TEMPURI },
        ],
        reason: `${name} happened.`,
        lang: ['xml:lang=en-US'],
        action: FAULT_ACTION,
        relatesTo: MESSAGE_ID,
        headers: ['Action', 'RelatesTo'],
        parts: ['Code', 'Reason'],
      });
    });
  }

  it('is shaped as WCF writes it: xmlns:a on the subcode Value, QName records, xml:lang on Text', () => {
    const document = writeFault({ messageId: MESSAGE_ID }, new IdbFault('AccessDenied', 'No.'), {
      serviceNamespace: 'urn:idb',
    });
    const fault = path(document, 'Envelope', 'Body', 'Fault');
    expect(records(fault)).toEqual(
      records(
        element(
          's',
          'Fault',
          [],
          [
            element(
              's',
              'Code',
              [],
              [
                element('s', 'Value', [], [qnameText('s', 'Sender')]),
                element(
                  's',
                  'Subcode',
                  [],
                  [element('s', 'Value', [xmlns('a', 'urn:idb')], [qnameText('a', 'AccessDenied')])],
                ),
              ],
            ),
            element(
              's',
              'Reason',
              [],
              [element('s', 'Text', [attribute('xml', 'lang', 'en-US')], [stringText('No.')])],
            ),
          ],
        ),
      ),
    );
    // On the wire the subcode's own xmlns:a shadows the envelope's a (addressing) inside that Value only.
    expect(readFault(wire(document)).codes[1]).toEqual({ name: 'AccessDenied', namespace: 'urn:idb' });
  });

  it('writes a fault without a request: no RelatesTo', () => {
    const result = readFault(wire(writeFault(undefined, new IdbFault('InternalError', 'Failed.'), OPTIONS)));
    expect(result).toMatchObject({
      relatesTo: undefined,
      headers: ['Action'],
      codes: [{ name: 'Receiver' }, { name: 'InternalError' }],
    });
  });
});

describe('readRequest refusals, written back as WCF would', () => {
  const heartbeat = (options: Parameters<typeof request>[2] = {}) => wire(request('Heartbeat', [], options));

  it('an unknown action: ActionNotSupported in the addressing namespace, related to the request', () => {
    const fault = refusal(heartbeat({ action: `${TEMPURI}IIDBService/DropEverything` }));
    expect(fault).toMatchObject({
      code: 'Sender',
      subcode: { name: 'ActionNotSupported', namespace: WSA },
      addressing: { messageId: MESSAGE_ID, replyTo: ANONYMOUS },
    });
    expect(fault.reason).toContain(`'${TEMPURI}IIDBService/DropEverything'`);
    expect(fault.reason).toContain('ContractFilter mismatch');
    const written = readFault(wire(writeFault(undefined, fault, OPTIONS)));
    expect(written).toMatchObject({
      codes: [
        { name: 'Sender', namespace: SOAP },
        { name: 'ActionNotSupported', namespace: WSA },
      ],
      relatesTo: MESSAGE_ID,
      action: FAULT_ACTION,
    });
    // Case matters, and so does the contract name.
    for (const action of [
      `${TEMPURI}IIDBService/heartbeat`,
      `${TEMPURI}IDBService/Heartbeat`,
      `${TEMPURI}IIDBService/`,
      'Heartbeat',
    ]) {
      expect(refusal(heartbeat({ action })).subcode?.name, action).toBe('ActionNotSupported');
    }
  });

  it('a missing Action or MessageID: MessageAddressingHeaderRequired with the header in Detail', () => {
    const noAction = refusal(heartbeat({ action: null }));
    expect(noAction).toMatchObject({
      code: 'Sender',
      subcode: { name: 'MessageAddressingHeaderRequired', namespace: WSA },
      problemHeader: { name: 'Action', namespace: WSA },
    });
    const document = wire(writeFault(undefined, noAction, OPTIONS));
    expect(readFault(document)).toMatchObject({ parts: ['Code', 'Reason', 'Detail'], relatesTo: MESSAGE_ID });
    const detail = path(document, 'Envelope', 'Body', 'Fault', 'Detail', 'ProblemHeaderQName');
    expect(detail).toMatchObject({
      prefix: 'a',
      namespace: WSA,
      children: [{ type: 'QNameDictionary', prefix: 'a', localName: 'Action' }],
    });
    const noId = refusal(heartbeat({ messageId: null }));
    expect(noId).toMatchObject({
      subcode: { name: 'MessageAddressingHeaderRequired' },
      problemHeader: { name: 'MessageID' },
      addressing: {},
    });
    expect(noId.reason).toMatch(/MessageID/);
  });

  it('an addressing header twice: InvalidAddressingHeader / InvalidCardinality', () => {
    const twice = heartbeat({ headers: [element('a', 'MessageID', [], [stringText('urn:uuid:x')])] });
    const fault = refusal(twice);
    expect(fault).toMatchObject({
      code: 'Sender',
      subcode: {
        name: 'InvalidAddressingHeader',
        namespace: WSA,
        subcode: { name: 'InvalidCardinality', namespace: WSA },
      },
    });
    expect(readFault(wire(writeFault(undefined, fault, OPTIONS))).codes.map((c) => c.name)).toEqual([
      'Sender',
      'InvalidAddressingHeader',
      'InvalidCardinality',
    ]);
    expect(refusal(heartbeat({ headers: [element('a', 'ReplyTo', [], [])] })).subcode?.name).toBe(
      'InvalidAddressingHeader',
    );
  });

  it('mustUnderstand headers it does not understand: MustUnderstand with NotUnderstood headers', () => {
    const security = element('o', 'Security', [attribute('s', 'mustUnderstand', '1'), xmlns('o', 'urn:sec')]);
    const fault = refusal(heartbeat({ headers: [security] }));
    expect(fault).toMatchObject({
      code: 'MustUnderstand',
      subcode: undefined,
      notUnderstood: [{ name: 'Security', namespace: 'urn:sec' }],
      addressing: { messageId: MESSAGE_ID },
    });
    expect(fault.reason).toMatch(/^The header 'Security' from the namespace 'urn:sec' was not understood/);
    const document = wire(writeFault(undefined, fault, OPTIONS));
    expect(readFault(document)).toMatchObject({
      codes: [{ name: 'MustUnderstand', namespace: SOAP }],
      headers: ['Action', 'NotUnderstood', 'RelatesTo'],
    });
    const notUnderstood = path(document, 'Envelope', 'Header', 'NotUnderstood');
    expect(notUnderstood).toMatchObject({ prefix: 's', namespace: SOAP });
    expect(records(notUnderstood.attributes)).toEqual(
      records([attribute('', 'qname', qnameText('b', 'Security')), xmlns('b', 'urn:sec')]),
    );

    // "true" as text and as a record, any addressing header the brief does not list (FaultTo), several at once.
    const faultTo = element(
      'a',
      'FaultTo',
      [attribute('s', 'mustUnderstand', boolText(true))],
      [element('a', 'Address', [], text(ANONYMOUS))],
    );
    const plain = element('', 'Plain', [attribute('s', 'mustUnderstand', 'true')]);
    const several = refusal(heartbeat({ headers: [faultTo, plain] }));
    expect(several.notUnderstood).toEqual([
      { name: 'FaultTo', namespace: WSA },
      { name: 'Plain', namespace: '' },
    ]);
    expect(
      records(path(wire(writeFault(undefined, several, OPTIONS)), 'Envelope', 'Header').children.slice(1, 3)),
    ).toEqual(
      records([
        element('s', 'NotUnderstood', [attribute('', 'qname', qnameText('a', 'FaultTo'))]),
        element('s', 'NotUnderstood', [attribute('', 'qname', 'Plain')]),
      ]),
    );
  });

  it('headers that need no understanding: mustUnderstand 0/false, absent, or another role', () => {
    const ignored = [
      element('o', 'A', [attribute('s', 'mustUnderstand', '0'), xmlns('o', 'urn:x')]),
      element('o', 'B', [attribute('s', 'mustUnderstand', boolText(false)), xmlns('o', 'urn:x')]),
      element('o', 'C', [xmlns('o', 'urn:x')], text('anything')),
      element('o', 'D', [
        attribute('s', 'mustUnderstand', '1'),
        attribute('s', 'role', `${SOAP}/role/none`),
        xmlns('o', 'urn:x'),
      ]),
      element('o', 'E', [
        attribute('s', 'mustUnderstand', '1'),
        attribute('s', 'role', 'urn:some-intermediary'),
        xmlns('o', 'urn:x'),
      ]),
      element('a', 'RelatesTo', [], text('urn:uuid:x')),
    ];
    expect(readRequest(heartbeat({ headers: ignored }), OPTIONS).operation).toBe('Heartbeat');
    const next = element('o', 'F', [
      attribute('s', 'mustUnderstand', '1'),
      attribute('s', 'role', `${SOAP}/role/next`),
      xmlns('o', 'urn:x'),
    ]);
    expect(refusal(heartbeat({ headers: [next] })).code).toBe('MustUnderstand');
    const odd = element('o', 'G', [attribute('s', 'mustUnderstand', 'yes'), xmlns('o', 'urn:x')]);
    expectInvalidArgument(heartbeat({ headers: [odd] }), /mustUnderstand="yes"/);
  });

  it('checks the action before mustUnderstand, and both before the body (as WCF dispatches)', () => {
    const must = element('o', 'X', [attribute('s', 'mustUnderstand', '1'), xmlns('o', 'urn:x')]);
    expect(refusal(heartbeat({ action: 'urn:nope', headers: [must] })).subcode?.name).toBe('ActionNotSupported');
    expect(refusal(heartbeat({ headers: [must], body: [] })).code).toBe('MustUnderstand');
  });

  it('a malformed envelope or body', () => {
    const soap11 = {
      children: [
        element('s', 'Envelope', [xmlns('s', 'http://schemas.xmlsoap.org/soap/envelope/')], [element('s', 'Body')]),
      ],
    };
    expect(refusal(wire(soap11))).toMatchObject({ code: 'VersionMismatch', subcode: undefined });
    expect(readFault(wire(writeFault(undefined, refusal(soap11), OPTIONS))).codes).toEqual([
      { name: 'VersionMismatch', namespace: SOAP },
    ]);
    expectInvalidArgument(heartbeat({ body: [] }), /Body is empty/);
    expectInvalidArgument(
      heartbeat({ body: [element('', 'GetFile', [xmlns('', TEMPURI)])] }),
      /<GetFile>.*not <Heartbeat>/,
    );
    expectInvalidArgument(heartbeat({ body: [element('', 'Heartbeat', [xmlns('', 'urn:other')])] }), /urn:other/);
    const noBody = { children: [element('s', 'Envelope', [xmlns('s', SOAP)], [element('s', 'Header')])] };
    expectInvalidArgument(wire(noBody), /Body/);
    const twoBodies = {
      children: [element('s', 'Envelope', [xmlns('s', SOAP)], [element('s', 'Body'), element('s', 'Body')])],
    };
    expectInvalidArgument(wire(twoBodies));
    // Text where parameters belong.
    expectInvalidArgument(heartbeat({ body: [element('', 'Heartbeat', [xmlns('', TEMPURI)], text('hello'))] }), /text/);
    // Whitespace and comments between elements are fine.
    const spaced = request('GetFile', [
      stringText('\n  '),
      { kind: 'comment', value: 'x' },
      param('fileId', text(GUID_B)),
    ]);
    expect(readRequest(wire(spaced), OPTIONS).args).toEqual({ fileId: GUID_B });
  });

  it('keeps the MessageID for a fault found in the body', () => {
    const fault = expectInvalidArgument(wire(request('GetFile', [param('fileId', text('nope'))])));
    expect(readFault(wire(writeFault(undefined, fault, OPTIONS)))).toMatchObject({
      relatesTo: MESSAGE_ID,
      codes: [{ name: 'Sender' }, { name: 'InvalidArgument', namespace: TEMPURI }],
    });
  });
});

describe('xs lexical forms', () => {
  it('turns xs:dateTime into DateTime ticks and kind and back, over the whole DateTime range', () => {
    for (const value of [
      '0001-01-01T00:00:00',
      '9999-12-31T23:59:59.9999999Z',
      '1969-12-31T23:59:59.5',
      '0099-03-01T00:00:00Z',
      '2000-02-29T12:00:00Z',
    ]) {
      const parsed = parseDateTime(value)!;
      expect(formatDateTime(parsed.ticks, parsed.dateKind), value).toBe(value);
    }
    expect(parseDateTime('2022-01-01T00:00:00')).toEqual({ ticks: TICKS_2022, dateKind: 0 });
    expect(parseDateTime('2022-01-01T01:30:00+01:30')).toEqual({ ticks: TICKS_2022, dateKind: 2 });
    for (const bad of [
      '0000-01-01T00:00:00',
      '2001-02-29T00:00:00',
      '2022-01-01T00:00:60',
      '2022-01-01T00:00:00+15:00',
      '2022-01-01 00:00:00',
    ]) {
      expect(parseDateTime(bad), bad).toBeUndefined();
    }
  });

  it('reads a Guid in the forms new Guid(string) accepts', () => {
    for (const form of [
      GUID_A,
      GUID_A.toUpperCase(),
      GUID_A.replace(/-/g, ''),
      `{${GUID_A}}`,
      `(${GUID_A})`,
      ` ${GUID_A} `,
    ])
      expect(parseGuid(form), form).toBe(GUID_A);
    for (const bad of [`{${GUID_A.replace(/-/g, '')}}`, `${GUID_A}0`, `{${GUID_A})`, ''])
      expect(parseGuid(bad), bad).toBeUndefined();
  });
});
