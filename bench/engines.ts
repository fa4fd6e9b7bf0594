/**
 * `npx tsx bench/engines.ts`: why PDFium WASM plus our structure reader, and not pdf.js. Every file of the shared PDF
 * corpus that is on disk is answered three ways and compared with the manifest's expected answer:
 *
 * - pdf.js (unpdf 1.7.0 = pdf.js 5.6, the last unpdf for Node 20), in a child process bounded by time and memory;
 * - our pipeline, `validatePdf` with `PdfiumEngine`, in process, as the service runs it;
 * - PDFium alone (`PdfiumEngine.inspect`, no structure reader), in process, to show what the reader adds.
 *
 * Prints one Markdown table (matches, mismatches, bombs, speed, gzip size of what ships) and the mismatches with their
 * reasons. Part of the benchmarks, not the tests. Counts are deterministic; times are not.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { PdfiumEngine } from '../src/pdf/engine/pdfium.ts';
import type { EngineReport } from '../src/pdf/engine/port.ts';
import { KNOWN_VERSIONS, findHeader } from '../src/pdf/syntax/structure.ts';
import { MAX_STRUCTURE_STREAM_BYTES, validatePdf, type PdfValidationResult } from '../src/pdf/validate.ts';
import { loadEngineModules } from '../src/runtime/shared/deps.ts';
import { simplePdf } from '../test/support/pdf-builder.ts';
import type { ChildReply, ChildRequest, PdfjsAnswer } from './engines-pdfjs-child.ts';

const ROOT = resolve(import.meta.dirname, '..');
const SHARED_DIR = process.env.SHARED_DIR ?? resolve(ROOT, '../shared');
const CORPUS = join(SHARED_DIR, 'corpus/pdf');
const MiB = 1024 * 1024;

/** pdf.js bounds per file: bombs make pdf.js 5.6 run 14–22 s and take 2–3 GB (inflate buffers are outside the V8 heap). */
const PDFJS_TIME_LIMIT_MS = 5000;
const PDFJS_HEAP_MB = 512;
const PDFJS_RSS_LIMIT_KB = 1536 * 1024;
const RSS_POLL_MS = 20;
/** The service's settings (src/config.ts defaults) for our pipeline and for PDFium alone. */
const ENGINE_MEMORY_BYTES = 256 * MiB;
const VALIDATE_TIMEOUT_MS = 10_000;
const MAX_STREAM_BYTES = MAX_STRUCTURE_STREAM_BYTES;
/** Timed runs per file after the first (which warms up); the file's time is their median. */
const REPEATS = 5;
const HARD_LIMIT_MS = 240_000;
/** Safety net for the fresh process that runs one bomb through PDFium (it stops itself at its memory ceiling). */
const BOMB_PROCESS_LIMIT_MS = 60_000;
const BOMB_FLAG = '--bomb-in-fresh-process';

/** A well-formed one-page PDF: warms the engines up before the first timed file. */
const WARM_PDF = simplePdf({ pages: 1 });

// ---------------------------------------------------------------------------------------------------------------
// Expected answers and the rule that compares an engine's answer with them

interface Expected {
  status: number;
  problemType?: string;
  PageCount?: number;
  PdfVersion?: string;
  AttachmentCount?: number;
  note?: string;
}
interface ManifestEntry {
  file: string;
  bytes: number;
  what?: string;
  expected: Expected;
}

type Problem = 'invalid-pdf' | 'encrypted-pdf' | 'pdf-too-complex';
type Answer =
  | { status: 200; pages: number; version: string | undefined; attachments: number }
  | { status: 400; problem: Problem };

/**
 * The answers test/pdf/corpus.test.ts pins where the manifest leaves a choice (read from that file, so the two cannot
 * drift). Pins of the HTTP layer (invalid-base64 for an empty Base64 string) do not apply to bytes and are left out.
 */
function readPinned(): Record<string, Partial<Expected>> {
  const src = readFileSync(join(ROOT, 'test/pdf/corpus.test.ts'), 'utf8');
  const m = /const PINNED\b[^=]*=\s*(\{[\s\S]*?\n\});/.exec(src);
  if (!m) throw new Error('bench/engines.ts: const PINNED not found in test/pdf/corpus.test.ts');
  const pinned = new Function(`return (${m[1]});`)() as Record<string, Partial<Expected>>;
  return Object.fromEntries(Object.entries(pinned).filter(([, e]) => e.problemType !== '/problems/invalid-base64'));
}

