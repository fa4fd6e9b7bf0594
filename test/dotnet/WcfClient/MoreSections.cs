// The sections of the .NET client that Mono's E2EClient does not have (test/wcf-shared/Sections.cs has the shared
// ones): every declared column type of the spec's table (on SQL Server the T-SQL names of those types), channels opened
// in a row, a 50 MB file, message size quotas on both sides, a reader's refusals.
using System;
using System.Collections.Generic;
using System.Data;
using System.Linq;
using System.ServiceModel;
using IDBService.Contracts;

namespace IDBService.E2E
{
    public static partial class Scenario
    {
        static void RunOwnSection(string name, IIDBService channel)
        {
            switch (name)
            {
                case "datatable-types": DataTableTypes(channel); break;
                case "channels": Channels(); break;
                case "bigfile": BigFile(channel); break;
                case "quota": Quota(channel); break;
                case "reader": Reader(channel); break;
                case "tsql": Tsql(channel); break;
            }
        }

        sealed class TypedColumn
        {
            public string Name, Declared;
            public Type Type;
            public object Value;
            public DataSetDateTime Mode = DataSetDateTime.UnspecifiedLocal;
            public bool Postgres = true;
            /// <summary>The DataTable's type and value where they differ from ReturnScalar's (SQL Server's tinyint:
            /// Fill gives a Byte, which the contract's scalar values do not have).</summary>
            public Type TableType;
            public object TableValue;
        }

        static readonly DateTime UtcStamp = new DateTime(2024, 2, 29, 23, 59, 59, 123, DateTimeKind.Utc);
        static readonly DateTime Day = new DateTime(2024, 2, 29, 0, 0, 0, DateTimeKind.Unspecified);

        // One column per declared type name of the spec's table ("Column types map from the declared type name"):
        // the .NET type it must arrive as, and a value of that type. PostgreSQL lacks some of SQLite's names.
        static List<TypedColumn> SpecColumns()
        {
            if (SqlServer) return SqlServerColumns();
            var list = new List<TypedColumn>();
            void Add(string name, string declared, Type type, object value, bool postgres = true, DataSetDateTime mode = DataSetDateTime.UnspecifiedLocal)
            {
                list.Add(new TypedColumn { Name = name, Declared = declared, Type = type, Value = value, Postgres = postgres, Mode = mode });
            }
            Add("c_int", "int", typeof(int), int.MaxValue);
            Add("c_integer", "integer", typeof(int), -5);
            Add("c_int4", "int4", typeof(int), 7);
            Add("c_mediumint", "mediumint", typeof(int), 8388607, postgres: false);
            Add("c_bigint", "bigint", typeof(long), long.MinValue);
            Add("c_int8", "int8", typeof(long), 9007199254740993L);
            Add("c_smallint", "smallint", typeof(short), short.MinValue);
            Add("c_int2", "int2", typeof(short), (short)12);
            Add("c_tinyint", "tinyint", typeof(short), (short)255, postgres: false);
            // SQLite stores a NUMERIC-affinity value that is no integer as a REAL: 18 digits would not survive there.
            Add("c_numeric", "numeric(18,4)", typeof(decimal), Sqlite ? 1234567.8901m : 12345678901234.5678m);
            Add("c_decimal", "decimal(10,2)", typeof(decimal), -0.01m);
            Add("c_money", "money", typeof(decimal), 1949.75m);
            Add("c_real", "real", typeof(float), 1.5f);
            Add("c_float4", "float4", typeof(float), -0.25f);
            Add("c_double", "double", typeof(double), 0.1d, postgres: false);
            Add("c_double_precision", "double precision", typeof(double), Math.PI);
            Add("c_float", "float", typeof(double), 1e300);
            Add("c_float8", "float8", typeof(double), -2.5e-300);
            Add("c_boolean", "boolean", typeof(bool), true);
            Add("c_bool", "bool", typeof(bool), false);
            Add("c_bit", "bit", typeof(bool), true, postgres: false);
            Add("c_text", "text", typeof(string), NonAscii);
            Add("c_varchar", "varchar(64)", typeof(string), "varchar <&>");
            Add("c_char", "char(4)", typeof(string), "ABCD");
            Add("c_nvarchar", "nvarchar(64)", typeof(string), "nvarchar ✓", postgres: false);
            Add("c_nchar", "nchar(3)", typeof(string), "日本語", postgres: false);
            Add("c_clob", "clob", typeof(string), "clob\r\nline two\ttab", postgres: false);
            Add("c_character_varying", "character varying(32)", typeof(string), "  padded  ");
            Add("c_blob", "blob", typeof(byte[]), new byte[] { 0, 1, 2, 255 }, postgres: false);
            Add("c_bytea", "bytea", typeof(byte[]), Blob);
            Add("c_varbinary", "varbinary(16)", typeof(byte[]), new byte[0], postgres: false);
            Add("c_binary", "binary(4)", typeof(byte[]), new byte[] { 0xde, 0xad, 0xbe, 0xef }, postgres: false);
            Add("c_timestamp", "timestamp", typeof(DateTime), Leap, mode: DataSetDateTime.Unspecified);
            Add("c_datetime", "datetime", typeof(DateTime), new DateTime(1, 1, 1, 0, 0, 0, DateTimeKind.Unspecified).AddTicks(1), postgres: false, mode: DataSetDateTime.Unspecified);
            Add("c_date", "date", typeof(DateTime), Day, mode: DataSetDateTime.Unspecified);
            Add("c_timestamptz", "timestamptz", typeof(DateTime), UtcStamp, mode: DataSetDateTime.Utc);
            Add("c_datetime2", "datetime2", typeof(DateTime), new DateTime(9999, 12, 31, 23, 59, 59, DateTimeKind.Unspecified).AddTicks(9999999), postgres: false, mode: DataSetDateTime.Unspecified);
            Add("c_uuid", "uuid", typeof(Guid), SomeGuid);
            Add("c_uniqueidentifier", "uniqueidentifier", typeof(Guid), Guid.Empty, postgres: false);
            Add("c_guid", "guid", typeof(Guid), new Guid("00112233-4455-6677-8899-aabbccddeeff"), postgres: false);
            return list.Where(c => Sqlite || c.Postgres).ToList();
        }

