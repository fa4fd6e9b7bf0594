/**
 * The Database a URL names (DATABASE_URL and DATABASE_URL_<NAME>):
 * - `file:./data/idb.sqlite`, `file:/abs/idb.sqlite`, `file:///abs/idb.sqlite`: the embedded SQLite backend. The path
 *   after `file:` is taken as written and resolved against the working directory; only the `file://` form is a URL
 *   (percent-decoded). Missing folders are created. No `?query` or `#fragment`: SQLite's URI options (`mode=ro`,
 *   `cache=shared`, …) would change what the backend relies on.
 * - `postgres://…` or `postgresql://…`: PostgreSQL.
 * - `sqlserver://user@host:port/database?…`: SQL Server over TDS (sqlserver-url.ts); `secrets` are the passwords the
 *   configuration read from the environment for it.
 * Anything else is a ConfigError. Messages never repeat the URL itself: it may carry a password.
 *
 * The drivers of the network backends are loaded when a URL names them, not before: SQL Server's (tedious and the
 * Azure identity packages it brings) is most of it. Measured on the bridge with SQLite: ready in ~230 ms instead of
 * ~370, 71 MB resident instead of 93 (the bundle is split at these imports, see build:node).
 */
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../../../config.ts';
import type { Database } from '../../../idb/database.ts';
import { parseSqlServerUrl, type SqlServerSecrets } from './sqlserver-url.ts';
import { createSqliteDatabase } from './sqlite-database.ts';

export async function openDatabase(url: string, secrets: SqlServerSecrets = {}): Promise<Database> {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'file') {
    const path = sqlitePath(url);
    try {
      await mkdir(dirname(path), { recursive: true });
    } catch (error) {
      throw new ConfigError(`The folder of the SQLite database ${path} cannot be created: ${(error as Error).message}`);
    }
    return createSqliteDatabase({ path });
  }
  if (scheme === 'postgres' || scheme === 'postgresql') {
    if (!URL.canParse(url))
      throw new ConfigError(
        'A postgres:// database URL is not a valid URL (postgres://user:password@host:port/database).',
      );
    const { createPostgresDatabase } = await import('./postgres-database.ts');
    return createPostgresDatabase({ url });
  }
  if (scheme === 'sqlserver') {
    const settings = parseSqlServerUrl(url, secrets);
    const { createSqlServerDatabase } = await import('./sqlserver-database.ts');
    return createSqlServerDatabase(settings);
  }
  throw new ConfigError(
    `A database URL must be file:<path> (the embedded SQLite database), postgres://… (PostgreSQL) or sqlserver://… (SQL Server)${scheme === undefined ? '' : `, not ${scheme}:`}.`,
  );
}

function sqlitePath(url: string): string {
  const rest = url.slice('file:'.length);
  if (/[?#]/.test(rest))
    throw new ConfigError(`A file: database URL is a path only, without ?query or #fragment: ${url}`);
  let path = rest;
  if (rest.startsWith('//')) {
    try {
      path = fileURLToPath(url);
    } catch (error) {
      throw new ConfigError(`${url} is not the URL of a local file: ${(error as Error).message}`);
    }
  }
  if (path === '') throw new ConfigError('A file: database URL needs a path, as in file:./data/idb.sqlite.');
  return resolve(path);
}
