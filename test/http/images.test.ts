/**
 * Photos and scans sent to extract as images (image/jpeg, image/png, image/tiff, or as a form's `file` part): each is
 * read as the one-page document whose page is the image, so it answers as the same page inside a PDF does (the
 * degraded families of degraded-bills.ts, whose PDFs draw the image across an A4 page: the files carry that
 * resolution). Damaged and truncated files are 400 `invalid-image`; validate answers 415 for images.
 */
import { crc32 } from '../../src/image/png.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { a4Dpi, g4Tiff, grayPng, grayTiff, withJfifDensity, withPhys } from '../support/qr/bill-images.ts';
import {
  BILLS,
  fax,
  faxRaster,
  g4Stream,
  lowResJpegImage,
  officeScanImage,
  phonePhotoImage,
  type PhotoOptions,
} from '../support/qr/degraded-bills.ts';
import { threshold, type GrayImage } from '../support/qr/gray-image.ts';
import { encodeJpeg } from '../support/qr/jpeg-encoder.ts';
import { postJson, problem, testApp, type TestApp } from '../support/http/app.ts';
import { toBase64 } from '../support/pdf/pdf-builder.ts';
import { PAYMENT_PART_CODE, billCode, rasterPage, type ImageStream } from '../support/qr/qr-bills.ts';
import { imageOnlyPdf } from '../support/qr/image-pdf.ts';
import { zlibSync } from 'fflate';

const EXTRACT = '/api/v1/documents/extract-swiss-qr-code';
const VALIDATE = '/api/v1/documents/validate';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});

/** Status, media type and body, the random traceId aside. */
async function answer(res: Response) {
  const text = await res.text();
  const body =
    res.headers.get('content-type') === 'application/problem+json' ? { ...JSON.parse(text), traceId: 0 } : text;
  return { status: res.status, body };
}

const asPdf = (pdf: Uint8Array, references = '["r"]') =>
  postJson(t.app, EXTRACT, `{"references":${references},"base64Pdf":"${toBase64(pdf)}"}`);

const asImage = (bytes: Uint8Array, type: string, path = EXTRACT, references = '["r"]') =>
  t.app.request(`${path}?references=${encodeURIComponent(references)}`, {
    method: 'POST',
    headers: { 'content-type': type },
    body: bytes as BodyInit,
  });

function asFormPart(bytes: Uint8Array, type: string, path = EXTRACT) {
  const form = new FormData();
  form.append('file', new Blob([bytes as BlobPart], { type }), 'upload');
  form.append('references', '["r"]');
  return t.app.request(path, { method: 'POST', body: form });
}

/** A JPEG family's image: the JPEG file with its A4 resolution, and the family's PDF. */
const jpegCase = (image: ImageStream) => ({
  file: withJfifDensity(image.data, a4Dpi(image.width)),
  type: 'image/jpeg',
  pdf: imageOnlyPdf(image),
});

/** A grey page as a PNG with its A4 resolution, and the same pixels in a PDF (Flate). */
const pngCase = (image: GrayImage) => ({
  file: grayPng(image, a4Dpi(image.width)),
  type: 'image/png',
  pdf: imageOnlyPdf({
    width: image.width,
    height: image.height,
    entries: '/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode',
    data: zlibSync(image.data, { level: 1 }),
  }),
});

/** The fax cut to black and white as its G4 stream is, as an 8-bit grey PNG; its PDF is fax() itself. */
function faxCase(seed: number) {
  const raster = faxRaster({ data: BILLS[seed % BILLS.length]!, seed });
  const { black } = threshold(raster, 150);
  const image = { width: raster.width, height: raster.height, data: Uint8Array.from(black, (b) => (b ? 0 : 255)) };
  return {
    file: grayPng(image, a4Dpi(image.width)),
    type: 'image/png',
    pdf: fax({ data: BILLS[seed % BILLS.length]!, seed }),
  };
}

const twoBills = (size: number) => ({
  codes: [
    { code: billCode(BILLS[1]!), x: 140, y: 20, size },
    { code: billCode(BILLS[0]!), ...PAYMENT_PART_CODE },
  ],
});
const photo = (options: PhotoOptions) => jpegCase(phonePhotoImage(options));
const page = (dpi: number, codes = twoBills(46)) => {
  const { width, height, gray } = rasterPage(codes, dpi);
  return { width, height, data: gray };
};

