// A Mono ServiceHost of the IIDBService contract on net.tcp with SecurityMode.None: the benchmark's reference peer
// ("Mono host"), and the server the harness tests itself against while the bridge does not exist.
//   Heartbeat → true; ReturnScalar → 42 (a boxed Int32) whatever the SQL; files and documents in memory (enough for
//   E2EClient's files and documents sections); everything else faults NotSupported.
// Usage: mono MonoHost.exe <port> [host]
// Prints one line {"ready":true,"port":N,"endpoint":"net.tcp://host:N/IDBService"} once it listens; exits when stdin
// closes (the parent died or is done).
//
// What Mono 6.8's net.tcp ServiceHost does, so that its numbers are not mistaken for the protocol's:
// - about 50 ms per call and channel, whatever the client: its channels sleep 50 ms before each receive
//   (TcpDuplexSessionChannel.TryReceive), so throughput grows only with the number of channels;
// - it accepts connections slowly once many are open (0.1 to 2 s, now and then more): open channels one after
//   another, with a generous time-out;
// - two races of its listener lose connections and mix up session strings between parallel channels; MonoListenerFixes
//   below mends both through reflection (without it about one connection in 15 never gets its PreambleAck);
// - it turns an operation's FaultException into an InternalServiceFault unless an IErrorHandler writes the fault
//   (ContractFaults below), and sends faults without RelatesTo.
using System;
using System.Collections;
using System.Collections.Generic;
using System.Data;
using System.Linq;
using System.Reflection;
using System.Security.Cryptography;
using System.ServiceModel;
using System.ServiceModel.Channels;
using System.ServiceModel.Description;
using System.ServiceModel.Dispatcher;
using System.Text;
using System.Threading;
using IDBService.Contracts;
using IDBService.E2E;

namespace IDBService.E2E
{
    [ServiceBehavior(InstanceContextMode = InstanceContextMode.Single, ConcurrencyMode = ConcurrencyMode.Multiple)]
    public sealed class MonoIdbService : IIDBService
    {
        readonly object gate = new object();
        readonly Dictionary<Guid, FileData> files = new Dictionary<Guid, FileData>();
        readonly Dictionary<Guid, DocumentData> documents = new Dictionary<Guid, DocumentData>();

        public bool Heartbeat() { return true; }

        public object ReturnScalar(Guid requestId, string sql, QueryParameter[] parameters) { return 42; }

        public Guid CreateDatabaseRequest(string database) { throw NotSupported("CreateDatabaseRequest"); }
        public bool CloseDatabaseRequest(Guid requestId, bool commit) { throw NotSupported("CloseDatabaseRequest"); }
        public DataTable ReturnDatatable(Guid requestId, string sql, QueryParameter[] parameters) { throw NotSupported("ReturnDatatable"); }
        public int ExecuteNonQuery(Guid requestId, string sql, QueryParameter[] parameters) { throw NotSupported("ExecuteNonQuery"); }

        public Guid NewFile(FileData file)
        {
            var id = Guid.NewGuid();
            lock (gate) files[id] = Stored(file, id, DateTime.UtcNow);
            return id;
        }

        public bool UpdateFile(FileData file)
        {
            lock (gate)
            {
                FileData old;
                if (file == null || !files.TryGetValue(file.FileId, out old)) return false;
                var stored = Stored(file, file.FileId, old.CreatedUtc);
                stored.ModifiedUtc = DateTime.UtcNow;
                files[file.FileId] = stored;
                return true;
            }
        }

        public FileData GetFile(Guid fileId)
        {
            lock (gate)
            {
                FileData f;
                return files.TryGetValue(fileId, out f) ? f : null;
            }
        }

        public bool DeleteFile(Guid fileId)
        {
            lock (gate)
            {
                if (!files.Remove(fileId)) return false;
                foreach (var id in documents.Where(d => d.Value.FileId == fileId).Select(d => d.Key).ToList()) documents.Remove(id);
                return true;
            }
        }

        public DocumentData GetDocumentByDocumentId(Guid documentId)
        {
            lock (gate)
            {
                DocumentData d;
                return documents.TryGetValue(documentId, out d) ? d : null;
            }
        }

        public DocumentData[] GetDocumentByContainerId(Guid containerId)
        {
            lock (gate) return documents.Values.Where(d => d.ContainerId == containerId).ToArray();
        }

