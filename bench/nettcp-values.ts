/**
 * The SOAP values the benchmark's net.tcp clients (bench/nettcp-client.ts, bench/bridge-percall.ts) write: the request
 * envelope, a QueryParameter[] as DataContractSerializer writes it, and each ClrValue as the NBFX text record a .NET
 * client sends.
 */
import type { ClrValue } from '#idb';
import {
  attribute,
  boolText,
  bytesText,
  decimalText,
  dictionaryText,
  doubleText,
  element,
  intText,
  qnameText,
  stringText,
  uniqueIdText,
  uuidText,
  xmlns,
  type XmlContent,
  type XmlElement,
  type XmlText,
} from '../tcp-bridge/src/binary-xml/index.ts';
import {
  actionPrefix,
  ANONYMOUS,
  CONTRACTS_NS as DATA_CONTRACTS,
  SER_NS as SER,
  SOAP_NS as SOAP12,
  WSA_NS as WSA10,
  XSD_NS as XSD,
  XSI_NS as XSI,
} from '../tcp-bridge/src/soap/names.ts';

export interface QueryParameterValue {
  name: string;
  value: ClrValue | null;
}

/** The `parameters` element as DataContractSerializer writes a QueryParameter[] (nil for none). */
export function parametersElement(parameters: readonly QueryParameterValue[] | undefined): XmlElement {
  if (parameters === undefined)
    return element('', 'parameters', [attribute('i', 'nil', boolText(true)), xmlns('i', XSI)]);
  const items = parameters.map((p) =>
    element(
      'b',
      'QueryParameter',
      [],
      [
        element('b', 'Name', [], [stringText(p.name)]),
        p.value === null
          ? element('b', 'Value', [attribute('i', 'nil', boolText(true))])
          : element(
              'b',
              'Value',
              [
                attribute('i', 'type', qnameText(p.value.type === 'guid' ? 'd' : 'c', p.value.type)),
                xmlns(p.value.type === 'guid' ? 'd' : 'c', p.value.type === 'guid' ? SER : XSD),
              ],
              [valueText(p.value)],
            ),
      ],
    ),
  );
  return element('', 'parameters', [xmlns('b', DATA_CONTRACTS), xmlns('i', XSI)], items);
}

export function valueText(value: ClrValue): XmlText {
  switch (value.type) {
    case 'int':
    case 'short':
    case 'long':
      return intText(value.value);
    case 'decimal':
      return decimalText(value.value);
    case 'float':
      return { kind: 'text', type: 'Float', value: value.value };
    case 'double':
      return doubleText(value.value);
    case 'boolean':
      return boolText(value.value);
    case 'string':
    case 'dateTime':
      return stringText(value.value);
    case 'base64Binary':
      return bytesText(value.value);
    case 'guid':
      return uuidText(value.value);
  }
}

/**
 * A request as a .NET client sends it: `<operation xmlns="{ns}">children</operation>` with Action
 * `{ns}IIDBService/{operation}`, MessageID, anonymous ReplyTo and To.
 */
export function requestEnvelope(
  namespace: string,
  endpoint: string,
  operation: string,
  children: XmlContent[],
  messageId: string,
): XmlElement {
  const mustUnderstand = attribute('s', 'mustUnderstand', '1');
  return element(
    's',
    'Envelope',
    [xmlns('s', SOAP12), xmlns('a', WSA10)],
    [
      element(
        's',
        'Header',
        [],
        [
          element('a', 'Action', [mustUnderstand], [stringText(actionPrefix(namespace) + operation)]),
          element('a', 'MessageID', [], [uniqueIdText(messageId)]),
          element('a', 'ReplyTo', [], [element('a', 'Address', [], [dictionaryText(ANONYMOUS)])]),
          element('a', 'To', [mustUnderstand], [stringText(endpoint)]),
        ],
      ),
      element('s', 'Body', [], [element('', operation, [xmlns('', namespace)], children)]),
    ],
  );
}
