/**
 * The printed check's part of `npm run bench`: what comparing the printed payment part with the code (and reading the
 * symbol's facts) costs per page, against the same extraction without it, in the same run. scanLastPage in process
 * (PDFium and zxing-wasm in this thread, as a worker runs it) on the bills of the shared QR corpus, the two variants
 * interleaved file by file so that drift in the machine's load hits both alike. Prints a Markdown table.
 *
 * Run on its own with `npx tsx bench/printed.ts`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PdfiumEngine } from '../src/pdf/engine/pdfium.ts';
import { scanLastPage } from '../src/qr/scan.ts';
import { ZxingReader } from '../src/qr/zxing.ts';
import { loadEngineModules } from '../src/runtime/shared/deps.ts';
import { isMainModule } from './main-module.ts';
import { QR_CORPUS_DIR } from './qr-cases.ts';
import { fmtMs } from './stats.ts';

/** Timed rounds over all files, after one untimed warm-up round. */
const ROUNDS = 5;

interface Variant {
  name: string;
  checkPrinted: boolean;
  /** Milliseconds per file, summed over the rounds. */
  ms: number[];
}

export async function runPrintedBench({ deadline = Infinity }: { deadline?: number } = {}): Promise<void> {
  console.log('');
  console.log('# Printed payment part check');
  console.log('');
  let files: string[];
  try {
    const manifest = JSON.parse(readFileSync(join(QR_CORPUS_DIR, 'manifest.json'), 'utf8')) as {
      files: { file: string; expectedStatus: number }[];
    };
    const external = JSON.parse(readFileSync(join(QR_CORPUS_DIR, 'external-manifest.json'), 'utf8')) as {
      files: { file: string; kind: string; expectedStatus: number }[];
    };
    files = [...manifest.files, ...external.files.filter((f) => f.kind === 'pdf')]
      .filter((f) => f.expectedStatus === 200)
      .map((f) => f.file);
  } catch {
    console.log(`- ${QR_CORPUS_DIR} not found: the printed check's bench needs the shared QR corpus; skipped.`);
    return;
  }
  const modules = await loadEngineModules();
  const pages = new PdfiumEngine({ wasm: modules.pdfium, memoryLimitBytes: 512 << 20 });
  const reader = new ZxingReader(modules.zxing);
  const clock = { now: () => performance.now() };
  const bytes = files.map((f) => new Uint8Array(readFileSync(join(QR_CORPUS_DIR, f))));
  const variants: Variant[] = [
    { name: 'extract without the check', checkPrinted: false, ms: files.map(() => 0) },
    { name: 'extract with the check', checkPrinted: true, ms: files.map(() => 0) },
  ];
  /** Which files had their payment part compared (no printed-not-checked). */
  const compared = files.map(() => false);
  let rounds = 0;
  for (let round = 0; round <= ROUNDS && performance.now() < deadline; round++) {
    for (const [i, pdf] of bytes.entries()) {
      // Alternate which variant goes first, so neither always meets a warmer cache.
      const order = (round + i) % 2 === 0 ? variants : [...variants].reverse();
      for (const variant of order) {
        const started = performance.now();
        const outcome = await scanLastPage(pdf.slice(), {
          pages,
          reader,
          clock,
          timeoutMs: 60_000,
          checkPrinted: variant.checkPrinted,
        });
        const ms = performance.now() - started;
        if (round > 0) variant.ms[i]! += ms;
        if (variant.checkPrinted && outcome.status === 'found')
          compared[i] = !outcome.warnings.some((w) => w.code === 'printed-not-checked');
      }
    }
    if (round > 0) rounds++;
  }
  if (rounds === 0) {
    console.log('- no timed round before the deadline; skipped.');
    return;
  }
  const [without, withCheck] = variants as [Variant, Variant];
  const rows = [
    { name: 'payment part compared (text layer)', pick: (i: number) => compared[i]! },
    { name: 'not compared (scans, no headings)', pick: (i: number) => !compared[i]! },
    { name: 'all bills', pick: () => true },
  ];
  console.log(
    `- ${files.length} corpus bills (${compared.filter(Boolean).length} with their payment part as text), ${rounds} timed rounds after a warm-up, the two variants interleaved file by file; mean ms per page`,
  );
  console.log('');
  console.log('| bills | pages | without check | with check | check costs | ratio |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const row of rows) {
    const picked = files.map((_, i) => i).filter(row.pick);
    if (picked.length === 0) continue;
    const mean = (v: Variant) => picked.reduce((sum, i) => sum + v.ms[i]!, 0) / picked.length / rounds;
    const [a, b] = [mean(without), mean(withCheck)];
    console.log(
      `| ${row.name} | ${picked.length} | ${fmtMs(a)} | ${fmtMs(b)} | ${fmtMs(b - a)} | ${(b / a).toFixed(3)} |`,
    );
  }
}

if (isMainModule(import.meta)) await runPrintedBench();
