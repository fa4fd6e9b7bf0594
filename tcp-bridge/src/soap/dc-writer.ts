/**
 * Writes contract values as DataContractSerializer does through XmlBinaryWriter, in the shapes a WCF client reads:
 * - the root of a data contract or array declares the contracts namespace (the first prefix letter free in scope:
 *   `b` inside a reply, where s and a are taken) and then `xmlns:i` (XSI), as DataContractSerializer's
 *   WriteRootElement and HandleGraphAtTopLevel do, even when the value is nil;
 * - an `object` carries `i:type="b:int"` with `xmlns:b` (XSD, or ser for guid) and `xmlns:i` after it: XmlBaseWriter
 *   writes the declarations a start element needs after its attributes (the Mono capture shows the same);
 * - null is `i:nil="true"` (a True record); members are in alphabetical order, prefixed; array items are named after
 *   their contract; a DataTable is its inline schema and diffgram.
 */
import {
  attribute,
  boolText,
  element,
  qnameText,
  xmlns,
  type XmlAttributeNode,
  type XmlContent,
  type XmlElement,
} from '../binary-xml/index.ts';
import type { ClrValue, ClrValueType, DataTableResult } from '#idb';
import { CLASSES, isArray, isClass, isValueType, itemOf, type DcType } from './contract-types.ts';
import { dataTableContent } from './datatable-xml.ts';
import { CONTRACTS_NS, XSI_NS } from './names.ts';
import { SIMPLE_TYPES, type SimpleType } from './simple-types.ts';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/**
 * The element `prefix:localName` holding `value` of `type`. `scope` holds the prefixes declared around it; `root`
 * marks the top of a serialized value (an operation's result), where DataContractSerializer declares namespaces.
 */
export function writeValue(
  type: DcType,
  prefix: string,
  localName: string,
  value: unknown,
  scope: ReadonlyMap<string, string>,
  root: boolean,
): XmlElement {
  const attributes: XmlAttributeNode[] = [];
  const declarations: XmlAttributeNode[] = [];
  let declared: Map<string, string> | undefined;
  /** The prefix bound to `namespace` in scope, else `wanted` or the first free letter, declared here. */
  const prefixOf = (namespace: string, wanted?: string): string => {
    for (const [p, uri] of declared ?? scope)
      if (uri === namespace && p !== '' && (wanted === undefined || p === wanted)) return p;
    declared ??= new Map(scope);
    let chosen = wanted;
    for (let i = 0; chosen === undefined; i++) if (!declared.has(LETTERS[i]!)) chosen = LETTERS[i]!;
    declared.set(chosen, namespace);
    declarations.push(xmlns(chosen, namespace));
    return chosen;
  };
  const item = isArray(type) ? itemOf(type) : undefined;
  const contract = isClass(type) || item !== undefined;
  if (root && contract) {
    prefixOf(CONTRACTS_NS);
    prefixOf(XSI_NS, 'i');
  }
  const done = (children: XmlContent[]): XmlElement =>
    element(prefix, localName, [...attributes, ...declarations], children);

  if (value === null || value === undefined) {
    if (isValueType(type)) throw new TypeError(`${localName} (${type}) cannot be null`);
    attributes.push(attribute(prefixOf(XSI_NS, 'i'), 'nil', boolText(true)));
    return done([]);
  }
  if (type === 'anyType') {
    const clr = value as ClrValue;
    const simple = SIMPLE_TYPES[clr.type] as SimpleType<ClrValue['type']>;
    const typePrefix = prefixOf(simple.namespace);
    attributes.push(attribute(prefixOf(XSI_NS, 'i'), 'type', qnameText(typePrefix, clr.type)));
    return done(simple.write(clr.value as never));
  }
  if (type === 'DataTable') {
    const table = value as DataTableResult;
    const { events } = table;
    return done(events ? [{ kind: 'events', replay: (sink) => events.replay(sink) }] : dataTableContent(table.xml));
  }
  if (item !== undefined) {
    const members = prefixOf(CONTRACTS_NS);
    return done((value as unknown[]).map((v) => writeValue(item, members, item, v, declared ?? scope, false)));
  }
  if (isClass(type)) {
    const members = prefixOf(CONTRACTS_NS);
    const record = value as Record<string, unknown>;
    return done(
      CLASSES[type].map(([name, memberType]) =>
        writeValue(memberType, members, name, record[name], declared ?? scope, false),
      ),
    );
  }
  return done((SIMPLE_TYPES[type as ClrValueType] as SimpleType<ClrValueType>).write(value as never));
}
