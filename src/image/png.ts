import { decode } from 'fast-png';
import { type ImageMetadata, InvalidImage, plausible } from './metadata.ts';
import { concatBytes } from '../bytes.ts';
import { type PdfImage, pixelImage } from './one-page-pdf.ts';

/**
 * A PNG without transparency and without interlacing (a scanner's) goes into the PDF as it is: its IDAT stream is a
 * zlib stream of PNG-filtered rows, which FlateDecode with PNG predictors reads unchanged. Every chunk's CRC is checked
 * and IEND must be there, so a damaged or truncated upload is refused. Any other PNG (an alpha channel, a tRNS colour
 * key, Adam7) is decoded by fast-png and drawn over white, as a page shows it.
 */
export function pngImage(bytes: Uint8Array): { image: PdfImage } & ImageMetadata {
  const chunks = readChunks(bytes);
  const header = chunks.find((c) => c.type === 'IHDR')?.data;
  if (header?.length !== 13) throw new InvalidImage('The PNG has no valid IHDR chunk.');
  const view = new DataView(header.buffer, header.byteOffset, 13);
  const [width, height, depth, colorType, interlace] = [
    view.getUint32(0),
    view.getUint32(4),
    header[8]!,
    header[9]!,
    header[12]!,
  ];
  if (width === 0 || height === 0) throw new InvalidImage('The PNG has no size.');
  const phys = chunks.find((c) => c.type === 'pHYs')?.data;
  // pHYs in pixels per metre when its unit is 1; unit 0 is an aspect ratio only.
  const resolution =
    phys && phys.length === 9 && phys[8] === 1
      ? plausible({
          x: new DataView(phys.buffer, phys.byteOffset).getUint32(0) * 0.0254,
          y: new DataView(phys.buffer, phys.byteOffset).getUint32(4) * 0.0254,
        })
      : undefined;
  const palette = chunks.find((c) => c.type === 'PLTE')?.data;
  const plain = [0, 2, 3].includes(colorType) && interlace === 0 && !chunks.some((c) => c.type === 'tRNS');
  if (plain) {
    const colors = colorType === 2 ? 3 : 1;
    if (colorType === 3 && (!palette || palette.length % 3 !== 0 || palette.length === 0))
      throw new InvalidImage('The PNG has a palette colour type but no valid palette.');
    const colorSpace =
      colorType === 0
        ? '/DeviceGray'
        : colorType === 2
          ? '/DeviceRGB'
          : `[/Indexed /DeviceRGB ${palette!.length / 3 - 1} <${hex(palette!)}>]`;
    return {
      image: {
        width,
        height,
        entries: `/ColorSpace ${colorSpace} /BitsPerComponent ${depth} /Filter /FlateDecode /DecodeParms << /Predictor 15 /Colors ${colors} /BitsPerComponent ${depth} /Columns ${width} >>`,
        data: concatBytes(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data)),
      },
      resolution,
    };
  }
  return { image: decodedPng(bytes), resolution };
}

/** Any PNG, decoded and drawn over white: grey or RGB, 8 bits (pixelImage). */
function decodedPng(bytes: Uint8Array): PdfImage {
  let png;
  try {
    png = decode(bytes, { checkCrc: true });
  } catch (e) {
    throw new InvalidImage(`The PNG cannot be decoded: ${(e as Error).message}`);
  }
  const { width, height, depth, palette, transparency } = png;
  let channels = png.channels;
  let data = png.data;
  if (palette) {
    // Indexed: each index becomes its palette colour, its tRNS alpha applied below.
    const out = new Uint8Array(width * height * 4);
    const bits = depth;
    const rowBytes = Math.ceil((width * bits) / 8);
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) {
        const bit = x * bits;
        const byte = data[y * rowBytes + (bit >> 3)]!;
        const index = (byte >> (8 - bits - (bit & 7))) & ((1 << bits) - 1);
        const color = palette[index] ?? [0, 0, 0];
        out.set([color[0]!, color[1]!, color[2]!, color[3] ?? 255], (y * width + x) * 4);
      }
    data = out;
    channels = 4;
  }
  const max = depth === 16 ? 65535 : depth < 8 && !palette ? (1 << depth) - 1 : 255;
  const sample = (i: number): number => {
    if (depth < 8 && !palette) {
      const rowBytes = Math.ceil((width * depth * channels) / 8);
      const [y, x] = [Math.floor(i / (width * channels)), i % (width * channels)];
      const bit = x * depth;
      return (data[y * rowBytes + (bit >> 3)]! >> (8 - depth - (bit & 7))) & max;
    }
    return data[i]!;
  };
  const colour = channels >= 3;
  const out = new Uint8Array(width * height * (colour ? 3 : 1));
  const hasAlpha = channels === 2 || channels === 4;
  const key = !palette && transparency && transparency.length > 0 ? transparency : undefined;
  for (let p = 0; p < width * height; p++) {
    const base = p * channels;
    const values = [];
    for (let c = 0; c < (colour ? 3 : 1); c++) values.push(sample(base + c));
    let alpha = hasAlpha ? sample(base + channels - 1) / max : 1;
    if (key && values.every((v, c) => v === key[c])) alpha = 0;
    values.forEach((v, c) => {
      out[p * values.length + c] = Math.round(255 - alpha * (255 - (v * 255) / max));
    });
  }
  return pixelImage(width, height, colour, out);
}

interface Chunk {
  type: string;
  data: Uint8Array;
}

function readChunks(bytes: Uint8Array): Chunk[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const chunks: Chunk[] = [];
  for (let at = 8; ; ) {
    if (at + 12 > bytes.length) throw new InvalidImage('The PNG is truncated: it ends before its IEND chunk.');
    const length = view.getUint32(at);
    if (at + 12 + length > bytes.length) throw new InvalidImage('The PNG is truncated inside a chunk.');
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    if (crc32(bytes.subarray(at + 4, at + 8 + length)) !== view.getUint32(at + 8 + length))
      throw new InvalidImage(`The PNG is damaged: the CRC of a ${type} chunk does not match.`);
    if (type === 'IEND') return chunks;
    chunks.push({ type, data: bytes.subarray(at + 8, at + 8 + length) });
    at += 12 + length;
  }
}

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** The CRC of PNG chunks (ISO 3309), as zlib computes it; exported for the tests that write PNGs. */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
