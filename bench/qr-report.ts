/** The QR bench's output: per-file and per-set Markdown tables, the HTTP rows and the targets. */
import { fmtMs, fmtPair, p50, percentile } from './stats.ts';
import { type HttpRow, type Row, SETS } from './qr-cases.ts';

/** The one-page vector bill the first target names. */
const REFERENCE_VECTOR_BILL = 'generated/01_vector_qrr_a4.pdf';

export const median = (xs: number[]) => percentile(xs, 0.5);
const mean = (xs: number[]) => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);
const ratioText = (x: number) =>
  !Number.isFinite(x) ? '–' : x >= 100 ? x.toFixed(0) : x >= 0.1 ? x.toPrecision(2) : x.toPrecision(1);
const verdict = (ok: boolean | undefined) => (ok === undefined ? 'NOT MEASURED' : ok ? 'PASS' : 'FAIL');
const ourMedian = (r: Row) => (r.ours ? p50(r.ours.sample) : NaN);
const peerMedian = (r: Row) => (r.peer ? p50(r.peer.sample) : NaN);

export function printPerFile(rows: Row[], withPeer: boolean): void {
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

export function printSummary(rows: Row[], withPeer: boolean): void {
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

export function printHttp(http: HttpRow[]): void {
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

export function printTargets(rows: Row[], withPeer: boolean): void {
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
