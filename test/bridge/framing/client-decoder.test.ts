/**
 * The client side of the net.tcp codec: ClientFramingDecoder (what a server sends a NetTcpBinding client) and
 * NetTcpClientSession (framing, NNS frames and sealing, dictionaries) against the server's own writer and decoder,
 * whatever the chunking. The Mono server's bytes are read by test/bridge/capture.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeEnvelope,
  element,
  encodeEnvelope,
  ReaderSession,
  stringText,
  WriterSession,
} from '../../../tcp-bridge/src/binary-xml/index.ts';
import { NetTcpClientSession } from '../../../tcp-bridge/src/client/session.ts';
import {
  ClientFramingDecoder,
  ClientFramingError,
  END_RECORD,
  faultRecord,
  framing,
  NEGOTIATE_UPGRADE,
  PREAMBLE_ACK,
  ServerFramingDecoder,
  sizedEnvelope,
  UPGRADE_RESPONSE,
} from '../../../tcp-bridge/src/framing/index.ts';
import { dataFrame, HandshakeId, handshakeFrame, NnsDecoder } from '../../../tcp-bridge/src/negotiate/nns.ts';
import { concatBytes } from '../../../src/bytes.ts';
import { chunked } from '../../support/nettcp/pcap.ts';
import { request } from '../../support/nettcp/soap.ts';

const VIA = 'net.tcp://localhost/IDBService';
const payload = (n: number) => Uint8Array.from({ length: n }, (_, i) => i & 0xff);
const decodeAll = (pieces: Uint8Array[], maxMessageSize?: number) => {
  const decoder = new ClientFramingDecoder({ maxMessageSize });
  return pieces.flatMap((p) => decoder.push(p));
};

describe('ClientFramingDecoder', () => {
  const stream = concatBytes([PREAMBLE_ACK, sizedEnvelope(payload(5)), sizedEnvelope(payload(300)), END_RECORD]);
  const expected = [
    { type: 'preambleAck' },
    { type: 'sizedEnvelope', payload: payload(5) },
    { type: 'sizedEnvelope', payload: payload(300) },
    { type: 'end' },
  ];

  it('reads PreambleAck, sized envelopes and End, whatever the chunking', () => {
    expect(decodeAll([stream])).toEqual(expected);
    expect(decodeAll(chunked(stream, [1]))).toEqual(expected);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 10 }), (sizes) => {
        expect(decodeAll(chunked(stream, sizes))).toEqual(expected);
      }),
      { seed: 23, numRuns: 100 },
    );
  });

  it('reads a framing fault in any phase, and nothing after it', () => {
    const fault = faultRecord('http://schemas.microsoft.com/ws/2006/05/framing/faults/EndpointNotFound');
    expect(decodeAll([fault])).toEqual([
      { type: 'fault', fault: 'http://schemas.microsoft.com/ws/2006/05/framing/faults/EndpointNotFound' },
    ]);
    const decoder = new ClientFramingDecoder();
    decoder.push(concatBytes([PREAMBLE_ACK, fault]));
    expect(decoder.state).toBe('closed');
    expect(() => decoder.push(PREAMBLE_ACK)).toThrow(ClientFramingError);
  });

  it('stops at the UpgradeResponse with the bytes that follow, and goes on after upgradeComplete()', () => {
    const decoder = new ClientFramingDecoder();
    const handshake = handshakeFrame(HandshakeId.InProgress, payload(3));
    expect(decoder.push(concatBytes([UPGRADE_RESPONSE, handshake]))).toEqual([
      { type: 'upgradeResponse', rest: handshake },
    ]);
    expect(() => decoder.push(PREAMBLE_ACK)).toThrow(/before upgradeComplete/);
    const again = new ClientFramingDecoder();
    again.push(UPGRADE_RESPONSE);
    again.upgradeComplete();
    expect(again.push(PREAMBLE_ACK)).toEqual([{ type: 'preambleAck' }]);
  });

  it('refuses what no server sends: an envelope before PreambleAck, a second ack, a size over the limit, odd types', () => {
    expect(() => decodeAll([sizedEnvelope(payload(1))])).toThrow(/before PreambleAck/);
    expect(() => decodeAll([PREAMBLE_ACK, PREAMBLE_ACK])).toThrow(/second PreambleAck/);
    expect(() => decodeAll([PREAMBLE_ACK, Uint8Array.of(0x06, 0x81, 0x01)], 100)).toThrow(/129-byte record/);
    expect(() => decodeAll([PREAMBLE_ACK, Uint8Array.of(0x06, 0xff, 0xff, 0xff, 0xff, 0x0f)])).toThrow(/2\^31/);
    expect(() => decodeAll([Uint8Array.of(0x0c)])).toThrow(/unexpected record type 0xc/);
    expect(() => decodeAll([PREAMBLE_ACK, END_RECORD, PREAMBLE_ACK])).toThrow(/after the End record/);
  });
});

describe('NetTcpClientSession', () => {
  it("writes what the server decoder reads, and reads the server's replies with the session dictionary", () => {
    const client = new NetTcpClientSession(VIA);
    const server = new ServerFramingDecoder({ acceptVia: (v) => v === VIA });
    const out = concatBytes([client.preamble(), client.envelope(request('Heartbeat', [])), client.end()]);
    const events = server.push(out);
    expect(events.map((e) => e.type)).toEqual([
      'version',
      'mode',
      'via',
      'encoding',
      'preambleEnd',
      'sizedEnvelope',
      'end',
    ]);
    const sent = events.find((e) => e.type === 'sizedEnvelope')!;
    expect(decodeEnvelope((sent as { payload: Uint8Array }).payload, new ReaderSession()).document).toEqual(
      decodeEnvelope(encodeEnvelope(request('Heartbeat', []), new WriterSession()), new ReaderSession()).document,
    );

    const writer = new WriterSession();
    const replies = [request('A', []), request('A', [])].map((d) => sizedEnvelope(encodeEnvelope(d, writer)));
    const read = chunked(concatBytes([PREAMBLE_ACK, ...replies, END_RECORD]), [3]).flatMap((c) => client.push(c));
    expect(read.map((e) => e.type)).toEqual(['preambleAck', 'envelope', 'envelope', 'end']);
    // The second reply names 'A' (and the headers) by the session strings the first one defined.
    expect(read[1]).toMatchObject({ type: 'envelope', strings: expect.arrayContaining(['A']) });
    expect(read[2]).toMatchObject({ type: 'envelope', strings: [] });
  });

  it('with an upgrade: handshake frames, then records sealed both ways in NNS data frames', () => {
    // A stand-in security that is easy to check: "sealing" XORs every byte.
    const xor = (b: Uint8Array) => b.map((x) => x ^ 0x5a);
    const security = { wrap: xor, unwrap: xor };
    const client = new NetTcpClientSession(VIA, { upgrade: NEGOTIATE_UPGRADE });
    expect(new ServerFramingDecoder({ acceptUpgrade: () => true }).push(client.preamble()).at(-1)).toMatchObject({
      type: 'upgradeRequest',
      contentType: NEGOTIATE_UPGRADE,
    });
    const token = handshakeFrame(HandshakeId.Done, payload(4));
    const sealedAck = dataFrame(xor(PREAMBLE_ACK));
    // The UpgradeResponse, the last handshake frame and the first data frame in one chunk.
    expect(client.push(concatBytes([UPGRADE_RESPONSE, token, sealedAck]))).toEqual([
      { type: 'upgradeResponse' },
      { type: 'handshake', id: HandshakeId.Done, payload: payload(4) },
    ]);
    expect(client.secure(security)).toEqual([{ type: 'preambleAck' }]);

    const big = request('NewFile', []);
    const sealed = client.envelope(big);
    const nns = new NnsDecoder({ maxBuffered: 1 << 22 });
    nns.startData();
    nns.push(concatBytes([client.preambleEnd(), sealed]));
    const plain: Uint8Array[] = [];
    for (let f = nns.next(); f; f = nns.next()) plain.push(xor(f.payload));
    expect(plain[0]).toEqual(framing().preambleEnd().finish());
    expect(concatBytes(plain.slice(1))).toEqual(sizedEnvelope(encodeEnvelope(big, new WriterSession())));
    // And the server's sealed envelope comes back decoded.
    const reply = sizedEnvelope(encodeEnvelope(request('R', []), new WriterSession()));
    expect(client.push(dataFrame(xor(reply)))).toMatchObject([
      { type: 'envelope', strings: expect.arrayContaining(['R']) },
    ]);
  });

  it('splits a record over 63 KiB into several data frames, as .NET does', () => {
    const identity = { wrap: (b: Uint8Array) => b.slice(), unwrap: (b: Uint8Array) => b };
    const client = new NetTcpClientSession(VIA, { upgrade: NEGOTIATE_UPGRADE });
    client.push(UPGRADE_RESPONSE);
    client.secure(identity);
    const document = request('X', [element('', 'p', [], [stringText('a'.repeat(100_000))])]);
    const split = new NnsDecoder({ maxBuffered: 1 << 20 });
    split.startData();
    split.push(client.envelope(document));
    const frames: Uint8Array[] = [];
    for (let f = split.next(); f; f = split.next()) frames.push(f.payload);
    expect(frames.map((f) => f.length)).toEqual([63 * 1024, expect.any(Number)]);
    expect(concatBytes(frames)).toEqual(sizedEnvelope(encodeEnvelope(document, new WriterSession())));
  });
});
