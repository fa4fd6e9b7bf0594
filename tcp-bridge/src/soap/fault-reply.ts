/**
 * A SOAP 1.2 fault reply as WCF writes one (MessageFault.WriteTo12Driver): Code/Value `s:Sender` or `s:Receiver`
 * (or `s:MustUnderstand`, `s:VersionMismatch`), a Subcode whose Value is the qualified fault name (declaring
 * `xmlns:a` on that Value when its namespace has no prefix in scope, as WCF does), Reason/Text with
 * xml:lang="en-US", and a Detail only for the WS-Addressing faults. Action
 * http://www.w3.org/2005/08/addressing/soap/fault, RelatesTo the request's MessageID. A contract fault (IdbFault)
 * gets its name in the service namespace as Subcode, so a WCF client raises FaultException with
 * Code.SubCode.Name == the fault name; the Reason is its message and nothing else (no stack trace).
 */
import {
  attribute,
  element,
  qnameText,
  stringText,
  xmlns,
  type XmlDocument,
  type XmlElement,
  type XmlNamespaceDeclaration,
  type XmlText,
} from '../binary-xml/index.ts';
import type { IdbFault } from '#idb';
import { ENVELOPE_SCOPE, replyEnvelope } from './envelope.ts';
import { contractFault, SoapFault, type FaultSubcode, type QualifiedName, type ReplyAddressing } from './fault.ts';
import { FAULT_ACTION, SOAP_NS, type SoapOptions } from './names.ts';

export function writeFault(
  request: ReplyAddressing | undefined,
  fault: IdbFault | SoapFault,
  options: SoapOptions,
): XmlDocument {
  const soap = fault instanceof SoapFault ? fault : contractFault(fault, options.serviceNamespace);
  const headers = soap.notUnderstood.map(notUnderstood);
  return replyEnvelope(FAULT_ACTION, request ?? soap.addressing, headers, [faultElement(soap)]);
}

function faultElement(fault: SoapFault): XmlElement {
  const code: FaultSubcode = {
    name: fault.code,
    namespace: SOAP_NS,
    ...(fault.subcode ? { subcode: fault.subcode } : {}),
  };
  const parts = [
    element('s', 'Code', [], codeParts(code)),
    element(
      's',
      'Reason',
      [],
      [
        element(
          's',
          'Text',
          [attribute('xml', 'lang', 'en-US')],
          fault.reason === '' ? [] : [stringText(fault.reason)],
        ),
      ],
    ),
  ];
  if (fault.problemHeader) {
    const { text, declarations } = qualified(fault.problemHeader, 'a');
    parts.push(element('s', 'Detail', [], [element('a', 'ProblemHeaderQName', declarations, [text])]));
  }
  return element('s', 'Fault', [], parts);
}

/** Value, then Subcode holding the next level's Value and Subcode. */
function codeParts(code: FaultSubcode): XmlElement[] {
  const { text, declarations } = qualified(code, 'a');
  const value = element('s', 'Value', declarations, [text]);
  return code.subcode ? [value, element('s', 'Subcode', [], codeParts(code.subcode))] : [value];
}

/** SOAP 1.2's NotUnderstood header: `<s:NotUnderstood qname="p:Name" xmlns:p="…"/>`. */
function notUnderstood(header: QualifiedName): XmlElement {
  const { text, declarations } = qualified(header, 'b');
  return element('s', 'NotUnderstood', [attribute('', 'qname', text), ...declarations]);
}

/**
 * A QName value: the envelope's prefix for the namespace (s, a), else `prefix` declared on the element that holds
 * it (WCF declares `xmlns:a` on a fault code's Value even where the envelope binds a, shadowing it there).
 */
function qualified(name: QualifiedName, prefix: string): { text: XmlText; declarations: XmlNamespaceDeclaration[] } {
  const known = [...ENVELOPE_SCOPE].find(([, uri]) => uri === name.namespace)?.[0];
  if (known !== undefined) return { text: qnameText(known, name.name), declarations: [] };
  if (name.namespace === '') return { text: stringText(name.name), declarations: [] };
  return { text: qnameText(prefix, name.name), declarations: [xmlns(prefix, name.namespace)] };
}
