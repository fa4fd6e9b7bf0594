/**
 * The service's own statements where the dialects differ (its other SQL is the same on every backend):
 * - reading an idb_files row to write it: PostgreSQL locks it with FOR UPDATE, T-SQL with the UPDLOCK table hint
 *   (it has no FOR UPDATE); SQLite's write transaction already holds the whole database;
 * - the idempotent document upsert: ON CONFLICT on PostgreSQL and SQLite; T-SQL has none (and Babelfish no MERGE), so
 *   an UPDATE under a key-range lock (two calls at once cannot both find nothing), then an INSERT if it found nothing;
 * - the time a row is written: a DateTime parameter, except on SQL Server, where a DateTime parameter is SqlClient's
 *   datetime (1/300 s, see sqlserver-values.ts) and would change the milliseconds: there the UTC text, which the
 *   datetime2 column converts exactly.
 */
import type { ClrValue } from './contract.ts';
import type { SqlDialect } from './database.ts';

/** `SELECT <columns>` of the idb_files row `@id`, locked for the transaction's write. */
export function selectFileForUpdate(dialect: SqlDialect, columns: string): string {
  if (dialect === 'sqlserver') return `SELECT ${columns} FROM idb_files WITH (UPDLOCK, ROWLOCK) WHERE file_id = @id`;
  return `SELECT ${columns} FROM idb_files WHERE file_id = @id${dialect === 'postgres' ? ' FOR UPDATE' : ''}`;
}

/** Inserts or replaces the idb_documents row `@doc` (@container, @file, @title; @now only when inserted). */
export function upsertDocument(dialect: SqlDialect): string {
  const insert =
    'INSERT INTO idb_documents (document_id, container_id, file_id, title, created_utc) VALUES (@doc, @container, @file, @title, @now)';
  if (dialect === 'sqlserver')
    return `UPDATE idb_documents WITH (UPDLOCK, SERIALIZABLE) SET container_id = @container, file_id = @file, title = @title WHERE document_id = @doc;
      IF @@ROWCOUNT = 0 ${insert}`;
  return `${insert}
    ON CONFLICT (document_id) DO UPDATE SET container_id = excluded.container_id, file_id = excluded.file_id, title = excluded.title`;
}

/** A UTC time (xs:dateTime with `Z`) as the parameter the dialect stores exactly. */
export function utcTimeValue(dialect: SqlDialect, value: string): ClrValue {
  return dialect === 'sqlserver' ? { type: 'string', value } : { type: 'dateTime', value };
}
