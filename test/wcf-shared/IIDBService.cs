// The IIDBService contract exactly as docs/contract/iidbservice.md writes it: what the existing .NET clients are
// compiled against. Shared by Mono's E2EClient and MonoHost (test/mono, compiled with mcs) and by .NET's WcfClient
// (System.ServiceModel) and CoreWcfHost (CoreWCF, built with COREWCF defined: the same attributes in CoreWCF's
// namespace), which link it. Keep it the spec's shapes: names, namespaces, member sets.
using System;
using System.Data;
using System.Runtime.Serialization;
#if COREWCF
using CoreWCF;
#else
using System.ServiceModel;
#endif

namespace IDBService.Contracts
{
    [ServiceContract(Namespace = "http://tempuri.org/", Name = "IIDBService")]
    public interface IIDBService
    {
        [OperationContract] bool Heartbeat();

        [OperationContract] Guid CreateDatabaseRequest(string database);
        [OperationContract] bool CloseDatabaseRequest(Guid requestId, bool commit);

        [OperationContract] DataTable ReturnDatatable(Guid requestId, string sql, QueryParameter[] parameters);
        [OperationContract] object ReturnScalar(Guid requestId, string sql, QueryParameter[] parameters);
        [OperationContract] int ExecuteNonQuery(Guid requestId, string sql, QueryParameter[] parameters);

        [OperationContract] Guid NewFile(FileData file);
        [OperationContract] bool UpdateFile(FileData file);
        [OperationContract] FileData GetFile(Guid fileId);
        [OperationContract] bool DeleteFile(Guid fileId);

        [OperationContract] DocumentData GetDocumentByDocumentId(Guid documentId);
        [OperationContract] DocumentData[] GetDocumentByContainerId(Guid containerId);
        [OperationContract] Guid NewFileIndex(FileIndexData index);
    }

    [DataContract(Namespace = "http://schemas.datacontract.org/2004/07/IDBService.Contracts")]
    public class QueryParameter
    {
        [DataMember] public string Name;
        [DataMember] public object Value;
    }

    [DataContract(Namespace = "http://schemas.datacontract.org/2004/07/IDBService.Contracts")]
    public class IndexField
    {
        [DataMember] public string Name;
        [DataMember] public string Value;
    }

    [DataContract(Namespace = "http://schemas.datacontract.org/2004/07/IDBService.Contracts")]
    public class FileData
    {
        [DataMember] public byte[] Content;
        [DataMember] public string ContentType;
        [DataMember] public DateTime CreatedUtc;
        [DataMember] public Guid FileId;
        [DataMember] public string FileName;
        [DataMember] public long Length;
        [DataMember] public DateTime ModifiedUtc;
        [DataMember] public string Sha256;
    }

    [DataContract(Namespace = "http://schemas.datacontract.org/2004/07/IDBService.Contracts")]
    public class DocumentData
    {
        [DataMember] public Guid ContainerId;
        [DataMember] public string ContentType;
        [DataMember] public DateTime CreatedUtc;
        [DataMember] public Guid DocumentId;
        [DataMember] public IndexField[] Fields;
        [DataMember] public Guid FileId;
        [DataMember] public string FileName;
        [DataMember] public long Length;
        [DataMember] public string Title;
    }

    [DataContract(Namespace = "http://schemas.datacontract.org/2004/07/IDBService.Contracts")]
    public class FileIndexData
    {
        [DataMember] public Guid ContainerId;
        [DataMember] public Guid DocumentId;
        [DataMember] public IndexField[] Fields;
        [DataMember] public Guid FileId;
        [DataMember] public string Title;
    }
}
