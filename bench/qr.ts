/**
 * The QR extraction part of `npm run bench`: reading the QR-bill on the last page of every PDF of the shared QR corpus
 * (../shared/corpus/qr: generated/ from manifest.json, the `kind: 'pdf'` files of external-manifest.json), measured in
 * process (scanLastPage with PDFium and zxing-wasm in this thread, as a worker runs it), over HTTP against the real Node
 * server for two representative files, and against poppler + zbar as a peer, all in the same run. Prints Markdown tables
 * and the targets. Not part of the tests.
 *
 * Run on its own with `npx tsx bench/qr.ts` (builds the Node bundle first, as run.ts does).
 */
import { execSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { readHttpConfig } from '../src/config.ts';
import { readQrBill, type QrBill } from '../src/qr/bill.ts';
import type { ScanOutcome } from '../src/qr/scan.ts';
import { inProcessEngines } from '../src/runtime/shared/deps.ts';
import { killAllChildren, postBody, startServer, track, type RunningServer } from './server.ts';
import { fmtMs, fmtPair, measure, p50, percentile, type Sample } from './stats.ts';
import { isMainModule } from './main-module.ts';

const ROOT = resolve(import.meta.dirname, '..');
/** As test/support/corpus.ts finds it: SHARED_DIR, else ../shared beside the repository. */
export const QR_CORPUS_DIR = join(process.env.SHARED_DIR ?? resolve(ROOT, '../shared'), 'corpus/qr');

/** Timed in-process runs per file, after one warm-up run (see runOurs). */
const OUR_RUNS = 5;
/** The peer's rendering resolution. */
const PEER_DPI = 300;
/** A peer call that ends under this gets a second run (the median of two is the faster one, nearest rank). */
const PEER_SECOND_RUN_UNDER_MS = 500;
const PEER_CALL_TIMEOUT_MS = 30_000;
/** The HTTP rows: a one-page vector bill and a raster scan. */
const HTTP_FILES = ['generated/01_vector_qrr_a4.pdf', 'generated/22_scan_rotated_noisy_jpeg.pdf'];
/** Untimed rounds over the HTTP files before their timing. */
const HTTP_WARMUP_ROUNDS = 25;
/** The one-page vector bill the first target names. */
const REFERENCE_VECTOR_BILL = 'generated/01_vector_qrr_a4.pdf';

type SetName = 'generated vector' | 'generated raster / scan' | 'external';
const SETS: SetName[] = ['generated vector', 'generated raster / scan', 'external'];

interface QrCase {
  /** Path inside the corpus folder, as the manifests name it. */
  file: string;
  path: string;
  bytes: Uint8Array;
  set: SetName;
  expectedStatus: 200 | 404;
  /** The bills a correct answer may hold (several when the manifest lists several payloads, e.g. two bills on a page). */
  bills: QrBill[];
  /** The payload texts the peer must print (CR LF normalized to LF). */
  payloads: string[];
}

interface OurRow {
  sample: Sample;
  cpuMsPerRun: number;
  /** Short description of the answer, e.g. "found", "not-found (1 code: not-spc)". */
  answer: string;
  /** Answered as the manifest expects: the expected bill for a 200, not-found for a 404. */
  asExpected: boolean;
  /** Found the expected bill (200 entries only). */
  readBill: boolean;
  /** Every timed run answered the same as the warm-up. */
  stable: boolean;
  pages?: number;
}

interface PeerRow {
  sample: Sample;
  cpuMsPerRun?: number;
  pdfinfoMs?: number;
  /** The expected payload is in zbar's output. */
  readBill: boolean;
  /** "read", "no code", "other code(s)", "SPC text, not the expected one", or why the call failed. */
  outcome: string;
  pages?: number;
}

interface Row {
  c: QrCase;
  ours?: OurRow;
  peer?: PeerRow;
  note?: string;
}

const log = (s: string) => process.stderr.write(`${s}\n`);
const normalize = (s: string) => s.replace(/\r\n/g, '\n');

interface GeneratedEntry {
  file: string;
  description?: string;
  expectedStatus: number;
  expectedPayload?: string | null;
  qrCodeData?: QrBill;
}

interface ExternalEntry {
  file: string;
  kind: string;
  expectedStatus: number;
  decodedPayload?: string | null;
  decodedPayloads?: string[] | null;
}

function loadCases(): { cases: QrCase[]; problems: string[] } {
  const problems: string[] = [];
  const cases: QrCase[] = [];
  const add = (file: string, set: SetName, expectedStatus: number, payloads: string[], bills: QrBill[]) => {
    const path = join(QR_CORPUS_DIR, file);
    if (!existsSync(path)) {
      problems.push(`${file} is listed but missing`);
      return;
    }
    if (expectedStatus !== 200 && expectedStatus !== 404) {
      problems.push(`${file}: expectedStatus ${expectedStatus} is neither 200 nor 404, skipped`);
      return;
    }
    if (expectedStatus === 200 && bills.length === 0)
      problems.push(`${file}: no expected bill could be read from the manifest`);
    cases.push({
      file,
      path,
      bytes: new Uint8Array(readFileSync(path)),
      set,
      expectedStatus,
      payloads: payloads.map(normalize),
      bills,
    });
  };
  const generated = JSON.parse(readFileSync(join(QR_CORPUS_DIR, 'manifest.json'), 'utf8')) as {
    files: GeneratedEntry[];
  };
  for (const e of generated.files) {
    const set: SetName = /raster|scan/i.test(`${e.file} ${e.description ?? ''}`)
      ? 'generated raster / scan'
      : 'generated vector';
    const payloads = e.expectedStatus === 200 && typeof e.expectedPayload === 'string' ? [e.expectedPayload] : [];
    const bills = e.expectedStatus !== 200 ? [] : e.qrCodeData ? [e.qrCodeData] : billsOf(payloads);
    add(e.file, set, e.expectedStatus, payloads, bills);
  }
  const external = JSON.parse(readFileSync(join(QR_CORPUS_DIR, 'external-manifest.json'), 'utf8')) as {
    files: ExternalEntry[];
  };
  for (const e of external.files.filter((x) => x.kind === 'pdf')) {
    const payloads =
      e.expectedStatus === 200
        ? [e.decodedPayload, ...(e.decodedPayloads ?? [])].filter(
            (p): p is string => typeof p === 'string' && p.startsWith('SPC'),
          )
        : [];
    add(e.file, 'external', e.expectedStatus, [...new Set(payloads)], billsOf(payloads));
  }
  return { cases, problems };
}

function billsOf(payloads: string[]): QrBill[] {
  return payloads.flatMap((p) => {
    const r = readQrBill(p);
    return r.ok ? [r.bill] : [];
  });
}

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

interface HttpRow {
  file: string;
  sample?: Sample;
  answer: string;
  note?: string;
}

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

// ---------------------------------------------------------------- the peer: poppler + zbar

/** Versions of the peer's tools, or undefined when one is missing. */
export function peerTools(): string | undefined {
  const found = spawnSync('bash', ['-c', 'command -v pdfinfo && command -v pdftoppm && command -v zbarimg'], {
    encoding: 'utf8',
    timeout: 5000,
  });
  if (found.status !== 0) return undefined;
  const poppler = spawnSync('pdftoppm', ['-v'], { encoding: 'utf8', timeout: 5000 });
  const zbar = spawnSync('zbarimg', ['--version'], { encoding: 'utf8', timeout: 5000 });
  const popplerVersion = /version\s+(\S+)/.exec(`${poppler.stdout}${poppler.stderr}`)?.[1] ?? '?';
  return `poppler ${popplerVersion} (pdfinfo, pdftoppm), zbar ${zbar.stdout.trim() || '?'} (zbarimg)`;
}

/**
 * One call: the last page number from pdfinfo, then that page rendered at PEER_DPI to PNG and piped into zbarimg.
 * fd 3 gets the step times (bash 5's EPOCHREALTIME), the exit codes of the pipeline and `times` (the second line is
 * user and system CPU of every child the shell waited for: pdfinfo, sed, pdftoppm, zbarimg).
 */
const PEER_SCRIPT = `
f=$1; dpi=$2
t0=$EPOCHREALTIME
n=$(pdfinfo "$f" 2>/dev/null | sed -n 's/^Pages:[[:space:]]*//p')
t1=$EPOCHREALTIME
if [ -z "$n" ]; then echo "nopages - $t0 $t1 $t1 - -" >&3; times >&3; exit 3; fi
pdftoppm -r "$dpi" -f "$n" -l "$n" -png "$f" | zbarimg -q --raw -Sdisable -Sqrcode.enable -
st=("\${PIPESTATUS[@]}")
t2=$EPOCHREALTIME
echo "ok $n $t0 $t1 $t2 \${st[0]} \${st[1]}" >&3
times >&3
`;

interface PeerCall {
  wallMs: number;
  cpuMs?: number;
  pdfinfoMs?: number;
  pages?: number;
  stdout: string;
  /** Why the call failed, if it did (zbar's "nothing found" is not a failure). */
  error?: string;
}

export async function peerCall(path: string, timeoutMs = PEER_CALL_TIMEOUT_MS): Promise<PeerCall> {
  const started = performance.now();
  const child = spawn('bash', ['-c', PEER_SCRIPT, 'qr-peer', path, String(PEER_DPI)], {
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    detached: true, // its own process group: a timeout or exit kills the whole pipeline
    env: { ...process.env, LC_ALL: 'C' },
  });
  track(child);
  const chunks: Buffer[] = [];
  let stderr = '';
  let fd3 = '';
  child.stdout!.on('data', (d: Buffer) => chunks.push(d));
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-2000)));
  (child.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => (fd3 += d.toString('utf8')));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  }, timeoutMs);
  let wallMs = NaN;
  child.once('exit', () => (wallMs = performance.now() - started));
  const code = await new Promise<number | null>((r) => {
    child.once('close', (c) => r(c));
    child.once('error', () => r(null));
  });
  clearTimeout(timer);
  if (!Number.isFinite(wallMs)) wallMs = performance.now() - started;
  const stdout = normalize(Buffer.concat(chunks).toString('utf8'));
  if (timedOut) return { wallMs, stdout, error: `killed after ${(timeoutMs / 1000).toFixed(1)} s` };
  const [status, pages, t0, t1, t2, renderRc, zbarRc] = (fd3.split('\n')[0] ?? '').trim().split(/\s+/);
  const secs = (s: string | undefined) => Number((s ?? '').replace(',', '.'));
  const cpuLine = fd3.split('\n')[2] ?? '';
  const cpuParts = [...cpuLine.matchAll(/(\d+)m([\d.,]+)s/g)].map((m) => Number(m[1]) * 60_000 + secs(m[2]) * 1000);
  const call: PeerCall = {
    wallMs,
    stdout,
    cpuMs: cpuParts.length === 2 ? cpuParts[0]! + cpuParts[1]! : undefined,
    pdfinfoMs: Number.isFinite(secs(t1) - secs(t0)) ? (secs(t1) - secs(t0)) * 1000 : undefined,
    pages: Number(pages) || undefined,
  };
  void t2;
  if (status === 'nopages') call.error = 'pdfinfo found no page count';
  else if (status !== 'ok') call.error = `failed (exit ${code}): ${stderr.trim().split('\n').pop() ?? ''}`;
  else if (renderRc !== '0') call.error = `pdftoppm exit ${renderRc}`;
  // zbarimg: 0 = symbols found, 4 = none found; anything else is an error
  else if (zbarRc !== '0' && zbarRc !== '4') call.error = `zbarimg exit ${zbarRc}`;
  return call;
}

