/**
 * The bridge as a TCP server (security mode None) on the embedded SQLite backend, driven by a client that speaks
 * net.tcp itself: sessions, calls, SOAP and framing faults, limits, connection loss and shutdown.
 */
import { EventEmitter, once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdbService, Logger } from '#idb';
import { stringText } from '../../tcp-bridge/src/binary-xml/index.ts';
import { readBridgeConfig, type BridgeConfig } from '../../tcp-bridge/src/config.ts';
import { encodeInt31 } from '../../tcp-bridge/src/bytes.ts';
import { framing, RecordType, sizedEnvelope } from '../../tcp-bridge/src/framing/index.ts';
import { securityBackends, startBridge, type RunningBridge } from '../../tcp-bridge/src/server.ts';
import { openNodeIdbService } from '../../src/runtime/node/idb/idb-service.ts';
import { NetTcpTestClient, type ServerRecord } from '../support/nettcp/nettcp.ts';
import { PooledNtlmSocket } from '../support/nettcp/ntlm-nettcp.ts';
import { child, param, path, request, textOf } from '../support/nettcp/soap.ts';

const silent = {
  log: (...a: unknown[]) => {
    if (process.env.BRIDGE_TEST_LOG) console.log(JSON.stringify(a));
  },
};
let folder: string;

/**
 * What the service saw, as events a test waits on instead of sleeping: `call` when a call reaches it, `closed` once
 * the end of a connection has been handled (its database requests kept or rolled back).
 */
const serviceEvents = new EventEmitter();

/** Resolves after `count` more connections have been handled as closed. */
function closings(count: number): Promise<void> {
  return new Promise((resolve) => {
    let left = count;
    const one = () => {
      if (--left > 0) return;
      serviceEvents.off('closed', one);
      resolve();
    };
    serviceEvents.on('closed', one);
  });
}

async function bridge(
  env: Record<string, string> = {},
  logger: Logger = silent,
): Promise<{ bridge: RunningBridge; config: BridgeConfig }> {
  const config = readBridgeConfig({
    BRIDGE_SECURITY: 'none',
    BRIDGE_PORT: '0',
    DATABASE_URL: `file:${join(folder, 'idb.sqlite')}`,
    FILES_URL: `file:${join(folder, 'files')}`,
    BRIDGE_ROLES_FILE: join(folder, 'roles.json'),
    ...env,
  });
  const opened = await openNodeIdbService(config, logger);
  const service: IdbService = {
    ...opened,
    call: (operation, caller, args) => {
      serviceEvents.emit('call', operation);
      return opened.call(operation, caller, args);
    },
    connectionClosed: async (connectionId, clean) => {
      await opened.connectionClosed(connectionId, clean);
      serviceEvents.emit('closed', connectionId, clean);
    },
    openRequests: () => opened.openRequests(),
    close: () => opened.close(),
  };
  try {
    return { bridge: await startBridge(config, service, logger), config };
  } catch (error) {
    await service.close();
    throw error;
  }
}

function envelope(record: ServerRecord) {
  expect(record.type).toBe('envelope');
  return (record as Extract<ServerRecord, { type: 'envelope' }>).document;
}

const result = (record: ServerRecord, operation: string) =>
  path(envelope(record), 'Envelope', 'Body', `${operation}Response`, `${operation}Result`);
const faultName = (record: ServerRecord) =>
  textOf(path(envelope(record), 'Envelope', 'Body', 'Fault', 'Code', 'Subcode', 'Value')).replace(/^\w+:/, '');
const sql = (operation: string, text: string, requestId = '00000000-0000-0000-0000-000000000000', id = 1) =>
  request(
    operation,
    [param('requestId', [stringText(requestId)]), param('sql', [stringText(text)]), param('parameters', [])],
    { messageId: `urn:uuid:00000000-0000-0000-0000-${String(id).padStart(12, '0')}` },
  );

