/**
 * Request envelopes as a WCF client (DataContractSerializer over XmlBinaryWriter) writes them, for the SOAP layer's
 * tests; a round trip through the binary session encoding; and small readers of the trees that come back.
 */
import {
  attribute,
  boolText,
  decodeEnvelope,
  element,
  encodeEnvelope,
  qnameText,
  ReaderSession,
  stringText,
  textToString,
  uniqueIdText,
  WriterSession,
  xmlns,
  type XmlAttributeNode,
  type XmlContent,
  type XmlDocument,
  type XmlElement,
  type XmlText,
} from '../../../tcp-bridge/src/binary-xml/index.ts';
import {
  ANONYMOUS,
  CONTRACTS_NS as DC,
  SER_NS as SER,
  SOAP_NS as SOAP,
  WSA_NS as WSA,
  XSD_NS as XSD,
  XSI_NS as XSI,
} from '../../../tcp-bridge/src/soap/names.ts';

export { ANONYMOUS, DC, SER, SOAP, WSA, XSD, XSI };
export const TEMPURI = 'http://tempuri.org/';
export const MESSAGE_ID = 'urn:uuid:97e5954d-ddfb-4040-9aa3-bcb40df0750b';

export interface RequestOptions {
  ns?: string;
  action?: string | null;
  messageId?: string | null;
  /** Header blocks after the addressing ones. */
  headers?: XmlElement[];
  /** The body's content instead of `<operation xmlns=ns>params</operation>`. */
  body?: XmlContent[];
}

const mu = (): XmlAttributeNode => attribute('s', 'mustUnderstand', '1');

/** `<s:Envelope>` with Action, MessageID, ReplyTo anonymous and To, as a WCF client sends a request. */
export function request(operation: string, params: XmlContent[], options: RequestOptions = {}): XmlDocument {
  const ns = options.ns ?? TEMPURI;
  const headers: XmlElement[] = [];
  const action =
    options.action === undefined ? `${ns}${ns.endsWith('/') ? '' : '/'}IIDBService/${operation}` : options.action;
  if (action !== null) headers.push(element('a', 'Action', [mu()], [stringText(action)]));
  const messageId = options.messageId === undefined ? MESSAGE_ID : options.messageId;
  if (messageId !== null) headers.push(element('a', 'MessageID', [], [uniqueIdText(messageId)]));
  headers.push(element('a', 'ReplyTo', [], [element('a', 'Address', [], [stringText(ANONYMOUS)])]));
  headers.push(element('a', 'To', [mu()], [stringText('net.tcp://localhost:8808/IDBService')]));
  headers.push(...(options.headers ?? []));
  const body = options.body ?? [element('', operation, [xmlns('', ns)], params)];
  return {
    children: [
      element(
        's',
        'Envelope',
        [xmlns('s', SOAP), xmlns('a', WSA)],
        [element('s', 'Header', [], headers), element('s', 'Body', [], body)],
      ),
    ],
  };
}

/** A parameter element (in the operation's default namespace). */
export const param = (name: string, content: XmlContent[] = [], attributes: XmlAttributeNode[] = []): XmlElement =>
  element('', name, attributes, content);
/** A data contract member (prefix b, declared by the contract's root as DataContractSerializer does). */
export const member = (name: string, content: XmlContent[] = [], attributes: XmlAttributeNode[] = []): XmlElement =>
  element('b', name, attributes, content);
/** The declarations at the root of a data contract or array: xmlns:b (contracts) and xmlns:i. */
export const contractRoot = (): XmlAttributeNode[] => [xmlns('b', DC), xmlns('i', XSI)];
export const nil = (): XmlAttributeNode => attribute('i', 'nil', boolText(true));
export const text = (value: string): XmlText[] => (value === '' ? [] : [stringText(value)]);
/** An `object` value: `i:type="c:{type}" xmlns:c="{ns}"` and its content. */
export const typed = (name: string, type: string, content: XmlContent[], ns = XSD, prefix = 'c'): XmlElement =>
  member(name, content, [attribute('i', 'type', qnameText(prefix, type)), xmlns(prefix, ns)]);

/** Encodes and decodes the document with fresh sessions: what the SOAP layer sees of a message on the wire. */
export function wire(document: XmlDocument): XmlDocument {
  return decodeEnvelope(encodeEnvelope(document, new WriterSession()), new ReaderSession()).document;
}

export function child(parent: XmlElement | XmlDocument, localName: string): XmlElement {
  const found = parent.children.find((c): c is XmlElement => c.kind === 'element' && c.localName === localName);
  if (!found)
    throw new Error(`no <${localName}> in ${'localName' in parent ? `<${parent.localName}>` : 'the document'}`);
  return found;
}

export const path = (root: XmlElement | XmlDocument, ...names: string[]): XmlElement =>
  names.reduce<XmlElement | XmlDocument>((at, n) => child(at, n), root) as XmlElement;

export const textOf = (e: XmlElement): string => e.children.map((c) => textToString(c as XmlText)).join('');

export const elements = (e: XmlElement): XmlElement[] =>
  e.children.filter((c): c is XmlElement => c.kind === 'element');

/** The tree without the dictionary choices (keys) and the reader's resolved namespaces: what the records say. */
export function records<T>(node: T): T {
  return JSON.parse(
    JSON.stringify(node, (key, value: unknown) =>
      ['localNameKey', 'uriKey', 'key', 'namespace', 'foldEnd', 'longForm'].includes(key)
        ? undefined
        : typeof value === 'bigint'
          ? `${value}n`
          : value instanceof Uint8Array
            ? Buffer.from(value).toString('hex')
            : value,
    ),
  ) as T;
}

/** Copies the dictionary keys of `from` onto the same names in `to` (the same shape), to encode with its choices. */
export function adoptKeys(to: XmlContent, from: XmlContent): void {
  if (to.kind !== from.kind) throw new Error(`${to.kind} ≠ ${from.kind}`);
  if (to.kind === 'text' && from.kind === 'text' && 'key' in from && from.key !== undefined)
    (to as { key?: number }).key = from.key;
  if (to.kind !== 'element' || from.kind !== 'element') return;
  if (from.localNameKey !== undefined) to.localNameKey = from.localNameKey;
  to.attributes.forEach((a, i) => {
    const b = from.attributes[i]!;
    if (a.kind === 'xmlns' && b.kind === 'xmlns' && b.uriKey !== undefined) a.uriKey = b.uriKey;
    if (a.kind === 'attribute' && b.kind === 'attribute') {
      if (b.localNameKey !== undefined) a.localNameKey = b.localNameKey;
      adoptKeys(a.value, b.value);
    }
  });
  for (const [i, c] of to.children.entries()) adoptKeys(c, from.children[i]!);
}
