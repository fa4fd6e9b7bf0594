/**
 * The NegotiateStream server (stream.ts) on an in-memory transport: handshake, refusals, caps, the data phase and large
 * writes.
 */
import { describe, expect, it } from 'vitest';
import type { ByteStream } from '../../../tcp-bridge/src/streams.ts';
import {
  dataFrame,
  errorFrame,
  HandshakeId,
  handshakeFrame,
  MAX_DATA_SEND,
  NnsDecoder,
  type NnsFrame,
} from '../../../tcp-bridge/src/negotiate/nns.ts';
import { NtlmFlag, type NtlmSessionSecurity } from '../../../tcp-bridge/src/negotiate/ntlm/index.ts';
import { IntegrityError, OID, type SecurityBackend } from '../../../tcp-bridge/src/negotiate/security-context.ts';
import { encodeNegTokenInit } from '../../../tcp-bridge/src/negotiate/spnego.ts';
import { NegotiateStreamServer, type NegotiatedPeer } from '../../../tcp-bridge/src/negotiate/stream.ts';
import { CLIENT_FLAGS, TestNtlmClient } from '../../support/negotiate/ntlm-client.ts';
import { ascii } from '../../support/negotiate/negotiate.ts';
import { fakeBackend, FakeMechanism, ntlmBackend, SpnegoNtlmClient } from './parties.ts';
import { MemoryStream } from '../../support/nettcp/memory-stream.ts';

/** An in-memory transport recording what the stream writes (its peer reads at once). */
class MemoryTransport extends MemoryStream {
  get written(): Uint8Array[] {
    return this.received;
  }
  /** Everything written since the last call, decoded in the given mode. */
  frames(decoder: NnsDecoder): NnsFrame[] {
    for (const chunk of this.written.splice(0)) decoder.push(chunk);
    const frames: NnsFrame[] = [];
    for (let frame = decoder.next(); frame; frame = decoder.next()) {
      frames.push(frame);
      if (frame.kind === 'handshake' && frame.id === HandshakeId.Done) decoder.startData();
    }
    return frames;
  }
}

