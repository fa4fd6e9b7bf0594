/**
 * A build cached in a folder of its own, shared by the C# tool chains (support/peers/mono-e2e.ts: mcs into os.tmpdir();
 * support/peers/dotnet.ts: the .NET SDK into node_modules/.cache): the folder is named by a hash of what went in, and a
 * build is written into a private folder that is then renamed into place, so parallel test workers never see half a
 * build (the loser of the rename uses the winner's).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** `dir` when it holds a complete build with every one of `outputs` (paths inside it), else `build(work)` renamed there. */
export async function cachedBuild(
  dir: string,
  outputs: readonly string[],
  build: (work: string) => Promise<void>,
): Promise<string> {
  const complete = () => existsSync(join(dir, '.complete')) && outputs.every((o) => existsSync(join(dir, o)));
  if (complete()) return dir;
  const work = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  await mkdir(work, { recursive: true });
  try {
    await build(work);
    await writeFile(join(work, '.complete'), new Date().toISOString());
    try {
      await rename(work, dir);
    } catch {
      // Another worker won the race (its build is there), or a stale, incomplete folder is in the way: replace it.
      if (!complete()) {
        await rm(dir, { recursive: true, force: true });
        await rename(work, dir);
      }
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  if (!complete()) throw new Error(`the build in ${dir} is incomplete`);
  return dir;
}
