/**
 * Reading NBFX trees by namespace: an element's names are resolved through the xmlns declarations in scope, as are
 * QName values such as `i:type="b:int"`. Anything that does not fit (an undeclared prefix, text where elements
 * belong) is the contract's InvalidArgument. A decoded tree's names come resolved already (the reader's `namespace`
 * fields, by the same rules: it refuses an undeclared prefix itself) and are taken as they are; a hand-built tree has
 * none, and its names are resolved here.
 */
import { textToString, type XmlContent, type XmlElement, type XmlText } from '../binary-xml/index.ts';
import { IdbFault } from '#idb';
import { XML_NS, XSI_NS } from './names.ts';
import type { QualifiedName } from './fault.ts';

/**
 * The xmlns declarations in scope: an element's own (prefix, URI pairs, in order) and, through `outer`, those around
 * it; '' is the default namespace. A chain rather than a copied map: a request's elements declare a prefix or two
 * each, and copying every binding at each of them was a tenth of decoding a request (profile: enterScope and the
 * Map constructor, ~4% of an ExecuteNonQuery in the bridge).
 */
export interface Scope {
  readonly outer: Scope | undefined;
  /** prefix, URI, prefix, URI, …: a later declaration of the same prefix wins, as in XML. */
  readonly declared: readonly string[];
}

export const ROOT_SCOPE: Scope = { outer: undefined, declared: ['xml', XML_NS] };

export const invalid = (message: string): IdbFault => new IdbFault('InvalidArgument', message);

/** The scope inside `element`: its own xmlns declarations added (they apply to its name and attributes too). */
export function enterScope(scope: Scope, element: XmlElement): Scope {
  let declared: string[] | undefined;
  for (const node of element.attributes) {
    if (node.kind !== 'xmlns') continue;
    declared ??= [];
    declared.push(node.prefix, node.uri);
  }
  return declared === undefined ? scope : { outer: scope, declared };
}

/** The URI `prefix` is bound to in `scope`, or undefined. */
export function lookupPrefix(scope: Scope, prefix: string): string | undefined {
  for (let at: Scope | undefined = scope; at !== undefined; at = at.outer) {
    const declared = at.declared;
    for (let i = declared.length - 2; i >= 0; i -= 2) if (declared[i] === prefix) return declared[i + 1];
  }
  return undefined;
}

function resolve(scope: Scope, prefix: string, what: string): string {
  const uri = lookupPrefix(scope, prefix);
  if (uri !== undefined) return uri;
  if (prefix === '') return '';
  throw invalid(`The prefix '${prefix}' of ${what} is not declared.`);
}

/** An element's namespace; `scope` is the one inside it (enterScope). */
const namespaceOf = (element: XmlElement, scope: Scope): string =>
  element.namespace ?? resolve(scope, element.prefix, `<${element.localName}>`);

/** An element's expanded name; `scope` is the one inside it (enterScope). */
export function nameOf(element: XmlElement, scope: Scope): QualifiedName {
  return { name: element.localName, namespace: namespaceOf(element, scope) };
}

export function is(element: XmlElement, scope: Scope, namespace: string, localName: string): boolean {
  return element.localName === localName && namespaceOf(element, scope) === namespace;
}

/** The text of an attribute by expanded name (an unprefixed attribute has no namespace). */
export function attributeText(
  element: XmlElement,
  scope: Scope,
  namespace: string,
  localName: string,
): XmlText | undefined {
  for (const node of element.attributes) {
    if (node.kind !== 'attribute' || node.localName !== localName) continue;
    const found =
      node.prefix === '' ? '' : (node.namespace ?? resolve(scope, node.prefix, `attribute ${node.localName}`));
    if (found === namespace) return node.value;
  }
  return undefined;
}

/** The child elements; comments and whitespace between them are passed over, other text is refused. */
export function childElements(element: XmlElement): XmlElement[] {
  const out: XmlElement[] = [];
  for (const child of element.children) {
    if (child.kind === 'element') out.push(child);
    else if (!ignorable(child))
      throw invalid(
        `<${element.localName}> holds ${child.kind === 'array' ? 'an array record' : 'text'} where elements belong.`,
      );
  }
  return out;
}

function ignorable(node: XmlContent): boolean {
  return node.kind === 'comment' || (node.kind === 'text' && textToString(node).trim() === '');
}

/** The text records of a simple-content element (comments passed over); an element inside is refused. */
export function textRecords(element: XmlElement): XmlText[] {
  const out: XmlText[] = [];
  for (const child of element.children) {
    if (child.kind === 'text') out.push(child);
    else if (child.kind !== 'comment')
      throw invalid(
        `<${element.localName}> holds ${child.kind === 'array' ? 'an array record' : 'an element'} where text belongs.`,
      );
  }
  return out;
}

/** The characters of a simple-content element: its text records concatenated, as an XML reader reports them. */
export function textContent(element: XmlElement): string {
  const { children } = element;
  // One text record, as nearly every header and value is: its string, without the arrays of the general case.
  if (children.length === 1 && children[0]!.kind === 'text') return textToString(children[0]!);
  return recordsText(textRecords(element));
}

/** Text records' characters, concatenated; one record (nearly every value) without an array and a join. */
export const recordsText = (records: readonly XmlText[]): string =>
  records.length === 1 ? textToString(records[0]!) : records.map(textToString).join('');

/** xs:boolean (whitespace collapsed, as XmlConvert reads it); undefined when the text is none of its four forms. */
export function xsBoolean(text: string): boolean | undefined {
  const value = text.trim();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  return undefined;
}

/** A QName value's prefix ('' for none) and local name, whitespace collapsed; InvalidArgument when it is none. */
export function qnameParts(text: string): { prefix: string; name: string } {
  const value = text.trim();
  const colon = value.indexOf(':');
  const prefix = colon < 0 ? '' : value.slice(0, colon);
  const name = value.slice(colon + 1);
  if (name === '' || name.includes(':') || /\s/.test(value)) throw invalid(`'${value}' is not a qualified name.`);
  return { prefix, name };
}

/** A QName value (`prefix:local`, or `local` in the default namespace) resolved in `scope`. */
export function qnameValue(text: string, scope: Scope): QualifiedName {
  const { prefix, name } = qnameParts(text);
  return { name, namespace: resolve(scope, prefix, `'${text.trim()}'`) };
}

/** `i:nil="true"` (or "1") on an element. */
export function isNil(element: XmlElement, scope: Scope): boolean {
  const nil = attributeText(element, scope, XSI_NS, 'nil');
  if (nil === undefined) return false;
  const value = xsBoolean(textToString(nil));
  if (value === undefined) throw invalid(`i:nil="${textToString(nil)}" on <${element.localName}> is not a boolean.`);
  return value;
}
