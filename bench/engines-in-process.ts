/**
 * The in-process engines of bench/engines.ts: our pipeline (validatePdf + PdfiumEngine) and PDFium alone, timed in
 * this process, and each bomb in a fresh process of its own.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PdfiumEngine } from '../src/pdf/engine/pdfium.ts';
import type { EngineReport } from '../src/pdf/engine/port.ts';
import { validatePdf, type PdfValidationResult } from '../src/pdf/validate.ts';
import { loadEngineModules } from '../src/runtime/shared/deps.ts';
import {
  ROOT,
  ENGINE_MEMORY_BYTES,
  VALIDATE_TIMEOUT_MS,
  MAX_STREAM_BYTES,
  REPEATS,
  BOMB_PROCESS_LIMIT_MS,
  BOMB_FLAG,
  WARM_PDF,
  type Answer,
  judge,
  showAnswer,
  headerRule,
  type Outcome,
  type FileResult,
  type EngineRun,
  median,
  procStatusKB,
  resetPeakRss,
  children,
  killChild,
  type CorpusFile,
  log,
} from './engines-common.ts';

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

export type InProcessKind = 'ours' | 'alone';

interface Engines {
  ours: (bytes: Uint8Array) => Promise<Answer>;
  alone: (bytes: Uint8Array) => Promise<Answer>;
}

/**
 * The in-process engines, each with its own PDFium instance; those in `warm` are instantiated and warmed up now.
 * PdfiumEngine in process copies the bytes into its heap and never takes them, so one buffer serves every run.
 */
export async function makeEngines(warm: InProcessKind[]): Promise<Engines> {
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

/** The entry point, started again with BOMB_FLAG for one bomb. */
const ENGINES_SCRIPT = join(ROOT, 'bench/engines.ts');

/**
 * A bomb runs in a fresh process of its own (bench/engines.ts with BOMB_FLAG; same code, same engine settings, still in
 * process there), so its peak RSS is not mixed with the PDFium heaps earlier files left in this one.
 */
async function runBombInFreshProcess(kind: InProcessKind, f: CorpusFile): Promise<FileResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', ENGINES_SCRIPT, BOMB_FLAG, kind, f.path], {
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
export async function bombProcessMain(kind: InProcessKind, path: string): Promise<void> {
  const bytes = new Uint8Array(readFileSync(path));
  const engines = await makeEngines([kind]);
  const idleKB = procStatusKB('self', 'VmRSS');
  resetPeakRss();
  const started = performance.now();
  const answer = await engines[kind](bytes);
  const ms = performance.now() - started;
  process.stdout.write(`${JSON.stringify({ answer, ms, peakKB: procStatusKB('self', 'VmHWM'), idleKB })}\n`);
}

export async function runInProcess(
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
