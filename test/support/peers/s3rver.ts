import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../net.ts';
import { S3ObjectStore } from './s3rver-store.ts';

/** The part of s3rver's API used here (it ships no types). */
interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
  /** The object store it serves from: the instance's own and its Koa context's (what each request's `ctx.store` is). */
  store: unknown;
  context: { store: unknown };
}
type S3rverConstructor = new (options: {
  address: string;
  port: number;
  directory: string;
  silent: boolean;
  configureBuckets: { name: string }[];
}) => S3rverInstance;

const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;

export interface RunningS3 {
  /** `http://127.0.0.1:<port>`: path-style S3 endpoint. */
  endpoint: string;
  /** s3rver accepts only its built-in account; it does not check SigV4 signatures, only the key id. */
  credentials: { accessKeyId: string; secretAccessKey: string };
  stop(): Promise<void>;
}

/**
 * An S3 stand-in (npm s3rver, its store's PUT and DELETE corrected: s3rver-store.ts) on a free loopback port, keeping
 * its objects in a fresh temp folder removed on stop.
 */
export async function startS3rver(buckets: string[]): Promise<RunningS3> {
  const directory = await mkdtemp(join(tmpdir(), 's3rver-'));
  const port = await freePort();
  const server = new S3rver({
    address: '127.0.0.1',
    port,
    directory,
    silent: true,
    configureBuckets: buckets.map((name) => ({ name })),
  });
  // Its PUT and DELETE corrected so concurrent requests behave as on S3 (s3rver-store.ts).
  server.store = server.context.store = new S3ObjectStore(directory);
  try {
    await server.run();
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    async stop() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
