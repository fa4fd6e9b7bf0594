// The scenario both ChannelFactory clients of the contract run: Mono's E2EClient (test/mono/E2EClient.cs, Mono's
// System.ServiceModel) and .NET's WcfClient (test/dotnet/WcfClient, Microsoft's WCF client for .NET), each calling
// IIDBService.cs on NetTcpBinding, nothing generated. Its sections call all 13 operations and check every value that
// comes back, one JSON line per check (Report.cs has the format). Each section runs on a channel of its own; an
// exception out of one ends it with its section line (ok false, the error) and the next starts on a new channel. The
// SQL ones create tables named e2e_<random>_*, cleanup drops them.
//
// The service under test is expected to treat the client's identity (the anonymous one under SecurityMode.None) as a
// writer. SQL is written to run on SQLite and PostgreSQL alike; where the answer depends on the backend (the type of
// `SELECT @x`), the backend argument says which answer to expect (src/idb/database.ts, SqlValue: how each backend
// binds a parameter).
//
// Each client's own part of the class parses its arguments and supplies AllSections, NewFactory(),
// ConcurrentChannels and RunOwnSection (the sections only it has). Compiled by Mono's mcs too: C# 7 at most.
using System;
using System.Collections.Generic;
using System.Data;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.ServiceModel;
using System.Text;
using System.Threading;
using IDBService.Contracts;

namespace IDBService.E2E
{
    public static partial class Scenario
    {
        const string ServiceNamespace = "http://tempuri.org/";
        const int MiB = 1024 * 1024;

        static Report report = new Report();
        static ChannelFactory<IIDBService> factory;
        static string backend = "sqlite";
        static string prefix;
        static bool typesTableReady;
        static readonly List<string> tablesCreated = new List<string>();
        static Random random = new Random(20240229);

        // ---------------------------------------------------------------------------------------------------------
        // Plumbing

        /// <summary>Runs the sections in the order given, then the summary line; the exit code (0 when every check
        /// passed).</summary>
        static int RunSections(IEnumerable<string> sections)
        {
            prefix = "e2e_" + Guid.NewGuid().ToString("N").Substring(0, 8);
            factory = NewFactory();
            var total = Stopwatch.StartNew();
            foreach (var section in sections) RunSection(section);
            try { factory.Close(); } catch { factory.Abort(); }
            report.Summary(total.ElapsedMilliseconds);
            return report.Failed == 0 ? 0 : 1;
        }

        static void RunSection(string name)
        {
            var watch = Stopwatch.StartNew();
            IIDBService channel = null;
            try
            {
                channel = factory.CreateChannel();
                ((ICommunicationObject)channel).Open();
                switch (name)
                {
                    case "heartbeat": Heartbeat(channel); break;
                    case "nonquery": NonQuery(channel); break;
                    case "requests": Requests(channel); break;
                    case "datatable": DataTables(channel); break;
                    case "scalar": Scalars(channel); break;
                    case "files": Files(channel); break;
                    case "documents": Documents(channel); break;
                    case "faults": Faults(channel); break;
                    case "sql-faults": SqlFaults(channel); break;
                    case "concurrency": Concurrency(ConcurrentChannels); break;
                    case "cleanup": Cleanup(channel); break;
                    default: RunOwnSection(name, channel); break;
                }
                Close(channel);
                report.Section(name, true, watch.ElapsedMilliseconds, null);
            }
            catch (Exception e)
            {
                report.Section(name, false, watch.ElapsedMilliseconds, DescribeException(e));
                if (channel != null)
                {
                    try { Close(channel); } catch { ((ICommunicationObject)channel).Abort(); }
                }
                // Mono: aborting a channel disposes its ChannelFactory too; the next section needs a working one.
                if (factory.State != CommunicationState.Opened && factory.State != CommunicationState.Created) factory = NewFactory();
            }
        }

        static void Close(IIDBService channel)
        {
            var c = (ICommunicationObject)channel;
            if (c.State == CommunicationState.Opened) c.Close(); else c.Abort();
        }

        public static string DescribeException(Exception e)
        {
            var fault = e as FaultException;
            if (fault != null)
            {
                var sub = fault.Code != null && fault.Code.SubCode != null ? fault.Code.SubCode.Namespace + "#" + fault.Code.SubCode.Name : "(no subcode)";
                return "FaultException code=" + (fault.Code == null ? "?" : fault.Code.Name) + " subcode=" + sub + " reason=" + fault.Message;
            }
            return e.GetType().FullName + ": " + e.Message + (e.InnerException != null ? " <- " + DescribeException(e.InnerException) : "");
        }

