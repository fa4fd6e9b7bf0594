/**
 * readRequestBytes (tcp-bridge/src/soap/request-cursor.ts), the bridge's hot path, against the tree path it stands in
 * for (decodeDocument, then readRequest): whatever the bytes, either it declines (undefined, and the bridge decodes the
 * tree) or it gives exactly the SoapRequest the tree path gives. Inputs: every operation as a WCF client writes it
 * (which it must read), the benchmark's requests, and, with fixed seeds, edits of those as trees (comments, text,
 * attributes, declarations, names, children added, dropped, doubled or reordered, headers added) and as bytes.
 * Every refusal of the SOAP tests (helpers.ts `refusal`) is also checked to be declined here.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  attribute,
  boolText,
  bytesText,
  decodeDocument,
  element,
  encodeEnvelope,
  ReaderSession,
  stringText,
  uuidText,
  WriterSession,
  xmlns,
  type XmlAttributeNode,
  type XmlContent,
  type XmlDocument,
  type XmlElement,
} from '../../../tcp-bridge/src/binary-xml/index.ts';
import { readRequest, type SoapRequest } from '../../../tcp-bridge/src/soap/index.ts';
import { MAX_DIRECT_BYTES, readRequestBytes } from '../../../tcp-bridge/src/soap/request-cursor.ts';
import { OPERATIONS } from '../../../src/idb/contract.ts';
import { parametersElement, requestEnvelope } from '../../../bench/nettcp-values.ts';
import {
  contractRoot,
  DC,
  MESSAGE_ID,
  member,
  param,
  request,
  SOAP,
  TEMPURI,
  WSA,
  XSD,
  XSI,
} from '../../support/nettcp/soap.ts';
import { CALLS, directRead, GUID_A, OPTIONS } from './helpers.ts';

/** An envelope's document bytes and the session that reads them, as a connection has them. */
function onTheWire(document: XmlDocument, useDictionaries = true): { bytes: Uint8Array; session: ReaderSession } {
  const payload = encodeEnvelope(document, new WriterSession(), { useDictionaries });
  const session = new ReaderSession();
  const { documentOffset } = session.readTable(payload);
  return { bytes: payload.subarray(documentOffset), session };
}

/** The cursor's answer; where it reads the request, the tree path must read the same. */
function agreed(bytes: Uint8Array, session: ReaderSession): SoapRequest | undefined {
  const direct = readRequestBytes(bytes, { ...OPTIONS, session });
  if (direct !== undefined) expect(direct).toStrictEqual(readRequest(decodeDocument(bytes, { session }), OPTIONS));
  return direct;
}

describe('readRequestBytes reads what WCF clients send as readRequest does', () => {
  for (const operation of OPERATIONS) {
    it(operation, () => {
      for (const useDictionaries of [true, false]) {
        const { bytes, session } = onTheWire(request(operation, CALLS[operation][0]), useDictionaries);
        expect(agreed(bytes, session)).toMatchObject({ operation, args: CALLS[operation][1] });
      }
    });
  }

  it("reads the benchmark's requests (bench/nettcp-values.ts)", () => {
    const sql = (parameters: Parameters<typeof parametersElement>[0]) => [
      element('', 'requestId', [], [uuidText(GUID_A)]),
      element('', 'sql', [], [stringText('INSERT INTO t VALUES (@c)')]),
      parametersElement(parameters),
    ];
    const bodies: [string, XmlContent[]][] = [
      ['Heartbeat', []],
      ['ExecuteNonQuery', sql([{ name: '@c', value: { type: 'int', value: 0 } }])],
      ['ReturnScalar', sql([{ name: '@g', value: { type: 'guid', value: GUID_A } }])],
      ['ReturnDatatable', sql(undefined)],
    ];
    for (const [operation, children] of bodies) {
      const envelope = requestEnvelope(TEMPURI, 'net.tcp://127.0.0.1:8808/IDBService', operation, children, MESSAGE_ID);
      const { bytes, session } = onTheWire({ children: [envelope] });
      expect(agreed(bytes, session)).toMatchObject({ operation, messageId: MESSAGE_ID });
    }
  });

  it('leaves a request over MAX_DIRECT_BYTES to the tree path (a file of 64 KiB)', () => {
    const file = member('Content', [bytesText(new Uint8Array(MAX_DIRECT_BYTES).fill(7))]);
    const document = request('NewFile', [param('file', [file], contractRoot())]);
    const { bytes, session } = onTheWire(document);
    expect(bytes.length).toBeGreaterThan(MAX_DIRECT_BYTES);
    expect(readRequestBytes(bytes, { ...OPTIONS, session })).toBeUndefined();
    const args = readRequest(decodeDocument(bytes, { session }), OPTIONS).args as { file: { Content: Uint8Array } };
    expect(args.file.Content).toHaveLength(MAX_DIRECT_BYTES);
    // A little smaller, the same request is read here.
    const small = member('Content', [bytesText(new Uint8Array(1000).fill(7))]);
    const wire = onTheWire(request('NewFile', [param('file', [small], contractRoot())]));
    expect(agreed(wire.bytes, wire.session)).toMatchObject({ operation: 'NewFile' });
  });

  it('declines what it does not read: the tree path answers those (here, a header it does not know)', () => {
    const unknown = element('x', 'Trace', [xmlns('x', 'urn:trace')], [stringText('1')]);
    const document = request('Heartbeat', [], { headers: [unknown] });
    const { bytes, session } = onTheWire(document);
    expect(readRequestBytes(bytes, { ...OPTIONS, session })).toBeUndefined();
    expect(readRequest(decodeDocument(bytes, { session }), OPTIONS).operation).toBe('Heartbeat');
    expect(directRead(document)).toBeUndefined();
  });
});

