/**
 * The bridge's audit lines and metrics endpoint (BRIDGE_METRICS_PORT): one audit line per call without the SQL,
 * metrics that move with a scripted session, and nothing served but /metrics and /health.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '#idb';
import { stringText } from '../../tcp-bridge/src/binary-xml/index.ts';
import type { RunningBridge } from '../../tcp-bridge/src/server.ts';
import { NetTcpTestClient } from '../support/nettcp/nettcp.ts';
import { param, request, textOf } from '../support/nettcp/soap.ts';
import { bridge, closings, faultName, result, sql } from './server-harness.ts';

let folder: string;

describe('tcp-bridge server: audit lines and metrics (BRIDGE_METRICS_PORT)', () => {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const logger: Logger = { log: (level, message, fields) => void lines.push({ level, message, fields }) };
  let running: RunningBridge;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'bridge-metrics-'));
    await writeFile(join(folder, 'roles.json'), JSON.stringify({ writer: ['anonymous'] }));
    running = (await bridge(folder, { BRIDGE_METRICS_PORT: '0' }, logger)).bridge;
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
