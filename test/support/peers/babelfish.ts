/**
 * A throwaway Babelfish for PostgreSQL (../shared/babelfish: TDS 7.4 + T-SQL) for the SQL Server backend's suites:
 * its own data folder and a free TDS port per call, so several test runs share the machine. Babelfish's own
 * differences from SQL Server are listed in its README; the suites hold neither server to the other's behaviour there.
 *
 * `start()` also makes the database `idb` and two logins in it: the service's (owner: DDL and writes) and the
 * readers' (db_datareader only), each with its password in a file, as a deployment would.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import '../../../src/runtime/node/idb/sqlserver-tedious.ts';
import { Connection, Request } from 'tedious';
import { sharedExists, sharedPath } from '../corpus.ts';
import { freePort } from '../net.ts';

const run = promisify(execFile);

export const babelfishAvailable = sharedExists('babelfish', 'start.sh');
export const BABELFISH_MISSING = `Babelfish (${sharedPath('babelfish')}) is not here: the SQL Server backend's suites are skipped.`;

const ADMIN = 'idb_admin';
const ADMIN_PASSWORD = 'Idb_Admin_Passw0rd!';

export interface RunningBabelfish {
  port: number;
  /** sqlserver:// URL of database `idb` as the service's login (TLS on, the self-signed certificate trusted). */
  url: string;
  /** The same with the readers' login (db_datareader). */
  readerUrl: string;
  /** A SqlClient connection string of database `idb` as the service's login (TLS, the certificate trusted). */
  connectionString: string;
  /** Runs T-SQL batches as the administrator in database `idb` (setup and checks outside the code under test). */
  admin(sql: string): Promise<unknown[][]>;
  stop(): Promise<void>;
}

export async function startBabelfish(): Promise<RunningBabelfish> {
  const base = await mkdtemp(join(tmpdir(), 'bbf-test-'));
  await chmod(base, 0o755); // the server runs as OS user bbf, which must reach its data folder
  const data = join(base, 'data');
  const port = await freePort();
  const pgPort = await freePort();
  const start = sharedPath('babelfish', 'start.sh');
  const stop = async () => {
    await run(sharedPath('babelfish', 'stop.sh'), [data]).catch(() => {});
    await rm(base, { recursive: true, force: true });
  };
  try {
    await run(start, [data, String(port), ADMIN, ADMIN_PASSWORD], {
      env: { ...process.env, PG_PORT: String(pgPort) },
    });
    const exec = (database: string, sql: string) => query(port, ADMIN, ADMIN_PASSWORD, database, sql);
    // Babelfish cannot add members to db_owner: the service's login owns the database by creating it.
    await exec(
      'master',
      `CREATE LOGIN idb_service WITH PASSWORD = 'Service_Passw0rd!';
       ALTER SERVER ROLE sysadmin ADD MEMBER idb_service;
       CREATE LOGIN idb_reader WITH PASSWORD = 'Reader_Passw0rd!';`,
    );
    await query(port, 'idb_service', 'Service_Passw0rd!', 'master', 'CREATE DATABASE idb');
    // Babelfish 4.3 has no db_datareader role: SELECT on the schema is what that role grants on SQL Server.
    await exec(
      'idb',
      `CREATE USER idb_reader FOR LOGIN idb_reader;
       GRANT SELECT ON SCHEMA::dbo TO idb_reader;`,
    );
    const secret = async (name: string, value: string) => {
      const path = join(base, name);
      await writeFile(path, `${value}\n`, { mode: 0o600 });
      return encodeURIComponent(path);
    };
    const service = await secret('service.password', 'Service_Passw0rd!');
    const reader = await secret('reader.password', 'Reader_Passw0rd!');
    const tls = 'encrypt=true&trustServerCertificate=true';
    return {
      port,
      url: `sqlserver://idb_service@127.0.0.1:${port}/idb?passwordFile=${service}&${tls}&readerUser=idb_reader&readerPasswordFile=${reader}`,
      readerUrl: `sqlserver://idb_reader@127.0.0.1:${port}/idb?passwordFile=${reader}&${tls}`,
      connectionString: `Server=127.0.0.1,${port};Database=idb;User ID=idb_service;Password=Service_Passw0rd!;Encrypt=True;TrustServerCertificate=True`,
      admin: (sql) => exec('idb', sql),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** One batch on a fresh connection; the rows of every result set, in order. */
function query(port: number, user: string, password: string, database: string, sql: string): Promise<unknown[][]> {
  return new Promise((resolve, reject) => {
    const connection = new Connection({
      server: '127.0.0.1',
      authentication: { type: 'default', options: { userName: user, password } },
      options: { port, database, encrypt: false, useUTC: true, rowCollectionOnRequestCompletion: false },
    });
    connection.connect((error) => {
      if (error) return reject(error);
      const rows: unknown[][] = [];
      const request = new Request(sql, (failed) => {
        connection.close();
        if (failed) reject(failed);
        else resolve(rows);
      });
      request.on('row', (cells) => rows.push(cells.map((c: { value: unknown }) => c.value)));
      connection.execSqlBatch(request);
    });
  });
}

export interface BridgeOnBabelfish {
  bbf: RunningBabelfish;
  /** net.tcp://localhost:<port>/IDBService */
  endpoint: string;
  stop(): Promise<void>;
}

/**
 * A Babelfish and an in-process bridge on it (security None, `anonymous` a writer, files in a temp folder): what the
 * .NET suites on SQL Server call through.
 */
export async function startBridgeOnBabelfish(): Promise<BridgeOnBabelfish> {
  // Imported here: the database suites use this module without the bridge.
  const [{ openNodeIdbService }, { readBridgeConfig }, { securityBackends, startBridge }] = await Promise.all([
    import('../../../src/runtime/node/idb/idb-service.ts'),
    import('../../../tcp-bridge/src/config.ts'),
    import('../../../tcp-bridge/src/server.ts'),
  ]);
  const folder = await mkdtemp(join(tmpdir(), 'bridge-bbf-'));
  const bbf = await startBabelfish();
  try {
    await writeFile(join(folder, 'roles.json'), JSON.stringify({ writer: ['anonymous'] }));
    const config = readBridgeConfig({
      BRIDGE_PORT: '0',
      BRIDGE_SECURITY: 'none',
      BRIDGE_ROLES_FILE: join(folder, 'roles.json'),
      DATABASE_URL: bbf.url,
      FILES_URL: `file:${join(folder, 'files')}`,
    });
    const logger = { log: () => {} };
    const bridge = await startBridge(
      config,
      await openNodeIdbService(config, logger),
      logger,
      securityBackends(config),
    );
    return {
      bbf,
      endpoint: `net.tcp://localhost:${bridge.port}/IDBService`,
      async stop() {
        await bridge.close();
        await bbf.stop();
        await rm(folder, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await bbf.stop();
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
}