async function runPeer(rows: Row[], deadline: number): Promise<void> {
  // binaries, fonts and libraries into the page cache before anything is timed
  const firstRow = rows[0];
  if (firstRow && performance.now() < deadline) await peerCall(firstRow.c.path, 5000);
  for (const row of rows) {
    const c = row.c;
    if (performance.now() > deadline) {
      row.note = 'peer skipped (bench time budget)';
      continue;
    }
    log(`QR peer: ${c.file}`);
    // each call is bounded by the per-call limit and by what is left of the bench's time
    const limit = () => Math.max(1000, Math.min(PEER_CALL_TIMEOUT_MS, deadline - performance.now()));
    const calls = [await peerCall(c.path, limit())];
    if (calls[0]!.wallMs < PEER_SECOND_RUN_UNDER_MS && !calls[0]!.error) calls.push(await peerCall(c.path, limit()));
    const first = calls[0]!;
    const readBill = c.expectedStatus === 200 && c.payloads.some((p) => first.stdout.includes(p));
    const outcome = first.error
      ? first.error
      : readBill
        ? 'read'
        : first.stdout.trim() === ''
          ? 'no code'
          : /(^|\n)SPC\n/.test(first.stdout)
            ? c.expectedStatus === 200
              ? 'SPC text, not the expected one'
              : 'SPC text (not validated)'
            : 'other code(s)';
    const cpus = calls.map((x) => x.cpuMs).filter((x): x is number => x !== undefined);
    const pdfinfo = calls.map((x) => x.pdfinfoMs).filter((x): x is number => x !== undefined);
    row.peer = {
      sample: { ms: calls.map((x) => x.wallMs) },
      cpuMsPerRun: cpus.length > 0 ? cpus.reduce((a, b) => a + b, 0) / cpus.length : undefined,
      pdfinfoMs: pdfinfo.length > 0 ? Math.min(...pdfinfo) : undefined,
      readBill,
      outcome,
      pages: first.pages,
    };
  }
}

