/**
 * The storage a bridge under test runs on, as the environment it reads: the embedded SQLite file and a files folder,
 * or a real PostgreSQL with the files on S3-compatible storage (s3rver). For the suites that run a client's whole
 * scenario on both (bridge/mono.peers.test.ts, bridge/dotnet.peers.test.ts).
 */
import { join } from 'node:path';
import { startPostgres, type RunningPostgres } from './postgres.ts';
import { startS3rver, type RunningS3 } from './s3rver.ts';
import { needPeers, PEERS } from '../peers.ts';

export interface BridgeBackend {
  env: Record<string, string>;
  stop(): Promise<void>;
}

export type BridgeBackendName = 'sqlite' | 'postgres';

/** The SQLite file and the files folder inside `folder`. */
export async function sqliteBackend(folder: string): Promise<BridgeBackend> {
  return {
    env: { DATABASE_URL: `file:${join(folder, 'idb.sqlite')}`, FILES_URL: `file:${join(folder, 'files')}` },
    stop: async () => {},
  };
}

/** A PostgreSQL of its own, and s3rver with `bucket` for the files. */
export async function postgresBackend(bucket: string): Promise<BridgeBackend> {
  const [pg, s3]: [RunningPostgres, RunningS3] = await Promise.all([startPostgres(), startS3rver([bucket])]);
  return {
    env: {
      DATABASE_URL: pg.url,
      FILES_URL: `s3://${bucket}/files/?endpoint=${s3.endpoint}`,
      AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
    },
    async stop() {
      await Promise.all([pg.stop(), s3.stop()]);
    },
  };
}

/**
 * Both, by name, for `describe.each`: each starts given the suite's temp folder (PostgreSQL's files go to `bucket`).
 * Without PostgreSQL, SQLite alone, and the suite says so (test/support/peers.ts: a failure under REQUIRE_PEERS=1).
 */
export function bridgeBackends(
  bucket: string,
): ReadonlyArray<readonly [BridgeBackendName, (folder: string) => Promise<BridgeBackend>]> {
  const sqlite = ['sqlite', sqliteBackend] as const;
  if (needPeers(`${bucket} on PostgreSQL`, PEERS.postgres)) return [sqlite];
  return [sqlite, ['postgres', () => postgresBackend(bucket)]];
}
