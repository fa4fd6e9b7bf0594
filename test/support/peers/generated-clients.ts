/**
 * Clients generated from the service's own /openapi.json, as its callers make them, each with a small program of its
 * own (test/http/generated-clients.peers.test.ts):
 * - NSwag (`nswag openapi2csclient`, the dotnet tool NSwag.ConsoleCore) into test/dotnet/NswagClient;
 * - Kiota (`kiota generate -l CSharp`, the dotnet tool Microsoft.OpenApi.Kiota) into test/dotnet/KiotaClient;
 * - openapi-typescript (a dev dependency) for openapi-fetch, with test/clients/openapi-fetch/program.ts, checked by
 *   `tsc --strict` and run with tsx.
 * The dotnet tools are installed from NuGet with `dotnet tool install --tool-path` into node_modules/.cache (never the
 * repository); a feed that does not serve them makes the suites skip with the installer's words
 * (DotnetUnavailableError). Builds are cached by a hash of the OpenAPI document and the sources
 * (support/peers/dotnet.ts).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { cachedBuild } from './build-cache.ts';
import { buildDotnetProject, type DotnetBuild, DotnetUnavailableError, runDotnet } from './dotnet.ts';

const REPO = resolve(import.meta.dirname, '../../..');
const CACHE = join(REPO, 'node_modules', '.cache', 'generated-clients');

/** The generators, pinned: what a caller following the README would install. */
export const GENERATORS = {
  nswag: { package: 'NSwag.ConsoleCore', version: '14.7.1', command: 'nswag' },
  kiota: { package: 'Microsoft.OpenApi.Kiota', version: '1.38.0', command: 'kiota' },
} as const;

const tools = new Map<string, Promise<string>>();

/** The tool's command, installed once into node_modules/.cache/generated-clients/tools/<package>-<version>. */
export function dotnetTool(tool: keyof typeof GENERATORS): Promise<string> {
  const { package: name, version, command } = GENERATORS[tool];
  let installed = tools.get(tool);
  if (!installed) {
    installed = cachedBuild(join(CACHE, 'tools', `${name}-${version}`), [command], async (work) => {
      const run = await runDotnet(['tool', 'install', '--tool-path', work, name, '--version', version], {
        timeoutMs: 600_000,
      });
      if (run.code !== 0) {
        const why = `${run.stdout}${run.stderr}`.trim().split('\n').slice(-4).join(' ');
        throw new DotnetUnavailableError(`dotnet tool install ${name} ${version}: ${why}`);
      }
    }).then((dir) => join(dir, command));
    tools.set(tool, installed);
    installed.catch(() => tools.delete(tool));
  }
  return installed;
}

async function generate(tool: keyof typeof GENERATORS, args: string[], cwd: string): Promise<void> {
  const command = await dotnetTool(tool);
  try {
    await promisify(execFile)(command, args, { cwd, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 });
  } catch (e) {
    const failure = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${tool} ${args.join(' ')} failed:\n${failure.stdout ?? ''}${failure.stderr ?? failure.message}`);
  }
}

/** NswagClient with the client NSwag generates from `openapi` (the document's text), as the command line. */
export function buildNswagClient(openapi: string): Promise<DotnetBuild> {
  return buildDotnetProject('NswagClient', {
    extraKey: [openapi, JSON.stringify(GENERATORS.nswag)],
    prepare: async (src) => {
      const project = join(src, 'NswagClient');
      writeFileSync(join(project, 'openapi.json'), openapi);
      await generate(
        'nswag',
        ['openapi2csclient', '/input:openapi.json', '/classname:SwissDocClient', '/namespace:Gen', '/output:Client.cs'],
        project,
      );
    },
  });
}

/** KiotaClient with the client Kiota generates from `openapi`. */
export function buildKiotaClient(openapi: string): Promise<DotnetBuild> {
  return buildDotnetProject('KiotaClient', {
    extraKey: [openapi, JSON.stringify(GENERATORS.kiota)],
    prepare: async (src) => {
      const project = join(src, 'KiotaClient');
      writeFileSync(join(project, 'openapi.json'), openapi);
      await generate(
        'kiota',
        [
          'generate',
          '-l',
          'CSharp',
          '-d',
          'openapi.json',
          '-c',
          'SwissDocClient',
          '-n',
          'Gen',
          '-o',
          'Client',
          '--exclude-backward-compatible',
          '--log-level',
          'Error',
        ],
        project,
      );
    },
  });
}

/**
 * The openapi-fetch program with the types openapi-typescript generates from `openapi` (its Node API; `format: binary`
 * typed as Blob, as openapi-typescript's documentation shows for file uploads), type-checked with `tsc --strict`.
 * Returns the program's path, to run with tsx.
 */
export async function buildOpenapiFetchClient(openapi: string): Promise<string> {
  const program = join(REPO, 'test', 'clients', 'openapi-fetch', 'program.ts');
  const key = createHash('sha256').update(openapi).update(readFileSync(program)).digest('hex').slice(0, 20);
  const dir = await cachedBuild(
    join(CACHE, `openapi-fetch-${key}`),
    ['program.ts', 'schema.ts', 'package.json'],
    async (work) => {
      const blob = ts.factory.createTypeReferenceNode('Blob');
      const nodes = await openapiTS(JSON.parse(openapi) as Parameters<typeof openapiTS>[0], {
        transform: (schema) => (schema.format === 'binary' ? blob : undefined),
      });
      writeFileSync(join(work, 'schema.ts'), astToString(nodes));
      cpSync(program, join(work, 'program.ts'));
      writeFileSync(join(work, 'package.json'), '{ "type": "module" }\n');
      const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
      // Strict, as a caller's project would be; module resolution finds openapi-fetch in the repository's node_modules.
      const args = [
        tsc,
        '--noEmit',
        '--strict',
        '--target',
        'ES2022',
        '--module',
        'NodeNext',
        '--moduleResolution',
        'NodeNext',
        '--allowImportingTsExtensions',
        '--skipLibCheck',
        '--types',
        'node',
        '--typeRoots',
        join(REPO, 'node_modules', '@types'),
        join(work, 'program.ts'),
      ];
      try {
        await promisify(execFile)(process.execPath, args, { cwd: work, timeout: 300_000 });
      } catch (e) {
        const failure = e as { stdout?: string; stderr?: string };
        throw new Error(
          `tsc --strict on the openapi-fetch program failed:\n${failure.stdout ?? ''}${failure.stderr ?? ''}`,
        );
      }
    },
  );
  return join(dir, 'program.ts');
}
