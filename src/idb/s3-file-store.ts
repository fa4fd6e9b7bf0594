/**
 * FileStore on S3-compatible object storage (AWS S3, Cloudflare R2's S3 API, MinIO, s3rver), through fetch and
 * aws4fetch's SigV4 signing: Web APIs only, so it runs unchanged on Node, Bun, Deno and Workers.
 *
 * Decisions:
 * - Atomicity comes from S3 itself: a PUT replaces the whole object or nothing, and a reader gets one version.
 * - The PUT is signed with the content's real SHA-256 as `x-amz-content-sha256` (computed anyway for the database), so
 *   the service refuses a body damaged on the way instead of storing it. The same hash goes into `x-amz-meta-sha256`
 *   for operators and audits; reads check against the database's value, not this one (see file-store.ts).
 * - A GET 404 is an absent file. DELETE is idempotent in S3 and answers 204 either way, so `delete` asks HEAD first to
 *   report whether the object existed; the database stays the authority on which files exist, this is informational.
 * - aws4fetch retries 5xx and 429 with backoff; 3 retries instead of its 10 keep a dead endpoint from stalling a call
 *   for long. Any other unexpected status is StoreError('unavailable') naming the status and S3's error code (never the
 *   response body, which may echo the request).
 * - Object keys are `prefix + key`; no fan-out is needed, object stores have no directories to keep small.
 */
import { AwsClient } from 'aws4fetch';
import type { S3FilesConfig } from './files-url.ts';
import {
  checkKey,
  checkSha256,
  sha256Hex,
  StoreError,
  verifySha256,
  type FileStore,
  type StoredContent,
} from './file-store.ts';

export type S3FileStoreOptions = Omit<S3FilesConfig, 'kind'> & {
  /** Retries of 5xx and 429 answers; default 3. */
  retries?: number;
};

export class S3FileStore implements FileStore {
  readonly #client: AwsClient;
  readonly #base: string;
  readonly #prefix: string;

  constructor(options: S3FileStoreOptions) {
    const { bucket, prefix, endpoint, region, forcePathStyle, credentials } = options;
    this.#client = new AwsClient({ ...credentials, service: 's3', region, retries: options.retries ?? 3 });
    const origin = new URL(endpoint);
    this.#base = forcePathStyle ? `${origin.origin}/${bucket}/` : `${origin.protocol}//${bucket}.${origin.host}/`;
    this.#prefix = prefix;
  }

  async put(key: string, content: Uint8Array): Promise<StoredContent> {
    const url = this.#url(key);
    const sha256 = await sha256Hex(content);
    const res = await this.#fetch('PUT', url, {
      // The cast only narrows the type: contents come from messages and reads, never from a SharedArrayBuffer.
      body: content as Uint8Array<ArrayBuffer>,
      headers: {
        'content-type': 'application/octet-stream',
        'x-amz-content-sha256': sha256,
        'x-amz-meta-sha256': sha256,
      },
    });
    await requireStatus(res, [200], 'PUT', key);
    return { sha256, length: content.byteLength };
  }

  async get(key: string, sha256: string): Promise<Uint8Array | undefined> {
    const url = this.#url(key);
    const expected = checkSha256(sha256);
    const res = await this.#fetch('GET', url);
    if (res.status === 404) {
      await res.body?.cancel();
      return undefined;
    }
    await requireStatus(res, [200], 'GET', key, false);
    const content = new Uint8Array(await res.arrayBuffer());
    verifySha256(key, await sha256Hex(content), expected);
    return content;
  }

  async delete(key: string): Promise<boolean> {
    const url = this.#url(key);
    const head = await this.#fetch('HEAD', url);
    if (head.status === 404) return false;
    await requireStatus(head, [200], 'HEAD', key);
    const res = await this.#fetch('DELETE', url);
    await requireStatus(res, [200, 204], 'DELETE', key);
    return true;
  }

  #url(key: string): string {
    return this.#base + this.#prefix + checkKey(key);
  }

  async #fetch(
    method: string,
    url: string,
    init: { body?: Uint8Array<ArrayBuffer>; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    try {
      return await this.#client.fetch(url, { method, ...init });
    } catch (cause) {
      throw new StoreError(
        'unavailable',
        `S3 ${method} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
        { cause },
      );
    }
  }
}

/** Throws unless `res` has one of the `ok` statuses; consumes the body unless it is wanted (`drain` false). */
async function requireStatus(res: Response, ok: number[], method: string, key: string, drain = true): Promise<void> {
  if (ok.includes(res.status)) {
    if (drain) await res.body?.cancel();
    return;
  }
  const text = method === 'HEAD' ? '' : await res.text().catch(() => '');
  const code = /<Code>([^<]{1,100})<\/Code>/.exec(text)?.[1];
  throw new StoreError('unavailable', `S3 ${method} of file ${key} answered ${res.status}${code ? ` ${code}` : ''}`);
}
