// The sections of the shared scenario (Sections.cs has the plumbing, the SQL sections and what the class is) that
// work on the service's stores and its failures: files up and down, documents and their index fields, the faults the
// contract declares for bad arguments and bad SQL, several channels at once (ConcurrentChannels) and the cleanup that
// drops the e2e_<random>_* tables. Compiled by Mono's mcs too: C# 7 at most.
using System;
using System.Collections.Generic;
using System.Data;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.ServiceModel;
using System.Text;
using System.Threading;
using IDBService.Contracts;

namespace IDBService.E2E
{
    public static partial class Scenario
    {
        static FileData NewFileData(byte[] content, string name, string contentType)
        {
            // FileId, Length, dates and Sha256 of the argument are the server's to set; send values it must ignore.
            return new FileData { Content = content, ContentType = contentType, FileName = name, FileId = Guid.NewGuid(), Length = 12345, CreatedUtc = new DateTime(2000, 1, 1), ModifiedUtc = new DateTime(2000, 1, 1), Sha256 = "not-a-hash" };
        }

        static void CheckFile(string check, FileData got, Guid id, byte[] content, string name, string contentType, DateTime notBefore)
        {
            if (!report.Check(check + ".not-null", got != null)) return;
            report.Equal(check + ".id", id, got.FileId);
            report.Check(check + ".content", got.Content != null && got.Content.SequenceEqual(content), Report.Describe(content), Report.Describe(got.Content));
            report.Equal(check + ".length", (long)content.Length, got.Length);
            report.Equal(check + ".sha256", Report.Sha256Hex(content), got.Sha256);
            report.Equal(check + ".name", name, got.FileName);
            report.Equal(check + ".content-type", contentType, got.ContentType);
            report.Equal(check + ".created.kind", DateTimeKind.Utc, got.CreatedUtc.Kind);
            report.Equal(check + ".modified.kind", DateTimeKind.Utc, got.ModifiedUtc.Kind);
            var now = DateTime.UtcNow;
            // Same machine, same clock: the server's stamps fall inside the call (with a minute's slack for rounding).
            report.Check(check + ".created.recent", got.CreatedUtc >= notBefore.AddMinutes(-1) && got.CreatedUtc <= now.AddMinutes(1), notBefore.ToString("o") + " .. " + now.ToString("o"), got.CreatedUtc.ToString("o"));
            report.Check(check + ".modified.not-before-created", got.ModifiedUtc >= got.CreatedUtc, got.CreatedUtc.ToString("o"), got.ModifiedUtc.ToString("o"));
        }

        static void Files(IIDBService s)
        {
            foreach (var size in new[] { 0, MiB, 20 * MiB })
            {
                var label = size == 0 ? "0B" : (size / MiB) + "MiB";
                var check = "files." + label;
                var content = RandomBytes(size);
                var before = DateTime.UtcNow;
                var argument = NewFileData(content, "e2e-" + label + ".bin", "application/octet-stream");
                var id = s.NewFile(argument);
                report.Check(check + ".new.id", id != Guid.Empty && id != argument.FileId, "a new id, not the argument's", id.ToString());
                var got = s.GetFile(id);
                CheckFile(check + ".get", got, id, content, "e2e-" + label + ".bin", "application/octet-stream", before);
                if (size == 0 && got != null) report.Check(check + ".get.content-empty-not-null", got.Content != null && got.Content.Length == 0, "byte[0]", Report.Describe(got.Content));

                var replacement = RandomBytes(size);
                var update = NewFileData(replacement, "e2e-" + label + "-v2.dat", "application/x-e2e");
                update.FileId = id;
                report.Equal(check + ".update.true", true, s.UpdateFile(update));
                var updated = s.GetFile(id);
                CheckFile(check + ".updated", updated, id, replacement, "e2e-" + label + "-v2.dat", "application/x-e2e", before);
                if (got != null && updated != null)
                {
                    report.Equal(check + ".updated.created-kept", got.CreatedUtc, updated.CreatedUtc);
                    report.Check(check + ".updated.modified-advanced", updated.ModifiedUtc >= got.ModifiedUtc, got.ModifiedUtc.ToString("o"), updated.ModifiedUtc.ToString("o"));
                }

                report.Equal(check + ".delete.true", true, s.DeleteFile(id));
                report.Same(check + ".deleted.get-null", null, s.GetFile(id));
                report.Equal(check + ".delete-again.false", false, s.DeleteFile(id));
                report.Equal(check + ".update-deleted.false", false, s.UpdateFile(update));
            }
            report.Same("files.get-unknown.null", null, s.GetFile(Guid.NewGuid()));
            report.Equal("files.delete-unknown.false", false, s.DeleteFile(Guid.NewGuid()));
            var nullType = NewFileData(new byte[] { 1, 2, 3 }, "nulltype.bin", null);
            var nullTypeId = s.NewFile(nullType);
            var nullTypeGot = s.GetFile(nullTypeId);
            report.Equal("files.null-content-type", null, nullTypeGot == null ? "(no file)" : nullTypeGot.ContentType);
            s.DeleteFile(nullTypeId);
        }

