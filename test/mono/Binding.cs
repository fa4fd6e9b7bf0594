// The binding every Mono program here uses: NetTcpBinding as the existing clients configure it (64 MiB messages and
// reader quotas, far above WCF's 64 KiB defaults), minus Windows security, which Mono cannot do.
using System;
using System.ServiceModel;

namespace IDBService.E2E
{
    public static class E2EBinding
    {
        public const int MaxMessageBytes = 64 * 1024 * 1024;

        public static NetTcpBinding Create(TimeSpan timeout)
        {
            var binding = new NetTcpBinding(SecurityMode.None);
            binding.MaxReceivedMessageSize = MaxMessageBytes;
            binding.MaxBufferSize = MaxMessageBytes; // buffered transfer: must equal MaxReceivedMessageSize
            binding.MaxBufferPoolSize = MaxMessageBytes;
            binding.ReaderQuotas.MaxArrayLength = MaxMessageBytes;
            binding.ReaderQuotas.MaxStringContentLength = MaxMessageBytes;
            binding.ReaderQuotas.MaxBytesPerRead = MaxMessageBytes;
            binding.ReaderQuotas.MaxDepth = 64;
            binding.ReaderQuotas.MaxNameTableCharCount = MaxMessageBytes;
            binding.OpenTimeout = timeout;
            binding.CloseTimeout = timeout;
            binding.SendTimeout = timeout;
            binding.ReceiveTimeout = TimeSpan.FromMinutes(10);
            return binding;
        }
    }
}