describe('tcp-bridge server (security none, SQLite)', () => {
  let running: RunningBridge;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'bridge-'));
    await writeFile(join(folder, 'roles.json'), JSON.stringify({ writer: ['anonymous'] }));
    running = (await bridge()).bridge;
  });

  afterAll(async () => {
    await running?.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('answers a session: preamble, calls with their RelatesTo, a fault that leaves the channel usable, End', async () => {
    const client = await NetTcpTestClient.open(running.port);
    try {
      expect(await client.preamble()).toEqual({ type: 'ack' });
      expect(textOf(result(await client.call(request('Heartbeat', [])), 'Heartbeat'))).toBe('true');

      expect(faultName(await client.call(sql('ReturnScalar', 'SELECT @x * 2')))).toBe('InvalidArgument'); // @x has no parameter

      const unknownAction = await client.call(request('Explode', []));
      expect(faultName(unknownAction)).toBe('ActionNotSupported');
      const header = path(envelope(unknownAction), 'Envelope', 'Header');
      expect(textOf(child(header, 'Action'))).toBe('http://www.w3.org/2005/08/addressing/soap/fault');

      const ok = await client.call(sql('ExecuteNonQuery', 'CREATE TABLE t (id int, name text)', undefined, 7));
      expect(textOf(result(ok, 'ExecuteNonQuery'))).toBe('-1');
      expect(textOf(child(path(envelope(ok), 'Envelope', 'Header'), 'RelatesTo'))).toBe(
        'urn:uuid:00000000-0000-0000-0000-000000000007',
      );

      client.end();
      expect(await client.next()).toEqual({ type: 'end' });
      // .NET pools the socket: a new session on the same connection.
      expect(await client.preamble()).toEqual({ type: 'ack' });
      expect(textOf(result(await client.call(request('Heartbeat', [])), 'Heartbeat'))).toBe('true');
    } finally {
      client.close();
    }
  });

  it('keeps a database request over a clean End and rolls it back when the connection breaks', async () => {
    const open = async () => {
      const client = await NetTcpTestClient.open(running.port);
      expect(await client.preamble()).toEqual({ type: 'ack' });
      return client;
    };
    const first = await open();
    const created = await first.call(request('CreateDatabaseRequest', [param('database', [stringText('')])]));
    const requestId = textOf(result(created, 'CreateDatabaseRequest'));
    expect(
      textOf(
        result(
          await first.call(sql('ExecuteNonQuery', "INSERT INTO t VALUES (1, 'kept')", requestId)),
          'ExecuteNonQuery',
        ),
      ),
    ).toBe('1');
    first.end();
    expect(await first.next()).toEqual({ type: 'end' });
    first.close();

    const second = await open();
    expect(
      textOf(
        result(
          await second.call(sql('ExecuteNonQuery', "INSERT INTO t VALUES (2, 'lost')", requestId)),
          'ExecuteNonQuery',
        ),
      ),
    ).toBe('1');
    second.close(); // a reset, no End: the request (opened on the first connection) is still kept: it is not this connection's
    const third = await open();
    const closed = await third.call(
      request('CloseDatabaseRequest', [
        param('requestId', [stringText(requestId)]),
        param('commit', [stringText('true')]),
      ]),
    );
    expect(textOf(result(closed, 'CloseDatabaseRequest'))).toBe('true');

    const broken = await third.call(request('CreateDatabaseRequest', [param('database', [stringText('')])]));
    const brokenId = textOf(result(broken, 'CreateDatabaseRequest'));
    await third.call(sql('ExecuteNonQuery', "INSERT INTO t VALUES (3, 'rolled back')", brokenId));
    const rolledBack = once(serviceEvents, 'closed');
    third.close();
    expect((await rolledBack)[1]).toBe(false);

    const fourth = await open();
    const unknown = await fourth.call(sql('ExecuteNonQuery', 'SELECT 1', brokenId));
    expect(faultName(unknown)).toBe('UnknownDatabaseRequest');
    const table = textOf(
      result(await fourth.call(sql('ReturnScalar', 'SELECT group_concat(name) FROM t ORDER BY id')), 'ReturnScalar'),
    );
    expect(table).toBe('kept,lost');
    fourth.close();
  });

  it('refuses with the framing faults WCF sends: version, via, message size', async () => {
    const version = await NetTcpTestClient.open(running.port);
    version.send(Uint8Array.of(0x00, 0x02, 0x00));
    expect(await version.next()).toEqual({
      type: 'fault',
      fault: 'http://schemas.microsoft.com/ws/2006/05/framing/faults/UnsupportedVersion',
    });
    expect(await version.next()).toEqual({ type: 'closed' });

    const via = await NetTcpTestClient.open(running.port);
    expect(await via.preamble('net.tcp://localhost/OtherService')).toEqual({
      type: 'fault',
      fault: 'http://schemas.microsoft.com/ws/2006/05/framing/faults/EndpointNotFound',
    });

    const small = await bridge({ MAX_MESSAGE_MB: '1' });
    try {
      const big = await NetTcpTestClient.open(small.bridge.port);
      expect(await big.preamble()).toEqual({ type: 'ack' });
      big.send(
        framing()
          .raw(Uint8Array.of(0x06, 0x81, 0x80, 0x80, 0x01))
          .finish(),
      ); // a 2 MiB envelope announced
      expect(await big.next()).toEqual({
        type: 'fault',
        fault: 'http://schemas.microsoft.com/ws/2006/05/framing/faults/MaxMessageSizeExceededFault',
      });
    } finally {
      await small.bridge.close();
    }
  });

  it('aborts a connection that sends an unreadable message, and serves the next client', async () => {
    const client = await NetTcpTestClient.open(running.port);
    expect(await client.preamble()).toEqual({ type: 'ack' });
    client.send(sizedEnvelope(Uint8Array.of(0x00, 0x56, 0xff, 0xff)));
    expect(await client.next()).toEqual({ type: 'closed' });
    const next = await NetTcpTestClient.open(running.port);
    expect(await next.preamble()).toEqual({ type: 'ack' });
    expect(textOf(result(await next.call(request('Heartbeat', [])), 'Heartbeat'))).toBe('true');
    next.close();
  });

  it('answers ServerTooBusy over BRIDGE_MAX_CONNECTIONS and closes a connection silent past the init time-out', async () => {
    const limited = await bridge({ BRIDGE_MAX_CONNECTIONS: '1', BRIDGE_INIT_TIMEOUT_MS: '300' });
    try {
      const first = await NetTcpTestClient.open(limited.bridge.port);
      expect(await first.preamble()).toEqual({ type: 'ack' });
      const second = await NetTcpTestClient.open(limited.bridge.port);
      expect(await second.preamble()).toEqual({
        type: 'fault',
        fault: 'http://schemas.microsoft.com/ws/2006/05/framing/faults/ServerTooBusy',
      });
      const gone = once(serviceEvents, 'closed');
      first.close();
      await gone;
      const silentClient = await NetTcpTestClient.open(limited.bridge.port);
      expect(await silentClient.next()).toEqual({ type: 'closed' });
    } finally {
      await limited.bridge.close();
    }
  });

  it('finishes a call in flight on shutdown', async () => {
    const own = await bridge();
    const client = await NetTcpTestClient.open(own.bridge.port);
    expect(await client.preamble()).toEqual({ type: 'ack' });
    const started = once(serviceEvents, 'call');
    const slow = client.call(
      sql(
        'ReturnScalar',
        'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000) SELECT count(*) FROM c',
      ),
    );
    await started;
    const closing = own.bridge.close();
    expect(textOf(result(await slow, 'ReturnScalar'))).toBe('2000000');
    await closing;
  });

  it('refuses to start with Windows security and nothing to accept with, or a users file others can read', async () => {
    expect(() => securityBackends(readBridgeConfig({}))).toThrow(/BRIDGE_NTLM_USERS/);
    const users = join(folder, 'users');
    await writeFile(users, 'TESTDOM:alice:Secret123!\n', { mode: 0o644 });
    expect(() => securityBackends(readBridgeConfig({ BRIDGE_NTLM_USERS: users }))).toThrow(/BRIDGE_NTLM_USERS/);
  });
});