const isBomb = (file: string) => /(^|\/)bomb-[^/]*GiB\.pdf$/.test(file);
/** The manifest names pdf-too-complex as an acceptable alternative in the note of the bombs that allow it. */
const tooComplexAllowed = (e: Expected) => /pdf-too-complex/.test(e.note ?? '');

function judge(expected: Expected, a: Answer): string | undefined {
  if (
    a.status === 400 &&
    a.problem === 'pdf-too-complex' &&
    (tooComplexAllowed(expected) || expected.problemType?.endsWith('/pdf-too-complex'))
  )
    return undefined;
  const want = describeExpected(expected);
  if (expected.status !== a.status) return `answered ${showAnswer(a)}, expected ${want}`;
  if (a.status === 400)
    return expected.problemType?.endsWith(`/${a.problem}`) ? undefined : `answered ${showAnswer(a)}, expected ${want}`;
  const wrong: string[] = [];
  if (a.pages !== expected.PageCount) wrong.push(`pages ${a.pages} (expected ${expected.PageCount})`);
  if (expected.PdfVersion !== undefined && a.version !== expected.PdfVersion)
    wrong.push(`version ${a.version} (expected ${expected.PdfVersion})`);
  if (a.attachments !== expected.AttachmentCount)
    wrong.push(`attachments ${a.attachments} (expected ${expected.AttachmentCount})`);
  return wrong.length ? wrong.join(', ') : undefined;
}

const showAnswer = (a: Answer) =>
  a.status === 400 ? `400 ${a.problem}` : `200 (${a.pages} p, v${a.version}, ${a.attachments} att)`;
function describeExpected(e: Expected): string {
  if (e.status !== 200) return `${e.status} ${e.problemType?.replace('/problems/', '')}`;
  return `200 (${e.PageCount} p, v${e.PdfVersion ?? 'any'}, ${e.AttachmentCount} att)`;
}

/** The header rule every engine gets, as validatePdf applies it: `%PDF-d.d` in the first 1024 bytes, a known version. */
function headerRule(bytes: Uint8Array): Answer | undefined {
  const header = findHeader(bytes);
  return header && KNOWN_VERSIONS.includes(header.version) ? undefined : { status: 400, problem: 'invalid-pdf' };
}

// ---------------------------------------------------------------------------------------------------------------
// Per-engine results

type Outcome = 'ok' | 'error' | 'timeout' | 'killed: RSS' | 'killed: heap' | 'crashed' | 'header';

interface FileResult {
  answer: Answer;
  outcome: Outcome;
  /** Time of the file: median of the repeats, or the single run (bombs, bounded runs). */
  ms: number;
  peakRssMB?: number;
  /** RSS of the (fresh) process that ran the bomb, just before it. */
  idleRssMB?: number;
  detail?: string;
  mismatch?: string;
}

interface EngineRun {
  name: string;
  results: Map<string, FileResult>;
  shipped: { label: string; bytes: number };
}

const median = (xs: number[]) => percentile(xs, 0.5);
function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

function procStatusKB(pid: number | 'self', field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

function resetPeakRss(): void {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    /* not permitted: the peak then includes earlier work */
  }
}

// ---------------------------------------------------------------------------------------------------------------
// In process: our pipeline and PDFium alone

async function timeInProcess(run: () => Promise<Answer>, repeats: number): Promise<{ answer: Answer; ms: number }> {
  let t = performance.now();
  const answer = await run();
  const first = performance.now() - t;
  const ms: number[] = [];
  for (let i = 0; i < repeats; i++) {
    t = performance.now();
    await run();
    ms.push(performance.now() - t);
  }
  return { answer, ms: repeats > 0 ? median(ms) : first };
}

function fromValidation(r: PdfValidationResult): Answer {
  if (r.ok)
    return { status: 200, pages: r.value.pageCount, version: r.value.pdfVersion, attachments: r.value.attachmentCount };
  return { status: 400, problem: r.problem };
}

