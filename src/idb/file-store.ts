/**
 * The port through which the IIDBService file operations keep file contents (docs/contract/iidbservice.md, FileData and
 * "File writes are atomic … Sha256 is checked on read"). Adapters: a folder on the local disk
 * (src/runtime/node/idb/folder-file-store.ts) and S3-compatible object storage, R2 included (src/idb/s3-file-store.ts).
 *
 * Decisions:
 * - Only contents live here. Name, type, times, sha256 and length live in the database, written in the same transaction
 *   as the index, so the database says which files exist and what their contents must hash to. A crash between a store
 *   write and the commit can leave an orphan content object, never a committed file without its content; that is why a
 *   new content is put before the commit, and why the check on read uses the database's sha256, not the store's.
 * - A put cannot be rolled back with the database transaction. Overwriting the content of a committed file in place
 *   (UpdateFile inside a database request that is then rolled back, or whose commit fails) would leave the row's old
 *   sha256 over new bytes: a file that reads as corrupt. So each write should go under a fresh key (a content id kept
 *   in the file's row, next to its sha256), and the old key be deleted after the commit; a rollback or crash then
 *   leaves at most an unreferenced content object, which a sweep can remove.
 * - Keys are Guids (file ids or content ids) in the canonical lower-case form (.NET's `Guid.ToString()`,
 *   `crypto.randomUUID()`). Anything else is refused before touching the store, so a key can never name a path outside
 *   the store, a temporary file or another prefix's object.
 * - Contents are whole `Uint8Array`s: a FileData travels in one message (at most MAX_MESSAGE_MB, default 64 MiB) and
 *   is in memory anyway, and the sha256 must be known before the content is committed.
 */
import { GUID_PATTERN } from './guid.ts';

/**
 * Where file contents live; metadata (name, type, times, sha256, length) lives in the database, in the same
 * transaction as the index.
 */
export interface FileStore {
  /**
   * Writes content under `key` atomically: readers see the old content or the new, never a mix; a crash mid-write
   * leaves the old content. Returns the content's sha256 (lower-case hex) and length, for the database row.
   */
  put(key: string, content: Uint8Array): Promise<StoredContent>;
  /**
   * The content under `key`, checked against `sha256` (the database's value, hex, either case); undefined when absent.
   * A 0-byte content is an empty array, never undefined. Throws StoreError('corrupt') when the content does not hash
   * to `sha256`.
   */
  get(key: string, sha256: string): Promise<Uint8Array | undefined>;
  /** Removes the content under `key`; whether there was one. Deleting an absent key is not an error. */
  delete(key: string): Promise<boolean>;
}

export interface StoredContent {
  sha256: string;
  length: number;
}

/**
 * - invalid-argument: a key that is not a canonical Guid, or an expected sha256 that is not 64 hex digits: a caller's
 *   mistake, never retried.
 * - corrupt: the stored content does not hash to the expected sha256 (bit rot, a truncated or foreign write).
 * - unavailable: the backing store failed (I/O error, S3 status other than the expected ones); may succeed later.
 */
export type StoreErrorKind = 'invalid-argument' | 'corrupt' | 'unavailable';

export class StoreError extends Error {
  override name = 'StoreError';
  constructor(
    readonly kind: StoreErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const SHA256_HEX = /^[0-9a-f]{64}$/i;

/**
 * Refuses any key but a canonical lower-case Guid (the only characters are 0-9, a-f and `-`: no path can be
 * formed).
 */
export function checkKey(key: string): string {
  if (typeof key !== 'string' || !GUID_PATTERN.test(key))
    throw new StoreError('invalid-argument', `file key must be a lower-case Guid, not ${JSON.stringify(key)}`);
  return key;
}

/** The expected sha256 in the form `sha256Hex` produces; a malformed one is the caller's mistake, not corruption. */
export function checkSha256(sha256: string): string {
  if (typeof sha256 !== 'string' || !SHA256_HEX.test(sha256))
    throw new StoreError('invalid-argument', 'expected sha256 must be 64 hex digits');
  return sha256.toLowerCase();
}

/** Throws StoreError('corrupt') unless `actual` is `expected` (both already lower-case hex). */
export function verifySha256(key: string, actual: string, expected: string): void {
  if (actual !== expected)
    throw new StoreError(
      'corrupt',
      `content of file ${key} does not match its sha256 (stored ${actual}, expected ${expected})`,
    );
}

/** Lower-case hex SHA-256 through Web Crypto, which every runtime (Node, Bun, Deno, workerd) has. */
export async function sha256Hex(content: Uint8Array): Promise<string> {
  // The cast only narrows the type: contents come from messages and reads, never from a SharedArrayBuffer.
  return toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', content as Uint8Array<ArrayBuffer>)));
}

export function toHex(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return hex;
}
