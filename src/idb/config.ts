/**
 * Settings of IIDBService (names from docs/contract/operations.md), read from whatever environment the runtime has. The
 * HTTP service reads the endpoint part to publish the WSDL; the tcp-bridge reads all of it.
 */
import { ConfigError, integer, type Environment } from '../config.ts';
import { readFilesConfig, type FilesConfig } from './files-url.ts';

export interface EndpointConfig {
  /** SERVICE_NAMESPACE: the namespace of the actions and of the WSDL's contract. */
  serviceNamespace: string;
  /** BRIDGE_SECURITY */
  security: 'windows' | 'none';
  /** BRIDGE_PROTECTION_LEVEL: what a Windows-secured client must use at least. */
  protectionLevel: 'EncryptAndSign' | 'Sign';
  /** BRIDGE_DNS_IDENTITY: the endpoint's DNS identity and the SPN's host part. */
  dnsIdentity: string;
  /**
   * The endpoint address the WSDL publishes: BRIDGE_PUBLIC_URL, else net.tcp://<dns
   * identity>:<BRIDGE_PORT>/IDBService.
   */
  address: string;
  port: number;
  host: string;
}

export interface DatabaseLimits {
  /** DB_STATEMENT_TIMEOUT_MS */
  statementTimeoutMs: number;
  /** DB_MAX_ROWS */
  maxRows: number;
  /** DB_REQUEST_IDLE_MS */
  requestIdleMs: number;
  /** DB_MAX_REQUESTS_PER_IDENTITY: open database requests one identity may hold (default 16). */
  maxRequestsPerIdentity: number;
}

export interface IdbConfig {
  endpoint: EndpointConfig;
  limits: DatabaseLimits;
  /**
   * DATABASE_URL, and DATABASE_URL_<NAME> for further logical databases a client can name in CreateDatabaseRequest
   * (names compared case-insensitively; `default` is DATABASE_URL).
   */
  databases: ReadonlyMap<string, string>;
  /**
   * DATABASE_PASSWORD / DATABASE_READER_PASSWORD (and `_<NAME>` for DATABASE_URL_<NAME>): passwords of a
   * sqlserver:// database's logins, by database name, for deployments that pass secrets in the environment.
   */
  databasePasswords: ReadonlyMap<string, { password?: string; readerPassword?: string }>;
  /** FILES_URL */
  files: FilesConfig;
  /** BRIDGE_ROLES_FILE: path of the roles file, undefined when unset (nobody authorized but for Heartbeat). */
  rolesFile: string | undefined;
  /** MAX_MESSAGE_MB in bytes. */
  maxMessageBytes: number;
  /** BRIDGE_MAX_CONNECTIONS */
  maxConnections: number;
}

export const DEFAULT_DATABASE_URL = 'file:./data/idb.sqlite';
export const DEFAULT_DATABASE = 'default';

const MiB = 1024 * 1024;

export function readEndpointConfig(env: Environment): EndpointConfig {
  const serviceNamespace = env.SERVICE_NAMESPACE || 'http://tempuri.org/';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a URI excludes the C0 controls and DEL (RFC 3986)
  if (!/^[a-z][a-z0-9+.-]*:[^\s<>"{}|\\^`\x00-\x1f\x7f]+$/i.test(serviceNamespace))
    throw new ConfigError(`SERVICE_NAMESPACE must be an absolute URI, not "${serviceNamespace}"`);
  const security = env.BRIDGE_SECURITY || 'windows';
  if (security !== 'windows' && security !== 'none')
    throw new ConfigError(`BRIDGE_SECURITY must be windows or none, not "${security}"`);
  const protectionLevel = env.BRIDGE_PROTECTION_LEVEL || 'EncryptAndSign';
  if (protectionLevel !== 'EncryptAndSign' && protectionLevel !== 'Sign')
    throw new ConfigError(`BRIDGE_PROTECTION_LEVEL must be EncryptAndSign or Sign, not "${protectionLevel}"`);
  const dnsIdentity = env.BRIDGE_DNS_IDENTITY || 'localhost';
  if (!/^[A-Za-z0-9.-]+$/.test(dnsIdentity))
    throw new ConfigError(`BRIDGE_DNS_IDENTITY must be a DNS name, not "${dnsIdentity}"`);
  const port = integer(env, 'BRIDGE_PORT', 8808, 0, 65535);
  const address = env.BRIDGE_PUBLIC_URL || `net.tcp://${dnsIdentity}:${port}/IDBService`;
  if (!/^net\.tcp:\/\/[^/\s]+\/\S*$/.test(address))
    throw new ConfigError(`BRIDGE_PUBLIC_URL must be net.tcp://host:port/IDBService, not "${address}"`);
  return {
    serviceNamespace,
    security,
    protectionLevel,
    dnsIdentity,
    address,
    port,
    host: env.BRIDGE_HOST || '127.0.0.1',
  };
}

export function readIdbConfig(env: Environment): IdbConfig {
  const databases = new Map<string, string>([[DEFAULT_DATABASE, env.DATABASE_URL || DEFAULT_DATABASE_URL]]);
  for (const [key, value] of Object.entries(env)) {
    const name = /^DATABASE_URL_([A-Za-z0-9_]+)$/.exec(key)?.[1]?.toLowerCase();
    if (name === undefined || !value) continue;
    if (name === DEFAULT_DATABASE)
      throw new ConfigError('DATABASE_URL_DEFAULT is not allowed: the default database is DATABASE_URL');
    databases.set(name, value);
  }
  const databasePasswords = new Map<string, { password?: string; readerPassword?: string }>();
  for (const name of databases.keys()) {
    const suffix = name === DEFAULT_DATABASE ? '' : `_${name.toUpperCase()}`;
    const password = env[`DATABASE_PASSWORD${suffix}`] || undefined;
    const readerPassword = env[`DATABASE_READER_PASSWORD${suffix}`] || undefined;
    if (password !== undefined || readerPassword !== undefined)
      databasePasswords.set(name, { password, readerPassword });
  }
  return {
    endpoint: readEndpointConfig(env),
    limits: {
      statementTimeoutMs: integer(env, 'DB_STATEMENT_TIMEOUT_MS', 30000, 1, 3_600_000),
      maxRows: integer(env, 'DB_MAX_ROWS', 100000, 1, 100_000_000),
      requestIdleMs: integer(env, 'DB_REQUEST_IDLE_MS', 120000, 100, 86_400_000),
      maxRequestsPerIdentity: integer(env, 'DB_MAX_REQUESTS_PER_IDENTITY', 16, 1, 10000),
    },
    databases,
    databasePasswords,
    files: readFilesConfig(env),
    rolesFile: env.BRIDGE_ROLES_FILE || undefined,
    maxMessageBytes: integer(env, 'MAX_MESSAGE_MB', 64, 1, 2047) * MiB,
    maxConnections: integer(env, 'BRIDGE_MAX_CONNECTIONS', 1024, 1, 1_000_000),
  };
}
