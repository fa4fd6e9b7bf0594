/**
 * Settings of the tcp-bridge: IIDBService's (src/idb/config.ts, names from docs/contract/operations.md) plus the
 * connection limits WCF has as binding settings. Added here (docs/contract/operations.md allows more settings):
 * BRIDGE_INIT_TIMEOUT_MS (WCF's ChannelInitializationTimeout, 30 s), BRIDGE_IDLE_TIMEOUT_MS (WCF's ReceiveTimeout, 10
 * min), BRIDGE_SHUTDOWN_MS (how long a shutdown waits for calls in flight), BRIDGE_MAX_CALLS_PER_CONNECTION,
 * BRIDGE_NTLM_BACKEND (which NTLM acceptor checks BRIDGE_NTLM_USERS: `typescript`, the default, or `gssapi`,
 * gss-ntlmssp through the system GSSAPI), BRIDGE_MESSAGE_TIMEOUT_MS (how long one message may take to arrive, 2 min: a
 * 64 MiB message at 4.5 Mbit/s), BRIDGE_MAX_UNSENT_KB (a connection's unsent reply bytes beyond which it stops reading,
 * 1 MiB) and BRIDGE_SEND_TIMEOUT_MS (how long a client may take no reply bytes, 1 min: .NET's SendTimeout),
 * BRIDGE_KERBEROS_ONLY and BRIDGE_NTLM_ACCOUNTS (who may log on with NTLM: the NTLM relay defence),
 * BRIDGE_POLL_AFTER_REPLY_US (how long the event loop keeps polling after a reply to a chatty client, 200 µs), and for Active
 * Directory groups in the roles file BRIDGE_LDAP_URL, BRIDGE_LDAP_BIND_DN, BRIDGE_LDAP_PASSWORD_FILE,
 * BRIDGE_LDAP_CA_FILE and BRIDGE_LDAP_REFRESH_MS (see LdapSettings). BRIDGE_MAX_INFLIGHT_MB, BRIDGE_METRICS_PORT,
 * BRIDGE_METRICS_HOST and BRIDGE_NTLM_DOMAIN are docs/contract/operations.md's.
 *
 * The bridge's settings are read from the environment here only (main.ts hands over process.env; LOG_LEVEL is
 * #idb's): the Windows security backends (negotiate/) are made from this configuration. MIT's library reads its own
 * variables (KRB5_CONFIG, KRB5RCACHEDIR, …); of those the bridge looks at KRB5RCACHETYPE and KRB5RCACHENAME only, to
 * refuse Kerberos without a replay cache.
 */
import { ConfigError, type Environment, type IdbConfig, integer, readIdbConfig } from '#idb';
import { type NtlmPolicy, readNtlmPolicy } from './negotiate/ntlm-policy.ts';

export interface BridgeConfig extends IdbConfig {
  /** From accepting a connection to its PreambleEnd. */
  initTimeoutMs: number;
  /** A connection with no call in flight and no byte received for this long is closed. */
  idleTimeoutMs: number;
  shutdownMs: number;
  /** Calls of one connection worked on at once; reading pauses beyond (a client may pipeline calls on a channel). */
  maxCallsPerConnection: number;
  /** One envelope, from its size to its last byte (waiting for the in-flight budget included). */
  messageTimeoutMs: number;
  /** BRIDGE_MAX_INFLIGHT_MB: bytes of partly received envelopes across all connections. */
  maxInflightBytes: number;
  /** BRIDGE_MAX_UNSENT_KB: a connection's unsent reply bytes beyond which it reads and dispatches nothing more. */
  maxUnsentBytes: number;
  /** BRIDGE_SEND_TIMEOUT_MS: how long a client may take no reply bytes before it is disconnected (.NET SendTimeout). */
  sendTimeoutMs: number;
  /** BRIDGE_METRICS_PORT / BRIDGE_METRICS_HOST: where /metrics and /health are served; undefined: not served. */
  metrics: { host: string; port: number } | undefined;
  /** BRIDGE_NTLM_USERS: local NTLM accounts (Windows security). */
  ntlmUsersFile: string | undefined;
  /** BRIDGE_NTLM_BACKEND: who checks those accounts, negotiate/ntlm/ (`typescript`) or gss-ntlmssp (`gssapi`). */
  ntlmBackend: NtlmBackendKind;
  /** KRB5_KTNAME: the keytab for host/<dns identity> (Windows security with Kerberos). */
  keytab: string | undefined;
  /** BRIDGE_KERBEROS_ONLY / BRIDGE_NTLM_ACCOUNTS: who may log on with NTLM (negotiate/ntlm-policy.ts). */
  ntlmPolicy: NtlmPolicy;
  /** BRIDGE_NTLM_DOMAIN: the NetBIOS name (upper case) of the AD domain whose NTLM logons winbind checks. */
  ntlmDomain: string | undefined;
  /** BRIDGE_LDAP_*: where the roles file's `DOMAIN\name` entries are resolved to SIDs; undefined: not resolved. */
  ldap: LdapSettings | undefined;
  /**
   * BRIDGE_POLL_AFTER_REPLY_US (default 200, 0: never): how long the event loop keeps polling after a reply to a client
   * that called again within that time (reply-polling.ts), in ms.
   */
  pollAfterReplyMs: number;
  /** BRIDGE_MEX (default true): WS-MetadataExchange at `<endpoint>/mex`, unauthenticated, the WSDL only (mex.ts). */
  mex: boolean;
}