describe('images of the degraded families answer as the same pages inside PDFs', () => {
  it.each([
    ['an office scan (JPEG, 200 dpi)', () => jpegCase(officeScanImage({ dpi: 200, seed: 2 }))],
    [
      'an office scan (JPEG, 150 dpi, another bill)',
      () => jpegCase(officeScanImage({ data: BILLS[2]!, dpi: 150, seed: 3 })),
    ],
    ['a low-resolution scan (JPEG, 75 dpi)', () => jpegCase(lowResJpegImage({ dpi: 75, seed: 4 }))],
    ['a 12-megapixel phone photo (JPEG)', () => photo({ megapixels: 12, seed: 5 })],
    ['a 3-megapixel phone photo (JPEG)', () => photo({ megapixels: 3, seed: 6 })],
    ['two bills in an office scan (JPEG)', () => jpegCase(officeScanImage({ page: twoBills(30), dpi: 200, seed: 11 }))],
    ['two bills in a phone photo (JPEG)', () => photo({ page: twoBills(46), megapixels: 8, seed: 12 })],
    ['a fax (PNG, black and white)', () => faxCase(1)],
    ['a fax of another bill (PNG)', () => faxCase(2)],
    ['two bills on a clean page (PNG, 150 dpi)', () => pngCase(page(150))],
  ])(
    '%s',
    async (_, make) => {
      const { file, type, pdf } = make();
      const expected = await answer(await asPdf(pdf));
      expect(await answer(await asImage(file, type))).toEqual(expected);
      expect(await answer(await asImage(file, type, `${EXTRACT}/file`))).toEqual(expected);
      expect(await answer(await asFormPart(file, type))).toEqual(expected);
      expect(await answer(await asFormPart(file, type, `${EXTRACT}/form`))).toEqual(expected);
    },
    120_000,
  );

  it('finds the bill in each (the answers above are bills, not the same 404)', async () => {
    const { file } = jpegCase(officeScanImage({ dpi: 200, seed: 2 }));
    const res = await asImage(file, 'image/jpeg');
    expect(res.status).toBe(200);
    expect(JSON.parse(await res.text())).toMatchObject({
      references: ['r'],
      qrCodeData: { iban: 'CH4431999123000889012' },
      // an image has no text layer: its printed payment part cannot be compared with the code
      warnings: [{ code: 'printed-not-checked', fields: [] }],
    });
    const fax1 = faxCase(1);
    expect((await asImage(fax1.file, fax1.type)).status).toBe(200);
  });

  it('a fax as a CCITT G4 TIFF (as fax software writes it) answers as the fax PDF with the same G4 data', async () => {
    for (const seed of [1, 3]) {
      const stream = g4Stream(faxRaster({ seed }));
      const expected = await answer(await asPdf(imageOnlyPdf(stream)));
      expect(expected.status).toBe(200);
      const tiff = g4Tiff(stream.width, stream.height, stream.data, a4Dpi(stream.width));
      expect(await answer(await asImage(tiff, 'image/tiff'))).toEqual(expected);
    }
  });

  it('a TIFF answers as the PNG of the same pixels', async () => {
    const raster = faxRaster({ seed: 1 });
    const expected = await answer(await asImage(grayPng(raster, a4Dpi(raster.width)), 'image/png'));
    expect(expected.status).toBe(200);
    expect(await answer(await asImage(grayTiff(raster, a4Dpi(raster.width)), 'image/tiff'))).toEqual(expected);
  });
});

describe('what an image file says about its page', () => {
  /** Two bills, the upper one first in reading order, stored turned a quarter (EXIF orientation 8 puts it upright). */
  it('applies the EXIF orientation: the upper bill of an upright page is answered, not the one first in the stored rows', async () => {
    const upright = page(100, twoBills(46));
    const stored = turnedForOrientation8(upright);
    const jpeg = (image: GrayImage) => withJfifDensity(encodeJpeg(image, 85), 100);
    const plain = await answer(await asImage(jpeg(upright), 'image/jpeg'));
    expect(plain.status).toBe(200);
    expect(JSON.parse(plain.body as string).qrCodeData.iban).toBe('CH9300762011623852957'); // BILLS[1], the upper one
    expect(await answer(await asImage(withExifOrientation(jpeg(stored), 8), 'image/jpeg'))).toEqual(plain);
    // Without the tag, the stored rows' order rules: another bill comes first.
    expect(await answer(await asImage(jpeg(stored), 'image/jpeg'))).not.toEqual(plain);
  });

  it('takes 300 dpi when the file says nothing, and reads PNG pHYs', async () => {
    const image = page(150);
    const at300 = grayPng(image);
    const declared300 = withPhys(grayPng(image), 300);
    expect(await answer(await asImage(at300, 'image/png'))).toEqual(
      await answer(await asImage(declared300, 'image/png')),
    );
  });
});

