// Calls the service through the client NSwag generated from /openapi.json (Client.cs, namespace Gen), one method per
// body form, as a .NET caller would write it, and reports JSON-line checks (test/wcf-shared/Report.cs).
// Usage: NswagClient <base URL> <base URL of a service that requires keys> <key> <folder with bill.pdf, plain.pdf, bill.jpg>
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Net.Http;
using System.Text;
using System.Threading.Tasks;
using Gen;
using IDBService.E2E;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace IDBService.Nswag
{
    public static class Program
    {
        public static async Task<int> Main(string[] args)
        {
            Console.OutputEncoding = new UTF8Encoding(false);
            var report = new Report();
            var watch = Stopwatch.StartNew();
            using var http = new HttpClient();
            var client = new SwissDocClient(args[0], http);
            byte[] Read(string name) => File.ReadAllBytes(Path.Combine(args[3], name));
            FileParameter Part(string name, string type) => new FileParameter(new MemoryStream(Read(name)), name, type);
            try
            {
                var validated = await client.ValidatePdfAsync(new ValidatePdfRequest { Base64Pdf = Read("bill.pdf") });
                report.Equal("validate.json.pages", 1, validated.PageCount);
                var fromFile = await client.ValidatePdfFromFileAsync(new MemoryStream(Read("plain.pdf")));
                report.Equal("validate.file.pages", 2, fromFile.PageCount);
                var fromForm = await client.ValidatePdfFromFormAsync(Part("plain.pdf", "application/pdf"));
                report.Equal("validate.form.pages", 2, fromForm.PageCount);

                // References of mixed types, as JSON values: a string, a number, a number beyond 64 bits, an object.
                var references = JArray.Parse("[\"INV-2026-0042\",17,12345678901234567890,{\"k\":[true,null]}]");
                var extracted = await client.ExtractSwissQrCodeAsync(new ExtractSwissQrCodeRequest
                {
                    References = references.Cast<object>().ToList(),
                    Base64Pdf = Read("bill.pdf"),
                });
                report.Equal("extract.json.iban", "CH4431999123000889012", extracted.QrCodeData.Iban);
                report.Equal("extract.json.references", references.ToString(Formatting.None), JArray.FromObject(extracted.References).ToString(Formatting.None));
                var referencesText = "[\"INV-7\",7]";
                var photo = await client.ExtractSwissQrCodeFromFileAsync(referencesText, Part("bill.jpg", "image/jpeg"));
                report.Equal("extract.file.jpeg.iban", "CH4431999123000889012", photo.QrCodeData.Iban);
                report.Equal("extract.file.jpeg.references", referencesText, JArray.FromObject(photo.References).ToString(Formatting.None));
                var form = await client.ExtractSwissQrCodeFromFormAsync(Part("bill.pdf", "application/pdf"), referencesText);
                report.Equal("extract.form.iban", "CH4431999123000889012", form.QrCodeData.Iban);

                // 404: the generator's exception carries its ProblemDetails.
                try
                {
                    await client.ExtractSwissQrCodeFromFileAsync(null, Part("plain.pdf", "application/pdf"));
                    report.Check("not-found", false, "ApiException<ProblemDetails>", "200");
                }
                catch (ApiException<ProblemDetails> e)
                {
                    report.Equal("not-found.status", 404, e.StatusCode);
                    report.Equal("not-found.problem-status", 404, e.Result.Status);
                    report.Check("not-found.type", e.Result.Type?.EndsWith("/qr-code-not-found") == true, ".../qr-code-not-found", e.Result.Type);
                    report.Check("not-found.rejected", e.Result.Rejected != null, "rejected", "none");
                }

                // 401 without a key where keys are required; with the key, the call goes through.
                using var keyed = new HttpClient();
                var locked = new SwissDocClient(args[1], keyed);
                try
                {
                    await locked.ValidatePdfAsync(new ValidatePdfRequest { Base64Pdf = Read("bill.pdf") });
                    report.Check("unauthorized", false, "ApiException<ProblemDetails>", "200");
                }
                catch (ApiException<ProblemDetails> e)
                {
                    report.Equal("unauthorized.status", 401, e.StatusCode);
                    report.Check("unauthorized.type", e.Result.Type?.EndsWith("/unauthorized") == true, ".../unauthorized", e.Result.Type);
                }
                keyed.DefaultRequestHeaders.Add("X-Api-Key", args[2]);
                var withKey = await locked.ValidatePdfAsync(new ValidatePdfRequest { Base64Pdf = Read("bill.pdf") });
                report.Equal("authorized.pages", 1, withKey.PageCount);
            }
            catch (Exception e)
            {
                report.Check("http", false, null, null, e.GetType().FullName + ": " + e.Message);
            }
            report.Summary(watch.ElapsedMilliseconds);
            return report.Failed == 0 ? 0 : 1;
        }
    }
}
