/**
 * The S3 file store against the tests' S3 (s3rver, test/support/peers/s3rver.ts) under requests at once on one prefix,
 * as the bridge sends them when 16 channels each put, get and delete their own files: a PUT and a DELETE of distinct
 * keys, a GET racing the DELETE of its key, a GET racing an overwrite. Each must answer as S3 does; before
 * s3rver-store.ts, the first threw ENOENT from inside s3rver (an uncaught error that failed a whole CI run) and
 * answered about one PUT in four 500.
 *
 * The rounds start the second request 0 to ROUND_SPREAD event-loop turns after the first, so that across the rounds it
 * lands in every step of the first one's handling on the server (which runs in this process).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { AwsClient } from 'aws4fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFilesUrl } from '../../src/idb/files-url.ts';
import { S3FileStore } from '../../src/idb/s3-file-store.ts';
import { startS3rver, type RunningS3 } from '../support/peers/s3rver.ts';

const BUCKET = 'idb-race';
const ROUNDS = 200;
const ROUND_SPREAD = 30;
const REQUEST_TIMEOUT_MS = 5_000;

let s3: RunningS3;
/** Requests as they are, without retries: a 500 is seen, not hidden by a retry. */
let raw: AwsClient;
let store: S3FileStore;

beforeAll(async () => {
  s3 = await startS3rver([BUCKET]);
  raw = new AwsClient({ ...s3.credentials, service: 's3', region: 'us-east-1', retries: 0 });
  const config = parseFilesUrl(`s3://${BUCKET}/files/?endpoint=${s3.endpoint}&region=us-east-1`, {
    AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
  });
  if (config.kind !== 's3') throw new Error('expected an s3 config');
  store = new S3FileStore(config);
});

afterAll(async () => {
  await s3?.stop();
});

const url = (key: string) => `${s3.endpoint}/${BUCKET}/files/${key}`;

/** A request's status and body read to its end, or how it failed (as the status, so that it is counted). */
async function send(
  method: string,
  key: string,
  body?: Uint8Array,
): Promise<{ status: number | string; body: Buffer }> {
  try {
    const res = await raw.fetch(url(key), {
      method,
      ...(body && { body: body as Uint8Array<ArrayBuffer> }),
      // A request the server leaves unanswered counts as failed instead of stalling the test until its timeout.
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
  } catch (error) {
    return { status: `failed (${error instanceof Error ? error.message : String(error)})`, body: Buffer.alloc(0) };
  }
}

/** `first` now, `second` `round % ROUND_SPREAD` event-loop turns later; both awaited. */
async function staggered<A, B>(round: number, first: () => Promise<A>, second: () => Promise<B>): Promise<[A, B]> {
  const a = first();
  for (let turn = 0; turn < round % ROUND_SPREAD; turn++) await nextTurn();
  return Promise.all([a, second()]);
}

/**
 * ROUNDS rounds of `round`, each giving its outcome as text, counted per distinct outcome; stops at the first one
 * other than `expected`, so a broken server fails the test at once with what went wrong.
 */
async function rounds(expected: string, round: (n: number) => Promise<string>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let n = 0; n < ROUNDS; n++) {
    const outcome = await round(n);
    counts[outcome] = (counts[outcome] ?? 0) + 1;
    if (outcome !== expected) break;
  }
  return counts;
}

describe('S3 file store on s3rver, requests at once on one prefix', () => {
  it('a PUT while the DELETE of the only other object empties the prefix: both succeed, the new object is whole', async () => {
    const expected = 'DELETE 204, PUT 200, GET 200 whole';
    const counts = await rounds(expected, async (n) => {
      const [only, added] = [randomUUID(), randomUUID()];
      const content = randomBytes(64);
      expect((await send('PUT', only, content)).status).toBe(200);
      const [deleted, put] = await staggered(
        n,
        () => send('DELETE', only),
        () => send('PUT', added, content),
      );
      const back = await send('GET', added);
      await send('DELETE', added);
      return `DELETE ${deleted.status}, PUT ${put.status}, GET ${back.status} ${back.body.equals(content) ? 'whole' : `${back.body.length} other bytes`}`;
    });
    expect(counts).toEqual({ [expected]: ROUNDS });
  });

  it('a GET racing the DELETE of its key reads the content or nothing, never an error', async () => {
    const expected = 'content or nothing';
    const counts = await rounds(expected, async (n) => {
      const key = randomUUID();
      const content = randomBytes(1000);
      const { sha256 } = await store.put(key, content);
      const [read] = await staggered(
        n,
        () =>
          store.get(key, sha256).then(
            (back) =>
              back === undefined || Buffer.from(back).equals(content) ? expected : `${back.length} other bytes`,
            (error: unknown) => `failed (${String(error)})`,
          ),
        () => store.delete(key),
      );
      return read;
    });
    expect(counts).toEqual({ [expected]: ROUNDS });
  });

  it('a GET racing an overwrite reads the old object or the new one whole', async () => {
    const expected = 'PUT 200, GET 200 old or new';
    const key = randomUUID();
    let current = randomBytes(256 * 1024);
    expect((await send('PUT', key, current)).status).toBe(200);
    const counts = await rounds(expected, async (n) => {
      const next = randomBytes(256 * 1024);
      const [put, read] = await staggered(
        n,
        () => send('PUT', key, next),
        () => send('GET', key),
      );
      const whole = read.body.equals(current) || read.body.equals(next);
      current = next;
      return `PUT ${put.status}, GET ${read.status} ${whole ? 'old or new' : `${read.body.length} other bytes`}`;
    });
    expect(counts).toEqual({ [expected]: ROUNDS });
  });
});
