/**
 * The .NET side of the tests and the benchmark (test/dotnet/*): C# projects restored from NuGet and built with the
 * .NET SDK once per change of their sources, then run with `dotnet <dll>`.
 *
 * - Builds are cached under node_modules/.cache/idb-dotnet/<project>-<hash of the sources and the SDK version>: the
 *   sources (the project's folder, the files its csproj links from elsewhere under test/, such as test/wcf-shared's,
 *   and test/dotnet's shared settings) are copied into a private folder with their places relative to test/ kept,
 *   built there (`dotnet build -c Release -o out`, so no bin/ or obj/ appears under test/dotnet), and the folder is
 *   renamed into place (support/peers/build-cache.ts). Memoized per process.
 * - A project may bring a NuGet.config naming a local package source by a path relative to its folder (CoreWcfHost:
 *   ../shared/nuget beside the clone, where the team's CoreWCF build lives). The copy gets that config with the path
 *   made absolute; where the folder is absent (a user's clone) the project is "unavailable" before any restore, since
 *   a missing local source fails every restore (NU1301), and the suites say which folder is missing.
 * - A project whose packages the NuGet feed does not serve (restore errors NU1101/NU1102) is "unavailable": the
 *   rejection is a DotnetUnavailableError carrying the restore's words, and the suites skip with that message
 *   instead of failing. Without `dotnet` on PATH everything is unavailable (a user's clone).
 * - The programs print JSON-line checks (test/wcf-shared/Report.cs, shared with the Mono clients), parsed by
 *   support/peers/mono-e2e.ts's parseChecks.
 * - Every .NET process gets KRB5_CONFIG pointing at a krb5.conf without DNS look-ups unless the caller sets its own:
 *   .NET's Negotiate tries Kerberos first, and the machine's krb5.conf sends it to KDCs on the internet (5 s DNS
 *   time-outs here, and traffic that must not leave the machine).
 */
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cachedBuild } from './build-cache.ts';
import { parseChecks, type MonoRun } from './mono-e2e.ts';
import type { RunResult } from './mono.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
/** test/: the root of a build's copied sources. */
const TEST_DIR = resolve(HERE, '../..');
/** test/dotnet: the projects. */
export const DOTNET_SOURCES = join(TEST_DIR, 'dotnet');
const REPO = resolve(TEST_DIR, '..');
const CACHE = join(REPO, 'node_modules', '.cache', 'idb-dotnet');

export type DotnetProject =
  | 'WcfClient'
  | 'CoreWcfHost'
  | 'HttpApiClient'
  | 'SvcutilClient'
  | 'NswagClient'
  | 'KiotaClient'
  | 'SqlParity';

export class DotnetUnavailableError extends Error {
  override name = 'DotnetUnavailableError';
}

function findDotnet(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'dotnet');
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

let sdkVersion: string | undefined | null = null;

/** The SDK's version, or undefined when `dotnet` is not installed or does not run. */
export function dotnetVersion(): string | undefined {
  if (sdkVersion !== null) return sdkVersion;
  const dotnet = findDotnet();
  const probe =
    dotnet === undefined
      ? undefined
      : spawnSync(dotnet, ['--version'], { encoding: 'utf8', env: dotnetEnv(), timeout: 60_000 });
  sdkVersion = probe?.status === 0 ? probe.stdout.trim() : undefined;
  return sdkVersion;
}

/** For `describe.skipIf`: whether the .NET SDK is here. */
export function dotnetAvailable(): boolean {
  return dotnetVersion() !== undefined;
}

/** The suites' visible message when the SDK is missing. */
export const DOTNET_MISSING =
  'the .NET SDK (`dotnet`) is not on PATH: the .NET client suites are skipped (the dotnet machine image has it).';

let krb5Config: string | undefined;

