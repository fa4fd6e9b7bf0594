/**
 * `npm run bridge`: IIDBService over net.tcp on Node, configured from the environment (docs/contract/operations.md).
 */
import { setFlagsFromString } from 'node:v8';
import { jsonLogger, readLogLevel } from '#idb';
import { openBridge } from './bridge.ts';
import { readBridgeConfig } from './config.ts';
import { HELP } from './help.ts';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(HELP);
  process.exit(0);
}

/**
 * The young generation is collected on this thread alone (V8's --no-parallel-scavenge), unless the command line
 * asks for parallel scavenges. A call leaves 15–30 KB of garbage (a Heartbeat's decoded tree and reply, an INSERT's
 * arguments), so the bridge scavenges a few dozen times a second under load, each a fraction of a millisecond. In
 * parallel, each scavenge wakes V8's helper threads and this thread waits for them (strace, ExecuteNonQuery on one
 * channel: about one futex wake-up or wait every four calls); on a machine whose cores are busy with the clients
 * and the database, a helper is a thread that has to be scheduled first. Alone, no thread is woken, and a hot loop
 * runs as fast (bench/bridge-percall.ts, 120 000 INSERTs, 300 2 000-row DataTables: the same time either way). Under
 * the .NET client (docs/decisions/idb-sqlite-backend.md, "2026-11-28 (fifth session)") the one-channel rows gained
 * a few per cent to a sixth in median; the others did not move.
 */
if (!process.execArgv.some((flag) => flag.startsWith('--parallel-scavenge')))
  setFlagsFromString('--no-parallel-scavenge');

/**
 * Log lines leave in batches: when 16 KiB are waiting, else 50 ms after the first. stdout to a file or a pipe is a
 * synchronous write per line in Node, and the bridge writes an audit line per call: in the profile of Heartbeat on 8
 * channels that write was 6% of the bridge's busy time. Lines still go out in order, and the waiting ones at exit;
 * at most 16 KiB wait.
 */
function batchedStdout(): (line: string) => void {
  let pending = '';
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const out = pending;
    pending = '';
    if (out) process.stdout.write(out);
  };
  process.on('exit', flush);
  return (line) => {
    pending += `${line}\n`;
    if (pending.length >= 16_384) flush();
    else timer ??= setTimeout(flush, 50).unref();
  };
}

const logger = jsonLogger(readLogLevel(process.env), batchedStdout());

try {
  const bridge = await openBridge(readBridgeConfig(process.env), logger);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      logger.log('info', 'shutting down', { signal, connections: bridge.connections() });
      void bridge.close().then(() => process.exit(0));
    });
  }
} catch (error) {
  logger.log('error', 'bridge not started', { error: error instanceof Error ? error.message : String(error) });
  process.exitCode = 1;
}