        // SQL Server: the spec's names T-SQL has (the others, int4, boolean, uuid, timestamp (T-SQL's rowversion) ...,
        // it has not), under the same column names, plus a few of its own; types and values as SqlDataAdapter.Fill and
        // ExecuteScalar give them. A DateTime parameter is a datetime (SqlClient's choice: 1753 to 9999, 1/300 s), so
        // the date columns hold values a datetime carries exactly. Their DateTimeMode is the spec's Unspecified (values
        // without a time zone are written without an offset), where Fill would leave UnspecifiedLocal.
        static List<TypedColumn> SqlServerColumns()
        {
            var list = new List<TypedColumn>();
            void Add(string name, string declared, Type type, object value, DataSetDateTime mode = DataSetDateTime.UnspecifiedLocal, Type tableType = null, object tableValue = null)
            {
                list.Add(new TypedColumn { Name = name, Declared = declared, Type = type, Value = value, Mode = mode, TableType = tableType, TableValue = tableValue });
            }
            Add("c_int", "int", typeof(int), int.MaxValue);
            Add("c_integer", "integer", typeof(int), -5);
            Add("c_bigint", "bigint", typeof(long), long.MinValue);
            Add("c_smallint", "smallint", typeof(short), short.MinValue);
            // Fill gives a Byte; ReturnScalar, whose values have no Byte, an Int16.
            Add("c_tinyint", "tinyint", typeof(short), (short)255, tableType: typeof(byte), tableValue: (byte)255);
            Add("c_numeric", "numeric(18,4)", typeof(decimal), 12345678901234.5678m);
            Add("c_decimal", "decimal(10,2)", typeof(decimal), -0.01m);
            Add("c_money", "money", typeof(decimal), 1949.75m);
            Add("c_smallmoney", "smallmoney", typeof(decimal), -214748.3648m);
            Add("c_real", "real", typeof(float), 1.5f);
            Add("c_float4", "float(24)", typeof(float), -0.25f);
            Add("c_double_precision", "double precision", typeof(double), Math.PI);
            Add("c_float", "float", typeof(double), 1e300);
            Add("c_float8", "float(53)", typeof(double), -2.5e-300);
            Add("c_bit", "bit", typeof(bool), true);
            // T-SQL's text is the legacy 8-bit type: Unicode text is nvarchar(max) or ntext.
            Add("c_text", "nvarchar(max)", typeof(string), NonAscii);
            Add("c_ntext", "ntext", typeof(string), "ntext ✓ 日本");
            Add("c_varchar", "varchar(64)", typeof(string), "varchar <&>");
            Add("c_char", "char(4)", typeof(string), "ABCD");
            Add("c_nvarchar", "nvarchar(64)", typeof(string), "nvarchar ✓");
            Add("c_nchar", "nchar(3)", typeof(string), "日本語");
            // SQL Server takes the ISO name `character varying(32)`; Babelfish does not ("'varying' is not currently
            // supported"): its own name, the same type.
            Add("c_character_varying", "varchar(32)", typeof(string), "  padded  ");
            Add("c_bytea", "varbinary(max)", typeof(byte[]), Blob);
            Add("c_varbinary", "varbinary(16)", typeof(byte[]), new byte[0]);
            Add("c_binary", "binary(4)", typeof(byte[]), new byte[] { 0xde, 0xad, 0xbe, 0xef });
            Add("c_datetime", "datetime", typeof(DateTime), new DateTime(1753, 1, 1, 0, 0, 0, 3, DateTimeKind.Unspecified), DataSetDateTime.Unspecified);
            Add("c_smalldatetime", "smalldatetime", typeof(DateTime), new DateTime(2079, 6, 6, 23, 59, 0, DateTimeKind.Unspecified), DataSetDateTime.Unspecified);
            Add("c_date", "date", typeof(DateTime), Day, DataSetDateTime.Unspecified);
            // Whole seconds: Babelfish stores a datetime parameter's fraction in a datetime2 up to a millisecond short
            // (.500 becomes .499, .990 .989; SQL Server gives .5000000 and .9900000).
            Add("c_datetime2", "datetime2", typeof(DateTime), new DateTime(9999, 12, 31, 23, 59, 59, DateTimeKind.Unspecified), DataSetDateTime.Unspecified);
            Add("c_uniqueidentifier", "uniqueidentifier", typeof(Guid), Guid.Empty);
            return list;
        }

