/**
 * The file and document operations of IIDBService (NewFile, UpdateFile, GetFile, DeleteFile, NewFileIndex and the two
 * GetDocumentBy…): the idb_ tables on the default database and the contents in the file store. service.ts authorizes
 * a call, then hands it here.
 *
 * Decisions:
 * - File contents go to the store under a fresh content key before the database row that points at them is committed;
 *   the old key is deleted only after the commit. A rollback, a failed commit or a crash leaves at most an unreferenced
 *   content object, never a row whose content is gone or changed (file-store.ts).
 * - GetFile reads the row, then the content: if an UpdateFile or DeleteFile committed in between and removed the
 *   content, the row is read again, so a reader sees the old file, the new one or none, never an error.
 * - Store failures and contents that no longer match their sha256 are InternalError (the service's fault); nothing of
 *   the content is sent.
 */
import type { Logger } from '../ports.ts';
import {
  EMPTY_GUID,
  IdbFault,
  type ClrValue,
  type DocumentData,
  type FileData,
  type FileIndexData,
  type IndexField,
} from './contract.ts';
import type { Database, DatabaseTransaction, SqlValue, StatementLimits, StatementResult } from './database.ts';
import { formatCell } from './datatable.ts';
import type { FileStore } from './file-store.ts';
import { GUID_PATTERN } from './guid.ts';
import { selectFileForUpdate, upsertDocument, utcTimeValue } from './service-dialects.ts';
import type { SqlParameter } from './sql-parameters.ts';

/** What the file handlers use of the service's ports (IdbServiceDeps). */
export interface FileHandlerDeps {
  files: FileStore;
  /** Wall-clock time for CreatedUtc and ModifiedUtc. */
  utcNow: () => Date;
  /** A fresh random Guid, canonical lower case. */
  newId: () => string;
  logger: Logger;
}

/** Binds `@name` markers for `database` (the service's one path for all SQL), with the service's statement limits. */
export type Bind = (
  database: Database,
  sql: string,
  parameters: readonly SqlParameter<SqlValue>[],
) => [string, SqlValue[], StatementLimits, string[] | undefined];

export class FileHandlers {
  constructor(
    private readonly deps: FileHandlerDeps,
    /** The default database: it holds the idb_ tables. */
    private readonly main: Database,
    private readonly bind: Bind,
  ) {}

  /** Runs `work` in a transaction of its own: committed when it is a write and `work` succeeds, else rolled back. */
  private async inTransaction<T>(
    database: Database,
    access: 'read' | 'write',
    work: (t: DatabaseTransaction) => Promise<T>,
  ): Promise<T> {
    const transaction = await database.begin(access);
    try {
      const result = await work(transaction);
      if (access === 'write') await transaction.commit();
      return result;
    } finally {
      await transaction.rollback();
    }
  }

  /** One of the service's own statements on the default database. */
  private query(
    transaction: DatabaseTransaction,
    sql: string,
    parameters: Record<string, ClrValue | null>,
  ): Promise<StatementResult> {
    const list = Object.entries(parameters).map(([name, value]) => ({ name, value }));
    return transaction.run(...this.bind(this.main, sql, list));
  }

  async newFile(file: FileData | null): Promise<string> {
    const fileId = this.deps.newId();
    await this.withNewContent(file, (row) =>
      this.inTransaction(this.main, 'write', (t) =>
        this.query(
          t,
          'INSERT INTO idb_files (file_id, content_key, file_name, content_type, length, sha256, created_utc, modified_utc) VALUES (@id, @key, @name, @type, @length, @sha, @now, @now)',
          {
            id: guidValue(fileId),
            ...row,
          },
        ),
      ),
    );
    return fileId;
  }

  async updateFile(file: FileData | null): Promise<boolean> {
    if (file == null) throw new IdbFault('InvalidArgument', 'The file is nil.');
    const fileId = guid(file.FileId, 'FileId');
    const { result: oldKey, contentKey } = await this.withNewContent(file, (row) =>
      this.inTransaction(this.main, 'write', async (t) => {
        const old = await this.query(t, selectFileForUpdate(this.main.dialect, 'content_key'), {
          id: guidValue(fileId),
        });
        if (old.rows.length === 0) return undefined;
        await this.query(
          t,
          'UPDATE idb_files SET content_key = @key, file_name = @name, content_type = @type, length = @length, sha256 = @sha, modified_utc = @now WHERE file_id = @id',
          {
            id: guidValue(fileId),
            ...row,
          },
        );
        return guidText(old.rows[0]![0]);
      }),
    );
    // The content no row points at any more: the old one after an update, the new one when there was no such file.
    await this.discard(oldKey ?? contentKey);
    return oldKey !== undefined;
  }