// ---------------------------------------------------------------- output

const median = (xs: number[]) => percentile(xs, 0.5);
const mean = (xs: number[]) => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);
const ratioText = (x: number) =>
  !Number.isFinite(x) ? '–' : x >= 100 ? x.toFixed(0) : x >= 0.1 ? x.toPrecision(2) : x.toPrecision(1);
const verdict = (ok: boolean | undefined) => (ok === undefined ? 'NOT MEASURED' : ok ? 'PASS' : 'FAIL');
const ourMedian = (r: Row) => (r.ours ? p50(r.ours.sample) : NaN);
const peerMedian = (r: Row) => (r.peer ? p50(r.peer.sample) : NaN);

function printPerFile(rows: Row[], withPeer: boolean): void {
  const header = [
    'file',
    'set',
    'expects',
    'our answer',
    'ours p50 / p95 ms',
    'ours CPU ms',
    'pages',
    'peer (zbar) says',
    'peer ms',
    'peer CPU ms',
    'ratio',
  ];
  console.log(`| ${header.join(' | ')} |`);
  console.log(`|${header.map((_, i) => (i < 4 || i === 7 ? '---' : '---:')).join('|')}|`);
  for (const r of rows) {
    const ours = r.ours;
    const mark = ours ? (ours.asExpected ? '' : ' **unexpected**') + (ours.stable ? '' : ' (runs disagree)') : '';
    const cells = [
      r.c.file,
      r.c.set,
      r.c.expectedStatus === 200 ? 'bill' : '404',
      ours ? ours.answer + mark : (r.note ?? '–'),
      fmtPair(ours?.sample),
      ours ? fmtMs(ours.cpuMsPerRun) : '–',
      String(ours?.pages ?? r.peer?.pages ?? '?'),
      withPeer ? (r.peer?.outcome ?? r.note ?? '–') : 'not installed',
      r.peer ? fmtMs(peerMedian(r)) : '–',
      r.peer?.cpuMsPerRun !== undefined ? fmtMs(r.peer.cpuMsPerRun) : '–',
      ratioText(peerMedian(r) / ourMedian(r)),
    ];
    console.log(`| ${cells.join(' | ')} |`);
  }
}

