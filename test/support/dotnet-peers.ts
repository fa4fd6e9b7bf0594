/**
 * The .NET peers that need more than a build (support/dotnet.ts):
 * - the CoreWCF host of the contract (test/dotnet/CoreWcfHost: CoreWCF.NetTcp over Microsoft.Data.Sqlite and a
 *   folder, SecurityMode.None) started as a process of its own, for the scenario and the benchmark;
 * - the client dotnet-svcutil generates from the bridge's WSDL (test/dotnet/SvcutilClient): the tool is a local tool
 *   of test/dotnet/.config/dotnet-tools.json, restored with `dotnet tool restore`, run on the WSDL URL inside the
 *   copied sources, and the proxy is compiled with SvcutilClient's Program.cs.
 * Both reject with DotnetUnavailableError when the NuGet feed does not serve their packages, so suites can say so.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDotnetProject, dotnetEnv, DotnetUnavailableError, runDotnet, type DotnetBuild } from './dotnet.ts';
import { freePort } from './net.ts';

export interface CoreWcfHost {
  endpoint: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/** Starts the CoreWCF host on a free port with a database and folder of its own; resolves once it listens. */
export async function startCoreWcfHost(
  options: { maxMessageMB?: number; readyTimeoutMs?: number } = {},
): Promise<CoreWcfHost> {
  const { dll } = await buildDotnetProject('CoreWcfHost');
  const dir = await mkdtemp(join(tmpdir(), 'corewcf-host-'));
  const port = await freePort();
  const child = spawn(
    'dotnet',
    [dll, '--port', String(port), '--data', dir, '--max-message-mb', String(options.maxMessageMB ?? 64)],
    { env: dotnetEnv(), stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  await new Promise<void>((ready, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`the CoreWCF host did not report ready\n${output}`));
    }, options.readyTimeoutMs ?? 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the CoreWCF host exited (${code})\n${output}`));
    });
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
      if (output.includes('{"ready":true')) {
        clearTimeout(timer);
        ready();
      }
    });
  });
  return { endpoint: `net.tcp://localhost:${port}/IDBService`, port, pid: child.pid!, stop };
}

/**
 * SvcutilClient for the WSDL at `wsdlUrl`: dotnet-svcutil's proxy of it compiled with SvcutilClient/Program.cs,
 * cached under a hash of the WSDL text and the sources.
 */
export async function buildSvcutilClient(wsdlUrl: string): Promise<DotnetBuild> {
  const response = await fetch(wsdlUrl);
  if (!response.ok) throw new Error(`GET ${wsdlUrl}: ${response.status}`);
  const wsdl = await response.text();
  return buildDotnetProject('SvcutilClient', {
    extraKey: [wsdl],
    prepare: async (src) => {
      const restore = await runDotnet(['tool', 'restore'], { cwd: src, timeoutMs: 300_000 });
      if (restore.code !== 0)
        throw new DotnetUnavailableError(
          `dotnet tool restore (dotnet-svcutil): ${`${restore.stdout}${restore.stderr}`.trim().split('\n').slice(-4).join(' ')}`,
        );
      const project = join(src, 'SvcutilClient');
      const generated = await runDotnet(
        [
          'tool',
          'run',
          'dotnet-svcutil',
          wsdlUrl,
          '--outputDir',
          'ServiceReference',
          '--namespace',
          '*,Generated',
          '--sync',
          '--noLogo',
        ],
        { cwd: project, timeoutMs: 300_000 },
      );
      if (generated.code !== 0) throw new Error(`dotnet-svcutil failed:\n${generated.stdout}${generated.stderr}`);
    },
  });
}
