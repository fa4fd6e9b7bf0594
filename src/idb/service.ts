/**
 * The 13 IIDBService operations (docs/contract/iidbservice.md) over the ports: databases, file store, roles, clock.
 * Here authorization, faults, database requests and client SQL; the file and document handlers in service-files.ts.
 * Transport free: a front end (the tcp-bridge's SOAP layer) decodes a call into `call(operation, caller, args)` and
 * encodes the result or the IdbFault it throws.
 *
 * Decisions:
 * - Authorization first, before any argument is looked at: a caller without the role learns nothing else.
 * - SQL with `requestId == Guid.Empty` runs in its own transaction on the default database: read-only for a reader
 *   (the database refuses the write: AccessDenied), a write transaction committed after the statement for a writer
 *   (ReturnScalar may carry `INSERT … RETURNING`).
 * - The service's own statements use `@name` markers and bindParameters too: one path for all SQL.
 * - The file and document operations are in service-files.ts (FileHandlers), with their own decisions.
 */
import type { Logger } from '../ports.ts';
import type { DatabaseLimits } from './config.ts';
import { DEFAULT_DATABASE } from './config.ts';
import { EMPTY_GUID, IdbFault, type Caller, type OperationName, type Operations, type SqlArgs } from './contract.ts';
import {
  DatabaseFault,
  type Database,
  type DatabaseTransaction,
  type SqlValue,
  type StatementLimits,
  type StatementResult,
} from './database.ts';
import { StoreError, type FileStore } from './file-store.ts';
import { DatabaseRequests } from './requests.ts';
import { dataTableOf, scalarOf } from './results.ts';
import type { Roles } from './roles.ts';
import { migrate } from './schema.ts';
import { describe, FileHandlers, guid } from './service-files.ts';
import { bindParameters, type SqlParameter } from './sql-parameters.ts';

export interface IdbServiceDeps {
  /** Logical databases by lower-case name; DEFAULT_DATABASE must be there (it holds the idb_ tables). */
  databases: ReadonlyMap<string, Database>;
  files: FileStore;
  roles: Roles;
  limits: DatabaseLimits;
  /** Wall-clock time for CreatedUtc and ModifiedUtc. */
  utcNow: () => Date;
  /** A fresh random Guid, canonical lower case. */
  newId: () => string;
  logger: Logger;
}

export interface IdbService {
  call<K extends OperationName>(
    operation: K,
    caller: Caller,
    args: Operations[K]['args'],
  ): Promise<Operations[K]['result']>;
  /** The connection `connectionId` ended; without a clean close its database requests are rolled back. */
  connectionClosed(connectionId: string, clean: boolean): Promise<void>;
  /** Database requests open now (for metrics). */
  openRequests(): number;
  /** Rolls back open database requests and closes the databases. */
  close(): Promise<void>;
}

type Handlers = {
  [K in OperationName]: (caller: Caller, args: Operations[K]['args']) => Promise<Operations[K]['result']>;
};

/** Migrates the default database's idb_ tables, then serves; the service owns the databases from here on. */
export async function openIdbService(deps: IdbServiceDeps): Promise<IdbService> {
  const main = deps.databases.get(DEFAULT_DATABASE);
  if (main === undefined) throw new Error(`no "${DEFAULT_DATABASE}" database`);
  try {
    const transaction = await main.begin('write');
    try {
      await migrate(transaction, main.dialect);
      await transaction.commit();
    } finally {
      await transaction.rollback();
    }
  } catch (error) {
    // The service owns its databases: one that cannot start closes them.
    await Promise.all([...new Set(deps.databases.values())].map((db) => db.close()));
    throw error;
  }
  return new Service(deps, main);
}

class Service implements IdbService {
  private readonly requests: DatabaseRequests;
  private readonly limits: StatementLimits;
  /** ReturnScalar's: its first row only (see StatementLimits). */
  private readonly scalarLimits: StatementLimits;
  private readonly handlers: Handlers;

