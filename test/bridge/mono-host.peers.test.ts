/**
 * The end-to-end harness of the bridge, exercised before the bridge exists: MonoHost (a Mono ServiceHost of the same
 * contract, test/mono/MonoHost.cs) stands in for it. What runs here is what the bridge's own end-to-end tests and the
 * benchmark will run against `net.tcp://127.0.0.1:<port>/IDBService`:
 * - E2EClient (the spec's contract through a ChannelFactory) in its host-smoke mode and in the sections MonoHost can
 *   answer (files and documents in memory, the FileNotFound fault), plus a run that must fail, to see failures
 *   reported as checks with expected and actual values;
 * - SvcutilClient, through the proxy Mono's svcutil generates from the app's `GET /IDBService?wsdl&datatable=anytype`;
 * - bench/nettcp-client.ts, the net.tcp client of the benchmark.
 */
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetTcpChannel, NetTcpChannelError, SoapFaultError } from '../../bench/nettcp-client.ts';
import { runLoad } from '../../bench/nettcp-load.ts';
import { testApp } from '../support/http/app.ts';
import {
  buildMonoPrograms,
  describeFailures,
  parseChecks,
  runE2EClient,
  runSvcutilClient,
  startMonoHost,
  type MonoHostProcess,
} from '../support/peers/mono-e2e.ts';
import { freePort } from '../support/net.ts';
import { needPeers, PEERS } from '../support/peers.ts';

const MONO_TIMEOUT = 240_000;

describe('parseChecks', () => {
  it('reads check lines and the summary, and turns anything else into a failed check', () => {
    const run = parseChecks({
      code: 1,
      stdout:
        '{"check":"a","ok":true}\n{"check":"b","ok":false,"expected":"Int32:1","actual":"Int64:1"}\nnoise\n{"summary":true,"passed":1,"failed":1,"ms":5}\n',
      stderr: '',
    });
    expect(run.checks.map((c) => [c.check, c.ok])).toEqual([
      ['a', true],
      ['b', false],
      ['stdout', false],
    ]);
    expect(run.summary).toEqual({ passed: 1, failed: 1, ms: 5 });
    expect(describeFailures(run)).toContain('b: expected Int32:1, got Int64:1');
  });

  it('fails a run without a summary or whose exit code disagrees with it', () => {
    expect(
      parseChecks({ code: 134, stdout: '{"check":"a","ok":true}\n', stderr: 'crash' }).failed.map((c) => c.check),
    ).toEqual(['summary']);
    expect(
      parseChecks({ code: 1, stdout: '{"summary":true,"passed":3,"failed":0,"ms":1}\n', stderr: '' }).failed.map(
        (c) => c.check,
      ),
    ).toEqual(['exit-code']);
  });
});

