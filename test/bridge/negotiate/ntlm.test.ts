/**
 * The NTLMv2 acceptor (tcp-bridge/src/negotiate/ntlm/acceptor.ts): every rule one at a time, driven by the test
 * initiator of support/negotiate/ntlm-client.ts, and the session security of the context it completes. The NTLM
 * functions on their vectors are in ntlm-crypto.test.ts, the users file and the throttle in ntlm-accounts.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  AvId,
  LogonThrottle,
  NtlmAccounts,
  NtlmBackend,
  NtlmFlag,
  NtlmSessionSecurity,
  ntHash,
  parseChallenge,
  type NtlmAcceptor,
} from '../../../tcp-bridge/src/negotiate/ntlm/index.ts';
import {
  IntegrityError,
  LOGON_DENIED,
  NegotiateError,
  OID,
  type ProtectionLevel,
} from '../../../tcp-bridge/src/negotiate/security-context.ts';
import { CLIENT_FLAGS, TestNtlmClient, type AuthenticateTweaks } from '../../support/negotiate/ntlm-client.ts';
import { ascii, hex, toHex } from '../../support/negotiate/negotiate.ts';

interface Setup {
  backend: NtlmBackend;
  advance(ms: number): void;
  context(level?: ProtectionLevel, address?: string): NtlmAcceptor;
}

function setup(options: { throttle?: LogonThrottle } = {}): Setup {
  let now = Date.UTC(2026, 10, 22, 12, 0, 0);
  const accounts = NtlmAccounts.parse(
    `TESTDOM:alice:Secret1!\nTESTDOM:bob:{NT}${toHex(ntHash('Hunter2'))}\n:carol:Carol3#\n`,
  );
  const backend = new NtlmBackend({
    accounts,
    dnsIdentity: 'bridge.test.local',
    now: () => now,
    throttle: options.throttle ?? new LogonThrottle({ perUser: 1000, perAddress: 1000, now: () => now }),
  });
  return {
    backend,
    advance: (ms) => (now += ms),
    context: (level = 'EncryptAndSign', address = '192.0.2.1') =>
      backend.createContext(OID.ntlm, { remoteAddress: address, protectionLevel: level }),
  };
}

interface Logon {
  context: NtlmAcceptor;
  client: TestNtlmClient;
  error?: NegotiateError;
}

async function logon(
  s: Setup,
  credentials: [user: string, domain: string, password: string] = ['alice', 'TESTDOM', 'Secret1!'],
  tweaks: AuthenticateTweaks & {
    negotiateFlags?: number;
    level?: ProtectionLevel;
    address?: string;
    beforeAuthenticate?: () => void;
  } = {},
): Promise<Logon> {
  const context = s.context(tweaks.level, tweaks.address);
  const client = new TestNtlmClient(...credentials);
  try {
    const challenge = await context.step(client.negotiate(tweaks.negotiateFlags));
    expect(challenge.done).toBe(false);
    tweaks.beforeAuthenticate?.();
    const done = await context.step(client.authenticate(challenge.token!, tweaks));
    expect(done).toEqual({ done: true });
    return { context, client };
  } catch (error) {
    expect(error).toBeInstanceOf(NegotiateError);
    expect((error as NegotiateError).status).toBe(LOGON_DENIED);
    return { context, client, error: error as NegotiateError };
  }
}

describe('the NTLM acceptor', () => {
  it('sends a CHALLENGE with the required flags, both NetBIOS names, the DNS name and a timestamp', async () => {
    const s = setup();
    const context = s.context();
    const { token } = await context.step(new TestNtlmClient('alice', 'TESTDOM', 'x').negotiate());
    const challenge = parseChallenge(token!)!;
    const required =
      NtlmFlag.ExtendedSessionSecurity |
      NtlmFlag.N128 |
      NtlmFlag.KeyExchange |
      NtlmFlag.Sign |
      NtlmFlag.Seal |
      NtlmFlag.Unicode |
      NtlmFlag.TargetInfo;
    expect(challenge.flags & required).toBe(required);
    expect(challenge.flags & (NtlmFlag.LmKey | NtlmFlag.Datagram | NtlmFlag.Oem)).toBe(0);
    const ids = challenge.targetInfo.map((p) => p.id);
    expect(ids).toEqual([AvId.NbDomainName, AvId.NbComputerName, AvId.DnsComputerName, AvId.Timestamp]);
    expect(ids).not.toContain(AvId.Flags); // no empty MsvAvFlags
    expect(new TextDecoder('utf-16le').decode(challenge.targetInfo[1]!.value)).toBe('BRIDGE');
    expect(new TextDecoder('utf-16le').decode(challenge.targetName)).toBe('BRIDGE');
  });

  it('authenticates a local account, names it DOMAIN\\user as the file spells it, and exchanges sealed messages', async () => {
    const s = setup();
    const { context, client, error } = await logon(s, ['ALICE', 'testdom', 'Secret1!']);
    expect(error).toBeUndefined();
    expect(context.peerName).toBe('TESTDOM\\alice');
    expect(context.confidentiality).toBe(true);
    const fromClient = client.security!.wrap(ascii('ping'));
    expect(fromClient.subarray(12, 16)).toEqual(Uint8Array.of(0, 0, 0, 0)); // raw NTLM: sequence 0 first
    expect(context.unwrap(fromClient)).toEqual(ascii('ping'));
    expect(client.security!.unwrap(context.wrap(ascii('pong')))).toEqual(ascii('pong'));
    expect(context.unwrap(client.security!.wrap(ascii('again')))).toEqual(ascii('again'));
  });

  it('accepts the NT hash lines, local accounts without domain, and proofs over the file domain or no domain', async () => {
    const s = setup();
    expect((await logon(s, ['bob', 'TESTDOM', 'Hunter2'])).context.peerName).toBe('TESTDOM\\bob');
    expect((await logon(s, ['carol', '', 'Carol3#'])).context.peerName).toBe('BRIDGE\\carol');
    expect((await logon(s, ['alice', 'testdom', 'Secret1!'], { hashDomain: 'TESTDOM' })).error).toBeUndefined();
    expect((await logon(s, ['alice', 'TESTDOM', 'Secret1!'], { hashDomain: '' })).error).toBeUndefined();
    expect((await logon(s, ['alice', '', 'Secret1!'])).context.peerName).toBe('TESTDOM\\alice');
    expect((await logon(s, ['alice', 'TESTDOM', 'Secret1!'], { hashDomain: 'OTHER' })).error?.reason).toBe(
      'ntlm.bad-proof',
    );
  });

  it('answers a wrong password and an unknown user alike', async () => {
    const s = setup();
    const wrong = await logon(s, ['alice', 'TESTDOM', 'secret1!']);
    const unknown = await logon(s, ['mallory', 'TESTDOM', 'Secret1!']);
    const otherDomain = await logon(s, ['alice', 'ELSEWHERE', 'Secret1!']);
    for (const failure of [wrong, unknown, otherDomain]) {
      expect(failure.error?.reason).toBe('ntlm.bad-proof');
      expect(failure.error?.status).toBe(0x8009030c);
      expect(failure.context.established).toBe(false);
      expect(() => failure.context.wrap(ascii('x'))).toThrow(IntegrityError);
    }
  });

  it('refuses weak NEGOTIATE flags: no ESS, no 128-bit, no key exchange, no signing, OEM only; no sealing under EncryptAndSign', async () => {
    const s = setup();
    const without = (flag: number): number => CLIENT_FLAGS & ~flag;
    for (const flag of [
      NtlmFlag.ExtendedSessionSecurity,
      NtlmFlag.N128,
      NtlmFlag.KeyExchange,
      NtlmFlag.Sign,
      NtlmFlag.Unicode,
      NtlmFlag.Seal,
    ]) {
      expect((await logon(s, undefined, { negotiateFlags: without(flag) })).error?.reason).toBe('ntlm.weak-flags');
    }
    // Under Sign a client that does not ask for sealing is served, signing only.
    const signOnly = await logon(s, undefined, { negotiateFlags: without(NtlmFlag.Seal), level: 'Sign' });
    expect(signOnly.error).toBeUndefined();
    expect(signOnly.context.confidentiality).toBe(false);
    expect(signOnly.context.integrity).toBe(true);
    // A client asking for more than Sign gets sealing.
    expect((await logon(s, undefined, { level: 'Sign' })).context.confidentiality).toBe(true);
  });

  it('refuses an AUTHENTICATE that drops flags the CHALLENGE granted', async () => {
    const s = setup();
    const challengeFlags = (CLIENT_FLAGS | NtlmFlag.TargetTypeServer) & ~NtlmFlag.RequestTarget;
    expect((await logon(s, undefined, { flags: challengeFlags & ~NtlmFlag.Seal })).error?.reason).toBe(
      'ntlm.weak-flags',
    );
    expect((await logon(s, undefined, { flags: challengeFlags | NtlmFlag.Datagram })).error?.reason).toBe(
      'ntlm.weak-flags',
    );
  });

  it('refuses NTLMv1/LM responses and anonymous logons', async () => {
    const s = setup();
    expect((await logon(s, undefined, { v1: true })).error?.reason).toBe('ntlm.v1');
    expect((await logon(s, undefined, { anonymous: true })).error?.reason).toBe('ntlm.anonymous');
    expect((await logon(s, undefined, { flags: CLIENT_FLAGS | NtlmFlag.Anonymous })).error?.reason).toBe(
      'ntlm.anonymous',
    );
  });

  it('requires the MIC and checks it', async () => {
    const s = setup();
    expect((await logon(s, undefined, { noMic: true })).error?.reason).toBe('ntlm.mic-missing');
    expect((await logon(s, undefined, { badMic: true })).error?.reason).toBe('ntlm.bad-mic');
  });

  it('expires the challenge after 60 s and requires the client timestamps to be the server timestamp', async () => {
    const s = setup();
    expect((await logon(s, undefined, { beforeAuthenticate: () => s.advance(59_000) })).error).toBeUndefined();
    expect((await logon(s, undefined, { beforeAuthenticate: () => s.advance(61_000) })).error?.reason).toBe(
      'ntlm.challenge-expired',
    );
    expect((await logon(s, undefined, { time: 1n })).error?.reason).toBe('ntlm.timestamp');
    expect((await logon(s, undefined, { dropTimestamp: true })).error?.reason).toBe('ntlm.timestamp');
  });

  it('checks the target name against host/<dns identity> when the client names one; refuses channel bindings', async () => {
    const s = setup();
    expect((await logon(s, undefined, { targetName: 'host/bridge.test.local' })).error).toBeUndefined();
    expect((await logon(s, undefined, { targetName: 'HOST/Bridge.Test.Local' })).error).toBeUndefined();
    expect((await logon(s, undefined, { targetName: '' })).error).toBeUndefined();
    expect((await logon(s, undefined, { targetName: 'cifs/attacker.example' })).error?.reason).toBe('ntlm.target-name');
    expect((await logon(s, undefined, { channelBindings: new Uint8Array(16) })).error).toBeUndefined();
    expect((await logon(s, undefined, { channelBindings: new Uint8Array(16).fill(7) })).error?.reason).toBe(
      'ntlm.channel-bindings',
    );
  });

  it('throttles failed logons per user and per address, before looking at the password', async () => {
    let now = 0;
    const throttle = new LogonThrottle({ perUser: 3, perAddress: 6, windowMs: 60_000, now: () => now });
    const s = setup({ throttle });
    for (let i = 0; i < 3; i++)
      expect((await logon(s, ['alice', 'TESTDOM', 'guess'])).error?.reason).toBe('ntlm.bad-proof');
    expect((await logon(s, ['alice', 'TESTDOM', 'Secret1!'])).error?.reason).toBe('ntlm.throttled');
    expect((await logon(s, ['bob', 'TESTDOM', 'Hunter2'])).error).toBeUndefined();
    for (let i = 0; i < 3; i++) await logon(s, [`nobody${i}`, 'TESTDOM', 'guess']);
    expect((await logon(s, ['bob', 'TESTDOM', 'Hunter2'])).error?.reason).toBe('ntlm.throttled'); // the address is over
    expect((await logon(s, ['bob', 'TESTDOM', 'Hunter2'], { address: '192.0.2.2' })).error).toBeUndefined();
    now += 60_000;
    expect((await logon(s, ['alice', 'TESTDOM', 'Secret1!'])).error).toBeUndefined();
  });

  it('is single-use: no token after completion or failure', async () => {
    const s = setup();
    const done = await logon(s);
    await expect(done.context.step(new Uint8Array(8))).rejects.toMatchObject({ reason: 'ntlm.state' });
    const context = s.context();
    await expect(context.step(ascii('NTLMSSP\0garbage'))).rejects.toMatchObject({ reason: 'ntlm.malformed' });
    await expect(context.step(new TestNtlmClient('a', 'b', 'c').negotiate())).rejects.toMatchObject({
      reason: 'ntlm.state',
    });
  });
});

describe('NTLM session security', () => {
  async function established(level: ProtectionLevel = 'EncryptAndSign', negotiateFlags?: number) {
    const result = await logon(setup(), undefined, { level, negotiateFlags });
    expect(result.error).toBeUndefined();
    return { server: result.context, client: result.client.security! };
  }

  it('drops the context on a tampered byte, and every call after it fails', async () => {
    const { server, client } = await established();
    const wrapped = client.wrap(ascii('transfer 100'));
    wrapped[20]! ^= 1;
    expect(() => server.unwrap(wrapped)).toThrow(expect.objectContaining({ kind: 'BadSignature' }));
    expect(() => server.unwrap(client.wrap(ascii('next')))).toThrow(expect.objectContaining({ kind: 'Broken' }));
    expect(() => server.wrap(ascii('x'))).toThrow(IntegrityError);
  });

  it('refuses frames out of order, replayed, truncated or with a bad signature version', async () => {
    const a = await established();
    a.client.wrap(ascii('one')); // sequence 0, never delivered
    const second = a.client.wrap(ascii('two'));
    expect(() => a.server.unwrap(second)).toThrow(expect.objectContaining({ kind: 'OutOfSequence' }));
    const b = await established();
    const once = b.client.wrap(ascii('one'));
    expect(b.server.unwrap(once)).toEqual(ascii('one'));
    expect(() => b.server.unwrap(once)).toThrow(expect.objectContaining({ kind: 'OutOfSequence' }));
    const c = await established();
    expect(() => c.server.unwrap(new Uint8Array(15))).toThrow(expect.objectContaining({ kind: 'Malformed' }));
    const d = await established();
    const badVersion = d.client.wrap(ascii('x'));
    badVersion[0] = 2;
    expect(() => d.server.unwrap(badVersion)).toThrow(expect.objectContaining({ kind: 'Malformed' }));
  });

  it('without SEAL takes the first frame signed-only or sealed, then holds the client to that form and answers in it', async () => {
    const noSeal = CLIENT_FLAGS & ~NtlmFlag.Seal;
    for (const form of ['plain', 'sealed'] as const) {
      const { server, client } = await established('Sign', noSeal);
      client.useForm(form);
      const frame = client.wrap(ascii('hello'));
      expect(toHex(frame.subarray(16)) === toHex(ascii('hello'))).toBe(form === 'plain');
      expect(server.unwrap(frame)).toEqual(ascii('hello'));
      const answer = server.wrap(ascii('world'));
      expect(toHex(answer.subarray(16)) === toHex(ascii('world'))).toBe(form === 'plain');
      expect(client.unwrap(answer)).toEqual(ascii('world'));
      // Switching forms afterwards does not verify.
      client.useForm(form === 'plain' ? 'sealed' : 'plain');
      expect(() => server.unwrap(client.wrap(ascii('switch')))).toThrow(IntegrityError);
    }
  });

  it('restores the RC4 handle around a mechListMIC while the sequence number goes on (MS-SPNG 3.3.5.1)', async () => {
    const { server, client } = await established();
    const mechTypes = hex('300c060a2b06010401823702020a');
    server.verifyMic(mechTypes, client.getMic(mechTypes, { mechListMic: true }), { mechListMic: true });
    client.verifyMic(mechTypes, server.getMic(mechTypes, { mechListMic: true }), { mechListMic: true });
    const frame = client.wrap(ascii('data'));
    expect(frame.subarray(12, 16)).toEqual(Uint8Array.of(1, 0, 0, 0));
    expect(server.unwrap(frame)).toEqual(ascii('data'));
    expect(client.unwrap(server.wrap(ascii('back')))).toEqual(ascii('back'));

    // The first sealed bytes after a mechListMIC are those of a fresh handle; after an ordinary MIC they are not.
    const key = new Uint8Array(16).fill(0x55);
    const afterMechListMic = new NtlmSessionSecurity(key, 'client', true);
    afterMechListMic.getMic(mechTypes, { mechListMic: true });
    const afterMic = new NtlmSessionSecurity(key, 'client', true);
    afterMic.getMic(mechTypes);
    const fresh = new NtlmSessionSecurity(key, 'client', true).wrap(ascii('data'));
    expect(afterMechListMic.wrap(ascii('data')).subarray(16)).toEqual(fresh.subarray(16));
    expect(afterMic.wrap(ascii('data')).subarray(16)).not.toEqual(fresh.subarray(16));
  });
});
