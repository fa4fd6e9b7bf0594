/**
 * Child process of `bench/engines.ts`: answers, with pdf.js (unpdf 1.7.0 = pdf.js 5.6), what the validate endpoint
 * reports for one file at a time. The parent bounds each file by time and memory and kills this process when a file
 * exceeds them, so nothing here guards against bombs. Started as `node --max-old-space-size=512 --import tsx <this>`.
 *
 * Messages in: { path, repeats } (the file, then how many more timed runs after the first).
 * Messages out: 'ready' once pdf.js is loaded and warm; per file { kind: 'first', answer, ms, hwmKB } after the first
 * run, then { kind: 'repeats', ms } when repeats > 0.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { getDocumentProxy } from 'unpdf';
import { simplePdf } from '../test/support/pdf/pdf-builder.ts';

export type PdfjsAnswer =
  | { outcome: 'ok'; numPages: number; version: string | undefined; attachments: number }
  | { outcome: 'error'; name: string; message: string };

export type ChildRequest = { path: string; repeats: number };
export type ChildReply =
  | { kind: 'ready' }
  | { kind: 'first'; answer: PdfjsAnswer; ms: number; hwmKB: number }
  | { kind: 'repeats'; ms: number[] };

/** One pass as a pdf.js-based service would make it: open, page count, version (getMetadata), attachments. */
async function answer(bytes: Uint8Array): Promise<{ answer: PdfjsAnswer; ms: number }> {
  const copy = bytes.slice(); // pdf.js detaches the buffer it is given
  const started = performance.now();
  let doc: Awaited<ReturnType<typeof getDocumentProxy>> | undefined;
  try {
    doc = await getDocumentProxy(copy, { verbosity: 0 });
    const numPages = doc.numPages;
    const meta = await doc.getMetadata();
    const version = (meta.info as { PDFFormatVersion?: string } | undefined)?.PDFFormatVersion;
    const attachments = (await doc.getAttachments()) as Record<string, unknown> | Map<string, unknown> | null;
    const count =
      attachments === null ? 0 : attachments instanceof Map ? attachments.size : Object.keys(attachments).length;
    return { answer: { outcome: 'ok', numPages, version, attachments: count }, ms: performance.now() - started };
  } catch (e) {
    const err = e as { name?: string; message?: string };
    return {
      answer: { outcome: 'error', name: String(err?.name ?? 'Error'), message: String(err?.message ?? e) },
      ms: performance.now() - started,
    };
  } finally {
    await doc?.destroy().catch(() => {});
  }
}

function peakRssKB(): number {
  const m = /VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) : NaN;
}

/** Resets VmHWM to the current RSS (Linux >= 4.0), so the peak reported is this file's. */
function resetPeakRss(): void {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    /* not Linux or not permitted: the peak then includes earlier files */
  }
}

const send = (reply: ChildReply) => process.send!(reply);

process.on('message', (req: ChildRequest) => {
  void (async () => {
    const bytes = new Uint8Array(readFileSync(req.path));
    resetPeakRss();
    const first = await answer(bytes);
    send({ kind: 'first', answer: first.answer, ms: first.ms, hwmKB: peakRssKB() });
    if (req.repeats <= 0) return;
    const ms: number[] = [];
    for (let i = 0; i < req.repeats; i++) ms.push((await answer(bytes)).ms);
    send({ kind: 'repeats', ms });
  })();
});
process.on('disconnect', () => process.exit(0));

// Load pdf.js and run it on a small PDF before taking files, so the first file is not charged for the import.
const warm = simplePdf({ pages: 1 });
for (let i = 0; i < 3; i++) await answer(warm);
send({ kind: 'ready' });
