/**
 * Reads on SQLite do not wait for each other, writes keep their single writer: two channels of one bridge (security
 * none, every caller a writer, as with SecurityMode.None), each running a slow read of its own. Each read reports its
 * start and end on SQLite's own clock (unixepoch('subsec') is fixed per sqlite3_step: the first row is stepped before
 * the slow part, the second after it), so overlap is read from the database's timestamps, not from a duration.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringText, type XmlElement } from '../../tcp-bridge/src/binary-xml/index.ts';
import { readBridgeConfig } from '../../tcp-bridge/src/config.ts';
import { startBridge, type RunningBridge } from '../../tcp-bridge/src/server.ts';
import { openNodeIdbService } from '../../src/runtime/node/idb/idb-service.ts';
import { NetTcpTestClient, type ServerRecord } from '../support/nettcp/nettcp.ts';
import { param, path, request, textOf } from '../support/nettcp/soap.ts';

const EMPTY = '00000000-0000-0000-0000-000000000000';
/**
 * A read of a few hundred milliseconds whose two rows are SQLite's clock before and after its slow part. SQLite reads
 * its clock once per step, so each row must come from a step of its own: the repeated column name keeps this read row
 * by row (a query's rows otherwise come as JSON from one step, sqlite-json-rows.ts, and both would show one time).
 */
const TIMED_READ =
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1500000) ' +
  "SELECT unixepoch('subsec') AS t, 0 AS t UNION ALL SELECT (SELECT count(*) FROM c) * 0 + unixepoch('subsec'), 0";

const call = (operation: string, params: [string, string][]) =>
  request(
    operation,
    params.map(([name, value]) => param(name, [stringText(value)])),
  );
const sql = (operation: string, text: string, requestId = EMPTY) =>
  call(operation, [
    ['requestId', requestId],
    ['sql', text],
  ]);

function body(record: ServerRecord, operation: string): XmlElement {
  expect(record.type).toBe('envelope');
  const document = (record as Extract<ServerRecord, { type: 'envelope' }>).document;
  return path(document, 'Envelope', 'Body', `${operation}Response`, `${operation}Result`);
}

/** The text of every leaf element under `e`, in document order (a DataTable's cells, among others). */
function leaves(e: XmlElement): string[] {
  const children = e.children.filter((c): c is XmlElement => c.kind === 'element');
  return children.length === 0 ? [textOf(e)] : children.flatMap(leaves);
}

/** [start, end] of a TIMED_READ on SQLite's clock, in seconds. */
function interval(record: ServerRecord): [number, number] {
  const times = leaves(body(record, 'ReturnDatatable'))
    .filter((t) => /^\d{10}(\.\d+)?$/.test(t))
    .map(Number);
  expect(times).toHaveLength(2);
  return [times[0]!, times[1]!];
}

async function channel(port: number): Promise<NetTcpTestClient> {
  const client = await NetTcpTestClient.open(port);
  expect(await client.preamble()).toEqual({ type: 'ack' });
  return client;
}

describe('SQLite reads beside each other, writes one at a time (two channels)', () => {
  let folder: string;
  let bridge: RunningBridge;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'bridge-reads-'));
    await writeFile(join(folder, 'roles.json'), JSON.stringify({ writer: ['anonymous'] }));
    const config = readBridgeConfig({
      BRIDGE_SECURITY: 'none',
      BRIDGE_PORT: '0',
      DATABASE_URL: `file:${join(folder, 'idb.sqlite')}`,
      FILES_URL: `file:${join(folder, 'files')}`,
      BRIDGE_ROLES_FILE: join(folder, 'roles.json'),
    });
    const logger = { log: () => {} };
    bridge = await startBridge(config, await openNodeIdbService(config, logger), logger);
  });

  afterAll(async () => {
    await bridge?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it("runs two writers' slow reads at the same time: each starts before the other ends", async () => {
    const [a, b] = await Promise.all([channel(bridge.port), channel(bridge.port)]);
    try {
      const pair = () =>
        Promise.all([a.call(sql('ReturnDatatable', TIMED_READ)), b.call(sql('ReturnDatatable', TIMED_READ))]);
      // A first pair opens the second read-only connection (on a loaded machine the first read could end before it is
      // open); the pool keeps it, so the measured pair finds two connections ready.
      await pair();
      const [first, second] = await pair();
      const [startA, endA] = interval(first);
      const [startB, endB] = interval(second);
      expect(startA).toBeLessThanOrEqual(endA);
      expect(startB).toBeLessThanOrEqual(endB);
      // Overlap: had one waited for the other, it would have started at or after the other's end.
      expect(startB).toBeLessThan(endA);
      expect(startA).toBeLessThan(endB);
    } finally {
      a.socket.destroy();
      b.socket.destroy();
    }
  });

  it('still lets one writer in at a time: a second database request waits until the first ends', async () => {
    const [a, b] = await Promise.all([channel(bridge.port), channel(bridge.port)]);
    try {
      await a.call(sql('ExecuteNonQuery', 'CREATE TABLE IF NOT EXISTS w (v INTEGER)'));
      const requestA = textOf(body(await a.call(call('CreateDatabaseRequest', [])), 'CreateDatabaseRequest'));
      textOf(body(await a.call(sql('ExecuteNonQuery', 'INSERT INTO w VALUES (1)', requestA)), 'ExecuteNonQuery'));
      const events: string[] = [];
      const waiting = b.call(call('CreateDatabaseRequest', [])).then((record) => {
        events.push('B began');
        return record;
      });
      // Round trips on A while B waits for the writer's lock (its request has reached the bridge by then).
      for (let i = 2; i < 5; i++)
        textOf(body(await a.call(sql('ExecuteNonQuery', `INSERT INTO w VALUES (${i})`, requestA)), 'ExecuteNonQuery'));
      events.push('A wrote');
      const closed = call('CloseDatabaseRequest', [
        ['requestId', requestA],
        ['commit', 'true'],
      ]);
      expect(textOf(body(await a.call(closed), 'CloseDatabaseRequest'))).toBe('true');
      events.push('A committed');
      const requestB = textOf(body(await waiting, 'CreateDatabaseRequest'));
      expect(events).toEqual(['A wrote', 'A committed', 'B began']);
      const count = await b.call(sql('ReturnScalar', 'SELECT count(*) FROM w', requestB));
      expect(textOf(body(count, 'ReturnScalar'))).toBe('4');
    } finally {
      a.socket.destroy();
      b.socket.destroy();
    }
  });
});
