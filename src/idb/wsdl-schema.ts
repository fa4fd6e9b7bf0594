/**
 * The XSD part of the published description (wsdl.ts): the operations' wrapper elements, the serialization and data
 * contract schemas and System.Data's DataTable, as DataContractSerializer's exporter writes them; with the namespaces
 * and the small XML tree (and its escaping writer) the whole document is built from.
 */
import { OPERATIONS } from './contract.ts';
import {
  CLASSES,
  isArray,
  isClass,
  isValueType,
  itemOf,
  CONTRACTS_NS,
  SER_NS,
  SIGNATURES,
  type DcType,
} from './contract-shapes.ts';
import { escapeAttribute, escapeText } from './datatable.ts';

export interface WsdlOptions {
  /**
   * How ReturnDatatable's result is described. `dataset`: the type {System.Data}DataTable as .NET describes it (the
   * ActualType annotation and the two xs:any of schema and diffgram, see dataTableType), from which .NET's svcutil
   * and dotnet-svcutil generate a DataTable member. `anytype`: plain xs:anyType, for Mono's svcutil, which
   * mis-imports the DataTable form.
   */
  dataTable: 'dataset' | 'anytype';
}

export const NS = {
  wsdl: 'http://schemas.xmlsoap.org/wsdl/',
  xs: 'http://www.w3.org/2001/XMLSchema',
  soap12: 'http://schemas.xmlsoap.org/wsdl/soap12/',
  wsp: 'http://schemas.xmlsoap.org/ws/2004/09/policy',
  wsu: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd',
  wsaw: 'http://www.w3.org/2006/05/addressing/wsdl',
  wsa10: 'http://www.w3.org/2005/08/addressing',
  msb: 'http://schemas.microsoft.com/ws/06/2004/mspolicy/netbinary1',
  msf: 'http://schemas.microsoft.com/ws/2006/05/framing/policy',
  sp: 'http://schemas.xmlsoap.org/ws/2005/07/securitypolicy',
  identity: 'http://schemas.xmlsoap.org/ws/2006/02/addressingidentity',
  ser: SER_NS,
  dc: CONTRACTS_NS,
  systemData: 'http://schemas.datacontract.org/2004/07/System.Data',
  diffgram: 'urn:schemas-microsoft-com:xml-diffgram-v1',
} as const;

// ---------------------------------------------------------------------------------------------------------------
// The contract's types (contract-shapes.ts) as XSD type references.

interface TypeRef {
  ns: string;
  name: string;
  nillable: boolean;
}

/**
 * DataContractSerializer's XSD name of a type: reference types are nillable, value types not. DataTable is named by
 * memberElement, as WsdlOptions asks.
 */
export function typeRef(type: Exclude<DcType, 'DataTable'>): TypeRef {
  const ns = isClass(type) || isArray(type) ? NS.dc : type === 'guid' ? NS.ser : NS.xs;
  return { ns, name: type, nillable: !isValueType(type) };
}

// ---------------------------------------------------------------------------------------------------------------
// A small XML tree and its writer: attribute values and text are escaped here, once, so configured text (namespace,
// address, identity) cannot break the document.

/** An element as written: `name` and attribute names with their prefix, namespaces declared as `xmlns:p` attributes. */
export interface WsdlElement {
  name: string;
  attrs: Record<string, string | undefined>;
  children: WsdlNode[];
}
export type WsdlNode = WsdlElement | string;

export function el(
  name: string,
  attrs: Record<string, string | undefined> = {},
  ...children: (WsdlNode | WsdlNode[])[]
): WsdlElement {
  return { name, attrs, children: children.flat() };
}

export function render(node: WsdlElement, indent = ''): string {
  const attrs = Object.entries(node.attrs)
    .filter((a): a is [string, string] => a[1] !== undefined)
    .map(([k, v]) => ` ${k}="${escapeAttribute(v)}"`)
    .join('');
  const open = `${indent}<${node.name}${attrs}`;
  if (node.children.length === 0) return `${open}/>`;
  if (node.children.every((c) => typeof c === 'string'))
    return `${open}>${node.children.map((c) => escapeText(c as string)).join('')}</${node.name}>`;
  const inner = node.children
    .map((c) => (typeof c === 'string' ? `${indent}  ${escapeText(c)}` : render(c, `${indent}  `)))
    .join('\n');
  return `${open}>\n${inner}\n${indent}</${node.name}>`;
}

