/**
 * dotnet-svcutil (the generator behind .NET's "Add Service Reference") on the published description, as a new .NET
 * user runs it (support/peers/dotnet-svcutil.ts): from GET /IDBService?wsdl with the bridge in each security mode, the
 * tool prints no warning, generates DataContractSerializer proxies with the contract's types (System.Guid,
 * System.Data.DataTable, object) and a NetTcpBinding endpoint that matches the running bridge; the generated client,
 * compiled with its generated configuration and no binding of ours, calls the bridge (test/dotnet/SvcutilClient).
 * From WS-MetadataExchange at net.tcp://…/IDBService/mex (tcp-bridge/src/mex.ts: no upgrade in any mode) the tool
 * generates the same Reference.cs, and that client runs too.
 *
 * Skipped with a message without `dotnet`, without the local feed ../shared/nuget, or (Windows security) without
 * gss-ntlmssp.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/idb/contract.ts';
import { openNodeIdbService } from '../../src/runtime/node/idb/idb-service.ts';
import { readBridgeConfig } from '../../tcp-bridge/src/config.ts';
import { securityBackends, startBridge, type RunningBridge } from '../../tcp-bridge/src/server.ts';
import { testApp } from '../support/http/app.ts';
import { DotnetUnavailableError, infoOf, runChecks } from '../support/peers/dotnet.ts';
import { startCoreWcfHost } from '../support/peers/dotnet-peers.ts';
import {
  buildSvcutilClient,
  contractMethods,
  generatedConfiguration,
  generateProxy,
  type GeneratedProxy,
} from '../support/peers/dotnet-svcutil.ts';
import { describeFailures } from '../support/peers/mono-e2e.ts';
import { freePort } from '../support/net.ts';
import { needPeers, PEERS, peerUnavailable } from '../support/peers.ts';

const missing = needPeers('dotnet-svcutil', PEERS.dotnet, PEERS.peerFeed);
// .NET's Negotiate on Linux reaches NTLM through MIT GSSAPI and gss-ntlmssp: the Windows security cases need it.
const noGssNtlmssp = missing || needPeers('dotnet-svcutil windows', PEERS.gssNtlmssp);

const TIMEOUT = 600_000;
const T = 'System.Threading.Tasks.Task';
const SQL = 'System.Guid requestId, string sql, Generated.QueryParameter[] parameters';
/** What the generated contract must say: the C# contract of docs/contract/iidbservice.md, Task-based. */
export const GENERATED_SIGNATURES: Record<string, string> = {
  HeartbeatAsync: `${T}<bool> HeartbeatAsync()`,
  CreateDatabaseRequestAsync: `${T}<System.Guid> CreateDatabaseRequestAsync(string database)`,
  CloseDatabaseRequestAsync: `${T}<bool> CloseDatabaseRequestAsync(System.Guid requestId, bool commit)`,
  ReturnDatatableAsync: `${T}<System.Data.DataTable> ReturnDatatableAsync(${SQL})`,
  ReturnScalarAsync: `${T}<object> ReturnScalarAsync(${SQL})`,
  ExecuteNonQueryAsync: `${T}<int> ExecuteNonQueryAsync(${SQL})`,
  NewFileAsync: `${T}<System.Guid> NewFileAsync(Generated.FileData file)`,
  UpdateFileAsync: `${T}<bool> UpdateFileAsync(Generated.FileData file)`,
  GetFileAsync: `${T}<Generated.FileData> GetFileAsync(System.Guid fileId)`,
  DeleteFileAsync: `${T}<bool> DeleteFileAsync(System.Guid fileId)`,
  GetDocumentByDocumentIdAsync: `${T}<Generated.DocumentData> GetDocumentByDocumentIdAsync(System.Guid documentId)`,
  GetDocumentByContainerIdAsync: `${T}<Generated.DocumentData[]> GetDocumentByContainerIdAsync(System.Guid containerId)`,
  NewFileIndexAsync: `${T}<System.Guid> NewFileIndexAsync(Generated.FileIndexData index)`,
};

