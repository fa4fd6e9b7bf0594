// `SqlParity bench <endpoint> <connection string> <seconds>`: the .NET side of bench/sqlserver.ts. ReturnScalar and a
// 100-row ReturnDatatable through the bridge (Microsoft's WCF client, one channel) beside the same statements made
// directly with SqlClient (a pooled connection opened per call, as a plain ADO.NET service does), one call in flight,
// same process, same run. One JSON line per row: {"bench":..,"calls":..,"seconds":..,"p50Ms":..,"p99Ms":..}.
using System;
using System.Collections.Generic;
using System.Data;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.ServiceModel;
using IDBService.Contracts;
using Microsoft.Data.SqlClient;

namespace IDBService.Parity
{
    public static class Bench
    {
        const string Scalar = "SELECT 42";
        const string Rows = "SELECT id, name, amount, at FROM bench_rows ORDER BY id";

        public static int Run(string endpoint, string connectionString, double seconds)
        {
            using (var setup = new SqlConnection(connectionString))
            {
                setup.Open();
                new SqlCommand("IF OBJECT_ID('bench_rows') IS NULL BEGIN CREATE TABLE bench_rows (id int PRIMARY KEY, name nvarchar(50), amount decimal(18,2), at datetime2(3)); " +
                    "WITH n AS (SELECT TOP 100 ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) AS i FROM sys.all_columns) " +
                    "INSERT INTO bench_rows SELECT i, CONCAT(N'row ', i), i * 1.25, DATEADD(minute, i, '2024-01-01') FROM n; END", setup).ExecuteNonQuery();
            }
            var binding = new NetTcpBinding(SecurityMode.None) { MaxReceivedMessageSize = 64L << 20, MaxBufferSize = 64 << 20 };
            binding.ReaderQuotas.MaxStringContentLength = int.MaxValue;
            var factory = new ChannelFactory<IIDBService>(binding, new EndpointAddress(endpoint));
            var service = factory.CreateChannel();
            var none = new QueryParameter[0];
            Measure("SqlClient ExecuteScalar", seconds, () => Direct(connectionString, c => new SqlCommand(Scalar, c).ExecuteScalar()));
            Measure("bridge ReturnScalar", seconds, () => service.ReturnScalar(Guid.Empty, Scalar, none));
            Measure("SqlClient Fill 100 rows", seconds, () => Direct(connectionString, c =>
            {
                var table = new DataTable();
                new SqlDataAdapter(new SqlCommand(Rows, c)).Fill(table);
                if (table.Rows.Count != 100) throw new Exception("expected 100 rows");
                return table;
            }));
            Measure("bridge ReturnDatatable 100 rows", seconds, () =>
            {
                var table = service.ReturnDatatable(Guid.Empty, Rows, none);
                if (table.Rows.Count != 100) throw new Exception("expected 100 rows");
                return table;
            });
            ((ICommunicationObject)service).Close();
            factory.Close();
            return 0;
        }

        static object Direct(string connectionString, Func<SqlConnection, object> work)
        {
            using var connection = new SqlConnection(connectionString);
            connection.Open();
            return work(connection);
        }

        static void Measure(string name, double seconds, Func<object> call)
        {
            for (int i = 0; i < 20; i++) call(); // warm-up: JIT, pools, the bridge's first statements
            var latencies = new List<double>();
            var total = Stopwatch.StartNew();
            while (total.Elapsed.TotalSeconds < seconds)
            {
                var one = Stopwatch.StartNew();
                call();
                latencies.Add(one.Elapsed.TotalMilliseconds);
            }
            latencies.Sort();
            double At(double q) => latencies[Math.Min(latencies.Count - 1, (int)(q * latencies.Count))];
            Console.Out.WriteLine(string.Format(CultureInfo.InvariantCulture,
                "{{\"bench\":\"{0}\",\"calls\":{1},\"seconds\":{2:0.###},\"p50Ms\":{3:0.###},\"p99Ms\":{4:0.###}}}",
                name, latencies.Count, total.Elapsed.TotalSeconds, At(0.5), At(0.99)));
        }
    }
}
