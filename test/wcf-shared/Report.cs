// The JSON-lines check reporter of the C# test clients, Mono's (test/mono: E2EClient, SvcutilClient) and .NET's
// (test/dotnet: WcfClient, SvcutilClient, HttpApiClient), parsed by test/support/peers/mono-e2e.ts's parseChecks. One line
// per check:
//   {"check":"files.1MiB.sha256","ok":true}
//   {"check":"scalar.param.int","ok":false,"expected":"Int32:42","actual":"Int64:42"}
//   {"check":"requests.invisible-outside-before-commit","ok":true,"skipped":"why it does not apply"}
//   {"check":"quota.client.exception","ok":true,"info":"what was seen, for the test to judge"}
// A section's own line ({"check":"files","ok":true,"section":true,"ms":812}) says it ran to its end; an exception out
// of a section is that line with ok false and the error. The last line is
//   {"summary":true,"passed":N,"failed":M,"ms":T}
using System;
using System.Globalization;
using System.Linq;
using System.Security.Cryptography;
using System.Text;

namespace IDBService.E2E
{
    /// <summary>Thread-safe check reporter: one JSON line per check.</summary>
    public sealed class Report
    {
        readonly object gate = new object();
        int passed, failed;

        public int Passed { get { return passed; } }
        public int Failed { get { return failed; } }

        public bool Check(string name, bool ok, string expected = null, string actual = null, string error = null)
        {
            var line = new StringBuilder("{\"check\":").Append(Json(name)).Append(",\"ok\":").Append(ok ? "true" : "false");
            if (!ok && expected != null) line.Append(",\"expected\":").Append(Json(expected));
            if (!ok && actual != null) line.Append(",\"actual\":").Append(Json(actual));
            if (error != null) line.Append(",\"error\":").Append(Json(error));
            Write(line.Append('}').ToString(), ok);
            return ok;
        }

        /// <summary>A passed check that carries what was seen (an exception's text), for the test to judge or show.</summary>
        public void Info(string name, string text)
        {
            Write("{\"check\":" + Json(name) + ",\"ok\":true,\"info\":" + Json(text) + "}", true);
        }

        public void Skip(string name, string why)
        {
            Write("{\"check\":" + Json(name) + ",\"ok\":true,\"skipped\":" + Json(why) + "}", true);
        }

        public void Section(string name, bool ok, long ms, string error)
        {
            Write("{\"check\":" + Json(name) + ",\"ok\":" + (ok ? "true" : "false") + ",\"section\":true,\"ms\":" + ms +
                (error == null ? "" : ",\"error\":" + Json(error)) + "}", ok);
        }

        public void Summary(long ms)
        {
            lock (gate) Console.Out.WriteLine("{\"summary\":true,\"passed\":" + passed + ",\"failed\":" + failed + ",\"ms\":" + ms + "}");
            Console.Out.Flush();
        }

        void Write(string line, bool ok)
        {
            lock (gate)
            {
                if (ok) passed++; else failed++;
                Console.Out.WriteLine(line);
                Console.Out.Flush();
            }
        }

        /// <summary>Typed equality: the same runtime type and the same value (arrays item by item, DateTime with its Kind).</summary>
        public bool Same(string name, object expected, object actual)
        {
            return Check(name, SameValue(expected, actual), Describe(expected), Describe(actual));
        }

        public bool Equal<T>(string name, T expected, T actual)
        {
            return Check(name, SameValue(expected, actual), Describe(expected), Describe(actual));
        }

        public static bool SameValue(object a, object b)
        {
            if (a == null || b == null) return a == null && b == null;
            if (a.GetType() != b.GetType()) return false;
            var ab = a as byte[];
            if (ab != null) return ab.SequenceEqual((byte[])b);
            if (a is DateTime) return ((DateTime)a).Ticks == ((DateTime)b).Ticks && ((DateTime)a).Kind == ((DateTime)b).Kind;
            return a.Equals(b);
        }

        public static string Describe(object value)
        {
            if (value == null) return "null";
            if (value is DBNull) return "DBNull";
            var bytes = value as byte[];
            if (bytes != null) return "Byte[" + bytes.Length + "] sha256:" + Sha256Hex(bytes).Substring(0, 16);
            if (value is DateTime) { var d = (DateTime)value; return "DateTime:" + d.ToString("o", CultureInfo.InvariantCulture) + " (" + d.Kind + ")"; }
            var s = value as string;
            if (s != null) return "String:" + (s.Length > 200 ? s.Substring(0, 200) + "…" : s);
            if (value is Type) return ((Type)value).FullName;
            var f = value as IFormattable;
            return value.GetType().Name + ":" + (f != null ? f.ToString(null, CultureInfo.InvariantCulture) : value.ToString());
        }

        /// <summary>Lower-case hex, as FileData.Sha256 carries it.</summary>
        public static string Sha256Hex(byte[] content)
        {
            using (var sha = SHA256.Create())
            {
                var hash = sha.ComputeHash(content);
                var b = new StringBuilder(64);
                foreach (var x in hash) b.Append(x.ToString("x2"));
                return b.ToString();
            }
        }

        public static string Json(string s)
        {
            var b = new StringBuilder("\"");
            foreach (char c in s)
            {
                switch (c)
                {
                    case '"': b.Append("\\\""); break;
                    case '\\': b.Append("\\\\"); break;
                    case '\n': b.Append("\\n"); break;
                    case '\r': b.Append("\\r"); break;
                    case '\t': b.Append("\\t"); break;
                    default:
                        if (c < 0x20) b.Append("\\u").Append(((int)c).ToString("x4")); else b.Append(c);
                        break;
                }
            }
            return b.Append('"').ToString();
        }
    }
}
