// The .NET side of the net.tcp benchmark (bench/dotnet.ts): calls per second and latency percentiles of one operation
// over N channels, each channel its own thread calling in a loop (a WCF client's synchronous proxy, as the existing
// clients call it), and channel opens per second (open, Heartbeat, close), e.g. with NTLM. One JSON line on stdout;
// with BENCH_DECILES set, it also has the calls' latency deciles (p10 … p90, p95, p99, p99.9) and their mean, which
// show a tail the two percentiles hide (a share of calls that each waited a fixed time).
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.Runtime.InteropServices;
using System.ServiceModel;
using System.Threading;
using IDBService.Contracts;

namespace IDBService.E2E
{
    public static class Bench
    {
        static Dictionary<string, string> Options(List<string> args)
        {
            var d = new Dictionary<string, string>();
            for (int i = 0; i + 1 < args.Count; i += 2) d[args[i].TrimStart('-')] = args[i + 1];
            return d;
        }

        static double Seconds(Dictionary<string, string> o, string key, double fallback)
        {
            return o.TryGetValue(key, out var v) ? double.Parse(v, CultureInfo.InvariantCulture) : fallback;
        }

        static string Result(string what, long count, double seconds, List<double> latencies, int errors, string firstError, Usage spent = null)
        {
            latencies.Sort();
            double P(double q) => latencies.Count == 0 ? 0 : latencies[Math.Min(latencies.Count - 1, (int)Math.Ceiling(q * latencies.Count) - 1)];
            var perCall = spent == null || count == 0 ? "" : string.Format(CultureInfo.InvariantCulture,
                ",\"cpuMicrosPerCall\":{0:F1}{1}", spent.CpuMicros / count,
                spent.Switches < 0 ? "" : string.Format(CultureInfo.InvariantCulture, ",\"switchesPerCall\":{0:F2}", (double)spent.Switches / count));
            return string.Format(CultureInfo.InvariantCulture,
                "{{\"what\":\"{0}\",\"count\":{1},\"seconds\":{2:F3},\"perSecond\":{3:F1},\"p50Ms\":{4:F3},\"p99Ms\":{5:F3},\"errors\":{6}{7}{8}{9}}}",
                what, count, seconds, count / seconds, P(0.5), P(0.99), errors, firstError == null ? "" : ",\"firstError\":" + Report.Json(firstError), perCall,
                Environment.GetEnvironmentVariable("BENCH_DECILES") == null || latencies.Count == 0 ? "" : ",\"deciles\":[" + string.Join(",", new[] { 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999 }.Select(q => P(q).ToString("F3", CultureInfo.InvariantCulture))) + "],\"meanMs\":" + latencies.Average().ToString("F4", CultureInfo.InvariantCulture));
        }

        /// <summary>
        /// This process's CPU time and context switches (every thread, those ended included): what the client itself spends
        /// per call. A WCF client waiting for a reply spins on its thread pool (sched_yield) before it sleeps, so on two
        /// shared cores a server that answers later costs the client CPU and switches, not only time.
        /// </summary>
        sealed class Usage
        {
            public double CpuMicros;
            /// <summary>Voluntary and involuntary context switches (getrusage); -1 where there is no getrusage.</summary>
            public long Switches;

            [DllImport("libc", EntryPoint = "getrusage", SetLastError = true)]
            static extern int GetRusage(int who, long[] usage);

            public static Usage Now()
            {
                if (OperatingSystem.IsLinux())
                {
                    // struct rusage on 64-bit Linux: ru_utime, ru_stime (timeval: seconds, microseconds), then 14 longs,
                    // ru_nvcsw and ru_nivcsw the last two.
                    var u = new long[18];
                    if (GetRusage(0 /* RUSAGE_SELF */, u) == 0)
                        return new Usage { CpuMicros = (u[0] + u[2]) * 1e6 + u[1] + u[3], Switches = u[16] + u[17] };
                }
                return new Usage { CpuMicros = Process.GetCurrentProcess().TotalProcessorTime.Ticks / 10.0, Switches = -1 };
            }

            public Usage Since(Usage start) => new Usage
            {
                CpuMicros = CpuMicros - start.CpuMicros,
                Switches = Switches < 0 || start.Switches < 0 ? -1 : Switches - start.Switches,
            };
        }

