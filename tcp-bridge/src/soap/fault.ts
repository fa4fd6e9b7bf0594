/**
 * SoapFault: a refusal of a request before it reaches the service, in the shape of the SOAP 1.2 fault reply that
 * answers it (writeFault). The constructors below make the faults WCF itself sends for the same problems, with its
 * codes and (English) reasons, so a WCF client raises the exception it would get from a .NET service.
 */
import { FAULT_CODE, type IdbFault } from '#idb';
import { SOAP_NS, WSA_NS } from './names.ts';

export interface QualifiedName {
  name: string;
  namespace: string;
}

/** A Subcode's Value, and the Subcode inside it, if any. */
export interface FaultSubcode extends QualifiedName {
  subcode?: FaultSubcode;
}

/** The SOAP 1.2 fault codes this layer sends (env:Code/env:Value, all in the envelope namespace). */
export type SoapFaultCode = 'Sender' | 'Receiver' | 'MustUnderstand' | 'VersionMismatch';

/** What a reply is addressed by: the request's MessageID (the reply's RelatesTo) and ReplyTo. */
export interface ReplyAddressing {
  messageId?: string;
  replyTo?: string;
}

export interface SoapFaultInit {
  code: SoapFaultCode;
  subcode?: FaultSubcode;
  /** The Reason text (xml:lang en-US). Never a stack trace. */
  reason: string;
  /** What the request's headers said before it was refused, so that the fault relates to it. */
  addressing?: ReplyAddressing;
  /** MustUnderstand: the headers not understood, each sent back in an env:NotUnderstood header. */
  notUnderstood?: readonly QualifiedName[];
  /** WS-Addressing faults: the header at fault, sent in env:Detail as wsa:ProblemHeaderQName. */
  problemHeader?: QualifiedName;
}

export class SoapFault extends Error {
  override name = 'SoapFault';
  readonly code: SoapFaultCode;
  readonly subcode: FaultSubcode | undefined;
  readonly addressing: ReplyAddressing;
  readonly notUnderstood: readonly QualifiedName[];
  readonly problemHeader: QualifiedName | undefined;

  constructor(init: SoapFaultInit) {
    super(init.reason);
    this.code = init.code;
    this.subcode = init.subcode;
    this.addressing = init.addressing ?? {};
    this.notUnderstood = init.notUnderstood ?? [];
    this.problemHeader = init.problemHeader;
  }

  get reason(): string {
    return this.message;
  }
}

/** A contract fault (IdbFault) as SOAP: Sender/Receiver with the fault name in the service namespace as Subcode. */
export function contractFault(fault: IdbFault, serviceNamespace: string, addressing?: ReplyAddressing): SoapFault {
  return new SoapFault({
    code: FAULT_CODE[fault.fault],
    subcode: { name: fault.fault, namespace: serviceNamespace },
    reason: fault.message,
    ...(addressing ? { addressing } : {}),
  });
}

/** WCF's ContractFilter mismatch (ActionNotSupportedException.ProvideFault and SR.SFxNoEndpointMatchingContract). */
export function actionNotSupported(action: string, addressing: ReplyAddressing): SoapFault {
  return new SoapFault({
    code: 'Sender',
    subcode: { name: 'ActionNotSupported', namespace: WSA_NS },
    reason:
      `The message with Action '${action}' cannot be processed at the receiver, due to a ContractFilter mismatch at the ` +
      'EndpointDispatcher. This may be because of either a contract mismatch (mismatched Actions between sender and ' +
      'receiver) or a binding/security mismatch between the sender and the receiver.  Check that sender and receiver ' +
      'have the same contract and the same binding (including security requirements, e.g. Message, Transport, None).',
    addressing,
  });
}

/** MustUnderstandSoapException.ProvideFault: code env:MustUnderstand, no Subcode, NotUnderstood headers. */
export function mustUnderstand(headers: readonly QualifiedName[], addressing: ReplyAddressing): SoapFault {
  const first = headers[0]!;
  return new SoapFault({
    code: 'MustUnderstand',
    reason:
      `The header '${first.name}' from the namespace '${first.namespace}' was not understood by the recipient of this ` +
      'message, causing the message to not be processed.  This error typically indicates that the sender of this ' +
      'message has enabled a communication protocol that the receiver cannot process.  Please ensure that the ' +
      "configuration of the client's binding is consistent with the service's binding.",
    addressing,
    notUnderstood: headers,
  });
}

const MISSING: Readonly<Record<'Action' | 'MessageID', string>> = {
  Action: `No Action header was found with namespace '${WSA_NS}' for the given message.`,
  MessageID: 'Request Message is missing a MessageID header. One is required to correlate a reply.',
};

/** WSAddressing10ProblemHeaderQNameFault for a missing header: Sender / wsa:MessageAddressingHeaderRequired. */
export function addressingHeaderRequired(header: 'Action' | 'MessageID', addressing: ReplyAddressing): SoapFault {
  return new SoapFault({
    code: 'Sender',
    subcode: { name: 'MessageAddressingHeaderRequired', namespace: WSA_NS },
    reason: MISSING[header],
    addressing,
    problemHeader: { name: header, namespace: WSA_NS },
  });
}

/** The same fault for a header that came twice or cannot be read: Sender / wsa:InvalidAddressingHeader. */
export function invalidAddressingHeader(
  header: string,
  reason: string,
  addressing: ReplyAddressing,
  duplicate: boolean,
): SoapFault {
  return new SoapFault({
    code: 'Sender',
    subcode: {
      name: 'InvalidAddressingHeader',
      namespace: WSA_NS,
      ...(duplicate ? { subcode: { name: 'InvalidCardinality', namespace: WSA_NS } } : {}),
    },
    reason,
    addressing,
    problemHeader: { name: header, namespace: WSA_NS },
  });
}

/** Not a SOAP 1.2 envelope at all (SOAP 1.2 part 1, 5.4.7). */
export function versionMismatch(found: QualifiedName): SoapFault {
  return new SoapFault({
    code: 'VersionMismatch',
    reason: `The message is not a SOAP 1.2 envelope: its root is '${found.name}' in namespace '${found.namespace}', not 'Envelope' in '${SOAP_NS}'.`,
  });
}
