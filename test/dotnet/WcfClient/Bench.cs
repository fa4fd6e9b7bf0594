// The .NET side of the net.tcp benchmark (bench/dotnet.ts): calls per second and latency percentiles of one operation
// over N channels, each channel its own thread calling in a loop (a WCF client's synchronous proxy, as the existing
// clients call it), and channel opens per second (open, Heartbeat, close), e.g. with NTLM. One JSON line on stdout.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
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

        static string Result(string what, long count, double seconds, List<double> latencies, int errors, string firstError)
        {
            latencies.Sort();
            double P(double q) => latencies.Count == 0 ? 0 : latencies[Math.Min(latencies.Count - 1, (int)Math.Ceiling(q * latencies.Count) - 1)];
            return string.Format(CultureInfo.InvariantCulture,
                "{{\"what\":\"{0}\",\"count\":{1},\"seconds\":{2:F3},\"perSecond\":{3:F1},\"p50Ms\":{4:F3},\"p99Ms\":{5:F3},\"errors\":{6}{7}}}",
                what, count, seconds, count / seconds, P(0.5), P(0.99), errors, firstError == null ? "" : ",\"firstError\":" + Report.Json(firstError));
        }

        /// <summary>--operation Heartbeat|ReturnScalar --channels N --seconds S [--warmup S]</summary>
        public static int Calls(ClientOptions options, List<string> args)
        {
            var o = Options(args);
            var operation = o.TryGetValue("operation", out var op) ? op : "Heartbeat";
            int channels = o.TryGetValue("channels", out var c) ? int.Parse(c, CultureInfo.InvariantCulture) : 1;
            double seconds = Seconds(o, "seconds", 3), warmup = Seconds(o, "warmup", 1);
            var factory = options.Factory();
            var parameters = new QueryParameter[0];
            Func<IIDBService, bool> call = operation == "ReturnScalar"
                ? (s => s.ReturnScalar(Guid.Empty, "SELECT 42", parameters) != null)
                : (Func<IIDBService, bool>)(s => s.Heartbeat());
            var clients = Enumerable.Range(0, channels).Select(_ => factory.CreateChannel()).ToList();
            foreach (var client in clients) { ((ICommunicationObject)client).Open(); call(client); }

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
                        try { call(client); }
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
            Interlocked.Exchange(ref measuring, 1);
            Thread.Sleep(TimeSpan.FromSeconds(seconds));
            Interlocked.Exchange(ref measuring, 2);
            var elapsed = total.Elapsed.TotalSeconds;
            foreach (var t in threads) t.Join();
            var all = perThread.SelectMany(l => l).ToList();
            Console.WriteLine(Result(operation, all.Count, elapsed, all, errors, firstError));
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
