/**
 * Microsoft's own WCF client for .NET (System.ServiceModel.NetTcp + Primitives, test/dotnet/WcfClient) against the
 * bridge: the ChannelFactory client of the spec's contract runs every operation and checks every value (the Mono
 * scenario, plus every column type of the spec's table into a real System.Data.DataTable, ReturnScalar of each CLR
 * type, 100 channels opened and closed in a row on pooled sockets, 16 channels at once, a 50 MB file up and down,
 * MaxReceivedMessageSize exceeded on both sides), on SQLite and on PostgreSQL + S3; then with Windows transport
 * security: NTLM through the system GSSAPI (gss-ntlmssp) at EncryptAndSign and Sign, a reader's refusals, a wrong
 * password and a Sign client against an EncryptAndSign bridge as a .NET user sees them, .NET's managed NTLM, and
 * Kerberos from a kinit ccache against an MIT KDC with the endpoint's DNS identity. The CoreWCF host of the
 * same contract (the scenario against another server) runs when the NuGet feed holds its packages and says so when it
 * does not; the client dotnet-svcutil generates is test/idb/wsdl-dotnet-svcutil.peers.test.ts's.
 *
 * Each suite skips with a message when `dotnet` (or the peer it needs) is missing.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBridgeConfig } from '../../tcp-bridge/src/config.ts';
import { securityBackends, startBridge, type RunningBridge } from '../../tcp-bridge/src/server.ts';
import { openNodeIdbService } from '../../src/runtime/node/idb/idb-service.ts';
import { bridgeBackends, type BridgeBackend } from '../support/peers/bridge-backends.ts';
import {
  buildDotnetProject,
  DotnetUnavailableError,
  infoOf,
  runChecks,
  type DotnetBuild,
  WCF_CLIENT_SECTIONS,
} from '../support/peers/dotnet.ts';
import { startCoreWcfHost } from '../support/peers/dotnet-peers.ts';
import { startPostgres } from '../support/peers/postgres.ts';
import { startTestRealm, type TestRealm } from '../support/negotiate/krb5-realm.ts';
import { describeFailures, type MonoRun } from '../support/peers/mono-e2e.ts';
import { needPeers, PEERS, peerUnavailable } from '../support/peers.ts';

const noDotnet = needPeers('bridge dotnet', PEERS.dotnet);
// .NET's Negotiate on Linux reaches NTLM through MIT GSSAPI and gss-ntlmssp.
const noGssNtlmssp = noDotnet || needPeers('bridge dotnet NTLM', PEERS.gssNtlmssp);
const noKdc = noDotnet || needPeers('bridge dotnet Kerberos', PEERS.krb5);

const TIMEOUT = 600_000;
/** MAX_MESSAGE_MB of the bridges here: above the 50 MB file, below the client's own 64 MiB, so a request can exceed it. */
const SERVER_MAX_MB = 60;
const ALICE = ['--user', 'TESTDOM\\alice', '--password', 'Secret123!'];
const BOB = ['--user', 'TESTDOM\\bob', '--password', 'Reader456!'];

let client: DotnetBuild;

async function wcfClient(): Promise<DotnetBuild> {
  client ??= await buildDotnetProject('WcfClient');
  return client;
}