  constructor(
    private readonly deps: IdbServiceDeps,
    private readonly main: Database,
  ) {
    this.limits = { timeoutMs: deps.limits.statementTimeoutMs, maxRows: deps.limits.maxRows };
    this.scalarLimits = { ...this.limits, firstRowOnly: true };
    this.requests = new DatabaseRequests({
      idleMs: deps.limits.requestIdleMs,
      maxPerIdentity: deps.limits.maxRequestsPerIdentity,
      newId: deps.newId,
      onAbandoned: (reason, owner) => deps.logger.log('warn', 'database request rolled back', { reason, owner }),
    });
    const files = new FileHandlers(deps, main, (database, sql, parameters) => this.bind(database, sql, parameters));
    this.handlers = {
      Heartbeat: async () => true,
      CreateDatabaseRequest: (caller, { database }) => this.requests.create(caller, this.database(database)),
      CloseDatabaseRequest: (caller, { requestId, commit }) =>
        this.requests.close(guid(requestId, 'requestId'), caller, commit),
      ReturnDatatable: (caller, args) => this.sql(caller, args, dataTableOf),
      ReturnScalar: (caller, args) => this.sql(caller, args, scalarOf, this.scalarLimits),
      ExecuteNonQuery: (caller, args) => this.sql(caller, args, (r) => r.rowsAffected),
      NewFile: (_, { file }) => files.newFile(file),
      UpdateFile: (_, { file }) => files.updateFile(file),
      GetFile: (_, { fileId }) => files.getFile(guid(fileId, 'fileId')),
      DeleteFile: (_, { fileId }) => files.deleteFile(guid(fileId, 'fileId')),
      GetDocumentByDocumentId: async (_, { documentId }) =>
        (await files.documents('document_id', guid(documentId, 'documentId')))[0] ?? null,
      GetDocumentByContainerId: (_, { containerId }) =>
        files.documents('container_id', guid(containerId, 'containerId')),
      NewFileIndex: (_, { index }) => files.newFileIndex(index),
    };
  }

  async call<K extends OperationName>(
    operation: K,
    caller: Caller,
    args: Operations[K]['args'],
  ): Promise<Operations[K]['result']> {
    if (!this.deps.roles.allows(caller, operation)) {
      this.deps.logger.log('warn', 'access denied', { operation, caller: caller.name });
      throw new IdbFault('AccessDenied', `${caller.name} is not allowed to call ${operation}.`);
    }
    try {
      return await (this.handlers[operation] as Handlers[K])(caller, args);
    } catch (error) {
      const fault = toFault(error);
      if (fault.code === 'Receiver')
        this.deps.logger.log('error', 'operation failed', { operation, fault: fault.fault, error: describe(error) });
      throw fault;
    }
  }

  connectionClosed(connectionId: string, clean: boolean): Promise<void> {
    return this.requests.connectionClosed(connectionId, clean);
  }

  openRequests(): number {
    return this.requests.size;
  }

  async close(): Promise<void> {
    await this.requests.closeAll();
    await Promise.all([...new Set(this.deps.databases.values())].map((db) => db.close()));
  }

  private database(name: string | null): Database {
    const key = (name ?? '').trim().toLowerCase() || DEFAULT_DATABASE;
    const database = this.deps.databases.get(key);
    if (database === undefined) throw new IdbFault('UnknownDatabase', `There is no database named '${name}'.`);
    return database;
  }

  /** Client SQL: in the caller's database request, or in a transaction of its own on the default database. */
  private async sql<T>(
    caller: Caller,
    args: SqlArgs,
    answer: (result: StatementResult) => T,
    limits = this.limits,
  ): Promise<T> {
    if (typeof args.sql !== 'string' || args.sql.trim() === '')
      throw new IdbFault('InvalidArgument', 'The SQL text is empty.');
    const parameters: SqlParameter<SqlValue>[] = (args.parameters ?? []).map((p) => {
      if (p == null) throw new IdbFault('InvalidArgument', 'A parameter is nil.');
      return { name: p.Name, value: p.Value };
    });
    const run = async (transaction: DatabaseTransaction, database: Database) =>
      answer(await transaction.run(...this.bind(database, args.sql!, parameters, limits)));
    const requestId = guid(args.requestId, 'requestId');
    if (requestId !== EMPTY_GUID) return this.requests.use(requestId, caller, run);
    const writer = this.deps.roles.rolesOf(caller).has('writer');
    return answer(
      await this.main.runAlone(writer ? 'write' : 'read', ...this.bind(this.main, args.sql, parameters, limits)),
    );
  }

  private bind(
    database: Database,
    sql: string,
    parameters: readonly SqlParameter<SqlValue>[],
    limits = this.limits,
  ): [string, SqlValue[], StatementLimits, string[] | undefined] {
    const bound = bindParameters(sql, parameters, database.dialect);
    if (!bound.ok) throw new IdbFault(bound.fault, bound.message);
    return [bound.sql, bound.values, limits, bound.names];
  }
}

function toFault(error: unknown): IdbFault {
  if (error instanceof IdbFault) return error;
  if (error instanceof DatabaseFault) return new IdbFault(error.fault, error.message);
  if (error instanceof StoreError) {
    return error.kind === 'invalid-argument'
      ? new IdbFault('InvalidArgument', error.message)
      : new IdbFault('InternalError', 'The file store failed; try again later.');
  }
  return new IdbFault('InternalError', 'The service failed to complete the operation.');
}
