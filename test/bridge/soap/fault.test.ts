/**
 * writeFault (tcp-bridge/src/soap/fault.ts, fault-reply.ts): every IDB fault written as WCF writes it, with and without a request.
 */
import { describe, expect, it } from 'vitest';
import { attribute, element, qnameText, stringText, xmlns } from '../../../tcp-bridge/src/binary-xml/index.ts';
import { writeFault } from '../../../tcp-bridge/src/soap/index.ts';
import { IdbFault, type FaultName } from '../../../src/idb/contract.ts';
import { ANONYMOUS, MESSAGE_ID, path, records, SOAP, TEMPURI, wire } from '../../support/nettcp/soap.ts';
import { FAULT_ACTION, OPTIONS, readFault } from './helpers.ts';

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
