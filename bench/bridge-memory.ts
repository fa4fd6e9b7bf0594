/**
 * The bridge's memory under stalled senders (issue: 48 connections that each sent 62 MiB of a 63 MiB message and
 * stalled held 3.0 GB): N connections open a session, declare a 63 MiB envelope and send 62 MiB of it as fast as the
 * bridge reads, then stall. Measured: the bridge's peak RSS once no sender makes progress, beside the same run with
 * the bound lifted (BRIDGE_MAX_INFLIGHT_MB far above what the senders hold), the old behaviour. Target: peak RSS
 * within BRIDGE_MAX_INFLIGHT_MB + 300 MB whatever N.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientPreamble, RecordType } from '../tcp-bridge/src/framing/index.ts';
import { encodeInt31 } from '../tcp-bridge/src/bytes.ts';
import { killAllChildren, procMemMB, startBridgeProcess } from './server.ts';
import { isMainModule } from './main-module.ts';

const MiB = 1024 * 1024;
const DECLARED = 63 * MiB;
const SENT = 62 * MiB;
const CHUNK = new Uint8Array(64 * 1024);

export interface StalledRow {
  senders: number;
  inflightMB: number;
  peakRssMB: number;
  acceptedMB: number;
  seconds: number;
}

/** One sender: preamble, then the envelope's header and as much of its 62 MiB as the bridge reads. */
async function stalledSender(port: number, progress: { bytes: number }): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1' });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => {});
  socket.write(clientPreamble('net.tcp://localhost/IDBService'));
  await new Promise<void>((resolve) => socket.once('data', () => resolve())); // PreambleAck
  socket.write(Uint8Array.of(RecordType.SizedEnvelope, ...encodeInt31(DECLARED)));
  let left = SENT;
  const pump = () => {
    while (left > 0) {
      const n = Math.min(CHUNK.length, left);
      left -= n;
      const more = socket.write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n), () => (progress.bytes += n));
      if (!more) return void socket.once('drain', pump);
    }
  };
  pump();
  return socket;
}

async function run(senders: number, inflightMB: number): Promise<StalledRow> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-stalled-'));
  writeFileSync(join(dir, 'roles.json'), '{}');
  const bridge = await startBridgeProcess({
    BRIDGE_SECURITY: 'none',
    BRIDGE_ROLES_FILE: join(dir, 'roles.json'),
    DATABASE_URL: `file:${join(dir, 'idb.sqlite')}`,
    FILES_URL: `file:${join(dir, 'files')}`,
    BRIDGE_MAX_INFLIGHT_MB: String(inflightMB),
    BRIDGE_MAX_CONNECTIONS: String(senders + 8),
  });
  const progress = { bytes: 0 };
  const started = performance.now();
  const sockets: Socket[] = [];
  try {
    for (let i = 0; i < senders; i++) sockets.push(await stalledSender(bridge.port, progress));
    // Until no sender has made progress for 2 s (all stalled or waiting), at most 60 s.
    let last = -1;
    while (progress.bytes !== last && performance.now() - started < 60_000) {
      last = progress.bytes;
      await new Promise((r) => setTimeout(r, 2000));
    }
    return {
      senders,
      inflightMB,
      peakRssMB: Math.round(procMemMB(bridge.pid, 'VmHWM')),
      acceptedMB: Math.round(progress.bytes / MiB),
      seconds: Math.round((performance.now() - started) / 100) / 10,
    };
  } finally {
    for (const s of sockets) s.destroy();
    await bridge.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runStalledSendersBench(): Promise<StalledRow[]> {
  const rows = [await run(48, 512), await run(200, 512), await run(48, 65_536)];
  const lines = [
    '',
    '## tcp-bridge: stalled senders (63 MiB envelopes, 62 MiB sent, then silence)',
    '',
    '| senders | BRIDGE_MAX_INFLIGHT_MB | peak RSS | bytes sent (socket buffers included) | target (inflight + 300 MB) |',
    '|---:|---:|---:|---:|---|',
    ...rows.map((r) => {
      const bounded = r.inflightMB < 65_536;
      return `| ${r.senders} | ${bounded ? r.inflightMB : 'unbounded (old behaviour)'} | ${r.peakRssMB} MB | ${r.acceptedMB} MiB | ${bounded ? (r.peakRssMB <= r.inflightMB + 300 ? 'PASS' : 'FAIL') : '–'} |`;
    }),
  ];
  console.log(lines.join('\n'));
  return rows;
}

if (isMainModule(import.meta)) {
  runStalledSendersBench()
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    })
    .finally(killAllChildren);
}
