/**
 * The SOAP 1.2 / WS-Addressing layer of the tcp-bridge (tcp-bridge/src/soap) on the Mono capture: its requests are
 * read and its replies written back as Mono wrote them (Heartbeat and ReturnScalar channels, SecurityMode.None).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  decodeEnvelope,
  encodeEnvelope,
  ReaderSession,
  textToString,
  WriterSession,
  type XmlDocument,
  type XmlText,
} from '../../../tcp-bridge/src/binary-xml/index.ts';
import { ClientFramingDecoder, ServerFramingDecoder } from '../../../tcp-bridge/src/framing/index.ts';
import { readRequest, writeReply } from '../../../tcp-bridge/src/soap/index.ts';
import { EMPTY_GUID, type OperationName } from '../../../src/idb/contract.ts';
import { readTcpConversation } from '../../support/nettcp/pcap.ts';
import { adoptKeys, ANONYMOUS, path, records } from '../../support/nettcp/soap.ts';
import { OPTIONS } from './helpers.ts';

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
