/**
 * BridgeConnection's lifecycle without sockets and without sleeps: an in-memory stream
 * (support/nettcp/memory-stream.ts) whose peer reads at once or not at all, a dispatch the test answers when it
 * chooses, and vitest's fake timers for the init, idle, message and send time-outs.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ByteBudget, type Caller } from '#idb';
import {
  bytesText,
  decodeEnvelope,
  encodeEnvelope,
  ReaderSession,
  WriterSession,
  type XmlDocument,
} from '../../tcp-bridge/src/binary-xml/index.ts';
import { encodeInt31 } from '../../tcp-bridge/src/bytes.ts';
import { BridgeConnection, type ConnectionOptions } from '../../tcp-bridge/src/connection.ts';
import {
  clientPreamble,
  END_RECORD,
  framing,
  NEGOTIATE_UPGRADE,
  RecordType,
  sizedEnvelope,
} from '../../tcp-bridge/src/framing/index.ts';
import type { ByteStream, StreamUpgradeAcceptor, StreamUpgradeEvents } from '../../tcp-bridge/src/streams.ts';
import { MemoryStream } from '../support/nettcp/memory-stream.ts';
import { param, path, request } from '../support/nettcp/soap.ts';

const KiB = 1024;
const VIA = 'net.tcp://localhost/IDBService';
const silent = { log: () => {} };

/** A call the connection dispatched, answered when the test says so. */
interface PendingCall {
  request: XmlDocument;
  caller: Caller;
  answer(reply: XmlDocument): void;
}

/** A connection over a MemoryStream with a client's dictionaries; its calls, refusals and end as the test sees them. */
function connect(options: Partial<ConnectionOptions> = {}, stream = new MemoryStream()) {
  const calls: PendingCall[] = [];
  const refusals: string[] = [];
  const closed: boolean[] = [];
  const connection = new BridgeConnection(stream, {
    connectionId: 'c1',
    remoteAddress: '127.0.0.1',
    dispatch: {
      answer: (request: XmlDocument, caller: Caller) =>
        new Promise((answer) => calls.push({ request, caller, answer })),
    },
    decoder: {},
    initTimeoutMs: 1_000,
    idleTimeoutMs: 60_000,
    messageTimeoutMs: 2_000,
    sendTimeoutMs: 5_000,
    budget: new ByteBudget(1024 * KiB),
    maxCallsAhead: 8,
    maxUnsentBytes: 64 * KiB,
    logger: silent,
    observer: { call: () => {}, handshake: () => {}, refusal: (reason) => refusals.push(reason) },
    onClosed: (clean) => closed.push(clean),
    ...options,
  });
  let writer = new WriterSession();
  let reader = new ReaderSession();
  return {
    connection,
    stream,
    calls,
    refusals,
    closed,
    /** A new session's dictionaries on the client's side (the server makes new ones at each version record). */
    newSession() {
      writer = new WriterSession();
      reader = new ReaderSession();
    },
    /** A new session's preamble, without an upgrade. */
    preamble() {
      writer = new WriterSession();
      reader = new ReaderSession();
      connection.receive(clientPreamble(VIA));
    },
    envelope: (document: XmlDocument) => sizedEnvelope(encodeEnvelope(document, writer)),
    send(...documents: XmlDocument[]) {
      connection.receive(Buffer.concat(documents.map((d) => sizedEnvelope(encodeEnvelope(d, writer)))));
    },
    /** What the client read: records, with envelopes decoded in its session. */
    read() {
      return stream.records().map((r) => (r.type === 'envelope' ? decodeEnvelope(r.payload, reader).document : r));
    },
  };
}

const call = (operation: string, id: number) =>
  request(operation, [], { messageId: `urn:uuid:00000000-0000-0000-0000-${String(id).padStart(12, '0')}` });
const reply = (name: string, bytes = 0) =>
  request(`${name}Response`, bytes > 0 ? [param('Content', [bytesText(new Uint8Array(bytes))])] : []);
