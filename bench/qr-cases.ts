/**
 * The QR bench's cases: the PDFs of the shared QR corpus (generated/ from manifest.json, the `kind: 'pdf'` files of
 * external-manifest.json) with the bills and payloads a correct answer holds, and the rows the bench fills for each.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readQrBill, type QrBill } from '../src/qr/bill.ts';
import type { Sample } from './stats.ts';

const ROOT = resolve(import.meta.dirname, '..');
/** As test/support/corpus.ts finds it: SHARED_DIR, else ../shared beside the repository. */
export const QR_CORPUS_DIR = join(process.env.SHARED_DIR ?? resolve(ROOT, '../shared'), 'corpus/qr');

type SetName = 'generated vector' | 'generated raster / scan' | 'external';
export const SETS: SetName[] = ['generated vector', 'generated raster / scan', 'external'];

export interface QrCase {
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

export interface Row {
  c: QrCase;
  ours?: OurRow;
  peer?: PeerRow;
  note?: string;
}

export const log = (s: string) => process.stderr.write(`${s}\n`);
export const normalize = (s: string) => s.replace(/\r\n/g, '\n');

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

export function loadCases(): { cases: QrCase[]; problems: string[] } {
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

export interface HttpRow {
  file: string;
  sample?: Sample;
  answer: string;
  note?: string;
}
