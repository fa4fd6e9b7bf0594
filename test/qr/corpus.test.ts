/**
 * POST /api/v1/documents/extract-swiss-qr-code over the shared QR-bill corpus (../shared/corpus/qr, README.md there):
 * the generated PDFs against the answers their manifest states, the external PDFs against the payloads reference
 * decoders agreed on, and the external images (PNG, JPEG) wrapped into one-page PDFs.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { prepareZXingModule, readBarcodes, type ReadResult } from 'zxing-wasm/reader';
import { readQrBill } from '../../src/qr/bill.ts';
import { engineModules, postJson, testApp, type TestApp } from '../support/http/app.ts';
import { describeShared, readShared, readSharedJson, sharedExists } from '../support/corpus.ts';
import {
  expectNotFound,
  qrCorpusPdfSuites,
  referencesFor,
  type ExternalPdf,
  type ExtractRequest,
  expectBillWarnings,
} from '../support/qr/qr-corpus.ts';
import { toBase64 } from '../support/pdf/pdf-builder.ts';
import { decodePng, imagePdf, jpegSize } from '../support/qr/image-pdf.ts';

const EXTRACT = '/api/v1/documents/extract-swiss-qr-code';

interface ExternalImage {
  file: string;
  kind: 'image';
  decodedPayloads: string[];
  spcCount: number;
  /** true: the payload equals the `.txt` file beside the image (sprain's own ground truth). */
  matchesTxt?: boolean | null;
}

describeShared('extract: QR-bill corpus', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
    // The images are read directly too. zxing-wasm keeps one module per isolate: hand it the compiled module, or it
    // would fetch its .wasm from a CDN.
    const { zxing } = await engineModules();
    await prepareZXingModule({
      overrides: {
        instantiateWasm: (
          imports: WebAssembly.Imports,
          done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
        ) => {
          void WebAssembly.instantiate(zxing, imports).then((instance) => done(instance, zxing));
          return {};
        },
      },
      fireImmediately: true,
    });
  });

  const extract: ExtractRequest = async (pdf, references) => {
    const res = await postJson(t.app, EXTRACT, { references, base64Pdf: toBase64(pdf) });
    return {
      status: res.status,
      contentType: res.headers.get('content-type'),
      body: (await res.json()) as Record<string, unknown>,
    };
  };

  qrCorpusPdfSuites(() => extract);

  describe('external images, read directly and wrapped into a one-page PDF', () => {
    const files = readSharedJson<{ files: (ExternalPdf | ExternalImage)[] }>(
      'corpus/qr/external-manifest.json',
    ).files.filter((f): f is ExternalImage => f.kind === 'image');

    it('lists 56 images', () => {
      expect(files).toHaveLength(56);
      expect(files.filter((f) => f.spcCount === 2).map((f) => f.file)).toEqual([
        'external/smartive/double.jpeg',
        'external/smartive/double.jpg',
        'external/smartive/double.png',
      ]);
    });

    it.each(files)('$file', async (entry) => {
      const bytes = readShared('corpus/qr', entry.file);
      const png = entry.file.endsWith('.png');
      // PNGs are decoded here (composited over white: some are transparent RGBA); JPEGs go to zxing and into the PDF as they are.
      const pixels = png ? decodePng(bytes) : undefined;
      const image = pixels ? (pixels as unknown as ImageData) : bytes;
      // zxing's quick mode reads all but a few; tryHarder (slower) only when it finds fewer codes than the manifest lists.
      let results = await readBarcodes(image, { formats: ['QRCode'], tryHarder: false, maxNumberOfSymbols: 8 });
      if (results.filter((r) => r.isValid).length < entry.spcCount)
        results = await readBarcodes(image, { formats: ['QRCode'], tryHarder: true, maxNumberOfSymbols: 8 });
      const codes = results.filter((r) => r.isValid).sort(readingOrder(pixels?.height ?? jpegSize(bytes).height));
      const spc = codes.filter((r) => r.text.startsWith('SPC'));
      expect(spc.length).toBe(entry.spcCount);
      expect(spc.map((r) => r.text).sort()).toEqual([...entry.decodedPayloads].sort());
      if (entry.matchesTxt) {
        const txt = entry.file.replace(/\.png$/, '.txt');
        expect(sharedExists('corpus/qr', txt)).toBe(true);
        expect(spc[0]!.text).toBe(new TextDecoder().decode(readShared('corpus/qr', txt)));
      }

      const references = referencesFor(entry.file);
      const answer = await extract(pixels ? imagePdf(pixels) : imagePdf({ jpeg: bytes }), references);
      const first = codes.map((r) => readQrBill(r.text)).find((reading) => reading.ok);
      if (first?.ok) {
        expect(answer.status).toBe(200);
        expect(answer.body).toStrictEqual({ references, qrCodeData: first.bill, warnings: expect.any(Array) });
        expectBillWarnings(answer.body.warnings, first.bill);
      } else {
        expectNotFound(answer, codes.length === 0 ? [] : undefined);
      }
    });
  });
});

/** The service's reading order: top to bottom, codes whose tops lie within 2% of the page height left to right. */
function readingOrder(pageHeight: number) {
  const corner = (r: ReadResult) => {
    const p = [r.position.topLeft, r.position.topRight, r.position.bottomLeft, r.position.bottomRight];
    return { x: Math.min(...p.map((q) => q.x)), y: Math.min(...p.map((q) => q.y)) };
  };
  return (a: ReadResult, b: ReadResult) => {
    const [ca, cb] = [corner(a), corner(b)];
    return Math.abs(ca.y - cb.y) < 0.02 * pageHeight ? ca.x - cb.x : ca.y - cb.y;
  };
}
