// The 13 operations of IIDBService over Microsoft.Data.Sqlite (or Npgsql, given a PostgreSQL connection string) and
// a folder, as the bridge serves them on SQLite
// (docs/contract/iidbservice.md): typed DataTables by declared column type, parameters bound as the bridge binds them
// on SQLite (DateTime and Guid as text), database requests as transactions on connections of their own, files in a
// folder with their metadata and the documents' index in the database, SOAP 1.2 faults with the contract's subcodes.
// On PostgreSQL (Npgsql, the ADO.NET provider a migrating team would take) the same code runs through ADO.NET's base
// classes: values are bound as their .NET types and columns typed by the server's type names, so the bench's
// database rows have a peer on the bridge's other backend (bench/dotnet.ts).
// Every caller is a writer (SecurityMode.None). Compiled with COREWCF for the host; the same file compiles against
// the System.ServiceModel client packages too (FaultException and FaultCode exist there), which is how it is
// type-checked where the NuGet feed has no CoreWCF.
// This file has the requests, the SQL and the typed results; FileStore.cs the files and documents.
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Data;
using System.Data.Common;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Security.Cryptography;
using System.Text.RegularExpressions;
using IDBService.Contracts;
using Microsoft.Data.Sqlite;
using Npgsql;
#if COREWCF
using CoreWCF;
#else
using System.ServiceModel;
#endif

namespace IDBService.CoreWcfHost
{
#if COREWCF
    [ServiceBehavior(InstanceContextMode = InstanceContextMode.Single, ConcurrencyMode = ConcurrencyMode.Multiple)]
#endif
    public sealed partial class IdbService : IIDBService
    {
        const string Ns = "http://tempuri.org/";
        readonly string connectionString;
        /// <summary>Set when the database is PostgreSQL: its pooled data source.</summary>
        readonly NpgsqlDataSource postgres;
        readonly string filesDir;
        readonly ConcurrentDictionary<Guid, Request> requests = new ConcurrentDictionary<Guid, Request>();

        sealed class Request
        {
            public DbConnection Connection;
            public DbTransaction Transaction;
            public bool Failed;
            public readonly object Gate = new object();
        }

        /// <param name="postgresConnection">An Npgsql connection string; null for SQLite in `dataDir`.</param>
        public IdbService(string dataDir, string postgresConnection = null)
        {
            filesDir = Path.Combine(dataDir, "files");
            Directory.CreateDirectory(filesDir);
            if (postgresConnection != null) postgres = NpgsqlDataSource.Create(postgresConnection);
            else connectionString = new SqliteConnectionStringBuilder { DataSource = Path.Combine(dataDir, "idb.sqlite"), Pooling = true, DefaultTimeout = 30 }.ToString();
            using var c = Open();
            if (postgres == null) Exec(c, null, "PRAGMA journal_mode = WAL");
            Exec(c, null, "CREATE TABLE IF NOT EXISTS idb_files (id TEXT PRIMARY KEY, name TEXT, content_type TEXT, length BIGINT, sha256 TEXT, created TEXT, modified TEXT)");
            Exec(c, null, "CREATE TABLE IF NOT EXISTS idb_documents (id TEXT PRIMARY KEY, container TEXT, file_id TEXT, title TEXT, created TEXT)");
            Exec(c, null, "CREATE TABLE IF NOT EXISTS idb_fields (document_id TEXT, ord INTEGER, name TEXT, value TEXT)");
        }

        DbConnection Open()
        {
            if (postgres != null) return postgres.OpenConnection();
            var c = new SqliteConnection(connectionString);
            c.Open();
            return c;
        }

        /// <summary>A transaction that takes SQLite's write lock only when it first writes (BEGIN DEFERRED), as the
        /// bridge's do; PostgreSQL's are that way anyway.</summary>
        static DbTransaction Begin(DbConnection c) => c is SqliteConnection sqlite ? sqlite.BeginTransaction(deferred: true) : c.BeginTransaction();

        static void Param(DbCommand cmd, string name, object value)
        {
            var p = cmd.CreateParameter();
            p.ParameterName = name;
            p.Value = value ?? System.DBNull.Value;
            cmd.Parameters.Add(p);
        }

        static void Exec(DbConnection c, DbTransaction t, string sql, params (string, object)[] ps)
        {
            using var cmd = c.CreateCommand();
            cmd.Transaction = t;
            cmd.CommandText = sql;
            foreach (var (n, v) in ps) Param(cmd, n, v);
            cmd.ExecuteNonQuery();
        }

        static FaultException Fault(string name, string reason, bool sender = true)
        {
            var sub = new FaultCode(name, Ns);
            return new FaultException(new FaultReason(reason), new FaultCode(sender ? "Sender" : "Receiver", sub), null);
        }