describe.skipIf(needPeers('bridge mono host', PEERS.mono))('the Mono harness against MonoHost', () => {
  let host: MonoHostProcess;

  beforeAll(async () => {
    await buildMonoPrograms();
    host = await startMonoHost();
  }, MONO_TIMEOUT);
  afterAll(async () => {
    await host?.stop();
  });

  it(
    'MonoHost reports its endpoint and stops when its stdin closes',
    async () => {
      expect(host.endpoint).toBe(`net.tcp://127.0.0.1:${host.port}/IDBService`);
      const other = await startMonoHost();
      await other.stop();
      await expect(NetTcpChannel.open(other.endpoint, { openTimeoutMs: 2000 })).rejects.toBeInstanceOf(
        NetTcpChannelError,
      );
    },
    MONO_TIMEOUT,
  );

  it(
    'E2EClient --host-smoke: Heartbeat true and ReturnScalar a boxed Int32 42',
    async () => {
      const run = await runE2EClient(host.endpoint, { hostSmoke: true, timeoutMs: 60_000 });
      expect(run.failed, describeFailures(run)).toEqual([]);
      expect(run.code).toBe(0);
      expect(run.checks.filter((c) => c.section).map((c) => c.check)).toEqual(['heartbeat', 'smoke']);
      expect(run.checks.map((c) => c.check)).toEqual(expect.arrayContaining(['heartbeat.true', 'smoke.scalar.int42']));
    },
    MONO_TIMEOUT,
  );

  it(
    'E2EClient files, documents and faults: 0 B, 1 MiB and 20 MiB through Mono both ways, FileNotFound on a live channel',
    async () => {
      const run = await runE2EClient(host.endpoint, { sections: ['files', 'documents', 'faults'], timeoutMs: 180_000 });
      expect(run.failed, describeFailures(run)).toEqual([]);
      const names = run.checks.map((c) => c.check);
      expect(names).toEqual(
        expect.arrayContaining([
          'files.20MiB.get.content',
          'files.20MiB.get.sha256',
          'files.0B.get.content-empty-not-null',
          'files.get-unknown.null',
          'documents.get.fields-in-order',
          'documents.container-empty.empty-array',
          'documents.chosen.again.id',
          'faults.file-not-found.subcode',
          'faults.file-not-found.same-channel-works',
        ]),
      );
      expect(run.summary!.passed).toBeGreaterThan(100);
    },
    MONO_TIMEOUT,
  );

  it(
    'E2EClient reports wrong answers as failed checks with expected and actual values, a thrown fault as a failed section, and exits 1',
    async () => {
      // MonoHost answers 42 to any SQL and faults NotSupported for the other SQL operations.
      const run = await runE2EClient(host.endpoint, {
        sections: ['sql-faults', 'heartbeat', 'concurrency'],
        timeoutMs: 120_000,
      });
      expect(run.code).toBe(1);
      const byName = new Map(run.checks.map((c) => [c.check, c]));
      expect(byName.get('sql-faults.syntax.faults')).toMatchObject({
        ok: false,
        expected: 'FaultException',
        actual: 'no fault',
      });
      expect(byName.get('sql-faults.syntax.same-channel-works')).toMatchObject({
        ok: false,
        expected: 'String:still here',
        actual: 'Int32:42',
      });
      expect(byName.get('sql-faults.missing-table.subcode')).toMatchObject({
        ok: false,
        expected: 'String:SqlError',
        actual: 'String:NotSupported',
      });
      expect(byName.get('sql-faults')).toMatchObject({
        ok: false,
        section: true,
        error: expect.stringContaining('NotSupported'),
      });
      // The next section runs on a channel of its own.
      expect(byName.get('heartbeat')).toMatchObject({ ok: true, section: true });
      // Four channels at once, each on its own thread: all but the SQL echo answered right.
      for (const n of [0, 1, 2, 3]) {
        expect(byName.get(`concurrency.thread${n}.heartbeat`)).toMatchObject({ ok: true });
        expect(byName.get(`concurrency.thread${n}.files`)).toMatchObject({ ok: true });
        expect(byName.get(`concurrency.thread${n}.scalar`)).toMatchObject({
          ok: false,
          actual: expect.stringContaining('Int32:42'),
        });
      }
      expect(byName.get('concurrency')).toMatchObject({ ok: true, section: true });
      expect(run.summary!.failed).toBe(run.failed.length);
    },
    MONO_TIMEOUT,
  );

  describe("SvcutilClient: Mono's svcutil proxy of the served WSDL", () => {
    let server: ServerType;
    let wsdlUrl: string;

    beforeAll(async () => {
      const { app } = await testApp({ BRIDGE_SECURITY: 'none' });
      const port = await freePort();
      await new Promise<void>((listening) => {
        server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, () => listening());
      });
      wsdlUrl = `http://127.0.0.1:${port}/IDBService?wsdl&datatable=anytype`;
    });
    afterAll(async () => {
      await new Promise((closed) => server?.close(closed));
    });

    it(
      'calls Heartbeat, ReturnScalar, GetFile, NewFile and DeleteFile through the generated IDBServiceClient',
      async () => {
        const run = await runSvcutilClient(wsdlUrl, host.endpoint, { hostSmoke: true });
        expect(run.failed, describeFailures(run)).toEqual([]);
        expect(run.checks.map((c) => c.check)).toEqual(
          expect.arrayContaining([
            'svcutil.heartbeat',
            'svcutil.scalar',
            'svcutil.get-file-unknown.null',
            'svcutil.get-file.sha256',
          ]),
        );
      },
      MONO_TIMEOUT,
    );
  });

  describe('bench/nettcp-client.ts', () => {
    it('Heartbeat → true, ReturnScalar → int 42 (with and without parameters), on one channel', async () => {
      const channel = await NetTcpChannel.open(host.endpoint);
      try {
        expect(await channel.heartbeat()).toBe(true);
        expect(await channel.returnScalar('SELECT 42')).toEqual({ type: 'int', text: '42' });
        const parameters = [
          { name: '@s', value: { type: 'string', value: 'Grüße ✓' } },
          { name: '@i', value: { type: 'int', value: -7 } },
          { name: '@l', value: { type: 'long', value: 9007199254740993n } },
          { name: '@d', value: { type: 'decimal', value: '12.50' } },
          { name: '@f', value: { type: 'double', value: 0.1 } },
          { name: '@b', value: { type: 'boolean', value: true } },
          { name: '@g', value: { type: 'guid', value: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' } },
          { name: '@bin', value: { type: 'base64Binary', value: new Uint8Array([1, 2, 3]) } },
          { name: '@n', value: null },
        ] as const;
        expect(await channel.returnScalar('SELECT @s', [...parameters])).toEqual({ type: 'int', text: '42' });
        expect(await channel.heartbeat()).toBe(true);
      } finally {
        await channel.close();
      }
      expect(channel.closed).toBe(true);
    });

    it('matches replies to overlapping calls, raises a fault as SoapFaultError and keeps the channel', async () => {
      const channel = await NetTcpChannel.open(host.endpoint);
      try {
        const answers = await Promise.all([channel.heartbeat(), channel.returnScalar('SELECT 1'), channel.heartbeat()]);
        expect(answers).toEqual([true, { type: 'int', text: '42' }, true]);
        const fault = await channel.call('NewFileIndex', []).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(fault).toBeInstanceOf(SoapFaultError);
        expect(fault).toMatchObject({ code: 'Sender', subcode: 'FileNotFound' });
        expect(await channel.heartbeat()).toBe(true);
      } finally {
        await channel.close();
      }
    });

    it('runLoad reports calls, calls/s and percentiles', async () => {
      const result = await runLoad({
        endpoint: host.endpoint,
        channels: 4,
        callsPerChannel: 10,
        warmupCalls: 2,
        operation: 'ReturnScalar',
      });
      expect(result).toMatchObject({ channels: 4, calls: 40, errors: 0, operation: 'ReturnScalar' });
      expect(result.callsPerSecond).toBeGreaterThan(0);
      expect(result.p50Ms).toBeGreaterThan(0);
      expect(result.p99Ms).toBeGreaterThanOrEqual(result.p50Ms);
      expect(result.maxMs).toBeGreaterThanOrEqual(result.p99Ms);
    });
  });
});
