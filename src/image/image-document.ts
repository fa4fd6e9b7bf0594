import { jpegImage } from './jpeg.ts';
import type { ImageMedia } from './media.ts';
import { InvalidImage } from './metadata.ts';
import { DEFAULT_DPI, onePagePdf, type PdfImage } from './one-page-pdf.ts';
import type { ImageMetadata } from './metadata.ts';
import { pngImage } from './png.ts';
import { TooManyPixels, tiffImage } from './tiff.ts';

/**
 * The most pixels an image may have: a 600 dpi A4 scan has 35 million, a phone's photo 12 to 50. Decoded in JavaScript
 * (TIFF, PNG with transparency), such an image takes 4 bytes a pixel; JPEGs and plain PNGs are decoded by PDFium within
 * PDF_ENGINE_MEMORY_MB, and are held to the same number so that every format has one limit.
 */
export const MAX_IMAGE_PIXELS = 60_000_000;

export type ImageDocument =
  | { ok: true; pdf: Uint8Array }
  | { ok: false; problem: 'invalid-image' | 'pdf-too-complex'; detail: string };

/**
 * An image (a photo or a scan of a bill) as the one-page PDF whose page is that image (one-page-pdf.ts): its size from
 * the resolution the file gives (JFIF, EXIF, pHYs, TIFF tags), 300 dpi when none, turned as its orientation says.
 */
export function imageDocument(bytes: Uint8Array, media: ImageMedia): ImageDocument {
  let read: { image: PdfImage } & ImageMetadata;
  try {
    read = media === 'jpeg' ? jpegImage(bytes) : media === 'png' ? pngImage(bytes) : tiffImage(bytes, MAX_IMAGE_PIXELS);
    if (read.image.width * read.image.height > MAX_IMAGE_PIXELS)
      throw new TooManyPixels(read.image.width * read.image.height);
  } catch (e) {
    if (e instanceof InvalidImage) return { ok: false, problem: 'invalid-image', detail: e.message };
    if (e instanceof TooManyPixels)
      return {
        ok: false,
        problem: 'pdf-too-complex',
        detail: `The image exceeds the processing limits: ${e.message}, more than ${MAX_IMAGE_PIXELS / 1e6}.`,
      };
    throw e;
  }
  const pdf = onePagePdf(read.image, read.resolution ?? { x: DEFAULT_DPI, y: DEFAULT_DPI }, read.orientation ?? 1);
  return { ok: true, pdf };
}
