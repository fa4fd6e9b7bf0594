/**
 * Active Directory group (and user) names to SIDs, over LDAP (ldapts): the roles file may name `DOMAIN\Group`, a
 * logon carries SIDs (the Kerberos PAC through pac.ts, winbind for NTLM through winbind.ts), and this module connects
 * the two. ../directory.ts wires it to the roles.
 * Membership itself is never read here: the domain controller puts it in the PAC (nested groups expanded) at each
 * logon, so a user added to a group gets the role at their next logon without the bridge asking anything. What LDAP
 * answers is only which SID a name stands for, which changes when a group is deleted and re-created or renamed:
 * hence a refresh on an interval.
 *
 * Plugging it in (once, at start; it throws AdGroupsError when a name cannot be resolved or LDAP cannot be reached):
 *
 *   const groups = await AdGroupResolver.start({ url: 'ldaps://dc1.corp.example', bindDn: 'svc-idb-bridge@corp.example',
 *     password, names: ['CORP\\IDB Readers', 'CORP\\IDB Writers'], tlsOptions: { ca } });
 *   groups.sidOf('CORP\\IDB Readers')   // 'S-1-5-21-…-1110', or undefined once the group is gone
 *   ... on shutdown: groups.close();
 *
 * Decisions:
 * - One domain: the one the service account binds to. Its NetBIOS name (the `DOMAIN` of `DOMAIN\Group`) is read from
 *   the crossRef of its naming context (CN=Partitions of the configuration naming context, nETBIOSName); a name with
 *   another domain part is refused at start (trusted domains are not resolved here: write their SIDs), unless
 *   `otherDomains: 'ignore'` (the roles file also names local NTLM accounts and Kerberos principals of other realms,
 *   which match by name): then it is left unresolved and listed in `foreign`. Names are matched case-insensitively on
 *   sAMAccountName among groups and users (objectClass group or user: a user's own SID is in their PAC too, so
 *   `CORP\alice` matches alice however she logs on), the filter built by ldapts' EqualityFilter (escaped), so a name
 *   cannot inject filter syntax.
 * - Bind: a simple bind with a service account (a UPN `svc@corp.example`, `DOMAIN\svc` or a DN) over LDAPS, or over
 *   LDAP with StartTLS (`startTls: true`); a plain ldap:// URL without StartTLS is refused, because AD answers a
 *   cleartext simple bind only when it does not require signing and the password would cross the network readable.
 *   Kerberos (SASL GSS-SPNEGO/GSSAPI) binds are not done: ldapts 8 sends SASL credentials as a string in one round
 *   trip and gives no access to the server's SASL credentials, which a GSSAPI bind needs (a bind of our own over
 *   ldapts' BER classes and the GSSAPI initiator would be required).
 * - Every refresh opens a connection, binds, searches and unbinds: no idle connection for the DC to drop. At start
 *   every name must resolve (a typo must not silently deny). At a refresh, a name that no longer resolves is dropped
 *   (its role is no longer granted through it) and logged; when LDAP cannot be reached or the bind fails, the last
 *   good answer is kept and the failure is logged, until it succeeds again.
 * - The password is held in memory for the refreshes; it comes from a file readable by the bridge's user only (the
 *   caller checks the mode, as for the keytab).
 */
import type { ConnectionOptions } from 'node:tls';
import { AndFilter, Client, EqualityFilter, OrFilter, type Entry } from 'ldapts';
import { SidError, sidToString } from './sid.ts';

export class AdGroupsError extends Error {
  override readonly name = 'AdGroupsError';
}

export interface AdGroupsLogger {
  warn(event: string, fields: Record<string, unknown>): void;
}

export interface AdGroupResolverOptions {
  /** `ldaps://host[:port]`, or `ldap://host[:port]` with `startTls`. */
  url: string;
  /** The service account: `svc@corp.example`, `CORP\svc` or its DN. */
  bindDn: string;
  password: string;
  /** `DOMAIN\Group` (or `DOMAIN\user`) names to resolve. */
  names: readonly string[];
  /** A name of another domain: refused (the default), or left unresolved (listed in `foreign`). */
  otherDomains?: 'refuse' | 'ignore';
  /** Upgrade an ldap:// connection with StartTLS before binding. */
  startTls?: boolean;
  /** TLS options (the DC's CA in `ca`, `servername` when the URL names an address). */
  tlsOptions?: ConnectionOptions;
  /** The domain's naming context; default: the RootDSE's defaultNamingContext. */
  baseDn?: string;
  /** Between refreshes. Default 15 minutes; 0: no refresh. */
  refreshMs?: number;
  /** Per LDAP operation and for connecting. Default 10 s. */
  timeoutMs?: number;
  logger?: AdGroupsLogger;
}