describe('tcp-bridge server with Windows security (NTLM)', () => {
  let running: RunningBridge;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'bridge-ntlm-'));
    await writeFile(join(folder, 'users'), 'TESTDOM:alice:Secret123!\n', { mode: 0o600 });
    await writeFile(join(folder, 'roles.json'), JSON.stringify({ writer: ['TESTDOM\\alice'] }));
    running = (await bridge({ BRIDGE_SECURITY: 'windows', BRIDGE_NTLM_USERS: join(folder, 'users') })).bridge;
  });

  afterAll(async () => {
    await running?.close();
    await rm(folder, { recursive: true, force: true });
  });

  // Found by the .NET WCF client (test/bridge/dotnet.peers.test.ts): its pool keeps the raw socket, so the session
  // after a channel's Close starts in plaintext with a new upgrade; the bridge read it as an NNS frame and dropped it.
  it('serves a new plaintext preamble, upgrade and logon on the socket after End inside the sealed stream', async () => {
    const socket = await PooledNtlmSocket.connect(running.port);
    try {
      for (let round = 0; round < 3; round++) {
        const session = await socket.session('net.tcp://localhost/IDBService', {
          domain: 'TESTDOM',
          user: 'alice',
          password: 'Secret123!',
        });
        expect(await session.call('Heartbeat')).toBe('true');
        await session.end();
      }
      expect(running.connections()).toBe(1);
    } finally {
      socket.close();
    }
  });
});

