/**
 * The settings of a SQL Server database from its URL (DATABASE_URL or DATABASE_URL_<NAME>):
 *
 *   sqlserver://<user>@<host>[:<port>]/<database>?passwordFile=/run/secrets/idb-sql
 *     &readerUser=<login>&readerPasswordFile=/run/secrets/idb-sql-reader
 *     &encrypt=true&trustServerCertificate=false&ca=/etc/idb/sql-ca.pem&maxConnections=10
 *
 * - Passwords: from a file (`passwordFile`, `readerPasswordFile`: the whole file, one trailing newline dropped), or
 *   from the environment as read by the configuration (`DATABASE_PASSWORD` / `DATABASE_READER_PASSWORD`, or
 *   `DATABASE_PASSWORD_<NAME>` / `DATABASE_READER_PASSWORD_<NAME>` for DATABASE_URL_<NAME>), handed in as
 *   `secrets`. A password written into the URL is refused: URLs end up in process listings and logs.
 * - TLS: `encrypt` defaults to true (`strict` for TDS 8 servers); the server's certificate is checked against the
 *   system's CAs, or `ca` (a PEM file); `trustServerCertificate=true` is the explicit opt-out (a test server with a
 *   self-signed certificate). `encrypt=false` sends everything, logins included, in clear: only for loopback tests.
 * - `readerUser`: the read-only login (db_datareader) that readers' statements run as; see sqlserver-database.ts.
 * - Messages never repeat a password or the file's content.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionConfiguration } from 'tedious';
import { ConfigError } from '../../../config.ts';

export interface SqlLogin {
  user: string;
  password: string;
}

export interface SqlServerSettings {
  host: string;
  port: number;
  database: string;
  login: SqlLogin;
  readerLogin: SqlLogin | undefined;
  encrypt: boolean | 'strict';
  trustServerCertificate: boolean;
  ca: string | undefined;
  /** Pool size per login (default 10). */
  maxConnections: number;
  /** How long a request waits for a pooled connection (default 15 s, SqlClient's connect time-out). */
  acquireTimeoutMs: number;
}

/** Passwords the configuration read from the environment for this database. */
export interface SqlServerSecrets {
  password?: string | undefined;
  readerPassword?: string | undefined;
}

const KNOWN = new Set([
  'passwordFile',
  'readerUser',
  'readerPasswordFile',
  'encrypt',
  'trustServerCertificate',
  'ca',
  'maxConnections',
  'acquireTimeoutMs',
]);

export function parseSqlServerUrl(text: string, secrets: SqlServerSecrets = {}): SqlServerSettings {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError('A sqlserver:// database URL is not a valid URL (sqlserver://user@host:port/database).');
  }
  if (url.password !== '')
    throw new ConfigError(
      'A sqlserver:// database URL must not carry a password: use passwordFile= or DATABASE_PASSWORD.',
    );
  const user = decodeURIComponent(url.username);
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (user === '' || url.hostname === '' || database === '' || database.includes('/'))
    throw new ConfigError(
      'A sqlserver:// database URL needs a login, a host and a database: sqlserver://user@host:port/database.',
    );
  const q = url.searchParams;
  for (const key of q.keys())
    if (!KNOWN.has(key))
      throw new ConfigError(
        `A sqlserver:// database URL has an unknown setting ${key} (known: ${[...KNOWN].join(', ')}).`,
      );
  const encryptText = q.get('encrypt') ?? 'true';
  if (!['true', 'false', 'strict'].includes(encryptText))
    throw new ConfigError(`encrypt in a sqlserver:// URL is true, false or strict, not ${encryptText}.`);
  const trust = q.get('trustServerCertificate') ?? 'false';
  if (trust !== 'true' && trust !== 'false')
    throw new ConfigError(`trustServerCertificate in a sqlserver:// URL is true or false, not ${trust}.`);
  const readerUser = q.get('readerUser') ?? undefined;
  const ca = q.get('ca') ?? undefined;
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? 1433 : Number(url.port),
    database,
    login: { user, password: password('passwordFile', q.get('passwordFile'), secrets.password) },
    readerLogin:
      readerUser === undefined
        ? undefined
        : {
            user: readerUser,
            password: password('readerPasswordFile', q.get('readerPasswordFile'), secrets.readerPassword),
          },
    encrypt: encryptText === 'strict' ? 'strict' : encryptText === 'true',
    trustServerCertificate: trust === 'true',
    ca: ca === undefined ? undefined : readSecretFile('ca', ca),
    maxConnections: count(q.get('maxConnections'), 'maxConnections', 10, 1, 1000),
    acquireTimeoutMs: count(q.get('acquireTimeoutMs'), 'acquireTimeoutMs', 15_000, 1, 600_000),
  };
}

function password(setting: string, file: string | null, fromEnvironment: string | undefined): string {
  if (file !== null) return readSecretFile(setting, file).replace(/\r?\n$/, '');
  if (fromEnvironment !== undefined) return fromEnvironment;
  throw new ConfigError(
    `A sqlserver:// database URL needs ${setting}= (or the password in DATABASE_${setting.startsWith('reader') ? 'READER_' : ''}PASSWORD).`,
  );
}

function readSecretFile(setting: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`${setting} ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

function count(text: string | null, name: string, fallback: number, min: number, max: number): number {
  if (text === null) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ConfigError(`${name} in a sqlserver:// URL must be an integer from ${min} to ${max}, not ${text}.`);
  return n;
}

/** tedious' configuration for one login of these settings. */
export function connectionConfig(settings: SqlServerSettings, login: SqlLogin | undefined): ConnectionConfiguration {
  const { user, password } = login ?? settings.login;
  return {
    server: settings.host,
    authentication: { type: 'default', options: { userName: user, password } },
    options: {
      port: settings.port,
      database: settings.database,
      encrypt: settings.encrypt,
      trustServerCertificate: settings.trustServerCertificate,
      ...(settings.ca === undefined ? {} : { cryptoCredentialsDetails: { ca: settings.ca } }),
      appName: 'idb-service',
      useUTC: true,
      // Statements time out by their own limit (request.setTimeout); this is the fallback for our own.
      requestTimeout: 60_000,
      // How long a cancelled or timed-out statement waits for the server's acknowledgement before tedious closes the
      // connection (the server then rolls its transaction back). Babelfish may take seconds inside a long statement.
      cancelTimeout: 1000,
      connectTimeout: settings.acquireTimeoutMs,
      rowCollectionOnRequestCompletion: false,
      rowCollectionOnDone: false,
      useColumnNames: false,
      // SqlClient's session defaults (SET ANSI_NULLS ON etc. are tedious' defaults too).
      abortTransactionOnError: false,
      enableImplicitTransactions: false,
    },
  };
}