        static string FieldsText(IndexField[] fields)
        {
            if (fields == null) return "null";
            return string.Join(";", fields.Select(f => (f == null ? "null" : (f.Name ?? "<null>") + "=" + (f.Value ?? "<null>"))));
        }

        static void Documents(IIDBService s)
        {
            var pdf = Encoding.ASCII.GetBytes("%PDF-1.7");
            var fileId = s.NewFile(NewFileData(pdf, "bill.pdf", "application/pdf"));
            var containerId = Guid.NewGuid();
            var fields = new[]
            {
                new IndexField { Name = "Iban", Value = "CH4431999123000889012" },
                new IndexField { Name = "Amount", Value = "1949.75" },
                new IndexField { Name = "Note", Value = null },
                new IndexField { Name = "Zürich", Value = NonAscii },
            };
            var before = DateTime.UtcNow;
            var first = s.NewFileIndex(new FileIndexData { ContainerId = containerId, DocumentId = Guid.Empty, Fields = fields, FileId = fileId, Title = "Invoice 1" });
            report.Check("documents.new.id", first != Guid.Empty, "a new id", first.ToString());
            var doc = s.GetDocumentByDocumentId(first);
            if (report.Check("documents.get.not-null", doc != null))
            {
                report.Equal("documents.get.container", containerId, doc.ContainerId);
                report.Equal("documents.get.content-type", "application/pdf", doc.ContentType);
                report.Equal("documents.get.created.kind", DateTimeKind.Utc, doc.CreatedUtc.Kind);
                report.Check("documents.get.created.recent", doc.CreatedUtc >= before.AddMinutes(-1) && doc.CreatedUtc <= DateTime.UtcNow.AddMinutes(1), before.ToString("o"), doc.CreatedUtc.ToString("o"));
                report.Equal("documents.get.id", first, doc.DocumentId);
                report.Equal("documents.get.fields-in-order", FieldsText(fields), FieldsText(doc.Fields));
                report.Equal("documents.get.file-id", fileId, doc.FileId);
                report.Equal("documents.get.file-name", "bill.pdf", doc.FileName);
                report.Equal("documents.get.length", (long)pdf.Length, doc.Length);
                report.Equal("documents.get.title", "Invoice 1", doc.Title);
            }

            // A chosen id that does not exist yet is created under it; the same call again replaces, never duplicates.
            var chosen = Guid.NewGuid();
            var index = new FileIndexData { ContainerId = containerId, DocumentId = chosen, Fields = new[] { new IndexField { Name = "Ref", Value = "21 00000 00003 13947 14300 09017" } }, FileId = fileId, Title = "Invoice 2" };
            report.Equal("documents.chosen.id", chosen, s.NewFileIndex(index));
            index.Fields = new[] { new IndexField { Name = "Ref", Value = "changed" }, new IndexField { Name = "Extra", Value = "" } };
            index.Title = null;
            report.Equal("documents.chosen.again.id", chosen, s.NewFileIndex(index));
            var replaced = s.GetDocumentByDocumentId(chosen);
            if (report.Check("documents.chosen.get.not-null", replaced != null))
            {
                report.Equal("documents.chosen.get.title-null", null, replaced.Title);
                report.Equal("documents.chosen.get.fields-replaced", "Ref=changed;Extra=", FieldsText(replaced.Fields));
            }
            var empty = s.NewFileIndex(new FileIndexData { ContainerId = containerId, DocumentId = Guid.Empty, Fields = new IndexField[0], FileId = fileId, Title = "no fields" });
            var emptyDoc = s.GetDocumentByDocumentId(empty);
            report.Check("documents.no-fields.empty-array", emptyDoc != null && emptyDoc.Fields != null && emptyDoc.Fields.Length == 0, "IndexField[0]", emptyDoc == null ? "(no document)" : FieldsText(emptyDoc.Fields));

            var listed = s.GetDocumentByContainerId(containerId);
            if (report.Check("documents.container.not-null", listed != null))
            {
                var ids = listed.Select(d => d.DocumentId).OrderBy(g => g).ToArray();
                report.Equal("documents.container.ids", string.Join(",", new[] { first, chosen, empty }.OrderBy(g => g)), string.Join(",", ids));
                var one = listed.FirstOrDefault(d => d.DocumentId == first);
                report.Equal("documents.container.fields", FieldsText(fields), one == null ? "(missing)" : FieldsText(one.Fields));
            }
            var none = s.GetDocumentByContainerId(Guid.NewGuid());
            report.Check("documents.container-empty.empty-array", none != null && none.Length == 0, "DocumentData[0]", none == null ? "null" : "DocumentData[" + none.Length + "]");
            report.Same("documents.get-unknown.null", null, s.GetDocumentByDocumentId(Guid.NewGuid()));

            report.Equal("documents.delete-file.true", true, s.DeleteFile(fileId));
            var afterDelete = s.GetDocumentByContainerId(containerId);
            report.Check("documents.delete-file.removes-documents", afterDelete != null && afterDelete.Length == 0, "DocumentData[0]", afterDelete == null ? "null" : "DocumentData[" + afterDelete.Length + "]");
            report.Same("documents.delete-file.get-null", null, s.GetDocumentByDocumentId(first));
        }

