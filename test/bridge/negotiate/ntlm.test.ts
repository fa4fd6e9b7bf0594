/**
 * The NTLMv2 acceptor (tcp-bridge/src/negotiate/ntlm/): MD4 and RC4 on their published vectors, the NTLM functions
 * on MS-NLMP section 4.2.4 (NTLMv2 authentication and GSS_WrapEx with key exchange), the users file, the throttle, and
 * every rule of the acceptor one at a time, driven by the test initiator of support/ntlm-client.ts.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config.ts';
import { md4 } from '../../../tcp-bridge/src/negotiate/ntlm/md4.ts';
import {
  addressKey,
  AvId,
  exportedSessionKey,
  LogonThrottle,
  NtlmAccounts,
  NtlmBackend,
  NtlmFlag,
  NtlmSessionSecurity,
  ntHash,
  ntowfv2,
  ntProofStr,
  parseAuthenticate,
  parseChallenge,
  parseNtlmV2Response,
  sessionBaseKey,
  sessionKeys,
  upperInvariant,
  utf16le,
  type NtlmAcceptor,
} from '../../../tcp-bridge/src/negotiate/ntlm/index.ts';
import { Rc4, rc4k } from '../../../tcp-bridge/src/negotiate/ntlm/rc4.ts';
import {
  IntegrityError,
  LOGON_DENIED,
  NegotiateError,
  OID,
  type ProtectionLevel,
} from '../../../tcp-bridge/src/negotiate/security-context.ts';
import { CLIENT_FLAGS, TestNtlmClient, type AuthenticateTweaks } from '../../support/ntlm-client.ts';
import { ascii, hex, toHex } from '../../support/negotiate.ts';

describe('MD4 and RC4', () => {
  it('MD4 gives the RFC 1320 test suite digests', () => {
    const suite: Array<[string, string]> = [
      ['', '31d6cfe0d16ae931b73c59d7e0c089c0'],
      ['a', 'bde52cb31de33e46245e05fbdbd6fb24'],
      ['abc', 'a448017aaf21d8525fc10ae87aa6729d'],
      ['message digest', 'd9130a8164549fe818874806e1c7014b'],
      ['abcdefghijklmnopqrstuvwxyz', 'd79e1c308aa5bbcdeea8ed63df412da9'],
      ['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', '043f8582f241db351ce627e153e7f0e4'],
      ['1234567890'.repeat(8), 'e33b4ddc9c38f2199c3e7b164fcc0536'],
    ];
    for (const [message, digest] of suite) expect(toHex(md4(ascii(message)))).toBe(digest);
  });

  it('RC4 gives the classic test vectors and keeps its state across calls', () => {
    expect(toHex(rc4k(ascii('Key'), ascii('Plaintext')))).toBe('bbf316e8d940af0ad3');
    expect(toHex(rc4k(ascii('Wiki'), ascii('pedia')))).toBe('1021bf0420');
    expect(toHex(rc4k(ascii('Secret'), ascii('Attack at dawn')))).toBe('45a01f645fc35b383552544b9bf5');
    const stream = new Rc4(ascii('Secret'));
    const saved = stream.clone();
    const pieces = [stream.process(ascii('Attack ')), stream.process(ascii('at dawn'))];
    expect(toHex(new Uint8Array([...pieces[0]!, ...pieces[1]!]))).toBe('45a01f645fc35b383552544b9bf5');
    stream.restore(saved);
    expect(toHex(stream.process(ascii('Attack')))).toBe('45a01f645fc3');
  });
});

describe('MS-NLMP 4.2.4 NTLMv2 vectors', () => {
  // 4.2.1 common values; 4.2.4.3 the AUTHENTICATE_MESSAGE (no MIC: the example predates it).
  const serverChallenge = hex('0123456789abcdef');
  const randomSessionKey = new Uint8Array(16).fill(0x55);
  const authenticate = hex(`
    4e544c4d53535000 03000000 18001800 6c000000 54005400 84000000 0c000c00 48000000 08000800 54000000 10001000 5c000000
    10001000 d8000000 358288e2 0501280a0000000f 44006f006d00610069006e00 5500730065007200 43004f004d0050005500540045005200
    86c35097ac9cec102554764a57cccc19aaaaaaaaaaaaaaaa 68cd0ab851e51c96aabc927bebef6a1c 0101000000000000 0000000000000000
    aaaaaaaaaaaaaaaa 00000000 02000c0044006f006d00610069006e00 01000c005300650072007600650072000000000000000000
    c5dad2544fc9799094ce1ce90bc9d03e`);

  it('computes NTOWFv1, NTOWFv2 and the session base key (4.2.2.1.2, 4.2.4.1.1, 4.2.4.1.2)', () => {
    expect(toHex(ntHash('Password'))).toBe('a4f49c406510bdcab6824ee7c30fd852');
    const responseKey = ntowfv2(ntHash('Password'), 'User', 'Domain');
    expect(toHex(responseKey)).toBe('0c868a403bfd7a93a3001ef22ef02e3f');
    expect(toHex(sessionBaseKey(responseKey, hex('68cd0ab851e51c96aabc927bebef6a1c')))).toBe(
      '8de40ccadbc14a82f15cb0ad0de95ca3',
    );
  });

  it('reads the example AUTHENTICATE message and checks its NTProofStr (4.2.4.2.2, 4.2.4.3)', () => {
    const message = parseAuthenticate(authenticate)!;
    expect(message).toMatchObject({ domain: 'Domain', user: 'User', workstation: 'COMPUTER', mic: undefined });
    expect(message.flags >>> 0).toBe(0xe2888235);
    const response = parseNtlmV2Response(message.ntResponse)!;
    expect(response.time).toBe(0n);
    expect(toHex(response.clientChallenge)).toBe('aaaaaaaaaaaaaaaa');
    expect(response.avPairs.map((p) => p.id)).toEqual([AvId.NbDomainName, AvId.NbComputerName]);
    const responseKey = ntowfv2(ntHash('Password'), message.user, message.domain);
    expect(toHex(ntProofStr(responseKey, serverChallenge, response.blob))).toBe('68cd0ab851e51c96aabc927bebef6a1c');
    expect(toHex(response.proof)).toBe('68cd0ab851e51c96aabc927bebef6a1c');
    // Key exchange (4.2.4.2.3): the encrypted random session key opens to the RandomSessionKey.
    const exported = exportedSessionKey(sessionBaseKey(responseKey, response.proof), message.encryptedRandomSessionKey);
    expect(exported).toEqual(randomSessionKey);
  });

  it('seals and signs as GSS_WrapEx with key exchange does (4.2.4.4)', () => {
    const keys = sessionKeys(randomSessionKey);
    expect(toHex(keys.clientSeal)).toBe('59f600973cc4960a25480a7c196e4c58');
    expect(toHex(keys.clientSign)).toBe('4788dc861b4782f35d43fd98fe1a2d39');
    const plaintext = utf16le('Plaintext');
    const client = new NtlmSessionSecurity(randomSessionKey, 'client', true);
    const wrapped = client.wrap(plaintext);
    expect(toHex(wrapped.subarray(16))).toBe('54e50165bf1936dc996020c1811b0f06fb5f');
    expect(toHex(wrapped.subarray(0, 16))).toBe('010000007fb38ec5c55d497600000000');
    // The acceptor's side opens it with the same keys.
    const server = new NtlmSessionSecurity(randomSessionKey, 'server', true);
    expect(server.unwrap(wrapped)).toEqual(plaintext);
  });

  it('upper-cases user names one character to one, as Windows does for NTOWFv2', () => {
    expect(upperInvariant('alice')).toBe('ALICE');
    expect(upperInvariant('straße')).toBe('STRAßE');
    expect(upperInvariant('élodie')).toBe('ÉLODIE');
  });
});

describe('the users file (BRIDGE_NTLM_USERS)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ntlm-users-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string, mode: number): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    chmodSync(path, mode);
    return path;
  };

  it('reads passwords and {NT} hashes, skips comments and blank lines, keeps colons in passwords', () => {
    const accounts = NtlmAccounts.load(
      file(
        'ok',
        `# accounts\n\nTESTDOM:alice:Secret1!\nTESTDOM:bob:{NT}${toHex(ntHash('Hunter2'))}\n:carol:a:b:c\r\n`,
        0o600,
      ),
    );
    expect(accounts.size).toBe(3);
    expect(accounts.find('bob', 'testdom')!.ntHash).toEqual(ntHash('Hunter2'));
    expect(accounts.find('carol', '')!.ntHash).toEqual(ntHash('a:b:c'));
  });

  it('matches users case-insensitively and domains as gss-ntlmssp does', () => {
    const accounts = NtlmAccounts.parse('ONE:alice:first\nTWO:alice:second\n:dave:third\n');
    expect(accounts.find('ALICE', 'two')!.ntHash).toEqual(ntHash('second'));
    expect(accounts.find('alice', '')!.ntHash).toEqual(ntHash('first')); // no domain: the first line of that user
    expect(accounts.find('alice', 'THREE')).toBeUndefined();
    expect(accounts.find('dave', 'ANY')).toBeUndefined(); // a line without domain serves clients without domain
    expect(accounts.find('dave', '')!.ntHash).toEqual(ntHash('third'));
  });

  it('refuses a file that group or others may access, a missing file and malformed lines', () => {
    for (const mode of [0o644, 0o640, 0o604, 0o620, 0o610, 0o601]) {
      expect(() => NtlmAccounts.load(file(`mode${mode.toString(8)}`, 'D:u:p\n', mode))).toThrow(ConfigError);
    }
    expect(() => NtlmAccounts.load(file('mode400', 'D:u:p\n', 0o400))).not.toThrow();
    expect(() => NtlmAccounts.load(join(dir, 'missing'))).toThrow(/cannot read/);
    expect(() => NtlmAccounts.parse('D:user-without-password\n')).toThrow(/DOMAIN:user:password/);
    expect(() => NtlmAccounts.parse('D::p\n')).toThrow(/empty user/);
    expect(() => NtlmAccounts.parse('D:u:\n')).toThrow(/empty password/);
    expect(() => NtlmAccounts.parse('D:u:{NT}1234\n')).toThrow(/32 hex digits/);
  });
});

describe('the logon throttle', () => {
  it('blocks a user after its failures, until the window ends; a success clears the user', () => {
    let now = 0;
    const throttle = new LogonThrottle({ perUser: 3, perAddress: 100, windowMs: 1000, now: () => now });
    for (let i = 0; i < 3; i++) throttle.failed('D\\alice', '192.0.2.1');
    expect(throttle.blocked('d\\ALICE', '192.0.2.9')).toBe(true);
    expect(throttle.blocked('D\\bob', '192.0.2.1')).toBe(false);
    now = 1000;
    expect(throttle.blocked('D\\alice', '192.0.2.1')).toBe(false);
    throttle.failed('D\\alice', '192.0.2.1');
    throttle.succeeded('D\\alice');
    throttle.failed('D\\alice', '192.0.2.1');
    throttle.failed('D\\alice', '192.0.2.1');
    expect(throttle.blocked('D\\alice', '192.0.2.1')).toBe(false);
  });

  it('blocks an address (IPv6 by /64) whatever the user, and stays bounded', () => {
    const throttle = new LogonThrottle({ perUser: 100, perAddress: 4, maxEntries: 50 });
    for (let i = 0; i < 4; i++) throttle.failed(`D\\user${i}`, '2001:db8:1:2::10');
    expect(throttle.blocked('D\\someone', '2001:db8:1:2:ffff::1')).toBe(true);
    expect(throttle.blocked('D\\someone', '2001:db8:1:3::10')).toBe(false);
    for (let i = 0; i < 4; i++) throttle.failed(undefined, '::ffff:192.0.2.7');
    expect(throttle.blocked(undefined, '192.0.2.7')).toBe(true);
    for (let i = 0; i < 500; i++) throttle.failed(`D\\spray${i}`, `198.51.100.${i % 200}`);
    expect(throttle.size).toBeLessThanOrEqual(50);
    expect(addressKey('2001:DB8:0:0:1::1')).toBe('a:2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('a:0:0:0:0::/64');
  });
});

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
