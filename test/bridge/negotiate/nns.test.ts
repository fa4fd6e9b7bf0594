/**
 * NegotiateStream's layers without a network: MS-NNS framing (nns.ts), SPNEGO tokens and the SPNEGO acceptor
 * (spnego.ts) over the NTLM backend and over a stand-in mechanism, and the stream (stream.ts) on an in-memory
 * transport: handshake, refusals, caps, the data phase and large writes.
 */
import { MemoryStream } from '../../support/memory-stream.ts';
import { describe, expect, it } from 'vitest';
import type { ByteStream } from '../../../tcp-bridge/src/streams.ts';
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
import {
  LogonThrottle,
  NtlmAccounts,
  NtlmBackend,
  NtlmFlag,
  type NtlmSessionSecurity,
} from '../../../tcp-bridge/src/negotiate/ntlm/index.ts';
import {
  IntegrityError,
  NegotiateError,
  normalizePeerName,
  OID,
  type AcceptorInfo,
  type MechanismContext,
  type SecurityBackend,
  type StepResult,
} from '../../../tcp-bridge/src/negotiate/security-context.ts';
import {
  createAcceptor,
  decodeNegTokenInit,
  decodeNegTokenResp,
  encodeMechTypes,
  encodeNegTokenInit,
  encodeNegTokenResp,
  NegState,
  SpnegoAcceptor,
  SpnegoError,
} from '../../../tcp-bridge/src/negotiate/spnego.ts';
import { NegotiateStreamServer, type NegotiatedPeer } from '../../../tcp-bridge/src/negotiate/stream.ts';
import { CLIENT_FLAGS, TestNtlmClient } from '../../support/ntlm-client.ts';
import { ascii, hex } from '../../support/negotiate.ts';

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

describe('SPNEGO tokens', () => {
  const negotiate = new TestNtlmClient('alice', 'TESTDOM', 'x').negotiate();

  it('round-trips NegTokenInit and NegTokenResp and keeps the MechTypeList bytes for the MIC', () => {
    const init = decodeNegTokenInit(
      encodeNegTokenInit({ mechTypes: [OID.kerberosMicrosoft, OID.ntlm], mechToken: negotiate }),
    );
    expect(init.mechTypes).toEqual([OID.kerberosMicrosoft, OID.ntlm]);
    expect(init.mechToken).toEqual(negotiate);
    expect(init.mechTypesDer).toEqual(encodeMechTypes([OID.kerberosMicrosoft, OID.ntlm]));
    const resp = {
      negState: NegState.AcceptIncomplete,
      supportedMech: OID.ntlm,
      responseToken: ascii('tok'),
      mechListMIC: new Uint8Array(16),
    };
    expect(decodeNegTokenResp(encodeNegTokenResp(resp))).toEqual({ kind: 'resp', ...resp });
  });

  it('refuses what is not DER SPNEGO: trailing bytes, indefinite lengths, fields out of order, wrong types', () => {
    const resp = encodeNegTokenResp({ negState: NegState.AcceptCompleted, responseToken: ascii('x') });
    expect(() => decodeNegTokenResp(new Uint8Array([...resp, 0]))).toThrow(SpnegoError);
    expect(() => decodeNegTokenResp(hex('a180 3080 a003 0a0100 0000 0000'))).toThrow(SpnegoError); // indefinite
    expect(() => decodeNegTokenResp(hex('a10c300a a203040178 a0030a0100'))).toThrow(/unexpected field/); // [2] before [0]
    expect(() => decodeNegTokenResp(hex('a10c300a a0030a0100 a0030a0100'))).toThrow(SpnegoError); // [0] twice
    expect(() => decodeNegTokenResp(hex('a1073005 a0030201 00'))).toThrow(/ENUMERATED/); // negState as INTEGER
    expect(() => decodeNegTokenResp(hex('a0063004a0023000'))).toThrow(SpnegoError); // a NegTokenInit where a NegTokenResp belongs
    expect(() => decodeNegTokenInit(hex('6006 0604 2a030405'))).toThrow(/not SPNEGO/);
    expect(() => decodeNegTokenInit(encodeNegTokenInit({ mechTypes: [] }))).toThrow(/empty mechTypes/);
  });
});

function ntlmBackend(): NtlmBackend {
  return new NtlmBackend({
    accounts: NtlmAccounts.parse('TESTDOM:alice:Secret1!\n'),
    dnsIdentity: 'localhost',
    throttle: new LogonThrottle({ perUser: 1000, perAddress: 1000 }),
  });
}

const INFO: AcceptorInfo = { remoteAddress: '192.0.2.1', protectionLevel: 'EncryptAndSign' };

/** The client side of SPNEGO/NTLM, as gss-ntlmssp under MIT SPNEGO does it. */
class SpnegoNtlmClient {
  readonly ntlm: TestNtlmClient;

