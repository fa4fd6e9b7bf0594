// The corpus: T-SQL of the kind legacy clients send through ReturnDatatable (Fill), ReturnScalar (Scalar) and
// ExecuteNonQuery (NonQuery), in order, in one transaction (a database request through the bridge, a SqlTransaction
// directly), rolled back at the end so both runs start from the same database. `Difference` names an answer that is
// known to differ, and why; its values are then reported, not compared (the schema still is, unless noted).
using System;
using System.Collections.Generic;

namespace IDBService.Parity
{
    /// <summary>Error: a statement that fails (or may, as FORMAT without the locale), answered as Fill, each in a
    /// transaction of its own: a fault ends the bridge's database request (the port's rule), and Babelfish rolls the
    /// whole transaction back on an error caught by TRY/CATCH, where SQL Server keeps it.</summary>
    public enum Kind { Fill, Scalar, NonQuery, Error }

    public sealed class Statement
    {
        public string Name;
        public Kind Kind;
        public string Sql;
        public (string Name, object Value)[] Parameters = Array.Empty<(string, object)>();
        public string Difference;
    }

    public static class Corpus
    {
        static Statement S(string name, Kind kind, string sql, params (string, object)[] parameters) =>
            new Statement { Name = name, Kind = kind, Sql = sql, Parameters = parameters };

        static Statement Differs(this Statement s, string why) { s.Difference = why; return s; }

