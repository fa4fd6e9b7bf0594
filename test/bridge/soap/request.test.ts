/**
 * readRequest (tcp-bridge/src/soap/request.ts): every operation as a WCF client writes it, read into its arguments.
 */
import { describe, expect, it } from 'vitest';
import {
  boolText,
  bytesText,
  dateTimeText,
  element,
  uuidText,
  type XmlElement,
} from '../../../tcp-bridge/src/binary-xml/index.ts';
import { readRequest, type SoapRequest } from '../../../tcp-bridge/src/soap/index.ts';
import { EMPTY_GUID, OPERATIONS, type OperationName } from '../../../src/idb/contract.ts';
import {
  ANONYMOUS,
  contractRoot,
  member,
  MESSAGE_ID,
  param,
  request,
  TEMPURI,
  text,
  wire,
} from '../../support/nettcp/soap.ts';
import {
  CALLS,
  directRead,
  expectInvalidArgument,
  GUID_A,
  GUID_B,
  OPTIONS,
  refusal,
  sqlParams,
  TICKS_2022,
} from './helpers.ts';

describe('readRequest: every operation as a WCF client sends it', () => {
  for (const operation of OPERATIONS) {
    it(operation, () => {
      const [params, args] = CALLS[operation];
      const read: SoapRequest = readRequest(wire(request(operation, params)), OPTIONS);
      // The bridge's direct reader reads it the same (request-cursor.test.ts).
      expect(directRead(request(operation, params))).toStrictEqual(read);
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
