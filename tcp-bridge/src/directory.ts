/**
 * The roles' directory (the core's AccountDirectory port, src/idb/roles.ts) on Active Directory: the roles file's
 * `DOMAIN\name` entries resolved to SIDs over LDAP (negotiate/ad-groups.ts) with the BRIDGE_LDAP_* settings, at start
 * and every BRIDGE_LDAP_REFRESH_MS. The roles then match those SIDs against what each logon carried (the PAC, winbind).
 *
 * Decisions:
 * - The bind password comes from a secret file (chmod 600, negotiate/secret-file.ts), one line; a trailing newline is
 *   not part of it.
 * - Names of the directory's domain must all resolve at start (a typo stops the bridge instead of silently denying);
 *   names of other domains (local NTLM accounts, another realm's principals) keep matching by name only and are
 *   listed in the log once.
 * - A refresh that fails keeps the last answer (ad-groups.ts), logged as a warning: an unreachable DC does not take
 *   roles away, and Kerberos logons do not need the DC anyway.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { ConfigError, type Logger, type Roles } from '#idb';
import type { LdapSettings } from './config.ts';
import { AdGroupResolver, AdGroupsError } from './negotiate/ad-groups.ts';
import { checkSecretFile } from './negotiate/secret-file.ts';

export interface RolesDirectory {
  /** The roles with the directory attached. */
  roles: Roles;
  /** Stops the refreshes. */
  close(): void;
}

/**
 * Resolves `roles.accountNames` in the directory of `settings`; throws ConfigError when a setting's file cannot be
 * read, LDAP cannot be reached or bound to, or a name of the directory's domain is not there. `tls` adds TLS options
 * (a `servername` when the URL names the DC by address).
 */
export async function openRolesDirectory(
  settings: LdapSettings,
  roles: Roles,
  logger: Logger,
  tls: ConnectionOptions = {},
): Promise<RolesDirectory> {
  checkSecretFile(settings.passwordFile, 'BRIDGE_LDAP_PASSWORD_FILE', 'the password of the LDAP bind account');
  const password = readFileSync(settings.passwordFile, 'utf8').replace(/\r?\n$/, '');
  if (password === '') throw new ConfigError(`BRIDGE_LDAP_PASSWORD_FILE: ${settings.passwordFile} is empty`);
  let ca: string | undefined;
  if (settings.caFile !== undefined) {
    try {
      ca = readFileSync(settings.caFile, 'utf8');
    } catch (error) {
      throw new ConfigError(
        `BRIDGE_LDAP_CA_FILE: cannot read ${settings.caFile} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      );
    }
  }
  let resolver: AdGroupResolver;
  try {
    resolver = await AdGroupResolver.start({
      url: settings.url,
      startTls: settings.startTls,
      bindDn: settings.bindDn,
      password,
      names: roles.accountNames,
      otherDomains: 'ignore',
      tlsOptions: { ...(ca === undefined ? {} : { ca }), ...tls },
      refreshMs: settings.refreshMs,
      logger: { warn: (event, fields) => logger.log('warn', event, fields) },
    });
  } catch (error) {
    if (error instanceof AdGroupsError) throw new ConfigError(`BRIDGE_LDAP_URL: ${error.message}`);
    throw error;
  }
  logger.log('info', 'roles: names resolved in Active Directory', {
    domain: resolver.domain.netbios,
    resolved: [...resolver.sids.keys()],
    ...(resolver.foreign.length > 0 ? { byNameOnly: resolver.foreign } : {}),
  });
  return { roles: roles.withDirectory(resolver), close: () => resolver.close() };
}
