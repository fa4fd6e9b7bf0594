/** `npm run bridge`: IIDBService over net.tcp on Node, configured from the environment (spec/RUN.md). */
import { readHttpConfig } from '../../src/config.ts';
import { jsonLogger } from '../../src/logger.ts';
import { openNodeIdbService } from '../../src/runtime/node/idb-service.ts';
import { readBridgeConfig } from './config.ts';
import { securityBackends, startBridge } from './server.ts';

const logger = jsonLogger(readHttpConfig(process.env).logLevel, (line) => process.stdout.write(line + '\n'));

try {
  const config = readBridgeConfig(process.env);
  const backends = securityBackends(config);
  const service = await openNodeIdbService(config, logger);
  const bridge = await startBridge(config, service, logger, backends).catch(async (error: unknown) => {
    await service.close();
    throw error;
  });
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