        /// <summary>The bench's table: `rows` rows of six columns (seeded once; the database of a fresh server).</summary>
        const string Seed =
            "INSERT INTO bench_rows (id, name, amount, created, flag, note) " +
            "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 2000) " +
            "SELECT i, 'row ' || i, i * 1.25, '2024-03-01 10:00:00', i % 2 = 0, 'a note of some length for row ' || i FROM c";

        /// <summary>
        /// --operation Heartbeat|ReturnScalar|ReturnDatatable|GetFile|ExecuteNonQuery --channels N --seconds S [--warmup S]
        /// [--rows 100|2000] [--bytes N]. ReturnScalar is `SELECT @v` with an int parameter; ReturnDatatable reads
        /// `rows` rows (4 columns for 100 rows or fewer, 6 above) of a table it seeds; GetFile reads a file of `bytes`
        /// it stores first; ExecuteNonQuery is an INSERT inside a database request of each channel (committed at the
        /// end), so with more than one channel the writers take turns.
        /// </summary>
        public static int Calls(ClientOptions options, List<string> args)
        {
            var o = Options(args);
            var operation = o.TryGetValue("operation", out var op) ? op : "Heartbeat";
            int channels = o.TryGetValue("channels", out var c) ? int.Parse(c, CultureInfo.InvariantCulture) : 1;
            int rows = o.TryGetValue("rows", out var r) ? int.Parse(r, CultureInfo.InvariantCulture) : 100;
            long bytes = o.TryGetValue("bytes", out var b) ? long.Parse(b, CultureInfo.InvariantCulture) : 1 << 20;
            double seconds = Seconds(o, "seconds", 3), warmup = Seconds(o, "warmup", 1);
            var factory = options.Factory(Math.Max(64L << 20, bytes * 2 + (1 << 20)));
            var none = new QueryParameter[0];
            var scalarParameters = new[] { new QueryParameter { Name = "@v", Value = 42 } };
            var select = rows <= 100
                ? "SELECT id, name, amount, created FROM bench_rows ORDER BY id LIMIT " + rows
                : "SELECT id, name, amount, created, flag, note FROM bench_rows ORDER BY id LIMIT " + rows;
            var fileId = Guid.Empty;
            var requests = new Guid[channels];
            Func<IIDBService, int, bool> call = operation switch
            {
                "ReturnScalar" => (s, _) => System.Convert.ToInt64(s.ReturnScalar(Guid.Empty, "SELECT @v", scalarParameters), CultureInfo.InvariantCulture) == 42,
                "ReturnDatatable" => (s, _) => s.ReturnDatatable(Guid.Empty, select, none).Rows.Count == rows,
                "GetFile" => (s, _) => s.GetFile(fileId).Content.LongLength == bytes,
                "ExecuteNonQuery" => (s, n) => s.ExecuteNonQuery(requests[n], "INSERT INTO bench_writes (channel, note) VALUES (@c, 'x')", new[] { new QueryParameter { Name = "@c", Value = n } }) == 1,
                _ => (s, _) => s.Heartbeat(),
            };
            var clients = Enumerable.Range(0, channels).Select(_ => factory.CreateChannel()).ToList();
            foreach (var client in clients) ((ICommunicationObject)client).Open();
            var first = clients[0];
            if (operation == "ReturnDatatable")
            {
                first.ExecuteNonQuery(Guid.Empty, "CREATE TABLE IF NOT EXISTS bench_rows (id INTEGER PRIMARY KEY, name VARCHAR(40), amount DOUBLE PRECISION, created TIMESTAMP, flag BOOLEAN, note TEXT)", none);
                if (first.ReturnScalar(Guid.Empty, "SELECT count(*) FROM bench_rows", none) is var count && System.Convert.ToInt64(count, CultureInfo.InvariantCulture) == 0) first.ExecuteNonQuery(Guid.Empty, Seed, none);
            }
            if (operation == "GetFile")
            {
                var content = new byte[bytes];
                new Random(7).NextBytes(content);
                fileId = first.NewFile(new FileData { Content = content, FileName = "bench.bin", ContentType = "application/octet-stream" });
            }
            if (operation == "ExecuteNonQuery")
            {
                first.ExecuteNonQuery(Guid.Empty, "CREATE TABLE IF NOT EXISTS bench_writes (channel INTEGER, note TEXT)", none);
                for (int i = 0; i < channels; i++) requests[i] = clients[i].CreateDatabaseRequest(null);
            }
            for (int i = 0; i < channels; i++)
                if (!call(clients[i], i)) { Console.Error.WriteLine(operation + ": an unexpected answer"); return 1; }

            var stop = DateTime.MaxValue.Ticks;
            long measuring = 0; // 0 warm-up, 1 measuring, 2 done
            var perThread = new List<double>[channels];
            var errors = 0;
            string firstError = null;
            var threads = new Thread[channels];
            for (int i = 0; i < channels; i++)
            {
                int n = i;
                perThread[n] = new List<double>(1 << 16);
                threads[n] = new Thread(() =>
                {
                    var client = clients[n];
                    var watch = new Stopwatch();
                    while (Interlocked.Read(ref measuring) < 2)
                    {
                        var phase = Interlocked.Read(ref measuring);
                        watch.Restart();
                        try { if (!call(client, n)) throw new InvalidOperationException(operation + ": an unexpected answer"); }
                        catch (Exception e)
                        {
                            if (Interlocked.Increment(ref errors) == 1) firstError = e.GetType().Name + ": " + e.Message;
                            return;
                        }
                        if (phase == 1 && Interlocked.Read(ref measuring) == 1) perThread[n].Add(watch.Elapsed.TotalMilliseconds);
                    }
                }) { IsBackground = true };
            }
            foreach (var t in threads) t.Start();
            Thread.Sleep(TimeSpan.FromSeconds(warmup));
            var total = Stopwatch.StartNew();
            var usage = Usage.Now();
            Interlocked.Exchange(ref measuring, 1);
            Thread.Sleep(TimeSpan.FromSeconds(seconds));
            Interlocked.Exchange(ref measuring, 2);
            var elapsed = total.Elapsed.TotalSeconds;
            var spent = Usage.Now().Since(usage);
            foreach (var t in threads) t.Join();
            var all = perThread.SelectMany(l => l).ToList();
            Console.WriteLine(Result(operation, all.Count, elapsed, all, errors, firstError, spent));
            if (operation == "ExecuteNonQuery")
                for (int i = 0; i < channels; i++) { try { clients[i].CloseDatabaseRequest(requests[i], true); } catch { } }
            foreach (var client in clients) { try { ((ICommunicationObject)client).Close(); } catch { ((ICommunicationObject)client).Abort(); } }
            try { factory.Close(); } catch { factory.Abort(); }
            GC.KeepAlive(stop);
            return errors == 0 ? 0 : 1;
        }