/** PDFium's own view, mapped the way a service without the reader would map it. */
function fromEngineReport(r: EngineReport): Answer {
  switch (r.status) {
    case 'needs-password':
      return { status: 400, problem: 'encrypted-pdf' };
    case 'too-complex':
      return { status: 400, problem: 'pdf-too-complex' };
    case 'unreadable':
      return { status: 400, problem: 'invalid-pdf' };
    case 'opened':
      if (r.pageCount < 1) return { status: 400, problem: 'invalid-pdf' };
      return { status: 200, pages: r.pageCount, version: r.version, attachments: r.attachmentCount };
  }
}

type InProcessKind = 'ours' | 'alone';

interface Engines {
  ours: (bytes: Uint8Array) => Promise<Answer>;
  alone: (bytes: Uint8Array) => Promise<Answer>;
}

/**
 * The in-process engines, each with its own PDFium instance; those in `warm` are instantiated and warmed up now.
 * PdfiumEngine in process copies the bytes into its heap and never takes them, so one buffer serves every run.
 */
async function makeEngines(warm: InProcessKind[]): Promise<Engines> {
  const wasm = (await loadEngineModules()).pdfium;
  const clock = { now: () => performance.now() };
  const oursEngine = new PdfiumEngine({ wasm, memoryLimitBytes: ENGINE_MEMORY_BYTES });
  const aloneEngine = new PdfiumEngine({ wasm, memoryLimitBytes: ENGINE_MEMORY_BYTES });
  const engines: Engines = {
    ours: async (bytes) =>
      fromValidation(
        await validatePdf(bytes, {
          engine: oursEngine,
          clock,
          timeoutMs: VALIDATE_TIMEOUT_MS,
          maxStreamBytes: MAX_STREAM_BYTES,
        }),
      ),
    alone: async (bytes) => headerRule(bytes) ?? fromEngineReport(await aloneEngine.inspect(bytes)),
  };
  for (let i = 0; i < 3; i++) for (const kind of warm) await engines[kind](WARM_PDF);
  return engines;
}

/**
 * A bomb runs in a fresh process of its own (this script with BOMB_FLAG; same code, same engine settings, still in
 * process there), so its peak RSS is not mixed with the PDFium heaps earlier files left in this one.
 */
async function runBombInFreshProcess(kind: InProcessKind, f: CorpusFile): Promise<FileResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), BOMB_FLAG, kind, f.path], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
  const timer = setTimeout(() => killChild(child), BOMB_PROCESS_LIMIT_MS);
  const code = await new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
  clearTimeout(timer);
  children.delete(child);
  const line = out.split('\n').find((l) => l.startsWith('{'));
  if (code !== 0 || !line) throw new Error(`bomb process for ${f.entry.file} (${kind}) failed (${code}): ${err}`);
  const r = JSON.parse(line) as { answer: Answer; ms: number; peakKB: number; idleKB: number };
  return {
    answer: r.answer,
    outcome: r.answer.status === 200 ? 'ok' : 'error',
    ms: r.ms,
    peakRssMB: r.peakKB / 1024,
    idleRssMB: r.idleKB / 1024,
    mismatch: judge(f.expected, r.answer),
  };
}

/** The BOMB_FLAG side: one file, one run, one JSON line on stdout. */
async function bombProcessMain(kind: InProcessKind, path: string): Promise<void> {
  const bytes = new Uint8Array(readFileSync(path));
  const engines = await makeEngines([kind]);
  const idleKB = procStatusKB('self', 'VmRSS');
  resetPeakRss();
  const started = performance.now();
  const answer = await engines[kind](bytes);
  const ms = performance.now() - started;
  process.stdout.write(`${JSON.stringify({ answer, ms, peakKB: procStatusKB('self', 'VmHWM'), idleKB })}\n`);
}

async function runInProcess(
  name: string,
  kind: InProcessKind,
  files: CorpusFile[],
  engines: Engines,
  shipped: EngineRun['shipped'],
): Promise<EngineRun> {
  const results = new Map<string, FileResult>();
  for (const f of files) {
    let result: FileResult;
    if (f.bomb) {
      result = await runBombInFreshProcess(kind, f);
    } else {
      const r = await timeInProcess(() => engines[kind](f.bytes), REPEATS);
      const outcome: Outcome = headerRule(f.bytes) ? 'header' : r.answer.status === 200 ? 'ok' : 'error';
      result = { answer: r.answer, outcome, ms: r.ms, mismatch: judge(f.expected, r.answer) };
    }
    results.set(f.entry.file, result);
    log(`${name}: ${f.entry.file} ${showAnswer(result.answer)} ${result.ms.toFixed(2)} ms`);
  }
  return { name, results, shipped };
}

