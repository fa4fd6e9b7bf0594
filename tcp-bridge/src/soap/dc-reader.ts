/**
 * Reads DataContractSerializer XML into the contract's values (src/idb/contract.ts): operation parameters, data
 * contracts, arrays, simple values and `object` values by their `i:type`.
 *
 * Decisions:
 * - Members and parameters are matched by name and namespace in any order. DataContractSerializer reads them in
 *   order and silently drops one that comes out of order; a WCF client always writes them in order, so accepting any
 *   order reads every conforming message the same and loses nothing from a reordered one. A member given twice is
 *   refused (InvalidArgument) instead of one copy winning.
 * - Elements that are no member are skipped (as DataContractSerializer skips unknown data); missing members and
 *   parameters take the value DataContractSerializer leaves: null, or a value type's default (Guid.Empty, false, 0,
 *   DateTime.MinValue).
 * - `i:nil` is accepted wherever the type is a reference type and refused for value types. A nil array item is
 *   refused too: the contract's arrays hold no nulls.
 * - `i:type` is read only where the declared type is `object`; there it must name one of the ClrValue types, in its
 *   namespace (xs, or ser for guid), resolved through the xmlns declarations in scope.
 */
import { textToString, type XmlElement } from '../binary-xml/index.ts';
import type { ClrValue, ClrValueType } from '#idb';
import {
  CLASSES,
  DEFAULTS,
  isArray,
  isClass,
  isValueType,
  itemOf,
  type DcType,
  type Members,
} from './contract-types.ts';
import { CONTRACTS_NS, XSI_NS } from './names.ts';
import { SIMPLE_TYPES, simpleTypeNamed } from './simple-types.ts';
import {
  attributeText,
  childElements,
  enterScope,
  invalid,
  is,
  isNil,
  nameOf,
  qnameValue,
  textRecords,
  type Scope,
} from './tree.ts';

/** A value of `type` from `element`; `scope` is the one inside the element (enterScope). */
export function readValue(type: DcType, element: XmlElement, scope: Scope): unknown {
  if (isNil(element, scope)) {
    if (isValueType(type)) throw invalid(`<${element.localName}> is nil, but a ${type} cannot be.`);
    return null;
  }
  if (type === 'anyType') return readObject(element, scope);
  if (type === 'DataTable') throw invalid('A DataTable is not accepted as an argument.');
  if (isClass(type)) return readMembers(CLASSES[type], element, scope, CONTRACTS_NS);
  if (isArray(type)) {
    const item = itemOf(type);
    return childElements(element).map((child) => {
      const inner = enterScope(scope, child);
      if (!is(child, inner, CONTRACTS_NS, item))
        throw invalid(`<${element.localName}> holds <${child.localName}> where ${item} items belong.`);
      const value = readValue(item, child, inner);
      if (value === null) throw invalid(`An item of <${element.localName}> is nil.`);
      return value;
    });
  }
  return SIMPLE_TYPES[type as ClrValueType].read(textRecords(element));
}

/** The members of a data contract, or the parameters of an operation, by name (see the decisions above). */
export function readMembers(
  members: Members,
  element: XmlElement,
  scope: Scope,
  namespace: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const child of childElements(element)) {
    const inner = enterScope(scope, child);
    const { name, namespace: found } = nameOf(child, inner);
    const member = found === namespace ? memberNamed(members, name) : undefined;
    if (member === undefined) continue;
    if (Object.hasOwn(out, name)) throw invalid(`<${name}> comes twice in <${element.localName}>.`);
    out[name] = readValue(member[1], child, inner);
  }
  return withDefaults(members, out);
}

/** The member (or parameter) of that name, if the contract has one. */
export function memberNamed(members: Members, name: string): Members[number] | undefined {
  for (const member of members) if (member[0] === name) return member;
  return undefined;
}

/** `out` with the members it lacks set to what DataContractSerializer leaves: null, or a value type's default. */
export function withDefaults(members: Members, out: Record<string, unknown>): Record<string, unknown> {
  for (const [name, type] of members) if (!Object.hasOwn(out, name)) out[name] = DEFAULTS[type] ?? null;
  return out;
}

function readObject(element: XmlElement, scope: Scope): ClrValue {
  const typeText = attributeText(element, scope, XSI_NS, 'type');
  if (typeText === undefined) throw invalid(`<${element.localName}> is an object without i:type.`);
  const qname = qnameValue(textToString(typeText), scope);
  const type = simpleTypeNamed(qname.name, qname.namespace);
  if (type === undefined)
    throw invalid(
      `i:type '{${qname.namespace}}${qname.name}' of <${element.localName}> is not a type IIDBService accepts.`,
    );
  return { type, value: SIMPLE_TYPES[type].read(textRecords(element)) } as ClrValue;
}
