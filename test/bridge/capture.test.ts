/**
 * The protocol layers against real traffic: a Mono 6.8 WCF client and server (NetTcpBinding, SecurityMode.None, seven
 * calls) and the opening of a SPNEGO/NTLM-upgraded session, captured with tcpdump (../shared/fixtures/nettcp).
 */

import fc from 'fast-check';
import { expect, it } from 'vitest';
import {
  decodeEnvelope,
  encodeEnvelope,
  ReaderSession,
  textToString,
  WriterSession,
  type XmlContent,
  type XmlDocument,
  type XmlElement,
  type XmlText,
} from '../../tcp-bridge/src/binary-xml/index.ts';
import { readInt31 } from '../../tcp-bridge/src/bytes.ts';
import { ServerFramingDecoder, type FramingEvent } from '../../tcp-bridge/src/framing/index.ts';
import { describeShared, readShared } from '../support/corpus.ts';
import { chunked, readFollowRaw, readTcpConversation, type TcpConversation } from '../support/pcap.ts';

const fixture = (name: string): Uint8Array => readShared('fixtures', 'nettcp', name);
const fixtureText = (name: string): string => new TextDecoder().decode(fixture(name));
const VIA = 'net.tcp://127.0.0.1:8731/IDBService';
const OPERATIONS = [
  'Heartbeat',
  'Heartbeat',
  'ReturnScalar',
  'ExecuteNonQuery',
  'ReturnDatatable',
  'GetFile',
  'NewFile',
];

function decodeClient(chunks: Uint8Array[]): FramingEvent[] {
  const decoder = new ServerFramingDecoder({ acceptVia: (via) => via === VIA });
  const events = chunks.flatMap((chunk) => decoder.push(chunk));
  decoder.end();
  return events;
}

/** The server's side of the stream: PreambleAck, then sized envelopes (and End, if the server sends one). */
function serverRecords(bytes: Uint8Array): { ack: boolean; envelopes: Uint8Array[]; end: boolean } {
  const envelopes: Uint8Array[] = [];
  let at = 1;
  while (at < bytes.length && bytes[at] === 0x06) {
    const size = readInt31(bytes, at + 1);
    if (typeof size === 'string') throw new Error('bad envelope size');
    envelopes.push(bytes.subarray(at + 1 + size.size, at + 1 + size.size + size.value));
    at += 1 + size.size + size.value;
  }
  return { ack: bytes[0] === 0x0b, envelopes, end: at < bytes.length && bytes[at] === 0x07 && at + 1 === bytes.length };
}

/** The envelopes of one direction as tools/decode_follow.py printed them: new session strings and the XML. */
function decodedBlocks(text: string, direction: 'c2s' | 's2c'): { strings: string[]; xml: string }[] {
  const section = text.split(/^===== direction /m).find((s) => s.startsWith(direction))!;
  return section
    .split(/^SizedEnvelope size=\d+\n/m)
    .slice(1)
    .map((block) => {
      const lines = block.split('\n');
      const strings = lines.flatMap((l) => /^ {3}session-dict id=\d+ '(.*)'$/.exec(l)?.[1] ?? []);
      const xml = lines.filter((l) => /^ *</.test(l)).join('\n');
      return { strings, xml };
    });
}

/** The document as python-wcfbin prints it (one space per level, text inline), to compare with the .decoded.txt. */
function render(document: XmlDocument): string {
  const lines: string[] = [];
  const name = (prefix: string, local: string): string => (prefix ? `${prefix}:${local}` : local);
  const walk = (node: XmlContent, depth: number): void => {
    const indent = ' '.repeat(depth);
    if (node.kind !== 'element') throw new Error(`${node.kind} at the element level`);
    const attributes = node.attributes
      .map((a) =>
        a.kind === 'xmlns'
          ? ` ${a.prefix ? `xmlns:${a.prefix}` : 'xmlns'}="${a.uri}"`
          : ` ${name(a.prefix, a.localName)}="${textToString(a.value)}"`,
      )
      .join('');
    const open = `<${name(node.prefix, node.localName)}${attributes}>`;
    const close = `</${name(node.prefix, node.localName)}>`;
    if (node.children.every((c) => c.kind === 'text')) {
      lines.push(indent + open + node.children.map((c) => textToString(c as XmlText)).join('') + close);
      return;
    }
    lines.push(indent + open);
    for (const child of node.children) walk(child, depth + 1);
    lines.push(indent + close);
  };
  for (const child of document.children) walk(child, 0);
  return lines.join('\n');
}

function child(element: XmlElement | XmlDocument, localName: string): XmlElement {
  const found = element.children.find((c): c is XmlElement => c.kind === 'element' && c.localName === localName);
  if (!found) throw new Error(`no ${localName}`);
  return found;
}