// ---------------------------------------------------------------------------------------------------------------
// pdf.js in a child process, bounded

const CHILD_SCRIPT = join(ROOT, 'bench/engines-pdfjs-child.ts');
const children = new Set<ChildProcess>();

function killChild(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) {
    try {
      child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
  children.delete(child);
}

class PdfjsChild {
  readonly proc: ChildProcess;
  stderrTail = '';
  private killed = false;
  private readonly ready: Promise<void>;

  constructor() {
    this.proc = spawn(process.execPath, [`--max-old-space-size=${PDFJS_HEAP_MB}`, '--import', 'tsx', CHILD_SCRIPT], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    children.add(this.proc);
    this.proc.once('exit', () => children.delete(this.proc));
    this.proc.stderr!.on('data', (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString()).slice(-2000);
    });
    this.ready = new Promise((resolveReady, reject) => {
      const timer = setTimeout(() => reject(new Error('pdf.js child did not start within 30 s')), 30_000);
      const onMessage = (m: ChildReply) => {
        if (m.kind !== 'ready') return;
        clearTimeout(timer);
        this.proc.off('message', onMessage);
        resolveReady();
      };
      this.proc.on('message', onMessage);
      this.proc.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`pdf.js child exited while starting (${code ?? signal}): ${this.stderrTail}`));
      });
    });
  }

  start(): Promise<void> {
    return this.ready;
  }

  get alive(): boolean {
    return !this.killed && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  kill(): void {
    this.killed = true;
    killChild(this.proc);
  }

  rssKB(): number {
    return procStatusKB(this.proc.pid!, 'VmRSS');
  }

  /**
   * Sends one file and waits for the reply of `kind`, under a time limit and the RSS limit (polled). On a breach the
   * child is killed and the outcome says why; the caller then starts a new child.
   */
  waitFor<K extends 'first' | 'repeats'>(
    kind: K,
    limitMs: number,
    request?: ChildRequest,
  ): Promise<{ reply?: Extract<ChildReply, { kind: K }>; outcome?: Outcome; ms: number; peakKB: number }> {
    const pid = this.proc.pid!;
    const started = performance.now();
    let peakKB = 0;
    return new Promise((done) => {
      const finish = (r: { reply?: Extract<ChildReply, { kind: K }>; outcome?: Outcome }) => {
        clearTimeout(timer);
        clearInterval(poll);
        this.proc.off('message', onMessage);
        this.proc.off('exit', onExit);
        done({ ...r, ms: performance.now() - started, peakKB });
      };
      const kill = (outcome: Outcome) => {
        peakKB = Math.max(peakKB, procStatusKB(pid, 'VmHWM') || 0);
        this.kill();
        finish({ outcome });
      };
      const onMessage = (m: ChildReply) => {
        if (m.kind === kind) finish({ reply: m as Extract<ChildReply, { kind: K }> });
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        // V8 aborts (SIGABRT, or exit 134) when --max-old-space-size is reached
        const heap =
          /heap out of memory|Reached heap limit/i.test(this.stderrTail) || signal === 'SIGABRT' || code === 134;
        this.killed = true;
        finish({ outcome: heap ? 'killed: heap' : 'crashed' });
      };
      const timer = setTimeout(() => kill('timeout'), limitMs);
      const poll = setInterval(() => {
        const rss = procStatusKB(pid, 'VmRSS');
        if (Number.isFinite(rss)) peakKB = Math.max(peakKB, rss);
        if (rss > PDFJS_RSS_LIMIT_KB) kill('killed: RSS');
      }, RSS_POLL_MS);
      this.proc.on('message', onMessage);
      this.proc.once('exit', onExit);
      if (request) this.proc.send(request);
    });
  }
}

function fromPdfjs(a: PdfjsAnswer): Answer {
  if (a.outcome === 'error')
    return { status: 400, problem: a.name === 'PasswordException' ? 'encrypted-pdf' : 'invalid-pdf' };
  if (!(a.numPages >= 1)) return { status: 400, problem: 'invalid-pdf' };
  return { status: 200, pages: a.numPages, version: a.version, attachments: a.attachments };
}