        /// <summary>The FaultException the call raises (null and a failed check when it returns or throws something else).</summary>
        static FaultException ExpectFault(string check, Action call)
        {
            try
            {
                call();
                report.Check(check + ".faults", false, "FaultException", "no fault");
                return null;
            }
            catch (FaultException e)
            {
                return e;
            }
        }

        /// <summary>Checks a fault's SOAP 1.2 code: s:Sender or s:Receiver with the contract's Subcode in the service namespace.</summary>
        static void CheckFault(string check, FaultException fault, string subcode, bool sender = true)
        {
            if (fault == null) return;
            var code = fault.Code;
            report.Check(check + ".code", code != null && (sender ? code.IsSenderFault : code.IsReceiverFault), sender ? "Sender" : "Receiver", code == null ? "null" : code.Name + " (" + code.Namespace + ")");
            var sub = code == null ? null : code.SubCode;
            report.Equal(check + ".subcode", subcode, sub == null ? null : sub.Name);
            report.Equal(check + ".subcode-namespace", ServiceNamespace, sub == null ? null : sub.Namespace);
            report.Check(check + ".reason", !string.IsNullOrEmpty(fault.Message), "a reason text", fault.Message);
        }

        static QueryParameter P(string name, object value)
        {
            return new QueryParameter { Name = name, Value = value };
        }

        static QueryParameter[] Ps(params QueryParameter[] parameters)
        {
            return parameters;
        }

        static byte[] RandomBytes(int length)
        {
            var bytes = new byte[length];
            lock (random) random.NextBytes(bytes);
            return bytes;
        }

        static bool Sqlite { get { return backend == "sqlite"; } }

        static string Table(string name)
        {
            return prefix + "_" + name;
        }

        static long Count(IIDBService s, Guid requestId, string where)
        {
            return Convert.ToInt64(s.ReturnScalar(requestId, "SELECT count(*) FROM " + where, null), CultureInfo.InvariantCulture);
        }

        // ---------------------------------------------------------------------------------------------------------
        // Sections

        static void Heartbeat(IIDBService s)
        {
            report.Equal("heartbeat.true", true, s.Heartbeat());
            report.Equal("heartbeat.again", true, s.Heartbeat());
        }

        static void NonQuery(IIDBService s)
        {
            var t = Table("items");
            report.Equal("nonquery.create-table.-1", -1, s.ExecuteNonQuery(Guid.Empty, "CREATE TABLE " + t + " (id int PRIMARY KEY, name text)", null));
            tablesCreated.Add(t);
            report.Equal("nonquery.insert.3", 3, s.ExecuteNonQuery(Guid.Empty, "INSERT INTO " + t + " (id, name) VALUES (1, 'one'), (2, 'two'), (3, 'three')", null));
            report.Equal("nonquery.insert-parameters.1", 1, s.ExecuteNonQuery(Guid.Empty, "INSERT INTO " + t + " (id, name) VALUES (@id, @name)", Ps(P("@id", 4), P("name", "four"))));
            report.Equal("nonquery.update.2", 2, s.ExecuteNonQuery(Guid.Empty, "UPDATE " + t + " SET name = @n WHERE id > @min", Ps(P("@n", "many"), P("@min", 2))));
            report.Equal("nonquery.delete.1", 1, s.ExecuteNonQuery(Guid.Empty, "DELETE FROM " + t + " WHERE id = 1", null));
            report.Equal("nonquery.delete-none.0", 0, s.ExecuteNonQuery(Guid.Empty, "DELETE FROM " + t + " WHERE id = 999", null));
            report.Equal("nonquery.select.-1", -1, s.ExecuteNonQuery(Guid.Empty, "SELECT 1", null));
            report.Same("nonquery.count", 3L, s.ReturnScalar(Guid.Empty, "SELECT count(*) FROM " + t, null));
            report.Same("nonquery.updated-value", "many", s.ReturnScalar(Guid.Empty, "SELECT name FROM " + t + " WHERE id = 4", null));
        }