// ---------------------------------------------------------------------------------------------------------------
// Schemas

/**
 * An element declaration of a member, a parameter or a result: always optional (no IsRequired), nillable as its type
 * is; a DataTable as WsdlOptions.dataTable asks. `qualify` names a type outside the schema's own prefixes; the
 * operation schema declares a fresh `qN` prefix on each such element, as WCF's exporter writes it.
 */
function memberElement(
  name: string,
  type: DcType,
  qualify: (type: TypeRef) => { qname: string; xmlns?: [string, string] },
  options: WsdlOptions,
): WsdlElement {
  const ref =
    type !== 'DataTable'
      ? typeRef(type)
      : options.dataTable === 'dataset'
        ? { ns: NS.systemData, name: 'DataTable', nillable: true }
        : typeRef('anyType');
  const { qname, xmlns } = qualify(ref);
  return el('xs:element', {
    ...(xmlns ? { [xmlns[0]]: xmlns[1] } : {}),
    minOccurs: '0',
    name,
    nillable: ref.nillable ? 'true' : undefined,
    type: qname,
  });
}

/**
 * DataTable as .NET's DataContractSerializer describes it: the type of DataTable.GetDataTableSchema (the inline
 * schema, then the diffgram), annotated with the CLR type it stands for. WCF's exporter writes it anonymously inside
 * each element that holds a table; here it is the named type {System.Data}DataTable that the element refers to, the
 * one form dotnet-svcutil's DataContract importer maps to System.Data.DataTable (the anonymous form makes it fall
 * back to the XmlSerializer for the whole contract, dotnet/wcf#4770, or, with System.Data.Common referenced, generate
 * a wrapper class). .NET Framework's svcutil maps both forms to DataTable.
 */
function dataTableType(): WsdlElement {
  return el(
    'xs:complexType',
    { name: 'DataTable' },
    el(
      'xs:annotation',
      {},
      el('xs:appinfo', {}, el('ActualType', { Name: 'DataTable', Namespace: NS.systemData, xmlns: NS.ser })),
    ),
    el(
      'xs:sequence',
      {},
      el('xs:any', { minOccurs: '0', maxOccurs: 'unbounded', namespace: NS.xs, processContents: 'lax' }),
      el('xs:any', { minOccurs: '1', namespace: NS.diffgram, processContents: 'lax' }),
    ),
  );
}

export function operationSchema(ns: string, options: WsdlOptions): WsdlElement {
  let q = 0;
  const qualify = (type: TypeRef) => {
    if (type.ns === NS.xs) return { qname: `xs:${type.name}` };
    const prefix = `q${++q}`;
    return { qname: `${prefix}:${type.name}`, xmlns: [`xmlns:${prefix}`, type.ns] as [string, string] };
  };
  const wrapper = (name: string, members: WsdlElement[]) =>
    el('xs:element', { name }, el('xs:complexType', {}, el('xs:sequence', {}, members)));
  return el(
    'xs:schema',
    { elementFormDefault: 'qualified', targetNamespace: ns, 'xmlns:xs': NS.xs },
    el('xs:import', { namespace: NS.ser }),
    el('xs:import', { namespace: NS.dc }),
    options.dataTable === 'dataset' ? el('xs:import', { namespace: NS.systemData }) : [],
    OPERATIONS.flatMap((op) => {
      const { params, result: type } = SIGNATURES[op];
      return [
        wrapper(
          op,
          params.map(([name, t]) => memberElement(name, t, qualify, options)),
        ),
        wrapper(`${op}Response`, [memberElement(`${op}Result`, type, qualify, options)]),
      ];
    }),
  );
}

