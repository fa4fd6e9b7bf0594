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
  const shape = replyShape(ns, operation);
  const value = writeValue(SIGNATURES[operation].result, '', shape.result, result, shape.scope, true);
  return replyEnvelope(shape.action, request, [], [element('', shape.response, [xmlns('', ns)], [value])]);
}

/** What every reply of one operation shares: its action, element names and the scope its result is written in. */
interface ReplyShape {
  action: string;
  response: string;
  result: string;
  scope: ReadonlyMap<string, string>;
}

/**
 * Made once per namespace and operation (13 operations, one namespace per endpoint): strings built anew for each
 * reply were hashed anew by each dictionary lookup of the writer (staticKey, the session), and the scope was a new
 * Map per reply.
 */
const shapes = new Map<string, Map<OperationName, ReplyShape>>();

function replyShape(ns: string, operation: OperationName): ReplyShape {
  let ofNamespace = shapes.get(ns);
  if (ofNamespace === undefined) {
    ofNamespace = new Map();
    shapes.set(ns, ofNamespace);
  }
  let shape = ofNamespace.get(operation);
  if (shape === undefined) {
    shape = {
      action: replyActionOf(ns, operation),
      response: `${operation}Response`,
      result: `${operation}Result`,
      scope: new Map([...ENVELOPE_SCOPE, ['', ns]]),
    };
    ofNamespace.set(operation, shape);
  }
  return shape;
}
