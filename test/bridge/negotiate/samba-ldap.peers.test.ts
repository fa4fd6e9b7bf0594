/**
 * ad-groups.ts against a Samba AD DC (test/support/negotiate/samba-ad.ts): `DOMAIN\Group` names (and users') resolved
 * to the SIDs the PAC carries, over LDAPS and over LDAP with StartTLS, with a simple bind as the service account
 * svc-idb; other domains' names refused or left unresolved; the refusals (a cleartext simple bind, a wrong password, a
 * disabled account, an untrusted certificate, a group that does not exist, a group of another domain); the refresh
 * (a group re-created gets its new SID, a deleted one is dropped, an unreachable DC keeps the last answer).
 *
 * Skipped with a message where Samba cannot start (see samba-ad.ts).
 */
import { Client } from 'ldapts';
import { afterAll, beforeAll, expect, it, type TestContext } from 'vitest';
import {
  AdGroupResolver,
  AdGroupsError,
  groupKey,
  resolveGroups,
  type AdGroupResolverOptions,
} from '../../../tcp-bridge/src/negotiate/ad-groups.ts';
import {
  describeSamba,
  SAMBA_DC_HOST,
  SAMBA_USERS,
  startSambaForSuite,
  type SambaDomain,
} from '../../support/negotiate/samba-ad.ts';

