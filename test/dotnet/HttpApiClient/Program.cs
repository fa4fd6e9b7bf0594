// Calls the HTTP API as a .NET service would: PostAsJsonAsync / ReadFromJsonAsync with the DTOs of Dtos.cs, and
// ProblemDetails for errors. Each answer it read is reported as an info line holding the DTO written back with the
// same web options (camelCase), so the test compares it with the service's own JSON: a field the DTO lost, or one
// that did not bind, shows up there. JSON-line checks (test/wcf-shared/Report.cs).
// Usage: HttpApiClient <base URL> <folder with bill.pdf, plain.pdf, rejected.pdf>
using System;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Net.Http.Json;
using System.Text;
using System.Text.Json;
using System.Threading.Tasks;
using IDBService.E2E;
using Microsoft.AspNetCore.Mvc;

namespace IDBService.HttpApi
{
    public static class Program
    {
        static readonly JsonSerializerOptions Web = new JsonSerializerOptions(JsonSerializerDefaults.Web);

        public static async Task<int> Main(string[] args)
        {
            Console.OutputEncoding = new UTF8Encoding(false);
            var report = new Report();
            var watch = Stopwatch.StartNew();
            using var http = new HttpClient { BaseAddress = new Uri(args[0].TrimEnd('/') + "/api/v1/documents/") };
            string Pdf(string name) => Convert.ToBase64String(File.ReadAllBytes(Path.Combine(args[1], name)));
            try
            {
                // Validate: every field of ValidatePdfResponse.
                var validate = await http.PostAsJsonAsync("validate", new ValidatePdfRequest { Base64Pdf = Pdf("bill.pdf") });
                report.Equal("validate.status", HttpStatusCode.OK, validate.StatusCode);
                report.Equal("validate.media-type", "application/json", validate.Content.Headers.ContentType?.MediaType);
                var validated = await validate.Content.ReadFromJsonAsync<ValidatePdfResponse>();
                report.Info("validate.dto", JsonSerializer.Serialize(validated, Web));

                // Extract: every field of SwissQrCodeDataDto, references passed through.
                var references = JsonSerializer.Deserialize<JsonElement[]>("[\"INV-2026-0042\",17,12345678901234567890,{\"k\":[true,null]}]");
                var extract = await http.PostAsJsonAsync("extract-swiss-qr-code", new ExtractSwissQrCodeRequest { References = references, Base64Pdf = Pdf("bill.pdf") });
                report.Equal("extract.status", HttpStatusCode.OK, extract.StatusCode);
                var extracted = await extract.Content.ReadFromJsonAsync<ExtractSwissQrCodeResponse>();
                report.Info("extract.dto", JsonSerializer.Serialize(extracted, Web));
                report.Equal("extract.references.raw", string.Join("|", references.Select(r => r.GetRawText())), string.Join("|", (extracted?.References ?? new JsonElement[0]).Select(r => r.GetRawText())));

                // 404: no bill on the last page, read as ProblemDetails with its `rejected` extension.
                foreach (var (name, check) in new[] { ("plain.pdf", "not-found.empty"), ("rejected.pdf", "not-found.rejected") })
                {
                    var missing = await http.PostAsJsonAsync("extract-swiss-qr-code", new ExtractSwissQrCodeRequest { References = new JsonElement[0], Base64Pdf = Pdf(name) });
                    report.Equal(check + ".status", HttpStatusCode.NotFound, missing.StatusCode);
                    report.Equal(check + ".media-type", "application/problem+json", missing.Content.Headers.ContentType?.MediaType);
                    var problem = await missing.Content.ReadFromJsonAsync<ProblemDetails>();
                    report.Check(check + ".type", problem?.Type?.EndsWith("/qr-code-not-found") == true, ".../qr-code-not-found", problem?.Type);
                    report.Equal(check + ".problem-status", (int?)404, problem?.Status);
                    report.Check(check + ".title", !string.IsNullOrEmpty(problem?.Title), "a title", problem?.Title);
                    report.Check(check + ".detail", !string.IsNullOrEmpty(problem?.Detail), "a detail", problem?.Detail);
                    var hasRejected = problem != null && problem.Extensions.TryGetValue("rejected", out var rejected);
                    report.Check(check + ".rejected.present", hasRejected);
                    report.Check(check + ".trace-id.present", problem != null && problem.Extensions.ContainsKey("traceId"));
                    if (hasRejected)
                    {
                        var element = (JsonElement)problem.Extensions["rejected"];
                        report.Info(check + ".rejected", element.GetRawText());
                        var items = element.Deserialize<RejectedCode[]>(Web);
                        report.Info(check + ".rejected.typed", JsonSerializer.Serialize(items, Web));
                    }
                }

                // 400: Base64 .NET's own Convert would refuse too.
                var bad = await http.PostAsJsonAsync("validate", new ValidatePdfRequest { Base64Pdf = "not base64!" });
                report.Equal("bad-base64.status", HttpStatusCode.BadRequest, bad.StatusCode);
                var badProblem = await bad.Content.ReadFromJsonAsync<ProblemDetails>();
                report.Check("bad-base64.type", badProblem?.Type?.EndsWith("/invalid-base64") == true, ".../invalid-base64", badProblem?.Type);
            }
            catch (Exception e)
            {
                report.Check("http", false, null, null, e.GetType().FullName + ": " + e.Message);
            }
            report.Summary(watch.ElapsedMilliseconds);
            return report.Failed == 0 ? 0 : 1;
        }
    }

    /// <summary>One QR code of the last page that is no bill: where it is in reading order and why.</summary>
    public sealed class RejectedCode
    {
        public int Index { get; set; }
        public string Reason { get; set; }
    }
}
