/**
 * The SOAP 1.2 envelope of every reply and fault, with the WS-Addressing 1.0 headers WCF puts on a reply:
 * Action (mustUnderstand), RelatesTo = the request's MessageID, and To only when the request's ReplyTo is not
 * anonymous (EndpointAddress.ApplyTo clears To for an anonymous address under WS-Addressing 1.0; the Mono capture
 * has no To either).
 */
import {
  attribute,
  element,
  stringText,
  uniqueIdText,
  xmlns,
  type XmlContent,
  type XmlDocument,
  type XmlElement,
} from '../binary-xml/index.ts';
import type { ReplyAddressing } from './fault.ts';
import { ANONYMOUS, SOAP_NS, WSA_NS } from './names.ts';

/** Prefixes the envelope declares, in scope for everything inside it. */
export const ENVELOPE_SCOPE: ReadonlyMap<string, string> = new Map([
  ['s', SOAP_NS],
  ['a', WSA_NS],
]);

const mustUnderstand = () => attribute('s', 'mustUnderstand', '1');

/** A GUID-based id exactly as .NET's UniqueId prints it goes back as a UniqueId record, anything else as text. */
const UNIQUE_ID = /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function replyEnvelope(
  action: string,
  request: ReplyAddressing | undefined,
  extraHeaders: XmlElement[],
  body: XmlContent[],
): XmlDocument {
  const headers = [element('a', 'Action', [mustUnderstand()], [stringText(action)]), ...extraHeaders];
  const messageId = request?.messageId;
  if (messageId !== undefined) headers.push(relatesTo(messageId));
  const replyTo = request?.replyTo;
  if (replyTo !== undefined && replyTo !== ANONYMOUS)
    headers.push(element('a', 'To', [mustUnderstand()], [stringText(replyTo)]));
  return {
    children: [
      element(
        's',
        'Envelope',
        [xmlns('s', SOAP_NS), xmlns('a', WSA_NS)],
        [element('s', 'Header', [], headers), element('s', 'Body', [], body)],
      ),
    ],
  };
}

/** The RelatesTo header of a reply to the request `messageId`. */
export function relatesTo(messageId: string): XmlElement {
  return element('a', 'RelatesTo', [], [UNIQUE_ID.test(messageId) ? uniqueIdText(messageId) : stringText(messageId)]);
}