        static void Faults(IIDBService s)
        {
            var channel = (ICommunicationObject)s;
            var unknownFile = ExpectFault("faults.file-not-found", () => s.NewFileIndex(new FileIndexData { ContainerId = Guid.NewGuid(), DocumentId = Guid.Empty, Fields = new IndexField[0], FileId = Guid.NewGuid(), Title = "x" }));
            CheckFault("faults.file-not-found", unknownFile, "FileNotFound");
            report.Equal("faults.file-not-found.channel-open", CommunicationState.Opened, channel.State);
            report.Equal("faults.file-not-found.same-channel-works", true, s.Heartbeat());
            var again = ExpectFault("faults.file-not-found-again", () => s.NewFileIndex(new FileIndexData { ContainerId = Guid.NewGuid(), DocumentId = Guid.NewGuid(), FileId = Guid.NewGuid() }));
            CheckFault("faults.file-not-found-again", again, "FileNotFound");
            report.Same("faults.same-channel-get-file", null, s.GetFile(Guid.NewGuid()));
            report.Equal("faults.channel-still-open", CommunicationState.Opened, channel.State);
        }

        static void SqlFaults(IIDBService s)
        {
            var channel = (ICommunicationObject)s;
            var sqlError = ExpectFault("sql-faults.syntax", () => s.ReturnScalar(Guid.Empty, "SELEC 1", null));
            CheckFault("sql-faults.syntax", sqlError, "SqlError");
            report.Same("sql-faults.syntax.same-channel-works", "still here", s.ReturnScalar(Guid.Empty, "SELECT @x", Ps(P("@x", "still here"))));

            var missingTable = ExpectFault("sql-faults.missing-table", () => s.ExecuteNonQuery(Guid.Empty, "DELETE FROM " + prefix + "_no_such_table", null));
            CheckFault("sql-faults.missing-table", missingTable, "SqlError");

            var unknownRequest = ExpectFault("sql-faults.unknown-request", () => s.ReturnScalar(Guid.NewGuid(), "SELECT 1", null));
            CheckFault("sql-faults.unknown-request", unknownRequest, "UnknownDatabaseRequest");

            var unknownDatabase = ExpectFault("sql-faults.unknown-database", () => s.CreateDatabaseRequest("no_such_database_" + prefix));
            CheckFault("sql-faults.unknown-database", unknownDatabase, "UnknownDatabase");

            // T-SQL declares its own variables (DECLARE @n): on SQL Server an @name no parameter names is the server's
            // "Must declare the scalar variable" (SqlError), as SqlCommand gives it.
            var missingParameter = ExpectFault("sql-faults.missing-parameter", () => s.ReturnScalar(Guid.Empty, "SELECT @nope", null));
            CheckFault("sql-faults.missing-parameter", missingParameter, SqlServer ? "SqlError" : "InvalidArgument");

            // A failed statement inside a request: the request refuses to commit and nothing of it is kept.
            var t = Table("faults");
            s.ExecuteNonQuery(Guid.Empty, "CREATE TABLE " + t + " (id int PRIMARY KEY)", null);
            tablesCreated.Add(t);
            var request = s.CreateDatabaseRequest(null);
            s.ExecuteNonQuery(request, "INSERT INTO " + t + " VALUES (1)", null);
            var duplicate = ExpectFault("sql-faults.request.duplicate-key", () => s.ExecuteNonQuery(request, "INSERT INTO " + t + " VALUES (1)", null));
            CheckFault("sql-faults.request.duplicate-key", duplicate, "SqlError");
            var commit = ExpectFault("sql-faults.request.commit-after-error", () => s.CloseDatabaseRequest(request, true));
            CheckFault("sql-faults.request.commit-after-error", commit, "SqlError");
            s.CloseDatabaseRequest(request, false);
            report.Equal("sql-faults.request.nothing-committed", 0L, Count(s, Guid.Empty, t));

            report.Equal("sql-faults.channel-still-open", CommunicationState.Opened, channel.State);
            report.Equal("sql-faults.last-heartbeat", true, s.Heartbeat());
        }

