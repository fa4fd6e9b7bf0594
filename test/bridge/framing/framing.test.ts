import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteWriter, encodeInt31, int31Size, readInt31 } from '../../../tcp-bridge/src/bytes.ts';
import {
  clientPreamble,
  faultRecord,
  framing,
  FramingFault,
  ServerFramingDecoder,
  type FramingEvent,
  type FramingFaultCode,
  type ServerDecoderOptions,
} from '../../../tcp-bridge/src/framing/index.ts';
import { chunked } from '../../support/nettcp/pcap.ts';

const VIA = 'net.tcp://127.0.0.1:8731/IDBService';
const FAULTS = 'http://schemas.microsoft.com/ws/2006/05/framing/faults/';

/** Feeds `bytes` in the given chunk sizes (cycled) and collects the events. */
function decodeInChunks(bytes: Uint8Array, sizes: number[], options?: ServerDecoderOptions): FramingEvent[] {
  const decoder = new ServerFramingDecoder(options);
  const events = chunked(bytes, sizes).flatMap((chunk) => decoder.push(chunk));
  decoder.end();
  return events;
}

function refusal(bytes: Uint8Array | readonly number[], options?: ServerDecoderOptions): FramingFault {
  const decoder = new ServerFramingDecoder(options);
  try {
    decoder.push(bytes instanceof Uint8Array ? bytes : Uint8Array.from(bytes));
    decoder.end();
  } catch (error) {
    expect(error).toBeInstanceOf(FramingFault);
    expect(decoder.state).toBe('closed');
    return error as FramingFault;
  }
  throw new Error('the decoder accepted the stream');
}

function expectRefusal(
  bytes: Uint8Array | readonly number[],
  code: FramingFaultCode,
  options?: ServerDecoderOptions,
): FramingFault {
  const fault = refusal(bytes, options);
  expect(fault.code).toBe(code);
  return fault;
}

const session = (...payloads: Uint8Array[]): Uint8Array => {
  const w = framing().version().mode().via(VIA).knownEncoding().preambleEnd();
  for (const p of payloads) w.sizedEnvelope(p);
  return w.end().finish();
};

describe('MultiByteInt31', () => {
  it('encodes 7 bits a byte, low group first, in the fewest bytes', () => {
    expect([...encodeInt31(0)]).toEqual([0x00]);
    expect([...encodeInt31(0x7f)]).toEqual([0x7f]);
    expect([...encodeInt31(0x80)]).toEqual([0x80, 0x01]);
    expect([...encodeInt31(219)]).toEqual([0xdb, 0x01]); // a 219-byte envelope's size, two bytes
    expect([...encodeInt31(0x3fff)]).toEqual([0xff, 0x7f]);
    expect([...encodeInt31(0x4000)]).toEqual([0x80, 0x80, 0x01]);
    expect([...encodeInt31(0x0fffffff)]).toEqual([0xff, 0xff, 0xff, 0x7f]);
    expect([...encodeInt31(0x10000000)]).toEqual([0x80, 0x80, 0x80, 0x80, 0x01]);
    expect([...encodeInt31(0x7fffffff)]).toEqual([0xff, 0xff, 0xff, 0xff, 0x07]);
    expect(
      [0, 0x7f, 0x80, 0x3fff, 0x4000, 0x1fffff, 0x200000, 0xfffffff, 0x10000000, 0x7fffffff].map(int31Size),
    ).toEqual([1, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
  });

  it('refuses values outside 0..2^31-1 on the writing side', () => {
    for (const bad of [-1, 2 ** 31, 1.5, Number.NaN]) expect(() => encodeInt31(bad)).toThrow(RangeError);
  });

  it('decodes what it encodes, and reports short input', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0x7fffffff }), (n) => {
        const bytes = encodeInt31(n);
        expect(readInt31(bytes, 0)).toEqual({ value: n, size: bytes.length });
        expect(readInt31(bytes.subarray(0, bytes.length - 1), 0)).toBe('short');
      }),
      { seed: 31, numRuns: 500 },
    );
  });

  it('refuses a fifth byte above 0x07 (more than 31 bits, or a sixth byte announced)', () => {
    expect(readInt31(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x08), 0)).toBe('invalid');
    expect(readInt31(Uint8Array.of(0x80, 0x80, 0x80, 0x80, 0x80, 0x00), 0)).toBe('invalid');
    // Non-minimal forms are what .NET reads too.
    expect(readInt31(Uint8Array.of(0x80, 0x00), 0)).toEqual({ value: 0, size: 2 });
  });
});

