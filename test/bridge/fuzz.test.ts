/**
 * Hostile bytes into the readers: whatever arrives, the framing decoder ends in events or a FramingFault and the
 * binary XML readers in a tree or a BinaryXmlError; nothing else is thrown, nothing hangs, and a tree that is read
 * writes back to bytes that read as the same tree. Inputs are random bytes and mutations (flips, cuts, insertions)
 * of valid streams, which reach far deeper into the state machines than noise does. Fixed seeds, bounded runs.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BinaryXmlError,
  decodeDocument,
  decodeEnvelope,
  encodeDocument,
  encodeEnvelope,
  ReaderSession,
  WriterSession,
} from '../../tcp-bridge/src/binary-xml/index.ts';
import { ByteWriter } from '../../tcp-bridge/src/bytes.ts';
import {
  clientPreamble,
  framing,
  FramingFault,
  ServerFramingDecoder,
  type ServerDecoderOptions,
} from '../../tcp-bridge/src/framing/index.ts';
import { comparable, documentArb, SESSION_STRINGS } from '../support/nettcp/binary-xml-arbitrary.ts';
import { chunked } from '../support/nettcp/pcap.ts';

const VIA = 'net.tcp://127.0.0.1:8731/IDBService';

/** Random edits of a valid input: flip, replace, insert and delete bytes, or cut it short. */
function mutated(valid: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Uint8Array> {
  const edit = fc.tuple(
    fc.constantFrom('flip', 'set', 'insert', 'delete', 'cut'),
    fc.nat(),
    fc.integer({ min: 0, max: 255 }),
  );
  return fc.tuple(valid, fc.array(edit, { minLength: 1, maxLength: 4 })).map(([bytes, edits]) => {
    let out = [...bytes];
    for (const [kind, where, value] of edits) {
      const at = out.length === 0 ? 0 : where % out.length;
      if (kind === 'flip') out[at] = (out[at] ?? 0) ^ (1 << (value % 8));
      else if (kind === 'set') out[at] = value;
      else if (kind === 'insert') out.splice(at, 0, value);
      else if (kind === 'delete') out.splice(at, 1);
      else out = out.slice(0, at);
    }
    return Uint8Array.from(out);
  });
}

describe('fuzz: framing decoder', () => {
  const validStream = fc
    .tuple(fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 4 }), fc.boolean())
    .map(([payloads, upgrade]) => {
      const w = framing().version().mode().via(VIA).knownEncoding();
      if (upgrade) w.upgradeRequest('application/negotiate');
      w.preambleEnd();
      for (const p of payloads) w.sizedEnvelope(p);
      return w.end().finish();
    });
  const input = fc.oneof(
    fc.uint8Array({ maxLength: 200 }),
    fc.uint8Array({ maxLength: 120 }).map((tail) => new ByteWriter().bytes(clientPreamble(VIA)).bytes(tail).finish()),
    mutated(validStream),
  );
  const options = fc.record({
    maxMessageSize: fc.constantFrom(undefined, 16, 1 << 20),
    maxViaLength: fc.constantFrom(undefined, 8),
    requireUpgrade: fc.boolean(),
    acceptUpgrade: fc.constantFrom(undefined, () => true),
  }) as fc.Arbitrary<ServerDecoderOptions>;

  it('ends every byte sequence in events or a FramingFault, in any chunking', () => {
    fc.assert(
      fc.property(
        input,
        fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 8 }),
        options,
        (bytes, sizes, opts) => {
          const decoder = new ServerFramingDecoder(opts);
          let payloadBytes = 0;
          try {
            for (const chunk of chunked(bytes, sizes)) {
              for (const event of decoder.push(chunk)) {
                if (event.type === 'sizedEnvelope') {
                  payloadBytes += event.payload.length;
                  expect(event.payload.length).toBeLessThanOrEqual(opts.maxMessageSize ?? 64 * 1024 * 1024);
                }
                if (event.type === 'upgradeRequest') decoder.upgradeComplete();
              }
            }
            decoder.end();
          } catch (error) {
            if (!(error instanceof FramingFault)) throw error;
            expect(decoder.state).toBe('closed');
          }
          expect(payloadBytes).toBeLessThanOrEqual(bytes.length);
        },
      ),
      { seed: 0x6e6d66, numRuns: 3000 },
    );
  });
});

describe('fuzz: MC-NBFX reader', () => {
  const session = new ReaderSession();
  session.readTable(encodeEnvelope({ children: [] }, new WriterSession(), { strings: SESSION_STRINGS }));
  const writer = new WriterSession();
  for (const s of SESSION_STRINGS) writer.add(s);

  const validDocument = documentArb.map((doc) => encodeDocument(doc, { session: writer, useDictionaries: false }));
  const input = fc.oneof(
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }) },
    // Plausible openings: an element record, then noise.
    {
      weight: 1,
      arbitrary: fc.uint8Array({ maxLength: 100 }).map((tail) => Uint8Array.from([0x40, 0x01, 0x78, ...tail])),
    },
    { weight: 3, arbitrary: mutated(validDocument) },
  );

  it('ends every byte sequence in a tree or a BinaryXmlError; trees write back to the same tree', () => {
    fc.assert(
      fc.property(input, (bytes) => {
        let document;
        try {
          document = decodeDocument(bytes, { session, maxDepth: 16, maxRecords: 5000 });
        } catch (error) {
          if (!(error instanceof BinaryXmlError)) throw error;
          return;
        }
        const again = encodeDocument(document, { session: writer, useDictionaries: false });
        const reread = decodeDocument(again, { session });
        expect(comparable(reread)).toEqual(comparable(document));
        expect(encodeDocument(reread, { session: writer, useDictionaries: false })).toEqual(again);
      }),
      { seed: 0x6e626678, numRuns: 3000 },
    );
  });
});

describe('fuzz: MC-NBFSE envelopes', () => {
  const validEnvelope = fc
    .tuple(documentArb, fc.array(fc.string({ maxLength: 30 }), { maxLength: 4 }))
    .map(([doc, strings]) => {
      const out = new WriterSession();
      for (const s of SESSION_STRINGS) out.add(s);
      return encodeEnvelope(doc, out, { strings, useDictionaries: false });
    });
  const input = fc.oneof(fc.uint8Array({ maxLength: 200 }), mutated(validEnvelope));

  it('ends every payload sequence in documents or a BinaryXmlError, within the session quota', () => {
    fc.assert(
      fc.property(
        fc.array(input, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 16, max: 2048 }),
        (payloads, quota) => {
          const session = new ReaderSession(quota);
          for (const payload of payloads) {
            try {
              decodeEnvelope(payload, session, { maxRecords: 5000 });
            } catch (error) {
              if (!(error instanceof BinaryXmlError)) throw error;
            }
            expect(session.bytesUsed).toBeLessThanOrEqual(quota);
          }
        },
      ),
      { seed: 0x6e626673, numRuns: 1500 },
    );
  });
});
