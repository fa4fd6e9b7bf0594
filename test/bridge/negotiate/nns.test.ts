/** MS-NNS framing (nns.ts) without a network: handshake and data frames, the logon-denied error, the decoder's refusals. */
import { describe, expect, it } from 'vitest';
import {
  dataFrame,
  errorFrame,
  errorStatus,
  HandshakeId,
  handshakeFrame,
  MAX_DATA_SEND,
  NnsDecoder,
  type NnsError,
  type NnsFrame,
} from '../../../tcp-bridge/src/negotiate/nns.ts';
import { ascii } from '../../support/negotiate/negotiate.ts';

describe('MS-NNS framing', () => {
  it('writes handshake frames with a big-endian size, data frames with a little-endian length', () => {
    expect([...handshakeFrame(HandshakeId.InProgress, new Uint8Array(0x14a))].slice(0, 5)).toEqual([
      0x16, 1, 0, 0x01, 0x4a,
    ]);
    expect([...dataFrame(ascii('abc'))]).toEqual([3, 0, 0, 0, 0x61, 0x62, 0x63]);
    expect(() => dataFrame(new Uint8Array(MAX_DATA_SEND + 1))).toThrow(RangeError);
    expect(() => dataFrame(new Uint8Array(0))).toThrow(RangeError);
  });

  it('writes the logon-denied error so that both .NET byte orders read 0x8009030C', () => {
    const frame = errorFrame();
    expect([...frame]).toEqual([0x15, 1, 0, 0, 8, 0x0c, 0x03, 0x09, 0x80, 0x80, 0x09, 0x03, 0x0c]);
    const status = errorStatus(frame.subarray(5))!;
    expect(status.bigEndian).toBe(0x8009030c); // .NET Framework: error = (error << 8) + b, low 32 bits
    expect(status.littleEndian).toBe(0x8009030c); // .NET 7+: ReadInt64LittleEndian, low 32 bits
    const view = new DataView(frame.buffer, 5, 8);
    expect(Number(BigInt.asIntN(32, view.getBigInt64(0, false)))).toBe(0x8009030c | 0);
    expect(Number(BigInt.asIntN(32, view.getBigInt64(0, true)))).toBe(0x8009030c | 0);
  });

  it('decodes frames fed one byte at a time and switches to data framing exactly after the handshake', () => {
    const stream = new Uint8Array([
      ...handshakeFrame(0x16, ascii('first')),
      ...handshakeFrame(0x14, new Uint8Array(0)),
      ...dataFrame(ascii('data!')),
    ]);
    const decoder = new NnsDecoder();
    const frames: NnsFrame[] = [];
    for (const byte of stream) {
      decoder.push(Uint8Array.of(byte));
      for (let frame = decoder.next(); frame; frame = decoder.next()) {
        frames.push(frame);
        if (frame.kind === 'handshake' && frame.id === HandshakeId.Done) decoder.startData();
      }
    }
    expect(frames).toEqual([
      { kind: 'handshake', id: 0x16, payload: ascii('first') },
      { kind: 'handshake', id: 0x14, payload: new Uint8Array(0) },
      { kind: 'data', payload: ascii('data!') },
    ]);
    expect(decoder.buffered).toBe(0);
  });

  it('refuses unknown ids, other versions, oversized tokens and frames, empty data frames, flooding', () => {
    const first = (bytes: number[], options = {}, data = false): unknown => {
      const decoder = new NnsDecoder(options);
      if (data) decoder.startData();
      try {
        decoder.push(Uint8Array.from(bytes));
        return decoder.next();
      } catch (error) {
        return (error as NnsError).code;
      }
    };
    expect(first([0x17, 1, 0, 0, 0])).toBe('BadMessageId');
    expect(first([0x16, 2, 0, 0, 0])).toBe('BadVersion');
    expect(first([0x16, 1, 1, 0, 0])).toBe('BadVersion');
    expect(first([0x16, 1, 0, 0x10, 0x01], { maxHandshakePayload: 0x1000 })).toBe('TokenTooLarge');
    expect(first([0, 0, 0, 0], {}, true)).toBe('FrameSize');
    expect(first([1, 0, 1, 0], {}, true)).toBe('FrameSize'); // 65 537
    expect(first([0, 0, 1, 0], {}, true)).toBeUndefined(); // 65 536 is accepted (waits for the payload)
    expect(first([...new Array(100).fill(0x16)], { maxBuffered: 64 })).toBe('BufferOverflow');
  });
});