const operationOf = (document: XmlDocument) => path(document, 'Envelope', 'Body').children[0];
/** Lets the dispatch promises settle (microtasks only: the fake clock does not move). */
const settle = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('BridgeConnection', () => {
  it('serves a session: preamble, a call with the anonymous caller, End answered, a clean close', async () => {
    const c = connect();
    expect(c.connection.phase).toBe('opening');
    c.preamble();
    expect(c.read()).toEqual([{ type: 'ack' }]);
    expect(c.connection.phase).toBe('serving');
    c.send(call('Heartbeat', 1));
    expect(c.calls).toHaveLength(1);
    expect(c.calls[0]!.caller).toMatchObject({ name: 'anonymous', anonymous: true, connectionId: 'c1' });
    c.calls[0]!.answer(reply('Heartbeat'));
    await settle();
    const [answer] = c.read() as XmlDocument[];
    expect((operationOf(answer!) as { localName: string }).localName).toBe('HeartbeatResponse');
    c.connection.receive(END_RECORD);
    expect(c.read()).toEqual([{ type: 'end' }]);
    expect(c.connection.phase).toBe('pooled');
    c.connection.streamClosed();
    expect(c.closed).toEqual([true]);
    expect(c.connection.phase).toBe('closed');
  });

  it('answers pipelined calls one at a time in order, and the End after them', async () => {
    const c = connect();
    c.preamble();
    c.read();
    c.connection.receive(
      Buffer.concat([c.envelope(call('A', 1)), c.envelope(call('B', 2)), c.envelope(call('C', 3)), END_RECORD]),
    );
    for (const name of ['A', 'B', 'C']) {
      expect(c.calls).toHaveLength(1);
      expect((operationOf(c.calls[0]!.request) as { localName: string }).localName).toBe(name);
      c.calls.shift()!.answer(reply(name));
      await settle();
    }
    const records = c.read();
    expect(records.slice(0, 3).map((d) => (operationOf(d as XmlDocument) as { localName: string }).localName)).toEqual([
      'AResponse',
      'BResponse',
      'CResponse',
    ]);
    expect(records[3]).toEqual({ type: 'end' });
  });

  it('pauses reading with more calls ahead than allowed, and resumes as they are answered', async () => {
    const c = connect({ maxCallsAhead: 2 });
    c.preamble();
    c.send(call('A', 1), call('B', 2));
    expect(c.stream.paused).toBe(true);
    c.calls.shift()!.answer(reply('A'));
    await settle();
    expect(c.stream.paused).toBe(false);
  });

  it('serves a new session on the same stream after End, with fresh dictionaries, and rolls back only an unclean end', async () => {
    const c = connect();
    for (let session = 0; session < 3; session++) {
      c.preamble();
      expect(c.connection.phase).toBe('serving');
      c.send(call('Heartbeat', session));
      c.calls.shift()!.answer(reply('Heartbeat'));
      await settle();
      c.connection.receive(END_RECORD);
      expect(c.read().map((r) => ('type' in r ? r.type : 'envelope'))).toEqual(['ack', 'envelope', 'end']);
    }
    // A new session had begun (its version record) when the stream closed: not clean.
    c.connection.receive(Uint8Array.of(RecordType.Version, 1, 0));
    expect(c.connection.phase).toBe('opening');
    c.connection.streamClosed();
    expect(c.closed).toEqual([false]);
  });

  it('refuses a bad preamble with its framing fault and an unreadable message with an abort', async () => {
    const bad = connect();
    bad.connection.receive(Uint8Array.of(RecordType.Version, 2, 0));
    expect(bad.read()).toEqual([
      { type: 'fault', fault: 'http://schemas.microsoft.com/ws/2006/05/framing/faults/UnsupportedVersion' },
    ]);
    expect(bad.stream.ended).toBe(true);
    expect(bad.refusals).toEqual(['UnsupportedVersion']);
    expect(bad.closed).toEqual([false]);

    const garbled = connect();
    garbled.preamble();
    garbled.connection.receive(
      framing()
        .sizedEnvelope(Uint8Array.of(0xff, 0xff, 0xff))
        .finish(),
    );
    expect(garbled.stream.destroyed).toBe(true);
    expect(garbled.refusals).toEqual(['UnreadableMessage']);
    expect(garbled.closed).toEqual([false]);
    expect(garbled.calls).toHaveLength(0);
  });

  it('answers ServerTooBusy at PreambleEnd when told to refuse', () => {
    const c = connect({ refuseWith: 'ServerTooBusy' });
    c.preamble();
    expect(c.read()).toEqual([
      { type: 'fault', fault: 'http://schemas.microsoft.com/ws/2006/05/framing/faults/ServerTooBusy' },
    ]);
    expect(c.closed).toEqual([false]);
  });

  it('holds one reply plus the limit for a client that stops reading, resumes on drain, and aborts at the send time-out', async () => {
    const c = connect({ maxUnsentBytes: 64 * KiB, sendTimeoutMs: 5_000 });
    c.preamble();
    c.read();
    c.stream.stopReading();
    c.send(...Array.from({ length: 6 }, (_, i) => call('GetFile', i)));
    // The first reply (100 KiB) is written whole although it is larger than the limit; nothing more is dispatched.
    c.calls.shift()!.answer(reply('GetFile', 100 * KiB));
    await settle();
    expect(c.calls).toHaveLength(0);
    expect(c.stream.paused).toBe(true);
    expect(c.stream.unsent).toBeGreaterThan(100 * KiB);
    expect(c.stream.unsent).toBeLessThan(100 * KiB + 64 * KiB);
    // Still within the send time-out the client reads: the next call is dispatched, reading resumes once all are.
    await vi.advanceTimersByTimeAsync(4_000);
    c.stream.readAll();
    expect(c.calls).toHaveLength(1);
    c.calls.shift()!.answer(reply('GetFile', 10 * KiB));
    await settle();
    expect(c.calls).toHaveLength(1);
    // It stops reading again, for good: cut off after the send time-out, as a broken connection (rolled back).
    c.stream.stopReading();
    c.calls.shift()!.answer(reply('GetFile', 100 * KiB));
    await settle();
    await vi.advanceTimersByTimeAsync(4_999);
    expect(c.stream.destroyed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(c.stream.destroyed).toBe(true);
    expect(c.refusals).toEqual(['SendTimeout']);
    expect(c.closed).toEqual([false]);
    expect(c.connection.phase).toBe('closed');
  });

  it('closes a connection silent past the init time-out, and one idle past the idle time-out (not counted as refusals)', async () => {
    const silentOne = connect({ initTimeoutMs: 1_000 });
    silentOne.connection.receive(Uint8Array.of(RecordType.Version)); // a byte, then nothing
    await vi.advanceTimersByTimeAsync(999);
    expect(silentOne.stream.destroyed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(silentOne.stream.destroyed).toBe(true);

    const idle = connect({ idleTimeoutMs: 10_000 });
    idle.preamble();
    idle.send(call('Heartbeat', 1));
    await vi.advanceTimersByTimeAsync(20_000); // a call in flight: no idle time-out
    idle.calls.shift()!.answer(reply('Heartbeat'));
    await settle();
    await vi.advanceTimersByTimeAsync(9_999);
    expect(idle.stream.destroyed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(idle.stream.destroyed).toBe(true);
    expect([...silentOne.refusals, ...idle.refusals]).toEqual([]);
    expect([...silentOne.closed, ...idle.closed]).toEqual([false, false]);
  });

  it('aborts an envelope that stops arriving at the message time-out, and answers ServerTooBusy to one still waiting for the budget', async () => {
    const header = (size: number) => Uint8Array.of(RecordType.SizedEnvelope, ...encodeInt31(size));
    const slow = connect({ messageTimeoutMs: 2_000 });
    slow.preamble();
    slow.connection.receive(Buffer.concat([header(1000), new Uint8Array(10)]));
    await vi.advanceTimersByTimeAsync(2_000);
    expect(slow.stream.destroyed).toBe(true);
    expect(slow.refusals).toEqual(['MessageTimeout']);

    const budget = new ByteBudget(1000);
    expect(budget.tryReserve(800)).toBe(true); // another connection's envelope holds most of it
    const waiting = connect({ budget, messageTimeoutMs: 2_000 });
    waiting.preamble();
    waiting.read();
    waiting.connection.receive(header(1000));
    expect(waiting.stream.paused).toBe(true);
    expect(budget.waiters).toBe(1);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(waiting.read()).toEqual([
      { type: 'fault', fault: 'http://schemas.microsoft.com/ws/2006/05/framing/faults/ServerTooBusy' },
    ]);
    expect(budget.waiters).toBe(0);
    expect(budget.reserved).toBe(800);
  });

  it('finishes the calls received on drain, then ends the stream; a database request left open is rolled back', async () => {
    const c = connect();
    c.preamble();
    c.read();
    c.send(call('CreateDatabaseRequest', 1), call('Heartbeat', 2));
    c.connection.drain();
    expect(c.stream.paused).toBe(true);
    expect(c.connection.phase).toBe('draining');
    c.calls.shift()!.answer(reply('CreateDatabaseRequest'));
    await settle();
    expect(c.stream.ended).toBe(false);
    c.calls.shift()!.answer(reply('Heartbeat'));
    await settle();
    expect(c.read()).toHaveLength(2);
    expect(c.stream.ended).toBe(true);
    expect(c.closed).toEqual([false]);
  });

  it('an abandoned call: the stream closes while its call is in flight; the late reply is dropped', async () => {
    const c = connect();
    c.preamble();
    c.read();
    c.send(call('ExecuteNonQuery', 1));
    c.connection.streamClosed();
    expect(c.closed).toEqual([false]);
    c.calls.shift()!.answer(reply('ExecuteNonQuery'));
    await settle();
    expect(c.read()).toEqual([]);
  });

  it('upgrades, serves with the authenticated caller, and after End inside the upgraded stream reads raw framing again', async () => {
    const upgraded: { raw?: ByteStream; events?: StreamUpgradeEvents; closed: number } = { closed: 0 };
    // A stand-in for NegotiateStream (the real one is tested in negotiate/ and server-windows.test.ts): the
    // plaintext is the raw bytes, established at the first byte it is fed.
    const acceptor: StreamUpgradeAcceptor = {
      contentType: NEGOTIATE_UPGRADE,
      accept: (raw, _site, events) => {
        upgraded.raw = raw;
        upgraded.events = events;
        let established = false;
        return {
          receive: (chunk) => {
            if (!established) {
              established = true;
              events.established(
                { name: 'TESTDOM\\alice', sids: [], mechanismName: 'NTLM', protectionLevel: 'EncryptAndSign' },
                raw,
              );
            }
            if (chunk.length > 0) events.data(chunk);
          },
          transportClosed: () => upgraded.closed++,
        };
      },
    };
    const c = connect({ upgrade: acceptor });
    for (let session = 0; session < 2; session++) {
      c.connection.receive(clientPreamble(VIA, NEGOTIATE_UPGRADE));
      expect(c.read()).toEqual([{ type: 'upgradeResponse' }]);
      c.newSession();
      c.connection.receive(Buffer.concat([framing().preambleEnd().finish(), c.envelope(call('Heartbeat', 1))]));
      expect(c.read()).toEqual([{ type: 'ack' }]);
      expect(c.calls[0]!.caller).toMatchObject({ name: 'TESTDOM\\alice', anonymous: false });
      c.calls.shift()!.answer(reply('Heartbeat'));
      await settle();
      c.connection.receive(END_RECORD);
      expect(c.read().map((r) => ('type' in r ? r.type : 'envelope'))).toEqual(['envelope', 'end']);
      expect(upgraded.closed).toBe(session + 1);
    }
    // Without an upgrade the preamble is refused: the caller went with the End.
    c.preamble();
    expect(c.read()).toEqual([
      { type: 'fault', fault: 'http://schemas.microsoft.com/ws/2006/05/framing/faults/UpgradeInvalid' },
    ]);
  });
});
