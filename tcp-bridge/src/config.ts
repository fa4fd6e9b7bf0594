/**
 * Settings of the tcp-bridge: IIDBService's (src/idb/config.ts, names from spec/RUN.md) plus the connection limits
 * WCF has as binding settings. Added here (RUN.md allows more settings): BRIDGE_INIT_TIMEOUT_MS (WCF's
 * ChannelInitializationTimeout, 30 s), BRIDGE_IDLE_TIMEOUT_MS (WCF's ReceiveTimeout, 10 min), BRIDGE_SHUTDOWN_MS (how
 * long a shutdown waits for calls in flight), BRIDGE_MAX_CALLS_PER_CONNECTION, BRIDGE_NTLM_BACKEND (which NTLM acceptor
 * checks BRIDGE_NTLM_USERS: `typescript`, the default, or `gssapi`, gss-ntlmssp through the system GSSAPI),
 * BRIDGE_MESSAGE_TIMEOUT_MS (how long one message may take to arrive, 2 min: a 64 MiB message at 4.5 Mbit/s).
 * BRIDGE_MAX_INFLIGHT_MB, BRIDGE_METRICS_PORT and BRIDGE_METRICS_HOST are RUN.md's.
 *
 * The bridge's settings are read from the environment here only (main.ts hands over process.env; LOG_LEVEL is
 * #idb's): the Windows security backends (negotiate/) are made from this configuration. MIT's library reads its own
 * variables (KRB5_CONFIG, KRB5RCACHEDIR, …); of those the bridge looks at KRB5RCACHETYPE and KRB5RCACHENAME only, to
 * refuse Kerberos without a replay cache.
 */
import { ConfigError, type Environment, type IdbConfig, integer, readIdbConfig } from '#idb';

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
  /** BRIDGE_METRICS_PORT / BRIDGE_METRICS_HOST: where /metrics and /health are served; undefined: not served. */
  metrics: { host: string; port: number } | undefined;
  /** BRIDGE_NTLM_USERS: local NTLM accounts (Windows security). */
  ntlmUsersFile: string | undefined;
  /** BRIDGE_NTLM_BACKEND: who checks those accounts, negotiate/ntlm/ (`typescript`) or gss-ntlmssp (`gssapi`). */
  ntlmBackend: NtlmBackendKind;
  /** KRB5_KTNAME: the keytab for host/<dns identity> (Windows security with Kerberos). */
  keytab: string | undefined;
}

export type NtlmBackendKind = 'typescript' | 'gssapi';

export function readBridgeConfig(env: Environment): BridgeConfig {
  const ntlmBackend = env.BRIDGE_NTLM_BACKEND || 'typescript';
  if (ntlmBackend !== 'typescript' && ntlmBackend !== 'gssapi') {
    throw new ConfigError(`BRIDGE_NTLM_BACKEND must be typescript (the built-in NTLMv2 acceptor) or gssapi (gss-ntlmssp through the system GSSAPI), not "${ntlmBackend}"`);
  }
  const idb = readIdbConfig(env);
  const keytab = env.KRB5_KTNAME || undefined;
  if (idb.endpoint.security === 'windows' && keytab !== undefined) checkReplayCache(env.KRB5RCACHENAME, env.KRB5RCACHETYPE);
  return {
    ...idb,
    initTimeoutMs: integer(env, 'BRIDGE_INIT_TIMEOUT_MS', 30_000, 100, 600_000),
    idleTimeoutMs: integer(env, 'BRIDGE_IDLE_TIMEOUT_MS', 600_000, 100, 86_400_000),
    shutdownMs: integer(env, 'BRIDGE_SHUTDOWN_MS', 10_000, 0, 600_000),
    maxCallsPerConnection: integer(env, 'BRIDGE_MAX_CALLS_PER_CONNECTION', 16, 1, 1024),
    messageTimeoutMs: integer(env, 'BRIDGE_MESSAGE_TIMEOUT_MS', 120_000, 100, 3_600_000),
    maxInflightBytes: integer(env, 'BRIDGE_MAX_INFLIGHT_MB', 512, 1, 65_536) * 1024 * 1024,
    metrics: env.BRIDGE_METRICS_PORT ? { host: env.BRIDGE_METRICS_HOST || '127.0.0.1', port: integer(env, 'BRIDGE_METRICS_PORT', 0, 0, 65_535) } : undefined,
    ntlmUsersFile: env.BRIDGE_NTLM_USERS || undefined,
    ntlmBackend,
    keytab,
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
