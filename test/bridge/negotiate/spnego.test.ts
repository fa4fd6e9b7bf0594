/**
 * SPNEGO without a network: the tokens (spnego-tokens.ts) and the acceptor (spnego.ts) over the NTLM backend and over
 * a stand-in one-round mechanism.
 */
import { describe, expect, it } from 'vitest';
import { IntegrityError, NegotiateError, OID } from '../../../tcp-bridge/src/negotiate/security-context.ts';
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
import { TestNtlmClient } from '../../support/negotiate/ntlm-client.ts';
import { ascii, hex } from '../../support/negotiate/negotiate.ts';
import { fakeBackend, FakeMechanism, INFO, ntlmBackend, SpnegoNtlmClient } from './parties.ts';

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
