/**
 * The protocol layers against real traffic, recorded by test/fixtures/nettcp/record.ts (README.md there): Mono's WCF
 * client against Mono's ServiceHost (NetTcpBinding, SecurityMode.None; one channel of two Heartbeats, one of two
 * ReturnScalar calls with typed parameters), and the opening of a SPNEGO/NTLM-upgraded session.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeEnvelope,
  encodeEnvelope,
  ReaderSession,
  textToString,
  WriterSession,
  type XmlDocument,
  type XmlElement,
  type XmlText,
} from '../../tcp-bridge/src/binary-xml/index.ts';
import { ClientFramingDecoder, type FramingEvent, ServerFramingDecoder } from '../../tcp-bridge/src/framing/index.ts';
import { chunked, readFollowRaw, readTcpConversation, type TcpConversation } from '../support/nettcp/pcap.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'nettcp');
const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(join(FIXTURES, name)));
const fixtureText = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');
const XSD = 'http://www.w3.org/2001/XMLSchema';
const CONTRACTS = 'http://schemas.datacontract.org/2004/07/IDBService.Contracts';
const XSI = 'http://www.w3.org/2001/XMLSchema-instance';

function decodeClient(chunks: Uint8Array[], via: string): FramingEvent[] {
  const decoder = new ServerFramingDecoder({ acceptVia: (v) => v === via });
  const events = chunks.flatMap((chunk) => decoder.push(chunk));
  decoder.end();
  return events;
}

/** The server's side of the stream as the client codec reads it: PreambleAck, then sized envelopes (and End). */
function serverRecords(bytes: Uint8Array): { ack: boolean; envelopes: Uint8Array[]; end: boolean } {
  const events = new ClientFramingDecoder().push(bytes);
  return {
    ack: events[0]?.type === 'preambleAck',
    envelopes: events.flatMap((e) => (e.type === 'sizedEnvelope' ? [e.payload] : [])),
    end: events.at(-1)?.type === 'end',
  };
}

function child(element: XmlElement | XmlDocument, localName: string): XmlElement {
  const found = element.children.find((c): c is XmlElement => c.kind === 'element' && c.localName === localName);
  if (!found) throw new Error(`no ${localName}`);
  return found;
}

const path = (document: XmlDocument, ...names: string[]): XmlElement =>
  names.reduce<XmlElement | XmlDocument>((at, n) => child(at, n), document) as XmlElement;

const textOf = (element: XmlElement): string => element.children.map((c) => textToString(c as XmlText)).join('');

/** What each recorded channel holds: the calls, the envelope sizes each way, the session strings each envelope adds. */
const CHANNELS = [
  {
    follow: 'mono-none.follow.txt',
    operations: ['Heartbeat', 'Heartbeat'],
    requests: [220, 220],
    replies: [152, 136],
    requestStrings: [[], []],
    replyStrings: [['HeartbeatResult'], []],
  },
  {
    follow: 'mono-none-1.follow.txt',
    operations: ['ReturnScalar', 'ReturnScalar'],
    requests: [426, 415],
    replies: [259, 156],
    requestStrings: [
      ['requestId', 'sql', 'parameters', 'nil', CONTRACTS, XSI],
      ['QueryParameter', 'Name', 'Value', 'type', 'string', XSD, 'int'],
    ],
    replyStrings: [['ReturnScalarResult', 'type', 'int', XSD, XSI], []],
  },
] as const;