        // Several channels at once (ConcurrentChannels), each on its own thread, each checking that every answer is its
        // own.
        static void Concurrency(int threads)
        {
            const int rounds = 5;
            var barrier = new Barrier(threads);
            var workers = Enumerable.Range(0, threads).Select(n => new Thread(() =>
            {
                IIDBService channel = null;
                var name = "concurrency.thread" + n;
                try
                {
                    channel = NewFactory().CreateChannel();
                    ((ICommunicationObject)channel).Open();
                    barrier.SignalAndWait(TimeSpan.FromSeconds(60));
                    string heartbeat = null, files = null, scalar = null;
                    for (int round = 0; round < rounds; round++)
                    {
                        var tag = "thread " + n + " round " + round;
                        if (!channel.Heartbeat() && heartbeat == null) heartbeat = tag + ": false";
                        var content = Encoding.UTF8.GetBytes(tag);
                        var id = channel.NewFile(NewFileData(content, "t" + n + ".txt", "text/plain"));
                        var got = channel.GetFile(id);
                        if ((got == null || got.Content == null || !got.Content.SequenceEqual(content) || got.Sha256 != Report.Sha256Hex(content)) && files == null) files = tag + ": " + (got == null ? "null" : Report.Describe(got.Content));
                        if (!channel.DeleteFile(id) && files == null) files = tag + ": DeleteFile false";
                        var echoed = channel.ReturnScalar(Guid.Empty, "SELECT @tag", Ps(P("@tag", tag)));
                        if (!tag.Equals(echoed) && scalar == null) scalar = tag + ": " + Report.Describe(echoed);
                    }
                    report.Check(name + ".heartbeat", heartbeat == null, "true every round", heartbeat);
                    report.Check(name + ".files", files == null, "its own content every round", files);
                    report.Check(name + ".scalar", scalar == null, "its own tag every round", scalar);
                    ((ICommunicationObject)channel).Close();
                }
                catch (Exception e)
                {
                    if (channel != null) ((ICommunicationObject)channel).Abort();
                    report.Check(name, false, null, null, DescribeException(e));
                }
            })).ToList();
            foreach (var w in workers) w.Start();
            foreach (var w in workers)
            {
                if (!w.Join(TimeSpan.FromMinutes(3))) report.Check("concurrency.joined", false, "all threads done", "a thread still runs");
            }
        }

        static void Cleanup(IIDBService s)
        {
            foreach (var t in tablesCreated) report.Equal("cleanup.drop." + t.Substring(prefix.Length + 1), -1, s.ExecuteNonQuery(Guid.Empty, "DROP TABLE " + t, null));
            tablesCreated.Clear();
            typesTableReady = false;
        }
    }
}
