/**
 * The bridge of the server tests (test/bridge/server*.test.ts): started on the embedded SQLite backend in a test's
 * folder, with its service's calls and closed connections as events, and readers of the replies a test client gets.
 */
import { EventEmitter } from 'node:events';
import { expect } from 'vitest';
import type { IdbService, Logger } from '#idb';
import { stringText } from '../../tcp-bridge/src/binary-xml/index.ts';
import { readBridgeConfig, type BridgeConfig } from '../../tcp-bridge/src/config.ts';
import { startBridge, type RunningBridge } from '../../tcp-bridge/src/server.ts';
import { openNodeIdbService } from '../../src/runtime/node/idb/idb-service.ts';
import { bridgeFolderEnv } from '../support/nettcp/bridge-folder.ts';
import type { ServerRecord } from '../support/nettcp/nettcp.ts';
import { param, path, request, textOf } from '../support/nettcp/soap.ts';

export const silent = {
  log: (...a: unknown[]) => {
    if (process.env.BRIDGE_TEST_LOG) console.log(JSON.stringify(a));
  },
};

/**
 * What the service saw, as events a test waits on instead of sleeping: `call` when a call reaches it, `closed` once
 * the end of a connection has been handled (its database requests kept or rolled back).
 */
export const serviceEvents = new EventEmitter();

/** Resolves after `count` more connections have been handled as closed. */
export function closings(count: number): Promise<void> {
  return new Promise((resolve) => {
    let left = count;
    const one = () => {
      if (--left > 0) return;
      serviceEvents.off('closed', one);
      resolve();
    };
    serviceEvents.on('closed', one);
  });
}

export async function bridge(
  folder: string,
  env: Record<string, string> = {},
  logger: Logger = silent,
): Promise<{ bridge: RunningBridge; config: BridgeConfig }> {
  const config = readBridgeConfig({ ...bridgeFolderEnv(folder), ...env });
  const opened = await openNodeIdbService(config, logger);
  const service: IdbService = {
    ...opened,
    call: (operation, caller, args) => {
      serviceEvents.emit('call', operation);
      return opened.call(operation, caller, args);
    },
    connectionClosed: async (connectionId, clean) => {
      await opened.connectionClosed(connectionId, clean);
      serviceEvents.emit('closed', connectionId, clean);
    },
    openRequests: () => opened.openRequests(),
    close: () => opened.close(),
  };
  try {
    return { bridge: await startBridge(config, service, logger), config };
  } catch (error) {
    await service.close();
    throw error;
  }
}

export function envelope(record: ServerRecord) {
  expect(record.type).toBe('envelope');
  return (record as Extract<ServerRecord, { type: 'envelope' }>).document;
}

export const result = (record: ServerRecord, operation: string) =>
  path(envelope(record), 'Envelope', 'Body', `${operation}Response`, `${operation}Result`);
export const faultName = (record: ServerRecord) =>
  textOf(path(envelope(record), 'Envelope', 'Body', 'Fault', 'Code', 'Subcode', 'Value')).replace(/^\w+:/, '');
export const sql = (operation: string, text: string, requestId = '00000000-0000-0000-0000-000000000000', id = 1) =>
  request(
    operation,
    [param('requestId', [stringText(requestId)]), param('sql', [stringText(text)]), param('parameters', [])],
    { messageId: `urn:uuid:00000000-0000-0000-0000-${String(id).padStart(12, '0')}` },
  );
