/**
 * Reconnect storms (CoreWCF issue 1535): 2 000 connections opening at once, each with its preamble and a Heartbeat,
 * and a few hundred doing the NTLM logon first. Correctness only (the time until all are served is a bench row,
 * bench/bridge-storm.ts): every connection is served, or refused with ServerTooBusy when over BRIDGE_MAX_CONNECTIONS;
 * none is reset, none hangs (the test's time-out would end it). About 4 000 descriptors (both ends in this process):
 * within `ulimit -n` here (20 000); the test checks the limit first.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBridgeConfig } from '../../tcp-bridge/src/config.ts';
import { startBridge, type RunningBridge } from '../../tcp-bridge/src/server.ts';
import { openNodeIdbService } from '../../src/runtime/node/idb/idb-service.ts';
import { reconnectStorm } from '../support/nettcp/storm.ts';

const silent = { log: () => {} };
const SERVER_TOO_BUSY = 'http://schemas.microsoft.com/ws/2006/05/framing/faults/ServerTooBusy';
const PLAIN = 2000;
const SEALED = 300;

let folder: string;

async function bridge(env: Record<string, string>): Promise<RunningBridge> {
  const config = readBridgeConfig({
    BRIDGE_PORT: '0',
    DATABASE_URL: `file:${join(folder, 'idb.sqlite')}`,
    FILES_URL: `file:${join(folder, 'files')}`,
    BRIDGE_ROLES_FILE: join(folder, 'roles.json'),
    BRIDGE_NTLM_USERS: join(folder, 'users'),
    ...env,
  });
  const service = await openNodeIdbService(config, silent);
  return startBridge(config, service, silent);
}

const descriptors = Number(execSync('ulimit -n', { shell: '/bin/sh' }).toString().trim());

describe.skipIf(descriptors < 2 * PLAIN + 200)('tcp-bridge: reconnect storms', () => {
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'bridge-storm-'));
    await writeFile(join(folder, 'roles.json'), JSON.stringify({ reader: ['anonymous', 'TESTDOM\\alice'] }));
    await writeFile(join(folder, 'users'), 'TESTDOM:alice:Secret123!\n', { mode: 0o600 });
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it(`serves ${PLAIN} connections opening at once within BRIDGE_MAX_CONNECTIONS`, async () => {
    const running = await bridge({ BRIDGE_SECURITY: 'none', BRIDGE_MAX_CONNECTIONS: String(PLAIN) });
    try {
      const storm = await reconnectStorm(running.port, PLAIN);
      expect({ served: storm.served, refused: [...storm.refused], reset: storm.reset }).toEqual({
        served: PLAIN,
        refused: [],
        reset: 0,
      });
    } finally {
      await running.close();
    }
  }, 120_000);

  it(`refuses with ServerTooBusy only beyond BRIDGE_MAX_CONNECTIONS (${PLAIN / 2})`, async () => {
    const running = await bridge({ BRIDGE_SECURITY: 'none', BRIDGE_MAX_CONNECTIONS: String(PLAIN / 2) });
    try {
      const storm = await reconnectStorm(running.port, PLAIN);
      expect(storm.reset).toBe(0);
      expect([...storm.refused.keys()].filter((fault) => fault !== SERVER_TOO_BUSY)).toEqual([]);
      expect(storm.served).toBeGreaterThanOrEqual(PLAIN / 2);
      expect(storm.served + (storm.refused.get(SERVER_TOO_BUSY) ?? 0)).toBe(PLAIN);
    } finally {
      await running.close();
    }
  }, 120_000);

  it(`serves ${SEALED} NTLM logons opening at once`, async () => {
    const running = await bridge({ BRIDGE_SECURITY: 'windows' });
    try {
      const storm = await reconnectStorm(running.port, SEALED, {
        domain: 'TESTDOM',
        user: 'alice',
        password: 'Secret123!',
      });
      expect({ served: storm.served, refused: [...storm.refused], reset: storm.reset }).toEqual({
        served: SEALED,
        refused: [],
        reset: 0,
      });
    } finally {
      await running.close();
    }
  }, 180_000);
});
