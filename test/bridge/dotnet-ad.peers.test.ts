import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, type TestContext } from 'vitest';
import { openBridge } from '../../tcp-bridge/src/bridge.ts';
import { readBridgeConfig } from '../../tcp-bridge/src/config.ts';
import type { RunningBridge } from '../../tcp-bridge/src/server.ts';
import { buildDotnetProject, infoOf, runChecks, type DotnetBuild } from '../support/peers/dotnet.ts';
import { describeFailures } from '../support/peers/mono-e2e.ts';
import {
  describeSamba,
  SAMBA_DC_HOST,
  SAMBA_DNS_IDENTITY,
  SAMBA_REALM,
  SAMBA_USERS,
  SambaUnavailable,
  startSambaDomain,
  type SambaDomain,
} from '../support/negotiate/samba-ad.ts';
import { needPeers, PEERS, peerUnavailable } from '../support/peers.ts';

const TIMEOUT = 600_000;
const noDotnet = needPeers('bridge dotnet AD', PEERS.dotnet);
const noGssNtlmssp = needPeers('bridge dotnet AD NTLM', PEERS.gssNtlmssp);
const SECTIONS = ['--sections', 'heartbeat,nonquery,requests,datatable,scalar,files,documents,faults,channels,cleanup'];

describeSamba('.NET WCF client as a domain user (Kerberos and NTLM against the bridge in Samba AD)', () => {
  let domain: SambaDomain | undefined;
  let bridge: RunningBridge | undefined;
  let client: DotnetBuild;
  let folder = '';
  let unavailable = '';
  let aliceSid = '';
  const logons: Array<Record<string, unknown>> = [];

  const need = (ctx: TestContext): SambaDomain => {
    if (noDotnet) ctx.skip(noDotnet);
    if (!bridge) ctx.skip(`Samba AD could not start or join: ${unavailable}`);
    return domain!;
  };
  const endpoint = () => `net.tcp://127.0.0.1:${bridge!.port}/IDBService`;
  /** The bridge's 'authenticated' lines since `from`: who logged on, how, with which SIDs. */
  const since = (from: number) =>
    logons
      .slice(from)
      .map(({ caller, mechanism, sids }) => ({ caller, mechanism, first: (sids as string[] | undefined)?.[0] }));

  beforeAll(async () => {
    if (noDotnet) return;
    let member;
    try {
      [domain, client] = await Promise.all([startSambaDomain(), buildDotnetProject('WcfClient')]);
      member = await domain.join();
    } catch (error) {
      unavailable = error instanceof Error ? error.message : String(error);
      if (!(error instanceof SambaUnavailable) && domain === undefined) throw error;
      peerUnavailable('bridge dotnet AD', `Samba AD could not start or join: ${unavailable}`);
      return;
    }
    folder = await mkdtemp(join(tmpdir(), 'bridge-dotnet-ad-'));
    await writeFile(join(folder, 'ldap-password'), SAMBA_USERS.svcIdb.password, { mode: 0o600 });
    await writeFile(join(folder, 'roles.json'), JSON.stringify({ writer: ['SAMDOM\\idb-team'] }));
    const config = readBridgeConfig({
      BRIDGE_PORT: '0',
      KRB5_KTNAME: domain.keytab,
      BRIDGE_DNS_IDENTITY: SAMBA_DNS_IDENTITY,
      BRIDGE_NTLM_DOMAIN: 'SAMDOM',
      BRIDGE_LDAP_URL: domain.ldapsUrl,
      BRIDGE_LDAP_BIND_DN: 'SAMDOM\\svc-idb',
      BRIDGE_LDAP_PASSWORD_FILE: join(folder, 'ldap-password'),
      BRIDGE_LDAP_CA_FILE: join(domain.dir, 'dc', 'private', 'tls', 'ca.pem'),
      BRIDGE_ROLES_FILE: join(folder, 'roles.json'),
      MAX_MESSAGE_MB: '60',
      DATABASE_URL: `file:${join(folder, 'idb.sqlite')}`,
      FILES_URL: `file:${join(folder, 'files')}`,
    });
    aliceSid = await domain.sidOf('alice');
    const logger = {
      log: (_level: string, msg: string, fields: Record<string, unknown> = {}) =>
        void (msg === 'authenticated' && logons.push(fields)),
    };
    bridge = await openBridge(config, logger, {
      winbind: { config: member.conf, env: member.env },
      ldapTls: { servername: SAMBA_DC_HOST },
    });
  }, TIMEOUT);

  afterAll(async () => {
    await bridge?.close();
    await domain?.stop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it(
    `Kerberos: alice@${SAMBA_REALM} from a kinit ccache, identity ${SAMBA_DNS_IDENTITY}, a writer through her AD group`,
    async (ctx) => {
      const d = need(ctx);
      const { env } = await d.kinit('alice', SAMBA_USERS.alice.password);
      const from = logons.length;
      const run = await runChecks(
        client.dll,
        [
          'e2e',
          endpoint(),
          '--server-max-mb',
          '60',
          '--security',
          'windows',
          '--identity',
          SAMBA_DNS_IDENTITY,
          ...SECTIONS,
        ],
        { env, timeoutMs: TIMEOUT - 20_000 },
      );
      expect(run.failed, describeFailures(run)).toEqual([]);
      expect(run.summary?.passed).toBeGreaterThan(100);
      // Every channel logged on with Kerberos (pooled sockets log on again per channel), the PAC's SIDs hers.
      expect(new Set(since(from).map((l) => JSON.stringify(l)))).toEqual(
        new Set([JSON.stringify({ caller: `alice@${SAMBA_REALM}`, mechanism: 'Kerberos', first: aliceSid })]),
      );
    },
    TIMEOUT,
  );

  it.skipIf(noGssNtlmssp)(
    'NTLM: SAMDOM\\alice with her password, checked by the DC through winbind; a wrong password is refused before any call',
    async (ctx) => {
      need(ctx);
      // No ticket cache and a krb5.conf without the realm (dotnetEnv's): .NET's Negotiate falls back to NTLM.
      const alice = ['--user', 'SAMDOM\\alice', '--password', SAMBA_USERS.alice.password];
      const from = logons.length;
      const run = await runChecks(
        client.dll,
        [
          'e2e',
          endpoint(),
          '--server-max-mb',
          '60',
          '--security',
          'windows',
          '--identity',
          SAMBA_DNS_IDENTITY,
          ...alice,
          ...SECTIONS,
        ],
        { timeoutMs: TIMEOUT - 20_000 },
      );
      expect(run.failed, describeFailures(run)).toEqual([]);
      expect(run.summary?.passed).toBeGreaterThan(100);
      expect(new Set(since(from).map((l) => JSON.stringify(l)))).toEqual(
        new Set([JSON.stringify({ caller: 'SAMDOM\\alice', mechanism: 'NTLM', first: aliceSid })]),
      );
      const wrong = await runChecks(client.dll, [
        'refused',
        endpoint(),
        '--security',
        'windows',
        '--identity',
        SAMBA_DNS_IDENTITY,
        '--user',
        'SAMDOM\\alice',
        '--password',
        'Not-Her-Password1',
      ]);
      expect(wrong.failed, describeFailures(wrong)).toEqual([]);
      expect(infoOf(wrong, 'refused')).toMatch(
        /^System\.ServiceModel\.Security\.SecurityNegotiationException: The server has rejected the client credentials\./,
      );
    },
    TIMEOUT,
  );
});
