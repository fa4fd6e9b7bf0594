/**
 * The namespaces, prefixes and actions of IIDBService messages (docs/contract/iidbservice.md "Names on the wire";
 * ../shared/notes/nettcp-wire.md): SOAP 1.2, WS-Addressing 1.0, XML Schema, the DataContract namespaces.
 */

export const SOAP_NS = 'http://www.w3.org/2003/05/soap-envelope';
export const WSA_NS = 'http://www.w3.org/2005/08/addressing';
export const XSI_NS = 'http://www.w3.org/2001/XMLSchema-instance';
export const XSD_NS = 'http://www.w3.org/2001/XMLSchema';
export const XML_NS = 'http://www.w3.org/XML/1998/namespace';

export const ANONYMOUS = `${WSA_NS}/anonymous`;
/** WS-Addressing 1.0's default fault action, which WCF puts on every fault it sends. */
export const FAULT_ACTION = `${WSA_NS}/soap/fault`;
/** SOAP 1.2 roles a header may target; a header for any other role is not ours to understand. */
export const OUR_ROLES: ReadonlySet<string> = new Set(['', `${SOAP_NS}/role/next`, `${SOAP_NS}/role/ultimateReceiver`]);

/** Shared with the WSDL's wsaw:Action and soapAction, so the published actions are the ones a request is routed by. */
export { actionOf, actionPrefix, CONTRACTS_NS, replyActionOf, SER_NS } from '#idb';

/** What the SOAP layer needs of the configuration (EndpointConfig has it). */
export interface SoapOptions {
  /** SERVICE_NAMESPACE: the namespace of the actions, the operation elements and the contract's fault names. */
  serviceNamespace: string;
}