        public Guid NewFileIndex(FileIndexData index)
        {
            lock (gate)
            {
                FileData file;
                if (index == null || !files.TryGetValue(index.FileId, out file))
                {
                    throw new FaultException(new FaultReason("There is no file " + (index == null ? "" : index.FileId.ToString()) + "."),
                        FaultCode.CreateSenderFaultCode("FileNotFound", "http://tempuri.org/"));
                }
                var id = index.DocumentId == Guid.Empty ? Guid.NewGuid() : index.DocumentId;
                DocumentData existing;
                var created = documents.TryGetValue(id, out existing) ? existing.CreatedUtc : DateTime.UtcNow;
                documents[id] = new DocumentData
                {
                    ContainerId = index.ContainerId, ContentType = file.ContentType, CreatedUtc = created, DocumentId = id,
                    Fields = index.Fields ?? new IndexField[0], FileId = file.FileId, FileName = file.FileName, Length = file.Length, Title = index.Title,
                };
                return id;
            }
        }

        static FileData Stored(FileData file, Guid id, DateTime created)
        {
            if (file == null || file.Content == null) throw new FaultException(new FaultReason("A file needs content."), FaultCode.CreateSenderFaultCode("InvalidArgument", "http://tempuri.org/"));
            string sha;
            using (var h = SHA256.Create()) sha = string.Concat(h.ComputeHash(file.Content).Select(b => b.ToString("x2")));
            return new FileData
            {
                Content = file.Content, ContentType = file.ContentType, CreatedUtc = created, FileId = id, FileName = file.FileName,
                Length = file.Content.LongLength, ModifiedUtc = created, Sha256 = sha,
            };
        }

        static FaultException NotSupported(string operation)
        {
            return new FaultException(new FaultReason(operation + " is not supported by MonoHost."), FaultCode.CreateSenderFaultCode("NotSupported", "http://tempuri.org/"));
        }
    }

    /// <summary>
    /// Mono's dispatcher turns an operation's FaultException into an InternalServiceFault; this handler writes the
    /// fault as thrown (code, subcode, reason) so that a client sees the contract's fault names.
    /// </summary>
    public sealed class ContractFaults : IErrorHandler, IServiceBehavior
    {
        public bool HandleError(Exception error) { return true; }

        public void ProvideFault(Exception error, MessageVersion version, ref Message fault)
        {
            var f = error as FaultException;
            if (f == null) return;
            fault = Message.CreateMessage(version, MessageFault.CreateFault(f.Code, f.Reason), "http://www.w3.org/2005/08/addressing/soap/fault");
        }

        public void AddBindingParameters(ServiceDescription description, ServiceHostBase host, System.Collections.ObjectModel.Collection<ServiceEndpoint> endpoints, BindingParameterCollection parameters) { }

        public void ApplyDispatchBehavior(ServiceDescription description, ServiceHostBase host)
        {
            foreach (ChannelDispatcher dispatcher in host.ChannelDispatchers) dispatcher.ErrorHandlers.Add(this);
        }

        public void Validate(ServiceDescription description, ServiceHostBase host) { }
    }

    /// <summary>
    /// Two races in Mono 6.8's net.tcp listener (TcpChannelListener), mended through reflection after host.Open():
    /// - a lost wake-up: a connection accepted between the accept loop's look at its queue and its wait is left in the
    ///   queue until the next connection arrives (the client never gets its PreambleAck). Fixed by a handle list that
    ///   sets a newly added handle when the queue is not empty.
    /// - one BinaryMessageEncoder for all connections, whose CurrentReaderSession / CurrentWriterSession each
    ///   connection sets before it reads or writes: parallel channels mix up their session strings. Fixed by giving
    ///   each accepted channel a copy of the channel info with an encoder of its own.
    /// Without these, MonoHost loses about one connection in 15 and fails now and then with parallel channels.
    /// </summary>
    public static class MonoListenerFixes
    {
        const BindingFlags Fields = BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.Public;

        public static void Apply(ServiceHost host)
        {
            foreach (ChannelDispatcher dispatcher in host.ChannelDispatchers)
            {
                object listener = dispatcher.Listener;
                while (listener != null && listener.GetType().Name != "TcpChannelListener`1") listener = InnerListener(listener);
                if (listener == null) throw new InvalidOperationException("no TcpChannelListener under " + dispatcher.Listener.GetType().FullName);
                var type = listener.GetType();
                var queue = (ICollection)type.GetField("accepted_clients", Fields).GetValue(listener);
                var handlesField = type.GetField("accept_handles", Fields);
                var waking = new WakingHandles(queue);
                foreach (var handle in (IEnumerable<ManualResetEvent>)handlesField.GetValue(listener)) waking.Add(handle);
                handlesField.SetValue(listener, waking);

                var channelsField = type.GetField("accepted_channels", Fields);
                if (channelsField.FieldType != typeof(SynchronizedCollection<IDuplexSessionChannel>)) throw new InvalidOperationException("unexpected " + channelsField.FieldType);
                var info = type.GetField("info", Fields).GetValue(listener);
                channelsField.SetValue(listener, new OwnEncoderChannels(info));
            }
        }

