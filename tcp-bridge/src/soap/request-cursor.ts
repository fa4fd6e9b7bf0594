/**
 * A request read straight from its NBFX bytes (binary-xml/cursor.ts), without decoding a tree and walking it: the
 * bridge's hot path. Decoding a one-INSERT ExecuteNonQuery request into a tree and reading it (request.ts) took
 * ~5 µs of the ~12 µs the bridge spends on the call in process; this reads the same request in a fraction of that.
 *
 * It reads only requests of at most MAX_DIRECT_BYTES, in the shape every WCF client sends: an Envelope of an optional Header holding the four addressing
 * headers this layer understands (each once, any attributes), then a Body holding the operation's wrapper and its
 * parameters as DataContractSerializer writes them, in any order, each once, nothing else. Anything else (another
 * header, an unknown member, a nil value type, a value the contract refuses, a comment, …) returns undefined, and
 * the caller reads the message with decodeDocument and readRequest, which answer it as before. So for every message
 * this reads, the result is the one readRequest gives for the decoded tree (test/bridge/soap/request-cursor.test.ts
 * compares the two on every request the tests encode and on mutations of them); it never decides a fault itself.
 */
import { ElementCursor, NotInShape, textToString, type DecodeOptions } from '../binary-xml/index.ts';
import type { ClrValue, ClrValueType, OperationName, Operations } from '#idb';
import {
  CLASSES,
  isArray,
  isClass,
  isValueType,
  itemOf,
  SIGNATURES,
  type DcType,
  type Members,
} from './contract-types.ts';
import { CONTRACTS_NS, SOAP_NS, WSA_NS, XSI_NS, type SoapOptions } from './names.ts';
import { operationOf, UNDERSTOOD, type Addressing, type SoapRequest, type Understood } from './request.ts';
import { SIMPLE_TYPES, simpleTypeNamed } from './simple-types.ts';
import { memberNamed, withDefaults } from './dc-reader.ts';
import { qnameParts, recordsText, xsBoolean } from './tree.ts';

/**
 * Requests larger than this are left to the tree path. A large request is mostly a value (a file's bytes), which
 * either path copies once, so reading it here gains little; and one declined after its bytes were copied would be
 * copied twice, which a client could repeat to double the memory a message of the maximum size costs.
 */
export const MAX_DIRECT_BYTES = 64 * 1024;

/** The request in `bytes` (an envelope's document), or undefined when it is not in the shape read here. */
export function readRequestBytes(bytes: Uint8Array, options: SoapOptions & DecodeOptions): SoapRequest | undefined {
  if (bytes.length > MAX_DIRECT_BYTES) return undefined;
  try {
    return new RequestCursor(bytes, options).request(options.serviceNamespace);
  } catch {
    // Not in shape, or a message decodeDocument and readRequest refuse: they say how.
    return undefined;
  }
}

/** Thrown where the message leaves the shape the SOAP layer reads here (made once: declining is routine); caught above. */
const NOT_IN_SHAPE = new NotInShape('not in the shape the request cursor reads');

class RequestCursor extends ElementCursor {
  request(serviceNamespace: string): SoapRequest {
    this.expect(SOAP_NS, 'Envelope');
    const addressing: Addressing = {};
    if (!this.atElement()) throw NOT_IN_SHAPE;
    this.startElement();
    if (this.is(SOAP_NS, 'Header')) {
      this.headers(addressing);
      if (!this.atElement()) throw NOT_IN_SHAPE;
      this.startElement();
    }
    if (!this.is(SOAP_NS, 'Body')) throw NOT_IN_SHAPE;
    const { action, messageId, replyTo, to } = addressing;
    if (action === undefined || messageId === undefined) throw NOT_IN_SHAPE;
    const operation = operationOf(action, serviceNamespace);
    if (operation === undefined || !this.atElement()) throw NOT_IN_SHAPE;
    this.startElement();
    if (!this.is(serviceNamespace, operation)) throw NOT_IN_SHAPE;
    const args = this.members(SIGNATURES[operation].params, serviceNamespace) as Operations[OperationName]['args'];
    this.endElement(); // Body: nothing after the wrapper
    this.endElement(); // Envelope: nothing after the Body
    if (!this.atDocumentEnd()) throw NOT_IN_SHAPE;
    return { action, messageId, replyTo, to, operation, args } as SoapRequest;
  }

