/**
 * The bridge in an Active Directory domain, end to end, as `npm run bridge` wires it (tcp-bridge/src/bridge.ts): a
 * Samba AD DC (support/negotiate/samba-ad.ts), this host joined as member BRIDGEHOST with winbindd, the bridge with the
 * keytab of host/idb.samdom.test (KRB5_KTNAME), BRIDGE_NTLM_DOMAIN=SAMDOM (pass-through through winbind), a local NTLM
 * account beside it (BRIDGE_NTLM_USERS), and a roles file naming an AD group by name (resolved over LDAPS with
 * BRIDGE_LDAP_*), another by SID, and the local account by name. Real initiators through
 * support/negotiate/nns-client.py (MIT Kerberos from a kinit ccache, gss-ntlmssp), binary SOAP calls through the sealed
 * stream:
 * - domain users over Kerberos (AES256, and an RC4 session key) and over NTLM get their roles from their groups,
 *   nested ones included; the local account keeps working;
 * - a user added to a group in AD gets the role at the next logon, Kerberos and NTLM, the bridge untouched;
 * - refusals: a wrong password, a disabled account, an expired password (NTLM: the DC's verdict; Kerberos: the KDC
 *   gives no ticket), a ticket for another SPN: the same logon-denied status to the client, the reason in the log; a
 *   user outside every role logs on and gets AccessDenied on a call;
 * - a roles file naming a group AD does not have stops the bridge at start.
 *
 * Skipped with a message where Samba cannot start (see samba-ad.ts) or the initiators are missing.
 */
import { join } from 'node:path';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, expect, it, type TestContext } from 'vitest';
import { openBridge } from '../../tcp-bridge/src/bridge.ts';
import { readBridgeConfig } from '../../tcp-bridge/src/config.ts';
import type { RunningBridge } from '../../tcp-bridge/src/server.ts';
import { ntlmClientAccount, runNnsClient, type ClientResult } from '../support/negotiate/negotiate-echo.ts';
import { answerOf, nettcpSession, resultOf, sqlCall } from '../support/nettcp/nettcp-calls.ts';
import {
  describeSamba,
  SAMBA_DC_HOST,
  SAMBA_DNS_IDENTITY,
  SAMBA_LEGACY_DNS,
  SAMBA_REALM,
  SAMBA_USERS,
  startSambaForSuite,
  type SambaDomain,
  type SambaMember,
} from '../support/negotiate/samba-ad.ts';
import { request } from '../support/nettcp/soap.ts';
import { needPeers, PEERS } from '../support/peers.ts';

const noInitiators = needPeers('bridge AD', PEERS.gssInitiators);

/** What the client is told for every refused logon: SEC_E_LOGON_DENIED in the HandshakeError frame. */
const LOGON_DENIED = '0c0309808009030c';
const ERIN = { name: 'erin', password: 'Erin-Pass1' };
/** A reader's ReturnScalar answered: the rows of the table, however many the writers have added so far. */
const COUNT = expect.stringMatching(/^\d+$/);