/** Runs the client's e2e scenario and expects every check to pass. */
async function scenario(endpoint: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<MonoRun> {
  const run = await runChecks(
    (await wcfClient()).dll,
    ['e2e', endpoint, '--server-max-mb', String(SERVER_MAX_MB), ...args],
    { env, timeoutMs: TIMEOUT - 20_000 },
  );
  expect(run.failed, describeFailures(run)).toEqual([]);
  return run;
}

const section = (run: MonoRun, name: string) => run.checks.find((c) => c.check === name && c.section);

async function bridgeOn(env: Record<string, string>): Promise<RunningBridge> {
  const config = readBridgeConfig({ BRIDGE_PORT: '0', MAX_MESSAGE_MB: String(SERVER_MAX_MB), ...env });
  const logger = { log: () => {} };
  return startBridge(config, await openNodeIdbService(config, logger), logger, securityBackends(config));
}

describe.skipIf(noDotnet)('.NET WCF client (ChannelFactory, SecurityMode.None)', () => {
  describe.each(bridgeBackends('bridge-dotnet'))('against the bridge on %s', (name, start) => {
    let folder: string;
    let backend: BridgeBackend;
    let bridge: RunningBridge;

    beforeAll(async () => {
      folder = await mkdtemp(join(tmpdir(), `bridge-dotnet-${name}-`));
      await writeFile(join(folder, 'roles.json'), JSON.stringify({ writer: ['anonymous'] }));
      [backend] = await Promise.all([start(folder), wcfClient()]);
      bridge = await bridgeOn({
        BRIDGE_SECURITY: 'none',
        BRIDGE_ROLES_FILE: join(folder, 'roles.json'),
        ...backend.env,
      });
    }, TIMEOUT);

    afterAll(async () => {
      await bridge?.close();
      await backend?.stop();
      if (folder) await rm(folder, { recursive: true, force: true });
    });

    it(
      'passes every check: 13 operations, DataTables of every column type, scalars, 100 channels in a row, 16 at once, 50 MB, quotas, faults',
      async () => {
        const run = await scenario(`net.tcp://localhost:${bridge.port}/IDBService`, ['--backend', name]);
        // PostgreSQL knows fewer of the spec's type names than SQLite (no mediumint, nvarchar, blob, ...): fewer checks.
        expect(run.summary?.passed).toBeGreaterThan(name === 'sqlite' ? 550 : 500);
        for (const s of WCF_CLIENT_SECTIONS) {
          expect(section(run, s), s).toMatchObject({ ok: true });
        }
        // The quotas as a .NET user sees them: its own QuotaExceededException for a reply over MaxReceivedMessageSize;
        // for a request over the bridge's maximum, the framing fault MaxMessageSizeExceededFault raised as one too.
        expect(infoOf(run, 'quota.client.exception')).toMatch(
          /QuotaExceededException: The maximum message size quota for incoming messages \(65536\)/,
        );
        expect(infoOf(run, 'quota.server.exception')).toMatch(
          /QuotaExceededException: The maximum message size quota for incoming messages has been exceeded for the remote channel/,
        );
      },
      TIMEOUT,
    );
  });
});

describe.skipIf(noGssNtlmssp)('.NET WCF client with Windows security (NTLM through NegotiateStream)', () => {
  let folder: string;
  const bridges = new Map<'EncryptAndSign' | 'Sign', RunningBridge>();
  const endpoint = (level: 'EncryptAndSign' | 'Sign') => `net.tcp://localhost:${bridges.get(level)!.port}/IDBService`;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'bridge-dotnet-windows-'));
    await writeFile(join(folder, 'users'), 'TESTDOM:alice:Secret123!\nTESTDOM:bob:Reader456!\n', { mode: 0o600 });
    await writeFile(
      join(folder, 'roles.json'),
      JSON.stringify({ writer: ['TESTDOM\\alice'], reader: ['TESTDOM\\bob'] }),
    );
    await wcfClient();
    for (const level of ['EncryptAndSign', 'Sign'] as const) {
      bridges.set(
        level,
        await bridgeOn({
          BRIDGE_NTLM_USERS: join(folder, 'users'),
          BRIDGE_PROTECTION_LEVEL: level,
          BRIDGE_ROLES_FILE: join(folder, 'roles.json'),
          DATABASE_URL: `file:${join(folder, `${level}.sqlite`)}`,
          FILES_URL: `file:${join(folder, 'files')}`,
        }),
      );
    }
  }, TIMEOUT);

  afterAll(async () => {
    for (const bridge of bridges.values()) await bridge.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it(
    'passes every check at EncryptAndSign with explicit credentials (ClientCredentials.Windows.ClientCredential), pooled sockets logging on again per channel',
    async () => {
      const run = await scenario(endpoint('EncryptAndSign'), [
        '--security',
        'windows',
        '--protection',
        'EncryptAndSign',
        ...ALICE,
      ]);
      expect(run.summary?.passed).toBeGreaterThan(550);
      expect(section(run, 'channels')).toMatchObject({ ok: true });
    },
    TIMEOUT,
  );

  it(
    'works signed only (ProtectionLevel.Sign) against a bridge with BRIDGE_PROTECTION_LEVEL=Sign',
    async () => {
      const run = await scenario(endpoint('Sign'), [
        '--security',
        'windows',
        '--protection',
        'Sign',
        ...ALICE,
        '--sections',
        'heartbeat,nonquery,datatable,files,faults,channels,cleanup',
      ]);
      expect(section(run, 'files')).toMatchObject({ ok: true });
    },
    TIMEOUT,
  );

  it(
    'gives a reader FaultException AccessDenied for writer operations and writing SQL, and the channel goes on',
    async () => {
      const run = await scenario(endpoint('EncryptAndSign'), ['--security', 'windows', ...BOB, '--sections', 'reader']);
      expect(run.checks.filter((c) => c.check.endsWith('.subcode')).map((c) => c.check)).toEqual([
        'reader.nonquery.subcode',
        'reader.new-file.subcode',
        'reader.create-request.subcode',
        'reader.write-through-scalar.subcode',
      ]);
    },
    TIMEOUT,
  );

  it(
    'refuses a wrong password, and a Sign client under EncryptAndSign, as SecurityNegotiationException before any call',
    async () => {
      const { dll } = await wcfClient();
      const wrong = await runChecks(dll, [
        'refused',
        endpoint('EncryptAndSign'),
        '--security',
        'windows',
        '--user',
        'TESTDOM\\alice',
        '--password',
        'nope',
      ]);
      expect(wrong.failed, describeFailures(wrong)).toEqual([]);
      // Logon denied (0x8009030C = -2146893044) as .NET reads the bridge's HandshakeError frame.
      expect(infoOf(wrong, 'refused')).toMatch(
        /^System\.ServiceModel\.Security\.SecurityNegotiationException: The server has rejected the client credentials\. <- System\.Security\.Authentication\.InvalidCredentialException: .* <- System\.ComponentModel\.Win32Exception: .*-2146893044/,
      );
      const signOnly = await runChecks(dll, [
        'refused',
        endpoint('EncryptAndSign'),
        '--security',
        'windows',
        '--protection',
        'Sign',
        ...ALICE,
      ]);
      expect(signOnly.failed, describeFailures(signOnly)).toEqual([]);
      expect(infoOf(signOnly, 'refused')).toMatch(/^System\.ServiceModel\.Security\.SecurityNegotiationException: /);
      console.info(`[bridge dotnet] a Sign client under EncryptAndSign sees: ${infoOf(signOnly, 'refused')}`);
    },
    TIMEOUT,
  );

  it(
    "with .NET's managed NTLM (System.Net.Security.UseManagedNtlm) either passes, or fails in the client before NTLM starts",
    async (context) => {
      const { dll } = await wcfClient();
      const run = await runChecks(dll, [
        'e2e',
        endpoint('EncryptAndSign'),
        '--security',
        'windows',
        '--managed-ntlm',
        ...ALICE,
        '--sections',
        'heartbeat,datatable,channels,cleanup',
      ]);
      const heartbeat = section(run, 'heartbeat');
      // .NET 10's managed SPNEGO offers Kerberos first and gives up when GSSAPI cannot get a Kerberos credential for
      // the account (0x8009030D, SEC_E_UNKNOWN_CREDENTIALS) instead of going on with NTLM; the bridge sees a
      // HandshakeError as the first frame. Nothing the server can answer changes that.
      if (heartbeat?.ok === false && /-2146893043/.test(heartbeat.error ?? '')) {
        console.warn(
          '[bridge dotnet] managed NTLM: .NET refuses in the client (managed SPNEGO tries Kerberos first and stops at SEC_E_UNKNOWN_CREDENTIALS); skipped',
        );
        context.skip();
      }
      expect(run.failed, describeFailures(run)).toEqual([]);
    },
    TIMEOUT,
  );
});