        public static List<Statement> All() => new List<Statement>
        {
            S("create-customers", Kind.NonQuery, "CREATE TABLE dbo.Customers (Id int IDENTITY(1,1) PRIMARY KEY, Name nvarchar(100) NOT NULL, City nvarchar(50) NULL, Balance money NOT NULL DEFAULT 0, Active bit NOT NULL DEFAULT 1, Since date NULL)"),
            S("insert-literals", Kind.NonQuery, "INSERT INTO dbo.Customers (Name, City, Balance, Since) VALUES (N'Müller AG', N'Zürich', 1250.50, '2019-04-01'), (N'Dupont SA', N'Genève', 0, NULL), (N'Rossi Srl', NULL, -20.25, '2021-12-31')"),
            S("insert-parameters", Kind.NonQuery, "INSERT INTO [dbo].[Customers] (Name, City, Balance) VALUES (@name, @city, @balance)", ("@name", "Smith Ltd"), ("@city", null), ("@balance", 99.90m)),
            S("count", Kind.Scalar, "SELECT COUNT(*) FROM dbo.Customers"),
            S("top", Kind.Fill, "SELECT TOP 2 Id, Name, City FROM dbo.Customers ORDER BY Name"),
            S("isnull-nolock", Kind.Fill, "SELECT Id, ISNULL(City, N'(none)') AS City FROM dbo.Customers WITH (NOLOCK) ORDER BY Id"),
            S("scalar-by-id", Kind.Scalar, "SELECT Name FROM dbo.Customers WHERE Id = @id", ("@id", 2)),
            S("update-parameters", Kind.NonQuery, "UPDATE dbo.Customers SET Balance = Balance + @delta WHERE Active = 1 AND City IS NOT NULL", ("@delta", 10m)),
            S("where-decimal", Kind.Fill, "SELECT Name, Balance FROM dbo.Customers WHERE Balance > @min ORDER BY Balance DESC", ("@min", 0m)),
            S("sum-money", Kind.Scalar, "SELECT SUM(Balance) FROM dbo.Customers"),
            S("group-by", Kind.Fill, "SELECT City, COUNT(*) AS N FROM dbo.Customers GROUP BY City ORDER BY City"),
            S("empty", Kind.Fill, "SELECT Id, Name, Balance FROM dbo.Customers WHERE 1 = 0"),
            S("scalar-no-row", Kind.Scalar, "SELECT Name FROM dbo.Customers WHERE Id = -1"),
            S("scalar-null-cell", Kind.Scalar, "SELECT City FROM dbo.Customers WHERE Id = 3"),
            S("create-orders", Kind.NonQuery, "CREATE TABLE dbo.Orders (Id int IDENTITY PRIMARY KEY, CustomerId int NOT NULL REFERENCES dbo.Customers(Id), Amount decimal(18,2) NOT NULL, OrderedAt datetime2(3) NOT NULL, Ref uniqueidentifier NOT NULL DEFAULT NEWID())"),
            S("batch-inserts", Kind.NonQuery, "INSERT INTO dbo.Orders (CustomerId, Amount, OrderedAt) VALUES (1, 100.00, '2024-01-15T10:30:00'); INSERT INTO dbo.Orders (CustomerId, Amount, OrderedAt) VALUES (1, 250.75, '2024-02-29T23:59:59.123'), (2, 80.10, '2024-03-01T00:00:00')"),
            S("scope-identity", Kind.Scalar, "INSERT INTO dbo.Orders (CustomerId, Amount, OrderedAt) VALUES (@c, @a, @t); SELECT SCOPE_IDENTITY()", ("@c", 3), ("@a", 12.5m), ("@t", new DateTime(2024, 5, 1, 8, 0, 0))),
            S("output-inserted", Kind.Fill, "INSERT INTO dbo.Orders (CustomerId, Amount, OrderedAt) OUTPUT INSERTED.Id, INSERTED.Amount VALUES (3, 5.5, '2024-04-01')"),
            S("join", Kind.Fill, "SELECT c.Name, o.Amount, o.OrderedAt FROM dbo.Customers c INNER JOIN dbo.Orders o ON o.CustomerId = c.Id ORDER BY o.Id"),
            S("window", Kind.Fill, "SELECT CustomerId, Amount, ROW_NUMBER() OVER (PARTITION BY CustomerId ORDER BY Amount DESC) AS Rn FROM dbo.Orders ORDER BY CustomerId, Rn"),
            S("cte", Kind.Fill, "WITH Totals AS (SELECT CustomerId, SUM(Amount) AS Total FROM dbo.Orders GROUP BY CustomerId) SELECT c.Name, t.Total FROM Totals t JOIN dbo.Customers c ON c.Id = t.CustomerId ORDER BY t.Total DESC"),
            S("offset-fetch", Kind.Fill, "SELECT Id, Name FROM dbo.Customers ORDER BY Id OFFSET 1 ROWS FETCH NEXT 2 ROWS ONLY"),
            S("convert-style", Kind.Scalar, "SELECT CONVERT(varchar(10), OrderedAt, 104) FROM dbo.Orders WHERE Id = 1"),
            S("date-functions", Kind.Fill, "SELECT DATEPART(year, OrderedAt) AS Y, DATEADD(day, 1, OrderedAt) AS NextDay, DATEDIFF(day, '2024-01-01', OrderedAt) AS Days FROM dbo.Orders ORDER BY Id"),
            S("getdate", Kind.Scalar, "SELECT CAST(GETDATE() AS date)"),
            S("temp-create", Kind.NonQuery, "CREATE TABLE #Work (Id int, Note nvarchar(20))"),
            S("temp-insert-select", Kind.NonQuery, "INSERT INTO #Work SELECT Id, LEFT(Name, 5) FROM dbo.Customers"),
            S("temp-read", Kind.Fill, "SELECT * FROM #Work ORDER BY Id"),
            S("table-variable", Kind.Fill, "DECLARE @t TABLE (x int); INSERT INTO @t VALUES (1), (2), (3); SELECT SUM(x) AS Total FROM @t"),
            S("proc-create", Kind.NonQuery, "CREATE PROCEDURE dbo.GetCustomerOrders @CustomerId int AS BEGIN SET NOCOUNT ON; SELECT Id, Amount FROM dbo.Orders WHERE CustomerId = @CustomerId ORDER BY Id; END"),
            S("proc-fill", Kind.Fill, "EXEC dbo.GetCustomerOrders @CustomerId = @cid", ("@cid", 1)),
            S("proc-update-create", Kind.NonQuery, "CREATE PROCEDURE dbo.Deactivate @Id int AS UPDATE dbo.Customers SET Active = 0 WHERE Id = @Id"),
            S("proc-update", Kind.NonQuery, "EXEC dbo.Deactivate @Id = 2"),
            S("nocount", Kind.NonQuery, "SET NOCOUNT ON; UPDATE dbo.Customers SET City = N'Bern' WHERE City IS NULL; SET NOCOUNT OFF"),
            S("try-catch", Kind.Error, "BEGIN TRY SELECT CAST('x' AS int) AS x END TRY BEGIN CATCH SELECT ERROR_NUMBER() AS Num END CATCH"),
            S("string-agg", Kind.Scalar, "SELECT STRING_AGG(Name, N', ') WITHIN GROUP (ORDER BY Name) FROM dbo.Customers"),
            S("format", Kind.Error, "SELECT FORMAT(1234.5, 'N2', 'en-US') AS f"),
            S("delete-parameters", Kind.NonQuery, "DELETE FROM dbo.Orders WHERE Amount < @x", ("@x", 50m)),
            // ExecuteNonQuery's count of an INSERT … OUTPUT: Babelfish answers 0 to SqlClient too (its DONE token is not
            // counted), so this checks that the bridge adds up the counts as SqlClient does, whatever the server sends.
            S("output-inserted-count", Kind.NonQuery, "INSERT INTO dbo.Orders (CustomerId, Amount, OrderedAt) OUTPUT INSERTED.Id VALUES (3, 60.00, '2024-06-01'), (3, 70.00, '2024-06-02')"),
            S("create-all-types", Kind.NonQuery, "CREATE TABLE dbo.AllTypes (k int PRIMARY KEY, ti tinyint, si smallint, i int, bi bigint, b bit, d decimal(19,4), n numeric(10,3), m money, sm smallmoney, r real, f float, dt date, dtm datetime, d2 datetime2(7), sdt smalldatetime, dto datetimeoffset(7), tm time(7), c char(5), vc varchar(20), nc nchar(3), nvc nvarchar(max), x xml, bin binary(4), vb varbinary(max), g uniqueidentifier)"),
            S("insert-all-types", Kind.NonQuery, "INSERT INTO dbo.AllTypes VALUES (1, 200, -300, 70000, 9000000000, 1, 123456789012345.6789, -1234567.891, 922337203685477.5807, -214748.3648, 1.5, 2.25, '2024-02-29', '2024-02-29 23:59:59.997', '2024-02-29 23:59:59.1234560', '2024-02-29 23:59', '2024-02-29 23:59:59.5 +05:30', '12:34:56.125', 'ab', 'varchar', N'日本語', N'Grüße 😀', '<a>1</a>', 0xDEADBEEF, 0x00FF, 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"),
            S("fill-all-types", Kind.Fill, "SELECT * FROM dbo.AllTypes ORDER BY k"),
            S("scalar-decimal", Kind.Scalar, "SELECT d FROM dbo.AllTypes WHERE k = 1"),
            S("scalar-datetime2", Kind.Scalar, "SELECT d2 FROM dbo.AllTypes WHERE k = 1"),
            S("scalar-guid", Kind.Scalar, "SELECT g FROM dbo.AllTypes WHERE k = 1"),
            S("scalar-varbinary", Kind.Scalar, "SELECT vb FROM dbo.AllTypes WHERE k = 1"),
            S("scalar-bigint", Kind.Scalar, "SELECT bi FROM dbo.AllTypes WHERE k = 1"),
            S("scalar-tinyint", Kind.Scalar, "SELECT ti FROM dbo.AllTypes WHERE k = 1").Differs("ReturnScalar's object has no unsignedByte in the contract's values: a Byte cell comes back as Int16"),
            S("scalar-datetimeoffset", Kind.Scalar, "SELECT dto FROM dbo.AllTypes WHERE k = 1").Differs("no DateTimeOffset in the contract's scalar values: the instant comes back as a DateTime in UTC"),
            S("scalar-time", Kind.Scalar, "SELECT tm FROM dbo.AllTypes WHERE k = 1").Differs("no TimeSpan in the contract's scalar values: it comes back as its text"),
            S("param-string", Kind.Scalar, "SELECT CAST(@s AS nvarchar(20))", ("@s", "plain text")),
            S("param-datetime", Kind.Scalar, "SELECT @d", ("@d", new DateTime(2024, 1, 2, 3, 4, 5, 678))),
            S("param-guid", Kind.Scalar, "SELECT @g", ("@g", new Guid("00112233-4455-6677-8899-aabbccddeeff"))),
            S("param-bytes", Kind.Scalar, "SELECT DATALENGTH(@b)", ("@b", new byte[] { 1, 2, 3 })),
            S("param-bool-long", Kind.Fill, "SELECT @t AS t, @l AS l, @f AS f", ("@t", true), ("@l", 1L << 40), ("@f", 0.25d)),
            S("local-variables", Kind.Scalar, "DECLARE @n int = 20; SELECT @n + @k", ("@k", 22)),
            S("trancount", Kind.Scalar, "SELECT @@TRANCOUNT").Differs("the bridge runs a request at transaction depth 2, so that a COMMIT in client SQL cannot escape (sqlserver-database.ts)"),
            S("error-missing-table", Kind.Error, "SELECT * FROM dbo.NoSuchTable"),
            S("error-conversion", Kind.Error, "SELECT CAST(N'abc' AS int)"),
        };
    }
}