describe('tcp-bridge server: memory of partly received messages (BRIDGE_MAX_INFLIGHT_MB, BRIDGE_MESSAGE_TIMEOUT_MS)', () => {
  const MiB = 1024 * 1024;
  let running: RunningBridge;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'bridge-budget-'));
    await writeFile(join(folder, 'roles.json'), JSON.stringify({ writer: ['anonymous'] }));
    running = (await bridge({ BRIDGE_MAX_INFLIGHT_MB: '2', BRIDGE_MESSAGE_TIMEOUT_MS: '1000' })).bridge;
  });

  afterAll(async () => {
    await running?.close();
    await rm(folder, { recursive: true, force: true });
  });

  const until = async (what: () => boolean) => {
    while (!what()) await new Promise((r) => setTimeout(r, 10));
  };

  /** A SizedEnvelope record's type and size, then `bytes` of its payload: a sender that stalls mid-message. */
  function stalledEnvelope(size: number, bytes: number): Uint8Array {
    const header = Uint8Array.of(RecordType.SizedEnvelope, ...encodeInt31(size));
    const record = new Uint8Array(header.length + bytes);
    record.set(header);
    return record;
  }

  // The stalled sender leaves by closing its socket (an event), not at its time-out: a waiter is granted the budget
  // only when the holder leaves, and its own message time-out counts the wait, so a holder timing out just before
  // it would leave the waiter no time (the time-outs are in test/bridge/connection.test.ts, on a fake clock).
  it('lets a second sender wait while a stalled one holds the budget, then serves it once the stalled one is gone', async () => {
    const stalled = await NetTcpTestClient.open(running.port);
    const waiting = await NetTcpTestClient.open(running.port);
    try {
      expect(await stalled.preamble()).toEqual({ type: 'ack' });
      expect(await waiting.preamble()).toEqual({ type: 'ack' });
      stalled.send(stalledEnvelope(1.5 * MiB, 1 * MiB));
      await until(() => running.inflight().reservedBytes === 1.5 * MiB);

      // 0.6 MiB of SQL does not fit the 0.5 MiB left: the sender waits, its bytes unread.
      const reply = waiting.call(sql('ExecuteNonQuery', `SELECT 1 -- ${'x'.repeat(0.6 * MiB)}`));
      await until(() => running.inflight().waiting === 1);
      expect(running.inflight().reservedBytes).toBe(1.5 * MiB);

      stalled.close();
      expect(textOf(result(await reply, 'ExecuteNonQuery'))).toBe('-1');
      await until(() => running.inflight().reservedBytes === 0);
      expect(running.inflight().waiting).toBe(0);
    } finally {
      stalled.close();
      waiting.close();
    }
  });

  it('holds no more than the budget with many stalled senders, and frees it all when they time out', async () => {
    const senders = await Promise.all(Array.from({ length: 8 }, () => NetTcpTestClient.open(running.port)));
    try {
      for (const s of senders) expect(await s.preamble()).toEqual({ type: 'ack' });
      for (const s of senders) s.send(stalledEnvelope(MiB, MiB / 2));
      await until(() => running.inflight().waiting === 6);
      expect(running.inflight().reservedBytes).toBe(2 * MiB);
      for (const s of senders) expect((await s.next()).type).toMatch(/^(closed|fault)$/);
      await until(() => running.inflight().reservedBytes === 0 && running.inflight().waiting === 0);
      const after = await NetTcpTestClient.open(running.port);
      expect(await after.preamble()).toEqual({ type: 'ack' });
      expect(textOf(result(await after.call(request('Heartbeat', [])), 'Heartbeat'))).toBe('true');
      after.close();
    } finally {
      for (const s of senders) s.close();
    }
  });
});

