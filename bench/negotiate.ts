/**
 * The Windows-security part of `npm run bench`: what NegotiateStream with NTLM costs, against the same calls with
 * SecurityMode.None in the same run. Two bridge processes as `npm run bridge` runs them (dist/node/bridge.mjs, built
 * by the caller), one with BRIDGE_SECURITY=none and one with BRIDGE_NTLM_USERS (BRIDGE_SECURITY=windows, the
 * default, at the default EncryptAndSign), both on the embedded SQLite database in a temp folder, driven by one
 * TypeScript client (bench/negotiate-client.ts) so that the two rows differ by the security layer alone:
 * - channel open: connect to PreambleAck, timed over 50 fresh connections to each bridge, one after another and
 *   alternating between the bridges (after 5 untimed each); with NTLM that holds the upgrade, the SPNEGO/NTLM
 *   handshake (two round trips, the AUTHENTICATE checked with its MIC and mechListMIC) and the sealed
 *   PreambleEnd/PreambleAck;
 * - Heartbeat calls per second and latency with 1 and 8 channels, one call in flight each, in rounds that alternate
 *   between the bridges (a 2-core machine drifts more within a run than the two rows differ); with NTLM every record
 *   is sealed (RC4 and HMAC-MD5 in TypeScript on both sides).
 * The client's own work is in the numbers on both sides of the ratio; python's gssapi initiators (the tests' client)
 * would spend more per call than the bridge does, so they are not used here.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchChannel, type NtlmCredentials } from './negotiate-client.ts';
import { killAllChildren, procMemMB, startBridgeProcess } from './server.ts';
import { percentile } from './stats.ts';
import { isMainModule } from './main-module.ts';

const HANDSHAKES = 50;
/** Timed seconds per bridge and channel count, in ROUNDS rounds alternating with the other bridge. */
const CALL_SECONDS = 5;
const ROUNDS = 2;
const CHANNELS = [1, 8] as const;
const CREDENTIALS: NtlmCredentials = { domain: 'BENCH', user: 'alice', password: 'Bench-Passw0rd!' };

type Security = 'none' | 'NTLM';

interface BridgeProcess {
  security: Security;
  endpoint: string;
  credentials: NtlmCredentials | undefined;
  peakRssMB(): number;
  stop(): Promise<void>;
}

/** dist/node/bridge.mjs with `security` settings (bench/server.ts startBridgeProcess). */
async function startBridge(security: Security, dir: string): Promise<BridgeProcess> {
  const settings: Record<string, string> =
    security === 'none'
      ? { BRIDGE_SECURITY: 'none' }
      : { BRIDGE_NTLM_USERS: join(dir, 'users'), BRIDGE_PROTECTION_LEVEL: 'EncryptAndSign' };
  const bridge = await startBridgeProcess({
    ...settings,
    BRIDGE_ROLES_FILE: join(dir, 'roles.json'),
    DATABASE_URL: `file:${join(dir, `${security}.sqlite`)}`,
    FILES_URL: `file:${join(dir, `files-${security}`)}`,
  });
  return {
    security,
    endpoint: bridge.endpoint,
    credentials: security === 'NTLM' ? CREDENTIALS : undefined,
    peakRssMB: () => procMemMB(bridge.pid, 'VmHWM'),
    stop: bridge.stop,
  };
}

export interface HandshakeRow {
  security: Security;
  n: number;
  p50Ms: number;
  p99Ms: number;
}

