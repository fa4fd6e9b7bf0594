/**
 * Images wrapped into PDFs, as a scanner or a phone app makes them: a page showing one image across the width of A4
 * (`imageOnlyPdf`, `imagePdf` for a JPEG or decoded pixels), with what that needs from the image files themselves
 * (`decodePng`, `jpegSize`). Web APIs and pure-JavaScript packages only, like qr-bills.ts, whose image XObject it uses.
 */
import { unzlibSync, zlibSync } from 'fflate';
import { assemblePdf, concatBytes } from '../pdf/pdf-builder.ts';
import { A4, imageObject, type ImageStream } from './qr-bills.ts';

const n = (v: number): string => String(Math.round(v * 1000) / 1000);

/** Pixels as zxing-wasm and ImageData have them: RGBA, 8 bits a channel, rows top to bottom. */
export interface Pixels {
  width: number;
  height: number;
  data: Uint8ClampedArray;
}

/**
 * Decodes a PNG of 8 bits a channel, not interlaced (grey, grey with alpha, RGB or RGBA), composited over white: some
 * renderers leave the background transparent, which a reader would otherwise see as black.
 */
export function decodePng(png: Uint8Array): Pixels {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Uint8Array[] = [];
  for (let at = 8; at < png.length; ) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8));
    const data = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      const [depth, colorType, , , interlace] = data.subarray(8, 13);
      channels = ({ 0: 1, 2: 3, 4: 2, 6: 4 } as Record<number, number>)[colorType!] ?? 0;
      if (depth !== 8 || channels === 0 || interlace !== 0)
        throw new Error(`PNG of bit depth ${depth}, colour type ${colorType}, interlace ${interlace}: not supported`);
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    at += 12 + length;
  }
  const raw = unzlibSync(concatBytes(...idat));
  const stride = width * channels;
  const rows = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = y * stride;
    const up = out - stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? rows[out + x - channels]! : 0;
      const b = y > 0 ? rows[up + x]! : 0;
      let predictor: number;
      if (filter === 0) predictor = 0;
      else if (filter === 1) predictor = a;
      else if (filter === 2) predictor = b;
      else if (filter === 3) predictor = (a + b) >> 1;
      else if (filter === 4) {
        const c = x >= channels && y > 0 ? rows[up + x - channels]! : 0;
        const pa = Math.abs(b - c);
        const pb = Math.abs(a - c);
        const pc = Math.abs(a + b - 2 * c);
        predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      } else throw new Error(`PNG filter type ${filter}`);
      rows[out + x] = (line[x]! + predictor) & 0xff;
    }
  }
  const rgba = new Uint8ClampedArray(width * height * 4);
  const colour = channels >= 3;
  const alpha = channels === 2 || channels === 4;
  for (let i = 0, s = 0, d = 0; i < width * height; i++, s += channels, d += 4) {
    const opacity = alpha ? rows[s + channels - 1]! / 255 : 1;
    const white = 255 * (1 - opacity);
    rgba[d] = rows[s]! * opacity + white;
    rgba[d + 1] = rows[colour ? s + 1 : s]! * opacity + white;
    rgba[d + 2] = rows[colour ? s + 2 : s]! * opacity + white;
    rgba[d + 3] = 255;
  }
  return { width, height, data: rgba };
}

/** Width, height and colour components of a JPEG, from its start-of-frame segment. */
export function jpegSize(jpeg: Uint8Array): { width: number; height: number; components: number } {
  for (let at = 2; at + 9 < jpeg.length; ) {
    if (jpeg[at] !== 0xff) throw new Error(`JPEG marker expected at byte ${at}`);
    const marker = jpeg[at + 1]!;
    const length = (jpeg[at + 2]! << 8) | jpeg[at + 3]!;
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return {
        height: (jpeg[at + 5]! << 8) | jpeg[at + 6]!,
        width: (jpeg[at + 7]! << 8) | jpeg[at + 8]!,
        components: jpeg[at + 9]!,
      };
    }
    at += 2 + length;
  }
  throw new Error('JPEG without a start-of-frame segment');
}

/**
 * A one-page PDF showing one image scaled to the width of A4 (210 mm; the page as tall as the image's aspect asks):
 * a JPEG as it is (DCTDecode), decoded pixels as a Flate-compressed grey image.
 */
export function imagePdf(image: { jpeg: Uint8Array } | Pixels): Uint8Array {
  if ('jpeg' in image) {
    const { width, height, components } = jpegSize(image.jpeg);
    const space = components === 1 ? '/DeviceGray' : components === 4 ? '/DeviceCMYK' : '/DeviceRGB';
    return imageOnlyPdf({
      width,
      height,
      entries: `/ColorSpace ${space} /BitsPerComponent 8 /Filter /DCTDecode`,
      data: image.jpeg,
    });
  }
  const { width, height } = image;
  // Bills are black on white: grey (BT.601 luma) is all a reader needs, in a third of the bytes.
  const gray = new Uint8Array(width * height);
  const rgba = image.data;
  for (let i = 0, s = 0; i < gray.length; i++, s += 4)
    gray[i] = (299 * rgba[s]! + 587 * rgba[s + 1]! + 114 * rgba[s + 2]! + 500) / 1000;
  return imageOnlyPdf({
    width,
    height,
    entries: '/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode',
    data: zlibSync(gray, { level: 1 }),
  });
}

/** One page, as wide as A4, as tall as the image's aspect asks, showing the image over the whole page. */
export function imageOnlyPdf(image: ImageStream): Uint8Array {
  const height = (A4.width * image.height) / image.width;
  const content = `q ${n(A4.width)} 0 0 ${n(height)} 0 0 cm /Im1 Do Q\n`;
  return assemblePdf({
    objects: [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${n(A4.width)} ${n(height)}] /Resources << /XObject << /Im1 5 0 R >> >> /Contents 4 0 R >>`,
      `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
      imageObject(image),
    ],
  });
}
