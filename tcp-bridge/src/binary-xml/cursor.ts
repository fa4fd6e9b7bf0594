/**
 * MC-NBFX read forward, one element at a time, without a tree: for a reader that knows the shape it expects (the SOAP
 * layer's requests, soap/request-cursor.ts) and would only walk the tree decodeDocument builds. It reads with the same
 * record reader underneath (text-records.ts), so a value, a name, a length or the record quota is checked exactly as
 * there, and names are resolved by the same rules as reader.ts (a prefix must be declared; xml and xmlns are bound).
 *
 * It reads documents of elements, attributes and text only. A comment, an Array record, or text where the caller
 * expects an element throws NotInShape: a document decodeDocument would read differently or refuse, which the caller
 * hands to decodeDocument instead (the cursor never reports an error of its own to a client).
 */
import { DEFAULT_MAX_DEPTH } from './reader.ts';
import type { XmlNamespaceDeclaration, XmlText } from './nodes.ts';
import {
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
import { hex, RecordReader, type DecodeOptions, type NamedNode } from './text-records.ts';

/** The document is not one the cursor reads: read it with decodeDocument. */
export class NotInShape extends Error {
  override readonly name = 'NotInShape';
}

export class ElementCursor extends RecordReader {
  /** The element started last: its local name and namespace. */
  localName = '';
  namespace = '';
  private readonly name: NamedNode = { prefix: '', localName: '' };
  private readonly attributeName: NamedNode = { prefix: '', localName: '' };
  private readonly declaration: XmlNamespaceDeclaration = { kind: 'xmlns', prefix: '', uri: '' };
  /** Its attributes (not the xmlns declarations): namespace, local name and value, by index. */
  private attributeCount = 0;
  private readonly attributeNamespaces: string[] = [];
  private readonly attributeNames: string[] = [];
  private readonly attributeValues: XmlText[] = [];
  /**
   * Prefix, URI, prefix, URI, … declared by the open elements, innermost last, up to `boundEnd`; `opened` marks where
   * each element's began. A count rather than the array's length, whose setter V8 runs out of line.
   */
  private readonly bound: string[] = [];
  private boundEnd = 0;
  private readonly opened: number[] = [];
  private readonly maxDepth: number;

  constructor(bytes: Uint8Array, options: DecodeOptions = {}) {
    super(bytes, options);
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  }

  /** The next record starts an element (true) or ends the open one (false, left to endElement); else NotInShape. */
  atElement(): boolean {
    const type = this.bytes[this.at];
    if (type === Record.EndElement) return false;
    if (type !== undefined && type >= MIN_ELEMENT && type <= MAX_ELEMENT) return true;
    throw new NotInShape(`record ${type === undefined ? 'none' : `0x${hex(type)}`} where an element belongs`);
  }

  /** Every byte read and no element open. */
  atDocumentEnd(): boolean {
    return this.at === this.bytes.length && this.opened.length === 0;
  }

  /** Reads an element record and its attributes: the element is open, its names resolved. */
  startElement(): void {
    const start = this.at;
    const type = this.u8();
    this.count(1);
    if (type < MIN_ELEMENT || type > MAX_ELEMENT) throw new NotInShape(`record 0x${hex(type)} is no element`);
    if (this.opened.length >= this.maxDepth) {
      throw this.fail('QuotaExceeded', `elements nested deeper than ${this.maxDepth}`, start);
    }
    this.opened.push(this.boundEnd);
    this.qualifiedName(type, ELEMENT_RECORDS, this.name);
    this.attributes();
    this.localName = this.name.localName;
    this.namespace = this.lookup(this.name.prefix, start) ?? '';
    const names = this.attributeNamespaces;
    for (let i = 0; i < this.attributeCount; i++) names[i] = names[i] === '' ? '' : this.lookup(names[i]!, start)!;
  }

  /** The value of the open element's attribute `localName` in `namespace` ('' for an unprefixed one), if it has it. */
  attribute(namespace: string, localName: string): XmlText | undefined {
    for (let i = 0; i < this.attributeCount; i++)
      if (this.attributeNames[i] === localName && this.attributeNamespaces[i] === namespace)
        return this.attributeValues[i];
    return undefined;
  }

  /** The URI `prefix` is bound to where the cursor is, undefined if none (the reader's rules for xml and xmlns). */
  lookupPrefix(prefix: string): string | undefined {
    const bound = this.bound;
    for (let i = this.boundEnd - 2; i >= 0; i -= 2) if (bound[i] === prefix) return bound[i + 1];
    if (prefix === 'xml') return XML_NAMESPACE;
    if (prefix === 'xmlns') return XMLNS_NAMESPACE;
    return undefined;
  }

  /** The open element's text records, up to its end, which closes it; an element inside is NotInShape. */
  textRecords(): XmlText[] {
    const records: XmlText[] = [];
    for (;;) {
      const start = this.at;
      const type = this.u8();
      this.count(1);
      if (type === Record.EndElement) break;
      if (type < MIN_TEXT || type > MAX_TEXT) throw new NotInShape(`record 0x${hex(type)} where text belongs`);
      records.push(this.contentText(type, start));
      if ((type & 1) !== 0) break;
    }
    this.close();
    return records;
  }

  /** The open element's end record, which closes it. */
  endElement(): void {
    const type = this.bytes[this.at];
    if (type !== Record.EndElement) throw new NotInShape('an element is not over where its end belongs');
    this.at++;
    this.count(1);
    this.close();
  }

  private close(): void {
    this.boundEnd = this.opened.pop()!;
  }

  /** The attribute records after an element record: declarations bound, the others kept by index. */
  private attributes(): void {
    this.attributeCount = 0;
    while (this.at < this.bytes.length) {
      const type = this.bytes[this.at]!;
      if (type < MIN_ATTRIBUTE || type > MAX_ATTRIBUTE) return;
      const start = this.at;
      this.at++;
      this.count(1);
      if (type >= Record.ShortXmlnsAttribute && type <= Record.DictionaryXmlnsAttribute) {
        this.namespaceDeclaration(type, this.declaration);
        this.bound[this.boundEnd++] = this.declaration.prefix;
        this.bound[this.boundEnd++] = this.declaration.uri;
        continue;
      }
      this.qualifiedName(type, ATTRIBUTE_RECORDS, this.attributeName);
      const i = this.attributeCount++;
      // The prefix for now: startElement resolves it once the element's own declarations are bound.
      this.attributeNamespaces[i] = this.attributeName.prefix;
      this.attributeNames[i] = this.attributeName.localName;
      this.attributeValues[i] = this.attributeValue(start);
    }
  }

  private lookup(prefix: string, start: number): string | undefined {
    const uri = this.lookupPrefix(prefix);
    if (uri !== undefined || prefix === '') return uri;
    throw this.fail('UndeclaredPrefix', `prefix ${JSON.stringify(prefix)} is not declared`, start);
  }
}