interface LogLine {
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

describeSamba(
  'the bridge in an Active Directory domain (Kerberos with the PAC, NTLM pass-through, roles by AD group)',
  () => {
    let domain: SambaDomain | undefined;
    let member: SambaMember | undefined;
    let bridge: RunningBridge | undefined;
    let folder = '';
    let unavailable = '';
    const lines: LogLine[] = [];
    const sids = new Map<string, string>();
    const logger = {
      log: (level: string, msg: string, fields: Record<string, unknown> = {}) =>
        void lines.push({ level, msg, fields }),
    };

    const need = (ctx: TestContext): SambaDomain => {
      if (!bridge) ctx.skip(`Samba AD could not start or join: ${unavailable}`);
      return domain!;
    };
    const admin = (d: SambaDomain, args: string[]) =>
      d.exec('samba-tool', [
        ...args,
        '-H',
        `ldap://${d.dcIp}`,
        `-U${SAMBA_USERS.admin.name}%${SAMBA_USERS.admin.password}`,
      ]);

    /** The environment and options for the bridge of this domain, `env` added. */
    const bridgeEnv = (d: SambaDomain, env: Record<string, string> = {}) => ({
      BRIDGE_PORT: '0',
      KRB5_KTNAME: d.keytab,
      BRIDGE_DNS_IDENTITY: SAMBA_DNS_IDENTITY,
      BRIDGE_NTLM_USERS: join(folder, 'users'),
      BRIDGE_NTLM_DOMAIN: 'SAMDOM',
      BRIDGE_LDAP_URL: d.ldapsUrl,
      BRIDGE_LDAP_BIND_DN: `${SAMBA_USERS.svcIdb.name}@${SAMBA_REALM.toLowerCase()}`,
      BRIDGE_LDAP_PASSWORD_FILE: join(folder, 'ldap-password'),
      BRIDGE_LDAP_CA_FILE: join(d.dir, 'dc', 'private', 'tls', 'ca.pem'),
      BRIDGE_ROLES_FILE: join(folder, 'roles.json'),
      DATABASE_URL: `file:${join(folder, 'idb.sqlite')}`,
      FILES_URL: `file:${join(folder, 'files')}`,
      ...env,
    });
    // This host is a member under nss_wrapper with its own smb.conf, and reaches the DC by address (its certificate
    // names dc1.samdom.test): what a production member has by default.
    const host = () => ({
      winbind: { config: member!.conf, env: member!.env },
      ldapTls: { servername: SAMBA_DC_HOST },
    });

    beforeAll(async () => {
      if (noInitiators) {
        unavailable = noInitiators;
        return;
      }
      ({ domain, member, unavailable } = await startSambaForSuite('bridge AD suite', { join: true }));
      if (unavailable) return;
      const d = domain!;
      // erin belongs to no group yet: outside every role until the test adds her to idb-team.
      await admin(d, ['user', 'create', ERIN.name, ERIN.password]);
      for (const name of ['alice', 'bob', 'erin', 'idb-team', 'idb-readers', 'idb-all', 'idb-writers', 'Domain Users'])
        sids.set(name, await d.sidOf(name));
      folder = await mkdtemp(join(tmpdir(), 'bridge-ad-'));
      await writeFile(join(folder, 'users'), 'TESTDOM:local:Local-Pass1\n', { mode: 0o600 });
      await writeFile(join(folder, 'ldap-password'), `${SAMBA_USERS.svcIdb.password}\n`, { mode: 0o600 });
      // Readers: a group by name (alice is in it through idb-team); writers: a domain local group by SID, and a local
      // NTLM account by name.
      await writeFile(
        join(folder, 'roles.json'),
        JSON.stringify({ reader: ['SAMDOM\\idb-readers'], writer: [sids.get('idb-writers'), 'TESTDOM\\local'] }),
      );
      bridge = await openBridge(readBridgeConfig(bridgeEnv(d)), logger, host());
    }, 240_000);

    afterAll(async () => {
      await bridge?.close();
      await domain?.stop();
      if (folder) await rm(folder, { recursive: true, force: true });
    });

    /** One session through the bridge: Heartbeat, a read, a write; the answers, or the refusal. */
    const session = async (
      env: Record<string, string>,
      krb5: boolean,
    ): Promise<{ outcome: ClientResult; heartbeat?: string; read?: string; write?: string }> => {
      const calls = nettcpSession([
        request('Heartbeat', []),
        sqlCall('ReturnScalar', 'SELECT count(*) FROM ad_log'),
        sqlCall('ExecuteNonQuery', "INSERT INTO ad_log VALUES ('x')"),
      ]);
      // The service named for both mechanisms: NTLM carries it as MsvAvTargetName, which the bridge checks.
      const args = [...(krb5 ? ['--krb5'] : []), '--target', `host@${SAMBA_DNS_IDENTITY}`, ...calls.args];
      const outcome = await runNnsClient(bridge!.port, 'nettcp', args, env);
      if (outcome.result !== 'ok') return { outcome };
      expect(outcome.encrypted_flag).toBe(true);
      const [heartbeat, read, write] = calls
        .read(outcome.replies as string[])
        .map((reply, i) => answerOf(reply, ['Heartbeat', 'ReturnScalar', 'ExecuteNonQuery'][i]!));
      return { outcome, heartbeat, read, write };
    };
    const kerberos = async (user: { name: string; password: string }, rc4 = false) =>
      session((await domain!.kinit(user.name, user.password, { rc4 })).env, true);
    const ntlm = (account: string) => session(ntlmClientAccount(folder, account), false);
    /** The log lines of `msg` since `from`. */
    const logged = (msg: string, from: number) =>
      lines
        .slice(from)
        .filter((l) => l.msg === msg)
        .map((l) => l.fields);

    it('resolves the roles file’s AD names over LDAPS at start, and leaves the local account to match by name', (ctx) => {
      need(ctx);
      const resolved = lines.find((l) => l.msg === 'roles: names resolved in Active Directory');
      expect(resolved?.fields).toEqual({
        domain: 'SAMDOM',
        resolved: ['samdom\\idb-readers'],
        byNameOnly: ['testdom\\local'],
      });
    });

    it('a writer creates the table: the local NTLM account beside the domain', async (ctx) => {
      need(ctx);
      const calls = nettcpSession([sqlCall('ExecuteNonQuery', 'CREATE TABLE ad_log (v text)')]);
      const outcome = await runNnsClient(
        bridge!.port,
        'nettcp',
        ['--target', `host@${SAMBA_DNS_IDENTITY}`, ...calls.args],
        ntlmClientAccount(folder, 'TESTDOM:local:Local-Pass1'),
      );
      expect(outcome).toMatchObject({ result: 'ok', encrypted_flag: true });
      expect(resultOf(calls.read(outcome.replies as string[])[0]!, 'ExecuteNonQuery')).toBe('-1');
    });

    it("Kerberos (AES256): alice reads through her nested group, her write is AccessDenied; the PAC's SIDs are hers", async (ctx) => {
      need(ctx);
      const from = lines.length;
      expect(await kerberos(SAMBA_USERS.alice)).toMatchObject({
        heartbeat: 'true',
        read: COUNT,
        write: 'fault:AccessDenied',
      });
      const [authenticated] = logged('authenticated', from);
      expect(authenticated).toMatchObject({
        caller: `alice@${SAMBA_REALM}`,
        mechanism: 'Kerberos',
        protection: 'EncryptAndSign',
      });
      expect((authenticated!.sids as string[])[0]).toBe(sids.get('alice'));
      expect(authenticated!.sids).toEqual(
        expect.arrayContaining([
          sids.get('idb-team'),
          sids.get('idb-readers'),
          sids.get('idb-all'),
          sids.get('Domain Users'),
        ]),
      );
    });

    it('Kerberos with an RC4 session key: bob writes through the SID of his domain local group', async (ctx) => {
      need(ctx);
      expect(await kerberos(SAMBA_USERS.bob, true)).toMatchObject({ heartbeat: 'true', read: COUNT, write: '1' });
    });

    it("NTLM pass-through: alice and bob as SAMDOM accounts, the DC's verdict and winbind's groups", async (ctx) => {
      need(ctx);
      const from = lines.length;
      expect(await ntlm(`SAMDOM:alice:${SAMBA_USERS.alice.password}`)).toMatchObject({
        heartbeat: 'true',
        read: COUNT,
        write: 'fault:AccessDenied',
      });
      // The domain typed in lower case is the same account.
      expect(await ntlm(`samdom:bob:${SAMBA_USERS.bob.password}`)).toMatchObject({
        heartbeat: 'true',
        read: COUNT,
        write: '1',
      });
      const [alice, bob] = logged('authenticated', from);
      expect(alice).toMatchObject({ caller: 'SAMDOM\\alice', mechanism: 'NTLM', protection: 'EncryptAndSign' });
      expect((alice!.sids as string[])[0]).toBe(sids.get('alice'));
      expect(alice!.sids).toEqual(
        expect.arrayContaining([sids.get('idb-team'), sids.get('idb-readers'), sids.get('idb-all')]),
      );
      expect(bob).toMatchObject({ caller: 'SAMDOM\\bob' });
      expect(bob!.sids).toContain(sids.get('idb-writers'));
    });

    it('NTLM without a domain (a UPN, or the bare name) that no local account claims goes to the domain too', async (ctx) => {
      need(ctx);
      const from = lines.length;
      expect(await ntlm(`:alice@samdom.test:${SAMBA_USERS.alice.password}`)).toMatchObject({
        heartbeat: 'true',
        read: COUNT,
      });
      expect(await ntlm(`:alice:${SAMBA_USERS.alice.password}`)).toMatchObject({ heartbeat: 'true', read: COUNT });
      expect(logged('authenticated', from).map((f) => f.caller)).toEqual(['SAMDOM\\alice', 'SAMDOM\\alice']);
    });

    it('a user added to a group in AD has the role at the next logon, Kerberos and NTLM, the bridge untouched', async (ctx) => {
      const d = need(ctx);
      // Outside every role: she logs on, Heartbeat answers, the read is AccessDenied.
      expect(await kerberos(ERIN)).toMatchObject({
        heartbeat: 'true',
        read: 'fault:AccessDenied',
        write: 'fault:AccessDenied',
      });
      expect(await ntlm(`SAMDOM:erin:${ERIN.password}`)).toMatchObject({
        heartbeat: 'true',
        read: 'fault:AccessDenied',
      });
      await admin(d, ['group', 'addmembers', 'idb-team', ERIN.name]);
      expect(await kerberos(ERIN)).toMatchObject({ heartbeat: 'true', read: COUNT, write: 'fault:AccessDenied' });
      expect(await ntlm(`SAMDOM:erin:${ERIN.password}`)).toMatchObject({
        heartbeat: 'true',
        read: COUNT,
        write: 'fault:AccessDenied',
      });
    });

    it('refuses a wrong password, a disabled account, an expired password and a ticket for another SPN alike; the reasons go to the log', async (ctx) => {
      const d = need(ctx);
      const from = lines.length;
      const refused = {
        wrong: await ntlm('SAMDOM:alice:Not-Her-Password1'),
        disabled: await ntlm(`SAMDOM:carol:${SAMBA_USERS.carol.password}`),
        expired: await ntlm(`SAMDOM:dave:${SAMBA_USERS.dave.password}`),
        // alice's ticket for host/legacy.samdom.test presented to the bridge (host/idb.samdom.test).
        otherSpn: {
          outcome: await runNnsClient(
            bridge!.port,
            'nettcp',
            ['--krb5', '--target', `host@${SAMBA_LEGACY_DNS}`, ...nettcpSession([request('Heartbeat', [])]).args],
            (await d.kinit('alice', SAMBA_USERS.alice.password)).env,
          ),
        },
      };
      for (const [what, { outcome }] of Object.entries(refused))
        expect(outcome, what).toMatchObject({ result: 'refused', status: LOGON_DENIED });
      const reasons = logged('negotiate: logon refused', from).map((f) => f.reason);
      expect(reasons.slice(0, 3)).toEqual(['winbind.wrong-password', 'winbind.disabled', 'winbind.password-expired']);
      expect(reasons[3]).toMatch(/^gssapi\.(wrong-service|wrong-key)$/);
      // The KDC gives the disabled and the expired account no ticket at all: Kerberos never reaches the bridge.
      await expect(d.kinit('carol', SAMBA_USERS.carol.password)).rejects.toThrow(/revoked/);
      await expect(d.kinit('dave', SAMBA_USERS.dave.password)).rejects.toThrow(/expired/i);
    });

    it('stops at start when the roles file names a group AD does not have', async (ctx) => {
      const d = need(ctx);
      await writeFile(join(folder, 'typo.json'), JSON.stringify({ reader: ['SAMDOM\\idb-reader'] }));
      const config = readBridgeConfig(
        bridgeEnv(d, {
          BRIDGE_ROLES_FILE: join(folder, 'typo.json'),
          DATABASE_URL: `file:${join(folder, 'typo.sqlite')}`,
        }),
      );
      await expect(openBridge(config, logger, host())).rejects.toThrow(
        /BRIDGE_LDAP_URL: no group or user "samdom\\idb-reader"/,
      );
    });
  },
);
