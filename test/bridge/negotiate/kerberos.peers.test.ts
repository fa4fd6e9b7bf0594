/**
 * NegotiateStream with Kerberos through the system GSSAPI (tcp-bridge/src/negotiate/gssapi/) against a real MIT
 * KDC started in a temp folder by ../shared/tools/krb5-test-realm.sh (support/krb5-realm.ts): alice's ticket drives
 * support/nns-client.py (python3-gssapi: MIT's SPNEGO, or SPNEGO built by the script the way Windows lists its OIDs, or
 * raw krb5) against stream.ts + the GSSAPI backend in support/negotiate-echo.ts, which echoes what it unwraps.
 *
 * Needs krb5-kdc, krb5-admin-server, krb5-user, python3-gssapi and libgssapi-krb5-2; without them (or without
 * ../shared) the suite is skipped and says what is missing.
 */
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config.ts';
import { readBridgeConfig } from '../../../tcp-bridge/src/config.ts';
import {
  checkKeytab,
  GssapiBackend,
  gssapiBackendFor,
  GssFlag,
  kerberosPeerName,
} from '../../../tcp-bridge/src/negotiate/gssapi/index.ts';
import {
  IntegrityError,
  NegotiateError,
  OID,
  type ProtectionLevel,
} from '../../../tcp-bridge/src/negotiate/security-context.ts';
import { describeShared } from '../../support/corpus.ts';
import { startTestRealm, type TestRealm } from '../../support/krb5-realm.ts';
import {
  expectLogonDenied,
  ntlmClientAccount,
  runNnsClient,
  startNegotiateEcho,
  type ClientResult,
  type EchoServer,
} from '../../support/negotiate-echo.ts';
import { LOGON_DENIED_PAYLOAD, pattern, toHex } from '../../support/negotiate.ts';
import { needPeers, PEERS } from '../../support/peers.ts';

const missing = needPeers('negotiate kerberos', PEERS.krb5);
const noInitiators = needPeers('negotiate kerberos with gss-ntlmssp', PEERS.gssInitiators);

const ALICE = 'alice@TEST.LOCAL';