  constructor(
    password = 'Secret1!',
    readonly mechTypes: string[] = [OID.ntlm],
  ) {
    this.ntlm = new TestNtlmClient('alice', 'TESTDOM', password);
  }

  init(optimistic = true): Uint8Array {
    return encodeNegTokenInit({
      mechTypes: this.mechTypes,
      mechToken: optimistic ? this.ntlm.negotiate() : new Uint8Array([0x6e, 0]),
    });
  }

  authenticate(challengeResp: Uint8Array, options: { mic?: 'none' | 'bad' } = {}): Uint8Array {
    const resp = decodeNegTokenResp(challengeResp);
    const auth = this.ntlm.authenticate(resp.responseToken!);
    const der = encodeMechTypes(this.mechTypes);
    const mic = this.ntlm.security!.getMic(der, { mechListMic: true });
    if (options.mic === 'bad') mic[3]! ^= 1;
    return encodeNegTokenResp({ responseToken: auth, mechListMIC: options.mic === 'none' ? undefined : mic });
  }

  finish(done: Uint8Array): void {
    const resp = decodeNegTokenResp(done);
    expect(resp.negState).toBe(NegState.AcceptCompleted);
    this.ntlm.security!.verifyMic(encodeMechTypes(this.mechTypes), resp.mechListMIC!, { mechListMic: true });
  }
}

describe('the SPNEGO acceptor over NTLM', () => {
  it('runs NegTokenInit → accept-incomplete + CHALLENGE → AUTHENTICATE + mechListMIC → accept-completed + mechListMIC', async () => {
    const acceptor = new SpnegoAcceptor([ntlmBackend()], INFO);
    const client = new SpnegoNtlmClient();
    const first = await acceptor.step(client.init());
    expect(first.done).toBe(false);
    const challenge = decodeNegTokenResp(first.token!);
    expect(challenge).toMatchObject({ negState: NegState.AcceptIncomplete, supportedMech: OID.ntlm });
    const last = await acceptor.step(client.authenticate(first.token!));
    expect(last.done).toBe(true);
    client.finish(last.token!);
    expect(acceptor).toMatchObject({
      established: true,
      peerName: 'TESTDOM\\alice',
      mechanism: OID.ntlm,
      confidentiality: true,
    });
    // First data frames: sequence number 1 both ways.
    const frame = client.ntlm.security!.wrap(ascii('PreambleEnd'));
    expect(frame.subarray(12, 16)).toEqual(Uint8Array.of(1, 0, 0, 0));
    expect(acceptor.unwrap(frame)).toEqual(ascii('PreambleEnd'));
    const answer = acceptor.wrap(ascii('ack'));
    expect(answer.subarray(12, 16)).toEqual(Uint8Array.of(1, 0, 0, 0));
    expect(client.ntlm.security!.unwrap(answer)).toEqual(ascii('ack'));
  });

  it('requires the client mechListMIC and checks it', async () => {
    for (const mic of ['none', 'bad'] as const) {
      const acceptor = new SpnegoAcceptor([ntlmBackend()], INFO);
      const client = new SpnegoNtlmClient();
      const first = await acceptor.step(client.init());
      await expect(acceptor.step(client.authenticate(first.token!, { mic }))).rejects.toMatchObject({
        reason: mic === 'none' ? 'spnego.mic-missing' : 'spnego.bad-mechlistmic',
      });
      expect(acceptor.established).toBe(false);
      expect(() => acceptor.wrap(ascii('x'))).toThrow(IntegrityError);
    }
  });

  it('picks NTLM when the client prefers Kerberos: request-mic, no token, then NTLM from its first message', async () => {
    const acceptor = new SpnegoAcceptor([ntlmBackend()], INFO);
    const client = new SpnegoNtlmClient('Secret1!', [OID.kerberosMicrosoft, OID.kerberos, OID.ntlm]);
    const first = await acceptor.step(client.init(false));
    expect(decodeNegTokenResp(first.token!)).toEqual({
      kind: 'resp',
      negState: NegState.RequestMic,
      supportedMech: OID.ntlm,
    });
    const second = await acceptor.step(encodeNegTokenResp({ responseToken: client.ntlm.negotiate() }));
    expect(decodeNegTokenResp(second.token!).negState).toBe(NegState.AcceptIncomplete);
    const last = await acceptor.step(client.authenticate(second.token!));
    client.finish(last.token!);
    expect(acceptor.peerName).toBe('TESTDOM\\alice');
  });

  it('refuses when no mechanism is shared, and a client that rejects', async () => {
    await expect(
      new SpnegoAcceptor([ntlmBackend()], INFO).step(encodeNegTokenInit({ mechTypes: [OID.kerberos] })),
    ).rejects.toMatchObject({
      reason: 'spnego.no-common-mechanism',
    });
    const acceptor = new SpnegoAcceptor([ntlmBackend()], INFO);
    await acceptor.step(new SpnegoNtlmClient().init());
    await expect(acceptor.step(encodeNegTokenResp({ negState: NegState.Reject }))).rejects.toMatchObject({
      reason: 'spnego.client-reject',
    });
  });

  it('chooses raw NTLM, SPNEGO or refuses by the first token', () => {
    const backends = [ntlmBackend()];
    expect(createAcceptor(new TestNtlmClient('a', 'b', 'c').negotiate(), backends, INFO).mechanism).toBe(OID.ntlm);
    expect(createAcceptor(new SpnegoNtlmClient().init(), backends, INFO)).toBeInstanceOf(SpnegoAcceptor);
    expect(() => createAcceptor(ascii('GET / HTTP/1.1'), backends, INFO)).toThrow(NegotiateError);
    expect(() => createAcceptor(hex('600b06092a864886f712010202'), backends, INFO)).toThrow(/no backend offers/);
  });
});