describe('framing record writer', () => {
  it('writes the unsecured NetTcpBinding preamble as the Mono client did', () => {
    const hex = Buffer.from(clientPreamble(VIA)).toString('hex');
    expect(hex).toBe('000100010202236e65742e7463703a2f2f3132372e302e302e313a383733312f4944425365727669636503080c');
  });

  it('writes the server records', () => {
    expect([...framing().preambleAck().upgradeResponse().end().finish()]).toEqual([0x0b, 0x0a, 0x07]);
    const envelope = framing().sizedEnvelope(new Uint8Array(300).fill(7)).finish();
    expect([...envelope.subarray(0, 3)]).toEqual([0x06, 0xac, 0x02]);
    expect(envelope.length).toBe(303);
    const fault = faultRecord('EndpointNotFound');
    expect(fault[0]).toBe(0x08);
    expect(new TextDecoder().decode(fault.subarray(2))).toBe(`${FAULTS}EndpointNotFound`);
    expect(fault[1]).toBe(fault.length - 2);
  });
});

describe('framing faults', () => {
  it('carry the standard fault strings', () => {
    const names = [
      'ContentTypeInvalid',
      'ContentTypeTooLong',
      'ConnectionDispatchFailed',
      'EndpointNotFound',
      'EndpointUnavailable',
      'MaxMessageSizeExceededFault',
      'ServerTooBusy',
      'ServiceActivationFailed',
      'UnsupportedMode',
      'UnsupportedVersion',
      'UpgradeInvalid',
      'ViaTooLong',
    ] as const;
    for (const name of names) {
      expect(new FramingFault(name, '', 0).faultString).toBe(FAULTS + name);
      expect(new TextDecoder().decode(faultRecord(name).subarray(2))).toBe(FAULTS + name);
    }
    expect(new FramingFault('UnexpectedRecord', '', 0).faultString).toBeUndefined();
  });
});