export type NtlmBackendKind = 'typescript' | 'gssapi';

/**
 * The directory the roles file's Active Directory names are resolved in (negotiate/ad-groups.ts): a simple bind as a
 * service account, never in clear: `ldaps://`, or `ldap://` upgraded with StartTLS before the bind.
 */
export interface LdapSettings {
  /** BRIDGE_LDAP_URL: `ldaps://dc.corp.example` or `ldap://dc.corp.example` (then StartTLS). */
  url: string;
  startTls: boolean;
  /** BRIDGE_LDAP_BIND_DN: the service account, `svc@corp.example`, `CORP\svc` or a DN. */
  bindDn: string;
  /** BRIDGE_LDAP_PASSWORD_FILE: its password, a secret file (chmod 600). */
  passwordFile: string;
  /** BRIDGE_LDAP_CA_FILE: PEM of the CA that signed the DCs' certificates; unset: the system's CAs. */
  caFile: string | undefined;
  /** BRIDGE_LDAP_REFRESH_MS: how often names are resolved again (a group re-created gets a new SID). 0: never. */
  refreshMs: number;
}

export function readBridgeConfig(env: Environment): BridgeConfig {
  const ntlmBackend = env.BRIDGE_NTLM_BACKEND || 'typescript';
  if (ntlmBackend !== 'typescript' && ntlmBackend !== 'gssapi') {
    throw new ConfigError(
      `BRIDGE_NTLM_BACKEND must be typescript (the built-in NTLMv2 acceptor) or gssapi (gss-ntlmssp through the system GSSAPI), not "${ntlmBackend}"`,
    );
  }
  const idb = readIdbConfig(env);
  const keytab = env.KRB5_KTNAME || undefined;
  if (idb.endpoint.security === 'windows' && keytab !== undefined)
    checkReplayCache(env.KRB5RCACHENAME, env.KRB5RCACHETYPE);
  const ntlmDomain = env.BRIDGE_NTLM_DOMAIN || undefined;
  if (ntlmDomain !== undefined) {
    if (!/^[A-Za-z0-9][A-Za-z0-9.-]{0,14}$/.test(ntlmDomain))
      throw new ConfigError(
        `BRIDGE_NTLM_DOMAIN must be the domain's NetBIOS name (CORP, at most 15 characters), not "${ntlmDomain}"`,
      );
    if (ntlmBackend === 'gssapi')
      throw new ConfigError(
        'BRIDGE_NTLM_DOMAIN is checked by the built-in NTLM acceptor: leave BRIDGE_NTLM_BACKEND unset (typescript)',
      );
  }
  return {
    ...idb,
    initTimeoutMs: integer(env, 'BRIDGE_INIT_TIMEOUT_MS', 30_000, 100, 600_000),
    idleTimeoutMs: integer(env, 'BRIDGE_IDLE_TIMEOUT_MS', 600_000, 100, 86_400_000),
    shutdownMs: integer(env, 'BRIDGE_SHUTDOWN_MS', 10_000, 0, 600_000),
    maxCallsPerConnection: integer(env, 'BRIDGE_MAX_CALLS_PER_CONNECTION', 16, 1, 1024),
    messageTimeoutMs: integer(env, 'BRIDGE_MESSAGE_TIMEOUT_MS', 120_000, 100, 3_600_000),
    maxInflightBytes: integer(env, 'BRIDGE_MAX_INFLIGHT_MB', 512, 1, 65_536) * 1024 * 1024,
    maxUnsentBytes: integer(env, 'BRIDGE_MAX_UNSENT_KB', 1024, 64, 1_048_576) * 1024,
    sendTimeoutMs: integer(env, 'BRIDGE_SEND_TIMEOUT_MS', 60_000, 100, 3_600_000),
    metrics: env.BRIDGE_METRICS_PORT
      ? { host: env.BRIDGE_METRICS_HOST || '127.0.0.1', port: integer(env, 'BRIDGE_METRICS_PORT', 0, 0, 65_535) }
      : undefined,
    ntlmUsersFile: env.BRIDGE_NTLM_USERS || undefined,
    ntlmBackend,
    ntlmPolicy: readNtlmPolicy(env.BRIDGE_KERBEROS_ONLY, env.BRIDGE_NTLM_ACCOUNTS),
    keytab,
    ntlmDomain: ntlmDomain?.toUpperCase(),
    ldap: readLdapSettings(env),
    mex: readSwitch(env, 'BRIDGE_MEX', true),
    pollAfterReplyMs: integer(env, 'BRIDGE_POLL_AFTER_REPLY_US', 200, 0, 10_000) / 1000,
  };
}

