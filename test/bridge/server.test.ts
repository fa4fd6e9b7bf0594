/**
 * The bridge as a TCP server (security mode None) on the embedded SQLite backend, driven by a client that speaks
 * net.tcp itself: sessions, calls, SOAP and framing faults, connection limits, connection loss and shutdown, and the
 * security settings it refuses to start with.
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringText } from '../../tcp-bridge/src/binary-xml/index.ts';
import { readBridgeConfig } from '../../tcp-bridge/src/config.ts';
import { framing, sizedEnvelope } from '../../tcp-bridge/src/framing/index.ts';
import { securityBackends, type RunningBridge } from '../../tcp-bridge/src/server.ts';
import { NetTcpTestClient } from '../support/nettcp/nettcp.ts';
import { child, param, path, request, textOf } from '../support/nettcp/soap.ts';
import { bridge, envelope, faultName, result, serviceEvents, sql } from './server-harness.ts';

let folder: string;

describe('tcp-bridge server (security none, SQLite)', () => {
  let running: RunningBridge;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'bridge-'));
    await writeFile(join(folder, 'roles.json'), JSON.stringify({ writer: ['anonymous'] }));
    running = (await bridge(folder)).bridge;
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

    const small = await bridge(folder, { MAX_MESSAGE_MB: '1' });
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
    const limited = await bridge(folder, { BRIDGE_MAX_CONNECTIONS: '1', BRIDGE_INIT_TIMEOUT_MS: '300' });
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
    const own = await bridge(folder);
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