const comment = (value: string): XmlContent => ({ kind: 'comment', value });

/** Edits of a request tree: each picks an element (by its place in document order) and changes it. */
type Edit = (element: XmlElement, pick: number) => void;

const NAMESPACES = [TEMPURI, DC, XSI, XSD, WSA, SOAP, 'urn:other', ''];
const PREFIXES = ['', 'a', 'b', 'c', 'i', 's', 'q'];
const NAMES = [
  'Action',
  'MessageID',
  'To',
  'ReplyTo',
  'Address',
  'Body',
  'Header',
  'sql',
  'requestId',
  'Value',
  'Name',
];
const VALUES = ['true', 'false', '1', 'x', ' true ', 'b:int', 'c:string', 'c:guid', 'int'];
const at = <T>(list: readonly T[], pick: number): T => list[pick % list.length]!;

const EDITS: Edit[] = [
  (e, pick) => e.children.splice(pick % (e.children.length + 1), 0, comment('c')),
  (e, pick) => e.children.splice(pick % (e.children.length + 1), 0, stringText(at([' ', 'x', ''], pick))),
  (e, pick) => e.attributes.push(attribute('i', at(['nil', 'type'], pick), at(VALUES, pick >> 3))),
  (e, pick) => e.attributes.push(attribute(at(PREFIXES, pick), at(['mustUnderstand', 'role', 'x'], pick >> 3), '1')),
  (e, pick) => e.attributes.push(xmlns(at(PREFIXES, pick), at(NAMESPACES, pick >> 3))),
  (e, pick) => {
    if (e.children.length > 0) e.children.splice(pick % e.children.length, 0, e.children[pick % e.children.length]!);
  },
  (e, pick) => {
    if (e.children.length > 0) e.children.splice(pick % e.children.length, 1);
  },
  (e) => e.children.reverse(),
  (e, pick) => {
    e.localName = at(NAMES, pick);
    e.localNameKey = undefined;
  },
  (e, pick) => {
    e.prefix = at(PREFIXES, pick);
    e.longForm = undefined;
  },
  (e) => {
    e.children = [];
  },
  (e, pick) => {
    const header = element('a', at(['Action', 'MessageID', 'To', 'ReplyTo', 'RelatesTo'], pick), [], [stringText('v')]);
    if (e.localName === 'Header') e.children.push(header);
  },
];

function elementsOf(node: XmlDocument | XmlElement, into: XmlElement[] = []): XmlElement[] {
  for (const child of node.children) {
    if (child.kind !== 'element') continue;
    into.push(child);
    elementsOf(child, into);
  }
  return into;
}

/** Random edits of the bytes: flips, replacements, insertions, deletions, a cut. */
function editBytes(bytes: Uint8Array, edits: [number, number, number][]): Uint8Array {
  let out = [...bytes];
  for (const [kind, where, value] of edits) {
    const i = out.length === 0 ? 0 : where % out.length;
    if (kind === 0) out[i] = (out[i] ?? 0) ^ (1 << (value % 8));
    else if (kind === 1) out[i] = value;
    else if (kind === 2) out.splice(i, 0, value);
    else if (kind === 3) out.splice(i, 1);
    else out = out.slice(0, i);
  }
  return Uint8Array.from(out);
}