  private expect(namespace: string, localName: string): void {
    this.startElement();
    if (!this.is(namespace, localName)) throw NOT_IN_SHAPE;
  }

  private is(namespace: string, localName: string): boolean {
    return this.localName === localName && this.namespace === namespace;
  }

  /** The header blocks, each one this layer understands, each once (request.ts readHeaders). */
  private headers(addressing: Addressing): void {
    while (this.atElement()) {
      this.startElement();
      const field = this.namespace === WSA_NS ? UNDERSTOOD.get(this.localName as Understood) : undefined;
      if (field === undefined || addressing[field] !== undefined) throw NOT_IN_SHAPE;
      let value: string;
      if (field === 'replyTo') {
        this.expect(WSA_NS, 'Address');
        value = recordsText(this.textRecords()).trim();
        this.endElement();
      } else value = recordsText(this.textRecords()).trim();
      if (value === '') throw NOT_IN_SHAPE;
      addressing[field] = value;
    }
    this.endElement();
  }

  /** The members of a data contract, or an operation's parameters, up to the open element's end (dc-reader.ts). */
  private members(members: Members, namespace: string): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    while (this.atElement()) {
      this.startElement();
      const name = this.localName;
      const member = this.namespace === namespace ? memberNamed(members, name) : undefined;
      if (member === undefined || Object.hasOwn(out, name)) throw NOT_IN_SHAPE;
      out[name] = this.value(member[1]);
    }
    this.endElement();
    return withDefaults(members, out);
  }

  /** The value of the element just started, up to and including its end (dc-reader.ts readValue). */
  private value(type: DcType): unknown {
    const nilText = this.attribute(XSI_NS, 'nil');
    const nil = nilText === undefined ? false : xsBoolean(textToString(nilText));
    if (nil !== false) {
      // A nil value type, or a nil that is no boolean, readValue refuses; a nil's content it passes over.
      if (nil === undefined || isValueType(type)) throw NOT_IN_SHAPE;
      this.endElement();
      return null;
    }
    if (type === 'anyType') return this.object();
    if (isClass(type)) return this.members(CLASSES[type], CONTRACTS_NS);
    if (isArray(type)) {
      const item = itemOf(type);
      const items: unknown[] = [];
      while (this.atElement()) {
        this.expect(CONTRACTS_NS, item);
        const value = this.value(item);
        if (value === null) throw NOT_IN_SHAPE;
        items.push(value);
      }
      this.endElement();
      return items;
    }
    if (type === 'DataTable') throw NOT_IN_SHAPE;
    return this.simple(type);
  }

  /** An `object` value: its `i:type`, resolved where the element is, names the simple type. */
  private object(): ClrValue {
    const typeText = this.attribute(XSI_NS, 'type');
    if (typeText === undefined) throw NOT_IN_SHAPE;
    const { prefix, name } = qnameParts(textToString(typeText));
    // The tree's scopes bind xml but not xmlns (tree.ts ROOT_SCOPE); no simple type lives in either.
    const namespace = prefix === 'xmlns' ? undefined : (this.lookupPrefix(prefix) ?? (prefix === '' ? '' : undefined));
    const type = namespace === undefined ? undefined : simpleTypeNamed(name, namespace);
    if (type === undefined) throw NOT_IN_SHAPE;
    return { type, value: this.simple(type) } as ClrValue;
  }

  /** A simple type's value (`type` a DcType that is one, or an `object`'s ClrValueType) from the text up to the end. */
  private simple(type: DcType | ClrValueType): unknown {
    return SIMPLE_TYPES[type as ClrValueType].read(this.textRecords());
  }
}