const path = (document: XmlDocument, ...names: string[]): XmlElement =>
  names.reduce<XmlElement | XmlDocument>((at, n) => child(at, n), document) as XmlElement;

const textOf = (element: XmlElement): string => element.children.map((c) => textToString(c as XmlText)).join('');

describeShared('net.tcp capture: Mono client and server, SecurityMode.None', () => {
  const conversation: TcpConversation = readTcpConversation(fixture('mono-none.pcap'));
  const replies = serverRecords(conversation.server);

  it('reads the same bytes from the pcap as tshark followed', () => {
    const follow = readFollowRaw(fixtureText('mono-none.follow.txt'));
    expect(conversation.serverPort).toBe(8731);
    expect(conversation.client).toEqual(follow.client);
    expect(conversation.server).toEqual(follow.server);
    expect(conversation.client.length).toBe(1883);
    expect(conversation.server.length).toBe(2449);
  });

  const events = decodeClient([conversation.client]);
  const requests = events.flatMap((e) => (e.type === 'sizedEnvelope' ? [e.payload] : []));

  it('decodes the client stream: preamble, seven envelopes, End', () => {
    expect(events.slice(0, 5)).toEqual([
      { type: 'version', major: 1, minor: 0 },
      { type: 'mode', mode: 2 },
      { type: 'via', via: VIA },
      { type: 'encoding', contentType: 'application/soap+msbinsession1', knownEncoding: 8 },
      { type: 'preambleEnd' },
    ]);
    expect(requests.map((p) => p.length)).toEqual([219, 219, 241, 243, 243, 258, 393]);
    expect(events[events.length - 1]).toEqual({ type: 'end' });
  });

  it('decodes it the same fed byte by byte, by TCP segment, and in random chunks', () => {
    expect(decodeClient(chunked(conversation.client, [1]))).toEqual(events);
    expect(decodeClient(conversation.clientSegments)).toEqual(events);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 20 }), (sizes) => {
        expect(decodeClient(chunked(conversation.client, sizes))).toEqual(events);
      }),
      { seed: 8731, numRuns: 100 },
    );
  });

  it('shows the server answering PreambleAck and seven envelopes, and closing without End (Mono)', () => {
    expect(replies.ack).toBe(true);
    expect(replies.envelopes.map((p) => p.length)).toEqual([158, 142, 259, 171, 1066, 448, 183]);
    expect(replies.end).toBe(false);
    expect(1 + replies.envelopes.reduce((n, p) => n + p.length + (p.length < 128 ? 2 : 3), 0)).toBe(
      conversation.server.length,
    );
  });

  for (const direction of ['c2s', 's2c'] as const) {
    it(`round-trips every ${direction} envelope byte for byte, session strings included`, () => {
      const payloads = direction === 'c2s' ? requests : replies.envelopes;
      const expected = decodedBlocks(fixtureText('mono-none.decoded.txt'), direction);
      expect(expected).toHaveLength(7);
      const incoming = new ReaderSession();
      const outgoing = new WriterSession();
      payloads.forEach((payload, i) => {
        const { strings, document } = decodeEnvelope(payload, incoming);
        expect(strings, `envelope ${i}`).toEqual(expected[i]!.strings);
        const again = encodeEnvelope(document, outgoing, { strings, useDictionaries: false });
        expect(Buffer.from(again).toString('hex'), `envelope ${i}`).toBe(Buffer.from(payload).toString('hex'));
        // python-wcfbin, an independent decoder, printed the same XML (it failed on the ReturnScalar reply's QName).
        if (expected[i]!.xml !== '') expect(render(document), `envelope ${i}`).toBe(expected[i]!.xml);
      });
      expect(incoming.bytesUsed).toBe(outgoing.bytesUsed);
    });
  }

  it('pairs every reply with its request (Action, MessageID → RelatesTo)', () => {
    const inbound = new ReaderSession();
    const outbound = new ReaderSession();
    requests.forEach((payload, i) => {
      const request = decodeEnvelope(payload, inbound).document;
      const reply = decodeEnvelope(replies.envelopes[i]!, outbound).document;
      const action = path(request, 'Envelope', 'Header', 'Action');
      expect(textOf(action)).toBe(`http://tempuri.org/IIDBService/${OPERATIONS[i]}`);
      expect(action.attributes[0]).toMatchObject({
        localName: 'mustUnderstand',
        namespace: 'http://www.w3.org/2003/05/soap-envelope',
      });
      const messageId = path(request, 'Envelope', 'Header', 'MessageID');
      expect(messageId.children[0]).toMatchObject({ type: 'UniqueId' });
      expect(textOf(path(reply, 'Envelope', 'Header', 'RelatesTo'))).toBe(textOf(messageId));
      expect(textOf(path(reply, 'Envelope', 'Header', 'Action'))).toBe(
        `http://tempuri.org/IIDBService/${OPERATIONS[i]}Response`,
      );
      expect(path(request, 'Envelope', 'Body').children[0]).toMatchObject({
        localName: OPERATIONS[i],
        namespace: 'http://tempuri.org/',
      });
    });
  });

  it('reads the typed values Mono wrote', () => {
    const inbound = new ReaderSession();
    const outbound = new ReaderSession();
    const requestDocs = requests.map((p) => decodeEnvelope(p, inbound).document);
    const replyDocs = replies.envelopes.map((p) => decodeEnvelope(p, outbound).document);

    const scalar = path(replyDocs[2]!, 'Envelope', 'Body', 'ReturnScalarResponse', 'ReturnScalarResult');
    expect(scalar.attributes[0]).toMatchObject({
      kind: 'attribute',
      prefix: 'i',
      localName: 'type',
      namespace: 'http://www.w3.org/2001/XMLSchema-instance',
      value: { type: 'QNameDictionary', prefix: 'b', localName: 'int' },
    });
    expect(scalar.children).toEqual([{ kind: 'text', type: 'Int8', value: 42 }]);
    expect(scalar.foldEnd).toBe(true);

    expect(
      path(replyDocs[3]!, 'Envelope', 'Body', 'ExecuteNonQueryResponse', 'ExecuteNonQueryResult').children,
    ).toEqual([{ kind: 'text', type: 'Int8', value: 3 }]);
    const file = path(replyDocs[5]!, 'Envelope', 'Body', 'GetFileResponse', 'GetFileResult').children[0];
    expect(file).toMatchObject({ type: 'Bytes16' });
    expect((file as { value: Uint8Array }).value).toEqual(Uint8Array.from({ length: 300 }, (_, i) => i % 256));

    const item = path(requestDocs[6]!, 'Envelope', 'Body', 'NewFile', 'item');
    expect(item.localNameKey).toBe(5);
    expect(child(item, 'Content').children).toEqual([{ kind: 'text', type: 'Bytes8', value: Uint8Array.of(1, 2, 3) }]);
    expect(child(item, 'Created').children).toEqual([
      { kind: 'text', type: 'DateTime', ticks: 0x08d9ccb9a7734000n, dateKind: 0 },
    ]);
    expect(textOf(child(item, 'Created'))).toBe('2022-01-01T00:00:00');
    expect(child(item, 'Name')).toMatchObject({ namespace: 'http://research.example/data' });
    expect(textOf(path(requestDocs[2]!, 'Envelope', 'Body', 'ReturnScalar', 'sql'))).toBe('select 1');
  });
});