        static object InnerListener(object listener)
        {
            for (var t = listener.GetType(); t != null; t = t.BaseType)
            {
                foreach (var f in t.GetFields(Fields | BindingFlags.DeclaredOnly))
                {
                    if (typeof(IChannelListener).IsAssignableFrom(f.FieldType)) return f.GetValue(listener);
                }
            }
            return null;
        }

        sealed class WakingHandles : SynchronizedCollection<ManualResetEvent>
        {
            readonly ICollection queue;
            public WakingHandles(ICollection queue) { this.queue = queue; }

            protected override void InsertItem(int index, ManualResetEvent item)
            {
                base.InsertItem(index, item);
                if (queue.Count > 0) item.Set();
            }
        }

        sealed class OwnEncoderChannels : SynchronizedCollection<IDuplexSessionChannel>
        {
            static readonly MethodInfo Clone = typeof(object).GetMethod("MemberwiseClone", BindingFlags.Instance | BindingFlags.NonPublic);
            readonly object info;
            public OwnEncoderChannels(object info) { this.info = info; }

            protected override void InsertItem(int index, IDuplexSessionChannel channel)
            {
                // The channel reads info.MessageEncoder when it opens, after the listener has added it here.
                var own = Clone.Invoke(info, null);
                var encoderField = own.GetType().GetField("<MessageEncoder>k__BackingField", Fields);
                var encoder = encoderField.GetValue(own);
                encoderField.SetValue(own, Clone.Invoke(encoder, null));
                channel.GetType().GetField("info", Fields).SetValue(channel, own);
                // Out of the list as soon as it starts closing: the accept loop reads every listed channel's
                // TcpClient.Client.RemoteEndPoint, which throws once the client is closed, and the new connection
                // being accepted is lost with it.
                EventHandler unlist = delegate { Remove(channel); };
                channel.Closing += unlist;
                channel.Faulted += unlist;
                base.InsertItem(index, channel);
            }
        }
    }

    public static class MonoHostProgram
    {
        public static int Main(string[] args)
        {
            if (args.Length < 1) { Console.Error.WriteLine("usage: MonoHost.exe <port> [host]"); return 2; }
            var port = int.Parse(args[0]);
            var hostName = args.Length > 1 ? args[1] : "127.0.0.1";
            var address = "net.tcp://" + hostName + ":" + port + "/IDBService";
            // Mono's net.tcp channels block a pool thread each while they wait for a message; without spare threads a
            // new connection waits (no PreambleAck) until the pool grows, about one thread a second.
            ThreadPool.SetMinThreads(256, 256);
            var host = new ServiceHost(new MonoIdbService());
            var binding = E2EBinding.Create(TimeSpan.FromMinutes(2));
            binding.MaxConnections = 1000;
            binding.ListenBacklog = 1000;
            host.AddServiceEndpoint(typeof(IIDBService), binding, address);
            var throttle = host.Description.Behaviors.Find<ServiceThrottlingBehavior>();
            if (throttle == null) host.Description.Behaviors.Add(throttle = new ServiceThrottlingBehavior());
            throttle.MaxConcurrentCalls = 1000;
            throttle.MaxConcurrentSessions = 1000;
            throttle.MaxConcurrentInstances = 1000;
            var debug = host.Description.Behaviors.Find<ServiceDebugBehavior>();
            if (debug == null) host.Description.Behaviors.Add(debug = new ServiceDebugBehavior());
            debug.IncludeExceptionDetailInFaults = true;
            host.Description.Behaviors.Add(new ContractFaults());
            host.Open();
            MonoListenerFixes.Apply(host);
            Console.Out.WriteLine("{\"ready\":true,\"port\":" + port + ",\"endpoint\":\"" + address + "\"}");
            Console.Out.Flush();
            // Until the parent closes stdin (or dies, which closes it too).
            while (Console.In.Read() >= 0) { }
            try { host.Close(TimeSpan.FromSeconds(2)); } catch { host.Abort(); }
            return 0;
        }
    }
}
