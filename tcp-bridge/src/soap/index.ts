export { readAddressed, readRequest, type AddressedRequest, type SoapRequest } from './request.ts';
export { replyEnvelope } from './envelope.ts';
export { writeReply } from './reply.ts';
export { writeFault } from './fault-reply.ts';
export {
  SoapFault,
  type FaultSubcode,
  type QualifiedName,
  type ReplyAddressing,
  type SoapFaultCode,
  type SoapFaultInit,
} from './fault.ts';
export { DataTableXmlError } from './datatable-xml.ts';
export { actionOf, replyActionOf, FAULT_ACTION, type SoapOptions } from './names.ts';
