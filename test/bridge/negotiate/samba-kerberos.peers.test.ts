/**
 * Kerberos from a real Active Directory KDC: a Samba AD DC (test/support/negotiate/samba-ad.ts) issues AES256 and RC4
 * tickets with a PAC; MIT's GSSAPI accepts them with the keytab exported by `samba-tool domain exportkeytab`, exposes
 * the PAC through gss_get_name_attribute (test/support/negotiate/gss-pac.ts, the prototype for gssapi/), and pac.ts
 * decodes the user's SID and groups, nested ones included. Then whole NegotiateStream sessions (nns-client.py,
 * python3-gssapi) through the bridge's own GssapiBackend, sealed, with an AES ticket and with an RC4 ticket, whose peer
 * carries the SIDs of the PAC (gssapi/kerberos.ts). And the refusals the
 * KDC and the acceptor make: wrong password, disabled account, expired password, a ticket for another SPN.
 *
 * Skipped with a message where Samba cannot start (not root, no ip netns, packages missing: see samba-ad.ts).
 */
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { GssapiBackend } from '../../../tcp-bridge/src/negotiate/gssapi/index.ts';
import {
  decodeLogonInfo,
  decodeUpnDnsInfo,
  identityFromPac,
  pacIdentity,
  UserFlag,
} from '../../../tcp-bridge/src/negotiate/pac.ts';
import { OID } from '../../../tcp-bridge/src/negotiate/security-context.ts';
import { acceptAndReadPac, GssError, initiatorToken, type AcceptedTicket } from '../../support/negotiate/gss-pac.ts';
import { runNnsClient, startNegotiateEcho, type EchoServer } from '../../support/negotiate/negotiate-echo.ts';
import {
  describeSamba,
  SAMBA_DNS_IDENTITY,
  SAMBA_DOMAIN,
  SAMBA_LEGACY_DNS,
  SAMBA_REALM,
  SAMBA_USERS,
  startSambaForSuite,
  type SambaDomain,
} from '../../support/negotiate/samba-ad.ts';
import { needPeers, PEERS } from '../../support/peers.ts';

const attribute = (ticket: AcceptedTicket, name: string): AcceptedTicket['attributes'][number] => {
  const found = ticket.attributes.find((a) => a.name === name);
  if (!found) throw new Error(`no ${name} among ${ticket.attributes.map((a) => a.name).join(', ')}`);
  return found;
};

