/**
 * s3rver's object store (its lib/stores/filesystem.js; package.json pins s3rver at 3.7.1, the internals used here) with
 * the writes whose file handling breaks S3's semantics under concurrent requests corrected, so the tests' S3 behaves
 * as S3 does (test/idb/s3-concurrency.test.ts fails on s3rver's own):
 *
 * - DELETE: s3rver removes a key's "folders" once they are empty (`files/` when its last object goes). A PUT into the
 *   same folder between its own mkdir and its open then fails with ENOENT on a write stream that has no error
 *   listener: an uncaught exception in the test process (a PUT and a DELETE of distinct keys at once, as the bridge does
 *   under 16 channels), and the PUT answers 500. S3 has no folders: here a DELETE removes the object's files only, and
 *   the empty folders go with the temporary directory on stop.
 * - PUT: s3rver truncates the object in place, answers once its hash stream has read the body (before the file is
 *   written) and leaves the file stream's errors unheard. Here the body goes to a temporary file through `pipeline`,
 *   which is renamed over the object once it is complete: a reader gets the old object or the new one whole, as on S3,
 *   the PUT answers after the content is on disk, and a failed write rejects this request (s3rver answers it 500 or
 *   its connection is reset), never the process. The object's metadata files are replaced whole the same way: written
 *   in place, a GET reading them meanwhile parsed half a JSON and answered 500.
 *
 * Everything else, the HTTP API and its checks included, is s3rver's own.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** An object as s3rver's controllers hand it to the store (its lib/models/object.js). */
interface S3rverObject {
  bucket: string;
  key: string;
  content: Buffer | Readable;
  metadata: Record<string, string>;
}

/** The part of s3rver's FilesystemStore used and replaced here (it ships no types). */
interface FilesystemStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5?: string): Promise<void>;
  putObject(object: S3rverObject): Promise<{ size: number; md5: string }>;
  deleteObject(bucket: string, key: string): Promise<void>;
}

const require = createRequire(import.meta.url);
const S3rverFilesystemStore = require('s3rver/lib/stores/filesystem') as new (directory: string) => FilesystemStore;
/** The standard headers s3rver keeps with an object; it also keeps every `x-amz-meta-*`. */
const { ALLOWED_METADATA } = require('s3rver/lib/models/object') as { ALLOWED_METADATA: string[] };

/** What `write` writes to a temporary file, renamed to `path` once complete: a reader gets the old file or the new. */
async function replaceWhole(path: string, write: (temporary: string) => Promise<void>): Promise<void> {
  // Not `._S3rver_object` at the end, so listings never show it.
  const temporary = `${path}.${randomUUID()}.partial`;
  try {
    await write(temporary);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** s3rver's FilesystemStore with PUT (object and metadata) and DELETE as S3 has them (see the top of this file). */
export class S3ObjectStore extends S3rverFilesystemStore {
  override async putObject(object: S3rverObject): Promise<{ size: number; md5: string }> {
    const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
    const md5 = createHash('md5');
    let size = 0;
    await mkdir(dirname(objectPath), { recursive: true });
    await replaceWhole(objectPath, (temporary) =>
      pipeline(
        Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content,
        async function* hash(chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            md5.update(chunk);
            size += chunk.length;
            yield chunk;
          }
        },
        createWriteStream(temporary),
      ),
    );
    const digest = md5.digest('hex');
    await this.putMetadata(object.bucket, object.key, object.metadata, digest);
    return { size, md5: digest };
  }

  override async putMetadata(
    bucket: string,
    key: string,
    metadata: Record<string, string>,
    md5?: string,
  ): Promise<void> {
    const kept = Object.entries(metadata).filter(
      ([name]) => ALLOWED_METADATA.includes(name) || name.startsWith('x-amz-meta-'),
    );
    if (md5)
      await replaceWhole(this.getResourcePath(bucket, key, 'object.md5'), (temporary) => writeFile(temporary, md5));
    await replaceWhole(this.getResourcePath(bucket, key, 'metadata.json'), (temporary) =>
      writeFile(temporary, JSON.stringify(Object.fromEntries(kept), null, 2)),
    );
  }

  override async deleteObject(bucket: string, key: string): Promise<void> {
    await Promise.all(
      ['object', 'object.md5', 'metadata.json'].map((resource) =>
        unlink(this.getResourcePath(bucket, key, resource)).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw error;
        }),
      ),
    );
  }
}