        static void Requests(IIDBService s)
        {
            var t = Table("requests");
            s.ExecuteNonQuery(Guid.Empty, "CREATE TABLE " + t + " (id int PRIMARY KEY, name text)", null);
            tablesCreated.Add(t);

            // Commit: visible inside at once, outside only after the commit.
            var committed = s.CreateDatabaseRequest(null);
            report.Check("requests.create.id", committed != Guid.Empty, "a new id", committed.ToString());
            report.Equal("requests.insert.1", 1, s.ExecuteNonQuery(committed, "INSERT INTO " + t + " VALUES (10, 'ten')", null));
            report.Same("requests.visible-inside", "ten", s.ReturnScalar(committed, "SELECT name FROM " + t + " WHERE id = 10", null));
            if (Sqlite)
            {
                // Guid.Empty SQL of a writer is a write transaction: on SQLite it waits for the request's write lock.
                report.Skip("requests.invisible-outside-before-commit", "SQLite: the anonymous writer's own transaction would wait for the request's write lock");
            }
            else
            {
                report.Equal("requests.invisible-outside-before-commit", 0L, Count(s, Guid.Empty, t + " WHERE id = 10"));
            }
            report.Equal("requests.commit.true", true, s.CloseDatabaseRequest(committed, true));
            report.Equal("requests.visible-after-commit", 1L, Count(s, Guid.Empty, t + " WHERE id = 10"));
            report.Equal("requests.close-again.false", false, s.CloseDatabaseRequest(committed, true));

            // Rollback: gone.
            var rolledBack = s.CreateDatabaseRequest("");
            report.Check("requests.create-empty-name.id", rolledBack != Guid.Empty && rolledBack != committed, "a new id", rolledBack.ToString());
            report.Equal("requests.rollback.insert.1", 1, s.ExecuteNonQuery(rolledBack, "INSERT INTO " + t + " VALUES (11, 'eleven')", null));
            report.Equal("requests.rollback.visible-inside", 1L, Count(s, rolledBack, t + " WHERE id = 11"));
            report.Equal("requests.rollback.true", true, s.CloseDatabaseRequest(rolledBack, false));
            report.Equal("requests.invisible-after-rollback", 0L, Count(s, Guid.Empty, t + " WHERE id = 11"));
            report.Equal("requests.commit-after-rollback.false", false, s.CloseDatabaseRequest(rolledBack, true));
            report.Equal("requests.close-unknown.false", false, s.CloseDatabaseRequest(Guid.NewGuid(), false));

            // A request lives by its id: opened on one channel, closed cleanly, continued and committed on others.
            var first = factory.CreateChannel();
            var carried = first.CreateDatabaseRequest(null);
            ((ICommunicationObject)first).Close();
            var second = factory.CreateChannel();
            report.Equal("requests.other-channel.insert.1", 1, second.ExecuteNonQuery(carried, "INSERT INTO " + t + " VALUES (12, 'twelve')", null));
            ((ICommunicationObject)second).Close();
            report.Equal("requests.other-channel.commit.true", true, s.CloseDatabaseRequest(carried, true));
            report.Equal("requests.other-channel.visible", 1L, Count(s, Guid.Empty, t + " WHERE id = 12"));
        }

