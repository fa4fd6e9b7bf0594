// Usage: SqlParity <net.tcp endpoint of the bridge> <SqlClient connection string of the same database>
// Runs the corpus (Corpus.cs) directly with Microsoft.Data.SqlClient and through the bridge with Microsoft's WCF
// client, then reports one check per statement: the two answers described alike (schema: column names and DataType;
// values with their runtime types; counts) must be equal, or the statement names its known difference.
using System;
using System.Collections.Generic;
using System.Data;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.ServiceModel;
using IDBService.Contracts;
using IDBService.E2E;
using Microsoft.Data.SqlClient;

namespace IDBService.Parity
{
    public static class Program
    {
        static readonly Report report = new Report();

        public static int Main(string[] args)
        {
            if (args.Length == 4 && args[0] == "bench")
                return Bench.Run(args[1], args[2], double.Parse(args[3], CultureInfo.InvariantCulture));
            if (args.Length != 2) { Console.Error.WriteLine("usage: SqlParity [bench] <net.tcp endpoint> <connection string> [seconds]"); return 2; }
            var total = Stopwatch.StartNew();
            var corpus = Corpus.All();
            var direct = RunDirect(corpus, args[1]);
            var bridged = RunBridge(corpus, args[0]);
            for (int i = 0; i < corpus.Count; i++)
            {
                var s = corpus[i];
                var name = "parity." + s.Name;
                if (s.Difference != null)
                    report.Info(name, "known difference: " + s.Difference + " | direct " + direct[i] + " | bridge " + bridged[i]);
                else
                    report.Check(name, direct[i] == bridged[i], direct[i], bridged[i]);
            }
            report.Info("parity.statements", corpus.Count.ToString(CultureInfo.InvariantCulture));
            using (var check = new SqlConnection(args[1]))
            {
                check.Open();
                var left = new SqlCommand("SELECT COUNT(*) FROM sys.tables WHERE name IN ('Customers', 'Orders', 'AllTypes')", check).ExecuteScalar();
                report.Equal("parity.rolled-back", 0, Convert.ToInt32(left, CultureInfo.InvariantCulture));
            }
            report.Summary(total.ElapsedMilliseconds);
            return report.Failed == 0 ? 0 : 1;
        }

        /// <summary>SqlCommand with AddWithValue in one SqlTransaction, rolled back; errors on a connection of their own.</summary>
        static List<string> RunDirect(List<Statement> corpus, string connectionString)
        {
            var answers = new List<string>();
            using var connection = new SqlConnection(connectionString);
            connection.Open();
            using var transaction = connection.BeginTransaction();
            foreach (var s in corpus)
            {
                try
                {
                    if (s.Kind == Kind.Error)
                    {
                        using var other = new SqlConnection(connectionString);
                        other.Open();
                        answers.Add(Answer(s, Command(s, other, null)));
                    }
                    else answers.Add(Answer(s, Command(s, connection, transaction)));
                }
                catch (SqlException e) { answers.Add("error: " + e.Message); }
            }
            transaction.Rollback();
            return answers;
        }

        static SqlCommand Command(Statement s, SqlConnection connection, SqlTransaction transaction)
        {
            var command = new SqlCommand(s.Sql, connection, transaction);
            foreach (var (name, value) in s.Parameters) command.Parameters.AddWithValue(name, value ?? DBNull.Value);
            return command;
        }

        static string Answer(Statement s, SqlCommand command)
        {
            switch (s.Kind)
            {
                case Kind.Fill:
                case Kind.Error:
                    var table = new DataTable();
                    new SqlDataAdapter(command).Fill(table);
                    return Describe(table);
                case Kind.Scalar:
                    // ExecuteScalar gives DBNull for a null cell; the contract has no DBNull and sends nil (spec).
                    var value = command.ExecuteScalar();
                    return Describe(value is DBNull ? null : value);
                default:
                    return "count " + command.ExecuteNonQuery().ToString(CultureInfo.InvariantCulture);
            }
        }

        /// <summary>The same statements through the bridge: one database request, closed without commit.</summary>
        static List<string> RunBridge(List<Statement> corpus, string endpoint)
        {
            var answers = new List<string>();
            var binding = new NetTcpBinding(SecurityMode.None) { MaxReceivedMessageSize = 64L << 20, MaxBufferSize = 64 << 20 };
            binding.ReaderQuotas.MaxStringContentLength = int.MaxValue;
            binding.ReaderQuotas.MaxArrayLength = int.MaxValue;
            var factory = new ChannelFactory<IIDBService>(binding, new EndpointAddress(endpoint));
            var service = factory.CreateChannel();
            var request = service.CreateDatabaseRequest(null);
            foreach (var s in corpus)
            {
                var parameters = s.Parameters.Select(p => new QueryParameter { Name = p.Name, Value = p.Value }).ToArray();
                // A fault ends a database request (the port's rule), so errors go in a transaction of their own.
                var id = s.Kind == Kind.Error ? Guid.Empty : request;
                try
                {
                    switch (s.Kind)
                    {
                        case Kind.Fill: answers.Add(Describe(service.ReturnDatatable(id, s.Sql, parameters))); break;
                        case Kind.Scalar: answers.Add(Describe(service.ReturnScalar(id, s.Sql, parameters))); break;
                        case Kind.NonQuery: answers.Add("count " + service.ExecuteNonQuery(id, s.Sql, parameters).ToString(CultureInfo.InvariantCulture)); break;
                        default: answers.Add(Describe(service.ReturnDatatable(id, s.Sql, parameters))); break;
                    }
                }
                catch (FaultException e) { answers.Add("error: " + e.Message); }
            }
            service.CloseDatabaseRequest(request, false);
            ((ICommunicationObject)service).Close();
            factory.Close();
            return answers;
        }

        static string Describe(DataTable table)
        {
            var schema = string.Join(",", table.Columns.Cast<DataColumn>().Select(c => c.ColumnName + ":" + c.DataType.Name));
            var rows = table.Rows.Cast<DataRow>().Select(r => "(" + string.Join(", ", r.ItemArray.Select(Describe)) + ")");
            return "[" + schema + "] " + string.Join(" ", rows);
        }

        static string Describe(object value)
        {
            switch (value)
            {
                case null: return "null";
                case DBNull _: return "DBNull";
                case byte[] bytes: return "Byte[]:" + Convert.ToHexString(bytes);
                case DateTime d: return "DateTime:" + d.ToString("yyyy-MM-ddTHH:mm:ss.fffffff", CultureInfo.InvariantCulture) + "/" + d.Kind;
                case DateTimeOffset o: return "DateTimeOffset:" + o.ToString("o", CultureInfo.InvariantCulture);
                case double x: return "Double:" + x.ToString("R", CultureInfo.InvariantCulture);
                case float x: return "Single:" + x.ToString("R", CultureInfo.InvariantCulture);
                default: return value.GetType().Name + ":" + Convert.ToString(value, CultureInfo.InvariantCulture);
            }
        }
    }
}
