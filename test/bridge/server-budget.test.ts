/**
 * The bridge's memory of partly received messages (BRIDGE_MAX_INFLIGHT_MB, BRIDGE_MESSAGE_TIMEOUT_MS): stalled
 * senders hold no more than the budget, a waiter is served once the holder leaves.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeInt31 } from '../../tcp-bridge/src/bytes.ts';
import { RecordType } from '../../tcp-bridge/src/framing/index.ts';
import type { RunningBridge } from '../../tcp-bridge/src/server.ts';
import { NetTcpTestClient } from '../support/nettcp/nettcp.ts';
import { request, textOf } from '../support/nettcp/soap.ts';
import { bridge, result, sql } from './server-harness.ts';

let folder: string;

describe('tcp-bridge server: memory of partly received messages (BRIDGE_MAX_INFLIGHT_MB, BRIDGE_MESSAGE_TIMEOUT_MS)', () => {
  const MiB = 1024 * 1024;
  let running: RunningBridge;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'bridge-budget-'));
    await writeFile(join(folder, 'roles.json'), JSON.stringify({ writer: ['anonymous'] }));
    running = (await bridge(folder, { BRIDGE_MAX_INFLIGHT_MB: '2', BRIDGE_MESSAGE_TIMEOUT_MS: '1000' })).bridge;
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