/** A krb5.conf for .NET processes that do not talk to a test KDC: no DNS look-ups, no realm of the machine's. */
export function quietKrb5Config(): string {
  if (krb5Config && existsSync(krb5Config)) return krb5Config;
  const dir = join(tmpdir(), `idb-dotnet-krb5-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  krb5Config = join(dir, 'krb5.conf');
  writeFileSync(
    krb5Config,
    '[libdefaults]\n  dns_lookup_kdc = false\n  dns_lookup_realm = false\n  dns_canonicalize_hostname = false\n  rdns = false\n',
  );
  return krb5Config;
}

/** The environment of every dotnet process: quiet, no telemetry, no first-run work, no stray Kerberos. */
export function dotnetEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DOTNET_CLI_TELEMETRY_OPTOUT: '1',
    DOTNET_NOLOGO: '1',
    DOTNET_SKIP_FIRST_TIME_EXPERIENCE: '1',
    DOTNET_GENERATE_ASPNET_CERTIFICATE: 'false',
    MSBUILDDISABLENODEREUSE: '1',
    KRB5_CONFIG: quietKrb5Config(),
    KRB5CCNAME: `FILE:${join(tmpdir(), 'idb-dotnet-no-ccache')}`,
    ...extra,
  };
}

export interface RunOptions {
  cwd?: string;
  /** Killed (SIGKILL) after this long (default 300 s). */
  timeoutMs?: number;
  /** Added to dotnetEnv(). */
  env?: NodeJS.ProcessEnv;
}

/** Runs `dotnet args` to its end; rejects only when it cannot start or times out. Asynchronous: the server under
 * test usually lives in the test's own process. */
export function runDotnet(args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  const dotnet = findDotnet();
  if (dotnet === undefined) return Promise.reject(new DotnetUnavailableError(DOTNET_MISSING));
  const timeoutMs = options.timeoutMs ?? 300_000;
  return new Promise((done, reject) => {
    execFile(
      dotnet,
      args,
      {
        cwd: options.cwd,
        env: dotnetEnv(options.env),
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: 256 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        if (error?.killed)
          return reject(
            new Error(`dotnet ${args.join(' ')} did not finish within ${timeoutMs} ms\n${stdout}${stderr}`),
          );
        if (error && typeof error.code !== 'number') return reject(error);
        done({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
  });
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'bin' || entry.name === 'obj' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out.sort();
}

/** The files a project's csproj compiles from outside its folder (`<Compile Include="../../wcf-shared/Report.cs" …/>`:
 * plain paths, no wildcards); each must lie under test/, the root of the copy. */
function linkedFiles(project: DotnetProject): string[] {
  const folder = join(DOTNET_SOURCES, project);
  const csproj = readFileSync(join(folder, `${project}.csproj`), 'utf8');
  const linked = [...csproj.matchAll(/<Compile\s+Include="([^"]+)"/g)].map((m) =>
    resolve(folder, m[1]!.replaceAll('\\', '/')),
  );
  for (const file of linked) {
    const path = relative(TEST_DIR, file);
    if (path.startsWith('..') || isAbsolute(path) || !existsSync(file))
      throw new Error(`${project}.csproj compiles ${file}, which is not a file under test/`);
  }
  return linked.filter((file) => relative(folder, file).startsWith('..'));
}

/** The source files of a project (its folder, the files it links, Directory.Build.props). */
function projectFiles(project: DotnetProject): string[] {
  const extras = ['Directory.Build.props'].map((f) => join(DOTNET_SOURCES, f)).filter((f) => existsSync(f));
  return [...extras, ...filesUnder(join(DOTNET_SOURCES, project)), ...linkedFiles(project)];
}

const NUGET_CONFIG = /^nuget\.config$/i;

/**
 * A project's NuGet.config as the copy needs it: the relative `value` of each package source resolved against the
 * folder of the original file, since the copy lives elsewhere. Rejects, naming the folder, when a local source is
 * absent.
 */
export function absoluteNuGetConfig(file: string): string {
  return readFileSync(file, 'utf8').replace(/(<add\s[^>]*\bvalue=")([^"]+)(")/g, (whole, before, value, after) => {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value) || isAbsolute(value)) return whole;
    const folder = resolve(dirname(file), value);
    if (!existsSync(folder))
      throw new DotnetUnavailableError(
        `${relative(TEST_DIR, file)} names the local NuGet feed ${folder}, which is absent (the team's peer build ` +
          'of CoreWCF and dotnet-svcutil in ../shared/nuget beside the clone)',
      );
    return `${before}${folder}${after}`;
  });
}

/** The text a source file has in the copy. */
function copiedText(file: string): Buffer | string {
  return NUGET_CONFIG.test(basename(file)) ? absoluteNuGetConfig(file) : readFileSync(file);
}