describe('bad images', () => {
  const good = () => withJfifDensity(officeScanImage({ dpi: 100, seed: 1 }).data, 100);
  const png = () => grayPng(page(75), 75);

  it.each([
    ['a JPEG cut in half', () => good().subarray(0, good().length >> 1), 'image/jpeg'],
    ['a JPEG cut inside its headers', () => good().subarray(0, 30), 'image/jpeg'],
    ['a JPEG without its end-of-image marker', () => good().subarray(0, good().length - 2), 'image/jpeg'],
    ['a PDF sent as image/jpeg', () => new TextEncoder().encode('%PDF-1.7\n%%EOF\n'), 'image/jpeg'],
    ['an empty image/png body', () => new Uint8Array(0), 'image/png'],
    ['a PNG cut short', () => png().subarray(0, png().length - 20), 'image/png'],
    ['a PNG with a damaged IDAT byte', () => damaged(png(), 80), 'image/png'],
    ['text sent as image/png', () => new TextEncoder().encode('not an image at all'), 'image/png'],
    ['a TIFF cut short', () => grayTiff(page(75), 75).subarray(0, 5000), 'image/tiff'],
    ['a TIFF header alone', () => Uint8Array.of(0x49, 0x49, 0x2a, 0, 8, 0, 0, 0), 'image/tiff'],
  ])('%s: 400 invalid-image, in the body and as a form part', async (_, make, type) => {
    const body = await problem(await asImage(make(), type), 400, 'invalid-image');
    expect(body.detail).toMatch(/\S/);
    await problem(await asFormPart(make(), type), 400, 'invalid-image');
  });

  it('an image of more pixels than the service decodes: 400 pdf-too-complex', async () => {
    const huge = png();
    const view = new DataView(huge.buffer, huge.byteOffset);
    view.setUint32(16, 60_000);
    view.setUint32(20, 60_000);
    view.setUint32(29, crc32(huge.subarray(12, 29)));
    await problem(await asImage(huge, 'image/png'), 400, 'pdf-too-complex');
  });

  it('validate answers 415 for images, in the body and as a form part; the problem says where images go', async () => {
    const body = await problem(await asImage(good(), 'image/jpeg', VALIDATE), 415, 'unsupported-media-type');
    expect(body.detail).toContain('extract-swiss-qr-code');
    await problem(await asImage(good(), 'image/jpeg', `${VALIDATE}/file`), 415, 'unsupported-media-type');
    await problem(await asFormPart(good(), 'image/png', VALIDATE), 415, 'unsupported-media-type');
    await problem(await asFormPart(good(), 'image/tiff', `${VALIDATE}/form`), 415, 'unsupported-media-type');
  });
});

function damaged(bytes: Uint8Array, at: number): Uint8Array {
  const out = bytes.slice();
  out[at] = out[at]! ^ 0x55;
  return out;
}

/** The stored pixels of an upright image that EXIF orientation 8 (turn 90° anticlockwise to show) shows upright. */
function turnedForOrientation8(upright: GrayImage): GrayImage {
  const [w, h] = [upright.width, upright.height];
  const data = new Uint8Array(w * h);
  // stored is h wide and w tall; stored (sx, sy) shows at upright (sy, h - 1 - sx)
  for (let sy = 0; sy < w; sy++)
    for (let sx = 0; sx < h; sx++) data[sy * h + sx] = upright.data[(h - 1 - sx) * w + sy]!;
  return { width: h, height: w, data };
}

/** The JPEG with an EXIF APP1 segment holding Orientation after its JFIF header. */
function withExifOrientation(jpeg: Uint8Array, orientation: number): Uint8Array {
  const tiff = [0x49, 0x49, 0x2a, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, orientation, 0, 0, 0, 0, 0, 0, 0];
  const payload = [...new TextEncoder().encode('Exif\0\0'), ...tiff];
  const segment = [0xff, 0xe1, (payload.length + 2) >> 8, (payload.length + 2) & 0xff, ...payload];
  const app0End = 4 + ((jpeg[4]! << 8) | jpeg[5]!);
  return Uint8Array.from([...jpeg.subarray(0, app0End), ...segment, ...jpeg.subarray(app0End)]);
}
