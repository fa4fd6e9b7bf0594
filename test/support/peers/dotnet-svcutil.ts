/**
 * dotnet-svcutil, the generator of .NET's "Add Service Reference", as a new .NET user runs it on the published
 * description (a WSDL URL or a net.tcp MEX address), and SvcutilClient (test/dotnet/SvcutilClient) compiled with
 * the proxy it writes.
 *
 * - The tool (8.0.0) comes from the team's local feed ../shared/nuget (its README): installed once with
 *   `dotnet tool install --tool-path` under node_modules/.cache, never into the repository tree. Without `dotnet` or
 *   without the feed, everything here rejects with DotnetUnavailableError, which the suites turn into a skip.
 * - `--reference` names System.Data.Common.dll of the runtime the tool runs on: DataTable is not among the types
 *   dotnet-svcutil knows by itself (.NET Framework's svcutil references System.Data by default), and without it the
 *   DataContract importer cannot map ReturnDatatable's result to System.Data.DataTable and falls back to the
 *   XmlSerializer for the whole contract (dotnet/wcf#4770). The path form keeps the tool quiet; the name form
 *   (`-r System.Data.Common`) works too but makes the bootstrapper's restore warn (NU1510) on .NET 10.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildDotnetProject,
  DOTNET_MISSING,
  dotnetAvailable,
  dotnetEnv,
  DotnetUnavailableError,
  runDotnet,
  type DotnetBuild,
} from './dotnet.ts';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** The team's local NuGet feed beside the clone (absent on a user's clone). */
export const SHARED_NUGET = resolve(REPO, '..', 'shared', 'nuget');
const VERSION = '8.0.0';
const TOOL_DIR = join(REPO, 'node_modules', '.cache', `dotnet-svcutil-${VERSION}`);

/** Why the svcutil suites cannot run here, or undefined when they can. */
export function svcutilMissing(): string | undefined {
  if (!dotnetAvailable()) return DOTNET_MISSING;
  if (!existsSync(join(SHARED_NUGET, `dotnet-svcutil.${VERSION}.nupkg`)))
    return `dotnet-svcutil ${VERSION} is not in the local NuGet feed ${SHARED_NUGET} (the team's peer build beside the clone)`;
  return undefined;
}

let installed: Promise<string> | undefined;

/** The tool's executable, installed on first use. */
export function svcutilTool(): Promise<string> {
  installed ??= (async () => {
    const missing = svcutilMissing();
    if (missing) throw new DotnetUnavailableError(missing);
    const exe = join(TOOL_DIR, 'dotnet-svcutil');
    if (existsSync(exe)) return exe;
    const r = await runDotnet(
      [
        'tool',
        'install',
        '--tool-path',
        TOOL_DIR,
        'dotnet-svcutil',
        '--add-source',
        SHARED_NUGET,
        '--version',
        VERSION,
      ],
      { timeoutMs: 300_000 },
    );
    if (r.code !== 0 || !existsSync(exe))
      throw new Error(`dotnet tool install dotnet-svcutil failed:\n${r.stdout}${r.stderr}`);
    return exe;
  })();
  installed.catch(() => (installed = undefined));
  return installed;
}

/** System.Data.Common.dll of the newest .NET runtime here (the one the tool runs on). */
function systemDataCommon(): string {
  const list = spawnSync('dotnet', ['--list-runtimes'], { encoding: 'utf8', env: dotnetEnv() }).stdout ?? '';
  const runtimes = [...list.matchAll(/^Microsoft\.NETCore\.App (\S+) \[(.+)\]$/gm)].map((m) => join(m[2]!, m[1]!));
  const dll = runtimes.map((dir) => join(dir, 'System.Data.Common.dll')).findLast((f) => existsSync(f));
  if (!dll) throw new DotnetUnavailableError(`no Microsoft.NETCore.App runtime with System.Data.Common.dll:\n${list}`);
  return dll;
}

export interface GeneratedProxy {
  /** Reference.cs as written. */
  source: string;
  /** Everything the tool printed (stdout and stderr). */
  output: string;
}

/**
 * dotnet-svcutil runs one at a time: two runs started in the same second share its temporary folder
 * (/tmp/dotnet-svcutil-lib_Temp/<date to the second>) and mix their outputs or fail on each other's files.
 */
let previousRun: Promise<unknown> = Promise.resolve();

/** Runs dotnet-svcutil on `input` (a WSDL URL or file, or a MEX address) into a fresh folder, namespace Generated. */
export function generateProxy(input: string): Promise<GeneratedProxy> {
  const run = previousRun.then(() => runSvcutil(input));
  previousRun = run.catch(() => {});
  return run;
}

async function runSvcutil(input: string): Promise<GeneratedProxy> {
  const tool = await svcutilTool();
  const dir = await mkdtemp(join(tmpdir(), 'idb-svcutil-'));
  const args = [input, '--outputDir', 'ServiceReference', '--namespace', '*,Generated', '--noLogo'];
  // Asynchronous: the server that answers the tool usually lives in the test's own process.
  const r = await new Promise<{ status: number; output: string }>((done) => {
    execFile(
      tool,
      [...args, '--reference', systemDataCommon()],
      {
        cwd: dir,
        env: dotnetEnv({ DOTNET_SVCUTIL_TELEMETRY_OPTOUT: '1' }),
        timeout: 300_000,
        killSignal: 'SIGKILL',
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) =>
        done({ status: error ? (typeof error.code === 'number' ? error.code : -1) : 0, output: `${stdout}${stderr}` }),
    );
  });
  const output = r.output;
  const file = join(dir, 'ServiceReference', 'Reference.cs');
  if (r.status !== 0 || !existsSync(file)) throw new Error(`dotnet-svcutil ${input} failed (${r.status}):\n${output}`);
  return { source: readFileSync(file, 'utf8'), output };
}

/** SvcutilClient compiled with `proxy` (cached under a hash of the proxy and the sources). */
export function buildSvcutilClient(proxy: GeneratedProxy): Promise<DotnetBuild> {
  return buildDotnetProject('SvcutilClient', {
    extraKey: [proxy.source],
    prepare: async (src) => {
      const folder = join(src, 'SvcutilClient', 'ServiceReference');
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'Reference.cs'), proxy.source);
    },
  });
}

/** The generated service contract's methods: `{ HeartbeatAsync: 'System.Threading.Tasks.Task<bool> HeartbeatAsync()' }`. */
export function contractMethods(source: string): Map<string, string> {
  const body = /public interface IIDBService\s*\{([\s\S]*?)\n {4}\}/.exec(source)?.[1] ?? '';
  return new Map(
    Array.from(body.matchAll(/^\s*([\w.[\]<>]+) (\w+)\(([^)]*)\);$/gm), (m) => [m[2]!, `${m[1]} ${m[2]}(${m[3]})`]),
  );
}

/** The body of the generated GetBindingForEndpoint and GetEndpointAddress: the generated configuration. */
export function generatedConfiguration(source: string): string {
  const method = (name: string) =>
    new RegExp(
      `private static [\\w.]+ ${name}\\(EndpointConfiguration endpointConfiguration\\)\\s*\\{[\\s\\S]*?\\n {8}\\}`,
    ).exec(source)?.[0] ?? '';
  return `${method('GetBindingForEndpoint')}\n${method('GetEndpointAddress')}`;
}