/** `DOMAIN\Group` as a key: trimmed, domain and group lower-cased (Windows compares both case-insensitively). */
export function groupKey(name: string): string {
  const match = /^\s*([^\\\s][^\\]*)\\([^\\]+?)\s*$/.exec(name);
  if (!match) throw new AdGroupsError(`"${name}" is not DOMAIN\\Group`);
  return `${match[1]!.trim().toLowerCase()}\\${match[2]!.toLowerCase()}`;
}

/** What one resolution found: the domain's NetBIOS name and SID, and the SID of each name found. */
export interface Resolution {
  netbiosDomain: string;
  domainSid: string;
  baseDn: string;
  /** groupKey(name) → SID, for the names found. */
  sids: Map<string, string>;
  /** groupKey of the names asked for and not found. */
  missing: string[];
  /** groupKey of the names of other domains, left unresolved (`otherDomains: 'ignore'`). */
  foreign: string[];
}

/** Connects, binds, resolves `names` once, unbinds. Throws AdGroupsError (names of another domain, LDAP failures). */
export async function resolveGroups(
  options: Omit<AdGroupResolverOptions, 'refreshMs' | 'logger'>,
): Promise<Resolution> {
  const url = new URL(options.url);
  if (url.protocol !== 'ldaps:' && !(url.protocol === 'ldap:' && options.startTls)) {
    throw new AdGroupsError(
      `${options.url}: use ldaps://, or ldap:// with StartTLS: a simple bind must not cross the network in clear`,
    );
  }
  const timeout = options.timeoutMs ?? 10_000;
  // tlsOptions go to the constructor for ldaps:// only: ldapts 8 given them with ldap:// breaks the StartTLS upgrade
  // (the DC resets the connection).
  const client = new Client({
    url: options.url,
    timeout,
    connectTimeout: timeout,
    ...(url.protocol === 'ldaps:' ? { tlsOptions: options.tlsOptions } : {}),
  });
  const step = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw new AdGroupsError(
        `${options.url}: ${what}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
      );
    }
  };
  try {
    if (url.protocol === 'ldap:') await step('StartTLS', () => client.startTLS(options.tlsOptions ?? {}));
    await step(`bind as ${options.bindDn}`, () => client.bind(options.bindDn, options.password));
    const root = await step('RootDSE', () =>
      client.search('', {
        scope: 'base',
        filter: '(objectClass=*)',
        attributes: ['defaultNamingContext', 'configurationNamingContext'],
      }),
    );
    const baseDn = options.baseDn ?? first(root.searchEntries[0], 'defaultNamingContext');
    const configDn = first(root.searchEntries[0], 'configurationNamingContext');
    if (!baseDn || !configDn)
      throw new AdGroupsError(
        `${options.url}: the RootDSE names no default or configuration naming context (not Active Directory?)`,
      );
    const partitions = await step('crossRef', () =>
      client.search(`CN=Partitions,${configDn}`, {
        scope: 'one',
        filter: new AndFilter({
          filters: [
            new EqualityFilter({ attribute: 'objectClass', value: 'crossRef' }),
            new EqualityFilter({ attribute: 'nCName', value: baseDn }),
          ],
        }),
        attributes: ['nETBIOSName'],
      }),
    );
    const netbiosDomain = first(partitions.searchEntries[0], 'nETBIOSName');
    if (!netbiosDomain) throw new AdGroupsError(`${options.url}: no NetBIOS name for ${baseDn}`);
    const domain = await step('domain SID', () =>
      client.search(baseDn, {
        scope: 'base',
        filter: '(objectClass=*)',
        attributes: ['objectSid'],
        explicitBufferAttributes: ['objectSid'],
      }),
    );
    const domainSid = sidOf(domain.searchEntries[0]);
    if (!domainSid) throw new AdGroupsError(`${options.url}: ${baseDn} has no objectSid`);

    const wanted = new Map<string, string>(); // sAMAccountName (lower) → key
    const foreign: string[] = [];
    for (const name of options.names) {
      const key = groupKey(name);
      const [domainPart, group] = key.split('\\') as [string, string];
      if (domainPart !== netbiosDomain.toLowerCase()) {
        if (options.otherDomains === 'ignore') {
          foreign.push(key);
          continue;
        }
        throw new AdGroupsError(
          `"${name}": the bind account's domain is ${netbiosDomain}; groups of other domains are not resolved (write their SID)`,
        );
      }
      wanted.set(group, key);
    }
    const sids = new Map<string, string>();
    const groups = [...wanted.keys()];
    for (let i = 0; i < groups.length; i += 50) {
      const chunk = groups.slice(i, i + 50);
      const found = await step('group search', () =>
        client.search(baseDn, {
          scope: 'sub',
          filter: new AndFilter({
            filters: [
              new OrFilter({
                filters: [
                  new EqualityFilter({ attribute: 'objectClass', value: 'group' }),
                  new EqualityFilter({ attribute: 'objectClass', value: 'user' }),
                ],
              }),
              new OrFilter({
                filters: chunk.map((g) => new EqualityFilter({ attribute: 'sAMAccountName', value: g })),
              }),
            ],
          }),
          attributes: ['sAMAccountName', 'objectSid'],
          explicitBufferAttributes: ['objectSid'],
          paged: { pageSize: 500 },
        }),
      );
      for (const entry of found.searchEntries) {
        const account = first(entry, 'sAMAccountName')?.toLowerCase();
        const key = account === undefined ? undefined : wanted.get(account);
        const sid = sidOf(entry);
        if (key !== undefined && sid !== undefined) sids.set(key, sid);
      }
    }
    return {
      netbiosDomain,
      domainSid,
      baseDn,
      sids,
      missing: [...wanted.values()].filter((k) => !sids.has(k)),
      foreign,
    };
  } finally {
    await client.unbind().catch(() => undefined);
  }
}

