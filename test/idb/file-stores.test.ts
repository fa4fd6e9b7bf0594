import { spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AwsClient } from 'aws4fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.ts';
import { StoreError, type FileStore } from '../../src/idb/file-store.ts';
import { parseFilesUrl, readFilesConfig, type S3FilesConfig } from '../../src/idb/files-url.ts';
import { S3FileStore } from '../../src/idb/s3-file-store.ts';
import { FolderFileStore } from '../../src/runtime/node/idb/folder-file-store.ts';
import { startS3rver, type RunningS3 } from '../support/peers/s3rver.ts';

const MiB = 1024 * 1024;
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const projectRoot = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

function bytes(length: number): Uint8Array {
  const buffer = randomBytes(length);
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}
const sha256 = (content: Uint8Array) => createHash('sha256').update(content).digest('hex');

async function storeError(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StoreError);
  return error as StoreError;
}

/** A store under test, plus a way to damage a stored content behind its back. */
interface Harness {
  store: FileStore;
  corrupt(key: string): Promise<void>;
  close(): Promise<void>;
}

async function folderHarness(): Promise<Harness> {
  const root = await mkdtemp(join(tmpdir(), 'idb-files-'));
  const store = await FolderFileStore.open({ root });
  return {
    store,
    async corrupt(key) {
      const path = store.pathOf(key);
      const content = await readFile(path);
      content[Math.floor(content.length / 2)]! ^= 0x01;
      await writeFile(path, content);
    },
    close: () => rm(root, { recursive: true, force: true }),
  };
}

const BUCKET = 'idb-test';

function s3Config(s3: RunningS3): S3FilesConfig {
  const config = parseFilesUrl(`s3://${BUCKET}/files/?endpoint=${s3.endpoint}&region=us-east-1`, {
    AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
  });
  if (config.kind !== 's3') throw new Error('expected an s3 config');
  return config;
}

async function s3Harness(): Promise<Harness> {
  const s3 = await startS3rver([BUCKET]);
  const config = s3Config(s3);
  const raw = new AwsClient({ ...s3.credentials, service: 's3', region: 'us-east-1' });
  return {
    store: new S3FileStore(config),
    async corrupt(key) {
      // Another writer replaces the object with other bytes (and a metadata hash that matches them, to show it is not used).
      const other = bytes(1000);
      const res = await raw.fetch(`${s3.endpoint}/${BUCKET}/files/${key}`, {
        method: 'PUT',
        body: other as Uint8Array<ArrayBuffer>,
        headers: { 'x-amz-meta-sha256': sha256(other) },
      });
      expect(res.status).toBe(200);
    },
    close: () => s3.stop(),
  };
}