        public bool Heartbeat() => true;

        // ---- database requests --------------------------------------------------------------------------------

        public Guid CreateDatabaseRequest(string database)
        {
            if (!string.IsNullOrEmpty(database)) throw Fault("UnknownDatabase", $"There is no database named '{database}'.");
            var c = Open();
            var id = Guid.NewGuid();
            requests[id] = new Request { Connection = c, Transaction = Begin(c) };
            return id;
        }

        public bool CloseDatabaseRequest(Guid requestId, bool commit)
        {
            if (!requests.TryRemove(requestId, out var r)) return false;
            lock (r.Gate)
            {
                try
                {
                    if (commit && r.Failed)
                    {
                        r.Transaction.Rollback();
                        throw Fault("SqlError", "A statement of this database request failed: it was rolled back, not committed.");
                    }
                    if (commit) r.Transaction.Commit(); else r.Transaction.Rollback();
                    return true;
                }
                finally
                {
                    r.Connection.Dispose();
                }
            }
        }

        /// <summary>Runs `work` in the request's transaction, or in one of its own for Guid.Empty (committed
        // after).</summary>
        T InTransaction<T>(Guid requestId, Func<DbConnection, DbTransaction, T> work)
        {
            if (requestId == Guid.Empty)
            {
                using var c = Open();
                using var t = Begin(c);
                var result = Guard(() => work(c, t));
                t.Commit();
                return result;
            }
            if (!requests.TryGetValue(requestId, out var r)) throw Fault("UnknownDatabaseRequest", "The database request is unknown, expired or not yours.");
            lock (r.Gate)
            {
                try
                {
                    return Guard(() => work(r.Connection, r.Transaction));
                }
                catch (FaultException)
                {
                    r.Failed = true;
                    throw;
                }
            }
        }

        static T Guard<T>(Func<T> work)
        {
            try
            {
                return work();
            }
            catch (DbException e)
            {
                throw Fault("SqlError", e.Message);
            }
            catch (InvalidOperationException e) when (e.Message.Contains("Must add values for the following parameters"))
            {
                throw Fault("InvalidArgument", e.Message);
            }
        }

        static DbCommand Command(DbConnection c, DbTransaction t, string sql, QueryParameter[] parameters)
        {
            var cmd = c.CreateCommand();
            cmd.Transaction = t;
            cmd.CommandText = sql;
            // Markers are @name in the SQL; a parameter may be named with or without the @, in any case.
            var markers = Regex.Matches(sql, @"@([A-Za-z_][A-Za-z0-9_]*)").Select(m => m.Groups[1].Value).Distinct().ToList();
            var bound = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
            foreach (var p in parameters ?? new QueryParameter[0])
            {
                var name = (p?.Name ?? "").TrimStart('@');
                var marker = markers.FirstOrDefault(m => string.Equals(m, name, StringComparison.OrdinalIgnoreCase));
                if (marker == null) continue; // unused parameters are allowed
                Param(cmd, "@" + marker, c is SqliteConnection ? Bind(p.Value) : p.Value);
                bound.Add(marker);
            }
            // Microsoft.Data.Sqlite refuses a marker without a value itself (Guard); Npgsql would leave it in the text.
            var missing = markers.Where(m => !bound.Contains(m)).ToList();
            if (c is not SqliteConnection && missing.Count > 0)
                throw Fault("InvalidArgument", "Must add values for the following parameters: " + string.Join(", ", missing.Select(m => "@" + m)));
            return cmd;
        }

        /// <summary>SQLite storage classes for .NET values, as the bridge binds them: DateTime and Guid as
        // text.</summary>
        static object Bind(object value)
        {
            switch (value)
            {
                case null: return System.DBNull.Value;
                case DateTime d:
                    var text = d.ToString("yyyy-MM-dd'T'HH:mm:ss.FFFFFFF", CultureInfo.InvariantCulture).TrimEnd('.');
                    return d.Kind == DateTimeKind.Utc ? text + "Z" : d.Kind == DateTimeKind.Local ? d.ToString("yyyy-MM-dd'T'HH:mm:ss.FFFFFFFzzz", CultureInfo.InvariantCulture) : text;
                case Guid g: return g.ToString();
                case decimal m: return m.ToString(CultureInfo.InvariantCulture);
                case float f: return (double)f;
                case bool b: return b ? 1L : 0L;
                default: return value;
            }
        }

        // ---- typed results ------------------------------------------------------------------------------------

