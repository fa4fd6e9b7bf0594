// The CoreWCF host of IIDBService: Kestrel with CoreWCF's net.tcp transport, NetTcpBinding with SecurityMode.None
// (binary encoding, 64 MiB messages unless --max-message-mb), the service of Service.cs and FileStore.cs over a folder.
// Prints {"ready":true,"port":N,"endpoint":"..."} once it listens; stops when its stdin closes (and exits the
// process itself, see the end of Main).
// With --metadata-port N it also publishes its description as CoreWCF does (AddServiceModelMetadata,
// ServiceMetadataBehavior.HttpGetEnabled) at http://127.0.0.1:N/IDBService?wsdl, the reference the bridge's WSDL is
// compared with (test/idb/wsdl-dotnet-svcutil.peers.test.ts); without it, nothing listens on HTTP (the benchmark).
// With --postgres "<Npgsql connection string>" the database is PostgreSQL instead of idb.sqlite in the folder.
// Usage: CoreWcfHost --port N --data <folder> [--max-message-mb N] [--metadata-port N] [--postgres <connection>]
using System;
using System.Globalization;
using System.IO;
using System.Threading.Tasks;
using CoreWCF;
using CoreWCF.Configuration;
using IDBService.Contracts;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace IDBService.CoreWcfHost
{
    public static class Program
    {
        public static async Task<int> Main(string[] args)
        {
            int port = 8808, maxMB = 64, metadataPort = 0;
            string postgres = null;
            string data = Path.Combine(Path.GetTempPath(), "corewcf-idb");
            for (int i = 0; i + 1 < args.Length; i += 2)
            {
                switch (args[i])
                {
                    case "--port": port = int.Parse(args[i + 1], CultureInfo.InvariantCulture); break;
                    case "--data": data = args[i + 1]; break;
                    case "--max-message-mb": maxMB = int.Parse(args[i + 1], CultureInfo.InvariantCulture); break;
                    case "--metadata-port": metadataPort = int.Parse(args[i + 1], CultureInfo.InvariantCulture); break;
                    case "--postgres": postgres = args[i + 1]; break;
                    default: Console.Error.WriteLine("unknown argument " + args[i]); return 2;
                }
            }
            Directory.CreateDirectory(data);
            var service = new IdbService(data, postgres);

            var builder = WebApplication.CreateBuilder();
            builder.Logging.SetMinimumLevel(LogLevel.Warning);
            builder.WebHost.UseNetTcp(System.Net.IPAddress.Loopback, port);
            builder.Services.AddServiceModelServices();
            if (metadataPort != 0)
            {
                builder.WebHost.ConfigureKestrel(k => k.Listen(System.Net.IPAddress.Loopback, metadataPort));
                builder.Services.AddServiceModelMetadata();
            }
            builder.Services.AddSingleton(service);
            var app = builder.Build();
            long max = (long)maxMB * 1024 * 1024;
            var binding = new NetTcpBinding(SecurityMode.None)
            {
                MaxReceivedMessageSize = max,
                MaxBufferSize = (int)max,
                ReceiveTimeout = TimeSpan.FromMinutes(10),
            };
            binding.ReaderQuotas.MaxArrayLength = int.MaxValue;
            binding.ReaderQuotas.MaxStringContentLength = int.MaxValue;
            binding.ReaderQuotas.MaxBytesPerRead = int.MaxValue;
            binding.ReaderQuotas.MaxNameTableCharCount = int.MaxValue;
            app.UseServiceModel(b =>
            {
                b.AddService<IdbService>(options =>
                {
                    if (metadataPort != 0) options.BaseAddresses.Add(new Uri("http://127.0.0.1:" + metadataPort + "/IDBService"));
                });
                b.AddServiceEndpoint<IdbService, IIDBService>(binding, "/IDBService");
            });
            if (metadataPort != 0)
                app.Services.GetRequiredService<CoreWCF.Description.ServiceMetadataBehavior>().HttpGetEnabled = true;
            await app.StartAsync();
            Console.WriteLine("{\"ready\":true,\"port\":" + port + ",\"endpoint\":\"net.tcp://localhost:" + port + "/IDBService\"}");
            Console.Out.Flush();
            await Task.Run(() => { while (Console.In.Read() >= 0) { } });
            await app.StopAsync();
            // CoreWCF 1.8.0 on Linux keeps a foreground thread waiting on its longest IOThreadTimer (about a minute)
            // after Main returns (fixed upstream after 1.8.0, CoreWCF #1122): end the process here.
            Console.Out.Flush();
            Environment.Exit(0);
            return 0;
        }
    }
}
