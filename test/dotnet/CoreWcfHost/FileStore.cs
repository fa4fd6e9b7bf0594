// IIDBService's files and documents on the CoreWCF host (Service.cs has the rest of IdbService): each file's content
// in the folder under its id, written atomically, its metadata (name, type, length, SHA-256, dates) and the documents'
// index fields in the database. Compiled with COREWCF for the host, against System.ServiceModel for the type check,
// as Service.cs is.
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Data;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Security.Cryptography;
using System.Text.RegularExpressions;
using IDBService.Contracts;
#if COREWCF
using CoreWCF;
#else
using System.ServiceModel;
#endif

namespace IDBService.CoreWcfHost
{
    public sealed partial class IdbService
    {
        static string Hex(byte[] content) => System.Convert.ToHexString(SHA256.HashData(content)).ToLowerInvariant();
        static string Stamp(DateTime d) => d.ToString("o", CultureInfo.InvariantCulture);
        static DateTime ReadStamp(string s) => DateTime.Parse(s, CultureInfo.InvariantCulture, DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal);
        string PathOf(Guid id) => Path.Combine(filesDir, id.ToString("N"));

        void WriteAtomically(Guid id, byte[] content)
        {
            var temp = PathOf(id) + "." + Guid.NewGuid().ToString("N") + ".tmp";
            File.WriteAllBytes(temp, content ?? new byte[0]);
            File.Move(temp, PathOf(id), overwrite: true);
        }

        public Guid NewFile(FileData file)
        {
            var id = Guid.NewGuid();
            var content = file?.Content ?? new byte[0];
            WriteAtomically(id, content);
            var now = Stamp(DateTime.UtcNow);
            using var c = Open();
            Exec(c, null, "INSERT INTO idb_files VALUES (@id, @name, @type, @length, @sha, @now, @now)", ("@id", id.ToString()), ("@name", file?.FileName), ("@type", file?.ContentType), ("@length", (long)content.Length), ("@sha", Hex(content)), ("@now", now));
            return id;
        }

        public bool UpdateFile(FileData file)
        {
            if (file == null) return false;
            using var c = Open();
            using (var exists = c.CreateCommand())
            {
                exists.CommandText = "SELECT count(*) FROM idb_files WHERE id = @id";
                Param(exists, "@id", file.FileId.ToString());
                if (System.Convert.ToInt64(exists.ExecuteScalar(), CultureInfo.InvariantCulture) == 0) return false;
            }
            var content = file.Content ?? new byte[0];
            WriteAtomically(file.FileId, content);
            Exec(c, null, "UPDATE idb_files SET name = @name, content_type = @type, length = @length, sha256 = @sha, modified = @now WHERE id = @id", ("@id", file.FileId.ToString()), ("@name", file.FileName), ("@type", file.ContentType), ("@length", (long)content.Length), ("@sha", Hex(content)), ("@now", Stamp(DateTime.UtcNow)));
            return true;
        }

        public FileData GetFile(Guid fileId)
        {
            using var c = Open();
            using var cmd = c.CreateCommand();
            cmd.CommandText = "SELECT name, content_type, length, sha256, created, modified FROM idb_files WHERE id = @id";
            Param(cmd, "@id", fileId.ToString());
            using var r = cmd.ExecuteReader();
            if (!r.Read()) return null;
            var content = File.ReadAllBytes(PathOf(fileId));
            var sha = r.GetString(3);
            if (Hex(content) != sha) throw Fault("SqlError", "The stored file does not match its SHA-256.", sender: false);
            return new FileData
            {
                Content = content,
                ContentType = r.IsDBNull(1) ? null : r.GetString(1),
                CreatedUtc = ReadStamp(r.GetString(4)),
                FileId = fileId,
                FileName = r.IsDBNull(0) ? null : r.GetString(0),
                Length = r.GetInt64(2),
                ModifiedUtc = ReadStamp(r.GetString(5)),
                Sha256 = sha,
            };
        }

