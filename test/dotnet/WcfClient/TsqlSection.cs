// The section only SQL Server (and Babelfish) answer: T-SQL as legacy clients send it, and the column types the
// DataTable gains for SQL Server (tinyint Byte, datetimeoffset DateTimeOffset, time TimeSpan), read by
// System.Data's own DataTable deserializer through Microsoft's WCF client (`--backend sqlserver`: run by default
// there, before cleanup; `--sections tsql` alone).
using System;
using System.Data;
using System.Linq;
using IDBService.Contracts;

namespace IDBService.E2E
{
    public static partial class Scenario
    {
        static void Tsql(IIDBService s)
        {
            var t = Table("tsql");
            report.Equal("tsql.create.-1", -1, s.ExecuteNonQuery(Guid.Empty,
                "CREATE TABLE " + t + " (k int IDENTITY(1,1) PRIMARY KEY, ti tinyint, dto datetimeoffset(7), tm time(7), m money, d decimal(38,10), g uniqueidentifier, n nvarchar(50))", null));
            tablesCreated.Add(t);
            report.Equal("tsql.insert.1", 1, s.ExecuteNonQuery(Guid.Empty,
                "INSERT INTO [dbo]." + t + " (ti, dto, tm, m, d, g, n) VALUES (255, '2024-02-29 23:59:59.5 +05:30', '12:34:56.125', 922337203685477.5807, 12345678901234567.0123456789, 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', N'Grüße')", null));
            report.Equal("tsql.insert-nulls.1", 1, s.ExecuteNonQuery(Guid.Empty, "INSERT INTO " + t + " (ti) VALUES (NULL)", null));

            var table = s.ReturnDatatable(Guid.Empty, "SELECT * FROM " + t + " ORDER BY k", null);
            if (!report.Check("tsql.table.not-null", table != null)) return;
            report.Equal("tsql.table.schema", "k:Int32,ti:Byte,dto:DateTimeOffset,tm:TimeSpan,m:Decimal,d:Decimal,g:Guid,n:String",
                string.Join(",", table.Columns.Cast<DataColumn>().Select(c => c.ColumnName + ":" + c.DataType.Name)));
            if (report.Equal("tsql.table.rows", 2, table.Rows.Count))
            {
                var row = table.Rows[0];
                report.Same("tsql.byte", (byte)255, row["ti"]);
                report.Same("tsql.datetimeoffset", new DateTimeOffset(2024, 2, 29, 23, 59, 59, 500, TimeSpan.FromMinutes(330)), row["dto"]);
                report.Equal("tsql.datetimeoffset.offset", TimeSpan.FromMinutes(330), ((DateTimeOffset)row["dto"]).Offset);
                report.Same("tsql.timespan", new TimeSpan(0, 12, 34, 56, 125), row["tm"]);
                report.Same("tsql.money", 922337203685477.5807m, row["m"]);
                report.Same("tsql.decimal", 12345678901234567.0123456789m, row["d"]);
                report.Same("tsql.guid", new Guid("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), row["g"]);
                report.Same("tsql.nvarchar", "Grüße", row["n"]);
                foreach (var c in new[] { "dto", "tm", "m", "g", "n" })
                    report.Check("tsql.null." + c, table.Rows[1].IsNull(c));
            }
            try
            {
                var xml = new System.IO.StringWriter();
                table.WriteXml(xml, XmlWriteMode.WriteSchema);
                var reread = new DataTable();
                reread.ReadXml(new System.IO.StringReader(xml.ToString()));
                report.Same("tsql.usable.xml-round-trip", table.Rows[0]["dto"], reread.Rows[0]["dto"]);
            }
            catch (Exception e)
            {
                report.Check("tsql.usable", false, null, null, DescribeException(e));
            }

            // T-SQL of the kind legacy clients send: TOP, ISNULL, N'' literals, bracketed names, NOLOCK, batches.
            report.Same("tsql.top-isnull", "none", s.ReturnScalar(Guid.Empty, "SELECT TOP 1 ISNULL(n, N'none') FROM [dbo].[" + t + "] WITH (NOLOCK) ORDER BY k DESC", null));
            report.Same("tsql.scope-identity", 3m, s.ReturnScalar(Guid.Empty, "SET NOCOUNT ON; INSERT INTO " + t + " (ti) VALUES (@ti); SELECT SCOPE_IDENTITY()", Ps(P("@ti", (short)1))));
            report.Equal("tsql.batch-count", 3, s.ExecuteNonQuery(Guid.Empty, "UPDATE " + t + " SET ti = 2 WHERE k = 3; UPDATE " + t + " SET n = N'x' WHERE k < 3", null));
            report.Equal("tsql.nocount.-1", -1, s.ExecuteNonQuery(Guid.Empty, "SET NOCOUNT ON; DELETE FROM " + t + " WHERE k = 3", null));
            var local = s.ReturnScalar(Guid.Empty, "DECLARE @n int = 20; SELECT @n + @k", Ps(P("@k", 22)));
            report.Same("tsql.local-variable", 42, local);
        }
    }
}