function readLdapSettings(env: Environment): LdapSettings | undefined {
  const url = env.BRIDGE_LDAP_URL || undefined;
  if (url === undefined) {
    const stray = [
      'BRIDGE_LDAP_BIND_DN',
      'BRIDGE_LDAP_PASSWORD_FILE',
      'BRIDGE_LDAP_CA_FILE',
      'BRIDGE_LDAP_REFRESH_MS',
    ].filter((name) => env[name]);
    if (stray.length > 0) throw new ConfigError(`${stray.join(', ')} without BRIDGE_LDAP_URL`);
    return undefined;
  }
  const protocol = /^(ldaps?):\/\/[^/]/i.exec(url)?.[1]?.toLowerCase();
  if (protocol === undefined)
    throw new ConfigError(
      `BRIDGE_LDAP_URL must be ldaps://host[:port] or ldap://host[:port] (then StartTLS), not "${url}"`,
    );
  const bindDn = env.BRIDGE_LDAP_BIND_DN || undefined;
  const passwordFile = env.BRIDGE_LDAP_PASSWORD_FILE || undefined;
  if (bindDn === undefined || passwordFile === undefined)
    throw new ConfigError(
      'BRIDGE_LDAP_URL needs BRIDGE_LDAP_BIND_DN and BRIDGE_LDAP_PASSWORD_FILE (a service account and its password)',
    );
  return {
    url,
    startTls: protocol === 'ldap',
    bindDn,
    passwordFile,
    caFile: env.BRIDGE_LDAP_CA_FILE || undefined,
    refreshMs: integer(env, 'BRIDGE_LDAP_REFRESH_MS', 900_000, 0, 86_400_000),
  };
}

/**
 * Kerberos without a replay cache would accept a replayed AP-REQ: a replay cache `name` (KRB5RCACHENAME, or the
 * GSSAPI backend's `replayCache`) of type `none:`, or KRB5RCACHETYPE=none, is a ConfigError.
 */
export function checkReplayCache(name: string | undefined, type?: string): void {
  if (type === 'none' || (name !== undefined && /^none:/i.test(name))) {
    throw new ConfigError('Kerberos needs its replay cache: unset KRB5RCACHETYPE=none / KRB5RCACHENAME=none:');
  }
}

function readSwitch(env: Environment, name: string, fallback: boolean): boolean {
  const value = env[name]?.trim().toLowerCase();
  if (value === undefined || value === '') return fallback;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new ConfigError(`${name} must be true or false, not "${env[name]}"`);
}
