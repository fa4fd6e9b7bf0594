/**
 * An operation's reply: `<OpResponse xmlns="{ns}"><OpResult …>` in the shape DataContractSerializer writes the
 * result (dc-writer.ts), in the envelope with Action `{…}/OpResponse` and RelatesTo the request's MessageID.
 */
import { element, xmlns, type XmlDocument } from '../binary-xml/index.ts';
import type { OperationName, Operations } from '#idb';
import { SIGNATURES } from './contract-types.ts';
import { writeValue } from './dc-writer.ts';
import { ENVELOPE_SCOPE, replyEnvelope } from './envelope.ts';
import type { ReplyAddressing } from './fault.ts';
import { replyActionOf, type SoapOptions } from './names.ts';

export function writeReply<K extends OperationName>(
  request: ReplyAddressing,
  operation: K,
  result: Operations[K]['result'],
  options: SoapOptions,
): XmlDocument {
  const ns = options.serviceNamespace;
  const scope = new Map([...ENVELOPE_SCOPE, ['', ns]]);
  const value = writeValue(SIGNATURES[operation].result, '', `${operation}Result`, result, scope, true);
  return replyEnvelope(
    replyActionOf(ns, operation),
    request,
    [],
    [element('', `${operation}Response`, [xmlns('', ns)], [value])],
  );
}