        /// <summary>A column's parameter in the INSERT: AddWithValue makes a null an nvarchar NULL, which SQL Server
        /// converts to a binary type only when told (error 257), as a client writing for it does.</summary>
        static string InsertValue(TypedColumn c)
        {
            return SqlServer && c.Type == typeof(byte[]) ? "CONVERT(" + c.Declared + ", @" + c.Name + ")" : "@" + c.Name;
        }

        static string DescribeColumn(DataColumn c)
        {
            return c.ColumnName + ":" + c.DataType.Name + (c.DataType == typeof(DateTime) ? "/" + c.DateTimeMode : "");
        }

        static void DataTableTypes(IIDBService s)
        {
            var columns = SpecColumns();
            var t = Table("spec_types");
            report.Equal("datatable-types.create.-1", -1, s.ExecuteNonQuery(Guid.Empty, "CREATE TABLE " + t + " (k int, " + string.Join(", ", columns.Select(c => c.Name + " " + c.Declared)) + ")", null));
            tablesCreated.Add(t);
            var insert = "INSERT INTO " + t + " VALUES (@k, " + string.Join(", ", columns.Select(InsertValue)) + ")";
            report.Equal("datatable-types.insert-values.1", 1, s.ExecuteNonQuery(Guid.Empty, insert, new[] { P("k", 1) }.Concat(columns.Select(c => P(c.Name, c.Value))).ToArray()));
            report.Equal("datatable-types.insert-nulls.1", 1, s.ExecuteNonQuery(Guid.Empty, insert, new[] { P("k", 2) }.Concat(columns.Select(c => P(c.Name, null))).ToArray()));

            var expectedSchema = "k:Int32," + string.Join(",", columns.Select(c => c.Name + ":" + (c.TableType ?? c.Type).Name + (c.Type == typeof(DateTime) ? "/" + c.Mode : "")));
            var table = s.ReturnDatatable(Guid.Empty, "SELECT * FROM " + t + " ORDER BY k", null);
            if (!report.Check("datatable-types.not-null", table != null)) return;
            report.Equal("datatable-types.name", "Table", table.TableName);
            report.Equal("datatable-types.schema", expectedSchema, string.Join(",", table.Columns.Cast<DataColumn>().Select(DescribeColumn)));
            if (report.Equal("datatable-types.rows", 2, table.Rows.Count))
            {
                foreach (var c in columns)
                {
                    if (!table.Columns.Contains(c.Name)) continue;
                    report.Same("datatable-types.row1." + c.Name, c.TableValue ?? c.Value, table.Rows[0][c.Name]);
                    report.Check("datatable-types.row2." + c.Name + ".dbnull", table.Rows[1][c.Name] is DBNull, "DBNull", Report.Describe(table.Rows[1][c.Name]));
                    report.Check("datatable-types.row2." + c.Name + ".is-null", table.Rows[1].IsNull(c.Name));
                }
            }
            // The table is a DataTable a program goes on using: a row added, a copy taken, XML written and read back.
            try
            {
                var copy = table.Copy();
                copy.Rows.Add(copy.NewRow());
                report.Equal("datatable-types.usable.copy-rows", 3, copy.Rows.Count);
                var xml = new System.IO.StringWriter();
                table.WriteXml(xml, XmlWriteMode.WriteSchema);
                var reread = new DataTable();
                reread.ReadXml(new System.IO.StringReader(xml.ToString()));
                report.Equal("datatable-types.usable.xml-round-trip", expectedSchema, string.Join(",", reread.Columns.Cast<DataColumn>().Select(DescribeColumn)));
            }
            catch (Exception e)
            {
                report.Check("datatable-types.usable", false, null, null, DescribeException(e));
            }

            // Empty results keep their schema, DateTimeMode included.
            var empty = s.ReturnDatatable(Guid.Empty, "SELECT * FROM " + t + " WHERE k < 0", null);
            if (report.Check("datatable-types.empty.not-null", empty != null))
            {
                report.Equal("datatable-types.empty.rows", 0, empty.Rows.Count);
                report.Equal("datatable-types.empty.schema", expectedSchema, string.Join(",", empty.Columns.Cast<DataColumn>().Select(DescribeColumn)));
            }
            // One column, many rows, nulls between: every other row has a null cell.
            var sparse = s.ReturnDatatable(Guid.Empty, Series(200, "x", "x, CASE WHEN x % 2 = 0 THEN NULL ELSE 'odd' END AS y"), null);
            if (report.Check("datatable-types.sparse.not-null", sparse != null) && report.Equal("datatable-types.sparse.rows", 200, sparse.Rows.Count))
            {
                bool ok = true;
                for (int i = 0; i < 200; i++) ok &= (i % 2 == 0) ? "odd".Equals(sparse.Rows[i]["y"]) : sparse.Rows[i]["y"] is DBNull;
                report.Check("datatable-types.sparse.nulls-where-they-were", ok);
            }

            // ReturnScalar of every type: the same columns, one cell each.
            foreach (var c in columns)
            {
                report.Same("scalar-types." + c.Name, c.Value, s.ReturnScalar(Guid.Empty, "SELECT " + c.Name + " FROM " + t + " WHERE k = 1", null));
                report.Same("scalar-types." + c.Name + ".null", null, s.ReturnScalar(Guid.Empty, "SELECT " + c.Name + " FROM " + t + " WHERE k = 2", null));
            }
        }

