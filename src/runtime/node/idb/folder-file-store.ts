/**
 * FileStore in a folder of the local file system (FILES_URL `file:…`), for Node (Bun and Deno run node:fs too).
 *
 * Layout: `<root>/<xx>/<file id>`, where `xx` is two hex digits of a hash of the id. The fan-out keeps directories small
 * (256 of them: a million files is about 4 000 a folder); it hashes the id instead of taking its first characters
 * because ids need not be random there (time-ordered UUIDs and SQL Server's sequential Guids share long runs of
 * leading or trailing digits, which would pile them into a few folders). `ls <root>/??/<id>` finds a file by hand.
 *
 * Atomic writes: the content goes to `<root>/<xx>/.tmp-<random uuid>` (opened exclusively), is written and fsynced,
 * then renamed over the target, and the folder is fsynced so the rename itself survives a power cut. A rename replaces
 * the directory entry in one step, so a reader opens the old file or the new one, never a mix, and a crash at any
 * point before the rename leaves the old content in place plus a stray temporary file. Temporary names start with a
 * dot and cannot be keys (keys are Guids, see file-store.ts), so `get` never sees one.
 *
 * Stray temporary files are removed when a store is opened, but only those older than `staleTempMs` (default 15
 * minutes): another process sharing the folder (the HTTP service and the bridge may both run) could be writing the
 * younger ones right now.
 *
 * Windows: renaming over a file another process holds open fails there (EPERM); folders cannot be opened for fsync, so
 * that step is skipped.
 *
 * Checked reads: `get` hashes the content it read against the database's sha256, unless the same file (device, inode,
 * size, modification and change times in nanoseconds, read from the open file) was read and matched that sha256
 * before, as git trusts an index entry whose stat data has not changed. A key's content is never rewritten in place
 * (a write goes to a new key), so anything that changes it (a truncation, another writer, a restore) changes those
 * too and is hashed again. Hashing was a quarter of the bridge's time for a 1 MiB GetFile (profile, 2026-11).
 * Remembered: the last VERIFIED_KEPT files, in this process.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  checkKey,
  checkSha256,
  StoreError,
  verifySha256,
  type FileStore,
  type StoredContent,
} from '../../../idb/file-store.ts';

export interface FolderFileStoreOptions {
  /** The store's folder; created if missing. Relative to the working directory. */
  root: string;
  /** Temporary files older than this are removed when the store opens; default 15 minutes. */
  staleTempMs?: number;
  /**
   * Bytes handed to one write call; default 1 MiB. Each call is one job on libuv's thread pool, so a 64 MiB file does
   * not hold a pool thread (and the fs calls of other requests queued behind it) for the whole write.
   */
  writeChunkBytes?: number;
}

const TEMP_PREFIX = '.tmp-';
const VERIFIED_KEPT = 10_000;
const FANOUT = /^[0-9a-f]{2}$/;
const MiB = 1024 * 1024;

export class FolderFileStore implements FileStore {
  readonly root: string;
  readonly #chunk: number;
  /** Key → the sha256 its file matched and the file's identity then (see "Checked reads"). */
  readonly #verified = new Map<string, string>();

  private constructor(root: string, chunk: number) {
    this.root = root;
    this.#chunk = chunk;
  }

  /** Creates the folder if needed and removes stale temporary files left by crashed writers. */
  static async open(options: FolderFileStoreOptions): Promise<FolderFileStore> {
    const store = new FolderFileStore(resolve(options.root), Math.max(4096, options.writeChunkBytes ?? MiB));
    await io('create the store folder', () => mkdir(store.root, { recursive: true }));
    await store.removeStaleTemps(options.staleTempMs ?? 15 * 60_000);
    return store;
  }

  /** Where the content of `key` lives (for operators and tests). */
  pathOf(key: string): string {
    const id = checkKey(key);
    return join(this.root, fanout(id), id);
  }