function printSummary(rows: Row[], withPeer: boolean): void {
  const groups: { name: string; rows: Row[] }[] = [
    ...SETS.map((s) => ({ name: s, rows: rows.filter((r) => r.c.set === s) })),
    { name: '**all that expect a bill**', rows: rows.filter((r) => r.c.expectedStatus === 200) },
    { name: '**all that expect 404**', rows: rows.filter((r) => r.c.expectedStatus === 404) },
    { name: '**all**', rows },
  ];
  const header = [
    'set',
    'files (bills / 404s)',
    'answered as expected by us',
    'read by us',
    'read by peer',
    'our median ms',
    'our p95 ms',
    'our CPU ms/file',
    'peer median ms',
    'peer CPU ms/file',
    'ratio (peer median / our median)',
  ];
  console.log(`| ${header.join(' | ')} |`);
  console.log(`|${header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`);
  for (const g of groups) {
    const bills = g.rows.filter((r) => r.c.expectedStatus === 200);
    const ours = g.rows.filter((r) => r.ours).map(ourMedian);
    const peers = g.rows.filter((r) => r.peer).map(peerMedian);
    const ourCpu = g.rows.flatMap((r) => (r.ours ? [r.ours.cpuMsPerRun] : []));
    const peerCpu = g.rows.flatMap((r) => (r.peer?.cpuMsPerRun !== undefined ? [r.peer.cpuMsPerRun] : []));
    const cells = [
      g.name,
      `${g.rows.length} (${bills.length} / ${g.rows.length - bills.length})`,
      `${g.rows.filter((r) => r.ours?.asExpected).length}/${g.rows.length}`,
      `${bills.filter((r) => r.ours?.readBill).length}/${bills.length}`,
      withPeer ? `${bills.filter((r) => r.peer?.readBill).length}/${bills.length}` : '–',
      fmtMs(median(ours)),
      fmtMs(percentile(ours, 0.95)),
      fmtMs(mean(ourCpu)),
      withPeer ? fmtMs(median(peers)) : '–',
      withPeer ? fmtMs(mean(peerCpu)) : '–',
      withPeer ? ratioText(median(peers) / median(ours)) : '–',
    ];
    console.log(`| ${cells.join(' | ')} |`);
  }
}

