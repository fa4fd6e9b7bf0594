/**
 * ReturnDatatable's `{xml}` (the inline schema and the diffgram src/idb/datatable.ts writes) as NBFX content for
 * the result element, written as XmlBinaryWriter would write the same XmlWriter calls: each value as WriteString
 * text (Chars, or Zero/One for "0"/"1"), an element's own attributes first and its namespace declarations after
 * them, the declaration of its own prefix first (what .NET's writer does, and what the Mono capture shows:
 * `<xs:schema id=… xmlns:xs=… xmlns="" xmlns:msdata=…>`).
 *
 * The service's answer carries the XML as events too (src/idb/xml-events.ts): the binary writer writes those as it
 * replays them (an `events` node, binary-xml/writer.ts), with neither the text written and read back (measured: that
 * round trip was a third of a 2 000-row ReturnDatatable in the bridge) nor a node per element (measured: building
 * them was ~12% of it, and much of its garbage). dataTableContent reads the text, for an answer that has only that.
 *
 * Decision: a small strict parser of exactly that XML instead of a library. datatable.ts writes only elements,
 * attributes in double quotes, namespace declarations, text and the entities &amp; &lt; &gt; &quot; &#xD; &#x9;
 * &#xA;; this reads those (and any numeric reference) and refuses everything else (comments, CDATA, processing
 * instructions, DOCTYPE, unknown entities, mismatched tags, undeclared prefixes) rather than guess. txml, the
 * package considered, gives neither namespaces nor decoded entities, and the only XML parser already installed
 * (fast-xml-parser) is a development-only dependency of s3rver, so nothing is added to the dependencies.
 */
import {
  attribute,
  element,
  splitName,
  stringText,
  xmlns,
  type XmlAttributeNode,
  type XmlContent,
  type XmlElement,
} from '../binary-xml/index.ts';
import { XML_NS } from './names.ts';

export class DataTableXmlError extends Error {
  override name = 'DataTableXmlError';
}

const NAME = /[^\s<>&"'=/]+/y;
const SPACE = /\s*/y;
const ENTITY = /&(?:(amp|lt|gt|quot|apos)|#x([0-9a-fA-F]{1,6})|#([0-9]{1,7}));/g;
const NAMED: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

interface Open {
  node: XmlElement;
  name: string;
  scope: ReadonlyMap<string, string>;
}

/** The elements (and any text between them) of `xml`. Throws DataTableXmlError for anything it does not read. */
export function dataTableContent(xml: string): XmlContent[] {
  const top: XmlContent[] = [];
  const stack: Open[] = [];
  let scope: ReadonlyMap<string, string> = new Map([['xml', XML_NS]]);
  let at = 0;
  const fail = (message: string): never => {
    throw new DataTableXmlError(`${message} at offset ${at} of the DataTable XML`);
  };
  const children = (): XmlContent[] => (stack.length ? stack[stack.length - 1]!.node.children : top);
  const name = (): string => {
    NAME.lastIndex = at;
    const m = NAME.exec(xml);
    if (!m) return fail('a name expected');
    at = NAME.lastIndex;
    return m[0];
  };
  const space = (): void => {
    SPACE.lastIndex = at;
    SPACE.exec(xml);
    at = SPACE.lastIndex;
  };

  while (at < xml.length) {
    if (xml[at] !== '<') {
      const end = xml.indexOf('<', at);
      const text = decode(xml.slice(at, end < 0 ? xml.length : end), false, fail);
      if (stack.length === 0 && text.trim() !== '') fail('text outside the elements');
      children().push(stringText(text));
      at = end < 0 ? xml.length : end;
      continue;
    }
    at++;
    if (xml[at] === '/') {
      at++;
      const closing = name();
      space();
      if (xml[at] !== '>') fail('">" expected');
      at++;
      const open = stack.pop() ?? fail(`</${closing}> without a start tag`);
      if (open.name !== closing) fail(`</${closing}> closes <${open.name}>`);
      scope = stack.length ? stack[stack.length - 1]!.scope : new Map([['xml', XML_NS]]);
      continue;
    }
    if (xml[at] === '!' || xml[at] === '?')
      fail('comments, CDATA, declarations and processing instructions are not expected');
    const qname = name();
    const attributes: [string, string][] = [];
    for (;;) {
      space();
      if (xml.startsWith('/>', at) || xml[at] === '>') break;
      const attributeName = name();
      space();
      if (xml[at] !== '=') fail('"=" expected');
      at++;
      space();
      const quote = xml[at];
      if (quote !== '"' && quote !== "'") fail('a quoted value expected');
      const end = xml.indexOf(quote!, at + 1);
      if (end < 0) fail('an unterminated attribute value');
      const raw = xml.slice(at + 1, end);
      if (raw.includes('<')) fail('"<" in an attribute value');
      attributes.push([attributeName, decode(raw, true, fail)]);
      at = end + 1;
    }
    const selfClosing = xml[at] === '/';
    at += selfClosing ? 2 : 1;
    const made = toElement(qname, attributes, scope, fail);
    children().push(made.node);
    if (!selfClosing) {
      stack.push({ node: made.node, name: qname, scope: made.scope });
      scope = made.scope;
    }
  }
  if (stack.length) fail(`<${stack[stack.length - 1]!.name}> is not closed`);
  return top;
}

/** Text with its references replaced; line ends normalized, and in attribute values white space too (XML 1.0). */
function decode(raw: string, inAttribute: boolean, fail: (message: string) => never): string {
  const text = inAttribute ? raw.replace(/\r\n|[\t\n\r]/g, ' ') : raw.replace(/\r\n?/g, '\n');
  if (!text.includes('&')) return text;
  if (text.replace(ENTITY, '').includes('&')) fail('an unknown entity');
  return text.replace(ENTITY, (_, named: string | undefined, hex: string | undefined, dec: string | undefined) => {
    if (named) return NAMED[named]!;
    const code = parseInt(hex ?? dec!, hex ? 16 : 10);
    return code > 0x10ffff ? fail('a character reference beyond U+10FFFF') : String.fromCodePoint(code);
  });
}

/** The NBFX element: attributes, then declarations (its own prefix's first); every prefix must be declared. */
function toElement(
  qname: string,
  attributes: readonly [string, string][],
  outer: ReadonlyMap<string, string>,
  fail: (message: string) => never,
): { node: XmlElement; scope: ReadonlyMap<string, string> } {
  const [prefix, localName] = splitName(qname);
  // A scope of its own only where the element declares a prefix (a table's rows and cells declare none).
  let scope: Map<string, string> | undefined;
  const plain: XmlAttributeNode[] = [];
  const declarations: XmlAttributeNode[] = [];
  for (const [name, value] of attributes) {
    const [p, local] = splitName(name);
    if (name === 'xmlns' || p === 'xmlns') {
      const declared = name === 'xmlns' ? '' : local;
      scope ??= new Map(outer);
      scope.set(declared, value);
      const declaration = xmlns(declared, value);
      if (declared === prefix) declarations.unshift(declaration);
      else declarations.push(declaration);
    } else {
      plain.push(attribute(p, local, stringText(value)));
    }
  }
  const inScope = scope ?? outer;
  if (prefix !== '' && !inScope.has(prefix)) fail(`the prefix "${prefix}" is not declared`);
  for (const a of plain)
    if (a.kind === 'attribute' && a.prefix !== '' && !inScope.has(a.prefix))
      fail(`the prefix "${a.prefix}" is not declared`);
  return {
    node: element(prefix, localName, declarations.length ? [...plain, ...declarations] : plain),
    scope: inScope,
  };
}