        // A client that opens a channel per call: the pooled socket gets a new session (preamble) each time.
        static void Channels()
        {
            const int inARow = 100;
            int ok = 0;
            string first = null;
            for (int i = 0; i < inARow; i++)
            {
                var channel = factory.CreateChannel();
                try
                {
                    ((ICommunicationObject)channel).Open();
                    if (channel.Heartbeat()) ok++;
                    ((ICommunicationObject)channel).Close();
                }
                catch (Exception e)
                {
                    ((ICommunicationObject)channel).Abort();
                    if (first == null) first = i + ": " + DescribeException(e);
                }
            }
            report.Check("channels.in-a-row.same-factory", ok == inARow, inARow + " heartbeats", ok + (first == null ? "" : ", first error " + first));

            // A factory per channel, as code that news up a client per call does.
            ok = 0;
            first = null;
            for (int i = 0; i < 20; i++)
            {
                var f = NewFactory();
                var channel = f.CreateChannel();
                try
                {
                    if (channel.Heartbeat()) ok++;
                    ((ICommunicationObject)channel).Close();
                    f.Close();
                }
                catch (Exception e)
                {
                    ((ICommunicationObject)channel).Abort();
                    f.Abort();
                    if (first == null) first = i + ": " + DescribeException(e);
                }
            }
            report.Check("channels.in-a-row.factory-each", ok == 20, "20 heartbeats", ok + (first == null ? "" : ", first error " + first));

            // A channel aborted in the middle (no End record) does not hurt the next one.
            var aborted = factory.CreateChannel();
            aborted.Heartbeat();
            ((ICommunicationObject)aborted).Abort();
            var after = factory.CreateChannel();
            report.Equal("channels.after-abort.heartbeat", true, after.Heartbeat());
            ((ICommunicationObject)after).Close();
        }

