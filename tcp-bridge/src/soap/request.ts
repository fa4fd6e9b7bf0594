/**
 * A request envelope (a decoded NBFX document) → the operation and its arguments, or a SoapFault shaped as the reply
 * WCF would send. Checked in WCF's order: the envelope (SOAP 1.2, else VersionMismatch), the WS-Addressing headers
 * (each at most once: InvalidAddressingHeader), Action (missing: MessageAddressingHeaderRequired; not an operation
 * of this contract under the action rule: ActionNotSupported), headers we must understand and do not
 * (MustUnderstand), MessageID (required: a reply must relate to it), then the body: `<Op xmlns="{ns}">` with the
 * parameters as DataContractSerializer writes them (dc-reader.ts); anything malformed there, or below the envelope,
 * is the contract's InvalidArgument.
 *
 * Understood headers: wsa Action, MessageID, To, ReplyTo. Any other header with mustUnderstand="1"/"true" that
 * targets us (no role, next or ultimateReceiver) is refused; without mustUnderstand it is ignored. `to` is returned
 * for the transport, not filtered here (WCF's AddressFilter would; Mono's quirk shows how fragile that is).
 */
import { textToString, type XmlDocument, type XmlElement } from '../binary-xml/index.ts';
import { IdbFault, OPERATIONS, type OperationName, type Operations } from '#idb';
import { SIGNATURES } from './contract-types.ts';
import { readMembers } from './dc-reader.ts';
import {
  actionNotSupported,
  addressingHeaderRequired,
  contractFault,
  invalidAddressingHeader,
  mustUnderstand,
  versionMismatch,
  type QualifiedName,
} from './fault.ts';
import { actionPrefix, OUR_ROLES, SOAP_NS, WSA_NS, type SoapOptions } from './names.ts';
import {
  attributeText,
  childElements,
  enterScope,
  invalid,
  is,
  nameOf,
  ROOT_SCOPE,
  textContent,
  xsBoolean,
  type Scope,
} from './tree.ts';

export interface SoapRequest<K extends OperationName = OperationName> {
  action: string;
  /** The request's wsa:MessageID: the reply's RelatesTo. */
  messageId: string;
  /** wsa:ReplyTo's Address (WCF clients send the anonymous address). */
  replyTo?: string;
  to?: string;
  operation: K;
  args: Operations[K]['args'];
}

export interface Addressing {
  action?: string;
  messageId?: string;
  replyTo?: string;
  to?: string;
}

export type Scoped = { element: XmlElement; scope: Scope };

/** The addressing headers this layer understands, by local name, and the Addressing field each fills. */
export const UNDERSTOOD = new Map([
  ['Action', 'action'],
  ['MessageID', 'messageId'],
  ['To', 'to'],
  ['ReplyTo', 'replyTo'],
] as const);
export type Understood = 'Action' | 'MessageID' | 'To' | 'ReplyTo';

export function readRequest(document: XmlDocument, options: SoapOptions): SoapRequest {
  const ns = options.serviceNamespace;
  // Fields named one by one rather than with object rest and spread, which V8 copies slowly (profile: readRequest
  // and readAddressed were 8% of a Heartbeat's time in the bridge).
  const addressed = readAddressed(document, options, (action) => operationOf(action, ns));
  const { action, messageId, replyTo, to, route: operation } = addressed;
  try {
    const args = readArguments(operation, addressed.body, ns);
    return { action, messageId, replyTo, to, operation, args } as SoapRequest;
  } catch (error) {
    if (error instanceof IdbFault) throw contractFault(error, ns, addressed);
    throw error;
  }
}

/** A request's addressing, checked as for every request, its action routed, and its Body for the caller to read. */
export interface AddressedRequest<T> {
  action: string;
  messageId: string;
  replyTo?: string;
  to?: string;
  /** What `route` made of the action. */
  route: T;
  body: Scoped;
}

/**
 * Everything of a request but its Body, in WCF's order (above). `route` maps the action to what the caller serves
 * (undefined: ActionNotSupported): the operations here, WS-Transfer Get on the metadata via (mex.ts).
 */
export function readAddressed<T>(
  document: XmlDocument,
  options: SoapOptions,
  route: (action: string) => T | undefined,
): AddressedRequest<T> {
  const addressing: Addressing = {};
  try {
    const { header, body } = envelopeParts(document);
    const notUnderstood = header ? readHeaders(header, addressing) : [];
    const action = addressing.action;
    if (action === undefined) throw addressingHeaderRequired('Action', addressing);
    const routed = route(action);
    if (routed === undefined) throw actionNotSupported(action, addressing);
    if (notUnderstood.length > 0) throw mustUnderstand(notUnderstood, addressing);
    const messageId = addressing.messageId;
    if (messageId === undefined) throw addressingHeaderRequired('MessageID', addressing);
    return { action, messageId, replyTo: addressing.replyTo, to: addressing.to, route: routed, body };
  } catch (error) {
    if (error instanceof IdbFault) throw contractFault(error, options.serviceNamespace, addressing);
    throw error;
  }
}