  async put(key: string, content: Uint8Array): Promise<StoredContent> {
    const target = this.pathOf(key);
    const folder = join(this.root, fanout(key));
    const sha256 = createHash('sha256').update(content).digest('hex');
    const created = await io('create a fan-out folder', () => mkdir(folder, { recursive: true }));
    if (created !== undefined) await syncFolder(this.root);
    const temp = join(folder, TEMP_PREFIX + randomUUID());
    try {
      const file = await io('create a temporary file', () => open(temp, 'wx', 0o644));
      try {
        for (let at = 0; at < content.byteLength; ) {
          const { bytesWritten } = await io('write', () =>
            file.write(content, at, Math.min(this.#chunk, content.byteLength - at)),
          );
          at += bytesWritten;
        }
        await io('fsync', () => file.sync());
      } finally {
        await file.close();
      }
      await io('rename', () => rename(temp, target));
    } catch (error) {
      await unlink(temp).catch(() => {});
      throw error;
    }
    await syncFolder(folder);
    return { sha256, length: content.byteLength };
  }

  async get(key: string, sha256: string): Promise<Uint8Array | undefined> {
    const path = this.pathOf(key);
    const expected = checkSha256(sha256);
    let buffer: Buffer;
    let identity: string;
    let size: bigint;
    try {
      const file = await open(path, 'r');
      try {
        const stats = await file.stat({ bigint: true });
        size = stats.size;
        identity = `${expected} ${stats.dev} ${stats.ino} ${size} ${stats.mtimeNs} ${stats.ctimeNs}`;
        buffer = await file.readFile();
      } finally {
        await file.close();
      }
    } catch (error) {
      if (code(error) === 'ENOENT') return undefined;
      throw unavailable('read', error);
    }
    if (this.#verified.get(key) !== identity || BigInt(buffer.byteLength) !== size) {
      this.#verified.delete(key);
      verifySha256(key, createHash('sha256').update(buffer).digest('hex'), expected);
      if (this.#verified.size >= VERIFIED_KEPT) this.#verified.delete(this.#verified.keys().next().value!);
      this.#verified.set(key, identity);
    }
    // A plain Uint8Array over the same memory: callers get the same type from every store.
    return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  }

  async delete(key: string): Promise<boolean> {
    const path = this.pathOf(key);
    try {
      await unlink(path);
    } catch (error) {
      if (code(error) === 'ENOENT') return false;
      throw unavailable('delete', error);
    }
    await syncFolder(join(this.root, fanout(key)));
    return true;
  }

  /** Removes temporary files older than `maxAgeMs` from the fan-out folders; how many it removed. */
  async removeStaleTemps(maxAgeMs: number, now = Date.now()): Promise<number> {
    let removed = 0;
    const folders = (await io('list the store folder', () => readdir(this.root, { withFileTypes: true }))).filter(
      (entry) => entry.isDirectory() && FANOUT.test(entry.name),
    );
    for (const folder of folders) {
      const dir = join(this.root, folder.name);
      const names = await readdir(dir).catch(() => [] as string[]);
      for (const name of names) {
        if (!name.startsWith(TEMP_PREFIX)) continue;
        const path = join(dir, name);
        // A temp file may be renamed or removed by its writer meanwhile: then it is not ours to count.
        const info = await stat(path).catch(() => undefined);
        if (info === undefined || now - info.mtimeMs < maxAgeMs) continue;
        if (
          await unlink(path).then(
            () => true,
            () => false,
          )
        )
          removed++;
      }
    }
    return removed;
  }
}

/** FNV-1a (32 bit) of the id, folded to two hex digits: cheap, stable across versions and platforms, spreads any id form. */
function fanout(id: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return ((hash ^ (hash >>> 8) ^ (hash >>> 16) ^ (hash >>> 24)) & 0xff).toString(16).padStart(2, '0');
}

/** Makes renames, creations and removals in `dir` durable. Windows cannot open a folder for that; there it is skipped. */
async function syncFolder(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await io('open a folder for fsync', () => open(dir, 'r'));
  try {
    await io('fsync a folder', () => handle.sync());
  } finally {
    await handle.close();
  }
}

async function io<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw unavailable(what, error);
  }
}

function unavailable(what: string, error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  return new StoreError(
    'unavailable',
    `file store could not ${what}: ${code(error) ?? (error instanceof Error ? error.message : String(error))}`,
    { cause: error },
  );
}

function code(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error
    ? String((error as { code: unknown }).code)
    : undefined;
}
