/**
 * MC-NBFX reader: bytes → document tree, the elements, attributes and namespace bindings (the cursor, text records,
 * lists and array items are text-records.ts's). Iterative (an explicit element stack), so hostile nesting meets the
 * depth quota instead of the call stack; every declared length is checked against the bytes that remain before anything
 * is allocated for it. Throws only BinaryXmlError.
 *
 * Strictness beyond .NET's reader, so that what is read writes back to the same bytes: strings must be UTF-8, a Bool
 * byte 0 or 1 (arrays too), a Decimal what System.Decimal accepts. Like .NET: a prefix must be declared, EndListText
 * and the WithEndElement forms of the list records are refused, an Array holds at least one item, and elements left
 * open at the end are an error.
 */

import type {
  XmlArray,
  XmlAttribute,
  XmlAttributeNode,
  XmlContent,
  XmlDocument,
  XmlElement,
  XmlNamespaceDeclaration,
} from './nodes.ts';
import {
  ARRAY_ITEM_BY_RECORD,
  ARRAY_ITEMS,
  ATTRIBUTE_RECORDS,
  ELEMENT_RECORDS,
  MAX_ATTRIBUTE,
  MAX_ELEMENT,
  MAX_TEXT,
  MIN_ATTRIBUTE,
  MIN_ELEMENT,
  MIN_TEXT,
  Record,
  XML_NAMESPACE,
  XMLNS_NAMESPACE,
} from './records.ts';
import { EMPTY, hex, RecordReader, type DecodeOptions } from './text-records.ts';

export { DEFAULT_MAX_RECORDS, type DecodeOptions } from './text-records.ts';

export const DEFAULT_MAX_DEPTH = 32;

interface Frame {
  element: XmlElement;
  /** Prefixes this element declared, to unbind when it closes. */
  declared: string[];
}

export function decodeDocument(bytes: Uint8Array, options: DecodeOptions = {}): XmlDocument {
  return new Reader(bytes, options).document();
}

class Reader extends RecordReader {
  private readonly stack: Frame[] = [];
  /** Prefix → the URIs bound to it by the open elements, innermost last: lookups stay O(1) at any depth. */
  private readonly bindings = new Map<string, string[]>();
  private readonly maxDepth: number;

  constructor(bytes: Uint8Array, options: DecodeOptions) {
    super(bytes, options);
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  }

  document(): XmlDocument {
    const top: XmlContent[] = [];
    while (this.at < this.bytes.length) {
      const start = this.at;
      const type = this.u8();
      this.count(1);
      const children = this.stack.length > 0 ? this.stack[this.stack.length - 1]!.element.children : top;
      if (type === Record.EndElement) {
        this.close(false, start);
      } else if (type === Record.Comment) {
        children.push({ kind: 'comment', value: this.string() });
      } else if (type === Record.Array) {
        children.push(this.array());
      } else if (type >= MIN_ELEMENT && type <= MAX_ELEMENT) {
        const frame = this.element(type, start);
        children.push(frame.element);
        this.stack.push(frame);
      } else if (type >= MIN_TEXT && type <= MAX_TEXT) {
        children.push(this.contentText(type, start));
        if ((type & 1) !== 0) this.close(true, start);
      } else {
        throw this.fail('InvalidRecord', `record 0x${hex(type)} where content belongs`, start);
      }
    }
    if (this.stack.length > 0) {
      throw this.fail('Truncated', `${this.stack.length} element(s) still open at the end`, this.at);
    }
    return { children: top };
  }

  private close(folded: boolean, start: number): void {
    const frame = this.stack.pop();
    if (!frame) throw this.fail('InvalidRecord', 'an end element with no element open', start);
    frame.element.foldEnd = folded;
    this.unbind(frame.declared);
  }

  private unbind(prefixes: string[]): void {
    for (const prefix of prefixes) this.bindings.get(prefix)!.pop();
  }