        // The typed table both the DataTable and the scalar checks read: one column per declared type of the spec's
        // table, row 1 with a value of each type, row 2 all null but its key.
        static readonly string[] TypedColumns = { "k", "i", "s", "l", "d", "r", "f", "b", "t", "dt", "bin", "g" };
        static readonly Type[] TypedColumnTypes = { typeof(int), typeof(int), typeof(short), typeof(long), typeof(decimal), typeof(float), typeof(double), typeof(bool), typeof(string), typeof(DateTime), typeof(byte[]), typeof(Guid) };
        const string NonAscii = "Grüße, 😀 — ✓ 日本 \"<&>\"";
        static readonly DateTime Leap = new DateTime(2024, 2, 29, 23, 59, 59, 123, DateTimeKind.Unspecified);
        static readonly Guid SomeGuid = new Guid("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
        // Above WCF's default MaxArrayLength (16 384): the raised reader quotas are needed to read it back.
        static readonly byte[] Blob = RandomBytes(100000);

        static object[] TypedValues()
        {
            return new object[] { 1, int.MinValue, short.MaxValue, long.MaxValue, 12345.6789m, 1.5f, 0.1d, true, NonAscii, Leap, Blob, SomeGuid };
        }

        static void EnsureTypesTable(IIDBService s)
        {
            if (typesTableReady) return;
            var t = Table("types");
            report.Equal("types.create.-1", -1, s.ExecuteNonQuery(Guid.Empty,
                "CREATE TABLE " + t + " (k int, i int, s smallint, l bigint, d decimal(20,6), r real, f double precision, b boolean, t text, dt timestamp, bin bytea, g uuid)", null));
            tablesCreated.Add(t);
            var values = TypedValues();
            var insert = "INSERT INTO " + t + " VALUES (@k, @i, @s, @l, @d, @r, @f, @b, @t, @dt, @bin, @g)";
            report.Equal("types.insert-values.1", 1, s.ExecuteNonQuery(Guid.Empty, insert, TypedColumns.Select((c, i) => P("@" + c, values[i])).ToArray()));
            report.Equal("types.insert-nulls.1", 1, s.ExecuteNonQuery(Guid.Empty, insert, TypedColumns.Select((c, i) => P(c, i == 0 ? (object)2 : null)).ToArray()));
            typesTableReady = true;
        }

        static void DataTables(IIDBService s)
        {
            EnsureTypesTable(s);
            var table = s.ReturnDatatable(Guid.Empty, "SELECT * FROM " + Table("types") + " ORDER BY k", null);
            if (!report.Check("datatable.not-null", table != null)) return;
            report.Equal("datatable.name", "Table", table.TableName);
            report.Equal("datatable.columns", string.Join(",", TypedColumns), string.Join(",", table.Columns.Cast<DataColumn>().Select(c => c.ColumnName)));
            for (int i = 0; i < TypedColumns.Length && i < table.Columns.Count; i++)
            {
                report.Equal("datatable.type." + TypedColumns[i], TypedColumnTypes[i], table.Columns[i].DataType);
            }
            var dtColumn = table.Columns.Contains("dt") ? table.Columns["dt"] : null;
            if (dtColumn != null) report.Equal("datatable.dt.mode", DataSetDateTime.Unspecified, dtColumn.DateTimeMode);
            if (!report.Equal("datatable.rows", 2, table.Rows.Count)) return;
            var values = TypedValues();
            for (int i = 0; i < TypedColumns.Length && i < table.Columns.Count; i++)
            {
                report.Same("datatable.row1." + TypedColumns[i], values[i], table.Rows[0][i]);
            }
            report.Same("datatable.row2.k", 2, table.Rows[1][0]);
            for (int i = 1; i < TypedColumns.Length && i < table.Columns.Count; i++)
            {
                report.Check("datatable.row2." + TypedColumns[i] + ".dbnull", table.Rows[1][i] is DBNull, "DBNull", Report.Describe(table.Rows[1][i]));
            }

            var empty = s.ReturnDatatable(Guid.Empty, "SELECT i, t FROM " + Table("types") + " WHERE k < 0", null);
            if (report.Check("datatable.empty.not-null", empty != null))
            {
                report.Equal("datatable.empty.rows", 0, empty.Rows.Count);
                report.Equal("datatable.empty.columns", "i:Int32,t:String", string.Join(",", empty.Columns.Cast<DataColumn>().Select(c => c.ColumnName + ":" + c.DataType.Name)));
            }

            // A recursive CTE (the same text on both backends): many rows in order, typed by the backend.
            var series = s.ReturnDatatable(Guid.Empty, "WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < 1000) SELECT x FROM s", Ps());
            if (report.Check("datatable.series.not-null", series != null) && report.Equal("datatable.series.rows", 1000, series.Rows.Count))
            {
                // SQLite: an expression column takes its first value's type (Int64); PostgreSQL: the CTE's int4.
                report.Equal("datatable.series.type", Sqlite ? typeof(long) : typeof(int), series.Columns[0].DataType);
                bool inOrder = true;
                for (int i = 0; i < 1000; i++) inOrder &= Convert.ToInt64(series.Rows[i][0], CultureInfo.InvariantCulture) == i + 1;
                report.Check("datatable.series.values-in-order", inOrder);
            }

            var parameterized = s.ReturnDatatable(Guid.Empty, "SELECT k, t FROM " + Table("types") + " WHERE t = @t AND k = @k", Ps(P("@t", NonAscii), P("k", 1)));
            report.Equal("datatable.parameters.rows", 1, parameterized == null ? -1 : parameterized.Rows.Count);
        }

        static void Scalars(IIDBService s)
        {
            EnsureTypesTable(s);
            var t = Table("types");
            var values = TypedValues();
            // Typed by the column's declared type: the same on both backends.
            for (int i = 1; i < TypedColumns.Length; i++)
            {
                var c = TypedColumns[i];
                report.Same("scalar.column." + c, values[i], s.ReturnScalar(Guid.Empty, "SELECT " + c + " FROM " + t + " WHERE k = 1", null));
                report.Same("scalar.column." + c + ".null-cell", null, s.ReturnScalar(Guid.Empty, "SELECT " + c + " FROM " + t + " WHERE k = 2", null));
            }
            report.Same("scalar.no-row", null, s.ReturnScalar(Guid.Empty, "SELECT i FROM " + t + " WHERE k = 3", null));

            // Parameters of every type, read back as `SELECT @x`. PostgreSQL types the parameter as the .NET type
            // (a string stays untyped, like a literal); SQLite has storage classes only: integers are INTEGER (an
            // expression of them Int64), float and double REAL, a boolean 1, decimal, DateTime and Guid TEXT.
            var utc = new DateTime(2024, 2, 29, 23, 59, 59, 123, DateTimeKind.Utc);
            var cases = new List<Tuple<string, object, object>>
            {
                Tuple.Create<string, object, object>("string", NonAscii, NonAscii),
                Tuple.Create<string, object, object>("string-empty", "", ""),
                Tuple.Create<string, object, object>("int", 42, Sqlite ? (object)42L : 42),
                Tuple.Create<string, object, object>("int-min", int.MinValue, Sqlite ? (object)(long)int.MinValue : int.MinValue),
                Tuple.Create<string, object, object>("long", long.MinValue, long.MinValue),
                Tuple.Create<string, object, object>("short", (short)-7, Sqlite ? (object)(-7L) : (short)-7),
                Tuple.Create<string, object, object>("decimal", 12.50m, Sqlite ? (object)"12.50" : 12.50m),
                Tuple.Create<string, object, object>("double", 0.1d, 0.1d),
                Tuple.Create<string, object, object>("float", 1.5f, Sqlite ? (object)1.5d : 1.5f),
                Tuple.Create<string, object, object>("bool", true, Sqlite ? (object)1L : true),
                Tuple.Create<string, object, object>("datetime", Leap, Sqlite ? (object)"2024-02-29T23:59:59.123" : Leap),
                Tuple.Create<string, object, object>("datetime-utc", utc, Sqlite ? (object)"2024-02-29T23:59:59.123Z" : utc),
                Tuple.Create<string, object, object>("bytes", Blob, Blob),
                Tuple.Create<string, object, object>("guid", SomeGuid, Sqlite ? (object)SomeGuid.ToString() : SomeGuid),
            };
            foreach (var c in cases)
            {
                var got = s.ReturnScalar(Guid.Empty, "SELECT @x", Ps(P("@x", c.Item2)));
                report.Same("scalar.param." + c.Item1, c.Item3, got);
            }
            // A decimal keeps its scale where the backend has decimals (12.50 is not written 12.5).
            if (!Sqlite)
            {
                var scaled = s.ReturnScalar(Guid.Empty, "SELECT @x", Ps(P("@x", 12.50m)));
                report.Equal("scalar.param.decimal.scale", "12.50", scaled == null ? null : ((IFormattable)scaled).ToString(null, CultureInfo.InvariantCulture));
            }
            report.Same("scalar.param.null", null, s.ReturnScalar(Guid.Empty, "SELECT CAST(@x AS text)", Ps(P("@x", null))));
            report.Same("scalar.param.name-without-at", "plain", s.ReturnScalar(Guid.Empty, "SELECT @Name", Ps(P("name", "plain"))));
            report.Same("scalar.param.unused-allowed", "used", s.ReturnScalar(Guid.Empty, "SELECT @a", Ps(P("@a", "used"), P("@b", 1))));
            report.Same("scalar.param.where-typed-column", NonAscii, s.ReturnScalar(Guid.Empty, "SELECT t FROM " + t + " WHERE i = @i AND g = @g AND b = @b", Ps(P("@i", int.MinValue), P("@g", SomeGuid), P("@b", true))));
            report.Same("scalar.count.long", 2L, s.ReturnScalar(Guid.Empty, "SELECT count(*) FROM " + t, null));
        }

        static FileData NewFileData(byte[] content, string name, string contentType)
        {
            // FileId, Length, dates and Sha256 of the argument are the server's to set; send values it must ignore.
            return new FileData { Content = content, ContentType = contentType, FileName = name, FileId = Guid.NewGuid(), Length = 12345, CreatedUtc = new DateTime(2000, 1, 1), ModifiedUtc = new DateTime(2000, 1, 1), Sha256 = "not-a-hash" };
        }

        static void CheckFile(string check, FileData got, Guid id, byte[] content, string name, string contentType, DateTime notBefore)
        {
            if (!report.Check(check + ".not-null", got != null)) return;
            report.Equal(check + ".id", id, got.FileId);
            report.Check(check + ".content", got.Content != null && got.Content.SequenceEqual(content), Report.Describe(content), Report.Describe(got.Content));
            report.Equal(check + ".length", (long)content.Length, got.Length);
            report.Equal(check + ".sha256", Report.Sha256Hex(content), got.Sha256);
            report.Equal(check + ".name", name, got.FileName);
            report.Equal(check + ".content-type", contentType, got.ContentType);
            report.Equal(check + ".created.kind", DateTimeKind.Utc, got.CreatedUtc.Kind);
            report.Equal(check + ".modified.kind", DateTimeKind.Utc, got.ModifiedUtc.Kind);
            var now = DateTime.UtcNow;
            // Same machine, same clock: the server's stamps fall inside the call (with a minute's slack for rounding).
            report.Check(check + ".created.recent", got.CreatedUtc >= notBefore.AddMinutes(-1) && got.CreatedUtc <= now.AddMinutes(1), notBefore.ToString("o") + " .. " + now.ToString("o"), got.CreatedUtc.ToString("o"));
            report.Check(check + ".modified.not-before-created", got.ModifiedUtc >= got.CreatedUtc, got.CreatedUtc.ToString("o"), got.ModifiedUtc.ToString("o"));
        }

        static void Files(IIDBService s)
        {
            foreach (var size in new[] { 0, MiB, 20 * MiB })
            {
                var label = size == 0 ? "0B" : (size / MiB) + "MiB";
                var check = "files." + label;
                var content = RandomBytes(size);
                var before = DateTime.UtcNow;
                var argument = NewFileData(content, "e2e-" + label + ".bin", "application/octet-stream");
                var id = s.NewFile(argument);
                report.Check(check + ".new.id", id != Guid.Empty && id != argument.FileId, "a new id, not the argument's", id.ToString());
                var got = s.GetFile(id);
                CheckFile(check + ".get", got, id, content, "e2e-" + label + ".bin", "application/octet-stream", before);
                if (size == 0 && got != null) report.Check(check + ".get.content-empty-not-null", got.Content != null && got.Content.Length == 0, "byte[0]", Report.Describe(got.Content));

                var replacement = RandomBytes(size);
                var update = NewFileData(replacement, "e2e-" + label + "-v2.dat", "application/x-e2e");
                update.FileId = id;
                report.Equal(check + ".update.true", true, s.UpdateFile(update));
                var updated = s.GetFile(id);
                CheckFile(check + ".updated", updated, id, replacement, "e2e-" + label + "-v2.dat", "application/x-e2e", before);
                if (got != null && updated != null)
                {
                    report.Equal(check + ".updated.created-kept", got.CreatedUtc, updated.CreatedUtc);
                    report.Check(check + ".updated.modified-advanced", updated.ModifiedUtc >= got.ModifiedUtc, got.ModifiedUtc.ToString("o"), updated.ModifiedUtc.ToString("o"));
                }

                report.Equal(check + ".delete.true", true, s.DeleteFile(id));
                report.Same(check + ".deleted.get-null", null, s.GetFile(id));
                report.Equal(check + ".delete-again.false", false, s.DeleteFile(id));
                report.Equal(check + ".update-deleted.false", false, s.UpdateFile(update));
            }
            report.Same("files.get-unknown.null", null, s.GetFile(Guid.NewGuid()));
            report.Equal("files.delete-unknown.false", false, s.DeleteFile(Guid.NewGuid()));
            var nullType = NewFileData(new byte[] { 1, 2, 3 }, "nulltype.bin", null);
            var nullTypeId = s.NewFile(nullType);
            var nullTypeGot = s.GetFile(nullTypeId);
            report.Equal("files.null-content-type", null, nullTypeGot == null ? "(no file)" : nullTypeGot.ContentType);
            s.DeleteFile(nullTypeId);
        }

        static string FieldsText(IndexField[] fields)
        {
            if (fields == null) return "null";
            return string.Join(";", fields.Select(f => (f == null ? "null" : (f.Name ?? "<null>") + "=" + (f.Value ?? "<null>"))));
        }

        static void Documents(IIDBService s)
        {
            var pdf = Encoding.ASCII.GetBytes("%PDF-1.7");
            var fileId = s.NewFile(NewFileData(pdf, "bill.pdf", "application/pdf"));
            var containerId = Guid.NewGuid();
            var fields = new[]
            {
                new IndexField { Name = "Iban", Value = "CH4431999123000889012" },
                new IndexField { Name = "Amount", Value = "1949.75" },
                new IndexField { Name = "Note", Value = null },
                new IndexField { Name = "Zürich", Value = NonAscii },
            };
            var before = DateTime.UtcNow;
            var first = s.NewFileIndex(new FileIndexData { ContainerId = containerId, DocumentId = Guid.Empty, Fields = fields, FileId = fileId, Title = "Invoice 1" });
            report.Check("documents.new.id", first != Guid.Empty, "a new id", first.ToString());
            var doc = s.GetDocumentByDocumentId(first);
            if (report.Check("documents.get.not-null", doc != null))
            {
                report.Equal("documents.get.container", containerId, doc.ContainerId);
                report.Equal("documents.get.content-type", "application/pdf", doc.ContentType);
                report.Equal("documents.get.created.kind", DateTimeKind.Utc, doc.CreatedUtc.Kind);
                report.Check("documents.get.created.recent", doc.CreatedUtc >= before.AddMinutes(-1) && doc.CreatedUtc <= DateTime.UtcNow.AddMinutes(1), before.ToString("o"), doc.CreatedUtc.ToString("o"));
                report.Equal("documents.get.id", first, doc.DocumentId);
                report.Equal("documents.get.fields-in-order", FieldsText(fields), FieldsText(doc.Fields));
                report.Equal("documents.get.file-id", fileId, doc.FileId);
                report.Equal("documents.get.file-name", "bill.pdf", doc.FileName);
                report.Equal("documents.get.length", (long)pdf.Length, doc.Length);
                report.Equal("documents.get.title", "Invoice 1", doc.Title);
            }

            // A chosen id that does not exist yet is created under it; the same call again replaces, never duplicates.
            var chosen = Guid.NewGuid();
            var index = new FileIndexData { ContainerId = containerId, DocumentId = chosen, Fields = new[] { new IndexField { Name = "Ref", Value = "21 00000 00003 13947 14300 09017" } }, FileId = fileId, Title = "Invoice 2" };
            report.Equal("documents.chosen.id", chosen, s.NewFileIndex(index));
            index.Fields = new[] { new IndexField { Name = "Ref", Value = "changed" }, new IndexField { Name = "Extra", Value = "" } };
            index.Title = null;
            report.Equal("documents.chosen.again.id", chosen, s.NewFileIndex(index));
            var replaced = s.GetDocumentByDocumentId(chosen);
            if (report.Check("documents.chosen.get.not-null", replaced != null))
            {
                report.Equal("documents.chosen.get.title-null", null, replaced.Title);
                report.Equal("documents.chosen.get.fields-replaced", "Ref=changed;Extra=", FieldsText(replaced.Fields));
            }
            var empty = s.NewFileIndex(new FileIndexData { ContainerId = containerId, DocumentId = Guid.Empty, Fields = new IndexField[0], FileId = fileId, Title = "no fields" });
            var emptyDoc = s.GetDocumentByDocumentId(empty);
            report.Check("documents.no-fields.empty-array", emptyDoc != null && emptyDoc.Fields != null && emptyDoc.Fields.Length == 0, "IndexField[0]", emptyDoc == null ? "(no document)" : FieldsText(emptyDoc.Fields));

            var listed = s.GetDocumentByContainerId(containerId);
            if (report.Check("documents.container.not-null", listed != null))
            {
                var ids = listed.Select(d => d.DocumentId).OrderBy(g => g).ToArray();
                report.Equal("documents.container.ids", string.Join(",", new[] { first, chosen, empty }.OrderBy(g => g)), string.Join(",", ids));
                var one = listed.FirstOrDefault(d => d.DocumentId == first);
                report.Equal("documents.container.fields", FieldsText(fields), one == null ? "(missing)" : FieldsText(one.Fields));
            }
            var none = s.GetDocumentByContainerId(Guid.NewGuid());
            report.Check("documents.container-empty.empty-array", none != null && none.Length == 0, "DocumentData[0]", none == null ? "null" : "DocumentData[" + none.Length + "]");
            report.Same("documents.get-unknown.null", null, s.GetDocumentByDocumentId(Guid.NewGuid()));

            report.Equal("documents.delete-file.true", true, s.DeleteFile(fileId));
            var afterDelete = s.GetDocumentByContainerId(containerId);
            report.Check("documents.delete-file.removes-documents", afterDelete != null && afterDelete.Length == 0, "DocumentData[0]", afterDelete == null ? "null" : "DocumentData[" + afterDelete.Length + "]");
            report.Same("documents.delete-file.get-null", null, s.GetDocumentByDocumentId(first));
        }

        static void Faults(IIDBService s)
        {
            var channel = (ICommunicationObject)s;
            var unknownFile = ExpectFault("faults.file-not-found", () => s.NewFileIndex(new FileIndexData { ContainerId = Guid.NewGuid(), DocumentId = Guid.Empty, Fields = new IndexField[0], FileId = Guid.NewGuid(), Title = "x" }));
            CheckFault("faults.file-not-found", unknownFile, "FileNotFound");
            report.Equal("faults.file-not-found.channel-open", CommunicationState.Opened, channel.State);
            report.Equal("faults.file-not-found.same-channel-works", true, s.Heartbeat());
            var again = ExpectFault("faults.file-not-found-again", () => s.NewFileIndex(new FileIndexData { ContainerId = Guid.NewGuid(), DocumentId = Guid.NewGuid(), FileId = Guid.NewGuid() }));
            CheckFault("faults.file-not-found-again", again, "FileNotFound");
            report.Same("faults.same-channel-get-file", null, s.GetFile(Guid.NewGuid()));
            report.Equal("faults.channel-still-open", CommunicationState.Opened, channel.State);
        }

        static void SqlFaults(IIDBService s)
        {
            var channel = (ICommunicationObject)s;
            var sqlError = ExpectFault("sql-faults.syntax", () => s.ReturnScalar(Guid.Empty, "SELEC 1", null));
            CheckFault("sql-faults.syntax", sqlError, "SqlError");
            report.Same("sql-faults.syntax.same-channel-works", "still here", s.ReturnScalar(Guid.Empty, "SELECT @x", Ps(P("@x", "still here"))));

            var missingTable = ExpectFault("sql-faults.missing-table", () => s.ExecuteNonQuery(Guid.Empty, "DELETE FROM " + prefix + "_no_such_table", null));
            CheckFault("sql-faults.missing-table", missingTable, "SqlError");

            var unknownRequest = ExpectFault("sql-faults.unknown-request", () => s.ReturnScalar(Guid.NewGuid(), "SELECT 1", null));
            CheckFault("sql-faults.unknown-request", unknownRequest, "UnknownDatabaseRequest");

            var unknownDatabase = ExpectFault("sql-faults.unknown-database", () => s.CreateDatabaseRequest("no_such_database_" + prefix));
            CheckFault("sql-faults.unknown-database", unknownDatabase, "UnknownDatabase");

            var missingParameter = ExpectFault("sql-faults.missing-parameter", () => s.ReturnScalar(Guid.Empty, "SELECT @nope", null));
            CheckFault("sql-faults.missing-parameter", missingParameter, "InvalidArgument");

            // A failed statement inside a request: the request refuses to commit and nothing of it is kept.
            var t = Table("faults");
            s.ExecuteNonQuery(Guid.Empty, "CREATE TABLE " + t + " (id int PRIMARY KEY)", null);
            tablesCreated.Add(t);
            var request = s.CreateDatabaseRequest(null);
            s.ExecuteNonQuery(request, "INSERT INTO " + t + " VALUES (1)", null);
            var duplicate = ExpectFault("sql-faults.request.duplicate-key", () => s.ExecuteNonQuery(request, "INSERT INTO " + t + " VALUES (1)", null));
            CheckFault("sql-faults.request.duplicate-key", duplicate, "SqlError");
            var commit = ExpectFault("sql-faults.request.commit-after-error", () => s.CloseDatabaseRequest(request, true));
            CheckFault("sql-faults.request.commit-after-error", commit, "SqlError");
            s.CloseDatabaseRequest(request, false);
            report.Equal("sql-faults.request.nothing-committed", 0L, Count(s, Guid.Empty, t));

            report.Equal("sql-faults.channel-still-open", CommunicationState.Opened, channel.State);
            report.Equal("sql-faults.last-heartbeat", true, s.Heartbeat());
        }

        // Several channels at once (ConcurrentChannels), each on its own thread, each checking that every answer is its
        // own.
        static void Concurrency(int threads)
        {
            const int rounds = 5;
            var barrier = new Barrier(threads);
            var workers = Enumerable.Range(0, threads).Select(n => new Thread(() =>
            {
                IIDBService channel = null;
                var name = "concurrency.thread" + n;
                try
                {
                    channel = NewFactory().CreateChannel();
                    ((ICommunicationObject)channel).Open();
                    barrier.SignalAndWait(TimeSpan.FromSeconds(60));
                    string heartbeat = null, files = null, scalar = null;
                    for (int round = 0; round < rounds; round++)
                    {
                        var tag = "thread " + n + " round " + round;
                        if (!channel.Heartbeat() && heartbeat == null) heartbeat = tag + ": false";
                        var content = Encoding.UTF8.GetBytes(tag);
                        var id = channel.NewFile(NewFileData(content, "t" + n + ".txt", "text/plain"));
                        var got = channel.GetFile(id);
                        if ((got == null || got.Content == null || !got.Content.SequenceEqual(content) || got.Sha256 != Report.Sha256Hex(content)) && files == null) files = tag + ": " + (got == null ? "null" : Report.Describe(got.Content));
                        if (!channel.DeleteFile(id) && files == null) files = tag + ": DeleteFile false";
                        var echoed = channel.ReturnScalar(Guid.Empty, "SELECT @tag", Ps(P("@tag", tag)));
                        if (!tag.Equals(echoed) && scalar == null) scalar = tag + ": " + Report.Describe(echoed);
                    }
                    report.Check(name + ".heartbeat", heartbeat == null, "true every round", heartbeat);
                    report.Check(name + ".files", files == null, "its own content every round", files);
                    report.Check(name + ".scalar", scalar == null, "its own tag every round", scalar);
                    ((ICommunicationObject)channel).Close();
                }
                catch (Exception e)
                {
                    if (channel != null) ((ICommunicationObject)channel).Abort();
                    report.Check(name, false, null, null, DescribeException(e));
                }
            })).ToList();
            foreach (var w in workers) w.Start();
            foreach (var w in workers)
            {
                if (!w.Join(TimeSpan.FromMinutes(3))) report.Check("concurrency.joined", false, "all threads done", "a thread still runs");
            }
        }

        static void Cleanup(IIDBService s)
        {
            foreach (var t in tablesCreated) report.Equal("cleanup.drop." + t.Substring(prefix.Length + 1), -1, s.ExecuteNonQuery(Guid.Empty, "DROP TABLE " + t, null));
            tablesCreated.Clear();
            typesTableReady = false;
        }
    }
}