describe('ServerFramingDecoder', () => {
  it('emits the preamble fields, envelopes and End of a session', () => {
    const a = Uint8Array.of(1, 2, 3);
    const b = new Uint8Array(200).map((_, i) => i);
    expect(decodeInChunks(session(a, b), [1 << 20])).toEqual([
      { type: 'version', major: 1, minor: 0 },
      { type: 'mode', mode: 2 },
      { type: 'via', via: VIA },
      { type: 'encoding', contentType: 'application/soap+msbinsession1', knownEncoding: 8 },
      { type: 'preambleEnd' },
      { type: 'sizedEnvelope', payload: a },
      { type: 'sizedEnvelope', payload: b },
      { type: 'end' },
    ]);
  });

  it('gives the same events whatever the chunking (a record across chunks, several records in one)', () => {
    const stream = session(new Uint8Array(0), new Uint8Array(2000).fill(0x42), Uint8Array.of(9));
    const whole = decodeInChunks(stream, [stream.length]);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 40 }), (sizes) => {
        expect(decodeInChunks(stream, sizes)).toEqual(whole);
      }),
      { seed: 7, numRuns: 100 },
    );
    expect(decodeInChunks(stream, [1])).toEqual(whole);
  });

  it('reads an envelope whole in its chunk as a copy, refused at the same position as when it comes byte by byte', () => {
    const payload = new Uint8Array(101).fill(7);
    const stream = framing().raw(clientPreamble(VIA)).sizedEnvelope(payload).finish();
    const decoder = new ServerFramingDecoder();
    const events = decoder.push(stream);
    const envelope = events.find((e) => e.type === 'sizedEnvelope');
    expect(envelope).toEqual({ type: 'sizedEnvelope', payload });
    stream.fill(0);
    expect(envelope?.type === 'sizedEnvelope' && envelope.payload[0]).toBe(7);
    const whole = refusal(framing().raw(clientPreamble(VIA)).sizedEnvelope(payload).finish(), { maxMessageSize: 100 });
    const bytes = framing().raw(clientPreamble(VIA)).sizedEnvelope(payload).finish();
    const byByte = new ServerFramingDecoder({ maxMessageSize: 100 });
    let fault: unknown;
    try {
      for (const chunk of chunked(bytes, [1])) byByte.push(chunk);
    } catch (error) {
      fault = error;
    }
    expect(whole.code).toBe('MaxMessageSizeExceededFault');
    expect((fault as FramingFault).position).toBe(whole.position);
  });

  it('accepts the binary session encoding as an extensible encoding, and any minor version', () => {
    const stream = framing()
      .version(1, 7)
      .mode()
      .via(VIA)
      .extensibleEncoding('application/soap+msbinsession1')
      .preambleEnd()
      .finish();
    const events = decodeInChunks(stream, [3]);
    expect(events[0]).toEqual({ type: 'version', major: 1, minor: 7 });
    expect(events[3]).toEqual({ type: 'encoding', contentType: 'application/soap+msbinsession1' });
  });

  it('reads a new preamble after End on the same stream (a pooled .NET connection)', () => {
    const stream = new ByteWriter()
      .bytes(session(Uint8Array.of(1)))
      .bytes(session(Uint8Array.of(2)))
      .finish();
    const events = decodeInChunks(stream, [5]);
    expect(events.map((e) => e.type)).toEqual([
      ...['version', 'mode', 'via', 'encoding', 'preambleEnd', 'sizedEnvelope', 'end'],
      ...['version', 'mode', 'via', 'encoding', 'preambleEnd', 'sizedEnvelope', 'end'],
    ]);
  });

  it('stops at an upgrade request and hands the rest of the chunk to the upgrade', () => {
    const nnsHandshake = Uint8Array.of(0x16, 0x01, 0x00, 0x00, 0x4a, 0x60);
    const stream = new ByteWriter().bytes(clientPreamble(VIA, 'application/negotiate')).bytes(nnsHandshake).finish();
    const decoder = new ServerFramingDecoder({
      acceptUpgrade: (c) => c === 'application/negotiate',
      requireUpgrade: true,
    });
    const events = decoder.push(stream);
    const last = events[events.length - 1]!;
    expect(last).toEqual({ type: 'upgradeRequest', contentType: 'application/negotiate', rest: nnsHandshake });
    expect(decoder.state).toBe('upgrading');
    expect(() => decoder.push(Uint8Array.of(0x0c))).toThrow(FramingFault);

    const upgraded = new ServerFramingDecoder({ acceptUpgrade: () => true, requireUpgrade: true });
    upgraded.push(clientPreamble(VIA, 'application/negotiate'));
    upgraded.upgradeComplete();
    // What the NNS data frames carry from here on, cut anywhere.
    expect(upgraded.push(Uint8Array.of(0x0c, 0x06))).toEqual([{ type: 'preambleEnd' }]);
    expect(upgraded.push(Uint8Array.of(0x02, 0xaa))).toEqual([]);
    expect(upgraded.push(Uint8Array.of(0xbb, 0x07))).toEqual([
      { type: 'sizedEnvelope', payload: Uint8Array.of(0xaa, 0xbb) },
      { type: 'end' },
    ]);
  });

  it('allows a clean end between envelopes and between sessions, not inside a record or the preamble', () => {
    const full = session(Uint8Array.of(1, 2, 3));
    expect(() => decodeInChunks(full.subarray(0, full.length - 1), [64])).not.toThrow(); // no End record: WCF accepts
    expect(() => decodeInChunks(new Uint8Array(0), [1])).not.toThrow();
    for (const cut of [1, 3, 10, 44, full.length - 3]) {
      expect(() => decodeInChunks(full.subarray(0, cut), [64]), `cut at ${cut}`).toThrow(
        expect.objectContaining({ code: 'PrematureEnd', faultString: undefined }),
      );
    }
  });
});