describe.skipIf(noKdc)('.NET WCF client with Windows security (Kerberos from a kinit ccache)', () => {
  let realm: TestRealm;
  let folder: string;
  let bridge: RunningBridge;

  beforeAll(async () => {
    [realm] = await Promise.all([startTestRealm(), wcfClient()]);
    folder = await mkdtemp(join(tmpdir(), 'bridge-dotnet-krb5-'));
    await writeFile(join(folder, 'roles.json'), JSON.stringify({ writer: ['alice@TEST.LOCAL'] }));
    bridge = await bridgeOn({
      KRB5_KTNAME: realm.keytab,
      BRIDGE_ROLES_FILE: join(folder, 'roles.json'),
      DATABASE_URL: `file:${join(folder, 'idb.sqlite')}`,
      FILES_URL: `file:${join(folder, 'files')}`,
    });
  }, TIMEOUT);

  afterAll(async () => {
    await bridge?.close();
    await realm?.stop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it(
    'passes the scenario as alice@TEST.LOCAL with the DNS identity localhost (SPN host/localhost), default credentials',
    async () => {
      const run = await scenario(
        `net.tcp://127.0.0.1:${bridge.port}/IDBService`,
        [
          '--security',
          'windows',
          '--identity',
          'localhost',
          '--sections',
          'heartbeat,nonquery,requests,datatable,datatable-types,scalar,files,documents,faults,sql-faults,channels,concurrency,cleanup',
        ],
        realm.clientEnv,
      );
      expect(run.summary?.passed).toBeGreaterThan(400);
    },
    TIMEOUT,
  );
});

/** Skips the test with the reason when a peer's packages are not served; rethrows anything else. */
async function orSkip<T>(context: { skip: (note?: string) => void }, what: string, promise: Promise<T>): Promise<T> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof DotnetUnavailableError) {
      context.skip(peerUnavailable(`bridge dotnet ${what}`, error.message));
    }
    throw error;
  }
}

describe.skipIf(noDotnet)('CoreWCF host', () => {
  it(
    'the same scenario passes against the CoreWCF host (SQLite and a folder), so the scenario itself is right',
    async (context) => {
      const host = await orSkip(context, 'CoreWCF host', startCoreWcfHost({ maxMessageMB: SERVER_MAX_MB }));
      try {
        await scenario(host.endpoint, ['--backend', 'sqlite']);
      } finally {
        await host.stop();
      }
    },
    TIMEOUT,
  );

  // The peer of the bench's PostgreSQL rows (bench/dotnet.ts): the host through Npgsql.
  it.skipIf(needPeers('bridge dotnet CoreWCF host on PostgreSQL', PEERS.postgres))(
    'the PostgreSQL scenario passes against the CoreWCF host on PostgreSQL (Npgsql)',
    async (context) => {
      const database = await startPostgres();
      try {
        const host = await orSkip(
          context,
          'CoreWCF host',
          startCoreWcfHost({ maxMessageMB: SERVER_MAX_MB, postgresUrl: database.url }),
        );
        try {
          await scenario(host.endpoint, ['--backend', 'postgres']);
        } finally {
          await host.stop();
        }
      } finally {
        await database.stop();
      }
    },
    TIMEOUT,
  );
});
