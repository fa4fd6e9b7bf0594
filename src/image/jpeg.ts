import type { PdfImage, Resolution } from './one-page-pdf.ts';
import { type ImageMetadata, InvalidImage, readExif } from './metadata.ts';

/** Start-of-frame markers (baseline, extended, progressive, lossless; Huffman and arithmetic): the frame's size. */
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

/**
 * A JPEG goes into the PDF as it is (DCTDecode): its headers are read for the size, the colour components, the
 * resolution (JFIF density, or EXIF's) and the EXIF orientation, and it must reach its end-of-image marker, so a
 * truncated upload is refused here rather than read as half a photo.
 */
export function jpegImage(bytes: Uint8Array): { image: PdfImage } & ImageMetadata {
  let at = 2;
  let frame: { width: number; height: number; components: number } | undefined;
  let jfif: Resolution | undefined;
  let exif: Partial<ImageMetadata> = {};
  let adobe = false;
  for (;;) {
    while (bytes[at] === 0xff && bytes[at + 1] === 0xff) at++; // fill bytes
    if (at + 4 > bytes.length || bytes[at] !== 0xff) throw new InvalidImage('The JPEG ends inside its headers.');
    const marker = bytes[at + 1]!;
    const length = (bytes[at + 2]! << 8) | bytes[at + 3]!;
    const segment = bytes.subarray(at + 4, at + 2 + length);
    if (length < 2 || at + 2 + length > bytes.length) throw new InvalidImage('The JPEG ends inside its headers.');
    if (SOF.has(marker)) {
      if (segment.length < 6) throw new InvalidImage('The JPEG frame header is too short.');
      frame = {
        height: (segment[1]! << 8) | segment[2]!,
        width: (segment[3]! << 8) | segment[4]!,
        components: segment[5]!,
      };
    } else if (marker === 0xe0 && ascii(segment, 0, 5) === 'JFIF\0' && segment.length >= 12) {
      const [unit, x, y] = [segment[7]!, (segment[8]! << 8) | segment[9]!, (segment[10]! << 8) | segment[11]!];
      if (unit === 1 || unit === 2) jfif = { x: unit === 2 ? x * 2.54 : x, y: unit === 2 ? y * 2.54 : y };
    } else if (marker === 0xe1 && ascii(segment, 0, 6) === 'Exif\0\0') {
      exif = readExif(segment.subarray(6));
    } else if (marker === 0xee && ascii(segment, 0, 5) === 'Adobe') {
      adobe = true;
    } else if (marker === 0xda) {
      break;
    }
    at += 2 + length;
  }
  if (!frame) throw new InvalidImage('The JPEG has no frame header before its scan.');
  if (frame.width === 0 || frame.height === 0 || ![1, 3, 4].includes(frame.components))
    throw new InvalidImage('The JPEG frame has no size or an unsupported number of colour components.');
  if (lastIndexOfEoi(bytes) < at) throw new InvalidImage('The JPEG is truncated: it has no end-of-image marker.');
  const colorSpace = frame.components === 1 ? '/DeviceGray' : frame.components === 3 ? '/DeviceRGB' : '/DeviceCMYK';
  // Adobe's CMYK JPEGs store inverted values; PDF readers undo that with a Decode array.
  const decode = frame.components === 4 && adobe ? ' /Decode [1 0 1 0 1 0 1 0]' : '';
  return {
    image: {
      width: frame.width,
      height: frame.height,
      entries: `/ColorSpace ${colorSpace} /BitsPerComponent 8${decode} /Filter /DCTDecode`,
      data: bytes,
    },
    resolution: exif.resolution ?? jfif,
    orientation: exif.orientation,
  };
}

/** The last FF D9 (some cameras append data after it). */
function lastIndexOfEoi(bytes: Uint8Array): number {
  for (let i = bytes.length - 2; i >= 0; i--) if (bytes[i] === 0xff && bytes[i + 1] === 0xd9) return i;
  return -1;
}

function ascii(bytes: Uint8Array, from: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(from, from + length));
}