async function runPdfjs(files: CorpusFile[], shipped: EngineRun['shipped']): Promise<EngineRun> {
  const results = new Map<string, FileResult>();
  let child: PdfjsChild | undefined;
  const freshChild = async () => {
    child?.kill();
    child = new PdfjsChild();
    await child.start();
    return child;
  };
  for (const f of files) {
    const header = headerRule(f.bytes);
    if (header) {
      results.set(f.entry.file, { answer: header, outcome: 'header', ms: 0, mismatch: judge(f.expected, header) });
      continue;
    }
    // A bomb gets a child of its own (started fresh, dropped after), so its peak RSS is its own.
    const c = !child?.alive || f.bomb ? await freshChild() : child;
    const idleRssMB = c.rssKB() / 1024;
    const first = await c.waitFor('first', PDFJS_TIME_LIMIT_MS, { path: f.path, repeats: f.bomb ? 0 : REPEATS });
    let result: FileResult;
    if (first.reply) {
      const answer = fromPdfjs(first.reply.answer);
      const detail =
        first.reply.answer.outcome === 'error'
          ? `${first.reply.answer.name}: ${first.reply.answer.message}`
          : undefined;
      result = {
        answer,
        outcome: first.reply.answer.outcome,
        ms: first.reply.ms,
        peakRssMB: first.reply.hwmKB / 1024,
        idleRssMB,
        detail,
        mismatch: judge(f.expected, answer),
      };
      if (!f.bomb) {
        const repeats = await c.waitFor('repeats', PDFJS_TIME_LIMIT_MS * REPEATS);
        if (repeats.reply) result.ms = median(repeats.reply.ms);
      }
    } else if (first.outcome === 'crashed') {
      // Not a limit of ours: a pdf.js service would answer 500 here; counted as invalid-pdf (never a match for a 200).
      const answer: Answer = { status: 400, problem: 'invalid-pdf' };
      result = {
        answer,
        outcome: 'crashed',
        ms: first.ms,
        peakRssMB: first.peakKB / 1024,
        idleRssMB,
        detail: `child crashed: ${c.stderrTail.slice(-200)}`,
        mismatch: judge(f.expected, answer),
      };
    } else {
      const answer: Answer = { status: 400, problem: 'pdf-too-complex' };
      const limit =
        first.outcome === 'timeout'
          ? `${PDFJS_TIME_LIMIT_MS / 1000} s`
          : first.outcome === 'killed: RSS'
            ? `RSS ${PDFJS_RSS_LIMIT_KB / 1024 / 1024} GB`
            : `heap ${PDFJS_HEAP_MB} MB`;
      result = {
        answer,
        outcome: first.outcome!,
        ms: first.ms,
        peakRssMB: first.peakKB / 1024,
        idleRssMB,
        detail: `stopped at the ${limit} limit`,
        mismatch: judge(f.expected, answer),
      };
    }
    if (f.bomb) child?.kill();
    results.set(f.entry.file, result);
    log(`pdf.js: ${f.entry.file} ${result.outcome} ${showAnswer(result.answer)} ${result.ms.toFixed(2)} ms`);
  }
  child?.kill();
  return { name: 'pdf.js 5.6 (unpdf 1.7.0), child process', results, shipped };
}

// ---------------------------------------------------------------------------------------------------------------
// What ships, gzip-compressed

function gzipSize(paths: string[]): number {
  return paths.reduce((sum, p) => sum + gzipSync(readFileSync(p), { level: 9 }).length, 0);
}

function resolveModule(specifier: string): string {
  return fileURLToPath(import.meta.resolve(specifier));
}

