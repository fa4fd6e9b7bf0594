/**
 * The service's own tables (docs/contract/iidbservice.md, "Rules users rely on": files, documents and index
 * fields under a table prefix of their own, `idb_`), created and migrated when the service starts.
 *
 * Decisions:
 * - Numbered migrations, each a list of single statements per dialect (the Database port runs one statement at a
 *   time), applied in one write transaction with the version row, so a crash mid-migration leaves the old version.
 *   PostgreSQL takes a transaction-level advisory lock first, so two bridges starting together migrate once; SQLite's
 *   write transaction (BEGIN IMMEDIATE) already excludes the other.
 * - A database whose version is newer than this code knows is refused at start: an older bridge must not write rows
 *   a newer schema would misread.
 * - Column types are declared with names the DataTable mapping knows (uuid, timestamptz, bigint, text), so a client
 *   reading `idb_files` gets Guid, DateTime (UTC) and Int64 columns on both backends. SQLite keeps them as text and
 *   integers; times are written as ISO 8601 UTC text with `Z`.
 * - Foreign keys cascade (both backends enforce them; the SQLite adapter turns them on for every connection), so a
 *   writer's own `DELETE FROM idb_files` leaves no document or index field dangling.
 */
import type { DatabaseTransaction, SqlDialect, StatementLimits } from './database.ts';

interface Migration {
  version: number;
  statements: Record<SqlDialect, string[]>;
}

const both = (statements: string[], sqlserver: string[]): Record<SqlDialect, string[]> => ({
  sqlite: statements,
  postgres: statements,
  sqlserver,
});

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    statements: both(
      [
        `CREATE TABLE idb_files (
        file_id uuid PRIMARY KEY,
        content_key uuid NOT NULL,
        file_name text,
        content_type text,
        length bigint NOT NULL,
        sha256 text NOT NULL,
        created_utc timestamptz NOT NULL,
        modified_utc timestamptz NOT NULL)`,
        `CREATE TABLE idb_documents (
        document_id uuid PRIMARY KEY,
        container_id uuid NOT NULL,
        file_id uuid NOT NULL REFERENCES idb_files (file_id) ON DELETE CASCADE,
        title text,
        created_utc timestamptz NOT NULL)`,
        'CREATE INDEX idb_documents_by_container ON idb_documents (container_id, created_utc, document_id)',
        'CREATE INDEX idb_documents_by_file ON idb_documents (file_id)',
        `CREATE TABLE idb_index_fields (
        document_id uuid NOT NULL REFERENCES idb_documents (document_id) ON DELETE CASCADE,
        position integer NOT NULL,
        name text,
        value text,
        PRIMARY KEY (document_id, position))`,
      ],
      // T-SQL: SQL Server's names for the same types (datetime2 holds the UTC wall clock, as SQLite's text does).
      [
        `CREATE TABLE idb_files (
          file_id uniqueidentifier PRIMARY KEY,
          content_key uniqueidentifier NOT NULL,
          file_name nvarchar(max),
          content_type nvarchar(max),
          length bigint NOT NULL,
          sha256 nvarchar(64) NOT NULL,
          created_utc datetime2(7) NOT NULL,
          modified_utc datetime2(7) NOT NULL)`,
        `CREATE TABLE idb_documents (
          document_id uniqueidentifier PRIMARY KEY,
          container_id uniqueidentifier NOT NULL,
          file_id uniqueidentifier NOT NULL REFERENCES idb_files (file_id) ON DELETE CASCADE,
          title nvarchar(max),
          created_utc datetime2(7) NOT NULL)`,
        'CREATE INDEX idb_documents_by_container ON idb_documents (container_id, created_utc, document_id)',
        'CREATE INDEX idb_documents_by_file ON idb_documents (file_id)',
        `CREATE TABLE idb_index_fields (
          document_id uniqueidentifier NOT NULL REFERENCES idb_documents (document_id) ON DELETE CASCADE,
          position int NOT NULL,
          name nvarchar(max),
          value nvarchar(max),
          PRIMARY KEY (document_id, position))`,
      ],
    ),
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

const LIMITS: StatementLimits = { timeoutMs: 60_000, maxRows: 1_000 };

export class SchemaTooNewError extends Error {
  override name = 'SchemaTooNewError';
}

/**
 * Brings the `idb_` tables to SCHEMA_VERSION inside `transaction` (a write transaction the caller commits). Returns the
 * version found before.
 */
export async function migrate(transaction: DatabaseTransaction, dialect: SqlDialect): Promise<number> {
  // An arbitrary constant: the lock id every bridge on this database agrees on.
  if (dialect === 'postgres') await transaction.run('SELECT pg_advisory_xact_lock(7315041)', [], LIMITS);
  if (dialect === 'sqlserver')
    await transaction.run(
      "EXEC sp_getapplock @Resource = N'idb_schema', @LockMode = N'Exclusive', @LockOwner = N'Transaction'",
      [],
      LIMITS,
    );
  await transaction.run(
    dialect === 'sqlserver'
      ? "IF OBJECT_ID(N'idb_schema_version', N'U') IS NULL CREATE TABLE idb_schema_version (version int NOT NULL, applied_utc datetime2 NOT NULL)"
      : 'CREATE TABLE IF NOT EXISTS idb_schema_version (version integer NOT NULL, applied_utc timestamptz NOT NULL)',
    [],
    LIMITS,
  );
  const found = (await transaction.run('SELECT max(version) FROM idb_schema_version', [], LIMITS)).rows[0]?.[0];
  const current = found == null ? 0 : Number(found);
  if (current > SCHEMA_VERSION) {
    throw new SchemaTooNewError(
      `The database's idb_ tables are at version ${current}, newer than this service knows (${SCHEMA_VERSION}); upgrade the service.`,
    );
  }
  for (const migration of MIGRATIONS) {
    if (migration.version <= current) continue;
    for (const statement of migration.statements[dialect]) await transaction.run(statement, [], LIMITS);
    await transaction.run(
      'INSERT INTO idb_schema_version (version, applied_utc) VALUES (' +
        String(migration.version) +
        ', ' +
        { postgres: 'now()', sqlite: "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')", sqlserver: 'SYSUTCDATETIME()' }[dialect] +
        ')',
      [],
      LIMITS,
    );
  }
  return current;
}
