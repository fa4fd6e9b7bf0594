/**
 * The QR extraction part of `npm run bench`: reading the QR-bill on the last page of every PDF of the shared QR corpus
 * (../shared/corpus/qr: generated/ from manifest.json, the `kind: 'pdf'` files of external-manifest.json), measured in
 * process (scanLastPage with PDFium and zxing-wasm in this thread, as a worker runs it), over HTTP against the real Node
 * server for two representative files, and against poppler + zbar as a peer, all in the same run. Prints Markdown tables
 * and the targets. Not part of the tests.
 *
 * Run on its own with `npx tsx bench/qr.ts` (builds the Node bundle first, as run.ts does).
 */
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { readHttpConfig } from '../src/config.ts';
import type { ScanOutcome } from '../src/qr/scan.ts';
import { inProcessEngines } from '../src/runtime/shared/deps.ts';
import { killAllChildren, postBody, startServer, type RunningServer } from './server.ts';
import { fmtMs, measure } from './stats.ts';
import { type HttpRow, loadCases, log, QR_CORPUS_DIR, type QrCase, type Row } from './qr-cases.ts';
import { PEER_DPI, PEER_SECOND_RUN_UNDER_MS, peerTools, runPeer } from './qr-peer.ts';
import { median, printHttp, printPerFile, printSummary, printTargets } from './qr-report.ts';
import { isMainModule } from './main-module.ts';

const ROOT = resolve(import.meta.dirname, '..');

/** Timed in-process runs per file, after one warm-up run (see runOurs). */
const OUR_RUNS = 5;

/** The HTTP rows: a one-page vector bill and a raster scan. */
const HTTP_FILES = ['generated/01_vector_qrr_a4.pdf', 'generated/22_scan_rotated_noisy_jpeg.pdf'];
/** Untimed rounds over the HTTP files before their timing. */
const HTTP_WARMUP_ROUNDS = 25;

// ---------------------------------------------------------------- ours, in process

function judge(c: QrCase, outcome: ScanOutcome): { answer: string; asExpected: boolean; readBill: boolean } {
  if (outcome.status === 'found') {
    const readBill = c.bills.some((b) => isDeepStrictEqual(b, outcome.bill));
    return {
      answer: readBill ? 'found' : 'found, other bill',
      asExpected: c.expectedStatus === 200 && readBill,
      readBill: c.expectedStatus === 200 && readBill,
    };
  }
  if (outcome.status === 'not-found') {
    const reasons = outcome.rejected.map((r) => r.reason);
    const answer = reasons.length === 0 ? 'not-found (no code)' : `not-found (${reasons.join(', ')})`;
    return { answer, asExpected: c.expectedStatus === 404, readBill: false };
  }
  return {
    answer: 'reason' in outcome ? `${outcome.status}: ${outcome.reason}` : outcome.status,
    asExpected: false,
    readBill: false,
  };
}

/**
 * One untimed pass over every file first (each file's warm-up, and PDFium's and zxing's WebAssembly tiered up before
 * any timing), then OUR_RUNS timed rounds over all files: a burst of noise from elsewhere on the machine spreads over
 * many files instead of landing on one.
 */
