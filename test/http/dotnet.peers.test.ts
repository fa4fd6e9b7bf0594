/**
 * The HTTP API as a .NET caller sees it (test/dotnet/HttpApiClient): HttpClient + System.Net.Http.Json with DTO classes
 * named as in docs/contract/http.md and the default web options. Every field the service answers must bind to
 * the DTO (the DTO written back with the same options equals the service's own JSON), references come back as sent,
 * and a 404 reads as ASP.NET Core's ProblemDetails with its `rejected` extension. Skips with a message without
 * `dotnet`.
 */
import { serve, type ServerType } from '@hono/node-server';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp } from '../support/http/app.ts';
import { buildDotnetProject, infoOf, runChecks } from '../support/peers/dotnet.ts';
import { describeFailures } from '../support/peers/mono-e2e.ts';
import { freePort } from '../support/net.ts';
import { simplePdf, toBase64 } from '../support/pdf/pdf-builder.ts';
import { swissQrBillPdf } from '../support/qr/pdfkit-bill.ts';
import { PAYMENT_PART_CODE, qrBillPdf, SAMPLE_BILL, textCode } from '../support/qr/qr-bills.ts';
import { needPeers, PEERS } from '../support/peers.ts';

describe.skipIf(needPeers('http dotnet', PEERS.dotnet))(
  'the HTTP API read by a .NET client (HttpClient, System.Net.Http.Json, ProblemDetails)',
  () => {
    let folder: string;
    let server: ServerType | undefined;
    let base: string;
    let bill: Uint8Array;

    beforeAll(async () => {
      folder = await mkdtemp(join(tmpdir(), 'http-dotnet-'));
      bill = await swissQrBillPdf(SAMPLE_BILL);
      await writeFile(join(folder, 'bill.pdf'), bill);
      await writeFile(join(folder, 'plain.pdf'), simplePdf({ pages: 2 }));
      await writeFile(
        join(folder, 'rejected.pdf'),
        qrBillPdf([{ codes: [{ ...PAYMENT_PART_CODE, code: textCode('https://example.org/not-a-bill') }] }]),
      );
      const [{ app }] = await Promise.all([testApp(), buildDotnetProject('HttpApiClient')]);
      const port = await freePort();
      await new Promise<void>((listening) => {
        server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, () => listening());
      });
      base = `http://127.0.0.1:${port}`;
    }, 300_000);

    afterAll(async () => {
      await new Promise((closed) => (server ? server.close(closed) : closed(undefined)));
      if (folder) await rm(folder, { recursive: true, force: true });
    });

    it('binds every field of validate and extract to the DTOs, and reads a 404 as ProblemDetails with `rejected`', async () => {
      const { dll } = await buildDotnetProject('HttpApiClient');
      const run = await runChecks(dll, [base, folder], { timeoutMs: 120_000 });
      expect(run.failed, describeFailures(run)).toEqual([]);

      // What the service itself answers, compared with the DTOs as .NET bound them.
      const post = async (path: string, body: unknown) =>
        (
          await fetch(`${base}/api/v1/documents/${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          })
        ).json();
      const validated = await post('validate', { base64Pdf: toBase64(bill) });
      expect(JSON.parse(infoOf(run, 'validate.dto')!)).toStrictEqual(validated);
      const references = ['INV-2026-0042', 17, 12345678901234567890n, { k: [true, null] }];
      const extracted = (await (
        await fetch(`${base}/api/v1/documents/extract-swiss-qr-code`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: `{"references": ["INV-2026-0042", 17, 12345678901234567890, {"k": [true, null]}], "base64Pdf": "${toBase64(bill)}"}`,
        })
      ).json()) as { references: unknown[]; qrCodeData: Record<string, unknown> };
      expect(references.length).toBe(extracted.references.length);
      const dto = JSON.parse(infoOf(run, 'extract.dto')!) as {
        references: unknown[];
        qrCodeData: Record<string, unknown>;
      };
      // Every member of the answer, none lost or renamed; the numbers (amount) equal as numbers.
      expect(dto.qrCodeData).toStrictEqual(extracted.qrCodeData);
      expect(Object.keys(dto.qrCodeData).sort()).toEqual(Object.keys(extracted.qrCodeData).sort());
      expect(Object.keys(dto.qrCodeData)).toHaveLength(14);
      expect(dto.qrCodeData.creditor).toMatchObject({ name: SAMPLE_BILL.creditor.name });

      expect(JSON.parse(infoOf(run, 'not-found.empty.rejected')!)).toEqual([]);
      expect(JSON.parse(infoOf(run, 'not-found.rejected.rejected.typed')!)).toEqual([{ index: 0, reason: 'not-spc' }]);
    }, 300_000);
  },
);