describe('fuzz: readRequestBytes never reads a request otherwise than the tree path', () => {
  const operation = fc.constantFrom(...OPERATIONS);
  const edits = fc.array(fc.tuple(fc.nat(EDITS.length - 1), fc.nat(), fc.nat()), { minLength: 1, maxLength: 3 });

  it('edited trees: declined, or read as readRequest reads them', () => {
    let read = 0;
    fc.assert(
      fc.property(operation, edits, fc.boolean(), (name, changes, useDictionaries) => {
        const document = structuredClone(request(name, CALLS[name][0]));
        for (const [edit, target, pick] of changes) {
          const elements = elementsOf(document);
          EDITS[edit]!(elements[target % elements.length]!, pick);
        }
        let wire: { bytes: Uint8Array; session: ReaderSession };
        try {
          wire = onTheWire(document, useDictionaries);
        } catch {
          return; // an edit the writer cannot encode (a comment where a value belongs, …): nothing on the wire
        }
        if (agreed(wire.bytes, wire.session) !== undefined) read++;
      }),
      { seed: 19, numRuns: 3000 },
    );
    // The edits leave many requests readable (reordered members, harmless attributes): the comparison is real.
    expect(read).toBeGreaterThan(300);
  });

  it('edited bytes: declined, or read as readRequest reads them', () => {
    const byteEdits = fc.array(fc.tuple(fc.nat(4), fc.nat(), fc.nat(255)), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(operation, byteEdits, (name, changes) => {
        const { bytes, session } = onTheWire(request(name, CALLS[name][0]));
        agreed(editBytes(bytes, changes), session);
      }),
      { seed: 19, numRuns: 3000 },
    );
  });

  it('nil, typed and declared values: declined, or read as readRequest reads them', () => {
    // A QueryParameter's Value with every combination of i:nil, i:type and where the type's prefix is declared.
    const value = fc.record({
      nil: fc.constantFrom(undefined, 'true', 'false', '0', 'maybe'),
      type: fc.constantFrom(undefined, 'c:int', 'c:string', 'c:guid', 'd:guid', 'int', 'c:nothing', 'xmlns:int'),
      declare: fc.constantFrom('none', 'xsd-on-value', 'ser-on-value', 'xsd-on-root', 'default-xsd'),
      content: fc.constantFrom<XmlContent[]>([], [stringText('7')], [stringText(GUID_A)], [comment('c')]),
    });
    fc.assert(
      fc.property(value, ({ nil, type, declare, content }) => {
        const attributes: XmlAttributeNode[] = [];
        if (nil !== undefined) attributes.push(attribute('i', 'nil', nil));
        if (type !== undefined) attributes.push(attribute('i', 'type', type));
        if (declare === 'xsd-on-value') attributes.push(xmlns('c', XSD));
        if (declare === 'ser-on-value')
          attributes.push(xmlns('d', 'http://schemas.microsoft.com/2003/10/Serialization/'));
        if (declare === 'default-xsd') attributes.push(xmlns('', XSD));
        const item = element(
          'b',
          'QueryParameter',
          [],
          [element('b', 'Name', [], [stringText('@p')]), element('b', 'Value', attributes, content)],
        );
        const root = [xmlns('b', DC), xmlns('i', XSI), ...(declare === 'xsd-on-root' ? [xmlns('c', XSD)] : [])];
        const params = [
          element('', 'requestId', [], [stringText(GUID_A)]),
          element('', 'sql', [], [stringText('select @p')]),
          element('', 'parameters', root, [item]),
        ];
        const { bytes, session } = onTheWire(request('ReturnScalar', params));
        agreed(bytes, session);
      }),
      { seed: 19, numRuns: 500 },
    );
  });

  it('declines a nil value type (readRequest refuses it)', () => {
    const nilCommit = [
      element('', 'requestId', [], [stringText(GUID_A)]),
      element('', 'commit', [attribute('i', 'nil', boolText(true)), xmlns('i', XSI)]),
    ];
    const { bytes, session } = onTheWire(request('CloseDatabaseRequest', nilCommit));
    expect(readRequestBytes(bytes, { ...OPTIONS, session })).toBeUndefined();
  });
});
