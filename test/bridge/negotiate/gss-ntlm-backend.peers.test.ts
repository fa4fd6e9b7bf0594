/**
 * The gss-ntlmssp backend (BRIDGE_NTLM_BACKEND=gssapi, see gss-ntlm.peers.test.ts) driven directly with
 * support/negotiate/ntlm-client.ts, for what a real initiator does not send (a bad MIC, a foreign SPN, garbage), and
 * its configuration: the users file and BRIDGE_NTLM_BACKEND.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
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
} from '../../../tcp-bridge/src/negotiate/security-context.ts';
import { securityBackends } from '../../../tcp-bridge/src/server.ts';
import { CLIENT_FLAGS, TestNtlmClient } from '../../support/negotiate/ntlm-client.ts';
import { toHex } from '../../support/negotiate/negotiate.ts';
import { USERS, useGssNtlmEcho } from './gss-ntlm-echo.ts';
import { needPeers, PEERS } from '../../support/peers.ts';

const noInitiators = needPeers('negotiate gss-ntlmssp', PEERS.gssInitiators);

describe.skipIf(noInitiators)('NegotiateStream with NTLM through gss-ntlmssp (GSSAPI backend)', () => {
  const { dir, users, backend } = useGssNtlmEcho();

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
      // A non-zero LmChallengeResponse (test/support/negotiate/ntlm-client.ts writes it first, at 88): no LMv2
      // fallback.
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
