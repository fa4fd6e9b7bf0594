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
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import {
  ROOT,
  CORPUS,
  MiB,
  PDFJS_TIME_LIMIT_MS,
  PDFJS_HEAP_MB,
  PDFJS_RSS_LIMIT_KB,
  RSS_POLL_MS,
  ENGINE_MEMORY_BYTES,
  VALIDATE_TIMEOUT_MS,
  MAX_STREAM_BYTES,
  REPEATS,
  HARD_LIMIT_MS,
  BOMB_FLAG,
  type ManifestEntry,
  readPinned,
  isBomb,
  showAnswer,
  headerRule,
  type EngineRun,
  median,
  percentile,
  children,
  killChild,
  type CorpusFile,
} from './engines-common.ts';
import { bombProcessMain, type InProcessKind, makeEngines, runInProcess } from './engines-in-process.ts';
import { runPdfjs } from './engines-pdfjs.ts';

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
