/**
 * readRequest's refusals (tcp-bridge/src/soap/request.ts, envelope.ts): unknown actions, missing or repeated addressing,
 * mustUnderstand headers, a malformed envelope or body, each written back as the fault WCF would send.
 */
import { describe, expect, it } from 'vitest';
import {
  attribute,
  boolText,
  element,
  qnameText,
  stringText,
  xmlns,
} from '../../../tcp-bridge/src/binary-xml/index.ts';
import { readRequest, writeFault } from '../../../tcp-bridge/src/soap/index.ts';
import {
  ANONYMOUS,
  MESSAGE_ID,
  param,
  path,
  records,
  request,
  SOAP,
  TEMPURI,
  text,
  wire,
  WSA,
} from '../../support/nettcp/soap.ts';
import { expectInvalidArgument, FAULT_ACTION, GUID_B, OPTIONS, readFault, refusal } from './helpers.ts';

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
