// Calls the bridge through the client dotnet-svcutil generates from the published description (namespace Generated,
// Task-based methods), with the generated configuration as it stands: `new IDBServiceClient()` takes the binding
// (GetBindingForEndpoint) and the address and DNS identity (GetEndpointAddress) the description declares; only the
// caller's Windows credentials are set here, as a program would. Heartbeat, ReturnDatatable into System.Data.DataTable
// with one column per declared type name of the spec's table, ReturnScalar into object, NewFile/GetFile, a SOAP fault.
// JSON-line checks (test/wcf-shared/Report.cs); the binding the configuration built is reported as an info line.
// Usage: SvcutilClient [--user DOMAIN\name --password secret]
using System;
using System.Data;
using System.Diagnostics;
using System.Linq;
using System.Net;
using System.ServiceModel;
using System.Text;
using System.Threading.Tasks;
using IDBService.E2E;
using Generated;

public static class Program
{
    static readonly Report report = new Report();

    public static int Main(string[] args)
    {
        Console.OutputEncoding = new UTF8Encoding(false);
        var watch = Stopwatch.StartNew();
        var client = new IDBServiceClient();
        var user = Option(args, "--user");
        if (user != null)
        {
            var parts = user.Split('\\');
            client.ClientCredentials.Windows.ClientCredential = new NetworkCredential(parts[1], Option(args, "--password"), parts[0]);
        }
        var binding = (NetTcpBinding)client.Endpoint.Binding;
        report.Info("svcutil.binding", binding.Security.Mode + "/" + binding.Security.Transport.ClientCredentialType + "/" + binding.Security.Transport.ProtectionLevel
            + " " + client.Endpoint.Address.Uri + " " + (client.Endpoint.Address.Identity == null ? "no-identity" : client.Endpoint.Address.Identity.IdentityClaim.Resource));
        try
        {
            Run(client).GetAwaiter().GetResult();
            client.Close();
        }
        catch (Exception e)
        {
            report.Check("svcutil", false, null, null, e.GetType().FullName + ": " + e.Message);
            client.Abort();
        }
        report.Summary(watch.ElapsedMilliseconds);
        return report.Failed == 0 ? 0 : 1;
    }

    static string Option(string[] args, string name)
    {
        var i = Array.IndexOf(args, name);
        return i >= 0 && i + 1 < args.Length ? args[i + 1] : null;
    }

    // One column per declared type name of the spec's table (SQLite), the .NET type it must arrive as, and a value.
    static readonly (string Declared, Type Type, object Value)[] Columns =
    {
        ("int", typeof(int), int.MaxValue), ("integer", typeof(int), -5), ("int4", typeof(int), 7), ("mediumint", typeof(int), 8388607),
        ("bigint", typeof(long), long.MinValue), ("int8", typeof(long), 9007199254740993L),
        ("smallint", typeof(short), short.MinValue), ("int2", typeof(short), (short)12), ("tinyint", typeof(short), (short)255),
        ("numeric(18,4)", typeof(decimal), 1234567.8901m), ("decimal(10,2)", typeof(decimal), -0.01m), ("money", typeof(decimal), 1949.75m),
        ("real", typeof(float), 1.5f), ("float4", typeof(float), -0.25f),
        ("double", typeof(double), 0.1d), ("double precision", typeof(double), Math.PI), ("float", typeof(double), 1e300), ("float8", typeof(double), -2.5e-300),
        ("boolean", typeof(bool), true), ("bool", typeof(bool), false), ("bit", typeof(bool), true),
        ("text", typeof(string), "Grüße, 😀 — ✓ \"<&>\""), ("varchar(64)", typeof(string), "varchar"), ("char(4)", typeof(string), "ABCD"),
        ("nvarchar(64)", typeof(string), "nvarchar ✓"), ("nchar(3)", typeof(string), "日本語"), ("clob", typeof(string), "clob\r\nline two"),
        ("character varying(32)", typeof(string), "  padded  "),
        ("blob", typeof(byte[]), new byte[] { 0, 1, 2, 255 }), ("bytea", typeof(byte[]), new byte[] { 9 }), ("varbinary(16)", typeof(byte[]), new byte[0]),
        ("binary(4)", typeof(byte[]), new byte[] { 0xde, 0xad, 0xbe, 0xef }),
        ("timestamp", typeof(DateTime), new DateTime(2024, 2, 29, 23, 59, 59, 123)), ("datetime", typeof(DateTime), new DateTime(2001, 2, 3, 4, 5, 6)),
        ("date", typeof(DateTime), new DateTime(2024, 2, 29)), ("timestamptz", typeof(DateTime), new DateTime(2024, 2, 29, 23, 59, 59, 123, DateTimeKind.Utc)),
        ("datetime2", typeof(DateTime), new DateTime(9999, 12, 31, 23, 59, 59)),
        ("uuid", typeof(Guid), new Guid("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")), ("uniqueidentifier", typeof(Guid), Guid.Empty),
        ("guid", typeof(Guid), new Guid("00112233-4455-6677-8899-aabbccddeeff")),
    };

