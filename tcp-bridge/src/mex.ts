/**
 * WS-MetadataExchange over net.tcp: the `/mex` via beside the endpoint (`net.tcp://host:port/IDBService/mex`), where
 * `dotnet-svcutil net.tcp://…/IDBService/mex` and .NET's MetadataExchangeClient fetch the service description.
 *
 * What WCF's mexTcpBinding endpoint does (MetadataExchangeBindings.CreateMexTcpBinding: a CustomBinding of a
 * TcpTransportBindingElement only, so net.tcp framing, binary SOAP 1.2 + WS-Addressing 1.0, no security upgrade;
 * IMetadataExchange.Get; ServiceMetadataExtension's answer):
 * - the one request served is WS-Transfer Get (Action `…/transfer/Get`, its Body ignored as WCF ignores it);
 * - the answer is Action `…/transfer/GetResponse`, RelatesTo the request's MessageID, Body `wsx:Metadata` with one
 *   `wsx:MetadataSection Dialect="http://schemas.xmlsoap.org/wsdl/" Identifier="{targetNamespace}"` holding
 *   exactly the document `GET /IDBService?wsdl` serves (src/idb/wsdl.ts; its schemas are inline, so no XSD section);
 * - any other action gets the ActionNotSupported SOAP fault, a malformed request the fault readRequest would give.
 * The via is served without the upgrade and the caller is anonymous, as WCF serves mexTcpBinding: it reveals nothing
 * the WSDL does not, and runs no operation.
 */
import { wsdlDefinitions, type Caller, type EndpointConfig, type Logger, type WsdlElement } from '#idb';
import {
  attribute,
  element,
  stringText,
  xmlns,
  type XmlAttributeNode,
  type XmlContent,
  type XmlDocument,
  type XmlElement,
} from './binary-xml/index.ts';
import { readAddressed, replyEnvelope, SoapFault, writeFault, type SoapOptions } from './soap/index.ts';
import type { Dispatch } from './streams.ts';

export const TRANSFER_GET = 'http://schemas.xmlsoap.org/ws/2004/09/transfer/Get';
export const TRANSFER_GET_RESPONSE = 'http://schemas.xmlsoap.org/ws/2004/09/transfer/GetResponse';
export const MEX_NS = 'http://schemas.xmlsoap.org/ws/2004/09/mex';
export const WSDL_DIALECT = 'http://schemas.xmlsoap.org/wsdl/';

/** The metadata via's path for an endpoint path: WCF's relative address `mex` under the service's base address. */
export const metadataPath = (endpointPath: string): string => `${endpointPath.replace(/\/$/, '')}/mex`;

/**
 * The dispatch of the metadata via. `endpoint` is asked at the first Get (the server knows the port it got only once
 * listening); the answer's body is built then, once: the settings do not change while running.
 */
export function metadataDispatch(endpoint: () => EndpointConfig, logger: Logger): Dispatch {
  let metadata: XmlElement | undefined;
  const answer = async (document: XmlDocument, caller: Caller): Promise<XmlDocument> => {
    const described = endpoint();
    const options: SoapOptions = { serviceNamespace: described.serviceNamespace };
    try {
      const request = readAddressed(document, options, (action) => (action === TRANSFER_GET ? action : undefined));
      logger.log('info', 'metadata', { connectionId: caller.connectionId });
      metadata ??= metadataElement(described);
      return replyEnvelope(TRANSFER_GET_RESPONSE, request, [], [metadata]);
    } catch (error) {
      if (!(error instanceof SoapFault)) throw error;
      logger.log('info', 'metadata request refused', { connectionId: caller.connectionId, code: error.code });
      return writeFault(undefined, error, options);
    }
  };
  return { answer };
}

/** `wsx:Metadata` with the WSDL's section, as ServiceMetadataExtension writes the MetadataSet. */
function metadataElement(endpoint: EndpointConfig): XmlElement {
  return element(
    'wsx',
    'Metadata',
    [xmlns('wsx', MEX_NS)],
    [
      element(
        'wsx',
        'MetadataSection',
        [attribute('', 'Dialect', WSDL_DIALECT), attribute('', 'Identifier', endpoint.serviceNamespace)],
        [binaryTree(wsdlDefinitions(endpoint, { dataTable: 'dataset' }))],
      ),
    ],
  );
}

/** The WSDL tree as NBFX nodes: `p:name` split into prefix and name, `xmlns`/`xmlns:p` attributes as declarations. */
function binaryTree(node: WsdlElement): XmlElement {
  const attributes: XmlAttributeNode[] = [];
  for (const [name, value] of Object.entries(node.attrs)) {
    if (value === undefined) continue;
    const [prefix, localName] = split(name);
    if (name === 'xmlns') attributes.push(xmlns('', value));
    else if (prefix === 'xmlns') attributes.push(xmlns(localName, value));
    else attributes.push(attribute(prefix, localName, value));
  }
  const children: XmlContent[] = node.children.map((child) =>
    typeof child === 'string' ? stringText(child) : binaryTree(child),
  );
  const [prefix, localName] = split(node.name);
  return element(prefix, localName, attributes, children);
}

function split(name: string): [string, string] {
  const colon = name.indexOf(':');
  return colon < 0 ? ['', name] : [name.slice(0, colon), name.slice(colon + 1)];
}