function printHttp(http: HttpRow[]): void {
  if (http.length === 0) return;
  console.log('');
  console.log(
    "Over HTTP (POST /api/v1/documents/extract-swiss-qr-code to the real server, `npm start`'s bundle, PDF_WORKERS default; warm):",
  );
  console.log('');
  console.log('| file | answer | p50 / p95 ms | n |');
  console.log('|---|---|---:|---:|');
  for (const h of http)
    console.log(`| ${h.file} | ${h.note ?? h.answer} | ${fmtPair(h.sample)} | ${h.sample?.ms.length ?? 0} |`);
}

function printTargets(rows: Row[], withPeer: boolean): void {
  console.log('');
  console.log('QR targets:');
  const measured = rows.filter((r) => r.ours);
  const oneVector = measured.filter(
    (r) => r.c.set === 'generated vector' && r.c.expectedStatus === 200 && r.ours!.pages === 1,
  );
  const ref = measured.find((r) => r.c.file === REFERENCE_VECTOR_BILL);
  const over = oneVector.filter((r) => !(ourMedian(r) < 30));
  const slowest = oneVector.reduce<Row | undefined>((a, r) => (!a || ourMedian(r) > ourMedian(a) ? r : a), undefined);
  // the verdict is on the median of every timed run of these files together, which one noisy file cannot swing
  const pooledRuns = oneVector.flatMap((r) => r.ours!.sample.ms);
  const pooled = median(pooledRuns);
  console.log(
    `- our median < 30 ms on a one-page vector bill: ${verdict(oneVector.length === 0 ? undefined : pooled < 30)} (median of all ${pooledRuns.length} timed runs of the ${oneVector.length} one-page generated vector bills ${fmtMs(pooled)} ms; ${REFERENCE_VECTOR_BILL} alone ${fmtMs(ref ? ourMedian(ref) : NaN)} ms; per file ${fmtMs(median(oneVector.map(ourMedian)))} ms median, slowest ${fmtMs(slowest ? ourMedian(slowest) : NaN)} ms${slowest ? ` (${slowest.c.file})` : ''}; files over 30 ms on their own: ${over.length === 0 ? 'none' : over.map((r) => r.c.file).join(', ')})`,
  );
  if (!withPeer) {
    console.log("- our median at most a tenth of the peer's: NOT MEASURED (peer not installed)");
    console.log('- every file the peer reads is read by us: NOT MEASURED (peer not installed)');
    return;
  }
  const both = rows.filter((r) => r.ours && r.peer);
  const ratioAll = median(both.map(peerMedian)) / median(both.map(ourMedian));
  const perSet = SETS.map((s) => {
    const g = both.filter((r) => r.c.set === s);
    return `${s} ${ratioText(median(g.map(peerMedian)) / median(g.map(ourMedian)))}×`;
  });
  const refRatio = ref?.peer ? peerMedian(ref) / ourMedian(ref) : NaN;
  const perFileUnder = both.filter((r) => peerMedian(r) / ourMedian(r) < 10);
  console.log(
    `- our median at most a tenth of the peer's: ${verdict(both.length === 0 ? undefined : ratioAll >= 10)} (all ${both.length} files: peer median ${fmtMs(median(both.map(peerMedian)))} ms / ours ${fmtMs(median(both.map(ourMedian)))} ms = ${ratioText(ratioAll)}×; ${perSet.join(', ')}; ${REFERENCE_VECTOR_BILL} ${ratioText(refRatio)}×; files under 10× on their own: ${perFileUnder.length === 0 ? 'none' : perFileUnder.map((r) => `${r.c.file} ${ratioText(peerMedian(r) / ourMedian(r))}×`).join(', ')})`,
  );
  const peerReads = rows.filter((r) => r.peer?.readBill);
  const missed = peerReads.filter((r) => !r.ours?.readBill);
  const bills = rows.filter((r) => r.c.expectedStatus === 200);
  console.log(
    `- every file the peer reads is read by us: ${verdict(peerReads.length === 0 && bills.every((r) => !r.peer) ? undefined : missed.length === 0)} (the peer reads ${peerReads.length} of ${bills.length} bills, we read ${bills.filter((r) => r.ours?.readBill).length}; read by the peer and not by us: ${missed.length === 0 ? 'none' : missed.map((r) => r.c.file).join(', ')})`,
  );
  const peerMissed = bills.filter((r) => r.peer && !r.peer.readBill);
  if (peerMissed.length > 0)
    console.log(
      `- bills the peer does not read: ${peerMissed.length} (${countBy(peerMissed.map((r) => r.peer!.outcome))})`,
    );
}

function countBy(xs: string[]): string {
  const m = new Map<string, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return [...m].map(([k, n]) => `${n} ${k}`).join(', ');
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