        static readonly Dictionary<string, Type> ByName = new (string[] names, Type type)[]
        {
            (new[] { "int", "integer", "int4", "mediumint" }, typeof(int)),
            (new[] { "bigint", "int8" }, typeof(long)),
            (new[] { "smallint", "int2", "tinyint" }, typeof(short)),
            (new[] { "numeric", "decimal", "money" }, typeof(decimal)),
            (new[] { "real", "float4" }, typeof(float)),
            (new[] { "double", "double precision", "float", "float8" }, typeof(double)),
            (new[] { "boolean", "bool", "bit" }, typeof(bool)),
            (new[] { "text", "varchar", "char", "nvarchar", "nchar", "clob", "character varying", "character" }, typeof(string)),
            (new[] { "blob", "bytea", "varbinary", "binary" }, typeof(byte[])),
            (new[] { "timestamp", "datetime", "date", "timestamptz", "datetime2", "timestamp without time zone", "timestamp with time zone" }, typeof(DateTime)),
            (new[] { "uuid", "uniqueidentifier", "guid" }, typeof(Guid)),
        }.SelectMany(e => e.names.Select(n => (n, e.type))).ToDictionary(e => e.n, e => e.type);

        sealed class Column
        {
            public string Name;
            public Type Type;
            public bool Utc;
        }

        static readonly System.Reflection.FieldInfo RecordField = typeof(SqliteDataReader).GetField("_record", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Instance);

        /// <summary>sqlite3_column_decltype: Microsoft.Data.Sqlite's GetDataTypeName names an expression by its value's
        /// storage class (INTEGER, ...), which cannot be told from a declared INTEGER, so the statement is asked
        /// itself (through the reader's internal record: a test host may do that).</summary>
        static string DeclaredType(DbDataReader reader, int i)
        {
            // PostgreSQL names every column's type, an expression's too.
            if (reader is not SqliteDataReader) return reader.GetDataTypeName(i);
            var record = RecordField?.GetValue(reader);
            var handle = record?.GetType().GetProperty("Handle", System.Reflection.BindingFlags.Public | System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Instance)?.GetValue(record) as SQLitePCL.sqlite3_stmt;
            if (handle == null) return reader.GetDataTypeName(i);
            return SQLitePCL.raw.sqlite3_column_decltype(handle, i).utf8_to_string();
        }

        /// <summary>The declared type of each column mapped by the spec's table; an undeclared one (an expression)
        /// typed by its first non-null value; Int16 and Int32 widened when a value does not fit.</summary>
        static Column[] Columns(DbDataReader reader, List<object[]> rows)
        {
            var columns = new Column[reader.FieldCount];
            for (int i = 0; i < reader.FieldCount; i++)
            {
                var declared = DeclaredType(reader, i);
                var undeclared = string.IsNullOrEmpty(declared);
                var name = undeclared ? "" : Regex.Replace(declared.ToLowerInvariant(), @"\([^)]*\)", " ").Trim();
                name = Regex.Replace(name, @"\s+", " ");
                Type type = null;
                if (!undeclared) ByName.TryGetValue(name, out type);
                if (type == null)
                {
                    var first = rows.Select(r => r[i]).FirstOrDefault(v => v != null && v != System.DBNull.Value);
                    type = first switch { long => typeof(long), double => typeof(double), byte[] => typeof(byte[]), _ => typeof(string) };
                }
                if (type == typeof(short) || type == typeof(int))
                {
                    foreach (var v in rows.Select(r => r[i]).OfType<long>())
                    {
                        if (type == typeof(short) && (v < short.MinValue || v > short.MaxValue)) type = typeof(int);
                        if (type == typeof(int) && (v < int.MinValue || v > int.MaxValue)) type = typeof(long);
                    }
                }
                columns[i] = new Column { Name = reader.GetName(i), Type = type, Utc = name == "timestamptz" || name == "timestamp with time zone" };
            }
            return columns;
        }

