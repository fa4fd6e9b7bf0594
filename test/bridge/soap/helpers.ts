/**
 * What the SOAP layer tests (test/bridge/soap/*.test.ts) share: the service options, readRequest refusals, walking
 * a reply by local names, reading a result or a fault back as a WCF client does, and the requests' building blocks
 * (GUIDs, ticks, SQL parameters, file data, index fields).
 */
import { expect } from 'vitest';
import {
  boolText,
  bytesText,
  dateTimeText,
  encodeEnvelope,
  intText,
  ReaderSession,
  textToString,
  WriterSession,
  xmlns,
  type XmlAttributeNode,
  type XmlContent,
  type XmlDocument,
  type XmlElement,
} from '../../../tcp-bridge/src/binary-xml/index.ts';
import { readRequest, SoapFault, writeReply, type SoapRequest } from '../../../tcp-bridge/src/soap/index.ts';
import { readRequestBytes } from '../../../tcp-bridge/src/soap/request-cursor.ts';
import { SIGNATURES } from '../../../tcp-bridge/src/soap/contract-types.ts';
import { readValue } from '../../../tcp-bridge/src/soap/dc-reader.ts';
import { enterScope, lookupPrefix, ROOT_SCOPE } from '../../../tcp-bridge/src/soap/tree.ts';
import { EMPTY_GUID, type OperationName, type Operations } from '../../../src/idb/contract.ts';
import {
  ANONYMOUS,
  child,
  contractRoot,
  elements,
  member,
  MESSAGE_ID,
  nil,
  param,
  path,
  TEMPURI,
  text,
  textOf,
  typed,
  wire,
  WSA,
  XSI,
} from '../../support/nettcp/soap.ts';

export const OPTIONS = { serviceNamespace: TEMPURI };
export const FAULT_ACTION = `${WSA}/soap/fault`;

/**
 * readRequest's SoapFault, or a failure when it accepts the document. The bridge's direct reader must decline the
 * same document (request-cursor.test.ts): it never reads a request the tree path refuses.
 */
export function refusal(document: XmlDocument, options = OPTIONS): SoapFault {
  try {
    readRequest(document, options);
  } catch (error) {
    if (!(error instanceof SoapFault)) throw error;
    expect(directRead(document, options)).toBeUndefined();
    return error;
  }
  throw new Error('the request was accepted');
}

/**
 * The session strings a decoded tree's odd dictionary keys name, by their index (a gap filled with a string of its
 * own), so that the tree encodes again with the same keys.
 */
function sessionStrings(document: XmlDocument): string[] {
  const strings: string[] = [];
  const note = (key: number | undefined, value: string) => {
    if (key !== undefined && key % 2 === 1) strings[(key - 1) / 2] = value;
  };
  const visit = (node: XmlContent | XmlAttributeNode): void => {
    if (node.kind === 'element') {
      note(node.localNameKey, node.localName);
      for (const attribute of node.attributes) visit(attribute);
      for (const child of node.children) visit(child);
    } else if (node.kind === 'attribute') {
      note(node.localNameKey, node.localName);
      visit(node.value);
    } else if (node.kind === 'xmlns') note(node.uriKey, node.uri);
    else if (node.kind === 'text' && node.type === 'Dictionary') note(node.key, node.value);
    else if (node.kind === 'text' && node.type === 'QNameDictionary') note(node.key, node.localName);
  };
  for (const child of document.children) visit(child);
  return Array.from(strings, (value, index) => value ?? `unused session string ${index}`);
}

/** What the bridge's direct reader (soap/request-cursor.ts) makes of the document, encoded as a client sends it. */
export function directRead(document: XmlDocument, options = OPTIONS): SoapRequest | undefined {
  const payload = encodeEnvelope(document, new WriterSession(), { strings: sessionStrings(document) });
  const session = new ReaderSession();
  const { documentOffset } = session.readTable(payload);
  return readRequestBytes(payload.subarray(documentOffset), { ...options, session });
}

export function expectInvalidArgument(document: XmlDocument, reason?: RegExp): SoapFault {
  const fault = refusal(document);
  expect(fault).toMatchObject({ code: 'Sender', subcode: { name: 'InvalidArgument', namespace: TEMPURI } });
  if (reason) expect(fault.reason).toMatch(reason);
  return fault;
}

/** Walks down by local names, entering each element's xmlns scope. */
export function scoped(
  root: XmlDocument,
  ...names: string[]
): { element: XmlElement; scope: ReturnType<typeof enterScope> } {
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
export function resultOf(reply: XmlDocument, operation: OperationName): unknown {
  const { element: result, scope } = scoped(reply, 'Envelope', 'Body', `${operation}Response`, `${operation}Result`);
  return readValue(SIGNATURES[operation].result, result, scope);
}

export const reply = <K extends OperationName>(
  operation: K,
  result: Operations[K]['result'],
  addressing = { messageId: MESSAGE_ID, replyTo: ANONYMOUS },
) => wire(writeReply(addressing, operation, result, OPTIONS));

export const GUID_A = '0f8fad5b-d9cb-469f-a165-70867728950e';
export const GUID_B = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
export const GUID_C = 'a8098c1a-f86e-11da-bd1a-00112444be1e';
/** 2022-01-01T00:00:00 as DateTime ticks. */
export const TICKS_2022 = 0x08d9ccb9a7734000n;

export const sqlParams = (params: XmlElement[] | null): XmlElement[] => [
  param('requestId', text(GUID_A)),
  param('sql', text('select @id')),
  params === null ? param('parameters', [], [nil(), xmlns('i', XSI)]) : param('parameters', params, contractRoot()),
];

export const queryParameter = (name: string, value: XmlElement): XmlElement =>
  member('QueryParameter', [member('Name', text(name)), value]);

export const fileData = (): XmlElement =>
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

export const fileValue = {
  Content: Uint8Array.of(1, 2, 3),
  ContentType: 'text/plain',
  CreatedUtc: '2022-01-01T00:00:00Z',
  FileId: GUID_B,
  FileName: 'a.txt',
  Length: 3n,
  ModifiedUtc: '2022-01-01T00:00:00Z',
  Sha256: null,
};

export const indexField = (name: string, value: string | null): XmlElement =>
  member('IndexField', [
    member('Name', text(name)),
    value === null ? member('Value', [], [nil()]) : member('Value', text(value)),
  ]);

/** The parts of a fault reply a WCF client reads, resolved: code chain, reason, language, headers. */
export function readFault(document: XmlDocument) {
  const { element: fault, scope } = scoped(document, 'Envelope', 'Body', 'Fault');
  const codes: { name: string; namespace: string }[] = [];
  let code: XmlElement | undefined = child(fault, 'Code');
  let codeScope = enterScope(scope, code);
  while (code) {
    const value = child(code, 'Value');
    const valueScope = enterScope(codeScope, value);
    const [prefix, name] = textOf(value).split(':') as [string, string];
    codes.push({ name, namespace: lookupPrefix(valueScope, prefix)! });
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

/** Every operation as a .NET client writes it, and the arguments it carries. */
export const CALLS: { [K in OperationName]: [XmlElement[], Operations[K]['args']] } = {
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