/**
 * A stand-in for a Kerberos-like backend (the GSSAPI backend will be one): it completes on the client's first token
 * with a token of its own (mutual authentication), signs MICs with a counter, and wraps by prefixing a marker.
 */
class FakeMechanism implements MechanismContext {
  readonly mechanism = OID.kerberos;
  readonly wrapOverhead = 4;
  established = false;
  micCount = 0;
  constructor(
    readonly requireMechListMic: boolean,
    readonly confidentiality = true,
  ) {}
  get integrity(): boolean {
    return this.established;
  }
  get peerName(): string | undefined {
    return this.established ? normalizePeerName('alice@test.local') : undefined;
  }
  async step(token: Uint8Array): Promise<StepResult> {
    if (new TextDecoder().decode(token) !== 'AP-REQ') throw new NegotiateError('fake.bad-token');
    this.established = true;
    return { token: ascii('AP-REP'), done: true };
  }
  getMic(message: Uint8Array): Uint8Array {
    return ascii(`mic${message.length}`);
  }
  verifyMic(message: Uint8Array, mic: Uint8Array): void {
    if (new TextDecoder().decode(mic) !== `mic${message.length}`) throw new IntegrityError('BadSignature', 'fake MIC');
    this.micCount++;
  }
  wrap(plain: Uint8Array): Uint8Array {
    return new Uint8Array([...ascii('WRAP'), ...plain]);
  }
  unwrap(payload: Uint8Array): Uint8Array {
    if (new TextDecoder().decode(payload.subarray(0, 4)) !== 'WRAP')
      throw new IntegrityError('BadSignature', 'fake wrap');
    return payload.slice(4);
  }
  dispose(): void {}
}

const fakeBackend = (mech: FakeMechanism): SecurityBackend => ({
  name: 'fake',
  mechanisms: [OID.kerberos],
  createContext: () => mech,
  close: () => {},
});

describe('the SPNEGO acceptor over a one-round mechanism (the shape of Kerberos with mutual authentication)', () => {
  const mechTypes = [OID.kerberosMicrosoft, OID.ntlm];

  it('completes at once when no mechListMIC is needed', async () => {
    const acceptor = new SpnegoAcceptor([fakeBackend(new FakeMechanism(false))], INFO);
    const result = await acceptor.step(encodeNegTokenInit({ mechTypes, mechToken: ascii('AP-REQ') }));
    expect(result.done).toBe(true);
    expect(decodeNegTokenResp(result.token!)).toEqual({
      kind: 'resp',
      negState: NegState.AcceptCompleted,
      supportedMech: OID.kerberosMicrosoft,
      responseToken: ascii('AP-REP'),
    });
    expect(acceptor.peerName).toBe('alice@TEST.LOCAL');
  });

  it('sends its mechListMIC with the last mechanism token and completes on the client one', async () => {
    const mech = new FakeMechanism(true);
    const acceptor = new SpnegoAcceptor([fakeBackend(mech)], INFO);
    const first = await acceptor.step(encodeNegTokenInit({ mechTypes, mechToken: ascii('AP-REQ') }));
    expect(first.done).toBe(false);
    const resp = decodeNegTokenResp(first.token!);
    expect(resp).toMatchObject({ negState: NegState.AcceptIncomplete, responseToken: ascii('AP-REP') });
    expect(resp.mechListMIC).toEqual(ascii(`mic${encodeMechTypes(mechTypes).length}`));
    const last = await acceptor.step(encodeNegTokenResp({ mechListMIC: resp.mechListMIC! }));
    expect(last).toEqual({ done: true });
    expect(mech.micCount).toBe(1);
  });
});

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
