/**
 * An operation's reply: `<OpResponse xmlns="{ns}"><OpResult …>` in the shape DataContractSerializer writes the
 * result (dc-writer.ts), in the envelope with Action `{…}/OpResponse` and RelatesTo the request's MessageID.
 *
 * Every reply of an operation on a connection has the same bytes but for its RelatesTo header and its result: once a
 * session has written one, it keeps the bytes around those two (encodeAround) and writes only them for the next
 * (encodeBetween), without making the reply's tree. test/bridge/soap/reply.test.ts checks, reply after reply, that the
 * bytes and the session are the ones encodeEnvelopeParts gives for the tree. Making a Heartbeat's reply tree and
 * writing it took ~1.4 µs of the ~6 µs the bridge spends on the call in process, this ~0.85 µs.
 */
import {
  element,
  encodeAround,
  encodeBetween,
  encodeEnvelopeParts,
  envelopeOf,
  xmlns,
  type EnvelopeWriting,
  type WriterSession,
  type XmlContent,
  type XmlDocument,
  type XmlElement,
} from '../binary-xml/index.ts';
import type { OperationName, Operations } from '#idb';
import { SIGNATURES } from './contract-types.ts';
import { writeValue } from './dc-writer.ts';
import { ENVELOPE_SCOPE, relatesTo, replyEnvelope } from './envelope.ts';
import type { ReplyAddressing } from './fault.ts';
import { ANONYMOUS, replyActionOf, type SoapOptions } from './names.ts';

export function writeReply<K extends OperationName>(
  request: ReplyAddressing,
  operation: K,
  result: Operations[K]['result'],
  options: SoapOptions,
): XmlDocument & EnvelopeWriting {
  const shape = replyShape(options.serviceNamespace, operation);
  return new OperationReply(
    shape,
    request,
    writeValue(SIGNATURES[operation].result, '', shape.result, result, shape.scope, true),
  );
}

/** What every reply of one operation shares: its action, element names and the scope its result is written in. */
interface ReplyShape {
  action: string;
  response: string;
  result: string;
  scope: ReadonlyMap<string, string>;
  /** The response element's namespace declaration. */
  declaration: ReturnType<typeof xmlns>;
  /** The reply's tree with its RelatesTo header and its result as slots: what encodeAround keeps per session. */
  skeleton: XmlDocument;
  slots: readonly [XmlElement, XmlElement];
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
    const action = replyActionOf(ns, operation);
    const response = `${operation}Response`;
    const result = `${operation}Result`;
    const declaration = xmlns('', ns);
    // Placeholders: encodeAround leaves them out, so what they hold does not matter.
    const slots = [element('a', 'RelatesTo', [], []), element('', result, [], [])] as const;
    shape = {
      action,
      response,
      result,
      scope: new Map([...ENVELOPE_SCOPE, ['', ns]]),
      declaration,
      // A RelatesTo where replyEnvelope puts it for a request with no ReplyTo of its own: after Action, the last header.
      skeleton: replyEnvelope(action, undefined, [slots[0]], [element('', response, [declaration], [slots[1]])]),
      slots,
    };
    ofNamespace.set(operation, shape);
  }
  return shape;
}

/** The bytes of each operation's replies around their slots, per session; made after its first reply. */
const around = new WeakMap<WriterSession, Map<ReplyShape, Uint8Array[]>>();

/** How many operations' replies the session writes from kept bytes (for the tests). */
export function keptReplies(session: WriterSession): number {
  return around.get(session)?.size ?? 0;
}

/** The reply as a document: its tree made when asked for, its envelope written from the session's kept bytes. */
class OperationReply implements XmlDocument, EnvelopeWriting {
  private tree: XmlContent[] | undefined;

  constructor(
    private readonly shape: ReplyShape,
    private readonly request: ReplyAddressing,
    private readonly result: XmlElement,
  ) {}

  get children(): XmlContent[] {
    const { shape, request, result } = this;
    this.tree ??= replyEnvelope(
      shape.action,
      request,
      [],
      [element('', shape.response, [shape.declaration], [result])],
    ).children;
    return this.tree;
  }

  /** As the tree it stands for (JSON.stringify sees own properties only, and `children` is a getter). */
  toJSON(): XmlDocument {
    return { children: this.children };
  }

  encodeEnvelope(session: WriterSession): Uint8Array[] {
    const { messageId, replyTo } = this.request;
    // A To header (a ReplyTo of the request's own) or no RelatesTo: not the skeleton's shape, written from the tree.
    if (messageId === undefined || (replyTo !== undefined && replyTo !== ANONYMOUS))
      return encodeEnvelopeParts(this, session);
    let kept = around.get(session);
    if (kept === undefined) {
      kept = new Map();
      around.set(session, kept);
    }
    const pieces = kept.get(this.shape);
    if (pieces === undefined) {
      const payload = encodeEnvelopeParts(this, session);
      // Every string of the skeleton is in the session now, or refused for good: its pieces stay as they are.
      const made = encodeAround(this.shape.skeleton, this.shape.slots, { session });
      if (made !== undefined) kept.set(this.shape, made);
      return payload;
    }
    // The slots in document order, so that strings they add to the session get the ids the tree would give them.
    return envelopeOf(encodeBetween(pieces, [relatesTo(messageId), this.result], { session }), session);
  }
}