/** The proxy is the contract's: DataContractSerializer throughout, the 13 operations with the contract's types. */
export function expectContractProxy(proxy: GeneratedProxy): void {
  expect(proxy.output).not.toMatch(/warning|error/i);
  expect(proxy.source).not.toContain('XmlSerializerFormat');
  expect(proxy.source).not.toContain('MessageContractAttribute');
  const methods = contractMethods(proxy.source);
  expect([...methods.keys()]).toEqual(OPERATIONS.map((op) => `${op}Async`));
  expect(Object.fromEntries(methods)).toEqual(GENERATED_SIGNATURES);
  expect(proxy.source).toMatch(
    /\[System\.Runtime\.Serialization\.DataContractAttribute\(Name="QueryParameter", Namespace="http:\/\/schemas\.datacontract\.org\/2004\/07\/IDBService\.Contracts"\)\]/,
  );
  expect(proxy.source).toMatch(/public object Value\s*\{/);
  expect(proxy.source).toMatch(/public System\.Guid FileId\s*\{/);
}

/** The proxies generated from the bridge's WSDL, by security mode (for the comparison with CoreWCF's). */
const generatedBy = new Map<string, Promise<GeneratedProxy>>();

const USERS = 'TESTDOM:alice:Secret123!\n';
const ALICE = ['--user', 'TESTDOM\\alice', '--password', 'Secret123!'];

interface Mode {
  security: 'none' | 'windows';
  level: string;
  env: Record<string, string>;
  /** The generated GetBindingForEndpoint's security lines: there, and not there. */
  securityCode: string[];
  noSecurityCode: string[];
  /** What SvcutilClient reports of the binding the generated configuration built. */
  binding: RegExp;
  args: string[];
}

const MODES: Mode[] = [
  {
    security: 'none',
    level: '-',
    env: { BRIDGE_SECURITY: 'none' },
    securityCode: ['result.Security.Mode = System.ServiceModel.SecurityMode.None;'],
    noSecurityCode: ['ProtectionLevel'],
    binding: /^None\/Windows\/EncryptAndSign net\.tcp:\/\/localhost:\d+\/IDBService /,
    args: [],
  },
  {
    // NetTcpBinding's default: Transport security, Windows credentials, EncryptAndSign; nothing to set.
    security: 'windows',
    level: 'EncryptAndSign',
    env: { BRIDGE_SECURITY: 'windows', BRIDGE_PROTECTION_LEVEL: 'EncryptAndSign' },
    securityCode: [],
    noSecurityCode: ['Security.Mode', 'ProtectionLevel'],
    binding: /^Transport\/Windows\/EncryptAndSign net\.tcp:\/\/localhost:\d+\/IDBService localhost$/,
    args: ALICE,
  },
  {
    security: 'windows',
    level: 'Sign',
    env: { BRIDGE_SECURITY: 'windows', BRIDGE_PROTECTION_LEVEL: 'Sign' },
    securityCode: ['result.Security.Transport.ProtectionLevel = System.Net.Security.ProtectionLevel.Sign;'],
    noSecurityCode: ['Security.Mode'],
    binding: /^Transport\/Windows\/Sign net\.tcp:\/\/localhost:\d+\/IDBService localhost$/,
    args: ALICE,
  },
];

describe.skipIf(missing)('dotnet-svcutil on GET /IDBService?wsdl', () => {
  describe.each(MODES)('BRIDGE_SECURITY=$security, BRIDGE_PROTECTION_LEVEL=$level', (mode) => {
    let folder: string;
    let bridge: RunningBridge;
    let http: ServerType | undefined;
    let wsdlUrl: string;
    let proxy: Promise<GeneratedProxy>;
    const skip = mode.security === 'windows' && noGssNtlmssp !== '';

    beforeAll(async () => {
      if (skip) return;
      folder = await mkdtemp(join(tmpdir(), `idb-svcutil-${mode.security}-${mode.level}-`));
      await writeFile(join(folder, 'users'), USERS, { mode: 0o600 });
      await writeFile(
        join(folder, 'roles.json'),
        JSON.stringify({ writer: [mode.security === 'none' ? 'anonymous' : 'TESTDOM\\alice'] }),
      );
      const env = {
        ...mode.env,
        BRIDGE_ROLES_FILE: join(folder, 'roles.json'),
        BRIDGE_NTLM_USERS: join(folder, 'users'),
        DATABASE_URL: `file:${join(folder, 'idb.sqlite')}`,
        FILES_URL: `file:${join(folder, 'files')}`,
      };
      const config = readBridgeConfig({ ...env, BRIDGE_PORT: '0' });
      const logger = { log: () => {} };
      bridge = await startBridge(config, await openNodeIdbService(config, logger), logger, securityBackends(config));
      // The HTTP service publishes the running bridge's endpoint: same settings, the port it got.
      const { app } = await testApp({ ...env, BRIDGE_PORT: String(bridge.port) });
      const port = await freePort();
      await new Promise<void>((listening) => {
        http = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, () => listening());
      });
      wsdlUrl = `http://127.0.0.1:${port}/IDBService?wsdl`;
      proxy = generateProxy(wsdlUrl);
      proxy.catch(() => {});
      generatedBy.set(mode.security, proxy);
    }, TIMEOUT);

    afterAll(async () => {
      await new Promise((closed) => (http ? http.close(closed) : closed(undefined)));
      await bridge?.close();
      if (folder) await rm(folder, { recursive: true, force: true });
    });

    it.skipIf(skip)(
      'generates, with no warning, DataContract proxies of the contract and a NetTcpBinding endpoint of the bridge',
      async () => {
        const generated = await proxy;
        expectContractProxy(generated);
        const configuration = generatedConfiguration(generated.source);
        expect(configuration).toContain(
          'System.ServiceModel.NetTcpBinding result = new System.ServiceModel.NetTcpBinding();',
        );
        for (const line of mode.securityCode) expect(configuration).toContain(line);
        for (const text of mode.noSecurityCode) expect(configuration).not.toContain(text);
        expect(configuration).toContain(
          `return new System.ServiceModel.EndpointAddress(new System.Uri("net.tcp://localhost:${bridge.port}/IDBService"), new System.ServiceModel.DnsEndpointIdentity("localhost"));`,
        );
      },
      TIMEOUT,
    );

    it.skipIf(skip)(
      'the generated client, with its generated configuration, calls the bridge: Heartbeat, every column type, scalars, files, a fault',
      async () => {
        const client = await buildSvcutilClient(await proxy);
        const run = await runChecks(client.dll, mode.args, { timeoutMs: TIMEOUT - 60_000 });
        expect(run.failed, describeFailures(run)).toEqual([]);
        expect(infoOf(run, 'svcutil.binding')).toMatch(mode.binding);
        expect(run.checks.filter((c) => c.check.startsWith('svcutil.datatable.')).length).toBeGreaterThan(100);
        expect(infoOf(run, 'svcutil.fault.message')).toMatch(/no_such_table/);
      },
      TIMEOUT,
    );

    it.skipIf(skip)(
      'from WS-MetadataExchange at net.tcp://…/IDBService/mex (no upgrade, whatever the mode) it generates the same client, which calls the bridge',
      async () => {
        const fromMex = await generateProxy(`net.tcp://127.0.0.1:${bridge.port}/IDBService/mex`);
        expectContractProxy(fromMex);
        expect(generatedConfiguration(fromMex.source)).toBe(generatedConfiguration((await proxy).source));
        expect(contractMethods(fromMex.source)).toEqual(contractMethods((await proxy).source));
        expect(fromMex.source).toBe((await proxy).source);
        const client = await buildSvcutilClient(fromMex);
        const run = await runChecks(client.dll, mode.args, { timeoutMs: TIMEOUT - 60_000 });
        expect(run.failed, describeFailures(run)).toEqual([]);
        expect(infoOf(run, 'svcutil.binding')).toMatch(mode.binding);
      },
      TIMEOUT,
    );
  });
});

/** A method's parameter list: `(System.Guid requestId, string sql, ...)`. */
const parametersOf = (signature: string) => signature.slice(signature.indexOf('('));

describe.skipIf(missing)('the same contract hosted by CoreWCF, its WSDL published by AddServiceModelMetadata', () => {
  it(
    "dotnet-svcutil generates the same operations and parameter types from it as from the bridge's",
    async (context) => {
      const metadataPort = await freePort();
      let host: Awaited<ReturnType<typeof startCoreWcfHost>>;
      try {
        host = await startCoreWcfHost({ metadataPort });
      } catch (error) {
        if (!(error instanceof DotnetUnavailableError)) throw error;
        return context.skip(peerUnavailable('dotnet-svcutil CoreWCF', error.message));
      }
      try {
        const reference = await generateProxy(`http://127.0.0.1:${metadataPort}/IDBService?wsdl`);
        const theirs = contractMethods(reference.source);
        const bridges = generatedBy.get('none');
        if (!bridges)
          throw new Error('the BRIDGE_SECURITY=none case, which generates the proxy compared here, did not run');
        const ours = contractMethods((await bridges).source);
        expect([...theirs.keys()]).toEqual([...ours.keys()]);
        for (const [name, signature] of ours)
          expect(parametersOf(theirs.get(name)!), name).toBe(parametersOf(signature));
        // Results too, ReturnDatatable's aside: CoreWCF describes DataTable anonymously as WCF does, which
        // dotnet-svcutil turns into a generated wrapper class (see wsdl.ts, dataTableType).
        for (const [name, signature] of ours)
          if (name !== 'ReturnDatatableAsync') expect(theirs.get(name), name).toBe(signature);
        console.info(`[dotnet-svcutil] from CoreWCF's WSDL: ${theirs.get('ReturnDatatableAsync')}`);
      } finally {
        await host.stop();
      }
    },
    TIMEOUT,
  );
});
