// Calls the bridge through the client dotnet-svcutil generated from the published WSDL (namespace Generated, synchronous
// methods): Heartbeat, ReturnDatatable into the typed DataTable the DataTable annotation of the WSDL asks for, NewFile
// and GetFile. JSON-line checks (test/wcf-shared/Report.cs). The binding is built in code as the generated configuration would
// (NetTcpBinding, SecurityMode.None here, 64 MiB quotas).
// Usage: SvcutilClient <net.tcp endpoint>
using System;
using System.Data;
using System.Diagnostics;
using System.Linq;
using System.ServiceModel;
using System.Text;
using IDBService.E2E;

public static class Program
{
    public static int Main(string[] args)
    {
        Console.OutputEncoding = new UTF8Encoding(false);
        var report = new Report();
        var watch = Stopwatch.StartNew();
        var binding = new NetTcpBinding(SecurityMode.None) { MaxReceivedMessageSize = 64 * 1024 * 1024, MaxBufferSize = 64 * 1024 * 1024 };
        binding.ReaderQuotas.MaxArrayLength = int.MaxValue;
        binding.ReaderQuotas.MaxStringContentLength = int.MaxValue;
        var client = new Generated.IDBServiceClient(binding, new EndpointAddress(args[0]));
        try
        {
            report.Equal("svcutil.heartbeat", true, client.Heartbeat());
            var table = client.ReturnDatatable(Guid.Empty, "SELECT 42 AS answer, 'Grüße' AS text, NULL AS nothing", new Generated.QueryParameter[0]);
            if (report.Check("svcutil.datatable.type", table is DataTable, "System.Data.DataTable", table == null ? "null" : table.GetType().FullName))
            {
                report.Equal("svcutil.datatable.name", "Table", table.TableName);
                report.Equal("svcutil.datatable.rows", 1, table.Rows.Count);
                report.Same("svcutil.datatable.answer", 42L, table.Rows.Count > 0 ? table.Rows[0]["answer"] : null);
                report.Same("svcutil.datatable.text", "Grüße", table.Rows.Count > 0 ? table.Rows[0]["text"] : null);
            }
            var content = Encoding.UTF8.GetBytes("svcutil content ✓");
            var id = client.NewFile(new Generated.FileData { Content = content, ContentType = "text/plain", FileName = "svcutil.txt" });
            report.Check("svcutil.new-file.id", id != Guid.Empty, "a new id", id.ToString());
            var file = client.GetFile(id);
            if (report.Check("svcutil.get-file.not-null", file != null))
            {
                report.Check("svcutil.get-file.content", file.Content != null && file.Content.SequenceEqual(content));
                report.Equal("svcutil.get-file.name", "svcutil.txt", file.FileName);
                report.Equal("svcutil.get-file.sha256", Report.Sha256Hex(content), file.Sha256);
                report.Equal("svcutil.get-file.created-kind", DateTimeKind.Utc, file.CreatedUtc.Kind);
            }
            report.Equal("svcutil.delete-file", true, client.DeleteFile(id));
            report.Same("svcutil.get-unknown.null", null, client.GetFile(Guid.NewGuid()));
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
}
