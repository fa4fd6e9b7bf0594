/** pdf.js for bench/engines.ts: in a child process (engines-pdfjs-child.ts), bounded by time and memory. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { ChildReply, ChildRequest, PdfjsAnswer } from './engines-pdfjs-child.ts';
import {
  ROOT,
  PDFJS_TIME_LIMIT_MS,
  PDFJS_HEAP_MB,
  PDFJS_RSS_LIMIT_KB,
  RSS_POLL_MS,
  REPEATS,
  type Answer,
  judge,
  showAnswer,
  headerRule,
  type Outcome,
  type FileResult,
  type EngineRun,
  median,
  procStatusKB,
  children,
  killChild,
  type CorpusFile,
  log,
} from './engines-common.ts';

const CHILD_SCRIPT = join(ROOT, 'bench/engines-pdfjs-child.ts');

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

export async function runPdfjs(files: CorpusFile[], shipped: EngineRun['shipped']): Promise<EngineRun> {
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