  /**
   * Puts the file's content under a fresh key, then runs `write` with the columns of its idb_files row; if `write`
   * fails, the new content is deleted again.
   */
  private async withNewContent<T>(
    file: FileData | null,
    write: (row: Record<string, ClrValue | null>) => Promise<T>,
  ): Promise<{ result: T; contentKey: string }> {
    if (file == null) throw new IdbFault('InvalidArgument', 'The file is nil.');
    if (file.Content == null)
      throw new IdbFault('InvalidArgument', 'The file has no Content; a 0-byte file has an empty array.');
    const contentKey = this.deps.newId();
    const stored = await this.deps.files.put(contentKey, file.Content);
    try {
      const result = await write({
        key: guidValue(contentKey),
        name: text(file.FileName),
        type: text(file.ContentType),
        length: { type: 'long', value: BigInt(stored.length) },
        sha: { type: 'string', value: stored.sha256 },
        now: utcTimeValue(this.main.dialect, utc(this.deps.utcNow())),
      });
      return { result, contentKey };
    } catch (error) {
      await this.discard(contentKey);
      throw error;
    }
  }

  async getFile(fileId: string): Promise<FileData | null> {
    let previousKey: string | undefined;
    for (;;) {
      const id = [{ name: 'id', value: guidValue(fileId) }];
      const sql = `SELECT content_key, file_name, content_type, length, sha256, created_utc, modified_utc FROM idb_files WHERE file_id = @id`;
      const found = await this.main.runAlone('read', ...this.bind(this.main, sql, id));
      const row = found.rows[0];
      if (row === undefined) return null;
      const [key, name, type, length, sha256, created, modified] = row;
      const contentKey = guidText(key);
      const content = await this.deps.files.get(contentKey, String(sha256));
      if (content === undefined) {
        // Replaced or deleted since the row was read: read the row again. The same key missing twice is lost content.
        if (previousKey === contentKey)
          throw new IdbFault('InternalError', `The content of file ${fileId} is missing from the file store.`);
        previousKey = contentKey;
        continue;
      }
      return {
        Content: content,
        ContentType: nullableText(type),
        CreatedUtc: utcCell(created),
        FileId: fileId,
        FileName: nullableText(name),
        Length: BigInt(length as number | bigint),
        ModifiedUtc: utcCell(modified),
        Sha256: String(sha256),
      };
    }
  }

  async deleteFile(fileId: string): Promise<boolean> {
    const id = { id: guidValue(fileId) };
    const oldKey = await this.inTransaction(this.main, 'write', async (t) => {
      const old = await this.query(t, selectFileForUpdate(this.main.dialect, 'content_key'), id);
      if (old.rows.length === 0) return undefined;
      // The foreign keys cascade to the file's documents and their index fields.
      await this.query(t, 'DELETE FROM idb_files WHERE file_id = @id', id);
      return guidText(old.rows[0]![0]);
    });
    if (oldKey === undefined) return false;
    await this.discard(oldKey);
    return true;
  }