describe('tcp-bridge server: audit lines and metrics (BRIDGE_METRICS_PORT)', () => {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const logger: Logger = { log: (level, message, fields) => void lines.push({ level, message, fields }) };
  let running: RunningBridge;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'bridge-metrics-'));
    await writeFile(join(folder, 'roles.json'), JSON.stringify({ writer: ['anonymous'] }));
    running = (await bridge({ BRIDGE_METRICS_PORT: '0' }, logger)).bridge;
  });

  afterAll(async () => {
    await running?.close();
    await rm(folder, { recursive: true, force: true });
  });

  const scrape = async (path = '/metrics') => fetch(`http://127.0.0.1:${running.metricsPort}${path}`);
  const sample = (text: string, name: string, labels = '') => {
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`${name}${labels} `) || (labels === '' && l.startsWith(`${name} `)));
    return line === undefined ? undefined : Number(line.split(' ').pop());
  };

  it('writes one audit line per call, never the SQL, and the metrics move with a scripted session', async () => {
    expect(running.metricsPort).toBeGreaterThan(0);
    expect(await (await scrape('/health')).json()).toEqual({ status: 'ok' });
    const before = await (await scrape()).text();
    expect(sample(before, 'idb_bridge_calls_total', '{operation="Heartbeat",outcome="ok"}')).toBeUndefined();

    const client = await NetTcpTestClient.open(running.port);
    expect(await client.preamble()).toEqual({ type: 'ack' });
    expect(textOf(result(await client.call(request('Heartbeat', [])), 'Heartbeat'))).toBe('true');
    expect(faultName(await client.call(sql('ReturnScalar', 'SELECT @missing')))).toBe('InvalidArgument');
    const created = textOf(
      result(
        await client.call(request('CreateDatabaseRequest', [param('database', [stringText('')])])),
        'CreateDatabaseRequest',
      ),
    );
    const secret = 'SELECT 1 AS very_secret_column';
    await client.call(sql('ReturnScalar', secret, created));

    const during = await (await scrape()).text();
    expect(sample(during, 'idb_bridge_connections')).toBe(1);
    expect(sample(during, 'idb_bridge_database_requests_open')).toBe(1);
    const bothClosed = closings(2);
    client.close();

    const bad = await NetTcpTestClient.open(running.port);
    bad.send(Uint8Array.of(0x00, 0x02, 0x00)); // framing version 2.0
    expect((await bad.next()).type).toBe('fault');
    bad.close();
    await bothClosed;

    const after = await (await scrape()).text();
    expect(sample(after, 'idb_bridge_calls_total', '{operation="Heartbeat",outcome="ok"}')).toBe(1);
    expect(sample(after, 'idb_bridge_calls_total', '{operation="ReturnScalar",outcome="ok"}')).toBe(1);
    expect(sample(after, 'idb_bridge_calls_total', '{operation="ReturnScalar",outcome="InvalidArgument"}')).toBe(1);
    expect(sample(after, 'idb_bridge_call_duration_seconds_count', '{operation="ReturnScalar"}')).toBe(2);
    expect(sample(after, 'idb_bridge_refusals_total', '{reason="UnsupportedVersion"}')).toBe(1);
    expect(sample(after, 'idb_bridge_connections')).toBe(0);
    expect(sample(after, 'idb_bridge_database_requests_open')).toBe(0); // rolled back: the connection broke
    expect(after).toContain('process_resident_memory_bytes');

    const calls = lines.filter((l) => l.message === 'call');
    expect(calls.map((l) => [l.level, l.fields?.operation, l.fields?.outcome, l.fields?.caller])).toEqual([
      ['info', 'Heartbeat', 'ok', 'anonymous'],
      ['info', 'ReturnScalar', 'InvalidArgument', 'anonymous'],
      ['info', 'CreateDatabaseRequest', 'ok', 'anonymous'],
      ['info', 'ReturnScalar', 'ok', 'anonymous'],
    ]);
    expect(calls[1]!.fields).not.toHaveProperty('databaseRequest'); // Guid.Empty: no request
    expect(calls[2]!.fields?.databaseRequest).toBe(created);
    expect(calls[3]!.fields?.databaseRequest).toBe(created);
    for (const call of calls)
      expect(call.fields).toMatchObject({ connectionId: expect.any(String), ms: expect.any(Number) });
    expect(JSON.stringify(lines)).not.toContain('very_secret_column');
  });

  it('serves nothing but /metrics and /health', async () => {
    expect((await scrape('/')).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${running.metricsPort}/metrics`, { method: 'POST' })).status).toBe(405);
  });
});

describe('tcp-bridge settings for Active Directory (BRIDGE_NTLM_DOMAIN, BRIDGE_LDAP_*)', () => {
  it('reads the NetBIOS domain of NTLM pass-through, upper-cased, and refuses what is no NetBIOS name or the gssapi backend', () => {
    expect(readBridgeConfig({ BRIDGE_NTLM_DOMAIN: 'corp' }).ntlmDomain).toBe('CORP');
    expect(readBridgeConfig({}).ntlmDomain).toBeUndefined();
    expect(() => readBridgeConfig({ BRIDGE_NTLM_DOMAIN: 'corp.example.com.very' })).toThrow(/NetBIOS name/);
    expect(() => readBridgeConfig({ BRIDGE_NTLM_DOMAIN: 'CORP\\x' })).toThrow(/NetBIOS name/);
    expect(() =>
      readBridgeConfig({ BRIDGE_NTLM_DOMAIN: 'CORP', BRIDGE_NTLM_BACKEND: 'gssapi', BRIDGE_NTLM_USERS: '/u' }),
    ).toThrow(/built-in NTLM acceptor/);
    // The member's names are read at start (openSecurityBackends); the synchronous builder does not guess them.
    expect(() => securityBackends(readBridgeConfig({ BRIDGE_NTLM_DOMAIN: 'CORP' }))).toThrow(/openSecurityBackends/);
  });

  it('reads the LDAP settings: ldaps://, or ldap:// with StartTLS; a bind account and its password file are required', () => {
    const env = { BRIDGE_LDAP_BIND_DN: 'svc@corp.example', BRIDGE_LDAP_PASSWORD_FILE: '/etc/idb-bridge/ldap-password' };
    expect(readBridgeConfig({}).ldap).toBeUndefined();
    expect(
      readBridgeConfig({
        ...env,
        BRIDGE_LDAP_URL: 'ldaps://dc1.corp.example',
        BRIDGE_LDAP_CA_FILE: '/etc/ssl/corp-ca.pem',
      }).ldap,
    ).toEqual({
      url: 'ldaps://dc1.corp.example',
      startTls: false,
      bindDn: 'svc@corp.example',
      passwordFile: '/etc/idb-bridge/ldap-password',
      caFile: '/etc/ssl/corp-ca.pem',
      refreshMs: 900_000,
    });
    expect(
      readBridgeConfig({ ...env, BRIDGE_LDAP_URL: 'LDAP://dc1.corp.example:389', BRIDGE_LDAP_REFRESH_MS: '0' }).ldap,
    ).toMatchObject({ startTls: true, caFile: undefined, refreshMs: 0 });
    expect(() => readBridgeConfig({ ...env, BRIDGE_LDAP_URL: 'https://dc1.corp.example' })).toThrow(/ldaps:\/\/host/);
    expect(() => readBridgeConfig({ BRIDGE_LDAP_URL: 'ldaps://dc1.corp.example' })).toThrow(
      /BRIDGE_LDAP_BIND_DN and BRIDGE_LDAP_PASSWORD_FILE/,
    );
    expect(() => readBridgeConfig(env)).toThrow(
      /BRIDGE_LDAP_BIND_DN, BRIDGE_LDAP_PASSWORD_FILE without BRIDGE_LDAP_URL/,
    );
  });
});
