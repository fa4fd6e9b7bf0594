/**
 * NegotiateStream with Kerberos against a real MIT KDC (see kerberos.peers.test.ts): the GSSAPI backend driven
 * directly, and how it is configured (KRB5_KTNAME, keytab checks, BRIDGE_DNS_IDENTITY).
 */
import { chmodSync, copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config.ts';
import { readBridgeConfig } from '../../../tcp-bridge/src/config.ts';
import {
  checkKeytab,
  GssapiBackend,
  gssapiBackendFor,
  GssFlag,
} from '../../../tcp-bridge/src/negotiate/gssapi/index.ts';
import { IntegrityError, NegotiateError, OID } from '../../../tcp-bridge/src/negotiate/security-context.ts';
import { describeShared } from '../../support/corpus.ts';
import { ntlmClientAccount, runNnsClient, startNegotiateEcho } from '../../support/negotiate/negotiate-echo.ts';
import { ALICE, useKerberosEcho } from './kerberos-echo.ts';
import { needPeers, PEERS } from '../../support/peers.ts';

const missing = needPeers('negotiate kerberos', PEERS.krb5);
const noInitiators = needPeers('negotiate kerberos with gss-ntlmssp', PEERS.gssInitiators);

describeShared('NegotiateStream with Kerberos (MIT KDC, GSSAPI backend through koffi)', () => {
  describe.skipIf(missing)('against a KDC of realm TEST.LOCAL', () => {
    const kdc = useKerberosEcho();
    const { server, last, closed, client } = kdc;

    describe('the backend', () => {
      const info = { remoteAddress: '127.0.0.1', protectionLevel: 'EncryptAndSign' as const };
      const tokens = async (count: number): Promise<Uint8Array[]> => {
        const result = await runNnsClient(0, 'krb5-tokens', ['--krb5', '--count', String(count)], kdc.realm.clientEnv);
        expect(result.result).toBe('ok');
        return (result.tokens as string[]).map((hex) => new Uint8Array(Buffer.from(hex, 'hex')));
      };

      it('accepts many handshakes at once off the event loop, and releases every context', async () => {
        const backend = new GssapiBackend({
          keytab: kdc.realm.keytab,
          dnsIdentity: 'localhost',
          replayCache: `file2:${join(kdc.realm.dir, 'rcache-parallel')}`,
        });
        const contexts = (await tokens(12)).map((token) => ({
          context: backend.createContext(OID.kerberos, info),
          token,
        }));
        expect(backend.openContexts).toBe(12);
        const steps = contexts.map(({ context, token }) => context.step(token));
        // Not computed on this thread: a synchronous step would have settled before this microtask turn ends.
        let settled = 0;
        steps.forEach((step) => void step.then(() => settled++));
        await Promise.resolve();
        expect(settled).toBe(0);
        const results = await Promise.all(steps);
        for (const [i, result] of results.entries()) {
          expect(result.done).toBe(true);
          expect(result.token?.[0]).toBe(0x60); // the AP-REP, RFC 2743 framed
          expect(contexts[i]!.context.peerName).toBe(ALICE);
          expect(contexts[i]!.context.contextFlags & GssFlag.Mutual).toBe(GssFlag.Mutual);
          expect(contexts[i]!.context.wrapOverhead).toBeGreaterThanOrEqual(60);
        }
        for (const { context } of contexts) context.dispose();
        expect(backend.openContexts).toBe(0);
        backend.close();
        expect(() => backend.createContext(OID.kerberos, info)).toThrow(NegotiateError);
      });

      it('a context disposed while gss_accept_sec_context runs is released when the call returns', async () => {
        const backend = new GssapiBackend({
          keytab: kdc.realm.keytab,
          dnsIdentity: 'localhost',
          replayCache: `file2:${join(kdc.realm.dir, 'rcache-dispose')}`,
        });
        const [token] = await tokens(1);
        const context = backend.createContext(OID.kerberos, info);
        const step = context.step(token!);
        context.dispose();
        expect(backend.openContexts).toBe(1); // the call still holds it
        await expect(step).rejects.toMatchObject({ reason: 'gssapi.disposed' });
        expect(backend.openContexts).toBe(0);
        expect(() => context.wrap(new Uint8Array([1]))).toThrow(IntegrityError);
        backend.close();
      });

      it('refuses a second token once established; a broken context stays broken: after a bad frame every call throws', async () => {
        const backend = new GssapiBackend({
          keytab: kdc.realm.keytab,
          dnsIdentity: 'localhost',
          replayCache: `file2:${join(kdc.realm.dir, 'rcache-broken')}`,
        });
        const [token] = await tokens(1);
        const context = backend.createContext(OID.kerberos, info);
        await context.step(token!);
        expect(context.established).toBe(true);
        await expect(context.step(token!)).rejects.toMatchObject({ reason: 'gssapi.state' });
        expect(() => context.unwrap(new Uint8Array(64).fill(5))).toThrow(IntegrityError);
        expect(() => context.wrap(new Uint8Array([1]))).toThrow(/released|not established/);
        expect(backend.openContexts).toBe(0);
        backend.close();
      });

      it('refuses garbage as a first token, and releases the context', async () => {
        const backend = new GssapiBackend({
          keytab: kdc.realm.keytab,
          dnsIdentity: 'localhost',
          replayCache: `file2:${join(kdc.realm.dir, 'rcache-garbage')}`,
        });
        const garbage = backend.createContext(OID.kerberos, info);
        await expect(garbage.step(new Uint8Array([0x60, 0x03, 0x06, 0x01, 0x00]))).rejects.toBeInstanceOf(
          NegotiateError,
        );
        expect(backend.openContexts).toBe(0);
        backend.close();
      });
    });

    describe('configuration', () => {
      it('refuses a keytab readable by group or others, a missing one, and one that is not a file keytab', () => {
        const path = join(kdc.scratch, 'open.keytab');
        copyFileSync(kdc.realm.keytab.slice('FILE:'.length), path);
        chmodSync(path, 0o640);
        expect(() => new GssapiBackend({ keytab: `FILE:${path}`, dnsIdentity: 'localhost' })).toThrow(
          /mode 640.*chmod 600/,
        );
        chmodSync(path, 0o604);
        expect(() => checkKeytab(path)).toThrow(ConfigError);
        chmodSync(path, 0o600);
        expect(checkKeytab(`WRFILE:${path}`)).toBe(path);
        expect(() => checkKeytab(join(kdc.scratch, 'none.keytab'))).toThrow(/cannot read .*ENOENT/);
        expect(() => checkKeytab('MEMORY:service')).toThrow(/not a file keytab/);
        expect(() => checkKeytab(kdc.scratch)).toThrow(/cannot read/);
      });

      it('refuses to start without a key for host/<BRIDGE_DNS_IDENTITY>', () => {
        expect(() => new GssapiBackend({ keytab: kdc.realm.keytab, dnsIdentity: 'other.test.local' })).toThrow(
          /no acceptor credential for host@other.test.local/,
        );
      });

      it('refuses to start with the replay cache switched off', () => {
        expect(
          () => new GssapiBackend({ keytab: kdc.realm.keytab, dnsIdentity: 'localhost', replayCache: 'none:' }),
        ).toThrow(/replay cache/);
      });

      it.skipIf(noInitiators)(
        'with BRIDGE_NTLM_BACKEND=gssapi one backend offers Kerberos and NTLM through gss-ntlmssp',
        async () => {
          const users = join(kdc.scratch, 'ntlm-users');
          writeFileSync(users, 'TESTDOM:alice:Secret123!\n', { mode: 0o600 });
          const env = { KRB5_KTNAME: kdc.realm.keytab, BRIDGE_NTLM_BACKEND: 'gssapi', BRIDGE_NTLM_USERS: users };
          const backend = gssapiBackendFor(readBridgeConfig(env), {
            replayCache: `file2:${join(kdc.realm.dir, 'rcache-both')}`,
          })!;
          kdc.backends.push(backend);
          expect(backend.mechanisms).toEqual([OID.kerberosMicrosoft, OID.kerberos, OID.ntlm]);
          kdc.servers.set('both', await startNegotiateEcho({ backends: [backend], protectionLevel: 'EncryptAndSign' }));
          expect(await client('both', 'echo', ['--message', '01'])).toMatchObject({ result: 'ok', replies: ['01'] });
          await closed('both');
          expect(last('both').peer).toMatchObject({ name: ALICE, mechanismName: 'Kerberos' });
          expect(
            await runNnsClient(
              server('both').port,
              'echo',
              ['--message', '02'],
              ntlmClientAccount(kdc.scratch, 'TESTDOM:alice:Secret123!'),
            ),
          ).toMatchObject({ result: 'ok', replies: ['02'] });
          await closed('both');
          expect(last('both').peer).toMatchObject({ name: 'TESTDOM\\alice', mechanismName: 'NTLM' });
        },
      );

      it('is made from KRB5_KTNAME and BRIDGE_DNS_IDENTITY', () => {
        expect(gssapiBackendFor(readBridgeConfig({}))).toBeUndefined();
        const backend = gssapiBackendFor(
          readBridgeConfig({ KRB5_KTNAME: kdc.realm.keytab, BRIDGE_DNS_IDENTITY: 'localhost' }),
        )!;
        expect(backend.acceptorName).toBe('host@localhost');
        expect(backend.mechanisms).toEqual([OID.kerberosMicrosoft, OID.kerberos]);
        backend.close();
      });
    });
  });
});