function shippedSizes() {
  const pdfjsDir = resolve(resolveModule('unpdf'), '..');
  const pdfjsFiles = [join(pdfjsDir, 'pdfjs.mjs'), join(pdfjsDir, 'index.mjs')];
  const pdfiumGlue = resolveModule('@embedpdf/pdfium');
  const pdfiumWasm = resolveModule('@embedpdf/pdfium/pdfium.wasm');
  const reader = [
    join(ROOT, 'src/pdf/validate.ts'),
    join(ROOT, 'src/pdf/engine/pdfium.ts'),
    ...readdirSync(join(ROOT, 'src/pdf/syntax'))
      .filter((n) => n.endsWith('.ts'))
      .map((n) => join(ROOT, 'src/pdf/syntax', n)),
  ];
  const fflate = join(resolve(resolveModule('fflate'), '../..'), 'esm/index.mjs');
  const pdfium = gzipSize([pdfiumWasm, pdfiumGlue]);
  const readerBytes = gzipSize(reader);
  const fflateBytes = gzipSize([fflate]);
  const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;
  const kb = (n: number) => `${(n / 1e3).toFixed(0)} kB`;
  return {
    pdfjs: { bytes: gzipSize(pdfjsFiles), label: 'unpdf dist/pdfjs.mjs + dist/index.mjs' },
    pdfium: { bytes: pdfium, label: `pdfium.wasm + ${basename(pdfiumGlue)} glue` },
    ours: {
      bytes: pdfium + readerBytes + fflateBytes,
      label: `PDFium ${mb(pdfium)} + reader sources ${kb(readerBytes)} (TS, ${reader.length} files) + fflate ${kb(fflateBytes)} (whole esm module)`,
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------

interface CorpusFile {
  entry: ManifestEntry;
  path: string;
  bytes: Uint8Array;
  expected: Expected;
  bomb: boolean;
}

const log = (s: string) => {
  if (process.env.BENCH_VERBOSE) process.stderr.write(`${s}\n`);
};

function cleanup(): void {
  for (const c of [...children]) killChild(c);
}
process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\n${signal}: stopping the child processes\n`);
    process.exit(130);
  });
}
setTimeout(() => {
  process.stderr.write(`\nbench/engines: gave up after ${HARD_LIMIT_MS / 1000} s\n`);
  process.exit(2);
}, HARD_LIMIT_MS).unref();

async function main(): Promise<void> {
  const runStarted = performance.now();
  console.log('# PDF engines on the shared corpus');
  console.log('');
  console.log(
    `Node ${process.version}, ${process.platform} ${process.arch}, ${cpus().length} cores (${cpus()[0]?.model.trim() ?? '?'})`,
  );
  console.log('');
  const manifestPath = join(CORPUS, 'manifest.json');
  if (!existsSync(manifestPath)) {
    console.log(`No corpus at ${CORPUS} (set SHARED_DIR): nothing to measure.`);
    return;
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { files: ManifestEntry[] };
  const pinned = readPinned();
  const missing: string[] = [];
  const files: CorpusFile[] = [];
  for (const entry of manifest.files) {
    const path = join(CORPUS, entry.file);
    if (!existsSync(path)) {
      missing.push(entry.file);
      continue;
    }
    files.push({
      entry,
      path,
      bytes: new Uint8Array(readFileSync(path)),
      expected: { ...entry.expected, ...pinned[entry.file] },
      bomb: isBomb(entry.file),
    });
  }

  const sizes = shippedSizes();
  const engines = await makeEngines(['ours', 'alone']);
  const runs: EngineRun[] = [];
  runs.push(await runInProcess('validatePdf + PdfiumEngine (ours), in process', 'ours', files, engines, sizes.ours));
  runs.push(
    await runInProcess('PDFium alone (PdfiumEngine.inspect), in process', 'alone', files, engines, sizes.pdfium),
  );
  runs.push(await runPdfjs(files, sizes.pdfjs));

  const timed = files.filter((f) => !f.bomb && !headerRule(f.bytes));
  const bombs = files.filter((f) => f.bomb);
  console.log(
    `- Corpus: ${files.length} of ${manifest.files.length} manifest files on disk (missing, skipped: ${missing.join(', ') || 'none'}).`,
  );
  console.log(
    `- Bombs: the ${bombs.length} files \`gen/bomb-*-1GiB.pdf\` (public/pdfjs/bomb_giant.pdf is a broken content stream, not a bomb: timed with the other files).`,
  );
  console.log(
    `- Match: status; for 200 also page count, attachment count and PDF version (when the manifest gives one or test/pdf/corpus.test.ts pins one). ` +
      `pdf-too-complex counts as a match only on the bombs whose manifest note allows it.`,
  );
  console.log(
    `- Same rules for every engine: the header rule (\`%PDF-d.d\` in the first 1024 bytes, version 1.0–1.7 or 2.0, else invalid-pdf; ` +
      `${files.length - bombs.length - timed.length} files stop there) and the mapping: password error → encrypted-pdf, any other error or a page count below 1 → invalid-pdf, ` +
      `out of time or memory → pdf-too-complex.`,
  );
  console.log(
    `- pdf.js: \`getDocumentProxy\` on a copy of the bytes, numPages, getMetadata().info.PDFFormatVersion, getAttachments() count; in a child process ` +
      `(--max-old-space-size=${PDFJS_HEAP_MB}, killed after ${PDFJS_TIME_LIMIT_MS / 1000} s or above ${PDFJS_RSS_LIMIT_KB / 1024 / 1024} GB RSS, polled every ${RSS_POLL_MS} ms).`,
  );
  console.log(
    `- PDFium: memory ceiling ${ENGINE_MEMORY_BYTES / MiB} MiB. Ours: validatePdf with timeoutMs ${VALIDATE_TIMEOUT_MS}, maxStreamBytes ${MAX_STREAM_BYTES / MiB} MiB. ` +
      `PDFium alone: PdfiumEngine.inspect, no structure reader (page count FPDF_GetPageCount, version FPDF_GetFileVersion, FPDFDoc_GetAttachmentCount).`,
  );
  console.log(
    `- Time per file: median of ${REPEATS} runs after a first (warm-up) run, bytes already in memory, engine warm; columns give median and p95 over the ` +
      `${timed.length} non-bomb files that pass the header rule.`,
  );
  console.log(
    `- Bombs: one run each in a fresh process (pdf.js: a new child; PDFium: this script started again for that file), peak RSS = VmHWM of that process ` +
      `(reset just before the file), idle = its RSS just before.`,
  );
  console.log(`- Gzip: zlib level 9 of the files in node_modules (and of our TS sources).`);
  console.log('');
  console.log(
    '| engine | files matching the manifest | mismatches | bombs (answer, time, peak RSS) | median / p95 ms per file (non-bomb) | gzip of what ships |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const run of runs) {
    const all = [...run.results.entries()];
    const bad = all.filter(([, r]) => r.mismatch);
    const bombCell = bombs
      .map((b) => {
        const r = run.results.get(b.entry.file)!;
        const tag = r.outcome === 'ok' || r.outcome === 'error' ? '' : ` (${r.outcome})`;
        const idle =
          r.idleRssMB !== undefined && Number.isFinite(r.idleRssMB) ? ` (idle ${Math.round(r.idleRssMB)})` : '';
        const rss =
          r.peakRssMB !== undefined && Number.isFinite(r.peakRssMB) ? `, ${Math.round(r.peakRssMB)} MB${idle}` : '';
        return `${b.entry.file.replace(/^gen\/bomb-|-1GiB\.pdf$/g, '')}: ${showAnswer(r.answer)}${tag}${r.mismatch ? ' ✗' : ''}, ${fmtMs(r.ms)} ms${rss}`;
      })
      .join('<br>');
    const ms = timed.map((f) => run.results.get(f.entry.file)!.ms);
    console.log(
      `| ${run.name} | ${all.length - bad.length} / ${all.length} | ${bad.length === 0 ? 'none' : bad.map(([file]) => file).join(', ')} | ${bombCell} | ` +
        `${fmtMs(median(ms))} / ${fmtMs(percentile(ms, 0.95))} | ${(run.shipped.bytes / 1e6).toFixed(2)} MB (${run.shipped.label}) |`,
    );
  }
  console.log('');
  console.log('## Mismatches');
  for (const run of runs) {
    console.log('');
    console.log(`### ${run.name}`);
    const bad = [...run.results.entries()].filter(([, r]) => r.mismatch);
    if (bad.length === 0) console.log('- none');
    for (const [file, r] of bad) console.log(`- ${file}: ${r.mismatch}${r.detail ? ` [${r.detail}]` : ''}`);
  }
  console.log('');
  console.log(`Run took ${((performance.now() - runStarted) / 1000).toFixed(1)} s.`);
}

function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 10) return ms.toFixed(2);
  if (ms < 100) return ms.toFixed(1);
  return ms.toFixed(0);
}

const bombArgs = process.argv.indexOf(BOMB_FLAG);
(bombArgs >= 0
  ? bombProcessMain(process.argv[bombArgs + 1] as InProcessKind, process.argv[bombArgs + 2]!)
  : main()
).then(
  () => {
    cleanup();
    process.exit(0);
  },
  (e) => {
    cleanup();
    console.error(e);
    process.exit(1);
  },
);
