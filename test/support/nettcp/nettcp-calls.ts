/**
 * Calls of the contract as nns-client.py's `nettcp` mode sends them through the bridge's NegotiateStream: the
 * plaintext preamble up to the UpgradeRequest, then PreambleEnd and one sized envelope per call, each read back in
 * order from the hex replies; and readers of what came back (a result's text, a fault's subcode).
 */
import { expect } from 'vitest';
import {
  decodeEnvelope,
  encodeEnvelope,
  ReaderSession,
  stringText,
  WriterSession,
  type XmlDocument,
} from '../../../tcp-bridge/src/binary-xml/index.ts';
import { readInt31 } from '../../../tcp-bridge/src/bytes.ts';
import { clientPreamble, framing, NEGOTIATE_UPGRADE, sizedEnvelope } from '../../../tcp-bridge/src/framing/index.ts';
import { elements, param, path, request, textOf } from './soap.ts';

export const VIA = 'net.tcp://localhost:8808/IDBService';
export const EMPTY_GUID = '00000000-0000-0000-0000-000000000000';
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/** The calls of one session as nns-client.py arguments, and a reader of the server's answers in the same order. */
export function nettcpSession(calls: XmlDocument[]): { args: string[]; read(replies: string[]): XmlDocument[] } {
  const writer = new WriterSession();
  const messages = [
    framing().preambleEnd().finish(),
    ...calls.map((call) => sizedEnvelope(encodeEnvelope(call, writer))),
  ];
  const read = (replies: string[]) => {
    expect(replies[0]).toBe('0b'); // PreambleAck
    const reader = new ReaderSession();
    return replies.slice(1).map((reply) => {
      const bytes = Buffer.from(reply, 'hex');
      expect(bytes[0]).toBe(0x06);
      const size = readInt31(bytes, 1);
      if (typeof size !== 'object') throw new Error('bad envelope size');
      return decodeEnvelope(bytes.subarray(1 + size.size), reader).document;
    });
  };
  return {
    args: [
      '--preamble',
      hex(clientPreamble(VIA, NEGOTIATE_UPGRADE)),
      ...messages.flatMap((m) => ['--message', hex(m)]),
    ],
    read,
  };
}

export const replyBody = (document: XmlDocument) => path(document, 'Envelope', 'Body');
/** The text of `<operation>Result`. */
export const resultOf = (document: XmlDocument, operation: string) =>
  textOf(path(document, 'Envelope', 'Body', `${operation}Response`, `${operation}Result`));
/** The fault's subcode without its prefix (`AccessDenied`). */
export const faultName = (document: XmlDocument) =>
  textOf(path(replyBody(document), 'Fault', 'Code', 'Subcode', 'Value')).replace(/^\w+:/, '');
/** `<operation>Result`'s text, or `fault:<subcode>` when the reply is a fault. */
export const answerOf = (document: XmlDocument, operation: string) =>
  elements(replyBody(document))[0]?.localName === 'Fault'
    ? `fault:${faultName(document)}`
    : resultOf(document, operation);
/** A call of an SQL operation outside any database request. */
export const sqlCall = (operation: string, text: string) =>
  request(operation, [
    param('requestId', [stringText(EMPTY_GUID)]),
    param('sql', [stringText(text)]),
    param('parameters', []),
  ]);