describeSamba('Kerberos from Active Directory: tickets, the PAC, sealed sessions', () => {
  let domain: SambaDomain | undefined;
  let unavailable = '';
  const sids = new Map<string, string>();
  const servers: EchoServer[] = [];
  const backends: GssapiBackend[] = [];

  const need = (ctx: TestContext): SambaDomain => {
    if (!domain) ctx.skip(`Samba AD could not start: ${unavailable}`);
    return domain!;
  };
  /** alice's (or another user's) ticket for host@<dns>, accepted with `keytab`. */
  const accept = async (
    user: keyof typeof SAMBA_USERS,
    dns: string,
    keytab: string,
    rc4 = false,
  ): Promise<AcceptedTicket> => {
    const { env } = await domain!.kinit(SAMBA_USERS[user].name, SAMBA_USERS[user].password, { rc4 });
    const token = await initiatorToken(dns, env);
    return acceptAndReadPac(keytab, dns, token);
  };

  beforeAll(async () => {
    ({ domain, unavailable } = await startSambaForSuite('Kerberos suite'));
    if (unavailable || domain === undefined) return;
    const { provisionMs, startMs } = domain.times;
    console.info(
      `[samba] DC ${domain.dcIp}: provision ${provisionMs === undefined ? 'cached' : `${provisionMs} ms`}, start ${startMs} ms`,
    );
    for (const name of ['alice', 'bob', 'idb-team', 'idb-readers', 'idb-all', 'idb-writers', 'Domain Users'])
      sids.set(name, await domain.sidOf(name));
  }, 240_000);

  afterAll(async () => {
    for (const s of servers) await s.close();
    for (const b of backends) b.close();
    await domain?.stop();
  });

  it('kinit works against the Samba KDC: AES256 tickets by default, RC4 session keys with the RC4 configuration, RC4 tickets for an RC4-only service', async (ctx) => {
    const d = need(ctx);
    const aes = await d.kinit('alice', SAMBA_USERS.alice.password);
    await d.exec('kvno', [`host/${SAMBA_DNS_IDENTITY}`, `host/${SAMBA_LEGACY_DNS}`], { env: aes.env });
    const klist = await d.exec('klist', ['-e'], { env: aes.env });
    const etypes = (service: string): string =>
      new RegExp(
        `${service.replace(/\./g, '\\.')}@${SAMBA_REALM}\\n\\s+renew until [^\\n]*Etype \\(skey, tkt\\): ([^\\n]+)`,
      )
        .exec(klist)?.[1]
        ?.trim() ?? klist;
    expect(etypes(`krbtgt/${SAMBA_REALM}`)).toBe('aes256-cts-hmac-sha1-96, aes256-cts-hmac-sha1-96');
    expect(etypes(`host/${SAMBA_DNS_IDENTITY}`)).toBe('aes256-cts-hmac-sha1-96, aes256-cts-hmac-sha1-96');
    expect(etypes(`host/${SAMBA_LEGACY_DNS}`)).toBe('DEPRECATED:arcfour-hmac, DEPRECATED:arcfour-hmac');

    const rc4 = await d.kinit('alice', SAMBA_USERS.alice.password, { rc4: true });
    await d.exec('kvno', [`host/${SAMBA_DNS_IDENTITY}`], { env: rc4.env });
    const klist4 = await d.exec('klist', ['-e'], { env: rc4.env });
    // The KDC encrypts a ticket in the service's strongest key; the session key follows the client's request.
    expect(klist4).toMatch(
      new RegExp(
        `host/${SAMBA_DNS_IDENTITY.replace(/\./g, '\\.')}@${SAMBA_REALM}\\n[^\\n]*Etype \\(skey, tkt\\): DEPRECATED:arcfour-hmac, aes256-cts-hmac-sha1-96`,
      ),
    );
  });

  it('the KDC refuses a wrong password, a disabled account and an expired password', async (ctx) => {
    const d = need(ctx);
    await expect(d.kinit('alice', 'Not-Her-Password1')).rejects.toThrow(/Password incorrect|Preauthentication failed/);
    await expect(d.kinit('carol', SAMBA_USERS.carol.password)).rejects.toThrow(/credentials have been revoked/);
    await expect(d.kinit('dave', SAMBA_USERS.dave.password)).rejects.toThrow(/Password expired/);
    await expect(d.kinit('nobody', 'Whatever-Pass1')).rejects.toThrow(/not found in Kerberos database/);
  });

  it("MIT exposes the PAC of an AES ticket, verified; pac.ts reads alice's SID and her groups, nested twice", async (ctx) => {
    const d = need(ctx);
    const ticket = await accept('alice', SAMBA_DNS_IDENTITY, d.keytab);
    expect(ticket.peer).toBe(`alice@${SAMBA_REALM}`);
    const names = ticket.attributes.map((a) => a.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'urn:mspac:',
        'urn:mspac:logon-info',
        'urn:mspac:client-info',
        'urn:mspac:upn-dns-info',
        'urn:mspac:server-checksum',
        'urn:mspac:privsvr-checksum',
      ]),
    );
    for (const a of ticket.attributes)
      expect({ name: a.name, authenticated: a.authenticated, complete: a.complete }).toEqual({
        name: a.name,
        authenticated: true,
        complete: true,
      });

    const info = decodeLogonInfo(attribute(ticket, 'urn:mspac:logon-info').value);
    const identity = pacIdentity(info);
    expect(identity).toMatchObject({
      account: `${SAMBA_DOMAIN}\\alice`,
      userName: 'alice',
      logonDomain: SAMBA_DOMAIN,
      logonDomainSid: d.domainSid,
      userSid: sids.get('alice'),
      primaryGroupSid: sids.get('Domain Users'),
    });
    // idb-team directly, idb-readers through idb-team, idb-all (universal) through idb-readers: the KDC expanded them.
    expect(identity.groupSids).toEqual(
      expect.arrayContaining([
        sids.get('Domain Users'),
        sids.get('idb-team'),
        sids.get('idb-readers'),
        sids.get('idb-all'),
      ]),
    );
    expect(identity.groupSids).not.toContain(sids.get('idb-writers'));
    expect(identity.disabledGroupSids).toEqual([]);
    expect(info.logonServer).toBe('DC1');
    // The whole PAC gives the same, and UPN_DNS_INFO names the realm.
    expect(identityFromPac(attribute(ticket, 'urn:mspac:').value)).toEqual(identity);
    expect(decodeUpnDnsInfo(attribute(ticket, 'urn:mspac:upn-dns-info').value)).toMatchObject({
      upn: `alice@${SAMBA_REALM.toLowerCase()}`,
      dnsDomainName: SAMBA_REALM,
      samName: 'alice',
      sid: sids.get('alice'),
    });
    console.info(
      `[samba] alice's PAC: GroupIds ${info.groupIds.map((g) => g.relativeId).join(',')}, ExtraSids ${info.extraSids.map((s) => s.sid).join(',')}, UserFlags 0x${info.userFlags.toString(16)}`,
    );
  });

  it("a domain local group: bob's idb-writers is in his PAC", async (ctx) => {
    const d = need(ctx);
    const ticket = await accept('bob', SAMBA_DNS_IDENTITY, d.keytab);
    const info = decodeLogonInfo(attribute(ticket, 'urn:mspac:logon-info').value);
    const identity = pacIdentity(info);
    expect(identity.userSid).toBe(sids.get('bob'));
    expect(identity.groupSids).toContain(sids.get('idb-writers'));
    expect(identity.groupSids).not.toContain(sids.get('idb-team'));
    const where = info.groupIds.some((g) => `${d.domainSid}-${g.relativeId}` === sids.get('idb-writers'))
      ? 'GroupIds'
      : info.extraSids.some((s) => s.sid === sids.get('idb-writers'))
        ? 'ExtraSids'
        : 'ResourceGroupIds';
    console.info(
      `[samba] bob's domain local group idb-writers is in ${where}; UserFlags 0x${info.userFlags.toString(16)} (ExtraSids ${(info.userFlags & UserFlag.ExtraSids) !== 0}, resource groups ${(info.userFlags & UserFlag.ResourceGroups) !== 0})`,
    );
  });

  it('an RC4 ticket (RC4-only service) carries a PAC that MIT verifies too', async (ctx) => {
    const d = need(ctx);
    const ticket = await accept('alice', SAMBA_LEGACY_DNS, d.legacyKeytab);
    const logonInfo = attribute(ticket, 'urn:mspac:logon-info');
    expect(logonInfo.authenticated).toBe(true);
    expect(pacIdentity(decodeLogonInfo(logonInfo.value)).groupSids).toContain(sids.get('idb-all'));
  });

  it('a ticket for another SPN is refused by the acceptor (host/legacy presented to host/idb)', async (ctx) => {
    const d = need(ctx);
    const { env } = await d.kinit('alice', SAMBA_USERS.alice.password);
    const token = await initiatorToken(SAMBA_LEGACY_DNS, env);
    let error: unknown;
    try {
      acceptAndReadPac(d.keytab, SAMBA_DNS_IDENTITY, token);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GssError);
    expect((error as GssError).message).toMatch(
      /Wrong principal|not found in keytab|No key table entry|Cannot find key/,
    );
  });

  describe.skipIf(needPeers('samba Kerberos sealed sessions', PEERS.gssInitiators))(
    'NegotiateStream through the bridge (GssapiBackend) with Samba tickets',
    () => {
      const session = async (d: SambaDomain, dns: string, keytab: string, rc4: boolean): Promise<void> => {
        const backend = new GssapiBackend({
          keytab,
          dnsIdentity: dns,
          replayCache: `file2:${d.dir}/rcache-${dns}-${rc4}`,
        });
        backends.push(backend);
        const server = await startNegotiateEcho({ backends: [backend], protectionLevel: 'EncryptAndSign' });
        servers.push(server);
        const { env } = await d.kinit('alice', SAMBA_USERS.alice.password, { rc4 });
        const result = await runNnsClient(
          server.port,
          'echo',
          ['--krb5', '--target', `host@${dns}`, '--dotnet-flags', '--message', '68656c6c6f', '--pattern', '70000'],
          env,
        );
        expect(result).toMatchObject({ result: 'ok', encrypted_flag: true, mutual: true });
        expect(result.replies?.[0]).toBe('68656c6c6f');
        await server.closedCount(1);
        const peer = server.connections[0]!.peer!;
        expect(peer).toMatchObject({
          name: `alice@${SAMBA_REALM}`,
          mechanism: OID.kerberos,
          protectionLevel: 'EncryptAndSign',
        });
        // The backend read the verified PAC on the peer's name: alice's SID first, then her groups, nested ones included.
        expect(peer.sids[0]).toBe(sids.get('alice'));
        expect(peer.sids).toEqual(
          expect.arrayContaining(['Domain Users', 'idb-team', 'idb-readers', 'idb-all'].map((g) => sids.get(g))),
        );
        expect(peer.sids).not.toContain(sids.get('idb-writers'));
        expect(server.connections[0]!.failure).toBeUndefined();
      };

      it('an AES256 ticket: a sealed session as alice@SAMDOM.TEST', async (ctx) => {
        const d = need(ctx);
        await session(d, SAMBA_DNS_IDENTITY, d.keytab, false);
      });

      it('an RC4 session key on an AES ticket: a sealed session', async (ctx) => {
        const d = need(ctx);
        await session(d, SAMBA_DNS_IDENTITY, d.keytab, true);
      });

      it('an RC4 ticket (RC4-only service account): a sealed session', async (ctx) => {
        const d = need(ctx);
        await session(d, SAMBA_LEGACY_DNS, d.legacyKeytab, true);
      });
    },
  );
});