        public bool DeleteFile(Guid fileId)
        {
            using var c = Open();
            using var t = c.BeginTransaction();
            using var cmd = c.CreateCommand();
            cmd.Transaction = t;
            cmd.CommandText = "DELETE FROM idb_files WHERE id = @id";
            Param(cmd, "@id", fileId.ToString());
            if (cmd.ExecuteNonQuery() == 0) return false;
            Exec(c, t, "DELETE FROM idb_fields WHERE document_id IN (SELECT id FROM idb_documents WHERE file_id = @id)", ("@id", fileId.ToString()));
            Exec(c, t, "DELETE FROM idb_documents WHERE file_id = @id", ("@id", fileId.ToString()));
            t.Commit();
            File.Delete(PathOf(fileId));
            return true;
        }

        public Guid NewFileIndex(FileIndexData index)
        {
            if (index == null) throw Fault("InvalidArgument", "No index was given.");
            using var c = Open();
            using var t = c.BeginTransaction();
            using (var exists = c.CreateCommand())
            {
                exists.Transaction = t;
                exists.CommandText = "SELECT count(*) FROM idb_files WHERE id = @id";
                Param(exists, "@id", index.FileId.ToString());
                if (System.Convert.ToInt64(exists.ExecuteScalar(), CultureInfo.InvariantCulture) == 0) throw Fault("FileNotFound", $"There is no file {index.FileId}.");
            }
            var id = index.DocumentId == Guid.Empty ? Guid.NewGuid() : index.DocumentId;
            Exec(c, t, "DELETE FROM idb_fields WHERE document_id = @id", ("@id", id.ToString()));
            Exec(c, t, "INSERT INTO idb_documents VALUES (@id, @container, @file, @title, @now) ON CONFLICT(id) DO UPDATE SET container = excluded.container, file_id = excluded.file_id, title = excluded.title",
                ("@id", id.ToString()), ("@container", index.ContainerId.ToString()), ("@file", index.FileId.ToString()), ("@title", index.Title), ("@now", Stamp(DateTime.UtcNow)));
            var fields = index.Fields ?? new IndexField[0];
            for (int i = 0; i < fields.Length; i++) Exec(c, t, "INSERT INTO idb_fields VALUES (@id, @ord, @name, @value)", ("@id", id.ToString()), ("@ord", (long)i), ("@name", fields[i]?.Name), ("@value", fields[i]?.Value));
            t.Commit();
            return id;
        }

        DocumentData[] Documents(string where, Guid value)
        {
            using var c = Open();
            var docs = new List<DocumentData>();
            using (var cmd = c.CreateCommand())
            {
                cmd.CommandText = "SELECT d.id, d.container, d.created, d.file_id, d.title, f.name, f.content_type, f.length FROM idb_documents d JOIN idb_files f ON f.id = d.file_id WHERE " + where + " = @v ORDER BY d.created, d.id";
                Param(cmd, "@v", value.ToString());
                using var r = cmd.ExecuteReader();
                while (r.Read())
                {
                    docs.Add(new DocumentData
                    {
                        DocumentId = Guid.Parse(r.GetString(0)),
                        ContainerId = Guid.Parse(r.GetString(1)),
                        CreatedUtc = ReadStamp(r.GetString(2)),
                        FileId = Guid.Parse(r.GetString(3)),
                        Title = r.IsDBNull(4) ? null : r.GetString(4),
                        FileName = r.IsDBNull(5) ? null : r.GetString(5),
                        ContentType = r.IsDBNull(6) ? null : r.GetString(6),
                        Length = r.GetInt64(7),
                    });
                }
            }
            foreach (var d in docs)
            {
                using var cmd = c.CreateCommand();
                cmd.CommandText = "SELECT name, value FROM idb_fields WHERE document_id = @id ORDER BY ord";
                Param(cmd, "@id", d.DocumentId.ToString());
                using var r = cmd.ExecuteReader();
                var fields = new List<IndexField>();
                while (r.Read()) fields.Add(new IndexField { Name = r.IsDBNull(0) ? null : r.GetString(0), Value = r.IsDBNull(1) ? null : r.GetString(1) });
                d.Fields = fields.ToArray();
            }
            return docs.ToArray();
        }

        public DocumentData GetDocumentByDocumentId(Guid documentId) => Documents("d.id", documentId).FirstOrDefault();

        public DocumentData[] GetDocumentByContainerId(Guid containerId) => Documents("d.container", containerId);
    }
}
