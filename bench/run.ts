/**
 * `npm run bench`: POST /api/v1/documents/validate measured in process, over HTTP against the real Node server, and
 * against qpdf as a peer, on generated inputs (1, 100 and 2000 pages, 50 MB, a 1 GiB decompression bomb) and the
 * shared corpus's bombs; QR-bill extraction against pdftoppm + zbarimg (qr.ts); the tcp-bridge against a Mono
 * ServiceHost and a canned responder (bridge.ts), and with NTLM through NegotiateStream against security none
 * (negotiate.ts); Microsoft's WCF client and CoreWCF beside them (dotnet.ts). Prints Markdown tables and the targets. Not part of the tests.
 */
import { execSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { cpus, freemem, totalmem } from 'node:os';
import { readHttpConfig } from '../src/config.ts';
import { PdfiumEngine } from '../src/pdf/engine/pdfium.ts';
import { MAX_STRUCTURE_STREAM_BYTES, validatePdf, type PdfValidationResult } from '../src/pdf/validate.ts';
import { loadEngineModules } from '../src/runtime/shared/deps.ts';
import { makeCases, SHARED_DIR, type BenchCase } from './inputs.ts';
import { qpdfVersion, runQpdf, type QpdfRun } from './qpdf.ts';
import { runBridgeBench } from './bridge.ts';
import { runDotnetBench } from './dotnet.ts';
import { runStalledSendersBench } from './bridge-memory.ts';
import { runStalledReadersBench } from './bridge-stalled-readers.ts';
import { runStormBench } from './bridge-storm.ts';
import { runNegotiateBench } from './negotiate.ts';
import { runProductionBench } from './production.ts';
import { runQrBench } from './qr.ts';
import { runDegradedBench } from './degraded.ts';
import { killAllChildren, postBody, procMemMB, startServer, type RunningServer } from './server.ts';
import { fmtMs, fmtPair, measure, p50, percentile, type Sample } from './stats.ts';

const HARD_LIMIT_MS = 570_000;
const MiB = 1024 * 1024;

interface Row {
  c: BenchCase;
  inProcess?: Sample;
  inProcessAnswer?: string;
  http?: Sample;
  httpAnswer?: string;
  /** VmRSS of the warmed-up server before the case's requests. */
  idleRssMB?: number;
  /** VmHWM after the case's first request, and after all of them. */
  firstPeakRssMB?: number;
  peakRssMB?: number;
  qpdf?: QpdfRun;
  note?: string;
}

let tempDir: string | undefined;
const cleanupSync = () => {
  killAllChildren();
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  tempDir = undefined;
};
process.on('exit', cleanupSync);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the servers and qpdf, removing the inputs`);
    process.exit(130);
  });
}
setTimeout(() => {
  console.error(`\nbench: gave up after ${HARD_LIMIT_MS / 1000} s`);
  process.exit(2);
}, HARD_LIMIT_MS).unref();

const log = (s: string) => process.stderr.write(`${s}\n`);

async function main(): Promise<void> {
  const runStarted = performance.now();
  // The HTTP rows run the server as `npm start` does: the esbuild bundle of the Node entry on plain node.
  execSync('npm run --silent build:node', { stdio: 'inherit' });
  const config = readHttpConfig({});
  const qpdf = qpdfVersion();
  console.log(`# validate benchmark`);
  console.log('');
  console.log(
    `- Node ${process.version} on ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM (${(freemem() / 2 ** 30).toFixed(1)} free)`,
  );
  console.log(`- peer: ${qpdf ?? 'qpdf not installed'}`);
  console.log(
    `- service settings: PDF_ENGINE_MEMORY_MB=${config.pdfEngineMemoryBytes / MiB}, PDF_TIMEOUT_MS=${config.pdfTimeoutMs}, MAX_BODY_MB=${config.maxBodyBytes / MiB}, maxStreamBytes=${MAX_STRUCTURE_STREAM_BYTES / MiB} MiB, PDF_WORKERS=${process.env.PDF_WORKERS || 'default (cores)'}`,
  );

  log('generating inputs…');
  const made = await makeCases();
  tempDir = made.dir;
  const rows: Row[] = made.cases.map((c) => ({ c }));
  console.log(`- inputs in ${made.dir}: ${made.cases.map((c) => `${c.name} ${sizeText(c.bytes.length)}`).join(', ')}`);
  if (!made.cases.some((c) => c.path.startsWith(SHARED_DIR)))
    console.log(`- ${SHARED_DIR} not found: shared corpus bombs skipped`);
  console.log('');

  // (b, c) over HTTP first, while this process (the client) is still lean: a fresh server per case, so its peak RSS is
  // for that file alone. Every worker is warmed with 1-page requests before the case's own requests.
  const onePage = jsonBody(rows[0]!.c.bytes);
  for (const row of rows) {
    log(`HTTP: ${row.c.name}`);
    let server: RunningServer | undefined;
    try {
      server = await startServer();
      for (let i = 0; i < 8; i++) await post(server.url, onePage);
      await new Promise((r) => setTimeout(r, 300));
      row.idleRssMB = procMemMB(server.serverPid, 'VmRSS');
      const body = jsonBody(row.c.bytes);
      const ms: number[] = [];
      const timed = async () => {
        const t = performance.now();
        const answer = await post(server!.url, body);
        ms.push(performance.now() - t);
        row.httpAnswer ??= answer;
        row.firstPeakRssMB ??= procMemMB(server!.serverPid, 'VmHWM');
      };
      if (row.c.bomb) {
        // the bomb itself is not warmed up: each call is a first meeting
        for (let i = 0; i < 3; i++) await timed();
        row.http = { ms };
      } else {
        row.http = await measure(timed, row.c.big ? { warmups: 1, minRuns: 3, targetMs: 1500 } : {});
      }
      row.peakRssMB = procMemMB(server.serverPid, 'VmHWM');
    } catch (e) {
      row.note = `HTTP failed: ${(e as Error).message.split('\n')[0]}`;
      log(server ? `${row.note}\n${server.output()}` : row.note);
    } finally {
      await server?.stop();
    }
  }

  // (a) in process: the core with a PdfiumEngine in this thread, as the worker runs it
  const engine = new PdfiumEngine({
    wasm: (await loadEngineModules()).pdfium,
    memoryLimitBytes: config.pdfEngineMemoryBytes,
  });
  const options = {
    engine,
    clock: { now: () => performance.now() },
    timeoutMs: config.pdfTimeoutMs,
    maxStreamBytes: MAX_STRUCTURE_STREAM_BYTES,
  };
  for (const row of rows) {
    log(`in process: ${row.c.name}`);
    let answer: PdfValidationResult | undefined;
    row.inProcess = await measure(
      async () => {
        const r = await validatePdf(row.c.bytes, options);
        answer ??= r;
      },
      row.c.bomb
        ? { warmups: 0, minRuns: 3, targetMs: 1 }
        : row.c.big
          ? { warmups: 1, minRuns: 3, targetMs: 1500 }
          : {},
    );
    row.inProcessAnswer = answer ? describe(answer) : '?';
  }

  // the peer
  if (qpdf) {
    for (const row of rows) {
      log(`qpdf: ${row.c.name}`);
      row.qpdf = runQpdf(
        row.c.path,
        row.c.bomb
          ? { warmups: 0, minRuns: 1, targetMs: 1, maxRuns: 1, callTimeoutMs: 20_000 }
          : { warmups: 2, minRuns: 5, targetMs: 1500, maxRuns: 2000, callTimeoutMs: 20_000 },
      );
    }
  }

  printTable(rows, Boolean(qpdf));
  printTargets(rows);
  printCopies(rows.find((r) => r.c.big && !r.c.bomb));
  if (!qpdf) {
    console.log('');
    console.log(
      'qpdf is not installed, so the peer columns are empty. Install it with `apt-get install -y qpdf` (as root) and run again.',
    );
  }
  // overload (MAX_INFLIGHT_MB with 100 and 200 clients of 40 MB bodies) and raw bodies beside Base64 JSON
  await runProductionBench();
  // the QR extraction part, bounded so the whole run ends before HARD_LIMIT_MS
  await runQrBench({ deadline: runStarted + HARD_LIMIT_MS - 250_000 });
  // degraded inputs generated by the bench (scans, faxes, phone photos, two bills) against zbar, about two minutes
  await runDegradedBench({ deadline: Math.min(performance.now() + 150_000, runStarted + HARD_LIMIT_MS - 100_000) });
  await (await import('./image-body.ts')).runImageBodyBench(); // a 12 MP JPEG body against the same image in a PDF
  await runBridgeBench();
  await runNegotiateBench();
  await runDotnetBench();
  await runStalledSendersBench();
  await runStalledReadersBench();
  await runStormBench();
  console.log('');
  console.log(
    `Total bench time ${((performance.now() - runStarted) / 1000).toFixed(0)} s. p50/p95 are nearest-rank over n timed runs after warm-up; bombs are timed without warm-up of the bomb itself (the server's workers are warmed with 1-page requests).`,
  );
}