export interface CallRow {
  security: Security;
  channels: number;
  calls: number;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** Channel opens, alternating between the bridges so that both see the same machine; `warmup` untimed first. */
async function measureOpens(bridges: readonly BridgeProcess[], warmup = 5): Promise<HandshakeRow[]> {
  const ms = bridges.map(() => [] as number[]);
  for (let i = 0; i < HANDSHAKES + warmup; i++) {
    for (const [b, bridge] of bridges.entries()) {
      const started = performance.now();
      const channel = await BenchChannel.open(bridge.endpoint, bridge.credentials);
      if (i >= warmup) ms[b]!.push(performance.now() - started);
      await channel.heartbeat(); // the session works
      await channel.close();
    }
  }
  return bridges.map((bridge, b) => ({
    security: bridge.security,
    n: ms[b]!.length,
    p50Ms: percentile(ms[b]!, 0.5),
    p99Ms: percentile(ms[b]!, 0.99),
  }));
}

/**
 * Heartbeat calls on `channelCount` channels to each bridge: all channels opened and warmed up (200 calls each)
 * first, then ROUNDS timed rounds that alternate between the bridges; each row pools its bridge's rounds.
 */
async function measureCalls(bridges: readonly BridgeProcess[], channelCount: number): Promise<CallRow[]> {
  const channels: BenchChannel[][] = [];
  try {
    for (const bridge of bridges) {
      const mine: BenchChannel[] = [];
      channels.push(mine);
      for (let i = 0; i < channelCount; i++) mine.push(await BenchChannel.open(bridge.endpoint, bridge.credentials));
    }
    const loop = (c: BenchChannel, until: (n: number) => boolean, latencies?: number[]) => async () => {
      for (let n = 0; until(n); n++) {
        const t = performance.now();
        await c.heartbeat();
        latencies?.push(performance.now() - t);
      }
    };
    for (const mine of channels) await Promise.all(mine.map((c) => loop(c, (n) => n < 200)()));
    const latencies = bridges.map(() => [] as number[]);
    const seconds = bridges.map(() => 0);
    for (let round = 0; round < ROUNDS * bridges.length; round++) {
      const b = round % bridges.length;
      const started = performance.now();
      const deadline = started + (CALL_SECONDS * 1000) / ROUNDS;
      await Promise.all(channels[b]!.map((c) => loop(c, () => performance.now() < deadline, latencies[b])()));
      seconds[b]! += (performance.now() - started) / 1000;
    }
    return bridges.map((bridge, b) => ({
      security: bridge.security,
      channels: channelCount,
      calls: latencies[b]!.length,
      callsPerSecond: latencies[b]!.length / seconds[b]!,
      p50Ms: percentile(latencies[b]!, 0.5),
      p99Ms: percentile(latencies[b]!, 0.99),
    }));
  } finally {
    await Promise.all(channels.flat().map((c) => c.close()));
  }
}

/** Runs both bridges through the opens and the calls and prints the tables; returns the rows. */
export async function runNegotiateBench(): Promise<{ handshakes: HandshakeRow[]; calls: CallRow[] }> {
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const dir = mkdtempSync(join(tmpdir(), 'bench-negotiate-'));
  writeFileSync(join(dir, 'users'), `${CREDENTIALS.domain}:${CREDENTIALS.user}:${CREDENTIALS.password}\n`, {
    mode: 0o600,
  });
  writeFileSync(
    join(dir, 'roles.json'),
    JSON.stringify({ writer: ['anonymous', `${CREDENTIALS.domain}\\${CREDENTIALS.user}`] }),
  );
  const bridges: BridgeProcess[] = [];
  const handshakes: HandshakeRow[] = [];
  const calls: CallRow[] = [];
  const errors: string[] = [];
  const peaks = new Map<Security, number>();
  const started = performance.now();
  try {
    for (const security of ['none', 'NTLM'] as const) {
      try {
        bridges.push(await startBridge(security, dir));
      } catch (error) {
        errors.push((error as Error).message.split('\n')[0]!);
      }
    }
    log(`negotiate: channel opens × ${HANDSHAKES} per bridge`);
    try {
      handshakes.push(...(await measureOpens(bridges)));
    } catch (error) {
      errors.push(`opens: ${(error as Error).message}`);
    }
    for (const channels of CHANNELS) {
      log(`negotiate: Heartbeat × ${channels} channels`);
      try {
        calls.push(...(await measureCalls(bridges, channels)));
      } catch (error) {
        errors.push(`Heartbeat × ${channels}: ${(error as Error).message}`);
      }
    }
    for (const bridge of bridges) peaks.set(bridge.security, bridge.peakRssMB());
  } finally {
    for (const bridge of bridges) await bridge.stop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }

  const ms = (x: number) => `${x.toFixed(2)} ms`;
  const ratio = (x: number | undefined, none: number | undefined) =>
    x !== undefined && none ? `${(x / none).toFixed(2)}×` : '–';
  console.log('');
  console.log(
    '# NegotiateStream benchmark (net.tcp, NTLM at EncryptAndSign against SecurityMode.None, same client, same run)',
  );
  console.log('');
  console.log(`| security | channel opens | open p50 | open p99 | p50 vs none |`);
  console.log('|---|---:|---:|---:|---:|');
  const openNone = handshakes.find((h) => h.security === 'none');
  for (const h of handshakes)
    console.log(`| ${h.security} | ${h.n} | ${ms(h.p50Ms)} | ${ms(h.p99Ms)} | ${ratio(h.p50Ms, openNone?.p50Ms)} |`);
  console.log('');
  console.log('| security | channels | Heartbeat calls/s | p50 | p99 | calls/s vs none |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const c of calls) {
    const none = calls.find((x) => x.security === 'none' && x.channels === c.channels);
    console.log(
      `| ${c.security} | ${c.channels} | ${Math.round(c.callsPerSecond)} | ${ms(c.p50Ms)} | ${ms(c.p99Ms)} | ${ratio(c.callsPerSecond, none?.callsPerSecond)} |`,
    );
  }
  console.log('');
  console.log(
    '- open: connect to PreambleAck, alternating between the bridges; for NTLM the upgrade, SPNEGO/NTLMv2 (two round trips) and the sealed preamble end',
  );
  console.log(
    `- calls: ${CALL_SECONDS} s per row in ${ROUNDS} rounds alternating with the other security, after 200 untimed calls per channel; one call in flight per channel; NTLM seals every record both ways`,
  );
  console.log(
    '- client: bench/negotiate-client.ts (TypeScript, the same code for both rows); bridge: dist/node/bridge.mjs on SQLite',
  );
  for (const [security, mb] of peaks) console.log(`- bridge (${security}): peak RSS ${mb.toFixed(0)} MB`);
  for (const error of errors) console.log(`- error: ${error}`);
  console.log(`- negotiate bench time ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return { handshakes, calls };
}

// `npx tsx bench/negotiate.ts`: this part alone (after `npm run build:node`).
if (isMainModule(import.meta)) {
  await runNegotiateBench();
  killAllChildren();
  process.exit(0);
}
