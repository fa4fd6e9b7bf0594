import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';

/**
 * The one way tests reach ../shared (corpora and captures kept beside the repository, not in it). A user's clone has
 * none: then every corpus suite is skipped with a message saying so, instead of failing.
 */
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const SHARED_DIR = process.env.SHARED_DIR ?? resolve(repoRoot, '../shared');
export const sharedAvailable = existsSync(join(SHARED_DIR, 'corpus'));

let warned = false;
export function describeShared(name: string, body: () => void): void {
  if (!sharedAvailable && !warned) {
    warned = true;
    console.warn(
      `[corpus] ${SHARED_DIR} not found: suites that read the shared corpus are skipped (set SHARED_DIR to run them).`,
    );
  }
  // Without ../shared the body is not even run (it reads the corpus to list its cases): one skipped test says why.
  if (sharedAvailable) describe(`${name} (shared corpus)`, body);
  else describe.skip(`${name} (shared corpus)`, () => it.skip(`needs ${SHARED_DIR}`, () => {}));
}

export const sharedPath = (...parts: string[]): string => join(SHARED_DIR, ...parts);
export const readShared = (...parts: string[]): Uint8Array => new Uint8Array(readFileSync(sharedPath(...parts)));
export const readSharedJson = <T>(...parts: string[]): T => JSON.parse(readFileSync(sharedPath(...parts), 'utf8')) as T;
export const sharedExists = (...parts: string[]): boolean => existsSync(sharedPath(...parts));
