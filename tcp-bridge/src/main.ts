/**
 * `npm run bridge`: IIDBService over net.tcp on Node, configured from the environment (docs/contract/operations.md).
 */
import { jsonLogger, readLogLevel } from '#idb';
import { openBridge } from './bridge.ts';
import { readBridgeConfig } from './config.ts';
import { HELP } from './help.ts';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(HELP);
  process.exit(0);
}

const logger = jsonLogger(readLogLevel(process.env), (line) => process.stdout.write(`${line}\n`));

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