describe('framing refusals', () => {
  const preamble = (): ReturnType<typeof framing> => framing().version().mode().via(VIA).knownEncoding();

  it('UnsupportedVersion for a major version other than 1', () => {
    const fault = expectRefusal([0x00, 0x02, 0x00], 'UnsupportedVersion');
    expect(fault.faultString).toBe(`${FAULTS}UnsupportedVersion`);
    expect(fault.position).toBe(2);
  });

  it('UnsupportedMode for every mode but duplex', () => {
    for (const mode of [0x00, 0x01, 0x03, 0x04, 0x05, 0xff]) {
      const fault = expectRefusal(framing().version().mode(mode).finish(), 'UnsupportedMode');
      expect(fault.faultString).toBe(`${FAULTS}UnsupportedMode`);
    }
  });

  it('ViaTooLong as soon as the length is read, before the via arrives', () => {
    const stream = framing().version().mode().raw([0x02, 0x81, 0x10]).finish(); // 2049 bytes announced, none sent
    expect(expectRefusal(stream, 'ViaTooLong').faultString).toBe(`${FAULTS}ViaTooLong`);
    expect(() =>
      new ServerFramingDecoder().push(framing().version().mode().via('x'.repeat(2048)).finish()),
    ).not.toThrow();
    expectRefusal(framing().version().mode().via('x'.repeat(11)).finish(), 'ViaTooLong', { maxViaLength: 10 });
  });

  it('EndpointNotFound when the via check says no', () => {
    const options = { acceptVia: (via: string) => via === VIA };
    expect(() => new ServerFramingDecoder(options).push(clientPreamble(VIA))).not.toThrow();
    const fault = expectRefusal(clientPreamble('net.tcp://127.0.0.1:8731/Other'), 'EndpointNotFound', options);
    expect(fault.faultString).toBe(`${FAULTS}EndpointNotFound`);
  });

  it('ContentTypeInvalid for other encodings, known or extensible', () => {
    for (const known of [0x00, 0x03, 0x06, 0x07, 0x09, 0xff]) {
      expectRefusal(framing().version().mode().via(VIA).knownEncoding(known).finish(), 'ContentTypeInvalid');
    }
    const text = framing().version().mode().via(VIA).extensibleEncoding('application/soap+xml; charset=utf-8').finish();
    expect(expectRefusal(text, 'ContentTypeInvalid').faultString).toBe(`${FAULTS}ContentTypeInvalid`);
    // A server that serves more encodings says so.
    expect(() => new ServerFramingDecoder({ acceptContentType: () => true }).push(text)).not.toThrow();
  });

  it('ContentTypeTooLong for an extensible encoding or an upgrade over 256 bytes', () => {
    const long = 'a'.repeat(257);
    expect(
      expectRefusal(framing().version().mode().via(VIA).extensibleEncoding(long).finish(), 'ContentTypeTooLong')
        .faultString,
    ).toBe(`${FAULTS}ContentTypeTooLong`);
    expectRefusal(preamble().upgradeRequest(long).finish(), 'ContentTypeTooLong', { acceptUpgrade: () => true });
  });

  it('UpgradeInvalid for an upgrade not offered, and for a missing one the endpoint requires', () => {
    const fault = expectRefusal(preamble().upgradeRequest('application/ssl-tls').finish(), 'UpgradeInvalid', {
      acceptUpgrade: (c) => c === 'application/negotiate',
    });
    expect(fault.faultString).toBe(`${FAULTS}UpgradeInvalid`);
    expectRefusal(preamble().upgradeRequest('application/negotiate').finish(), 'UpgradeInvalid');
    expectRefusal(clientPreamble(VIA), 'UpgradeInvalid', { requireUpgrade: true, acceptUpgrade: () => true });
  });

  it('MaxMessageSizeExceededFault when the declared size passes the limit, before any payload byte', () => {
    const announced = new ByteWriter().bytes(clientPreamble(VIA)).u8(0x06).int31(0x7fffffff).finish();
    const fault = expectRefusal(announced, 'MaxMessageSizeExceededFault');
    expect(fault.faultString).toBe(`${FAULTS}MaxMessageSizeExceededFault`);
    const small = new ByteWriter().bytes(clientPreamble(VIA)).u8(0x06).int31(101).finish();
    expectRefusal(small, 'MaxMessageSizeExceededFault', { maxMessageSize: 100 });
    const exact = framing().raw(clientPreamble(VIA)).sizedEnvelope(new Uint8Array(100)).finish();
    expect(() => new ServerFramingDecoder({ maxMessageSize: 100 }).push(exact)).not.toThrow();
  });

  it('grows an envelope with the bytes received, not with the size announced', () => {
    const decoder = new ServerFramingDecoder();
    decoder.push(
      new ByteWriter()
        .bytes(clientPreamble(VIA))
        .u8(0x06)
        .int31(60 * 1024 * 1024)
        .finish(),
    );
    const before = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < 10; i++) expect(decoder.push(new Uint8Array(1024))).toEqual([]);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(8 * 1024 * 1024);
  });

  it('aborts without a fault string for records out of place', () => {
    const cases: [string, Uint8Array][] = [
      ['no Version record', Uint8Array.of(0x01, 0x02)],
      ['an HTTP request', new TextEncoder().encode('POST / HTTP/1.1\r\n')],
      ['no Mode record', Uint8Array.of(0x00, 0x01, 0x00, 0x02)],
      ['no Via record', framing().version().mode().knownEncoding().finish()],
      ['no encoding record', framing().version().mode().via(VIA).preambleEnd().finish()],
      ['an envelope inside the preamble', preamble().sizedEnvelope(Uint8Array.of(1)).finish()],
      ['an unsized envelope', framing().raw(clientPreamble(VIA)).raw([0x05]).finish()],
      ['a second PreambleEnd', framing().raw(clientPreamble(VIA)).preambleEnd().finish()],
      ['a record type past PreambleEnd', framing().raw(clientPreamble(VIA)).raw([0x0d]).finish()],
    ];
    for (const [name, bytes] of cases) {
      const fault = expectRefusal(bytes, 'UnexpectedRecord');
      expect(fault.faultString, name).toBeUndefined();
    }
  });

  it('aborts on a size with a bad fifth byte and on a via that is not UTF-8', () => {
    expectRefusal(framing().version().mode().raw([0x02, 0xff, 0xff, 0xff, 0xff, 0x0f]).finish(), 'InvalidSize');
    expectRefusal(framing().raw(clientPreamble(VIA)).raw([0x06, 0x80, 0x80, 0x80, 0x80, 0x10]).finish(), 'InvalidSize');
    expectRefusal(framing().version().mode().raw([0x02, 0x02, 0xc3, 0x28]).finish(), 'InvalidString');
  });

  it('stays closed after a refusal', () => {
    const decoder = new ServerFramingDecoder();
    expect(() => decoder.push(Uint8Array.of(0x00, 0x09))).toThrow(
      expect.objectContaining({ code: 'UnsupportedVersion' }),
    );
    expect(() => decoder.push(clientPreamble(VIA))).toThrow(expect.objectContaining({ code: 'UnsupportedVersion' }));
    expect(() => decoder.end()).not.toThrow();
  });
});