async function runOurs(rows: Row[], deadline: number): Promise<void> {
  const { engine, qr } = await inProcessEngines(readHttpConfig({}));
  // scan and inspect may take ownership of the bytes: every call gets its own copy, made outside the timed region
  const copy = (c: QrCase) => new Uint8Array(c.bytes);
  const live: {
    row: Row;
    first: ReturnType<typeof judge>;
    pages?: number;
    ms: number[];
    cpuUs: number;
    stable: boolean;
  }[] = [];
  log(`QR in process: warm-up pass over ${rows.length} files`);
  for (const row of rows) {
    if (performance.now() > deadline) {
      row.note = 'skipped (bench time budget)';
      continue;
    }
    const report = await engine.inspect(copy(row.c));
    const first = judge(row.c, await qr.scan(copy(row.c)));
    live.push({
      row,
      first,
      pages: report.status === 'opened' ? report.pageCount : undefined,
      ms: [],
      cpuUs: 0,
      stable: true,
    });
  }
  for (let round = 0; round < OUR_RUNS && performance.now() < deadline; round++) {
    log(`QR in process: timed round ${round + 1} of ${OUR_RUNS}`);
    for (const f of live) {
      const bytes = copy(f.row.c);
      const cpu0 = process.cpuUsage();
      const t = performance.now();
      const outcome = await qr.scan(bytes);
      f.ms.push(performance.now() - t);
      const cpu = process.cpuUsage(cpu0);
      f.cpuUs += cpu.user + cpu.system;
      if (judge(f.row.c, outcome).answer !== f.first.answer) f.stable = false;
    }
  }
  for (const f of live) {
    if (f.ms.length === 0) continue;
    f.row.ours = {
      sample: { ms: f.ms },
      cpuMsPerRun: f.cpuUs / 1000 / f.ms.length,
      ...f.first,
      stable: f.stable,
      pages: f.pages,
    };
  }
}

// ---------------------------------------------------------------- ours, over HTTP

async function runHttp(rows: Row[], deadline: number): Promise<HttpRow[]> {
  const picked = HTTP_FILES.map((f) => rows.find((r) => r.c.file === f)).filter((r): r is Row => r !== undefined);
  if (picked.length === 0 || performance.now() > deadline) return [];
  const out: HttpRow[] = [];
  let server: RunningServer | undefined;
  try {
    log('QR over HTTP: starting the server');
    server = await startServer();
    const bodies = picked.map((r) => jsonBody(r.c.bytes));
    // Every worker of the pool meets both files many times before anything is timed: a fresh worker's WebAssembly keeps
    // getting faster for some 20 calls (tier-up), and calls alternate between the workers.
    for (let i = 0; i < HTTP_WARMUP_ROUNDS; i++) for (const body of bodies) await postExtract(server.url, body);
    for (const [i, row] of picked.entries()) {
      log(`QR over HTTP: ${row.c.file}`);
      let answer = '';
      const sample = await measure(async () => {
        const a = await postExtract(server!.url, bodies[i]!);
        if (!answer)
          answer =
            a.status === 200
              ? row.c.bills.some((b) => isDeepStrictEqual(b, a.qrCodeData))
                ? '200, expected bill'
                : '200, other bill'
              : `${a.status} ${a.type}`;
      });
      out.push({ file: row.c.file, sample, answer });
    }
  } catch (e) {
    const note = `HTTP failed: ${(e as Error).message.split('\n')[0]}`;
    log(server ? `${note}\n${server.output()}` : note);
    for (const r of picked) if (!out.some((o) => o.file === r.c.file)) out.push({ file: r.c.file, answer: '–', note });
  } finally {
    await server?.stop();
  }
  return out;
}

const enc = new TextEncoder();

function jsonBody(pdf: Uint8Array): Uint8Array<ArrayBuffer> {
  return enc.encode(
    JSON.stringify({
      base64Pdf: Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength).toString('base64'),
      references: [],
    }),
  );
}

async function postExtract(
  url: string,
  body: Uint8Array<ArrayBuffer>,
): Promise<{ status: number; qrCodeData?: unknown; type: string }> {
  const answer = await postBody(url, '/api/v1/documents/extract-swiss-qr-code', body);
  return { status: answer.status, qrCodeData: answer.json?.qrCodeData, type: answer.problem };
}

// ---------------------------------------------------------------- entry

/**
 * Runs and prints the QR benchmark. `deadline` (a performance.now() time) bounds it: files not reached by then are
 * skipped and say so. Expects the Node bundle (dist/node) to be built for the HTTP rows.
 */