        /// <summary>--seconds S: open a channel, call Heartbeat, close it, in a loop on one thread.</summary>
        public static int Opens(ClientOptions options, List<string> args)
        {
            var o = Options(args);
            double seconds = Seconds(o, "seconds", 3), warmup = Seconds(o, "warmup", 1);
            var factory = options.Factory();
            var latencies = new List<double>();
            int errors = 0;
            string firstError = null;
            void One(bool measure)
            {
                var watch = Stopwatch.StartNew();
                var channel = factory.CreateChannel();
                try
                {
                    channel.Heartbeat();
                    ((ICommunicationObject)channel).Close();
                    if (measure) latencies.Add(watch.Elapsed.TotalMilliseconds);
                }
                catch (Exception e)
                {
                    ((ICommunicationObject)channel).Abort();
                    if (errors++ == 0) firstError = e.GetType().Name + ": " + e.Message;
                }
            }
            var w = Stopwatch.StartNew();
            while (w.Elapsed.TotalSeconds < warmup && errors == 0) One(false);
            var total = Stopwatch.StartNew();
            while (total.Elapsed.TotalSeconds < seconds && errors == 0) One(true);
            var elapsed = total.Elapsed.TotalSeconds;
            Console.WriteLine(Result("opens", latencies.Count, elapsed, latencies, errors, firstError));
            try { factory.Close(); } catch { factory.Abort(); }
            return errors == 0 ? 0 : 1;
        }
    }
}