function openStream(
  options: {
    backends?: SecurityBackend[];
    protectionLevel?: 'Sign' | 'EncryptAndSign';
    maxHandshakeRounds?: number;
  } = {},
) {
  const transport = new MemoryTransport();
  const events: { peer?: NegotiatedPeer; plaintext?: ByteStream; data: Uint8Array[]; failed?: Error } = { data: [] };
  const stream = new NegotiateStreamServer(
    transport,
    {
      backends: options.backends ?? [ntlmBackend()],
      protectionLevel: options.protectionLevel ?? 'EncryptAndSign',
      remoteAddress: '192.0.2.1',
      maxHandshakeRounds: options.maxHandshakeRounds,
    },
    {
      established: (peer, plaintext) => Object.assign(events, { peer, plaintext }),
      data: (plain) => events.data.push(plain),
      failed: (error) => (events.failed = error),
    },
  );
  return { transport, events, stream, decoder: new NnsDecoder({ maxBuffered: 1 << 24 }) };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function handshake(
  s: ReturnType<typeof openStream>,
  client = new SpnegoNtlmClient(),
): Promise<NtlmSessionSecurity> {
  s.stream.receive(handshakeFrame(0x16, client.init()));
  await settle();
  const [challenge] = s.transport.frames(s.decoder);
  expect(challenge).toMatchObject({ kind: 'handshake', id: 0x16 });
  s.stream.receive(handshakeFrame(0x16, client.authenticate(challenge!.payload)));
  await settle();
  const [done] = s.transport.frames(s.decoder);
  expect(done).toMatchObject({ kind: 'handshake', id: 0x14 });
  client.finish(done!.payload);
  return client.ntlm.security!;
}

describe('the NegotiateStream server', () => {
  it('authenticates, then unwraps data frames in any chunking and wraps writes into frames of at most 63 KiB', async () => {
    const s = openStream();
    const security = await handshake(s);
    expect(s.events.peer).toEqual({
      name: 'TESTDOM\\alice',
      sids: [],
      mechanism: OID.ntlm,
      mechanismName: 'NTLM',
      spnego: true,
      protectionLevel: 'EncryptAndSign',
    });
    const frames = new Uint8Array([
      ...dataFrame(security.wrap(ascii('one'))),
      ...dataFrame(security.wrap(ascii('two'))),
    ]);
    for (let at = 0; at < frames.length; at += 3) s.stream.receive(frames.subarray(at, at + 3));
    expect(s.events.data.map((d) => new TextDecoder().decode(d))).toEqual(['one', 'two']);

    const big = new Uint8Array(150_000).map((_, i) => i & 0xff);
    s.events.plaintext!.write(big);
    const written = s.transport.frames(s.decoder);
    expect(written.map((f) => f.payload.length)).toEqual([64512 + 16, 64512 + 16, 150_000 - 2 * 64512 + 16]);
    expect(written.every((f) => f.payload.length <= MAX_DATA_SEND)).toBe(true);
    const back = written.map((f) => security.unwrap(f.payload));
    expect(new Uint8Array(back.flatMap((b) => [...b]))).toEqual(big);
  });

  it('serves raw NTLM (no SPNEGO): the client ends with HandshakeDone, an empty HandshakeDone answers, data starts at 0', async () => {
    const s = openStream();
    const client = new TestNtlmClient('alice', 'TESTDOM', 'Secret1!');
    s.stream.receive(handshakeFrame(0x16, client.negotiate()));
    await settle();
    const [challenge] = s.transport.frames(s.decoder);
    // .NET's client context is complete after AUTHENTICATE, so it sends it as HandshakeDone.
    s.stream.receive(handshakeFrame(0x14, client.authenticate(challenge!.payload)));
    await settle();
    const [done] = s.transport.frames(s.decoder);
    expect(done).toEqual({ kind: 'handshake', id: 0x14, payload: new Uint8Array(0) });
    expect(s.events.peer).toMatchObject({ name: 'TESTDOM\\alice', spnego: false });
    const frame = client.security!.wrap(ascii('raw'));
    expect(frame.subarray(12, 16)).toEqual(Uint8Array.of(0, 0, 0, 0));
    s.stream.receive(dataFrame(frame));
    expect(s.events.data).toEqual([ascii('raw')]);
  });

  it('refuses a client that says it is done while the server context is not', async () => {
    const s = openStream();
    s.stream.receive(handshakeFrame(0x14, new SpnegoNtlmClient().init()));
    await settle();
    expect(s.events.failed).toMatchObject({ reason: 'nns.client-done-early' });
    expect(s.transport.written.map((b) => [...b])).toEqual([[...errorFrame()]]);
  });

  it('refuses a bad logon with the logon-denied frame and ends the socket', async () => {
    const s = openStream();
    const client = new SpnegoNtlmClient('wrong');
    s.stream.receive(handshakeFrame(0x16, client.init()));
    await settle();
    const [challenge] = s.transport.frames(s.decoder);
    s.stream.receive(handshakeFrame(0x16, client.authenticate(challenge!.payload)));
    await settle();
    expect(s.transport.written.map((b) => [...b])).toEqual([[...errorFrame()]]);
    expect(s.transport.ended).toBe(true);
    expect(s.events.failed).toMatchObject({ reason: 'ntlm.bad-proof' });
    expect(s.stream.state).toBe('failed');
    s.stream.receive(handshakeFrame(0x16, client.init())); // ignored from now on
    expect(s.transport.written).toHaveLength(1);
  });

  it('answers garbage, a data frame during the handshake, and too many rounds the same way', async () => {
    for (const bytes of [
      ascii('GET / HTTP/1.1\r\n'),
      dataFrame(ascii('early')),
      handshakeFrame(0x16, ascii('not a token')),
    ]) {
      const s = openStream();
      s.stream.receive(bytes);
      await settle();
      expect(s.transport.written.map((b) => [...b])).toEqual([[...errorFrame()]]);
      expect(s.transport.ended).toBe(true);
    }
    const s = openStream({ maxHandshakeRounds: 1 });
    const client = new SpnegoNtlmClient();
    s.stream.receive(handshakeFrame(0x16, client.init()));
    await settle();
    const [challenge] = s.transport.frames(s.decoder);
    s.stream.receive(handshakeFrame(0x16, client.authenticate(challenge!.payload)));
    await settle();
    expect(s.events.failed).toMatchObject({ reason: 'nns.rounds' });
  });

  it('ends quietly when the client reports a handshake error', async () => {
    const s = openStream();
    s.stream.receive(errorFrame());
    await settle();
    expect(s.transport.written).toEqual([]);
    expect(s.transport.ended).toBe(true);
    expect(s.events.failed).toMatchObject({ reason: 'client.error' });
  });

  it('refuses a context below the configured protection level', async () => {
    const signOnly = new FakeMechanism(false, false);
    const s = openStream({ backends: [fakeBackend(signOnly)] });
    s.stream.receive(
      handshakeFrame(0x16, encodeNegTokenInit({ mechTypes: [OID.kerberos], mechToken: ascii('AP-REQ') })),
    );
    await settle();
    expect(s.events.failed).toMatchObject({ reason: 'nns.protection-level' });
    // Under Sign the same context is served.
    const t = openStream({ backends: [fakeBackend(new FakeMechanism(false, false))], protectionLevel: 'Sign' });
    t.stream.receive(
      handshakeFrame(0x16, encodeNegTokenInit({ mechTypes: [OID.kerberos], mechToken: ascii('AP-REQ') })),
    );
    await settle();
    expect(t.events.peer).toMatchObject({
      name: 'alice@TEST.LOCAL',
      protectionLevel: 'Sign',
      mechanismName: 'Kerberos',
    });
    // An NTLM client without SEAL is refused under EncryptAndSign already at its NEGOTIATE.
    const u = openStream();
    const client = new SpnegoNtlmClient();
    u.stream.receive(
      handshakeFrame(
        0x16,
        encodeNegTokenInit({ mechTypes: [OID.ntlm], mechToken: client.ntlm.negotiate(CLIENT_FLAGS & ~NtlmFlag.Seal) }),
      ),
    );
    await settle();
    expect(u.events.failed).toMatchObject({ reason: 'ntlm.weak-flags' });
  });

  it('destroys the socket on a data frame that does not verify, and reads nothing after it', async () => {
    const s = openStream();
    const security = await handshake(s);
    const good = security.wrap(ascii('good'));
    const bad = security.wrap(ascii('bad'));
    bad[18]! ^= 0x80;
    s.stream.receive(
      new Uint8Array([...dataFrame(good), ...dataFrame(bad), ...dataFrame(security.wrap(ascii('later')))]),
    );
    expect(s.events.data.map((d) => new TextDecoder().decode(d))).toEqual(['good']);
    expect(s.transport.destroyed).toBe(true);
    expect(s.events.failed).toBeInstanceOf(IntegrityError);
    expect(s.stream.state).toBe('failed');
    s.events.plaintext!.write(ascii('nothing goes out'));
    expect(s.transport.written).toEqual([]);
  });

  it('passes end, destroy, pause and resume of the plaintext stream to the socket', async () => {
    const s = openStream();
    await handshake(s);
    s.events.plaintext!.pause();
    expect(s.transport.paused).toBe(true);
    s.events.plaintext!.resume();
    expect(s.transport.paused).toBe(false);
    s.events.plaintext!.end();
    expect(s.transport.ended).toBe(true);
    expect(s.stream.state).toBe('closed');
  });
});
