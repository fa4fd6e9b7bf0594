/**
 * IIDBService for its transports: the one entry through which the tcp-bridge (and its bench client) reach the
 * platform-free handlers, imported as `#idb` (package.json `imports`). The Node adapters that open databases and file
 * stores are `#idb/node` (src/runtime/node/idb).
 */
export { encodeBase64 } from '../base64.ts';
export { concatBytes } from '../bytes.ts';
export { ByteBudget } from '../byte-budget.ts';
export { ConfigError, integer, readLogLevel, type Environment } from '../config.ts';
export { jsonLogger } from '../logger.ts';
export type { Logger, LogLevel } from '../ports.ts';
export { readIdbConfig, type EndpointConfig, type IdbConfig } from './config.ts';
export * from './contract.ts';
export * from './contract-shapes.ts';
export { GUID_PATTERN, parseGuid } from './guid.ts';
export type { IdbService } from './service.ts';
export type { XmlEventSource, XmlSink, XmlTape } from './xml-events.ts';
export type { AccountDirectory, Role, Roles } from './roles.ts';
export { wsdlDefinitions, type WsdlElement, type WsdlNode, type WsdlOptions } from './wsdl.ts';