  async documents(by: 'document_id' | 'container_id', id: string): Promise<DocumentData[]> {
    const [documents, fields] = await this.inTransaction(this.main, 'read', async (t) => {
      const where = { id: guidValue(id) };
      return [
        await this.query(
          t,
          `SELECT d.document_id, d.container_id, d.file_id, d.title, d.created_utc, f.file_name, f.content_type, f.length
             FROM idb_documents d JOIN idb_files f ON f.file_id = d.file_id
            WHERE d.${by} = @id ORDER BY d.created_utc, d.document_id`,
          where,
        ),
        await this.query(
          t,
          `SELECT document_id, name, value FROM idb_index_fields WHERE document_id IN (SELECT document_id FROM idb_documents WHERE ${by} = @id) ORDER BY document_id, position`,
          where,
        ),
      ] as const;
    });
    const fieldsOf = new Map<string, IndexField[]>();
    for (const [documentId, name, value] of fields.rows) {
      const key = guidText(documentId);
      if (!fieldsOf.has(key)) fieldsOf.set(key, []);
      fieldsOf.get(key)!.push({ Name: nullableText(name), Value: nullableText(value) });
    }
    return documents.rows.map(([documentId, containerId, fileId, title, created, name, type, length]) => ({
      ContainerId: guidText(containerId),
      ContentType: nullableText(type),
      CreatedUtc: utcCell(created),
      DocumentId: guidText(documentId),
      Fields: fieldsOf.get(guidText(documentId)) ?? [],
      FileId: guidText(fileId),
      FileName: nullableText(name),
      Length: BigInt(length as number | bigint),
      Title: nullableText(title),
    }));
  }

  async newFileIndex(index: FileIndexData | null): Promise<string> {
    if (index == null) throw new IdbFault('InvalidArgument', 'The index is nil.');
    const fileId = guid(index.FileId, 'FileId');
    const containerId = guid(index.ContainerId, 'ContainerId');
    const requested = guid(index.DocumentId, 'DocumentId');
    const documentId = requested === EMPTY_GUID ? this.deps.newId() : requested;
    const fields = index.Fields ?? [];
    if (fields.some((f) => f == null)) throw new IdbFault('InvalidArgument', 'An index field is nil.');
    await this.inTransaction(this.main, 'write', async (t) => {
      const file = await this.query(t, selectFileForUpdate(this.main.dialect, '1'), {
        id: guidValue(fileId),
      });
      if (file.rows.length === 0) throw new IdbFault('FileNotFound', `There is no file ${fileId}.`);
      // An upsert, so a retried call with the same DocumentId (or two at once) replaces instead of failing.
      await this.query(t, upsertDocument(this.main.dialect), {
        doc: guidValue(documentId),
        container: guidValue(containerId),
        file: guidValue(fileId),
        title: text(index.Title),
        now: utcTimeValue(this.main.dialect, utc(this.deps.utcNow())),
      });
      await this.query(t, 'DELETE FROM idb_index_fields WHERE document_id = @doc', { doc: guidValue(documentId) });
      for (const [position, field] of fields.entries()) {
        await this.query(
          t,
          'INSERT INTO idb_index_fields (document_id, position, name, value) VALUES (@doc, @position, @name, @value)',
          {
            doc: guidValue(documentId),
            position: { type: 'int', value: position },
            name: text(field.Name),
            value: text(field.Value),
          },
        );
      }
    });
    return documentId;
  }

  /** Deletes content no row points at (any more); a failure leaves an orphan for a sweep, so it is only logged. */
  private async discard(key: string): Promise<void> {
    try {
      await this.deps.files.delete(key);
    } catch (error) {
      this.deps.logger.log('warn', 'file content not deleted', { key, error: describe(error) });
    }
  }
}

/** An argument that must be a Guid, canonical lower case; else InvalidArgument naming it. */
export function guid(value: string | null | undefined, name: string): string {
  const id = typeof value === 'string' ? value.toLowerCase() : '';
  if (!GUID_PATTERN.test(id)) throw new IdbFault('InvalidArgument', `${name} is not a Guid.`);
  return id;
}

function guidValue(id: string): ClrValue {
  return { type: 'guid', value: id };
}

function text(value: string | null): ClrValue | null {
  return value == null ? null : { type: 'string', value };
}

/** A Guid cell as the database returns it (PostgreSQL uuid text, SQLite text), canonical lower case. */
function guidText(cell: unknown): string {
  return formatCell({ name: 'id', type: 'Guid' }, cell as string);
}

function nullableText(cell: unknown): string | null {
  return cell == null ? null : String(cell);
}

/** xs:dateTime of a UTC time with `Z`, as .NET writes a Kind Utc DateTime. */
function utc(date: Date): string {
  return date.toISOString();
}

/** A timestamptz cell (PostgreSQL `… +00`, SQLite ISO text) as xs:dateTime in UTC. */
function utcCell(cell: unknown): string {
  return formatCell({ name: 'at', type: 'DateTime', dateTimeMode: 'Utc' }, cell as string);
}

export function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
