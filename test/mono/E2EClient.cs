// An IIDBService client as the existing .NET clients are written, on Mono: the scenario of
// ../wcf-shared/Sections.cs (the contract of ../wcf-shared/IIDBService.cs, a ChannelFactory on NetTcpBinding with
// SecurityMode.None and 64 MiB quotas, nothing generated) against the endpoint given. Each check is one JSON line on
// stdout (../wcf-shared/Report.cs has the format). Exit code: 0 when every check passed, 1 when one failed, 2 for bad
// arguments.
//
// Usage: mono E2EClient.exe <net.tcp endpoint> [--backend sqlite|postgres] [--sections a,b,...] [--host-smoke]
//                          [--timeout-seconds N]
// Sections (in this order): heartbeat nonquery requests datatable scalar files documents faults sql-faults concurrency
// cleanup. --host-smoke runs heartbeat and smoke (ReturnScalar answers a boxed Int32 42: what MonoHost answers).
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.ServiceModel;
using System.Text;
using IDBService.Contracts;

namespace IDBService.E2E
{
    public static partial class Scenario
    {
        static readonly string[] AllSections = { "heartbeat", "nonquery", "requests", "datatable", "scalar", "files", "documents", "faults", "sql-faults", "concurrency", "cleanup" };
        const int ConcurrentChannels = 4;

        static EndpointAddress address;
        static TimeSpan timeout;

        public static int Main(string[] args)
        {
            Console.OutputEncoding = new UTF8Encoding(false);
            string endpoint = null;
            var sections = new List<string>(AllSections);
            int timeoutSeconds = 120;
            for (int i = 0; i < args.Length; i++)
            {
                switch (args[i])
                {
                    case "--backend": backend = args[++i]; break;
                    case "--sections": sections = args[++i].Split(',').Select(s => s.Trim()).Where(s => s.Length > 0).ToList(); break;
                    case "--host-smoke": sections = new List<string> { "heartbeat", "smoke" }; break;
                    case "--timeout-seconds": timeoutSeconds = int.Parse(args[++i], CultureInfo.InvariantCulture); break;
                    default:
                        if (endpoint == null && !args[i].StartsWith("--")) { endpoint = args[i]; break; }
                        Console.Error.WriteLine("unknown argument " + args[i]);
                        return 2;
                }
            }
            if (endpoint == null || (backend != "sqlite" && backend != "postgres"))
            {
                Console.Error.WriteLine("usage: E2EClient.exe <net.tcp://host:port/IDBService> [--backend sqlite|postgres] [--sections a,b] [--host-smoke] [--timeout-seconds N]");
                return 2;
            }
            foreach (var s in sections)
            {
                if (s != "smoke" && Array.IndexOf(AllSections, s) < 0) { Console.Error.WriteLine("unknown section " + s); return 2; }
            }

            // Mono's channels each block a pool thread while they wait for a reply; on a machine with few cores the
            // pool grows too slowly for several channels at once (calls time out instead).
            System.Threading.ThreadPool.SetMinThreads(64, 64);
            address = new EndpointAddress(endpoint);
            timeout = TimeSpan.FromSeconds(timeoutSeconds);
            return RunSections(sections);
        }

        static ChannelFactory<IIDBService> NewFactory()
        {
            return new ChannelFactory<IIDBService>(E2EBinding.Create(timeout), address);
        }

        static void RunOwnSection(string name, IIDBService channel)
        {
            if (name == "smoke") Smoke(channel);
        }

        static void Smoke(IIDBService s)
        {
            report.Same("smoke.scalar.int42", 42, s.ReturnScalar(Guid.Empty, "SELECT 42", null));
            report.Same("smoke.scalar.with-parameters", 42, s.ReturnScalar(Guid.Empty, "SELECT @x", Ps(P("@x", "ignored"), P("y", 7))));
        }
    }
}
