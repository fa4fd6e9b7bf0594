/**
 * What the engine runs of bench/engines.ts share: the corpus and the limits, the manifest's expected answers and the
 * rule that judges an engine's answer against them, the result types, memory readings, and the child processes to
 * kill on the way out.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { KNOWN_VERSIONS, findHeader } from '../src/pdf/syntax/structure.ts';
import { MAX_STRUCTURE_STREAM_BYTES } from '../src/pdf/validate.ts';
import { simplePdf } from '../test/support/pdf/pdf-builder.ts';

export const ROOT = resolve(import.meta.dirname, '..');
export const SHARED_DIR = process.env.SHARED_DIR ?? resolve(ROOT, '../shared');
export const CORPUS = join(SHARED_DIR, 'corpus/pdf');
export const MiB = 1024 * 1024;

/** pdf.js bounds per file: bombs make pdf.js 5.6 run 14–22 s and take 2–3 GB (inflate buffers are outside the V8 heap). */
export const PDFJS_TIME_LIMIT_MS = 5000;
export const PDFJS_HEAP_MB = 512;
export const PDFJS_RSS_LIMIT_KB = 1536 * 1024;
export const RSS_POLL_MS = 20;
/** The service's settings (src/config.ts defaults) for our pipeline and for PDFium alone. */
export const ENGINE_MEMORY_BYTES = 256 * MiB;
export const VALIDATE_TIMEOUT_MS = 10_000;
export const MAX_STREAM_BYTES = MAX_STRUCTURE_STREAM_BYTES;
/** Timed runs per file after the first (which warms up); the file's time is their median. */
export const REPEATS = 5;
export const HARD_LIMIT_MS = 240_000;
/** Safety net for the fresh process that runs one bomb through PDFium (it stops itself at its memory ceiling). */
export const BOMB_PROCESS_LIMIT_MS = 60_000;
export const BOMB_FLAG = '--bomb-in-fresh-process';

/** A well-formed one-page PDF: warms the engines up before the first timed file. */
export const WARM_PDF = simplePdf({ pages: 1 });

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
export interface ManifestEntry {
  file: string;
  bytes: number;
  what?: string;
  expected: Expected;
}

type Problem = 'invalid-pdf' | 'encrypted-pdf' | 'pdf-too-complex';
export type Answer =
  | { status: 200; pages: number; version: string | undefined; attachments: number }
  | { status: 400; problem: Problem };

/**
 * The answers test/pdf/corpus.test.ts pins where the manifest leaves a choice (read from that file, so the two cannot
 * drift). Pins of the HTTP layer (invalid-base64 for an empty Base64 string) do not apply to bytes and are left out.
 */
export function readPinned(): Record<string, Partial<Expected>> {
  const src = readFileSync(join(ROOT, 'test/pdf/corpus.test.ts'), 'utf8');
  const m = /const PINNED\b[^=]*=\s*(\{[\s\S]*?\n\});/.exec(src);
  if (!m) throw new Error('bench/engines.ts: const PINNED not found in test/pdf/corpus.test.ts');
  const pinned = new Function(`return (${m[1]});`)() as Record<string, Partial<Expected>>;
  return Object.fromEntries(Object.entries(pinned).filter(([, e]) => e.problemType !== '/problems/invalid-base64'));
}

export const isBomb = (file: string) => /(^|\/)bomb-[^/]*GiB\.pdf$/.test(file);
/** The manifest names pdf-too-complex as an acceptable alternative in the note of the bombs that allow it. */
const tooComplexAllowed = (e: Expected) => /pdf-too-complex/.test(e.note ?? '');

export function judge(expected: Expected, a: Answer): string | undefined {
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

export const showAnswer = (a: Answer) =>
  a.status === 400 ? `400 ${a.problem}` : `200 (${a.pages} p, v${a.version}, ${a.attachments} att)`;
function describeExpected(e: Expected): string {
  if (e.status !== 200) return `${e.status} ${e.problemType?.replace('/problems/', '')}`;
  return `200 (${e.PageCount} p, v${e.PdfVersion ?? 'any'}, ${e.AttachmentCount} att)`;
}

/** The header rule every engine gets, as validatePdf applies it: `%PDF-d.d` in the first 1024 bytes, a known version. */
export function headerRule(bytes: Uint8Array): Answer | undefined {
  const header = findHeader(bytes);
  return header && KNOWN_VERSIONS.includes(header.version) ? undefined : { status: 400, problem: 'invalid-pdf' };
}

// ---------------------------------------------------------------------------------------------------------------
// Per-engine results

export type Outcome = 'ok' | 'error' | 'timeout' | 'killed: RSS' | 'killed: heap' | 'crashed' | 'header';

export interface FileResult {
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

export interface EngineRun {
  name: string;
  results: Map<string, FileResult>;
  shipped: { label: string; bytes: number };
}

export const median = (xs: number[]) => percentile(xs, 0.5);
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

export function procStatusKB(pid: number | 'self', field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

export function resetPeakRss(): void {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    /* not permitted: the peak then includes earlier work */
  }
}

export const children = new Set<ChildProcess>();

export function killChild(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) {
    try {
      child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
  children.delete(child);
}

export interface CorpusFile {
  entry: ManifestEntry;
  path: string;
  bytes: Uint8Array;
  expected: Expected;
  bomb: boolean;
}

export const log = (s: string) => {
  if (process.env.BENCH_VERBOSE) process.stderr.write(`${s}\n`);
};
