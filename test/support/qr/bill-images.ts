/**
 * Image files of bills, for extract's image bodies (JPEG, PNG, TIFF): the degraded families' own images
 * (degraded-bills.ts) written as files that carry their resolution, so each is the same page as the family's PDF
 * (imageOnlyPdf draws the image across an A4 page's width).
 */
import { crc32 } from '../../../src/image/png.ts';
import { encode as encodePng } from 'fast-png';
import type { GrayImage } from './gray-image.ts';

/** The resolution of an image drawn across an A4 page's width (imageOnlyPdf), in dots per inch. */
export const a4Dpi = (width: number): number => width / (210 / 25.4);

/** The encoder's JPEG with its JFIF header's density set to `dpi` (units: dots per inch). */
export function withJfifDensity(jpeg: Uint8Array, dpi: number): Uint8Array {
  if (jpeg[2] !== 0xff || jpeg[3] !== 0xe0 || String.fromCharCode(...jpeg.subarray(6, 10)) !== 'JFIF')
    throw new Error('not a JFIF file');
  const out = jpeg.slice();
  const density = Math.round(dpi);
  out.set([1, density >> 8, density & 0xff, density >> 8, density & 0xff], 13);
  return out;
}

/** A grey image as an 8-bit grey PNG, with a pHYs chunk of `dpi` when given. */
export function grayPng(image: GrayImage, dpi?: number): Uint8Array {
  const png = encodePng({ width: image.width, height: image.height, data: image.data, channels: 1, depth: 8 });
  return dpi === undefined ? png : withPhys(png, dpi);
}

/** A PNG with a pHYs chunk (pixels per metre) after its IHDR. */
export function withPhys(png: Uint8Array, dpi: number): Uint8Array {
  const ppm = Math.round(dpi / 0.0254);
  const chunk = new Uint8Array(21);
  const view = new DataView(chunk.buffer);
  view.setUint32(0, 9);
  chunk.set([0x70, 0x48, 0x59, 0x73], 4); // pHYs
  view.setUint32(8, ppm);
  view.setUint32(12, ppm);
  chunk[16] = 1;
  view.setUint32(17, crc32(chunk.subarray(4, 17)));
  const ihdrEnd = 8 + 25;
  return Uint8Array.from([...png.subarray(0, ihdrEnd), ...chunk, ...png.subarray(ihdrEnd)]);
}

/** A grey image as an uncompressed 8-bit grey TIFF (decoded by UTIF in the service) with its resolution in dpi. */
export const grayTiff = (image: GrayImage, dpi: number): Uint8Array =>
  tiff(image.width, image.height, { bits: 8, compression: 1, photometric: 1 }, image.data, dpi);

/**
 * A bilevel image as a TIFF of one strip of CCITT G4 (T.6) data, as fax software and document scanners write it:
 * `g4` is the T.6 stream of ccitt-g4.ts.
 */
export const g4Tiff = (width: number, height: number, g4: Uint8Array, dpi: number): Uint8Array =>
  tiff(width, height, { bits: 1, compression: 4, photometric: 0 }, g4, dpi);

/** A one-strip, one-sample TIFF, written by hand (UTIF's encoder writes uncompressed RGBA only). */
function tiff(
  width: number,
  height: number,
  { bits, compression, photometric }: { bits: number; compression: number; photometric: number },
  data: Uint8Array,
  dpi: number,
): Uint8Array {
  const entries: [tag: number, type: number, value: number][] = [
    [256, 4, width],
    [257, 4, height],
    [258, 3, bits], // BitsPerSample
    [259, 3, compression],
    [262, 3, photometric],
    [273, 4, 0], // StripOffsets, set below
    [277, 3, 1], // SamplesPerPixel
    [278, 4, height], // RowsPerStrip
    [279, 4, data.length], // StripByteCounts
    [282, 5, 0], // XResolution, set below
    [283, 5, 0], // YResolution
    [296, 3, 2], // inches
  ];
  const ifdAt = 8;
  const rationalAt = ifdAt + 2 + entries.length * 12 + 4;
  const dataAt = rationalAt + 8;
  const out = new Uint8Array(dataAt + data.length);
  const view = new DataView(out.buffer);
  out.set([0x49, 0x49, 0x2a, 0]);
  view.setUint32(4, ifdAt, true);
  view.setUint16(ifdAt, entries.length, true);
  entries.forEach(([tag, type, value], i) => {
    const at = ifdAt + 2 + i * 12;
    view.setUint16(at, tag, true);
    view.setUint16(at + 2, type, true);
    view.setUint32(at + 4, 1, true);
    const stored = tag === 273 ? dataAt : type === 5 ? rationalAt : value;
    if (type === 3) view.setUint16(at + 8, stored, true);
    else view.setUint32(at + 8, stored, true);
  });
  view.setUint32(rationalAt, Math.round(dpi), true);
  view.setUint32(rationalAt + 4, 1, true);
  out.set(data, dataAt);
  return out;
}