describe.each([
  { name: 'folder', open: folderHarness },
  { name: 's3 (s3rver)', open: s3Harness },
])('FileStore: $name', ({ open }) => {
  let h: Harness;
  beforeAll(async () => {
    h = await open();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('stores a 0-byte content and gives back an empty array, not undefined', async () => {
    const key = randomUUID();
    expect(await h.store.put(key, new Uint8Array(0))).toEqual({ sha256: EMPTY_SHA256, length: 0 });
    const back = await h.store.get(key, EMPTY_SHA256);
    expect(back).toBeInstanceOf(Uint8Array);
    expect(back?.byteLength).toBe(0);
  });

  it('round-trips 1 MiB and reports its sha256 and length; the expected sha256 may be upper case', async () => {
    const key = randomUUID();
    const content = bytes(MiB);
    expect(await h.store.put(key, content)).toEqual({ sha256: sha256(content), length: MiB });
    const back = await h.store.get(key, sha256(content).toUpperCase());
    expect(back?.constructor).toBe(Uint8Array);
    expect(Buffer.from(back!).equals(content)).toBe(true);
  });

  it('round-trips 50 MiB with memory in proportion', async () => {
    const key = randomUUID();
    const content = bytes(50 * MiB);
    const digest = sha256(content);
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    try {
      expect(await h.store.put(key, content)).toEqual({ sha256: digest, length: 50 * MiB });
      const back = await h.store.get(key, digest);
      expect(back?.byteLength).toBe(50 * MiB);
      expect(Buffer.from(back!.buffer, back!.byteOffset, back!.byteLength).equals(content)).toBe(true);
    } finally {
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    // The content itself plus the read copy is 100 MiB; a handful of further copies would still pass, a leak per chunk not.
    expect(peak - before).toBeLessThan(400 * MiB);
    await h.store.delete(key);
  });

  it('overwrites: the new content is read, the old sha256 no longer matches', async () => {
    const key = randomUUID();
    const first = bytes(3000);
    const second = bytes(5000);
    await h.store.put(key, first);
    await h.store.put(key, second);
    expect(Buffer.from((await h.store.get(key, sha256(second)))!).equals(second)).toBe(true);
    expect((await storeError(h.store.get(key, sha256(first)))).kind).toBe('corrupt');
  });

  it('deletes once: true, then false, and the content is gone', async () => {
    const key = randomUUID();
    const content = bytes(10);
    await h.store.put(key, content);
    expect(await h.store.delete(key)).toBe(true);
    expect(await h.store.delete(key)).toBe(false);
    expect(await h.store.get(key, sha256(content))).toBeUndefined();
  });

  it('answers an unknown key with undefined and false', async () => {
    const key = randomUUID();
    expect(await h.store.get(key, EMPTY_SHA256)).toBeUndefined();
    expect(await h.store.delete(key)).toBe(false);
  });

  it('refuses keys that are not lower-case Guids, and malformed expected hashes', async () => {
    const guid = randomUUID();
    const bad = [
      '',
      '../../etc/passwd',
      `../${guid}`,
      `${guid}/x`,
      guid.toUpperCase(),
      `.tmp-${guid}`,
      guid.replaceAll('-', ''),
      `${guid} `,
      `${guid}\0`,
      `files/${guid}`,
    ];
    for (const key of bad) {
      expect((await storeError(h.store.put(key, new Uint8Array(1)))).kind).toBe('invalid-argument');
      expect((await storeError(h.store.get(key, EMPTY_SHA256))).kind).toBe('invalid-argument');
      expect((await storeError(h.store.delete(key))).kind).toBe('invalid-argument');
    }
    for (const digest of ['', 'abc', `${EMPTY_SHA256.slice(1)}g`, ` ${EMPTY_SHA256}`]) {
      expect((await storeError(h.store.get(guid, digest))).kind).toBe('invalid-argument');
    }
  });

  it('detects a content changed behind its back', async () => {
    const key = randomUUID();
    const content = bytes(64 * 1024);
    await h.store.put(key, content);
    // read (and checked) before: a store that remembers what it checked must notice the change all the same
    expect(Buffer.from((await h.store.get(key, sha256(content)))!)).toEqual(Buffer.from(content));
    await h.corrupt(key);
    const error = await storeError(h.store.get(key, sha256(content)));
    expect(error.kind).toBe('corrupt');
    expect(error.message).toContain(key);
  });
});

describe('FolderFileStore on disk', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'idb-folder-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('keeps each content as <root>/<two hex digits>/<id> and leaves no temporary file behind', async () => {
    const store = await FolderFileStore.open({ root: join(root, 'layout'), writeChunkBytes: 4096 });
    const keys = Array.from({ length: 40 }, () => randomUUID());
    for (const key of keys) await store.put(key, bytes(10_000));
    const folders = await readdir(store.root);
    expect(folders.every((name) => /^[0-9a-f]{2}$/.test(name))).toBe(true);
    expect(folders.length).toBeGreaterThan(10); // 40 random ids spread over 256 folders
    for (const key of keys) {
      expect(store.pathOf(key)).toMatch(new RegExp(`/[0-9a-f]{2}/${key}$`));
      expect((await stat(store.pathOf(key))).size).toBe(10_000);
    }
    for (const folder of folders)
      expect((await readdir(join(store.root, folder))).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it('hashes a file it checked before again once anything about it changed, its times put back included', async () => {
    const store = await FolderFileStore.open({ root: join(root, 'checked') });
    const key = randomUUID();
    const content = bytes(100_000);
    await store.put(key, content);
    for (let i = 0; i < 2; i++) expect((await store.get(key, sha256(content)))!.byteLength).toBe(100_000);
    // A byte flipped in place, the modification time then set back (to the millisecond; the change time moves anyway).
    const path = store.pathOf(key);
    const before = await stat(path);
    const changed = await readFile(path);
    changed[10]! ^= 0x01;
    await writeFile(path, changed);
    await utimes(path, before.atime, before.mtime);
    expect((await storeError(store.get(key, sha256(content)))).kind).toBe('corrupt');
    // Another expected sha256 is checked anew too.
    await writeFile(path, content);
    expect((await storeError(store.get(key, sha256(changed)))).kind).toBe('corrupt');
    expect((await store.get(key, sha256(content)))!.byteLength).toBe(100_000);
  });

  it('removes only stale temporary files when it opens', async () => {
    const dir = join(root, 'stale');
    const store = await FolderFileStore.open({ root: dir });
    const key = randomUUID();
    await store.put(key, bytes(10));
    const folder = dirname(store.pathOf(key));
    const young = join(folder, `.tmp-${randomUUID()}`);
    const old = join(folder, `.tmp-${randomUUID()}`);
    await writeFile(young, 'young');
    await writeFile(old, 'old');
    const { utimes } = await import('node:fs/promises');
    const hourAgo = new Date(Date.now() - 3600_000);
    await utimes(old, hourAgo, hourAgo);
    await FolderFileStore.open({ root: dir });
    const names = await readdir(folder);
    expect(names).toContain(young.slice(folder.length + 1));
    expect(names).not.toContain(old.slice(folder.length + 1));
    expect(names).toContain(key);
  });

  it('keeps the old content when the writer is killed mid-write, and a later start removes the stale temporary file', async () => {
    const dir = join(root, 'crash');
    const store = await FolderFileStore.open({ root: dir });
    const key = randomUUID();
    const old = bytes(256 * 1024);
    const { sha256: oldSha } = await store.put(key, old);
    const folder = dirname(store.pathOf(key));

    // A separate process overwrites the key with 128 MiB in 64 KiB writes; it is SIGKILLed once its temporary file holds 4 MiB.
    const script = join(root, 'crash-writer.mts'); // .mts: the temp folder has no package.json saying ESM
    const storeModule = pathToFileURL(join(projectRoot, 'src/runtime/node/idb/folder-file-store.ts')).href;
    await writeFile(
      script,
      `import { FolderFileStore } from ${JSON.stringify(storeModule)};
const [root, key] = process.argv.slice(2);
const store = await FolderFileStore.open({ root, writeChunkBytes: 64 * 1024 });
const content = new Uint8Array(128 * 1024 * 1024).fill(7);
await store.put(key, content);
process.stdout.write('finished\\n');
`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script, dir, key], {
      cwd: projectRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once('exit', (_code, signal) => resolve(signal)),
    );
    let running = true;
    void exited.then(() => (running = false));

    let temp: string | undefined;
    const deadline = Date.now() + 20_000;
    while (running && temp === undefined && Date.now() < deadline) {
      for (const name of await readdir(folder)) {
        if (!name.startsWith('.tmp-')) continue;
        const size = await stat(join(folder, name)).then(
          (s) => s.size,
          () => 0,
        );
        if (size >= 4 * MiB) temp = join(folder, name);
      }
      if (temp === undefined) await new Promise((resolve) => setImmediate(resolve));
    }
    child.kill('SIGKILL');
    const signal = await exited;
    expect(temp, `the writer was not caught mid-write; its output: ${output}`).toBeDefined();
    expect(signal).toBe('SIGKILL');
    expect(output).not.toContain('finished');

    // The half-written temporary file is there, but the key still reads the old content with its sha256.
    const tempSize = (await stat(temp!)).size;
    expect(tempSize).toBeGreaterThanOrEqual(4 * MiB);
    expect(tempSize).toBeLessThan(128 * MiB);
    const back = await store.get(key, oldSha);
    expect(Buffer.from(back!).equals(old)).toBe(true);
    expect((await stat(store.pathOf(key))).size).toBe(old.byteLength);

    // A restart with the default age keeps the young temporary file (its writer could be alive); once stale, it goes.
    await FolderFileStore.open({ root: dir });
    expect(await readdir(folder)).toContain(temp!.slice(folder.length + 1));
    const restarted = await FolderFileStore.open({ root: dir, staleTempMs: 0 });
    expect(await readdir(folder)).toEqual([key]);
    expect(Buffer.from((await restarted.get(key, oldSha))!).equals(old)).toBe(true);
  });
});

describe('S3FileStore specifics (s3rver)', () => {
  let s3: RunningS3;
  beforeAll(async () => {
    s3 = await startS3rver([BUCKET]);
  });
  afterAll(async () => {
    await s3?.stop();
  });

  it('keeps objects under the prefix, with the sha256 also as x-amz-meta-sha256', async () => {
    const store = new S3FileStore(s3Config(s3));
    const key = randomUUID();
    const content = bytes(100);
    await store.put(key, content);
    const raw = new AwsClient({ ...s3.credentials, service: 's3', region: 'us-east-1' });
    const head = await raw.fetch(`${s3.endpoint}/${BUCKET}/files/${key}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('x-amz-meta-sha256')).toBe(sha256(content));
    expect((await raw.fetch(`${s3.endpoint}/${BUCKET}/${key}`, { method: 'HEAD' })).status).toBe(404);
  });

  it('reports a missing bucket and an unreachable endpoint as unavailable', async () => {
    const missing = new S3FileStore({ ...s3Config(s3), bucket: 'no-such-bucket' });
    const error = await storeError(missing.put(randomUUID(), new Uint8Array(1)));
    expect(error.kind).toBe('unavailable');
    expect(error.message).toContain('NoSuchBucket');
    const down = new S3FileStore({ ...s3Config(s3), endpoint: 'http://127.0.0.1:1', retries: 0 });
    expect((await storeError(down.get(randomUUID(), EMPTY_SHA256))).kind).toBe('unavailable');
  });
});

describe('FILES_URL', () => {
  const creds = { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret' };

  it('defaults to the folder ./data/files', () => {
    expect(readFilesConfig({})).toEqual({ kind: 'folder', path: './data/files' });
    expect(readFilesConfig({ FILES_URL: '' })).toEqual({ kind: 'folder', path: './data/files' });
  });

  it.each([
    ['file:./data/files', './data/files'],
    ['file:data/files', 'data/files'],
    ['file:/var/lib/idb/files', '/var/lib/idb/files'],
    ['file:///var/lib/idb/files', '/var/lib/idb/files'],
    ['file://localhost/srv/files', '/srv/files'],
    ['file:///C:/idb/files', 'C:/idb/files'],
    ['file:./my%20files', './my files'],
  ])('reads %s as the folder %s', (url, path) => {
    expect(parseFilesUrl(url)).toEqual({ kind: 'folder', path });
  });

  it('reads an S3 URL with an endpoint (path style) and credentials from the environment', () => {
    expect(
      parseFilesUrl('s3://idb-files/prod/?endpoint=http://127.0.0.1:4569&region=eu-central-2', {
        ...creds,
        AWS_SESSION_TOKEN: 'token',
      }),
    ).toEqual({
      kind: 's3',
      bucket: 'idb-files',
      prefix: 'prod/',
      endpoint: 'http://127.0.0.1:4569',
      region: 'eu-central-2',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', sessionToken: 'token' },
    });
  });

  it('defaults to AWS in AWS_REGION with bucket host names', () => {
    expect(parseFilesUrl('s3://idb-files', { ...creds, AWS_REGION: 'eu-west-3' })).toMatchObject({
      prefix: '',
      endpoint: 'https://s3.eu-west-3.amazonaws.com',
      region: 'eu-west-3',
      forcePathStyle: false,
    });
    expect(parseFilesUrl('s3://idb-files?forcePathStyle=true', creds)).toMatchObject({
      region: 'us-east-1',
      forcePathStyle: true,
    });
    expect(
      parseFilesUrl(
        's3://idb-files?endpoint=https://acc.r2.cloudflarestorage.com&region=auto&forcePathStyle=false',
        creds,
      ),
    ).toMatchObject({
      endpoint: 'https://acc.r2.cloudflarestorage.com',
      region: 'auto',
      forcePathStyle: false,
    });
  });

  it.each([
    ['http://example.com/files', /must be file:/],
    ['./data/files', /must be file:/],
    ['file:', /needs a folder path/],
    ['file:./files?x=1', /no query/],
    ['file://fileserver/share', /local folder/],
    ['file:./%zz', /%-escape/],
    ['s3://Idb_Files', /bucket name/],
    ['s3://idb-files?endpont=http://x', /unknown parameter "endpont"/],
    ['s3://key:secret@idb-files', /must not carry credentials/],
    ['s3://idb-files:9000', /port belongs in the endpoint/],
    ['s3://idb-files/prod', /must end in \//],
    ['s3://idb-files?endpoint=ftp://host', /http: or https:/],
    ['s3://idb-files?endpoint=http://host/path', /origin only/],
    ['s3://idb-files?forcePathStyle=yes', /true or false/],
  ])('refuses %s', (url, message) => {
    expect(() => parseFilesUrl(url, creds)).toThrow(ConfigError);
    expect(() => parseFilesUrl(url, creds)).toThrow(message);
  });

  it('refuses s3 without credentials in the environment', () => {
    expect(() => parseFilesUrl('s3://idb-files', { AWS_ACCESS_KEY_ID: 'only-the-id' })).toThrow(
      /AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/,
    );
  });
});
