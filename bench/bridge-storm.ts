/**
 * Reconnect storms (CoreWCF issue 1535: ~2 000 clients reconnecting after a restart were throttled for over a
 * minute): N connections opened at once against the bridge as `npm run bridge` runs it, each with its preamble and a
 * Heartbeat (plain), or the negotiate upgrade and an NTLM logon first; the time until every one has its outcome,
 * and the outcomes. The canned responder (a trivial net.tcp server, bench/canned-responder.ts) is the floor set by
 * the clients and the kernel, measured in the same run. The correctness of the outcomes is test/bridge/storm.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reconnectStorm, type StormResult } from '../test/support/nettcp/storm.ts';
import { killAllChildren, startBridgeProcess, startCannedResponder } from './server.ts';
import { isMainModule } from './main-module.ts';

const SERVER_TOO_BUSY = 'http://schemas.microsoft.com/ws/2006/05/framing/faults/ServerTooBusy';

export interface StormRow {
  peer: string;
  connections: number;
  cap: string;
  result: StormResult;
}

async function bridgeStorm(connections: number, maxConnections: number | undefined, ntlm: boolean): Promise<StormRow> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-storm-'));
  writeFileSync(join(dir, 'roles.json'), JSON.stringify({ reader: ['anonymous', 'TESTDOM\\alice'] }));
  writeFileSync(join(dir, 'users'), 'TESTDOM:alice:Secret123!\n', { mode: 0o600 });
  const bridge = await startBridgeProcess({
    BRIDGE_SECURITY: ntlm ? 'windows' : 'none',
    BRIDGE_NTLM_USERS: join(dir, 'users'),
    BRIDGE_ROLES_FILE: join(dir, 'roles.json'),
    DATABASE_URL: `file:${join(dir, 'idb.sqlite')}`,
    FILES_URL: `file:${join(dir, 'files')}`,
    ...(maxConnections === undefined ? {} : { BRIDGE_MAX_CONNECTIONS: String(maxConnections) }),
  });
  try {
    const account = ntlm ? { domain: 'TESTDOM', user: 'alice', password: 'Secret123!' } : undefined;
    return {
      peer: ntlm ? 'tcp-bridge, NTLM logon' : 'tcp-bridge',
      connections,
      cap: String(maxConnections ?? '1024 (default)'),
      result: await reconnectStorm(bridge.port, connections, account),
    };
  } finally {
    await bridge.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runStormBench(): Promise<StormRow[]> {
  const rows: StormRow[] = [];
  const canned = await startCannedResponder();
  try {
    const port = Number(new URL(canned.endpoint.replace(/^net\.tcp:/, 'http:')).port);
    rows.push({ peer: canned.name, connections: 2000, cap: '–', result: await reconnectStorm(port, 2000) });
  } finally {
    await canned.stop();
  }
  rows.push(await bridgeStorm(2000, 2000, false));
  rows.push(await bridgeStorm(2000, undefined, false));
  rows.push(await bridgeStorm(300, undefined, true));
  const floor = rows[0]!.result.ms;
  const lines = [
    '',
    '## tcp-bridge: reconnect storm (connections opened at once, preamble + Heartbeat each)',
    '',
    '| peer | connections | BRIDGE_MAX_CONNECTIONS | until all answered | / canned responder | served | ServerTooBusy | reset |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      ({ peer, connections, cap, result }) =>
        `| ${peer} | ${connections} | ${cap} | ${Math.round(result.ms)} ms | ${(result.ms / floor).toFixed(1)} | ${result.served} | ${result.refused.get(SERVER_TOO_BUSY) ?? 0} | ${result.reset + [...result.refused].filter(([f]) => f !== SERVER_TOO_BUSY).reduce((n, [, c]) => n + c, 0)} |`,
    ),
  ];
  console.log(lines.join('\n'));
  return rows;
}

if (isMainModule(import.meta)) {
  runStormBench()
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    })
    .finally(killAllChildren);
}
