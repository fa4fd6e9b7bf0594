/**
 * The .NET projects' local package source (test/support/peers/dotnet.ts): a project's NuGet.config names
 * ../shared/nuget relative to its folder; the build copy gets it absolute, and where the folder is absent (a user's
 * clone) the project is unavailable with a message naming it, so its suites skip instead of every restore failing
 * (NU1301).
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { absoluteNuGetConfig, DOTNET_SOURCES, DotnetUnavailableError } from '../support/peers/dotnet.ts';

describe('NuGet.config of a .NET test project', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nuget-config-'));
    await mkdir(join(dir, 'feed'));
    await mkdir(join(dir, 'project'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const config = (value: string) =>
    '<configuration><packageSources>' +
    `<add key="peer-local" value="${value}" /><add key="nuget.org" value="https://api.nuget.org/v3/index.json" />` +
    '</packageSources></configuration>';

  it('names a present local feed by its absolute path and leaves URLs alone', async () => {
    const file = join(dir, 'project', 'NuGet.config');
    await writeFile(file, config('../feed'));
    const copied = absoluteNuGetConfig(file);
    expect(copied).toContain(`value="${join(dir, 'feed')}"`);
    expect(copied).toContain('value="https://api.nuget.org/v3/index.json"');
  });

  it('makes the project unavailable, naming the folder, where the feed is absent', async () => {
    const file = join(dir, 'project', 'NuGet.config');
    await writeFile(file, config('../no-such-feed'));
    expect(() => absoluteNuGetConfig(file)).toThrow(DotnetUnavailableError);
    expect(() => absoluteNuGetConfig(file)).toThrow(join(dir, 'no-such-feed'));
  });

  it("CoreWcfHost's names ../shared/nuget beside the clone", () => {
    const file = join(DOTNET_SOURCES, 'CoreWcfHost', 'NuGet.config');
    const feed = join(DOTNET_SOURCES, '..', '..', '..', 'shared', 'nuget');
    try {
      expect(absoluteNuGetConfig(file)).toContain(`value="${feed}"`);
    } catch (error) {
      expect(error).toBeInstanceOf(DotnetUnavailableError);
    }
  });
});