export async function runQrBench({ deadline = Infinity }: { deadline?: number } = {}): Promise<void> {
  const started = performance.now();
  console.log('');
  console.log('# QR extraction benchmark');
  console.log('');
  if (!existsSync(join(QR_CORPUS_DIR, 'manifest.json')) || !existsSync(join(QR_CORPUS_DIR, 'external-manifest.json'))) {
    console.log(
      `- ${QR_CORPUS_DIR} (manifest.json, external-manifest.json) not found: the QR part needs the shared QR corpus; skipped. Set SHARED_DIR to the folder that holds corpus/qr.`,
    );
    return;
  }
  const { cases, problems } = loadCases();
  const rows: Row[] = cases.map((c) => ({ c }));
  const tools = peerTools();
  const generated = cases.filter((c) => c.set !== 'external').length;
  console.log(
    `- corpus ${QR_CORPUS_DIR}: ${cases.length} PDFs (${generated} generated, ${cases.length - generated} external), ${cases.filter((c) => c.expectedStatus === 200).length} expect a bill, ${cases.filter((c) => c.expectedStatus === 404).length} expect 404`,
  );
  for (const p of problems) console.log(`- corpus: ${p}`);
  console.log(
    `- ours: scanLastPage in process (PdfiumEngine + ZxingReader in this thread, as a worker runs it), one untimed warm-up pass over all files, then ${OUR_RUNS} timed rounds over all files, a fresh copy of the bytes per run; CPU = process.cpuUsage() around each timed run, averaged per file`,
  );
  console.log(
    `- peer: ${tools ?? 'NOT INSTALLED'}: \`pdfinfo FILE\` for the last page number N, then \`pdftoppm -r ${PEER_DPI} -f N -l N -png FILE | zbarimg -q --raw -Sdisable -Sqrcode.enable -\`; one run per file (two when under ${PEER_SECOND_RUN_UNDER_MS} ms), wall time from spawn to exit (bash start, pdfinfo included), CPU = user + sys of the children (bash \`times\`); it reads a bill when the expected payload (CR LF as LF) is in its output`,
  );
  console.log(
    `- load average when the QR part starts: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(', ')} (1, 5, 15 min; other work on the machine skews every timing below)`,
  );
  console.log('');

  await runOurs(rows, deadline);
  const http = await runHttp(rows, deadline);
  if (tools) await runPeer(rows, deadline);

  printPerFile(rows, Boolean(tools));
  console.log('');
  printSummary(rows, Boolean(tools));
  console.log('');
  console.log(
    `Per set: our median and p95 are over the files' medians (each of ${OUR_RUNS} warm runs); the peer median is over the files' single runs (nearest rank). "read" = the expected bill found (by us: equal to the manifest's bill; by the peer: the expected payload in zbar's output); 404 files count in "answered as expected" only.`,
  );
  if (tools) {
    const pdfinfo = rows.flatMap((r) => (r.peer?.pdfinfoMs !== undefined ? [r.peer.pdfinfoMs] : []));
    console.log(
      `Of the peer's time, pdfinfo (finding the last page) takes a median of ${fmtMs(median(pdfinfo))} ms a file.`,
    );
  }
  printHttp(http);
  printTargets(rows, Boolean(tools));
  if (!tools) {
    console.log('');
    console.log(
      'pdfinfo, pdftoppm or zbarimg is not installed, so the peer columns are empty. Install them with `apt-get install -y poppler-utils zbar-tools` (as root) and run again.',
    );
  }
  console.log('');
  console.log(`QR part: ${((performance.now() - started) / 1000).toFixed(0)} s.`);
}

if (isMainModule(import.meta)) {
  process.on('exit', killAllChildren);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => process.exit(130));
  execSync('npm run --silent build:node', { stdio: 'inherit', cwd: ROOT });
  try {
    await runQrBench({ deadline: performance.now() + 200_000 });
  } catch (e) {
    console.error(e);
    process.exitCode = 1;
  } finally {
    killAllChildren();
  }
}