  /** An element record and the attribute records after it; namespaces resolved against the open elements. */
  private element(type: number, start: number): Frame {
    if (this.stack.length >= this.maxDepth) {
      throw this.fail('QuotaExceeded', `elements nested deeper than ${this.maxDepth}`, start);
    }
    const element: XmlElement = { kind: 'element', prefix: '', localName: '', attributes: [], children: [] };
    this.qualifiedName(type, ELEMENT_RECORDS, element);
    const declared = this.attributes(element.attributes);
    const frame: Frame = { element, declared };
    try {
      element.namespace = this.lookup(element.prefix, start) ?? '';
      for (const attribute of element.attributes) {
        if (attribute.kind === 'attribute')
          attribute.namespace = attribute.prefix === '' ? '' : this.lookup(attribute.prefix, start);
      }
    } catch (error) {
      this.unbind(declared);
      throw error;
    }
    return frame;
  }

  /** Reads the attribute records and binds the prefixes they declare; returns those prefixes. */
  private attributes(into: XmlAttributeNode[]): string[] {
    const declared: string[] = [];
    while (this.at < this.bytes.length) {
      const type = this.bytes[this.at]!;
      if (type < MIN_ATTRIBUTE || type > MAX_ATTRIBUTE) break;
      const start = this.at;
      this.at++;
      this.count(1);
      if (type >= Record.ShortXmlnsAttribute && type <= Record.DictionaryXmlnsAttribute) {
        const declaration: XmlNamespaceDeclaration = { kind: 'xmlns', prefix: '', uri: '' };
        this.namespaceDeclaration(type, declaration);
        let uris = this.bindings.get(declaration.prefix);
        if (!uris) {
          uris = [];
          this.bindings.set(declaration.prefix, uris);
        }
        uris.push(declaration.uri);
        declared.push(declaration.prefix);
        into.push(declaration);
        continue;
      }
      const attribute: XmlAttribute = { kind: 'attribute', prefix: '', localName: '', value: EMPTY };
      this.qualifiedName(type, ATTRIBUTE_RECORDS, attribute);
      attribute.value = this.attributeValue(start);
      into.push(attribute);
    }
    return declared;
  }

  /** Array: an element record (attributes allowed), EndElement, the item record type, the count, the items. */
  private array(): XmlArray {
    const elementStart = this.at;
    const type = this.u8();
    this.count(1);
    if (type < MIN_ELEMENT || type > MAX_ELEMENT) {
      throw this.fail('InvalidRecord', `record 0x${hex(type)} where an array's element belongs`, elementStart);
    }
    const frame = this.element(type, elementStart);
    // The array's element is never on the stack: its declarations end with it.
    this.unbind(frame.declared);
    const endAt = this.at;
    if (this.u8() !== Record.EndElement) throw this.fail('InvalidRecord', "an array's element must be empty", endAt);
    const itemAt = this.at;
    const itemRecord = this.u8();
    const itemType = ARRAY_ITEM_BY_RECORD.get(itemRecord);
    if (itemType === undefined) throw this.fail('InvalidRecord', `record 0x${hex(itemRecord)} as array items`, itemAt);
    const countAt = this.at;
    const count = this.int31();
    if (count === 0) throw this.fail('InvalidValue', 'an array of no items', countAt);
    const size = ARRAY_ITEMS[itemType].size;
    if (count * size > this.bytes.length - this.at) {
      throw this.fail('Truncated', `${count} array items of ${size} bytes run past the end`, countAt);
    }
    this.count(count);
    return { kind: 'array', element: frame.element, ...this.items(itemType, count) } as XmlArray;
  }

  protected lookup(prefix: string, start: number): string | undefined {
    const uris = this.bindings.get(prefix);
    if (uris && uris.length > 0) return uris[uris.length - 1];
    if (prefix === '') return undefined;
    if (prefix === 'xml') return XML_NAMESPACE;
    if (prefix === 'xmlns') return XMLNS_NAMESPACE;
    throw this.fail('UndeclaredPrefix', `prefix ${JSON.stringify(prefix)} is not declared`, start);
  }
}