describeSamba('AD group names to SIDs over LDAP (ad-groups.ts, ldapts)', () => {
  let domain: SambaDomain | undefined;
  let unavailable = '';
  const sids = new Map<string, string>();
  const resolvers: AdGroupResolver[] = [];
  const warnings: Array<{ event: string; fields: Record<string, unknown> }> = [];

  const need = (ctx: TestContext): SambaDomain => {
    if (!domain) ctx.skip(`Samba AD could not start: ${unavailable}`);
    return domain!;
  };
  const options = (d: SambaDomain, extra: Partial<AdGroupResolverOptions> = {}): AdGroupResolverOptions => ({
    url: d.ldapsUrl,
    bindDn: 'svc-idb@samdom.test',
    password: SAMBA_USERS.svcIdb.password,
    names: ['SAMDOM\\idb-team'],
    // The DC's certificate names dc1.samdom.test and is signed by the CA samba generated at its first start.
    tlsOptions: { ca: d.caPem, servername: SAMBA_DC_HOST },
    refreshMs: 0,
    logger: { warn: (event, fields) => warnings.push({ event, fields }) },
    ...extra,
  });
  const samba = (d: SambaDomain, args: string[]): Promise<string> =>
    d.exec('samba-tool', [
      ...args,
      '-H',
      `ldap://${d.dcIp}`,
      `-U${SAMBA_USERS.admin.name}%${SAMBA_USERS.admin.password}`,
    ]);

  beforeAll(async () => {
    ({ domain, unavailable } = await startSambaForSuite('LDAP suite'));
    if (unavailable || domain === undefined) return;
    for (const name of ['idb-team', 'idb-readers', 'idb-all', 'idb-writers', 'Domain Users'])
      sids.set(name, await domain.sidOf(name));
  }, 240_000);

  afterAll(async () => {
    for (const r of resolvers) r.close();
    await domain?.stop();
  });

  it('resolves DOMAIN\\Group names (any case) to the SIDs of the PAC over LDAPS, with the domain read from the directory', async (ctx) => {
    const d = need(ctx);
    const names = [
      'SAMDOM\\idb-team',
      'samdom\\IDB-Readers',
      'SAMDOM\\idb-all',
      'SAMDOM\\idb-writers',
      'SAMDOM\\Domain Users',
    ];
    const resolver = await AdGroupResolver.start(options(d, { names }));
    resolvers.push(resolver);
    expect(resolver.domain).toEqual({ netbios: 'SAMDOM', sid: d.domainSid });
    expect(names.map((n) => resolver.sidOf(n))).toEqual(
      ['idb-team', 'idb-readers', 'idb-all', 'idb-writers', 'Domain Users'].map((n) => sids.get(n)),
    );
    expect(resolver.sidOf('SAMDOM\\IDB-TEAM ')).toBe(sids.get('idb-team'));
    expect(resolver.sidOf('SAMDOM\\unknown')).toBeUndefined();
    expect(resolver.sidOf('not a group name')).toBeUndefined();
  });

  it('over LDAP with StartTLS, binding as SAMDOM\\svc-idb', async (ctx) => {
    const d = need(ctx);
    const resolution = await resolveGroups({
      ...options(d),
      url: d.ldapUrl,
      startTls: true,
      bindDn: 'SAMDOM\\svc-idb',
    });
    expect(resolution.sids.get(groupKey('SAMDOM\\idb-team'))).toBe(sids.get('idb-team'));
  });

  it('refuses a cleartext simple bind itself, and the DC refuses it too (strong authentication required)', async (ctx) => {
    const d = need(ctx);
    await expect(resolveGroups({ ...options(d), url: d.ldapUrl })).rejects.toThrow(
      /use ldaps:\/\/, or ldap:\/\/ with StartTLS/,
    );
    const client = new Client({ url: d.ldapUrl, timeout: 5000, connectTimeout: 5000 });
    try {
      await expect(client.bind('svc-idb@samdom.test', SAMBA_USERS.svcIdb.password)).rejects.toThrow(
        /Transport encryption required|strong/i,
      );
    } finally {
      await client.unbind().catch(() => undefined);
    }
  });

  it('refuses a wrong password, a disabled account, a certificate of another CA', async (ctx) => {
    const d = need(ctx);
    await expect(resolveGroups({ ...options(d), password: 'Wrong-Pass1' })).rejects.toThrow(
      /bind as svc-idb@samdom.test: InvalidCredentialsError/,
    );
    await expect(
      resolveGroups({ ...options(d), bindDn: 'carol@samdom.test', password: SAMBA_USERS.carol.password }),
    ).rejects.toThrow(/InvalidCredentialsError/);
    await expect(resolveGroups({ ...options(d), tlsOptions: { servername: SAMBA_DC_HOST } })).rejects.toThrow(
      /self[- ]signed|unable to verify|certificate/i,
    );
    await expect(
      resolveGroups({ ...options(d), tlsOptions: { ca: d.caPem, servername: 'other.samdom.test' } }),
    ).rejects.toThrow(/altnames|Hostname|does not match/i);
  });

  it("resolves users too (a user's own SID is in her PAC); with otherDomains: 'ignore' other domains' names are left unresolved", async (ctx) => {
    const d = need(ctx);
    const resolver = await AdGroupResolver.start(
      options(d, { names: ['SAMDOM\\alice', 'SAMDOM\\idb-team', 'TESTDOM\\local'], otherDomains: 'ignore' }),
    );
    resolvers.push(resolver);
    expect(resolver.sidOf('SAMDOM\\Alice')).toBe(await d.sidOf('alice'));
    expect(resolver.sidOf('SAMDOM\\idb-team')).toBe(sids.get('idb-team'));
    expect(resolver.sidOf('TESTDOM\\local')).toBeUndefined();
    expect(resolver.foreign).toEqual(['testdom\\local']);
  });

  it('at start, a group that does not exist or of another domain stops it', async (ctx) => {
    const d = need(ctx);
    await expect(
      AdGroupResolver.start(options(d, { names: ['SAMDOM\\idb-team', 'SAMDOM\\idb-typo'] })),
    ).rejects.toThrow(/no group or user "samdom\\idb-typo"/);
    await expect(AdGroupResolver.start(options(d, { names: ['OTHER\\idb-team'] }))).rejects.toThrow(AdGroupsError);
    await expect(AdGroupResolver.start(options(d, { names: ['SAMDOM\\*)(objectClass=*'] }))).rejects.toThrow(
      /no group or user/,
    );
  });

  it('refresh: a re-created group gets its new SID, a deleted one is dropped, an unreachable DC keeps the last answer', async (ctx) => {
    const d = need(ctx);
    await samba(d, ['group', 'add', 'idb-temp']);
    await samba(d, ['group', 'add', 'idb-gone']);
    const resolver = await AdGroupResolver.start(
      options(d, { names: ['SAMDOM\\idb-temp', 'SAMDOM\\idb-gone', 'SAMDOM\\idb-team'] }),
    );
    resolvers.push(resolver);
    const before = resolver.sidOf('SAMDOM\\idb-temp');
    expect(before).toMatch(/^S-1-5-21-/);
    await samba(d, ['group', 'delete', 'idb-temp']);
    await samba(d, ['group', 'add', 'idb-temp']);
    await samba(d, ['group', 'delete', 'idb-gone']);
    warnings.length = 0;
    await resolver.refresh();
    const after = resolver.sidOf('SAMDOM\\idb-temp');
    expect(after).toMatch(/^S-1-5-21-/);
    expect(after).not.toBe(before);
    expect(resolver.sidOf('SAMDOM\\idb-gone')).toBeUndefined();
    expect(warnings.map((w) => w.event).sort()).toEqual(['ad-groups.changed', 'ad-groups.gone']);

    // The DC stops: the refresh fails, is logged, and the last answer stays.
    await d.stop();
    domain = undefined;
    unavailable = 'stopped by the refresh test';
    warnings.length = 0;
    await resolver.refresh();
    expect(warnings.map((w) => w.event)).toEqual(['ad-groups.refresh-failed']);
    expect(resolver.sidOf('SAMDOM\\idb-team')).toBe(sids.get('idb-team'));
  }, 60_000);
});