const enc = new TextEncoder();

function jsonBody(pdf: Uint8Array): Uint8Array<ArrayBuffer> {
  return enc.encode(
    JSON.stringify({ base64Pdf: Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength).toString('base64') }),
  );
}

/** POSTs a JSON body and reads the whole answer; returns "200 (n pages)" or "400 problem-name". */
async function post(url: string, body: Uint8Array<ArrayBuffer>): Promise<string> {
  const { status, json, problem } = await postBody(url, '/api/v1/documents/validate', body);
  return status === 200 ? `200 (${String(json?.pageCount)} p)` : `${status} ${problem}`.trim();
}

function describe(r: PdfValidationResult): string {
  return r.ok ? `200 (${r.value.pageCount} p)` : `400 ${r.problem}`;
}

function sizeText(bytes: number): string {
  return bytes >= MiB
    ? `${(bytes / MiB).toFixed(1)} MiB`
    : bytes >= 1024
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${bytes} B`;
}

function printTable(rows: Row[], withQpdf: boolean): void {
  const header = [
    'case',
    'file size',
    'answer (in-proc / HTTP)',
    'ours in-process p50/p95 ms',
    'ours HTTP p50/p95 ms',
    'server RSS MB: idle → peak after 1st req / all',
    'qpdf p50/p95 ms',
    'qpdf says',
    'ratio (qpdf p50 / ours in-process p50)',
    'n (in-proc/HTTP/qpdf)',
  ];
  console.log(`| ${header.join(' | ')} |`);
  console.log(`|${header.map((_, i) => (i < 3 || i === 7 ? '---' : '---:')).join('|')}|`);
  for (const r of rows) {
    const ratio = withQpdf && r.qpdf && r.inProcess ? ratioText(p50(r.qpdf.sample) / p50(r.inProcess)) : '–';
    const answers =
      r.inProcessAnswer === r.httpAnswer || !r.httpAnswer
        ? (r.inProcessAnswer ?? '–')
        : `${r.inProcessAnswer} / ${r.httpAnswer}`;
    const cells = [
      r.c.name,
      sizeText(r.c.bytes.length),
      answers + (r.c.pages !== undefined && r.inProcessAnswer !== `200 (${r.c.pages} p)` ? ' **unexpected**' : ''),
      fmtPair(r.inProcess),
      r.note ? r.note : fmtPair(r.http),
      r.peakRssMB === undefined ? '–' : `${mbText(r.idleRssMB)} → ${mbText(r.firstPeakRssMB)} / ${mbText(r.peakRssMB)}`,
      withQpdf ? fmtPair(r.qpdf?.sample) : 'not installed',
      r.qpdf?.answer ?? '–',
      ratio,
      `${r.inProcess?.ms.length ?? 0}/${r.http?.ms.length ?? 0}/${r.qpdf?.sample.ms.length ?? 0}`,
    ];
    console.log(`| ${cells.join(' | ')} |`);
  }
  console.log('');
  console.log(
    "Server RSS: the node process of `npm start` (dist/node/main.mjs; the PDFium worker threads are in it), a fresh server per row. idle = VmRSS after 8 warm-up 1-page requests; peak = VmHWM (includes start-up) after the row's first request and after all n.",
  );
}

const mbText = (mb: number | undefined) => (mb === undefined || !Number.isFinite(mb) ? '?' : mb.toFixed(0));
const ratioText = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 0.1 ? x.toPrecision(2) : x.toPrecision(1));

function printTargets(rows: Row[]): void {
  console.log('');
  console.log('Targets:');
  const verdict = (ok: boolean | undefined) => (ok === undefined ? 'NOT MEASURED' : ok ? 'PASS' : 'FAIL');
  const one = rows.find((r) => r.c.name === '1 page');
  const onePageP50 = one?.inProcess ? p50(one.inProcess) : undefined;
  console.log(
    `- 1-page file in process p50 < 5 ms: ${verdict(onePageP50 === undefined ? undefined : onePageP50 < 5)} (${fmtMs(onePageP50 ?? NaN)} ms)`,
  );
  const big = rows.find((r) => r.c.big && !r.c.bomb);
  console.log(
    `- 50 MB file over HTTP, server peak RSS < 300 MB: ${verdict(big?.firstPeakRssMB === undefined ? undefined : big.firstPeakRssMB < 300 && (big.peakRssMB ?? 0) < 300)} (${mbText(big?.firstPeakRssMB)} MB after one request, ${mbText(big?.peakRssMB)} MB after ${big?.http?.ms.length ?? 0}+1; the warm idle server alone is ${mbText(big?.idleRssMB)} MB)`,
  );
  for (const r of rows.filter((x) => x.c.bomb)) {
    const worst = r.http && r.http.ms.length > 0 ? percentile(r.http.ms, 1) : undefined;
    const refused = r.httpAnswer?.startsWith('400 pdf-too-complex');
    console.log(
      `- ${r.c.name} answered over HTTP within 2 s: ${verdict(worst === undefined ? undefined : worst < 2000)} (slowest of ${r.http?.ms.length ?? 0}: ${fmtMs(worst ?? NaN)} ms, first ${fmtMs(r.http?.ms[0] ?? NaN)} ms; answer ${r.httpAnswer ?? '–'}${refused ? '' : ' — not a pdf-too-complex refusal'}; server peak RSS ${mbText(r.firstPeakRssMB)} MB after one, ${mbText(r.peakRssMB)} MB after ${r.http?.ms.length ?? 0}; idle ${mbText(r.idleRssMB)} MB)`,
    );
  }
}

/**
 * The copies of the document the HTTP path makes, from src/http/request-body.ts (readJsonObject, readLimitedBytes),
 * src/http/json-object.ts, src/base64.ts, src/runtime/node/worker-engine.ts and src/pdf/engine/pdfium.ts.
 */
function printCopies(row: Row | undefined): void {
  if (!row) return;
  const n = row.c.bytes.length;
  const b64 = 4 * Math.ceil(n / 3);
  const json = b64 + '{"base64Pdf":""}'.length;
  const mb = (x: number) => `${(x / MiB).toFixed(0)} MiB`;
  const grew =
    row.firstPeakRssMB !== undefined && row.idleRssMB !== undefined ? row.firstPeakRssMB - row.idleRssMB : NaN;
  console.log('');
  console.log(
    `Copies of the ${row.c.name} file on the HTTP path (file ${mb(n)}, Base64 JSON body ${mb(json)}), in order:`,
  );
  console.log(
    `1. readLimitedBytes: the body's bytes in one buffer sized from Content-Length, ${mb(json)} (socket chunks are copied in and dropped)`,
  );
  console.log(
    '2. parseJsonObject: the base64Pdf member is a view of 1, not a string (a copy only if it has JSON escapes)',
  );
  console.log(`3. decodeBase64Strict: the decoded bytes, ${mb(n)}`);
  console.log(
    '4. validatePdf reads the structure from 3 in place, then WorkerPdfEngine transfers 3 to a worker thread (no copy)',
  );
  console.log(
    `5. PdfiumEngine: malloc + HEAPU8.set into the worker's WASM heap, ${mb(n)}; a heap grown past 64 MiB is dropped after the call and freed at the next GC`,
  );
  console.log(
    `Measured: one request raised the server's peak by ${Number.isFinite(grew) ? grew.toFixed(0) : '?'} MB (${Number.isFinite(grew) ? (grew / (n / MiB)).toFixed(1) : '?'}× the file); later requests add memory that the next GC returns.`,
  );
}

try {
  await main();
} catch (e) {
  console.error(e);
  process.exitCode = 1;
} finally {
  cleanupSync();
}
