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
import { pathToFileURL } from 'node:url';
import { stringText } from '../tcp-bridge/src/binary-xml/index.ts';
import { readBridgeConfig } from '../tcp-bridge/src/config.ts';
import { encodeEnvelope, WriterSession } from '../tcp-bridge/src/binary-xml/index.ts';
import { clientPreamble, sizedEnvelope } from '../tcp-bridge/src/framing/index.ts';
import { openNodeIdbService } from '../src/runtime/node/idb/idb-service.ts';
import { connectSocket, NetTcpSession } from '../test/support/ntlm-nettcp.ts';
import { param, request } from '../test/support/soap.ts';
import { killAllChildren, procMemMB, startBridgeProcess } from './server.ts';

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

async function seedFile(env: Record<string, string>): Promise<string> {
  const service = await openNodeIdbService(readBridgeConfig(env), { log: () => {} });
  try {
    return await service.call(
      'NewFile',
      { name: 'anonymous', anonymous: true, connectionId: 'seed' },
      {
        file: {
          Content: new Uint8Array(FILE_BYTES).map((_, i) => (i * 31) & 0xff),
          ContentType: 'application/octet-stream',
          CreatedUtc: '2026-01-01T00:00:00Z',
          FileId: '00000000-0000-0000-0000-000000000000',
          FileName: 'big.bin',
          Length: BigInt(FILE_BYTES),
          ModifiedUtc: '2026-01-01T00:00:00Z',
          Sha256: null,
        },
      },
    );
  } finally {
    await service.close();
  }
}

/** A client that reads: the time of one Heartbeat round trip on a new connection. */
async function heartbeatMs(port: number): Promise<number> {
  const started = performance.now();
  const { socket, input } = await connectSocket('127.0.0.1', port);
  try {
    socket.write(clientPreamble(VIA));
    await input.read(1);
    const session = new (class extends NetTcpSession {
      beat = () => this.exchange('Heartbeat', []);
    })(socket, input, undefined);
    await session.beat();
    return performance.now() - started;
  } finally {
    socket.destroy();
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
  const fileId = await seedFile(env);
  const bridge = await startBridgeProcess(env);
  const sockets: { destroy(): void; closed: boolean }[] = [];
  try {
    await heartbeatMs(bridge.port);
    const baselineMB = procMemMB(bridge.pid, 'VmRSS');
    const getFile = request('GetFile', [param('fileId', [stringText(fileId)])]);
    for (let i = 0; i < sessions; i++) {
      const { socket, input } = await connectSocket('127.0.0.1', bridge.port);
      socket.on('error', () => {});
      socket.write(clientPreamble(VIA));
      await input.read(1);
      socket.pause();
      const writer = new WriterSession();
      for (let r = 0; r < requests; r++) socket.write(sizedEnvelope(encodeEnvelope(getFile, writer)));
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

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runStalledReadersBench()
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    })
    .finally(killAllChildren);
}
