import UTIF from 'utif2';
import { type ImageMetadata, InvalidImage, plausible } from './metadata.ts';
import { type Orientation, type PdfImage, pixelImage } from './one-page-pdf.ts';

/**
 * A G4 fax page goes into the PDF as it is (g4Strip). Any other TIFF is decoded (UTIF: uncompressed, PackBits, LZW,
 * Deflate, JPEG, CCITT G3 and G4, the compressions scanners write) and its pixels go into the PDF in grey, or in RGB when any pixel has colour (pixelImage). A multi-page TIFF is a multi-page document: its last page is the one read, as the
 * last page of a PDF is. Strips or tiles that lie past the end of the file are a truncated upload: refused.
 */
export function tiffImage(bytes: Uint8Array, maxPixels: number): { image: PdfImage } & ImageMetadata {
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  let ifds: UTIF.IFD[];
  try {
    ifds = UTIF.decode(buffer);
  } catch (e) {
    throw new InvalidImage(`The TIFF cannot be read: ${(e as Error).message}`);
  }
  const page = ifds.filter((ifd) => tag(ifd, 't256') && tag(ifd, 't257')).at(-1);
  if (!page) throw new InvalidImage('The TIFF holds no image.');
  const [width, height] = [tag(page, 't256')!, tag(page, 't257')!];
  if (width * height > maxPixels) throw new TooManyPixels(width * height);
  const offsets = list(page, 't273') ?? list(page, 't324') ?? [];
  const counts = list(page, 't279') ?? list(page, 't325') ?? [];
  if (offsets.length === 0 || offsets.length !== counts.length)
    throw new InvalidImage('The TIFF page has no image data (strip or tile offsets).');
  if (offsets.some((offset, i) => offset + counts[i]! > bytes.length))
    throw new InvalidImage('The TIFF is truncated: its image data runs past the end of the file.');
  const metadata = metadataOf(page);
  const g4 = g4Strip(page, bytes, offsets, counts);
  if (g4) return { image: g4, ...metadata };
  let rgba: Uint8Array;
  try {
    UTIF.decodeImage(buffer, page);
    rgba = UTIF.toRGBA8(page);
  } catch (e) {
    throw new InvalidImage(`The TIFF image cannot be decoded: ${(e as Error).message}`);
  }
  if (rgba.length < width * height * 4) throw new InvalidImage('The TIFF image data is shorter than its size.');
  let colour = false;
  for (let i = 0; i < width * height * 4 && !colour; i += 4)
    colour = rgba[i] !== rgba[i + 1] || rgba[i] !== rgba[i + 2];
  const channels = colour ? 3 : 1;
  const pixels = new Uint8Array(width * height * channels);
  for (let p = 0, q = 0; p < width * height; p++, q += 4) {
    const alpha = rgba[q + 3]!;
    for (let c = 0; c < channels; c++) {
      const v = rgba[q + c]!;
      // Drawn over white where the TIFF has an alpha channel.
      pixels[p * channels + c] = alpha === 255 ? v : (255 - ((255 - v) * alpha + 127) / 255) | 0;
    }
  }
  return { image: pixelImage(width, height, colour, pixels), ...metadata };
}

/**
 * A bilevel page of one strip of CCITT T.6 (G4) data, white as zero, as fax software and document scanners write it,
 * goes into the PDF as it is (CCITTFaxDecode, as the G4 scans inside PDFs are): no decoding here, PDFium decodes it.
 */
function g4Strip(page: UTIF.IFD, bytes: Uint8Array, offsets: number[], counts: number[]): PdfImage | undefined {
  const plain =
    tag(page, 't259') === 4 &&
    (tag(page, 't258') ?? 1) === 1 &&
    tag(page, 't262') === 0 &&
    (tag(page, 't266') ?? 1) === 1 &&
    ((tag(page, 't293') ?? 0) & 2) === 0 && // T6Options: no uncompressed mode
    offsets.length === 1;
  if (!plain) return undefined;
  const [width, height] = [tag(page, 't256')!, tag(page, 't257')!];
  return {
    width,
    height,
    entries: `/ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /CCITTFaxDecode /DecodeParms << /K -1 /Columns ${width} /Rows ${height} /BlackIs1 false >>`,
    data: bytes.subarray(offsets[0]!, offsets[0]! + counts[0]!),
  };
}

function metadataOf(page: UTIF.IFD): ImageMetadata {
  const unit = tag(page, 't296') ?? 2;
  const perInch = unit === 3 ? 2.54 : unit === 2 ? 1 : undefined;
  const [x, y] = [rational(page, 't282'), rational(page, 't283')];
  const orientation = tag(page, 't274');
  return {
    resolution: perInch && x && y ? plausible({ x: x * perInch, y: y * perInch }) : undefined,
    orientation: orientation && orientation >= 1 && orientation <= 8 ? (orientation as Orientation) : undefined,
  };
}

/** An image with more pixels than the service decodes: `pdf-too-complex`, as a PDF with such an image would be. */
export class TooManyPixels extends Error {
  override name = 'TooManyPixels';
  constructor(readonly pixels: number) {
    super(`the image has ${Math.round(pixels / 1e6)} megapixels`);
  }
}

function list(ifd: UTIF.IFD, name: string): number[] | undefined {
  const value = ifd[name];
  return Array.isArray(value) ? (value as number[]) : undefined;
}

function tag(ifd: UTIF.IFD, name: string): number | undefined {
  const value = list(ifd, name)?.[0];
  return typeof value === 'number' ? value : undefined;
}

/** A RATIONAL tag as UTIF gives it: [[numerator, denominator]]. */
function rational(ifd: UTIF.IFD, name: string): number | undefined {
  const value = ifd[name] as unknown;
  const pair = Array.isArray(value) ? (value[0] as unknown) : undefined;
  if (Array.isArray(pair) && typeof pair[0] === 'number' && typeof pair[1] === 'number' && pair[1] !== 0)
    return pair[0] / pair[1];
  return typeof pair === 'number' ? pair : undefined;
}
