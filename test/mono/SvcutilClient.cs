// A client built the way a team without the contract's source would build one: Mono's svcutil turns the published
// WSDL (GET /IDBService?wsdl&datatable=anytype) into a proxy (IDBServiceClient, IDBService.Contracts.*), compiled
// together with this file and Binding.cs. svcutil writes no configuration, so the binding is made in code.
// Checks are JSON lines (../wcf-shared/Report.cs has the format); exit code 0 when all passed.
//
// Usage: mono SvcutilClient.exe <net.tcp endpoint> [--host-smoke]
//   --host-smoke: ReturnScalar is expected to answer a boxed Int32 42 whatever the SQL (MonoHost); otherwise it must
//   echo `SELECT @x` with a string, as the bridge does on every backend.
using System;
using System.Diagnostics;
using System.Linq;
using System.ServiceModel;
using System.Text;
using IDBService.Contracts;
using IDBService.E2E;

public static class SvcutilClientProgram
{
    public static int Main(string[] args)
    {
        Console.OutputEncoding = new UTF8Encoding(false);
        var endpoint = args.FirstOrDefault(a => !a.StartsWith("--"));
        if (endpoint == null) { Console.Error.WriteLine("usage: SvcutilClient.exe <net.tcp://host:port/IDBService> [--host-smoke]"); return 2; }
        var hostSmoke = args.Contains("--host-smoke");
        var report = new Report();
        var watch = Stopwatch.StartNew();
        var client = new IDBServiceClient(E2EBinding.Create(TimeSpan.FromSeconds(60)), new EndpointAddress(endpoint));
        try
        {
            report.Equal("svcutil.heartbeat", true, client.Heartbeat());
            const string text = "svcutil proxy ✓ Grüße";
            var scalar = client.ReturnScalar(Guid.Empty, "SELECT @x", new[] { new QueryParameter { Name = "@x", Value = text } });
            if (hostSmoke) report.Same("svcutil.scalar", 42, scalar);
            else report.Same("svcutil.scalar", text, scalar);

            report.Same("svcutil.get-file-unknown.null", null, client.GetFile(Guid.NewGuid()));
            var content = Encoding.UTF8.GetBytes("%PDF-1.7 svcutil");
            var id = client.NewFile(new FileData { Content = content, ContentType = "application/pdf", FileName = "svcutil.pdf", CreatedUtc = DateTime.UtcNow, ModifiedUtc = DateTime.UtcNow });
            var file = client.GetFile(id);
            if (report.Check("svcutil.get-file.not-null", file != null))
            {
                report.Check("svcutil.get-file.content", file.Content != null && file.Content.SequenceEqual(content), Report.Describe(content), Report.Describe(file.Content));
                report.Equal("svcutil.get-file.sha256", Report.Sha256Hex(content), file.Sha256);
                report.Equal("svcutil.get-file.length", (long)content.Length, file.Length);
                report.Equal("svcutil.get-file.name", "svcutil.pdf", file.FileName);
                report.Equal("svcutil.get-file.created.kind", DateTimeKind.Utc, file.CreatedUtc.Kind);
            }
            report.Equal("svcutil.delete-file", true, client.DeleteFile(id));
            client.Close();
            report.Section("svcutil", true, watch.ElapsedMilliseconds, null);
        }
        catch (Exception e)
        {
            client.Abort();
            report.Section("svcutil", false, watch.ElapsedMilliseconds, e.GetType().FullName + ": " + e.Message);
        }
        report.Summary(watch.ElapsedMilliseconds);
        return report.Failed == 0 ? 0 : 1;
    }
}
