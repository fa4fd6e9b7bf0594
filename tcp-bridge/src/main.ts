/** `npm run bridge`: IIDBService over net.tcp on Node, configured from the environment (spec/RUN.md). */
import { jsonLogger, readLogLevel } from '#idb';
import { openBridge } from './bridge.ts';
import { readBridgeConfig } from './config.ts';

/**
 * Log lines leave in one write per turn of the event loop. stdout to a file or a pipe is a synchronous write per line
 * in Node, and the bridge logs every call: under load (Heartbeat, 8 channels) that write cost about as much as the
 * reply's own. Lines still go out in order, and the ones of the last turn at exit.
 */
function batchedStdout(): (line: string) => void {
  let pending = '';
  const flush = () => {
    const out = pending;
    pending = '';
    if (out) process.stdout.write(out);
  };
  process.on('exit', flush);
  return (line) => {
    if (pending === '') setImmediate(flush);
    pending += `${line}\n`;
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