/** The serialization namespace's own schema, which .NET publishes beside every data contract schema. */
export function serializationSchema(): WsdlElement {
  const primitives = [
    'anyType',
    'anyURI',
    'base64Binary',
    'boolean',
    'byte',
    'dateTime',
    'decimal',
    'double',
    'float',
    'int',
    'long',
    'QName',
    'short',
    'string',
    'unsignedByte',
    'unsignedInt',
    'unsignedLong',
    'unsignedShort',
  ];
  const restricted = (name: string, base: string, ...facets: [string, string][]) => [
    el('xs:element', { name, nillable: 'true', type: `tns:${name}` }),
    el(
      'xs:simpleType',
      { name },
      el(
        'xs:restriction',
        { base },
        facets.map(([facet, value]) => el(`xs:${facet}`, { value })),
      ),
    ),
  ];
  return el(
    'xs:schema',
    {
      attributeFormDefault: 'qualified',
      elementFormDefault: 'qualified',
      targetNamespace: NS.ser,
      'xmlns:xs': NS.xs,
      'xmlns:tns': NS.ser,
    },
    primitives.map((name) => el('xs:element', { name, nillable: 'true', type: `xs:${name}` })),
    restricted('char', 'xs:int'),
    restricted(
      'duration',
      'xs:duration',
      ['pattern', '\\-?P(\\d*D)?(T(\\d*H)?(\\d*M)?(\\d*(\\.\\d*)?S)?)?'],
      ['minInclusive', '-P10675199DT2H48M5.4775808S'],
      ['maxInclusive', 'P10675199DT2H48M5.4775807S'],
    ),
    restricted('guid', 'xs:string', [
      'pattern',
      '[\\da-fA-F]{8}-[\\da-fA-F]{4}-[\\da-fA-F]{4}-[\\da-fA-F]{4}-[\\da-fA-F]{12}',
    ]),
    el('xs:attribute', { name: 'FactoryType', type: 'xs:QName' }),
    el('xs:attribute', { name: 'Id', type: 'xs:ID' }),
    el('xs:attribute', { name: 'Ref', type: 'xs:IDREF' }),
  );
}

/**
 * The data contracts, in the order DataContractSerializer meets them walking the operations (a contract, then what
 * its members need), each a named complex type plus a top-level element. Members keep CLASSES' order, which is the
 * serializer's.
 */
export function dataContractSchema(options: WsdlOptions): WsdlElement {
  const prefixes: Record<string, string> = { [NS.xs]: 'xs', [NS.dc]: 'tns', [NS.ser]: 'ser' };
  const qualify = (type: TypeRef) => ({ qname: `${prefixes[type.ns]}:${type.name}` });
  const seen = new Set<string>();
  const items: WsdlElement[] = [];
  const visit = (type: DcType) => {
    if (!(isClass(type) || isArray(type)) || seen.has(type)) return;
    seen.add(type);
    let members: WsdlElement[];
    let next: DcType[];
    if (isArray(type)) {
      const item = itemOf(type);
      members = [
        el('xs:element', { minOccurs: '0', maxOccurs: 'unbounded', name: item, nillable: 'true', type: `tns:${item}` }),
      ];
      next = [item];
    } else {
      members = CLASSES[type].map(([name, t]) => memberElement(name, t, qualify, options));
      next = CLASSES[type].map(([, t]) => t);
    }
    items.push(
      el('xs:complexType', { name: type }, el('xs:sequence', {}, members)),
      el('xs:element', { name: type, nillable: 'true', type: `tns:${type}` }),
    );
    next.forEach(visit);
  };
  for (const op of OPERATIONS) {
    const { params, result } = SIGNATURES[op];
    for (const [, t] of params) visit(t);
    visit(result);
  }
  return el(
    'xs:schema',
    {
      elementFormDefault: 'qualified',
      targetNamespace: NS.dc,
      'xmlns:xs': NS.xs,
      'xmlns:tns': NS.dc,
      'xmlns:ser': NS.ser,
    },
    el('xs:import', { namespace: NS.ser }),
    items,
  );
}

/** DataTable's type and top-level element, in System.Data's namespace as .NET exports them. */
export function systemDataSchema(): WsdlElement {
  return el(
    'xs:schema',
    { elementFormDefault: 'qualified', targetNamespace: NS.systemData, 'xmlns:xs': NS.xs, 'xmlns:tns': NS.systemData },
    dataTableType(),
    el('xs:element', { name: 'DataTable', nillable: 'true', type: 'tns:DataTable' }),
  );
}
