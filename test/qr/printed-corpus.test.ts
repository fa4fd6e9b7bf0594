/**
 * The held-out check of the printed comparison: every untampered bill of the QR corpus (../shared/corpus/qr: the
 * generated set and the external ERP/library bills) must answer without `printed-differs`. A difference here is a
 * false alarm that would stop a genuine payment. Skips without ../shared.
 */
import { beforeAll, expect, it } from 'vitest';
import type { QrBillWarning } from '../../src/qr/warnings.ts';
import { describeShared, readShared, readSharedJson } from '../support/corpus.ts';
import type { ExternalPdf } from '../support/qr/qr-corpus.ts';
import { type ScanEngines, scanEngines } from '../support/qr/scan-engines.ts';

describeShared('printed payment part on the untampered corpus', () => {
  let engines: ScanEngines;
  beforeAll(async () => {
    engines = await scanEngines();
  });

  it('has no printed-differs on any bill, and compares every bill that prints its payment part as text', async () => {
    const generated = readSharedJson<{ files: { file: string; expectedStatus: number }[] }>('corpus/qr/manifest.json')
      .files.filter((f) => f.expectedStatus === 200)
      .map((f) => f.file);
    const external = readSharedJson<{ files: (ExternalPdf | { kind: 'image' })[] }>('corpus/qr/external-manifest.json')
      .files.filter((f): f is ExternalPdf => f.kind === 'pdf' && f.expectedStatus === 200)
      .map((f) => f.file);
    const results: { file: string; warnings: QrBillWarning[] }[] = [];
    for (const file of [...generated, ...external]) {
      const outcome = await engines.scan(readShared('corpus/qr', file));
      if (outcome.status !== 'found') throw new Error(`${file}: ${outcome.status}`);
      results.push({ file, warnings: outcome.warnings });
    }
    const differing = results.filter((r) => r.warnings.some((w) => w.code === 'printed-differs'));
    const notChecked = results.filter((r) => r.warnings.some((w) => w.code === 'printed-not-checked'));
    console.log(
      `printed check: ${results.length} bills (${generated.length} generated, ${external.length} external), ` +
        `${results.length - notChecked.length} compared, ${notChecked.length} not checked, ${differing.length} differing`,
    );
    for (const r of results) console.log(r.file, JSON.stringify(r.warnings.map((w) => [w.code, w.fields, w.detail])));
    expect(differing.map((r) => [r.file, r.warnings])).toEqual([]);
  });
});