describeShared('net.tcp capture: application/negotiate upgrade (SPNEGO/NTLM)', () => {
  const conversation = readTcpConversation(fixture('nns-spnego-ntlm.pcap'));

  it('reads the same bytes from the pcap as tshark followed', () => {
    const follow = readFollowRaw(fixtureText('nns-spnego-ntlm.follow.txt'));
    expect(conversation.client).toEqual(follow.client);
    expect(conversation.server).toEqual(follow.server);
  });

  it('stops at the upgrade request and leaves the NegotiateStream handshake to the caller', () => {
    const decoder = new ServerFramingDecoder({
      acceptUpgrade: (c) => c === 'application/negotiate',
      requireUpgrade: true,
    });
    const events = decoder.push(conversation.client);
    expect(events.map((e) => e.type)).toEqual(['version', 'mode', 'via', 'encoding', 'upgradeRequest']);
    const upgrade = events[4] as Extract<FramingEvent, { type: 'upgradeRequest' }>;
    expect(upgrade.contentType).toBe('application/negotiate');
    expect(decoder.position).toBe(conversation.client.length - upgrade.rest.length);
    // MS-NNS handshake frame: HandshakeInProgress, version 1.0, big-endian size 0x4a.
    expect([...upgrade.rest.subarray(0, 5)]).toEqual([0x16, 0x01, 0x00, 0x00, 0x4a]);
    expect(conversation.server[0]).toBe(0x0a); // UpgradeResponse

    // By TCP segment the record ends with its segment: nothing is left over, the handshake comes next.
    const bySegment = new ServerFramingDecoder({ acceptUpgrade: () => true });
    const segmentEvents = conversation.clientSegments.slice(0, 2).flatMap((s) => bySegment.push(s));
    expect(segmentEvents[segmentEvents.length - 1]).toMatchObject({ type: 'upgradeRequest', rest: new Uint8Array(0) });
  });
});
