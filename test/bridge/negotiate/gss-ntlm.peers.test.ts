/**
 * NegotiateStream with NTLM through gss-ntlmssp (BRIDGE_NTLM_BACKEND=gssapi: GssapiBackend given the users file,
 * tcp-bridge/src/negotiate/gssapi/) against the same real initiators as e2e.peers.test.ts: MIT GSSAPI's
 * SPNEGO with gss-ntlmssp and impacket's NTLM client, through support/nns-client.py, against stream.ts + the GSSAPI
 * backend in support/negotiate-echo.ts, which echoes what it unwraps. The backend itself is driven directly with
 * support/ntlm-client.ts for what a real initiator does not send (a bad MIC, a foreign SPN, garbage).
 *
 * Needs /usr/bin/python3 with gssapi, gss-ntlmssp (which the acceptor loads too) and impacket: Debian packages
 * python3-gssapi gss-ntlmssp python3-impacket. Without them the suites are skipped, and say so.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config.ts';
import { readBridgeConfig } from '../../../tcp-bridge/src/config.ts';
import {
  GssapiBackend,
  type GssapiNtlmContext,
  gssapiBackendFor,
  GssFlag,
  loadGssNtlmUsers,
} from '../../../tcp-bridge/src/negotiate/gssapi/index.ts';
import { LogonThrottle, ntHash, NtlmFlag } from '../../../tcp-bridge/src/negotiate/ntlm/index.ts';
import {
  IntegrityError,
  NegotiateError,
  OID,
  type AcceptorInfo,
  type ProtectionLevel,
} from '../../../tcp-bridge/src/negotiate/security-context.ts';
import { securityBackends } from '../../../tcp-bridge/src/server.ts';
import {
  expectLogonDenied,
  ntlmClientAccount,
  runNnsClient,
  startNegotiateEcho,
  type ClientResult,
  type EchoServer,
} from '../../support/negotiate-echo.ts';
import { CLIENT_FLAGS, TestNtlmClient } from '../../support/ntlm-client.ts';
import { LOGON_DENIED_PAYLOAD, pattern, toHex } from '../../support/negotiate.ts';
import { needPeers, PEERS } from '../../support/peers.ts';

const noInitiators = needPeers('negotiate gss-ntlmssp', PEERS.gssInitiators);
const noImpacket = needPeers('negotiate gss-ntlmssp impacket', PEERS.impacket);

const USERS = 'TESTDOM:alice:Secret123!\nTESTDOM:bob:Hunter2!\n:carol:Carol789!\n';

describe.skipIf(noInitiators)('NegotiateStream with NTLM through gss-ntlmssp (GSSAPI backend)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nns-gss-ntlm-'));
  const users = join(dir, 'users');
  const servers = new Map<ProtectionLevel, EchoServer>();
  const backends: GssapiBackend[] = [];
  const as = (line: string): Record<string, string> => ntlmClientAccount(dir, line);
  const alice = (): Record<string, string> => as('TESTDOM:alice:Secret123!');
  const server = (level: ProtectionLevel): EchoServer => servers.get(level)!;
  const last = (level: ProtectionLevel) => server(level).connections[server(level).connections.length - 1]!;
  const closed = async (level: ProtectionLevel): Promise<void> =>
    server(level).closedCount(server(level).connections.length);
  const client = (
    level: ProtectionLevel,
    mode: string,
    args: string[],
    env: Record<string, string> = alice(),
  ): Promise<ClientResult> => runNnsClient(server(level).port, mode, args, env);

  const backend = (options: Partial<ConstructorParameters<typeof GssapiBackend>[0]> = {}): GssapiBackend => {
    // Generous limits: these suites make many attempts from 127.0.0.1 on purpose; throttling has its own test.
    const made = new GssapiBackend({
      ntlmUsers: users,
      dnsIdentity: 'localhost',
      throttle: new LogonThrottle({ perUser: 100, perAddress: 100 }),
      ...options,
    });
    backends.push(made);
    return made;
  };

  /** After a refusal the same server must still serve the next client. */
  async function stillServes(level: ProtectionLevel): Promise<void> {
    const result = await client(level, 'echo', ['--message', '6f6b']);
    expect(result).toMatchObject({ result: 'ok', replies: ['6f6b'] });
    await closed(level);
    expect(last(level).peer?.name).toBe('TESTDOM\\alice');
    expect(last(level).failure).toBeUndefined();
  }

  beforeAll(async () => {
    writeFileSync(users, USERS);
    chmodSync(users, 0o600);
    for (const level of ['EncryptAndSign', 'Sign'] as const)
      servers.set(level, await startNegotiateEcho({ backends: [backend()], protectionLevel: level }));
  });

  afterAll(async () => {
    for (const s of servers.values()) await s.close();
    for (const b of backends) b.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('sessions', () => {
    it('EncryptAndSign: a sealed session echoes small and large messages (frames split at 63 KiB), as TESTDOM\\alice', async () => {
      const result = await client('EncryptAndSign', 'echo', ['--message', '68656c6c6f', '--pattern', '100000']);
      expect(result).toMatchObject({ result: 'ok', encrypted_flag: true });
      expect(result.replies).toEqual(['68656c6c6f', toHex(pattern(100_000))]);
      await closed('EncryptAndSign');
      const connection = last('EncryptAndSign');
      expect(connection.peer).toEqual({
        name: 'TESTDOM\\alice',
        sids: [],
        mechanism: OID.ntlm,
        mechanismName: 'NTLM',
        spnego: true,
        protectionLevel: 'EncryptAndSign',
      });
      expect(connection.received.map((c) => c.length)).toEqual([5, 63 * 1024, 100_000 - 63 * 1024]);
      expect(toHex(Buffer.concat(connection.received))).toBe(`68656c6c6f${toHex(pattern(100_000))}`);
      expect(connection.failure).toBeUndefined();
    });

    it("names the peer by the users file's line: the library's trailing NUL dropped, the user's case the file's", async () => {
      expect(await client('EncryptAndSign', 'echo', ['--message', '00'], as('TESTDOM:ALICE:Secret123!'))).toMatchObject(
        { result: 'ok', replies: ['00'] },
      );
      await closed('EncryptAndSign');
      expect(last('EncryptAndSign').peer?.name).toBe('TESTDOM\\alice');
      // A line with an empty domain: the CHALLENGE's NetBIOS computer name, as the TypeScript acceptor names it.
      expect(await client('EncryptAndSign', 'echo', ['--message', '01'], as(':carol:Carol789!'))).toMatchObject({
        result: 'ok',
        replies: ['01'],
      });
      await closed('EncryptAndSign');
      expect(last('EncryptAndSign').peer?.name).toBe('LOCALHOST\\carol');
    });

    it('Sign: serves a signing-only client in both frame forms (sealed as gss-ntlmssp sends, MS-NLMP signature ‖ plaintext as Windows SSPI does), and a sealing one', async () => {
      for (const args of [['--sign-only'], ['--sign-only', '--plain-sign']]) {
        const result = await client('Sign', 'echo', [...args, '--message', '7369676e', '--pattern', '70000']);
        expect(result).toMatchObject({
          result: 'ok',
          encrypted_flag: false,
          replies: ['7369676e', toHex(pattern(70_000))],
        });
        await closed('Sign');
        expect(last('Sign').peer).toMatchObject({ name: 'TESTDOM\\alice', protectionLevel: 'Sign' });
        expect(last('Sign').failure).toBeUndefined();
      }
      const sealed = await client('Sign', 'echo', ['--message', '7365616c']);
      expect(sealed).toMatchObject({ result: 'ok', encrypted_flag: true, replies: ['7365616c'] });
      await closed('Sign');
      expect(last('Sign').peer?.protectionLevel).toBe('EncryptAndSign');
    });
  });

  describe('refusals, each followed by a client served', () => {
    const refusals: Array<{
      name: string;
      level: ProtectionLevel;
      args: string[];
      env: () => Record<string, string>;
      reason: string;
    }> = [
      {
        name: 'a signing-only client under EncryptAndSign (the gate, at the NEGOTIATE)',
        level: 'EncryptAndSign',
        args: ['--sign-only'],
        env: alice,
        reason: 'ntlm.weak-flags',
      },
      {
        name: 'a wrong password (the library)',
        level: 'EncryptAndSign',
        args: [],
        env: () => as('TESTDOM:alice:Secret123?'),
        reason: 'gssapi.bad-proof',
      },
      {
        name: 'an unknown user (the library)',
        level: 'EncryptAndSign',
        args: [],
        env: () => as('TESTDOM:mallory:Secret123!'),
        reason: 'gssapi.bad-proof',
      },
      {
        name: 'a user of another domain (the library)',
        level: 'Sign',
        args: [],
        env: () => as('OTHERDOM:alice:Secret123!'),
        reason: 'gssapi.bad-proof',
      },
      // NTOWFv2 hashes the domain as typed; gss-ntlmssp tries the file's spelling and none, not the client's.
      {
        name: "the right password with the domain in another case (gss-ntlmssp's NTOWFv2)",
        level: 'Sign',
        args: [],
        env: () => as('testdom:alice:Secret123!'),
        reason: 'gssapi.bad-proof',
      },
    ];
    for (const refusal of refusals) {
      it(`refuses ${refusal.name} with logon denied`, async () => {
        await expectLogonDenied(
          server(refusal.level),
          await client(refusal.level, 'echo', [...refusal.args, '--message', '00'], refusal.env()),
          refusal.reason,
        );
        await stillServes(refusal.level);
      });
    }

    it("refuses a replayed NEGOTIATE + AUTHENTICATE (recorded from a good session): the gate's timestamp check", async () => {
      const record = join(dir, 'recorded.json');
      expect(await client('EncryptAndSign', 'echo', ['--record', record, '--message', '01'])).toMatchObject({
        result: 'ok',
      });
      const replay = await client('EncryptAndSign', 'replay', ['--replay', record], {});
      expect(replay).toEqual({ result: 'refused', status: LOGON_DENIED_PAYLOAD });
      await closed('EncryptAndSign');
      expect(last('EncryptAndSign').failure).toBe('ntlm.timestamp');
      await stillServes('EncryptAndSign');
    });

    it('drops the connection on a tampered sealed byte (the library)', async () => {
      const result = await client('EncryptAndSign', 'tamper', []);
      expect(result).toEqual({ result: 'closed', first: '6669727374' });
      await closed('EncryptAndSign');
      expect(last('EncryptAndSign')).toMatchObject({
        failure: 'BadSignature',
        received: [new TextEncoder().encode('first')],
      });
      await stillServes('EncryptAndSign');
    });

    it('drops the connection on frames out of order (the sequence number checked before the library)', async () => {
      const result = await client('EncryptAndSign', 'reorder', []);
      expect(result).toEqual({ result: 'closed' });
      await closed('EncryptAndSign');
      expect(last('EncryptAndSign')).toMatchObject({ failure: 'OutOfSequence', received: [] });
      await stillServes('EncryptAndSign');
    });

    it('drops a tampered signing-only frame under Sign, in either form', async () => {
      for (const args of [['--sign-only'], ['--sign-only', '--plain-sign']]) {
        const result = await client('Sign', 'tamper', args);
        expect(result).toMatchObject({ result: 'closed', first: '6669727374' });
        await closed('Sign');
        expect(last('Sign').failure).toBe('BadSignature');
        await stillServes('Sign');
      }
    });

    describe.skipIf(noImpacket)('impacket', () => {
      const cases: Array<{ name: string; mode: string; args: string[]; reason: string }> = [
        {
          name: 'impacket as it is: its 32-byte NEGOTIATE, which gss-ntlmssp 1.2 cannot read',
          mode: 'impacket',
          args: [],
          reason: 'ntlm.negotiate-no-version',
        },
        // gss-ntlmssp checks a MIC only when MsvAvFlags announces one: the gate requires it.
        {
          name: 'impacket NTLMv2 with a Version field, which sends no MIC',
          mode: 'impacket',
          args: ['--version-field'],
          reason: 'ntlm.mic-missing',
        },
        // gss-ntlmssp refuses it too at its default LM_COMPAT_LEVEL 3, not as a domain member.
        { name: 'impacket NTLMv1', mode: 'impacket-v1', args: ['--version-field'], reason: 'ntlm.v1' },
      ];
      for (const { name, mode, args, reason } of cases) {
        it(`refuses ${name}`, async () => {
          const result = await client(
            'EncryptAndSign',
            mode,
            [...args, '--user', 'TESTDOM\\alice', '--password', 'Secret123!'],
            {},
          );
          expect(result).toEqual({ result: 'refused', status: LOGON_DENIED_PAYLOAD });
          await closed('EncryptAndSign');
          expect(last('EncryptAndSign').failure).toBe(reason);
          await stillServes('EncryptAndSign');
        });
      }
    });
  });

  describe('the backend, driven directly', () => {
    const info: AcceptorInfo = { remoteAddress: '127.0.0.1', protectionLevel: 'EncryptAndSign' };

    /** NEGOTIATE → CHALLENGE → AUTHENTICATE through a fresh context; the AUTHENTICATE step's promise. */
    async function logon(
      b: GssapiBackend,
      user = 'alice',
      password = 'Secret123!',
      tweaks: Parameters<TestNtlmClient['authenticate']>[1] = {},
    ) {
      const initiator = new TestNtlmClient(user, 'TESTDOM', password);
      const context = b.createContext(OID.ntlm, info) as GssapiNtlmContext;
      const challenge = await context.step(initiator.negotiate());
      return {
        initiator,
        context,
        challenge: challenge.token!,
        done: context.step(initiator.authenticate(challenge.token!, tweaks)),
      };
    }

    it('accepts many handshakes at once off the event loop, exchanges frames with a TypeScript NTLM peer, and releases every context', async () => {
      const b = backend();
      const logons = await Promise.all(Array.from({ length: 12 }, () => logon(b)));
      let settled = 0;
      logons.forEach(({ done }) => void done.then(() => settled++));
      await Promise.resolve();
      expect(settled).toBe(0); // not computed on this thread
      for (const { initiator, context, done } of logons) {
        expect(await done).toEqual({ done: true });
        expect(context.peerName).toBe('TESTDOM\\alice');
        expect(context.contextFlags & (GssFlag.Conf | GssFlag.Integ)).toBe(GssFlag.Conf | GssFlag.Integ);
        // Raw NTLM (no SPNEGO): both directions start at sequence number 0.
        const sealed = initiator.security!.wrap(new TextEncoder().encode('to the bridge'));
        expect(new TextDecoder().decode(context.unwrap(sealed))).toBe('to the bridge');
        expect(
          new TextDecoder().decode(initiator.security!.unwrap(context.wrap(new TextEncoder().encode('back')))),
        ).toBe('back');
      }
      expect(b.openContexts).toBe(12);
      for (const { context } of logons) context.dispose();
      expect(b.openContexts).toBe(0);
      b.close();
      expect(() => b.createContext(OID.ntlm, info)).toThrow(NegotiateError);
    });

    it('mechListMICs with sequence number 0 and the RC4 handles reset, so data frames start at 1', async () => {
      const b = backend();
      const { initiator, context, done } = await logon(b);
      await done;
      const mechTypes = Uint8Array.of(
        0x30,
        0x0c,
        0x06,
        0x0a,
        0x2b,
        0x06,
        0x01,
        0x04,
        0x01,
        0x82,
        0x37,
        0x02,
        0x02,
        0x0a,
      );
      context.verifyMic(mechTypes, initiator.security!.getMic(mechTypes, { mechListMic: true }), { mechListMic: true });
      initiator.security!.verifyMic(mechTypes, context.getMic(mechTypes, { mechListMic: true }), { mechListMic: true });
      const frame = initiator.security!.wrap(Uint8Array.of(1, 2, 3));
      expect(new DataView(frame.buffer, frame.byteOffset + 12, 4).getUint32(0, true)).toBe(1);
      expect([...context.unwrap(frame)]).toEqual([1, 2, 3]);
      expect([...initiator.security!.unwrap(context.wrap(Uint8Array.of(4)))]).toEqual([4]);
      context.dispose();
      b.close();
    });

    it('the library checks a MIC that is announced; the gate refuses one that is not, a foreign SPN, channel bindings, NTLMv1, weak flags, an LMv2 response', async () => {
      const b = backend();
      const cases: Array<[Parameters<TestNtlmClient['authenticate']>[1], string]> = [
        [{ badMic: true }, 'gssapi.bad-mic'],
        [{ noMic: true }, 'ntlm.mic-missing'],
        [{ targetName: 'host/elsewhere.example' }, 'ntlm.target-name'],
        [{ channelBindings: new Uint8Array(16).fill(7) }, 'ntlm.channel-bindings'],
        [{ v1: true }, 'ntlm.v1'],
        [{ dropTimestamp: true }, 'ntlm.timestamp'],
        [{ flags: CLIENT_FLAGS & ~NtlmFlag.KeyExchange }, 'ntlm.weak-flags'],
      ];
      for (const [tweaks, reason] of cases) {
        const { done } = await logon(b, 'alice', 'Secret123!', tweaks);
        await expect(done).rejects.toMatchObject({ reason });
      }
      // A non-zero LmChallengeResponse (test/support/ntlm-client.ts writes it first, at 88): no LMv2 fallback.
      const initiator = new TestNtlmClient('alice', 'TESTDOM', 'Secret123!');
      const withLm = b.createContext(OID.ntlm, info);
      const authenticate = initiator.authenticate((await withLm.step(initiator.negotiate())).token!);
      authenticate[88] = 1;
      await expect(withLm.step(authenticate)).rejects.toMatchObject({ reason: 'ntlm.lm-response' });
      const named = await logon(b, 'alice', 'Secret123!', { targetName: 'HOST/LOCALHOST' });
      expect(await named.done).toEqual({ done: true });
      named.context.dispose();
      expect(b.openContexts).toBe(0);
      b.close();
    });

    it('refuses a 32-byte NEGOTIATE, an expired CHALLENGE, and throttles per user before the library is asked', async () => {
      let now = 1_000_000;
      const b = backend({
        now: () => now,
        throttle: new LogonThrottle({ perUser: 2, perAddress: 100, now: () => now }),
      });
      const short = b.createContext(OID.ntlm, info);
      await expect(
        short.step(new TestNtlmClient('alice', 'TESTDOM', 'x').negotiate().subarray(0, 32)),
      ).rejects.toMatchObject({ reason: 'ntlm.negotiate-no-version' });
      const late = new TestNtlmClient('alice', 'TESTDOM', 'Secret123!');
      const context = b.createContext(OID.ntlm, info);
      const challenge = await context.step(late.negotiate());
      now += 61_000;
      await expect(context.step(late.authenticate(challenge.token!))).rejects.toMatchObject({
        reason: 'ntlm.challenge-expired',
      });
      // One failure counted already (the expired one): one wrong password more, then even the right one is throttled.
      await expect((await logon(b, 'alice', 'wrong')).done).rejects.toMatchObject({ reason: 'gssapi.bad-proof' });
      await expect((await logon(b, 'alice')).done).rejects.toMatchObject({ reason: 'ntlm.throttled' });
      const bob = await logon(b, 'bob', 'Hunter2!');
      expect(await bob.done).toEqual({ done: true });
      bob.context.dispose();
      expect(b.openContexts).toBe(0);
      b.close();
    });

    it('survives mutated NEGOTIATE and AUTHENTICATE messages (the gate or the library refuses each), and a context disposed mid-step', async () => {
      // gss-ntlmssp 1.2.0 (and its master) copies 16 bytes from the EncryptedRandomSessionKey field whatever its length
      // once the proof is right: an empty field crashed the process here until the gate required 16 bytes.
      const b = backend({ throttle: new LogonThrottle({ perUser: 10_000, perAddress: 10_000 }) });
      let seed = 12345;
      const random = (n: number): number => {
        seed = (seed + 0x6d2b79f5) | 0;
        let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) % n;
      };
      const outcomes = new Map<string, number>();
      const count = (reason: string): void => void outcomes.set(reason, (outcomes.get(reason) ?? 0) + 1);
      for (let i = 0; i < 400; i++) {
        const initiator = new TestNtlmClient('alice', 'TESTDOM', 'Secret123!');
        const negotiate = initiator.negotiate();
        if (i % 5 === 0) {
          const mutated = negotiate.slice();
          mutated[random(mutated.length)] = random(256);
          const first = b.createContext(OID.ntlm, info);
          await first.step(mutated).then(
            (r) => count(r.done ? 'accepted' : 'challenged'),
            (e: NegotiateError) => count(e.reason),
          );
          first.dispose();
        }
        const context = b.createContext(OID.ntlm, info);
        const challenge = await context.step(negotiate);
        const message = initiator.authenticate(challenge.token!);
        const mutated = i % 8 === 0 ? message.slice(0, random(message.length)) : message.slice();
        if (i % 8 === 4)
          mutated[52] = 0; // the EncryptedRandomSessionKey's length
        else if (i % 4 !== 0) {
          for (let k = 0; k <= random(4); k++) {
            const at = random(mutated.length);
            mutated[at] = mutated[at]! ^ (1 + random(255));
          }
        }
        await context.step(mutated).then(
          () => count('accepted'),
          (error: unknown) => {
            expect(error).toBeInstanceOf(NegotiateError);
            count((error as NegotiateError).reason);
          },
        );
        context.dispose();
      }
      expect(outcomes.get('accepted')).toBeUndefined();
      expect(outcomes.get('gssapi.bad-proof')).toBeGreaterThan(0); // some reached the library
      expect(outcomes.get('ntlm.malformed')).toBeGreaterThan(0);
      const initiator = new TestNtlmClient('alice', 'TESTDOM', 'Secret123!');
      const context = b.createContext(OID.ntlm, info);
      const challenge = await context.step(initiator.negotiate());
      const step = context.step(initiator.authenticate(challenge.token!));
      context.dispose();
      await expect(step).rejects.toMatchObject({ reason: 'gssapi.disposed' });
      expect(() => context.wrap(Uint8Array.of(1))).toThrow(IntegrityError);
      expect(b.openContexts).toBe(0);
      b.close();
    });
  });

  describe('configuration', () => {
    it('offers NTLM alone without a keytab, and is made from BRIDGE_NTLM_BACKEND=gssapi with BRIDGE_NTLM_USERS', () => {
      expect(gssapiBackendFor(readBridgeConfig({ BRIDGE_NTLM_USERS: users }))).toBeUndefined(); // typescript by default
      const made = gssapiBackendFor(readBridgeConfig({ BRIDGE_NTLM_BACKEND: 'gssapi', BRIDGE_NTLM_USERS: users }))!;
      expect(made.mechanisms).toEqual([OID.ntlm]);
      expect(made.acceptorName).toBe('host@localhost');
      made.close();
    });

    it('refuses a users file readable by others, and lines gss-ntlmssp would read otherwise', () => {
      const file = (name: string, text: string, mode = 0o600): string => {
        const path = join(dir, name);
        writeFileSync(path, text);
        chmodSync(path, mode);
        return path;
      };
      expect(() => new GssapiBackend({ ntlmUsers: file('open', USERS, 0o640), dnsIdentity: 'localhost' })).toThrow(
        /mode 640.*chmod 600/,
      );
      expect(() => loadGssNtlmUsers(file('nt', `TESTDOM:bob:{NT}${toHex(ntHash('Hunter2!'))}\n`))).toThrow(
        /line 1: gss-ntlmssp reads \{NT\} hashes as passwords/,
      );
      expect(() => loadGssNtlmUsers(file('colon', 'TESTDOM:alice:pass:word\n'))).toThrow(ConfigError);
      expect(() => loadGssNtlmUsers(file('long', `TESTDOM:alice:${'x'.repeat(1000)}\n`))).toThrow(/1000 bytes/);
      expect(() => loadGssNtlmUsers(file('bad', 'no colons here\n'))).toThrow(/expected DOMAIN:user:password/);
      expect(loadGssNtlmUsers(file('good', '# accounts\nTESTDOM:alice:Secret123!\n')).size).toBe(1);
    });

    it('BRIDGE_NTLM_BACKEND: typescript or gssapi, anything else a ConfigError; gssapi wants BRIDGE_NTLM_USERS', () => {
      expect(readBridgeConfig({}).ntlmBackend).toBe('typescript');
      expect(readBridgeConfig({ BRIDGE_NTLM_BACKEND: 'gssapi' }).ntlmBackend).toBe('gssapi');
      expect(() => readBridgeConfig({ BRIDGE_NTLM_BACKEND: 'GSSAPI' })).toThrow(
        /BRIDGE_NTLM_BACKEND must be typescript .* or gssapi .*, not "GSSAPI"/,
      );
      expect(() => securityBackends(readBridgeConfig({ BRIDGE_NTLM_BACKEND: 'gssapi' }))).toThrow(
        /BRIDGE_NTLM_BACKEND=gssapi .* set BRIDGE_NTLM_USERS/,
      );
      const made = securityBackends(readBridgeConfig({ BRIDGE_NTLM_BACKEND: 'gssapi', BRIDGE_NTLM_USERS: users }))!;
      expect(made.map((b) => [b.name, b.mechanisms])).toEqual([['gssapi', [OID.ntlm]]]);
      for (const b of made) (b as GssapiBackend).close();
    });
  });
});
