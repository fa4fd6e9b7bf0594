// Calls the service through the client Kiota generated from /openapi.json (Client/, namespace Gen): a request builder
// per path, so one PostAsync per body form, and reports JSON-line checks (test/wcf-shared/Report.cs).
// Usage: KiotaClient <base URL> <base URL of a service that requires keys> <key> <folder with bill.pdf, plain.pdf, bill.jpg>
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net.Http;
using System.Text;
using System.Threading.Tasks;
using Gen;
using Gen.Models;
using IDBService.E2E;
using Microsoft.Kiota.Abstractions;
using Microsoft.Kiota.Abstractions.Authentication;
using Microsoft.Kiota.Abstractions.Serialization;
using Microsoft.Kiota.Http.HttpClientLibrary;

namespace IDBService.Kiota
{
    public static class Program
    {
        public static async Task<int> Main(string[] args)
        {
            Console.OutputEncoding = new UTF8Encoding(false);
            var report = new Report();
            var watch = Stopwatch.StartNew();
            byte[] Read(string name) => File.ReadAllBytes(Path.Combine(args[3], name));
            var client = new SwissDocClient(new HttpClientRequestAdapter(new AnonymousAuthenticationProvider()) { BaseUrl = args[0] });
            var documents = client.Api.V1.Documents;
            try
            {
                var validated = await documents.Validate.PostAsync(new ValidatePdfRequest { Base64Pdf = Read("bill.pdf") });
                report.Equal("validate.json.pages", (int?)1, validated?.PageCount);
                var fromFile = await documents.Validate.File.PostAsync(new MemoryStream(Read("plain.pdf")));
                report.Equal("validate.file.pages", (int?)2, fromFile?.PageCount);
                var validateForm = new MultipartBody();
                validateForm.AddOrReplacePart("file", "application/pdf", new MemoryStream(Read("plain.pdf")), "plain.pdf");
                var fromForm = await documents.Validate.Form.PostAsync(validateForm);
                report.Equal("validate.form.pages", (int?)2, fromForm?.PageCount);

                // References of mixed types: a string, a number, a number beyond 64 bits, an object.
                var references = new UntypedArray(new List<UntypedNode>
                {
                    new UntypedString("INV-2026-0042"),
                    new UntypedLong(17),
                    new UntypedDecimal(12345678901234567890m),
                    new UntypedObject(new Dictionary<string, UntypedNode> { ["k"] = new UntypedArray(new List<UntypedNode> { new UntypedBoolean(true), new UntypedNull() }) }),
                });
                var extracted = await documents.ExtractSwissQrCode.PostAsync(new ExtractSwissQrCodeRequest { References = references, Base64Pdf = Read("bill.pdf") });
                report.Equal("extract.json.iban", "CH4431999123000889012", extracted?.QrCodeData?.Iban);
                report.Equal("extract.json.references", "[\"INV-2026-0042\",17,12345678901234567890,{\"k\":[true,null]}]", Json(extracted?.References));
                var referencesText = "[\"INV-7\",7]";
                var photo = await documents.ExtractSwissQrCode.File.PostAsync(new MemoryStream(Read("bill.jpg")), "image/jpeg", c => c.QueryParameters.References = referencesText);
                report.Equal("extract.file.jpeg.iban", "CH4431999123000889012", photo?.QrCodeData?.Iban);
                report.Equal("extract.file.jpeg.references", referencesText, Json(photo?.References));
                var form = new MultipartBody();
                form.AddOrReplacePart("file", "application/pdf", new MemoryStream(Read("bill.pdf")), "bill.pdf");
                form.AddOrReplacePart("references", "text/plain", referencesText);
                var fromExtractForm = await documents.ExtractSwissQrCode.Form.PostAsync(form);
                report.Equal("extract.form.iban", "CH4431999123000889012", fromExtractForm?.QrCodeData?.Iban);

                // 404: the generated ProblemDetails is the exception thrown.
                try
                {
                    await documents.ExtractSwissQrCode.File.PostAsync(new MemoryStream(Read("plain.pdf")), "application/pdf");
                    report.Check("not-found", false, "ProblemDetails", "200");
                }
                catch (ProblemDetails e)
                {
                    report.Equal("not-found.status", 404, e.ResponseStatusCode);
                    report.Equal("not-found.problem-status", (int?)404, e.Status);
                    report.Check("not-found.type", e.Type?.EndsWith("/qr-code-not-found") == true, ".../qr-code-not-found", e.Type);
                    report.Check("not-found.rejected", e.Rejected != null, "rejected", "none");
                }

                // 401 without a key where keys are required; with the key (Kiota's API key provider), the call goes through.
                var locked = new SwissDocClient(new HttpClientRequestAdapter(new AnonymousAuthenticationProvider()) { BaseUrl = args[1] });
                try
                {
                    await locked.Api.V1.Documents.Validate.PostAsync(new ValidatePdfRequest { Base64Pdf = Read("bill.pdf") });
                    report.Check("unauthorized", false, "ProblemDetails", "200");
                }
                catch (ProblemDetails e)
                {
                    report.Equal("unauthorized.status", 401, e.ResponseStatusCode);
                    report.Check("unauthorized.type", e.Type?.EndsWith("/unauthorized") == true, ".../unauthorized", e.Type);
                }
                // Kiota's ApiKeyAuthenticationProvider sends keys over https only; the service here is on loopback http.
                using var keyedHttp = new HttpClient();
                keyedHttp.DefaultRequestHeaders.Add("X-Api-Key", args[2]);
                var keyed = new SwissDocClient(new HttpClientRequestAdapter(new AnonymousAuthenticationProvider(), httpClient: keyedHttp) { BaseUrl = args[1] });
                var withKey = await keyed.Api.V1.Documents.Validate.PostAsync(new ValidatePdfRequest { Base64Pdf = Read("bill.pdf") });
                report.Equal("authorized.pages", (int?)1, withKey?.PageCount);
            }
            catch (Exception e)
            {
                report.Check("http", false, null, null, e.GetType().FullName + ": " + e.Message);
            }
            report.Summary(watch.ElapsedMilliseconds);
            return report.Failed == 0 ? 0 : 1;
        }

        /// <summary>An untyped JSON value written back compactly, to compare with what was sent.</summary>
        static string Json(UntypedNode? node) => node switch
        {
            null or UntypedNull => "null",
            UntypedString s => "\"" + s.GetValue() + "\"",
            UntypedBoolean b => b.GetValue() ? "true" : "false",
            UntypedInteger i => i.GetValue().ToString(CultureInfo.InvariantCulture),
            UntypedLong l => l.GetValue().ToString(CultureInfo.InvariantCulture),
            UntypedDecimal d => d.GetValue().ToString(CultureInfo.InvariantCulture),
            UntypedDouble d => d.GetValue().ToString("R", CultureInfo.InvariantCulture),
            UntypedFloat f => f.GetValue().ToString("R", CultureInfo.InvariantCulture),
            UntypedArray a => "[" + string.Join(",", a.GetValue().Select(Json)) + "]",
            UntypedObject o => "{" + string.Join(",", o.GetValue().Select(p => "\"" + p.Key + "\":" + Json(p.Value))) + "}",
            _ => node.GetType().Name,
        };
    }
}
