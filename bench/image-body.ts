import { imageDocument } from '../src/image/image-document.ts';
import { a4Dpi, withJfifDensity } from '../test/support/qr/bill-images.ts';
import { phonePhotoImage } from '../test/support/qr/degraded-bills.ts';
import { imageOnlyPdf } from '../test/support/qr/image-pdf.ts';
import { killAllChildren, startServer } from './server.ts';
import { fmtMs, measure, p50, percentile, type Sample } from './stats.ts';
import { isMainModule } from './main-module.ts';

const PATH = '/api/v1/documents/extract-swiss-qr-code';
const ROUNDS = 15;

export async function runImageBodyBench(): Promise<void> {
  console.log('');
  console.log('# Extract: a 12 MP photo as an image/jpeg body against the same JPEG in a PDF');
  console.log('');
  const photo = phonePhotoImage({ megapixels: 12, seed: 1 });
  const jpeg = withJfifDensity(photo.data, a4Dpi(photo.width));
  const pdf = imageOnlyPdf(photo);
  const json = new TextEncoder().encode(`{"references":[],"base64Pdf":"${Buffer.from(pdf).toString('base64')}"}`);
  const server = await startServer();
  const answers = new Map<string, string>();
  const post = (name: string, type: string, body: Uint8Array) => async () => {
    const res = await fetch(`${server.url}${PATH}`, {
      method: 'POST',
      headers: { 'content-type': type },
      body: body as BodyInit,
      signal: AbortSignal.timeout(60_000),
    });
    answers.set(name, `${res.status} ${await res.text()}`);
  };
  const forms = [
    ['image/jpeg body (the photo itself)', 'image/jpeg', jpeg],
    ['application/pdf body (the photo in a PDF)', 'application/pdf', pdf],
    ['application/json, base64Pdf (the photo in a PDF)', 'application/json', json],
  ] as const;
  const rows: [string, number, Sample][] = forms.map(([name, , body]) => [name, body.length, { ms: [] }]);
  try {
    // Interleaved, one request of each form a round, so that the machine's moods fall on all three alike.
    for (const [name, type, body] of forms) await post(name, type, body)();
    for (let round = 0; round < ROUNDS; round++) {
      process.stderr.write(`image-body: round ${round + 1} of ${ROUNDS}\n`);
      for (const [i, [name, type, body]] of forms.entries()) {
        const t = performance.now();
        await post(name, type, body)();
        rows[i]![2].ms.push(performance.now() - t);
      }
    }
  } finally {
    await server.stop();
  }
  const conversion = await measure(async () => imageDocument(jpeg, 'jpeg'), { targetMs: 1000 });
  const same = new Set([...answers.values()]).size === 1;
  const [status] = [...answers.values()][0]!.split(' ');
  const peer = p50(rows[1]![2]);
  console.log(
    `- ${photo.width}×${photo.height} colour JPEG, ${(jpeg.length / 1e6).toFixed(2)} MB; the PDF draws it across an A4 page (${a4Dpi(photo.width).toFixed(0)} dpi, which the JPEG's JFIF header says too); server as \`npm start\` runs it, one request at a time, the three forms interleaved (${ROUNDS} rounds after one untimed round)`,
  );
  console.log(`- answers: ${same ? `the same for all three forms (HTTP ${status})` : 'DIFFERENT: see the rows'}`);
  console.log('');
  console.log('| body | bytes | p50 | p90 | max | p50 vs the PDF body |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const [name, bytes, sample] of rows)
    console.log(
      `| ${name} | ${bytes} | ${fmtMs(p50(sample))} | ${fmtMs(percentile(sample.ms, 0.9))} | ${fmtMs(Math.max(...sample.ms))} | ${(p50(sample) / peer).toFixed(2)}× |`,
    );
  console.log('');
  console.log(
    `- in process, the JPEG's headers read and its one-page PDF written (src/image/): p50 ${fmtMs(p50(conversion))} (${conversion.ms.length} runs)`,
  );
}

if (isMainModule(import.meta)) {
  try {
    await runImageBodyBench();
  } finally {
    killAllChildren();
  }
}
