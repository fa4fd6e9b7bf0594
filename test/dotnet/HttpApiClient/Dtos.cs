// The HTTP API's resources as docs/contract/http.md names them, written as a .NET caller writes DTOs:
// PascalCase properties, nullable where a field may be absent, bound by System.Text.Json's default web options
// (camelCase, case-insensitive). Amount is a decimal (money), FileSizeMB a double.
using System.Text.Json;

namespace IDBService.HttpApi
{
    public sealed class ValidatePdfRequest
    {
        public string Base64Pdf { get; set; }
    }

    public sealed class ValidatePdfResponse
    {
        public int PageCount { get; set; }
        public long FileSizeBytes { get; set; }
        public double FileSizeMB { get; set; }
        public string PdfVersion { get; set; }
        public bool HasAttachments { get; set; }
        public int AttachmentCount { get; set; }
    }

    public sealed class ExtractSwissQrCodeRequest
    {
        // References come back exactly as sent: strings, numbers, anything JSON.
        public JsonElement[] References { get; set; }
        public string Base64Pdf { get; set; }
    }

    public sealed class ExtractSwissQrCodeResponse
    {
        public JsonElement[] References { get; set; }
        public SwissQrCodeDataDto QrCodeData { get; set; }
    }

    public sealed class SwissQrCodeDataDto
    {
        public string QrType { get; set; }
        public string Version { get; set; }
        public string CodingType { get; set; }
        public string Iban { get; set; }
        public AddressDataDto Creditor { get; set; }
        public AddressDataDto UltimateCreditor { get; set; }
        public decimal? Amount { get; set; }
        public string Currency { get; set; }
        public AddressDataDto UltimateDebtor { get; set; }
        public string ReferenceType { get; set; }
        public string Reference { get; set; }
        public string UnstructuredMessage { get; set; }
        public string BillInformation { get; set; }
        public string AlternativeProcedureParameters { get; set; }
    }

    public sealed class AddressDataDto
    {
        public string AddressType { get; set; }
        public string Name { get; set; }
        public string Street { get; set; }
        public string BuildingNumber { get; set; }
        public string AddressLine1 { get; set; }
        public string AddressLine2 { get; set; }
        public string PostalCode { get; set; }
        public string City { get; set; }
        public string Country { get; set; }
    }
}
