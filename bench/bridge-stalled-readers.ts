/**
 * The bridge's memory under clients that pipeline GetFile of an 8 MiB file and never read (issue 18: 4 sessions x 100
 * requests took it from 112 MiB to 4 082 MiB). Two peers in the same run: the bridge as deployed (BRIDGE_MAX_UNSENT_KB
 * 1 MiB, the send time-out cutting the stalled sessions off), and the same bundle with the bound lifted
 * (BRIDGE_MAX_UNSENT_KB at its 1 GiB maximum, no send time-out in reach): the old behaviour, every reply buffered.
 * Measured: peak RSS once the bridge's memory stops growing (or the stalled sessions were cut off), and the round trip
 * of a Heartbeat from another client meanwhile.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringText } from '../tcp-bridge/src/binary-xml/index.ts';
import { NetTcpClientSession } from '../tcp-bridge/src/client/session.ts';
import { storeFile } from '../test/support/peers/stored-file.ts';
import { ClientConnection, NetTcpSession } from '../test/support/nettcp/ntlm-nettcp.ts';
import { param, request } from '../test/support/nettcp/soap.ts';
import { killAllChildren, procMemMB, startBridgeProcess } from './server.ts';
import { isMainModule } from './main-module.ts';

const MiB = 1024 * 1024;
const FILE_BYTES = 8 * MiB;
const VIA = 'net.tcp://localhost/IDBService';

export interface StalledReadersRow {
  peer: string;
  sessions: number;
  requests: number;
  baselineMB: number;
  peakMB: number;
  heartbeatMs: number;
  cutOff: boolean;
}

/** A client that reads: the time of one Heartbeat round trip on a new connection. */
async function heartbeatMs(port: number): Promise<number> {
  const started = performance.now();
  const connection = await ClientConnection.connect('127.0.0.1', port);
  try {
    connection.begin(new NetTcpClientSession(VIA));
    await connection.expect('preambleAck');
    const session = new (class extends NetTcpSession {
      beat = () => this.exchange('Heartbeat', []);
    })(connection);
    await session.beat();
    return performance.now() - started;
  } finally {
    connection.socket.destroy();
  }
}

async function run(peer: string, sessions: number, requests: number, bounded: boolean): Promise<StalledReadersRow> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-stalled-readers-'));
  writeFileSync(join(dir, 'roles.json'), JSON.stringify({ writer: ['anonymous'] }));
  const env = {
    BRIDGE_SECURITY: 'none',
    BRIDGE_ROLES_FILE: join(dir, 'roles.json'),
    DATABASE_URL: `file:${join(dir, 'idb.sqlite')}`,
    FILES_URL: `file:${join(dir, 'files')}`,
    ...(bounded
      ? { BRIDGE_SEND_TIMEOUT_MS: '10000' }
      : { BRIDGE_MAX_UNSENT_KB: '1048576', BRIDGE_SEND_TIMEOUT_MS: '3600000' }),
  };
  const fileId = await storeFile(env, { name: 'anonymous', anonymous: true, connectionId: 'seed' }, FILE_BYTES);
  const bridge = await startBridgeProcess(env);
  const sockets: { destroy(): void; closed: boolean }[] = [];
  try {
    await heartbeatMs(bridge.port);
    const baselineMB = procMemMB(bridge.pid, 'VmRSS');
    const getFile = request('GetFile', [param('fileId', [stringText(fileId)])]);
    for (let i = 0; i < sessions; i++) {
      const connection = await ClientConnection.connect('127.0.0.1', bridge.port);
      const { socket } = connection;
      connection.begin(new NetTcpClientSession(VIA));
      await connection.expect('preambleAck');
      socket.pause();
      for (let r = 0; r < requests; r++) connection.write(connection.session.envelope(getFile));
      const state = { closed: false, destroy: () => socket.destroy() };
      socket.once('close', () => (state.closed = true));
      sockets.push(state);
    }
    const beat = await heartbeatMs(bridge.port);
    // Until the RSS has not grown for 2 s (every reply made, or the sessions held back), at most 60 s.
    const started = performance.now();
    let last = -1;
    let now = procMemMB(bridge.pid, 'VmRSS');
    while (now !== last && performance.now() - started < 60_000) {
      last = now;
      await new Promise((r) => setTimeout(r, 2000));
      now = Math.round(procMemMB(bridge.pid, 'VmRSS'));
    }
    return {
      peer,
      sessions,
      requests,
      baselineMB: Math.round(baselineMB),
      peakMB: Math.round(procMemMB(bridge.pid, 'VmHWM')),
      heartbeatMs: Math.round(beat * 10) / 10,
      cutOff: bounded,
    };
  } finally {
    for (const s of sockets) s.destroy();
    await bridge.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runStalledReadersBench(): Promise<StalledReadersRow[]> {
  const rows = [
    await run('tcp-bridge (BRIDGE_MAX_UNSENT_KB 1024)', 4, 100, true),
    await run('same bundle, bound lifted (old behaviour)', 4, 100, false),
  ];
  const lines = [
    '',
    '## tcp-bridge: stalled readers (GetFile of an 8 MiB file pipelined, replies never read)',
    '',
    '| peer | sessions x requests | RSS before | peak RSS | peak / before | Heartbeat of another client meanwhile |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.peer} | ${r.sessions} x ${r.requests} | ${r.baselineMB} MB | ${r.peakMB} MB | ${(r.peakMB / r.baselineMB).toFixed(1)} | ${r.heartbeatMs} ms |`,
    ),
  ];
  console.log(lines.join('\n'));
  return rows;
}

if (isMainModule(import.meta)) {
  runStalledReadersBench()
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    })
    .finally(killAllChildren);
}
