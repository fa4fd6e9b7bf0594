/**
 * IIDBService on Node as configured (docs/contract/operations.md): the databases of DATABASE_URL (and
 * DATABASE_URL_<NAME>), the file store of FILES_URL, the roles of BRIDGE_ROLES_FILE. The tcp-bridge serves what this
 * builds; it may hand over the roles it read itself (readRolesFile) with a directory attached (Active Directory names
 * resolved to SIDs).
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../../../config.ts';
import type { IdbConfig } from '../../../idb/config.ts';
import type { Database } from '../../../idb/database.ts';
import type { FileStore } from '../../../idb/file-store.ts';
import type { FilesConfig } from '../../../idb/files-url.ts';
import { NO_ROLES, parseRoles, type Roles } from '../../../idb/roles.ts';
import { S3FileStore } from '../../../idb/s3-file-store.ts';
import { openIdbService, type IdbService } from '../../../idb/service.ts';
import type { Logger } from '../../../ports.ts';
import { FolderFileStore } from './folder-file-store.ts';
import { openDatabase } from './open-database.ts';

export async function openFileStore(config: FilesConfig): Promise<FileStore> {
  return config.kind === 'folder' ? FolderFileStore.open({ root: config.path }) : new S3FileStore(config);
}

export async function readRolesFile(path: string | undefined): Promise<Roles> {
  if (path === undefined) return NO_ROLES;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`BRIDGE_ROLES_FILE ${path} cannot be read: ${(error as Error).message}`);
  }
  return parseRoles(text, `BRIDGE_ROLES_FILE ${path}`);
}

export interface NodeIdbServiceOptions {
  /** The roles to apply instead of reading BRIDGE_ROLES_FILE here. */
  roles?: Roles;
}

export async function openNodeIdbService(
  config: IdbConfig,
  logger: Logger,
  options: NodeIdbServiceOptions = {},
): Promise<IdbService> {
  const [roles, files] = await Promise.all([
    options.roles ?? readRolesFile(config.rolesFile),
    openFileStore(config.files),
  ]);
  const databases = new Map<string, Database>();
  try {
    for (const [name, url] of config.databases)
      databases.set(name, await openDatabase(url, config.databasePasswords?.get(name)));
    const unguarded = [...databases].filter(([, db]) => db.readOnlyEnforced === false).map(([name]) => name);
    if (unguarded.length > 0 && roles.hasReaders)
      throw new ConfigError(
        `The roles file names readers, but the SQL Server database ${unguarded.join(', ')} has no read-only login: SQL Server has no read-only transaction, so readers' SQL must run as a login with db_datareader only (readerUser= and readerPasswordFile= in its URL).`,
      );
  } catch (error) {
    await Promise.all([...databases.values()].map((db) => db.close()));
    throw error;
  }
  if (config.rolesFile === undefined)
    logger.log('warn', 'BRIDGE_ROLES_FILE is not set: every operation but Heartbeat is denied');
  return openIdbService({
    databases,
    files,
    roles,
    limits: config.limits,
    utcNow: () => new Date(),
    newId: randomUUID,
    logger,
  });
}