function hashOf(project: DotnetProject, extra: readonly string[]): string {
  const h = createHash('sha256');
  h.update(dotnetVersion() ?? 'none');
  for (const file of projectFiles(project)) h.update(relative(TEST_DIR, file)).update(copiedText(file));
  for (const e of extra) h.update(e);
  return h.digest('hex').slice(0, 20);
}

/** Why a restore or build failed, as the NuGet or compiler lines say it. */
function describeFailure(result: RunResult): string {
  const lines = `${result.stdout}\n${result.stderr}`.split('\n').filter((l) => /error|NU1\d{3}/.test(l));
  return [...new Set(lines.map((l) => l.trim()))].slice(0, 12).join('\n') || `exit code ${result.code}`;
}

export interface DotnetBuild {
  dir: string;
  /** The program: run with `dotnet <dll>`. */
  dll: string;
}

const builds = new Map<string, Promise<DotnetBuild>>();

/**
 * The built project (cached, see above). `prepare(src)` may add files to the copied sources before the build (the
 * svcutil client's generated proxy), `src` being the copy of test/dotnet; `extraKey` must then say what makes them
 * differ.
 */
export function buildDotnetProject(
  project: DotnetProject,
  options: { prepare?: (src: string) => Promise<void>; extraKey?: readonly string[] } = {},
): Promise<DotnetBuild> {
  if (!dotnetAvailable()) return Promise.reject(new DotnetUnavailableError(DOTNET_MISSING));
  let key: string;
  try {
    key = `${project}-${hashOf(project, options.extraKey ?? [])}`;
  } catch (error) {
    return Promise.reject(error);
  }
  let built = builds.get(key);
  if (!built) {
    built = build(project, key, options.prepare);
    builds.set(key, built);
    built.catch(() => builds.delete(key));
  }
  return built;
}

async function build(
  project: DotnetProject,
  key: string,
  prepare?: (src: string) => Promise<void>,
): Promise<DotnetBuild> {
  const dll = join('out', `${project}.dll`);
  const dir = await cachedBuild(join(CACHE, key), [dll], async (work) => {
    // The sources keep their places relative to test/, so a csproj's links (../../wcf-shared/…) hold in the copy.
    const root = join(work, 'src');
    for (const file of projectFiles(project)) {
      const target = join(root, relative(TEST_DIR, file));
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, copiedText(file));
    }
    const src = join(root, relative(TEST_DIR, DOTNET_SOURCES));
    if (prepare) await prepare(src);
    const csproj = join(src, project, `${project}.csproj`);
    const restore = await runDotnet(['restore', csproj], { cwd: src, timeoutMs: 600_000 });
    if (restore.code !== 0) {
      const why = describeFailure(restore);
      if (/NU110[12]/.test(why))
        throw new DotnetUnavailableError(`${project}: the NuGet feed does not serve a package it needs:\n${why}`);
      throw new Error(`dotnet restore ${project} failed:\n${why}`);
    }
    const compiled = await runDotnet(
      ['build', csproj, '--no-restore', '-c', 'Release', '-o', join(work, 'out'), '-nologo', '-clp:ErrorsOnly'],
      { cwd: src, timeoutMs: 600_000 },
    );
    if (compiled.code !== 0 || !existsSync(join(work, dll)))
      throw new Error(`dotnet build ${project} failed:\n${describeFailure(compiled)}`);
  });
  return { dir, dll: join(dir, dll) };
}

/** WcfClient's e2e sections in the order it runs them when given none (Scenario.cs, AllSections); on `--backend
 * sqlserver` it runs `tsql` too, before `cleanup`. */
export const WCF_CLIENT_SECTIONS = [
  'heartbeat',
  'nonquery',
  'requests',
  'datatable',
  'datatable-types',
  'scalar',
  'files',
  'documents',
  'faults',
  'sql-faults',
  'channels',
  'concurrency',
  'bigfile',
  'quota',
  'cleanup',
] as const;

/** Runs a built program and parses its JSON-line checks. */
export async function runChecks(dll: string, args: readonly string[], options: RunOptions = {}): Promise<MonoRun> {
  return parseChecks(await runDotnet([dll, ...args], options));
}

/** The `info` lines of a run (exceptions the client saw), by check name. */
export function infoOf(run: MonoRun, check: string): string | undefined {
  return (run.checks.find((c) => c.check === check) as { info?: string } | undefined)?.info;
}
