/**
 * NegotiateStream with Kerberos against a real MIT KDC (see kerberos.peers.test.ts): what the GSSAPI backend refuses
 * (a ticket for another service, no mutual authentication, signing only under EncryptAndSign, a wrong mechListMIC, a
 * replayed AP-REQ, clock skew, a key it does not hold) and the frames it drops (tampered, signed-only where sealing is
 * due, out of order); each refusal is followed by a client served.
 */
import { chmodSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeShared } from '../../support/corpus.ts';
import { expectLogonDenied, runNnsClient } from '../../support/negotiate/negotiate-echo.ts';
import { LOGON_DENIED_PAYLOAD } from '../../support/negotiate/negotiate.ts';
import { ALICE, useKerberosEcho } from './kerberos-echo.ts';
import { needPeers, PEERS } from '../../support/peers.ts';

const missing = needPeers('negotiate kerberos', PEERS.krb5);

describeShared('NegotiateStream with Kerberos (MIT KDC, GSSAPI backend through koffi)', () => {
  describe.skipIf(missing)('against a KDC of realm TEST.LOCAL', () => {
    const kdc = useKerberosEcho();
    const { server, last, closed, client, startServer, stillServes } = kdc;

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
        const record = join(kdc.scratch, 'recorded.json');
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
          const ccache = readFileSync(kdc.realm.clientEnv.KRB5CCNAME!.slice('FILE:'.length));
          expect([...ccache.subarray(0, 8)]).toEqual([0x05, 0x04, 0x00, 0x0c, 0x00, 0x01, 0x00, 0x08]); // v4, DeltaTime tag
          ccache.writeInt32BE(seconds, 8);
          const path = join(kdc.scratch, `ccache-${seconds}`);
          writeFileSync(path, ccache, { mode: 0o600 });
          return { ...kdc.realm.clientEnv, KRB5CCNAME: `FILE:${path}` };
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
        const path = join(kdc.scratch, 'rotating.keytab');
        await kdc.realm.exec(
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
        copyFileSync(kdc.realm.keytab.slice('FILE:'.length), path);
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
  });
});