/** The operation of the contract `action` calls (the action rule of names.ts), if any. */
export function operationOf(action: string, serviceNamespace: string): OperationName | undefined {
  let operations = ACTIONS.get(serviceNamespace);
  if (operations === undefined) {
    const prefix = actionPrefix(serviceNamespace);
    operations = new Map(OPERATIONS.map((operation) => [prefix + operation, operation]));
    ACTIONS.set(serviceNamespace, operations);
  }
  return operations.get(action);
}

/** Each namespace's actions and their operations, made once: one lookup per request instead of a prefix and a scan. */
const ACTIONS = new Map<string, ReadonlyMap<string, OperationName>>();

function envelopeParts(document: XmlDocument): { header?: Scoped; body: Scoped } {
  let envelope: XmlElement | undefined;
  let roots = 0;
  for (const child of document.children) {
    if (child.kind !== 'element') continue;
    envelope ??= child;
    roots++;
  }
  if (envelope === undefined) throw invalid('The message holds no element.');
  const scope = enterScope(ROOT_SCOPE, envelope);
  const name = nameOf(envelope, scope);
  if (roots !== 1 || name.name !== 'Envelope' || name.namespace !== SOAP_NS) throw versionMismatch(name);
  const parts = childElements(envelope).map((element) => ({ element, scope: enterScope(scope, element) }));
  const header = parts[0] && is(parts[0].element, parts[0].scope, SOAP_NS, 'Header') ? parts.shift() : undefined;
  const body = parts[0];
  if (body === undefined || !is(body.element, body.scope, SOAP_NS, 'Body') || parts.length > 1) {
    throw invalid('The envelope must hold an optional Header, then the Body, and nothing else.');
  }
  return header ? { header, body } : { body };
}

/** Fills `addressing` from the header blocks; returns the ones we must understand and do not. */
function readHeaders(header: Scoped, addressing: Addressing): QualifiedName[] {
  const notUnderstood: QualifiedName[] = [];
  for (const element of childElements(header.element)) {
    const scope = enterScope(header.scope, element);
    const name = nameOf(element, scope);
    const field = name.namespace === WSA_NS ? UNDERSTOOD.get(name.name as Understood) : undefined;
    if (field === undefined) {
      if (mustBeUnderstood(element, scope)) notUnderstood.push(name);
      continue;
    }
    const understood = name.name as Understood;
    if (addressing[field] !== undefined) {
      throw invalidAddressingHeader(
        understood,
        `Multiple headers with name '${understood}' and namespace '${WSA_NS}' found.`,
        addressing,
        true,
      );
    }
    const value = understood === 'ReplyTo' ? replyAddress(element, scope, addressing) : textContent(element).trim();
    if (value === '')
      throw invalidAddressingHeader(understood, `The ${understood} header is empty.`, addressing, false);
    addressing[field] = value;
  }
  return notUnderstood;
}

function mustBeUnderstood(element: XmlElement, scope: Scope): boolean {
  const flag = attributeText(element, scope, SOAP_NS, 'mustUnderstand');
  if (flag === undefined) return false;
  const must = xsBoolean(textToString(flag));
  if (must === undefined)
    throw invalid(`mustUnderstand="${textToString(flag)}" on header ${element.localName} is not a boolean.`);
  const role = attributeText(element, scope, SOAP_NS, 'role');
  return must && (role === undefined || OUR_ROLES.has(textToString(role).trim()));
}

/** The Address of a wsa:ReplyTo endpoint reference. */
function replyAddress(element: XmlElement, scope: Scope, addressing: Addressing): string {
  for (const child of childElements(element)) {
    if (is(child, enterScope(scope, child), WSA_NS, 'Address')) return textContent(child).trim();
  }
  throw invalidAddressingHeader('ReplyTo', 'The ReplyTo header has no Address.', addressing, false);
}

function readArguments<K extends OperationName>(
  operation: K,
  body: Scoped,
  serviceNamespace: string,
): Operations[K]['args'] {
  const wrapper = childElements(body.element)[0];
  if (wrapper === undefined)
    throw invalid(`The Body is empty; <${operation}> in namespace '${serviceNamespace}' was expected.`);
  const scope = enterScope(body.scope, wrapper);
  if (!is(wrapper, scope, serviceNamespace, operation)) {
    const found = nameOf(wrapper, scope);
    throw invalid(
      `The Body holds <${found.name}> in namespace '${found.namespace}', not <${operation}> in '${serviceNamespace}'.`,
    );
  }
  return readMembers(SIGNATURES[operation].params, wrapper, scope, serviceNamespace) as Operations[K]['args'];
}