        // 50 MB up and down on one channel (the binding's 64 MiB quotas).
        static void BigFile(IIDBService s)
        {
            var content = RandomBytes(50 * 1000 * 1000);
            var before = DateTime.UtcNow;
            var id = s.NewFile(NewFileData(content, "big.bin", "application/octet-stream"));
            var got = s.GetFile(id);
            CheckFile("bigfile.50MB.get", got, id, content, "big.bin", "application/octet-stream", before);
            report.Equal("bigfile.50MB.delete", true, s.DeleteFile(id));
            report.Equal("bigfile.after.heartbeat", true, s.Heartbeat());
        }

        static bool IsQuotaError(Exception e)
        {
            for (var x = e; x != null; x = x.InnerException)
            {
                if (x is QuotaExceededException) return true;
                if (x is CommunicationException && x.Message.IndexOf("quota", StringComparison.OrdinalIgnoreCase) >= 0) return true;
            }
            return false;
        }

        // MaxReceivedMessageSize exceeded by a reply (the client's quota) and by a request (the server's).
        static void Quota(IIDBService s)
        {
            var content = RandomBytes(MiB);
            var id = s.NewFile(NewFileData(content, "quota.bin", "application/octet-stream"));

            // The client's side: WCF's default 64 KiB quota, a 1 MiB reply.
            var small = options.Factory(65536);
            var channel = small.CreateChannel();
            try
            {
                channel.GetFile(id);
                report.Check("quota.client.exceeded", false, "an exception", "the file arrived");
            }
            catch (Exception e)
            {
                report.Check("quota.client.exceeded", IsQuotaError(e), "QuotaExceededException", DescribeException(e));
                report.Info("quota.client.exception", DescribeException(e));
            }
            ((ICommunicationObject)channel).Abort();
            var next = small.CreateChannel();
            report.Equal("quota.client.next-channel-works", true, next.Heartbeat());
            ((ICommunicationObject)next).Close();
            small.Close();

            // The server's side: a request over its maximum (MAX_MESSAGE_MB), under the client's own 64 MiB.
            var over = RandomBytes(serverMaxMB * MiB + 4096);
            var big = NewFactory();
            var sender = big.CreateChannel();
            try
            {
                sender.NewFile(NewFileData(over, "over.bin", "application/octet-stream"));
                report.Check("quota.server.exceeded", false, "an exception", "the server took it");
            }
            catch (Exception e)
            {
                report.Check("quota.server.exceeded", e is CommunicationException && !(e is FaultException), "CommunicationException", DescribeException(e));
                report.Info("quota.server.exception", DescribeException(e));
                report.Equal("quota.server.channel-faulted", CommunicationState.Faulted, ((ICommunicationObject)sender).State);
            }
            ((ICommunicationObject)sender).Abort();
            var again = big.CreateChannel();
            report.Equal("quota.server.next-channel-works", true, again.Heartbeat());
            var still = again.GetFile(id);
            report.Check("quota.server.next-channel-reads", still != null && still.Content.SequenceEqual(content));
            ((ICommunicationObject)again).Close();
            big.Close();
            report.Equal("quota.after.same-channel", true, s.DeleteFile(id));
        }

        // A reader (roles file): reads work, writer operations and writing SQL are AccessDenied, the channel goes on.
        static void Reader(IIDBService s)
        {
            var channel = (ICommunicationObject)s;
            report.Equal("reader.heartbeat", true, s.Heartbeat());
            report.Same("reader.scalar", 42L, s.ReturnScalar(Guid.Empty, "SELECT 42", null));
            var denied = ExpectFault("reader.nonquery", () => s.ExecuteNonQuery(Guid.Empty, "CREATE TABLE " + Table("reader") + " (v int)", null));
            CheckFault("reader.nonquery", denied, "AccessDenied");
            report.Equal("reader.nonquery.channel-open", CommunicationState.Opened, channel.State);
            var newFile = ExpectFault("reader.new-file", () => s.NewFile(NewFileData(new byte[] { 1 }, "r.bin", "application/octet-stream")));
            CheckFault("reader.new-file", newFile, "AccessDenied");
            var request = ExpectFault("reader.create-request", () => s.CreateDatabaseRequest(null));
            CheckFault("reader.create-request", request, "AccessDenied");
            var sneaky = ExpectFault("reader.write-through-scalar", () => s.ReturnScalar(Guid.Empty, "CREATE TABLE " + Table("reader2") + " (v int)", null));
            CheckFault("reader.write-through-scalar", sneaky, "AccessDenied");
            report.Same("reader.get-file-unknown.null", null, s.GetFile(Guid.NewGuid()));
            report.Equal("reader.channel-still-open", CommunicationState.Opened, channel.State);
            report.Equal("reader.last-heartbeat", true, s.Heartbeat());
        }
    }
}