        static object Convert(object raw, Column c)
        {
            if (raw == null || raw == System.DBNull.Value) return null;
            var t = c.Type;
            if (t == typeof(string)) return raw is byte[] b0 ? System.Text.Encoding.UTF8.GetString(b0) : System.Convert.ToString(raw, CultureInfo.InvariantCulture);
            if (t == typeof(long)) return System.Convert.ToInt64(raw, CultureInfo.InvariantCulture);
            if (t == typeof(int)) return System.Convert.ToInt32(raw, CultureInfo.InvariantCulture);
            if (t == typeof(short)) return System.Convert.ToInt16(raw, CultureInfo.InvariantCulture);
            if (t == typeof(double)) return System.Convert.ToDouble(raw, CultureInfo.InvariantCulture);
            if (t == typeof(float)) return (float)System.Convert.ToDouble(raw, CultureInfo.InvariantCulture);
            if (t == typeof(bool)) return raw is string s0 ? s0 == "1" || s0.Equals("true", StringComparison.OrdinalIgnoreCase) : System.Convert.ToInt64(raw, CultureInfo.InvariantCulture) != 0;
            if (t == typeof(decimal))
            {
                var text = raw is double d ? d.ToString("R", CultureInfo.InvariantCulture) : System.Convert.ToString(raw, CultureInfo.InvariantCulture);
                return decimal.Parse(text, NumberStyles.Float, CultureInfo.InvariantCulture);
            }
            if (t == typeof(byte[])) return raw as byte[] ?? System.Text.Encoding.UTF8.GetBytes(System.Convert.ToString(raw, CultureInfo.InvariantCulture));
            if (t == typeof(Guid)) return raw is Guid g0 ? g0 : raw is byte[] g ? new Guid(g) : Guid.Parse(System.Convert.ToString(raw, CultureInfo.InvariantCulture));
            // Npgsql reads timestamps as DateTime: timestamptz in UTC, timestamp unspecified.
            if (t == typeof(DateTime) && raw is DateTime dt) return c.Utc ? dt.ToUniversalTime() : DateTime.SpecifyKind(dt, DateTimeKind.Unspecified);
            if (t == typeof(DateTime) && raw is DateOnly day) return day.ToDateTime(TimeOnly.MinValue, DateTimeKind.Unspecified);
            if (t == typeof(DateTime)) return ParseDateTime(System.Convert.ToString(raw, CultureInfo.InvariantCulture), c.Utc);
            return raw;
        }

        /// <summary>Utc columns: converted to UTC by the offset (none means UTC already), Kind Utc. Others: the
        /// wall-clock value as written, an offset ignored, Kind Unspecified.</summary>
        static DateTime ParseDateTime(string text, bool utc)
        {
            var m = Regex.Match(text, @"^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$");
            if (!m.Success) throw Fault("InvalidArgument", $"'{text}' is no date and time.", sender: false);
            var local = DateTime.Parse(m.Groups[1].Value + "T" + (m.Groups[2].Success ? m.Groups[2].Value : "00:00:00"), CultureInfo.InvariantCulture, DateTimeStyles.AllowWhiteSpaces);
            if (!utc) return DateTime.SpecifyKind(local, DateTimeKind.Unspecified);
            var offset = TimeSpan.Zero;
            if (m.Groups[3].Success && m.Groups[3].Value != "Z")
            {
                var o = m.Groups[3].Value.Replace(":", "");
                offset = new TimeSpan(int.Parse(o.Substring(1, 2), CultureInfo.InvariantCulture), o.Length > 3 ? int.Parse(o.Substring(3, 2), CultureInfo.InvariantCulture) : 0, 0);
                if (o[0] == '-') offset = -offset;
            }
            return DateTime.SpecifyKind(local - offset, DateTimeKind.Utc);
        }

        static (Column[] columns, List<object[]> rows) Query(DbCommand cmd)
        {
            using var reader = cmd.ExecuteReader();
            var rows = new List<object[]>();
            while (reader.Read())
            {
                var row = new object[reader.FieldCount];
                reader.GetValues(row);
                rows.Add(row);
            }
            return (Columns(reader, rows), rows);
        }

        public DataTable ReturnDatatable(Guid requestId, string sql, QueryParameter[] parameters)
        {
            return InTransaction(requestId, (c, t) =>
            {
                using var cmd = Command(c, t, sql, parameters);
                var (columns, rows) = Query(cmd);
                var table = new DataTable("Table");
                foreach (var col in columns)
                {
                    var dc = table.Columns.Add(col.Name, col.Type);
                    if (col.Type == typeof(DateTime)) dc.DateTimeMode = col.Utc ? DataSetDateTime.Utc : DataSetDateTime.Unspecified;
                }
                // Rows stay Added: the diffgram marks them inserted, as the bridge writes it.
                foreach (var row in rows) table.Rows.Add(columns.Select((col, i) => Convert(row[i], col) ?? System.DBNull.Value).ToArray());
                return table;
            });
        }

        public object ReturnScalar(Guid requestId, string sql, QueryParameter[] parameters)
        {
            return InTransaction(requestId, (c, t) =>
            {
                using var cmd = Command(c, t, sql, parameters);
                var (columns, rows) = Query(cmd);
                return rows.Count == 0 || columns.Length == 0 ? null : Convert(rows[0][0], columns[0]);
            });
        }

        public int ExecuteNonQuery(Guid requestId, string sql, QueryParameter[] parameters)
        {
            return InTransaction(requestId, (c, t) =>
            {
                using var cmd = Command(c, t, sql, parameters);
                var affected = cmd.ExecuteNonQuery();
                // Rows affected for INSERT, UPDATE and DELETE; -1 for anything else, as ADO.NET.
                return Regex.IsMatch(sql, @"^\s*(INSERT|UPDATE|DELETE|REPLACE)\b", RegexOptions.IgnoreCase) ? affected : -1;
            });
        }
    }
}