    static QueryParameter P(string name, object value) => new QueryParameter { Name = name, Value = value };

    static async Task Run(IDBServiceClient client)
    {
        report.Equal("svcutil.heartbeat", true, await client.HeartbeatAsync());

        var names = Columns.Select((c, i) => "c" + i).ToArray();
        var table = "svcutil_types_" + Guid.NewGuid().ToString("N");
        report.Equal("svcutil.create", -1, await client.ExecuteNonQueryAsync(Guid.Empty,
            "CREATE TABLE " + table + " (k int, " + string.Join(", ", Columns.Select((c, i) => names[i] + " " + c.Declared)) + ")", null));
        var insert = "INSERT INTO " + table + " VALUES (@k, " + string.Join(", ", names.Select(n => "@" + n)) + ")";
        report.Equal("svcutil.insert", 1, await client.ExecuteNonQueryAsync(Guid.Empty, insert,
            new[] { P("k", 1) }.Concat(Columns.Select((c, i) => P(names[i], c.Value))).ToArray()));
        report.Equal("svcutil.insert-nulls", 1, await client.ExecuteNonQueryAsync(Guid.Empty, insert,
            new[] { P("k", 2) }.Concat(Columns.Select((c, i) => P(names[i], null))).ToArray()));
        DataTable result = await client.ReturnDatatableAsync(Guid.Empty, "SELECT * FROM " + table + " WHERE k >= @min ORDER BY k", new[] { P("@min", 1) });
        if (report.Check("svcutil.datatable.not-null", result != null) && report.Equal("svcutil.datatable.rows", 2, result.Rows.Count))
        {
            report.Equal("svcutil.datatable.columns", Columns.Length + 1, result.Columns.Count);
            for (var i = 0; i < Columns.Length && i + 1 < result.Columns.Count; i++)
            {
                var name = "svcutil.datatable." + Columns[i].Declared;
                report.Equal(name + ".type", Columns[i].Type, result.Columns[i + 1].DataType);
                report.Same(name + ".value", Columns[i].Value, result.Rows[0][i + 1]);
                report.Check(name + ".null", result.Rows[1][i + 1] is DBNull, "DBNull", Report.Describe(result.Rows[1][i + 1]));
            }
        }

        report.Same("svcutil.scalar.long", 2L, await client.ReturnScalarAsync(Guid.Empty, "SELECT count(*) FROM " + table, null));
        report.Same("svcutil.scalar.string", "ABCD", await client.ReturnScalarAsync(Guid.Empty, "SELECT " + names[23] + " FROM " + table + " WHERE k = @k", new[] { P("k", 1) }));
        report.Same("svcutil.scalar.null", null, await client.ReturnScalarAsync(Guid.Empty, "SELECT k FROM " + table + " WHERE k < 0", null));

        var content = Encoding.UTF8.GetBytes("svcutil content ✓");
        Guid id = await client.NewFileAsync(new FileData { Content = content, ContentType = "text/plain", FileName = "svcutil.txt" });
        report.Check("svcutil.new-file.id", id != Guid.Empty, "a new id", id.ToString());
        FileData file = await client.GetFileAsync(id);
        if (report.Check("svcutil.get-file.not-null", file != null))
        {
            report.Check("svcutil.get-file.content", file.Content != null && file.Content.SequenceEqual(content));
            report.Equal("svcutil.get-file.id", id, file.FileId);
            report.Equal("svcutil.get-file.name", "svcutil.txt", file.FileName);
            report.Equal("svcutil.get-file.sha256", Report.Sha256Hex(content), file.Sha256);
            report.Equal("svcutil.get-file.created-kind", DateTimeKind.Utc, file.CreatedUtc.Kind);
        }
        report.Same("svcutil.get-unknown.null", null, await client.GetFileAsync(Guid.NewGuid()));
        report.Equal("svcutil.delete-file", true, await client.DeleteFileAsync(id));

        try
        {
            await client.ReturnScalarAsync(Guid.Empty, "SELECT * FROM no_such_table", null);
            report.Check("svcutil.fault", false, "a FaultException", "a result");
        }
        catch (FaultException e)
        {
            report.Check("svcutil.fault", true);
            report.Info("svcutil.fault.message", e.Message);
        }
        // The channel is still usable after a fault.
        report.Equal("svcutil.after-fault.heartbeat", true, await client.HeartbeatAsync());
        report.Equal("svcutil.drop", -1, await client.ExecuteNonQueryAsync(Guid.Empty, "DROP TABLE " + table, null));
    }
}