/** Names to SIDs, resolved at start and on an interval. */
export class AdGroupResolver {
  private current: Resolution;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private closed = false;

  private constructor(
    private readonly options: AdGroupResolverOptions,
    first: Resolution,
  ) {
    this.current = first;
    const every = options.refreshMs ?? 15 * 60_000;
    if (every > 0) {
      this.timer = setInterval(() => void this.refresh(), every);
      this.timer.unref();
    }
  }

  /** Resolves every name once; throws AdGroupsError when one is not found or LDAP fails. */
  static async start(options: AdGroupResolverOptions): Promise<AdGroupResolver> {
    const resolution = await resolveGroups(options);
    if (resolution.missing.length > 0) {
      throw new AdGroupsError(
        `no group or user ${resolution.missing.map((k) => `"${k}"`).join(', ')} in ${resolution.netbiosDomain} (${resolution.baseDn})`,
      );
    }
    return new AdGroupResolver(options, resolution);
  }

  /** The SID of `DOMAIN\Group`, undefined when it is not (or no longer) known. */
  sidOf(name: string): string | undefined {
    let key: string;
    try {
      key = groupKey(name);
    } catch {
      return undefined;
    }
    return this.current.sids.get(key);
  }

  /** groupKey → SID, as of the last successful resolution. */
  get sids(): ReadonlyMap<string, string> {
    return this.current.sids;
  }

  /** The names of other domains left unresolved (`otherDomains: 'ignore'`). */
  get foreign(): readonly string[] {
    return this.current.foreign;
  }

  get domain(): { netbios: string; sid: string } {
    return { netbios: this.current.netbiosDomain, sid: this.current.domainSid };
  }

  /** Resolves again now (one at a time). A failure keeps the last answer and is logged, never thrown. */
  refresh(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.refreshing ??= (async () => {
      try {
        const next = await resolveGroups(this.options);
        for (const key of next.missing) {
          if (this.current.sids.has(key))
            this.options.logger?.warn('ad-groups.gone', { group: key, was: this.current.sids.get(key) });
        }
        for (const [key, sid] of next.sids) {
          const was = this.current.sids.get(key);
          if (was !== undefined && was !== sid)
            this.options.logger?.warn('ad-groups.changed', { group: key, was, now: sid });
        }
        if (!this.closed) this.current = next;
      } catch (error) {
        this.options.logger?.warn('ad-groups.refresh-failed', {
          error: error instanceof Error ? error.message : String(error),
        });
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** The first value of `attribute` (its name in any case) in `entry`. */
function firstValue(entry: Entry | undefined, attribute: string): Buffer | string | undefined {
  if (!entry) return undefined;
  const key = Object.keys(entry).find((k) => k.toLowerCase() === attribute.toLowerCase());
  const value = key === undefined ? undefined : entry[key];
  return Array.isArray(value) ? value[0] : value;
}

function first(entry: Entry | undefined, attribute: string): string | undefined {
  const one = firstValue(entry, attribute);
  return typeof one === 'string' ? one : Buffer.isBuffer(one) ? one.toString('utf8') : undefined;
}

function sidOf(entry: Entry | undefined): string | undefined {
  const one = firstValue(entry, 'objectSid');
  if (!Buffer.isBuffer(one)) return undefined;
  try {
    return sidToString(new Uint8Array(one));
  } catch (error) {
    if (error instanceof SidError) return undefined;
    throw error;
  }
}
