/**
 * The published description of IIDBService (docs/contract/iidbservice.md, "Published description"): one WSDL 1.1
 * document with its XSD inline, shaped as .NET's ServiceMetadataBehavior publishes a NetTcpBinding endpoint at
 * `?singleWsdl`, so that svcutil (and "Add Service Reference") generate the client the existing WCF clients were
 * compiled from.
 *
 * The service and the contract share one namespace (SERVICE_NAMESPACE). .NET would split the document into a
 * wsdl:import when the two differ; with one namespace everything stays in one file, which is what the spec asks for.
 *
 * Here the WSDL: policy, messages, port type, binding and service; the XSD in wsdl-schema.ts.
 */
import { OPERATIONS, type OperationName } from './contract.ts';
import { actionOf, CONTRACT_NAME as CONTRACT, replyActionOf } from './contract-shapes.ts';
import type { EndpointConfig } from './config.ts';
import {
  dataContractSchema,
  el,
  NS,
  operationSchema,
  render,
  serializationSchema,
  systemDataSchema,
  type WsdlElement,
  type WsdlOptions,
} from './wsdl-schema.ts';

export type { WsdlElement, WsdlNode, WsdlOptions } from './wsdl-schema.ts';

/** What WCF calls the endpoint's pieces: `<Binding>_<Contract>` for binding and port, the service class's name. */
const SERVICE = 'IDBService';
const BINDING = `NetTcpBinding_${CONTRACT}`;
const POLICY_ID = `${BINDING}_policy`;
const TCP_TRANSPORT = 'http://schemas.microsoft.com/soap/tcp';

// ---------------------------------------------------------------------------------------------------------------
// Policy: what NetTcpBinding exports. Security mode None leaves the security assertion out
// (docs/contract/operations.md: the WSDL declares what the bridge runs), so a generated client's configuration matches
// the running bridge.

function policy(endpoint: EndpointConfig): WsdlElement {
  const nested = (name: string, ...children: WsdlElement[]) => el(name, {}, el('wsp:Policy', {}, children));
  const transportSecurity =
    endpoint.security === 'windows'
      ? el(
          'sp:TransportBinding',
          { 'xmlns:sp': NS.sp },
          el(
            'wsp:Policy',
            {},
            nested(
              'sp:TransportToken',
              el(
                'msf:WindowsTransportSecurity',
                { 'xmlns:msf': NS.msf },
                el('msf:ProtectionLevel', {}, endpoint.protectionLevel),
              ),
            ),
            nested('sp:AlgorithmSuite', el('sp:Basic256')),
            nested('sp:Layout', el('sp:Strict')),
          ),
        )
      : [];
  return el(
    'wsp:Policy',
    { 'wsu:Id': POLICY_ID },
    el(
      'wsp:ExactlyOne',
      {},
      el(
        'wsp:All',
        {},
        el('msb:BinaryEncoding', { 'xmlns:msb': NS.msb }),
        transportSecurity,
        el('wsaw:UsingAddressing'),
      ),
    ),
  );
}

// ---------------------------------------------------------------------------------------------------------------

/** The document of `GET /IDBService?wsdl`. */
export function writeWsdl(endpoint: EndpointConfig, options: WsdlOptions): string {
  return `<?xml version="1.0" encoding="utf-8"?>\n${render(wsdlDefinitions(endpoint, options))}\n`;
}

/** The same document as a tree: what the bridge's WS-MetadataExchange answer carries (tcp-bridge/src/mex.ts). */
export function wsdlDefinitions(endpoint: EndpointConfig, options: WsdlOptions): WsdlElement {
  const ns = endpoint.serviceNamespace;
  const message = (op: OperationName, dir: 'Input' | 'Output', element: string) =>
    el(
      'wsdl:message',
      { name: `${CONTRACT}_${op}_${dir}Message` },
      el('wsdl:part', { name: 'parameters', element: `tns:${element}` }),
    );
  const body = el('soap12:body', { use: 'literal' });

  return el(
    'wsdl:definitions',
    {
      name: SERVICE,
      targetNamespace: ns,
      'xmlns:wsdl': NS.wsdl,
      'xmlns:xsd': NS.xs,
      'xmlns:soap12': NS.soap12,
      'xmlns:wsp': NS.wsp,
      'xmlns:wsu': NS.wsu,
      'xmlns:wsaw': NS.wsaw,
      'xmlns:wsa10': NS.wsa10,
      'xmlns:tns': ns,
    },
    policy(endpoint),
    el(
      'wsdl:types',
      {},
      operationSchema(ns, options),
      serializationSchema(),
      dataContractSchema(options),
      options.dataTable === 'dataset' ? systemDataSchema() : [],
    ),
    OPERATIONS.flatMap((op) => [message(op, 'Input', op), message(op, 'Output', `${op}Response`)]),
    el(
      'wsdl:portType',
      { name: CONTRACT },
      OPERATIONS.map((op) =>
        el(
          'wsdl:operation',
          { name: op },
          el('wsdl:input', { 'wsaw:Action': actionOf(ns, op), message: `tns:${CONTRACT}_${op}_InputMessage` }),
          el('wsdl:output', { 'wsaw:Action': replyActionOf(ns, op), message: `tns:${CONTRACT}_${op}_OutputMessage` }),
        ),
      ),
    ),
    el(
      'wsdl:binding',
      { name: BINDING, type: `tns:${CONTRACT}` },
      el('wsp:PolicyReference', { URI: `#${POLICY_ID}` }),
      el('soap12:binding', { transport: TCP_TRANSPORT }),
      OPERATIONS.map((op) =>
        el(
          'wsdl:operation',
          { name: op },
          el('soap12:operation', { soapAction: actionOf(ns, op), style: 'document' }),
          el('wsdl:input', {}, body),
          el('wsdl:output', {}, body),
        ),
      ),
    ),
    el(
      'wsdl:service',
      { name: SERVICE },
      el(
        'wsdl:port',
        { name: BINDING, binding: `tns:${BINDING}` },
        el('soap12:address', { location: endpoint.address }),
        el(
          'wsa10:EndpointReference',
          {},
          el('wsa10:Address', {}, endpoint.address),
          el('Identity', { xmlns: NS.identity }, el('Dns', {}, endpoint.dnsIdentity)),
        ),
      ),
    ),
  );
}