describe('net.tcp capture: Mono client and server, SecurityMode.None', () => {
  const pcap = fixture('mono-none.pcap');
  const conversations: TcpConversation[] = CHANNELS.map((_, i) => readTcpConversation(pcap, i));
  const via = `net.tcp://127.0.0.1:${conversations[0]!.serverPort}/IDBService`;

  it('reads the same bytes from the pcap as tshark followed, two channels to one server', () => {
    CHANNELS.forEach((channel, i) => {
      const follow = readFollowRaw(fixtureText(channel.follow));
      expect(conversations[i]!.client).toEqual(follow.client);
      expect(conversations[i]!.server).toEqual(follow.server);
    });
    expect(conversations[1]!.serverPort).toBe(conversations[0]!.serverPort);
    expect(conversations[1]!.clientPort).not.toBe(conversations[0]!.clientPort);
  });

  describe.each(CHANNELS.map((channel, i) => [channel.operations.join(', '), i] as const))('channel of %s', (_, i) => {
    const channel = CHANNELS[i]!;
    const conversation = conversations[i]!;
    const events = decodeClient([conversation.client], via);
    const requests = events.flatMap((e) => (e.type === 'sizedEnvelope' ? [e.payload] : []));
    const replies = serverRecords(conversation.server);

    it('decodes the client stream: preamble, the envelopes, End', () => {
      expect(events.slice(0, 5)).toEqual([
        { type: 'version', major: 1, minor: 0 },
        { type: 'mode', mode: 2 },
        { type: 'via', via },
        { type: 'encoding', contentType: 'application/soap+msbinsession1', knownEncoding: 8 },
        { type: 'preambleEnd' },
      ]);
      expect(requests.map((p) => p.length)).toEqual(channel.requests);
      expect(events[events.length - 1]).toEqual({ type: 'end' });
      expect(events).toHaveLength(5 + channel.requests.length + 1);
    });

    it('decodes it the same fed byte by byte, by TCP segment, and in random chunks', () => {
      expect(decodeClient(chunked(conversation.client, [1]), via)).toEqual(events);
      expect(decodeClient(conversation.clientSegments, via)).toEqual(events);
      fc.assert(
        fc.property(fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 20 }), (sizes) => {
          expect(decodeClient(chunked(conversation.client, sizes), via)).toEqual(events);
        }),
        { seed: 8731, numRuns: 50 },
      );
    });

    it('shows the server answering PreambleAck and an envelope per call, and closing without End (Mono)', () => {
      expect(replies.ack).toBe(true);
      expect(replies.envelopes.map((p) => p.length)).toEqual(channel.replies);
      expect(replies.end).toBe(false);
      expect(1 + replies.envelopes.reduce((n, p) => n + p.length + (p.length < 128 ? 2 : 3), 0)).toBe(
        conversation.server.length,
      );
    });

    for (const direction of ['c2s', 's2c'] as const) {
      it(`round-trips every ${direction} envelope byte for byte, session strings included`, () => {
        const payloads = direction === 'c2s' ? requests : replies.envelopes;
        const expected = direction === 'c2s' ? channel.requestStrings : channel.replyStrings;
        const incoming = new ReaderSession();
        const outgoing = new WriterSession();
        payloads.forEach((payload, n) => {
          const { strings, document } = decodeEnvelope(payload, incoming);
          expect(strings, `envelope ${n}`).toEqual(expected[n]);
          const again = encodeEnvelope(document, outgoing, { strings, useDictionaries: false });
          expect(Buffer.from(again).toString('hex'), `envelope ${n}`).toBe(Buffer.from(payload).toString('hex'));
        });
        expect(incoming.bytesUsed).toBe(outgoing.bytesUsed);
      });
    }

    it('pairs every reply with its request (Action, MessageID → RelatesTo)', () => {
      const inbound = new ReaderSession();
      const outbound = new ReaderSession();
      requests.forEach((payload, n) => {
        const request = decodeEnvelope(payload, inbound).document;
        const reply = decodeEnvelope(replies.envelopes[n]!, outbound).document;
        const operation = channel.operations[n]!;
        const action = path(request, 'Envelope', 'Header', 'Action');
        expect(textOf(action)).toBe(`http://tempuri.org/IIDBService/${operation}`);
        expect(action.attributes[0]).toMatchObject({
          localName: 'mustUnderstand',
          namespace: 'http://www.w3.org/2003/05/soap-envelope',
        });
        expect(textOf(path(request, 'Envelope', 'Header', 'To'))).toBe(via);
        const messageId = path(request, 'Envelope', 'Header', 'MessageID');
        expect(messageId.children[0]).toMatchObject({ type: 'UniqueId' });
        expect(textOf(path(reply, 'Envelope', 'Header', 'RelatesTo'))).toBe(textOf(messageId));
        expect(textOf(path(reply, 'Envelope', 'Header', 'Action'))).toBe(
          `http://tempuri.org/IIDBService/${operation}Response`,
        );
        expect(path(request, 'Envelope', 'Body').children[0]).toMatchObject({
          localName: operation,
          namespace: 'http://tempuri.org/',
        });
      });
    });
  });

  it('reads the typed values Mono wrote: parameters as xs:string and xs:int, the boxed Int32 42, a nil array', () => {
    const conversation = conversations[1]!;
    const inbound = new ReaderSession();
    const outbound = new ReaderSession();
    const requests = decodeClient([conversation.client], via).flatMap((e) =>
      e.type === 'sizedEnvelope' ? [decodeEnvelope(e.payload, inbound).document] : [],
    );
    const replies = serverRecords(conversation.server).envelopes.map((p) => decodeEnvelope(p, outbound).document);

    const first = path(requests[0]!, 'Envelope', 'Body', 'ReturnScalar');
    expect(textOf(child(first, 'requestId'))).toBe('00000000-0000-0000-0000-000000000000');
    expect(textOf(child(first, 'sql'))).toBe('SELECT 42');
    expect(child(first, 'parameters').attributes).toContainEqual(
      expect.objectContaining({ kind: 'attribute', localName: 'nil', namespace: XSI }),
    );

    const second = path(requests[1]!, 'Envelope', 'Body', 'ReturnScalar');
    expect(textOf(child(second, 'sql'))).toBe('SELECT @x');
    const parameters = child(second, 'parameters').children as XmlElement[];
    expect(parameters.map((p) => [p.localName, p.namespace])).toEqual([
      ['QueryParameter', CONTRACTS],
      ['QueryParameter', CONTRACTS],
    ]);
    const values = parameters.map((p) => child(p, 'Value'));
    expect(parameters.map((p) => textOf(child(p, 'Name')))).toEqual(['@x', 'y']);
    expect(values.map((v) => v.attributes[0])).toEqual([
      expect.objectContaining({ localName: 'type', value: expect.objectContaining({ localName: 'string' }) }),
      expect.objectContaining({ localName: 'type', value: expect.objectContaining({ localName: 'int' }) }),
    ]);
    expect(values.map((v) => v.children)).toEqual([
      [{ kind: 'text', type: 'Chars8', value: 'ignored' }],
      [{ kind: 'text', type: 'Int8', value: 7 }],
    ]);

    for (const reply of replies) {
      const scalar = path(reply, 'Envelope', 'Body', 'ReturnScalarResponse', 'ReturnScalarResult');
      expect(scalar.attributes[0]).toMatchObject({
        kind: 'attribute',
        prefix: 'i',
        localName: 'type',
        namespace: XSI,
        value: { type: 'QNameDictionary', prefix: 'b', localName: 'int' },
      });
      expect(scalar.children).toEqual([{ kind: 'text', type: 'Int8', value: 42 }]);
      expect(scalar.foldEnd).toBe(true);
    }
  });
});

describe('net.tcp capture: application/negotiate upgrade (SPNEGO/NTLM)', () => {
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

    // By TCP segment (the preamble and the upgrade request in one): nothing is left over, the handshake comes next.
    const bySegment = new ServerFramingDecoder({ acceptUpgrade: () => true });
    const segmentEvents = conversation.clientSegments.slice(0, 1).flatMap((s) => bySegment.push(s));
    expect(segmentEvents[segmentEvents.length - 1]).toMatchObject({ type: 'upgradeRequest', rest: new Uint8Array(0) });
  });
});