describeShared('NegotiateStream with Kerberos (MIT KDC, GSSAPI backend through koffi)', () => {
  describe.skipIf(missing)('against a KDC of realm TEST.LOCAL', () => {
    let realm: TestRealm;
    let scratch: string;
    const backends: GssapiBackend[] = [];
    const servers = new Map<string, EchoServer>();
    const server = (key: string): EchoServer => servers.get(key)!;
    const last = (key: string) => server(key).connections[server(key).connections.length - 1]!;
    const closed = async (key: string): Promise<void> => server(key).closedCount(server(key).connections.length);
    const client = (key: string, mode: string, args: string[]): Promise<ClientResult> =>
      runNnsClient(server(key).port, mode, ['--krb5', ...args], realm.clientEnv);

    async function startServer(key: string, level: ProtectionLevel, keytab: string): Promise<void> {
      const backend = new GssapiBackend({
        keytab,
        dnsIdentity: 'localhost',
        replayCache: `file2:${join(realm.dir, `rcache-${key}`)}`,
      });
      backends.push(backend);
      servers.set(key, await startNegotiateEcho({ backends: [backend], protectionLevel: level }));
    }

    /** After a refusal the same server must still serve the next client. */
    async function stillServes(key: string, args: string[] = []): Promise<void> {
      const result = await client(key, 'echo', ['--message', '6f6b', ...args]);
      expect(result).toMatchObject({ result: 'ok', replies: ['6f6b'] });
      await closed(key);
      expect(last(key).peer?.name).toBe(ALICE);
      expect(last(key).failure).toBeUndefined();
    }

    beforeAll(async () => {
      realm = await startTestRealm();
      scratch = mkdtempSync(join(tmpdir(), 'nns-krb5-'));
      await startServer('EncryptAndSign', 'EncryptAndSign', realm.keytab);
      await startServer('Sign', 'Sign', realm.keytab);
    }, 90_000);

    afterAll(async () => {
      for (const s of servers.values()) await s.close();
      for (const backend of backends) backend.close();
      await realm?.stop();
      if (scratch) rmSync(scratch, { recursive: true, force: true });
    });

    describe('EncryptAndSign', () => {
      it('MIT SPNEGO: a sealed session echoes small and large messages (frames split at 63 KiB), as alice@TEST.LOCAL', async () => {
        const result = await client('EncryptAndSign', 'echo', ['--message', '68656c6c6f', '--pattern', '100000']);
        expect(result).toMatchObject({ result: 'ok', encrypted_flag: true, mutual: true });
        expect(result.replies).toEqual(['68656c6c6f', toHex(pattern(100_000))]);
        await closed('EncryptAndSign');
        const connection = last('EncryptAndSign');
        expect(connection.peer).toEqual({
          name: ALICE,
          sids: [],
          mechanism: OID.kerberos,
          mechanismName: 'Kerberos',
          spnego: true,
          protectionLevel: 'EncryptAndSign',
        });
        expect(connection.received.map((c) => c.length)).toEqual([5, 63 * 1024, 100_000 - 63 * 1024]);
        expect(toHex(Buffer.concat(connection.received))).toBe(`68656c6c6f${toHex(pattern(100_000))}`);
        expect(connection.failure).toBeUndefined();
      });

      it('as Windows sends it: Microsoft OID first (also in the token header), wrap tokens rotated by RRC 28', async () => {
        const result = await client('EncryptAndSign', 'echo', [
          '--spnego-ms',
          '--ms-inner-oid',
          '--rrc',
          '28',
          '--message',
          '00',
          '--pattern',
          '70000',
        ]);
        expect(result).toMatchObject({ result: 'ok', replies: ['00', toHex(pattern(70_000))] });
        await closed('EncryptAndSign');
        expect(last('EncryptAndSign').peer).toEqual({
          name: ALICE,
          sids: [],
          mechanism: OID.kerberosMicrosoft,
          mechanismName: 'Kerberos',
          spnego: true,
          protectionLevel: 'EncryptAndSign',
        });
      });

      it("with .NET's NegotiateStream flags (Confidentiality + MutualAuth, no sequence detection asked)", async () => {
        const result = await client('EncryptAndSign', 'echo', [
          '--dotnet-flags',
          '--message',
          '01',
          '--pattern',
          '65536',
        ]);
        expect(result).toMatchObject({ result: 'ok', replies: ['01', toHex(pattern(65_536))] });
        expect((result.flags as number) & (GssFlag.Replay | GssFlag.Sequence)).toBe(0);
        await closed('EncryptAndSign');
        expect(last('EncryptAndSign').peer?.name).toBe(ALICE);
      });

      it('raw Kerberos without SPNEGO', async () => {
        const result = await client('EncryptAndSign', 'echo', ['--raw-krb5', '--message', '02']);
        expect(result).toMatchObject({ result: 'ok', replies: ['02'] });
        await closed('EncryptAndSign');
        expect(last('EncryptAndSign').peer).toMatchObject({ name: ALICE, mechanism: OID.kerberos, spnego: false });
      });

      it('exchanges mechListMICs (gss_get_mic / gss_verify_mic) when Kerberos was not the first choice', async () => {
        const result = await client('EncryptAndSign', 'echo', ['--other-mech-first', '--message', '03']);
        expect(result).toMatchObject({ result: 'ok', replies: ['03'] });
        await closed('EncryptAndSign');
        expect(last('EncryptAndSign').peer).toMatchObject({
          name: ALICE,
          mechanism: OID.kerberosMicrosoft,
          spnego: true,
        });
      });
    });

    describe('Sign', () => {
      it('serves a signing-only client (no confidentiality flag) with signed frames, RRC 0 and 12', async () => {
        for (const rrc of ['0', '12']) {
          const result = await client('Sign', 'echo', [
            '--sign-only',
            '--no-ci-flags',
            '--rrc',
            rrc,
            '--message',
            '7369676e',
            '--pattern',
            '70000',
          ]);
          expect(result).toMatchObject({
            result: 'ok',
            encrypted_flag: false,
            replies: ['7369676e', toHex(pattern(70_000))],
          });
          await closed('Sign');
          expect(last('Sign').peer).toMatchObject({ name: ALICE, protectionLevel: 'Sign' });
        }
      });

      it("with .NET's Sign flags (Integrity, ReplayDetect, SequenceDetect, MutualAuth)", async () => {
        const result = await client('Sign', 'echo', [
          '--sign-only',
          '--no-ci-flags',
          '--dotnet-flags',
          '--message',
          '04',
        ]);
        expect(result).toMatchObject({ result: 'ok', encrypted_flag: false, replies: ['04'] });
        await closed('Sign');
        expect(last('Sign').peer?.protectionLevel).toBe('Sign');
      });

      it('serves a sealing client too (EncryptAndSign)', async () => {
        const result = await client('Sign', 'echo', ['--message', '7365616c']);
        expect(result).toMatchObject({ result: 'ok', encrypted_flag: true, replies: ['7365616c'] });
        await closed('Sign');
        expect(last('Sign').peer?.protectionLevel).toBe('EncryptAndSign');
      });
    });

    describe('refusals, each followed by a client served', () => {
      const refusals: Array<{ name: string; key: string; args: string[]; reason: string }> = [
        {
          name: 'a ticket for another service (HOST/bridge.test.local, whose key the keytab holds)',
          key: 'EncryptAndSign',
          args: ['--target', 'HOST@bridge.test.local'],
          reason: 'gssapi.wrong-service',
        },
        {
          name: 'a client that does not ask for mutual authentication',
          key: 'EncryptAndSign',
          args: ['--no-mutual'],
          reason: 'gssapi.not-mutual',
        },
        {
          name: 'a signing-only client under EncryptAndSign',
          key: 'EncryptAndSign',
          args: ['--sign-only', '--no-ci-flags'],
          reason: 'nns.protection-level',
        },
        {
          name: 'a wrong mechListMIC',
          key: 'EncryptAndSign',
          args: ['--other-mech-first', '--tamper-mic'],
          reason: 'spnego.bad-mechlistmic',
        },
      ];
      for (const refusal of refusals) {
        it(`refuses ${refusal.name} with logon denied`, async () => {
          await expectLogonDenied(
            server(refusal.key),
            await client(refusal.key, 'echo', ['--message', '00', ...refusal.args]),
            refusal.reason,
          );
          await stillServes(refusal.key);
        });
      }

      it('refuses a replayed AP-REQ (recorded from a good session): the replay cache', async () => {
        const record = join(scratch, 'recorded.json');
        expect(await client('EncryptAndSign', 'echo', ['--record', record, '--message', '01'])).toMatchObject({
          result: 'ok',
        });
        const replay = await client('EncryptAndSign', 'replay', ['--replay', record]);
        expect(replay).toEqual({ result: 'refused', status: LOGON_DENIED_PAYLOAD });
        await closed('EncryptAndSign');
        expect(last('EncryptAndSign').failure).toBe('gssapi.replay');
        await stillServes('EncryptAndSign');
      });

      it("refuses an authenticator from a clock 10 minutes ahead (the library's 300 s skew), not one 2 minutes ahead", async () => {
        // A copy of alice's ccache (holding the host/localhost ticket by now) whose header tells MIT the KDC's clock
        // is ahead: the initiator then dates its authenticator that much later.
        expect(await client('EncryptAndSign', 'echo', ['--message', '00'])).toMatchObject({ result: 'ok' });
        const skewed = (seconds: number): Record<string, string> => {
          const ccache = readFileSync(realm.clientEnv.KRB5CCNAME!.slice('FILE:'.length));
          expect([...ccache.subarray(0, 8)]).toEqual([0x05, 0x04, 0x00, 0x0c, 0x00, 0x01, 0x00, 0x08]); // v4, DeltaTime tag
          ccache.writeInt32BE(seconds, 8);
          const path = join(scratch, `ccache-${seconds}`);
          writeFileSync(path, ccache, { mode: 0o600 });
          return { ...realm.clientEnv, KRB5CCNAME: `FILE:${path}` };
        };
        const port = server('EncryptAndSign').port;
        expect(await runNnsClient(port, 'echo', ['--krb5', '--message', '00'], skewed(600))).toEqual({
          result: 'refused',
          status: LOGON_DENIED_PAYLOAD,
        });
        await closed('EncryptAndSign');
        expect(last('EncryptAndSign').failure).toBe('gssapi.clock-skew');
        expect(await runNnsClient(port, 'echo', ['--krb5', '--message', '00'], skewed(120))).toMatchObject({
          result: 'ok',
          replies: ['00'],
        });
        await closed('EncryptAndSign');
        expect(last('EncryptAndSign').peer?.name).toBe(ALICE);
      });

      it('refuses a ticket its keytab cannot decrypt (wrong key), and serves once the right keytab is in place', async () => {
        const path = join(scratch, 'rotating.keytab');
        await realm.exec(
          'ktutil',
          [],
          `addent -password -p host/localhost@TEST.LOCAL -k 2 -e aes256-cts-hmac-sha1-96\nNotTheKey1\nwkt ${path}\nquit\n`,
        );
        chmodSync(path, 0o600);
        await startServer('wrong-keytab', 'EncryptAndSign', `FILE:${path}`);
        const result = await client('wrong-keytab', 'echo', ['--message', '00']);
        expect(result).toEqual({ result: 'refused', status: LOGON_DENIED_PAYLOAD });
        await closed('wrong-keytab');
        expect(last('wrong-keytab').failure).toBe('gssapi.wrong-key');
        // The keytab is read at each accept: the service's real keys are taken without a restart.
        copyFileSync(realm.keytab.slice('FILE:'.length), path);
        await stillServes('wrong-keytab');
      });

      it('drops the connection on a tampered sealed wrap token', async () => {
        const result = await client('EncryptAndSign', 'tamper', []);
        expect(result).toEqual({ result: 'closed', first: '6669727374' });
        await closed('EncryptAndSign');
        expect(last('EncryptAndSign')).toMatchObject({
          failure: 'BadSignature',
          received: [new TextEncoder().encode('first')],
        });
        await stillServes('EncryptAndSign');
      });

      it('drops the connection on a tampered signed-only wrap token under Sign', async () => {
        const result = await client('Sign', 'tamper', ['--sign-only', '--no-ci-flags']);
        expect(result).toMatchObject({ result: 'closed', first: '6669727374' });
        await closed('Sign');
        expect(last('Sign').failure).toBe('BadSignature');
        await stillServes('Sign', ['--sign-only', '--no-ci-flags']);
      });

      it('drops signed-only frames under EncryptAndSign even from a context that could seal', async () => {
        const result = await client('EncryptAndSign', 'echo', ['--sign-only', '--message', '00']);
        expect(result).toMatchObject({ result: 'closed', replies: [] });
        await closed('EncryptAndSign');
        expect(last('EncryptAndSign')).toMatchObject({ failure: 'Malformed', received: [] });
        await stillServes('EncryptAndSign');
      });

      it('drops frames out of order: by the library when the client asked for sequence detection', async () => {
        const result = await client('EncryptAndSign', 'reorder', []);
        expect(result).toEqual({ result: 'closed' });
        await closed('EncryptAndSign');
        expect(last('EncryptAndSign')).toMatchObject({ failure: 'OutOfSequence', received: [] });
        await stillServes('EncryptAndSign');
      });

      it('drops frames out of order: by our own SND_SEQ check when it did not (.NET under EncryptAndSign)', async () => {
        const result = await client('EncryptAndSign', 'reorder', ['--dotnet-flags']);
        // The first frame to arrive ("two") sets the start and is echoed; the older one then breaks the order.
        expect(result).toEqual({ result: 'reply' });
        await closed('EncryptAndSign');
        expect(last('EncryptAndSign')).toMatchObject({
          failure: 'OutOfSequence',
          received: [new TextEncoder().encode('two')],
        });
        await stillServes('EncryptAndSign');
      });
    });

    describe('the backend', () => {
      const info = { remoteAddress: '127.0.0.1', protectionLevel: 'EncryptAndSign' as const };
      const tokens = async (count: number): Promise<Uint8Array[]> => {
        const result = await runNnsClient(0, 'krb5-tokens', ['--krb5', '--count', String(count)], realm.clientEnv);
        expect(result.result).toBe('ok');
        return (result.tokens as string[]).map((hex) => new Uint8Array(Buffer.from(hex, 'hex')));
      };

      it('accepts many handshakes at once off the event loop, and releases every context', async () => {
        const backend = new GssapiBackend({
          keytab: realm.keytab,
          dnsIdentity: 'localhost',
          replayCache: `file2:${join(realm.dir, 'rcache-parallel')}`,
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
          keytab: realm.keytab,
          dnsIdentity: 'localhost',
          replayCache: `file2:${join(realm.dir, 'rcache-dispose')}`,
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
          keytab: realm.keytab,
          dnsIdentity: 'localhost',
          replayCache: `file2:${join(realm.dir, 'rcache-broken')}`,
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
          keytab: realm.keytab,
          dnsIdentity: 'localhost',
          replayCache: `file2:${join(realm.dir, 'rcache-garbage')}`,
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
        const path = join(scratch, 'open.keytab');
        copyFileSync(realm.keytab.slice('FILE:'.length), path);
        chmodSync(path, 0o640);
        expect(() => new GssapiBackend({ keytab: `FILE:${path}`, dnsIdentity: 'localhost' })).toThrow(
          /mode 640.*chmod 600/,
        );
        chmodSync(path, 0o604);
        expect(() => checkKeytab(path)).toThrow(ConfigError);
        chmodSync(path, 0o600);
        expect(checkKeytab(`WRFILE:${path}`)).toBe(path);
        expect(() => checkKeytab(join(scratch, 'none.keytab'))).toThrow(/cannot read .*ENOENT/);
        expect(() => checkKeytab('MEMORY:service')).toThrow(/not a file keytab/);
        expect(() => checkKeytab(scratch)).toThrow(/cannot read/);
      });

      it('refuses to start without a key for host/<BRIDGE_DNS_IDENTITY>', () => {
        expect(() => new GssapiBackend({ keytab: realm.keytab, dnsIdentity: 'other.test.local' })).toThrow(
          /no acceptor credential for host@other.test.local/,
        );
      });

      it('refuses to start with the replay cache switched off', () => {
        expect(
          () => new GssapiBackend({ keytab: realm.keytab, dnsIdentity: 'localhost', replayCache: 'none:' }),
        ).toThrow(/replay cache/);
      });

      it.skipIf(noInitiators)(
        'with BRIDGE_NTLM_BACKEND=gssapi one backend offers Kerberos and NTLM through gss-ntlmssp',
        async () => {
          const users = join(scratch, 'ntlm-users');
          writeFileSync(users, 'TESTDOM:alice:Secret123!\n', { mode: 0o600 });
          const env = { KRB5_KTNAME: realm.keytab, BRIDGE_NTLM_BACKEND: 'gssapi', BRIDGE_NTLM_USERS: users };
          const backend = gssapiBackendFor(readBridgeConfig(env), {
            replayCache: `file2:${join(realm.dir, 'rcache-both')}`,
          })!;
          backends.push(backend);
          expect(backend.mechanisms).toEqual([OID.kerberosMicrosoft, OID.kerberos, OID.ntlm]);
          servers.set('both', await startNegotiateEcho({ backends: [backend], protectionLevel: 'EncryptAndSign' }));
          expect(await client('both', 'echo', ['--message', '01'])).toMatchObject({ result: 'ok', replies: ['01'] });
          await closed('both');
          expect(last('both').peer).toMatchObject({ name: ALICE, mechanismName: 'Kerberos' });
          expect(
            await runNnsClient(
              server('both').port,
              'echo',
              ['--message', '02'],
              ntlmClientAccount(scratch, 'TESTDOM:alice:Secret123!'),
            ),
          ).toMatchObject({ result: 'ok', replies: ['02'] });
          await closed('both');
          expect(last('both').peer).toMatchObject({ name: 'TESTDOM\\alice', mechanismName: 'NTLM' });
        },
      );

      it('is made from KRB5_KTNAME and BRIDGE_DNS_IDENTITY', () => {
        expect(gssapiBackendFor(readBridgeConfig({}))).toBeUndefined();
        const backend = gssapiBackendFor(
          readBridgeConfig({ KRB5_KTNAME: realm.keytab, BRIDGE_DNS_IDENTITY: 'localhost' }),
        )!;
        expect(backend.acceptorName).toBe('host@localhost');
        expect(backend.mechanisms).toEqual([OID.kerberosMicrosoft, OID.kerberos]);
        backend.close();
      });
    });
  });
});

// Without ../shared or the packages, the pure checks still run.
describe('gssapi backend without a KDC', () => {
  it('names peers user@REALM, the realm upper-cased, escapes kept', () => {
    expect(kerberosPeerName('alice@test.local')).toBe('alice@TEST.LOCAL');
    expect(kerberosPeerName('alice@TEST.LOCAL\0')).toBe('alice@TEST.LOCAL');
    expect(kerberosPeerName('bob\\@upn.example@corp.example')).toBe('bob\\@upn.example@CORP.EXAMPLE');
    expect(kerberosPeerName('host/web.corp.example@CORP.EXAMPLE')).toBe('host/web.corp.example@CORP.EXAMPLE');
    expect(kerberosPeerName('DOMAIN\\user')).toBe('DOMAIN\\user');
  });

  it('checkKeytab refuses a keytab readable by others', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keytab-'));
    try {
      const path = join(dir, 'k');
      writeFileSync(path, 'x');
      chmodSync(path, 0o644);
      expect(() => checkKeytab(`FILE:${path}`)).toThrow(/mode 644/);
      chmodSync(path, 0o600);
      expect(checkKeytab(`FILE:${path}`)).toBe(path);
      expect(() => checkKeytab('relative/path')).toThrow(/not a file keytab/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
