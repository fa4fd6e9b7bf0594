/**
 * Mono's WCF tool chain for tests that stand in for the existing .NET clients: `svcutil` turns the published WSDL into
 * a C# proxy, `mcs` compiles it (with a client program), `mono` runs the result.
 *
 * Everything runs asynchronously: the service a tool talks to usually lives in the test's own process, and a
 * synchronous child would block the event loop that has to answer it.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { delimiter, join, resolve } from 'node:path';

export type MonoTool = 'svcutil' | 'mcs' | 'mono';

export class MonoMissingError extends Error {
  override name = 'MonoMissingError';
}

/** The tool's path on PATH; a MonoMissingError that says how to install it when it is not there. */
export function findMonoTool(tool: MonoTool): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, tool);
    if (dir && existsSync(candidate)) return candidate;
  }
  throw new MonoMissingError(
    `${tool} is not on PATH: install Mono with \`apt-get install -y mono-complete\` (.ci/run does this).`,
  );
}

/** Whether the whole tool chain is installed, for `describe.skipIf` in suites that should not fail without it. */
export function monoAvailable(): boolean {
  try {
    for (const tool of ['svcutil', 'mcs', 'mono'] as const) findMonoTool(tool);
    return true;
  } catch {
    return false;
  }
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  /** Killed (SIGKILL) after this long; Mono's tools take seconds to start, so the default is generous. */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** Runs a Mono tool to its end and returns its exit code and output; rejects only when it cannot start or times out. */
export function runMonoTool(tool: MonoTool, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  const file = findMonoTool(tool);
  const timeoutMs = options.timeoutMs ?? 120_000;
  return new Promise((done, reject) => {
    execFile(
      file,
      args,
      {
        cwd: options.cwd,
        env: options.env ?? process.env,
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        if (error?.killed)
          return reject(
            new Error(`${tool} ${args.join(' ')} did not finish within ${timeoutMs} ms\n${stdout}${stderr}`),
          );
        if (error && typeof error.code !== 'number') return reject(error);
        done({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
  });
}

const describeRun = (tool: string, r: RunResult) => `${tool} exited with ${r.code}\n${r.stdout}${r.stderr}`;

export interface SvcutilResult extends RunResult {
  /** The generated C# source. */
  file: string;
  source: string;
}

/**
 * Mono's svcutil on a metadata URL (http:, or file: for a WSDL on disk; it reads no plain paths). It fetches the
 * document by DISCO (a GET), imports the contracts and writes one C# file. Unlike .NET's svcutil it writes no
 * configuration file, so a client builds its binding in code.
 */
export async function svcutil(
  url: string,
  outDir: string,
  options: RunOptions & { out?: string; namespace?: string } = {},
): Promise<SvcutilResult> {
  const out = options.out ?? 'Proxy.cs';
  const args = ['--noLogo', `-o:${out}`, ...(options.namespace ? [`--namespace=${options.namespace}`] : []), url];
  const result = await runMonoTool('svcutil', args, { ...options, cwd: outDir });
  const file = join(outDir, out);
  if (result.code !== 0 || !existsSync(file))
    throw new Error(`svcutil wrote no ${out}: ${describeRun('svcutil', result)}`);
  return { ...result, file, source: await readFile(file, 'utf8') };
}

/** The assemblies a WCF client built from a svcutil proxy needs. */
export const WCF_REFERENCES = [
  'System.ServiceModel',
  'System.Runtime.Serialization',
  'System.Data',
  'System.Xml',
] as const;

export interface CompileOptions extends RunOptions {
  /** The assembly to write. */
  out: string;
  target?: 'library' | 'exe';
  references?: readonly string[];
}

/** Compiles C# sources with mcs; rejects with the compiler's messages when it fails. */
export async function compileCSharp(sources: readonly string[], options: CompileOptions): Promise<RunResult> {
  const references = options.references ?? WCF_REFERENCES;
  const args = [
    `-target:${options.target ?? 'library'}`,
    `-out:${options.out}`,
    ...references.map((r) => `-r:${r}`),
    ...sources,
  ];
  const result = await runMonoTool('mcs', args, options);
  if (result.code !== 0 || !existsSync(resolve(options.cwd ?? '.', options.out)))
    throw new Error(`mcs could not compile ${sources.join(', ')}: ${describeRun('mcs', result)}`);
  return result;
}

/** Runs a compiled program on mono; the exit code is the caller's to judge. */
export function runMono(assembly: string, args: readonly string[] = [], options: RunOptions = {}): Promise<RunResult> {
  return runMonoTool('mono', ['--debug', assembly, ...args], options);
}
