import type { WrappedPdfiumModule } from '@embedpdf/pdfium';
import type { GrayRaster } from './port.ts';

// fpdfview.h bitmap formats
export const FPDFBitmap_Gray = 1;
const FPDFBitmap_BGR = 2;
const FPDFBitmap_BGRA = 4;

const heapOf = (m: WrappedPdfiumModule) => (m.pdfium as unknown as { HEAPU8: Uint8Array }).HEAPU8;

/**
 * A rectangle of a PDFium bitmap in grey (BT.601 luma at full resolution, green when reduced; transparency flattened
 * onto white), each `factor` × `factor` square averaged into one pixel. Read straight from the WebAssembly heap: a
 * 12-megapixel photo is never copied whole.
 */
export function grayOfBitmap(
  m: WrappedPdfiumModule,
  bitmap: number,
  rect: { x: number; y: number; w: number; h: number },
  factor: number,
): GrayRaster {
  const format = m.FPDFBitmap_GetFormat(bitmap);
  const stride = m.FPDFBitmap_GetStride(bitmap);
  const bpp = format === FPDFBitmap_Gray ? 1 : format === FPDFBitmap_BGR ? 3 : 4;
  const alpha = format === FPDFBitmap_BGRA;
  const buffer = m.FPDFBitmap_GetBuffer(bitmap);
  const heap = heapOf(m);
  const width = Math.max(0, Math.floor(rect.w / factor));
  const height = Math.max(0, Math.floor(rect.h / factor));
  const data = new Uint8Array(width * height);
  if (factor === 1 && !alpha) {
    // the common case (renders, crops at full resolution), without the averaging
    for (let y = 0; y < height; y++) {
      let p = buffer + (rect.y + y) * stride + rect.x * bpp;
      const row = y * width;
      if (bpp === 1) data.set(heap.subarray(p, p + width), row);
      else
        for (let x = 0; x < width; x++, p += bpp)
          data[row + x] = (heap[p]! * 29 + heap[p + 1]! * 150 + heap[p + 2]! * 77) >> 8;
    }
    return { width, height, data };
  }
  const sums = new Uint32Array(width);
  // From a factor of 2 up every other row and column of a square stands for it (at 2, its top left pixel), at a
  // quarter of the reads: the reduced image only locates codes, and photos are soft enough not to alias.
  const step = factor >= 2 ? 2 : 1;
  const samples = Math.ceil(factor / step);
  const area = samples * samples;
  for (let oy = 0; oy < height; oy++) {
    sums.fill(0);
    for (let dy = 0; dy < factor; dy += step) {
      let p = buffer + (rect.y + oy * factor + dy) * stride + rect.x * bpp;
      if (bpp === 1) {
        for (let ox = 0; ox < width; ox++, p += factor - samples * step) {
          let s = 0;
          for (let dx = 0; dx < factor; dx += step, p += step) s += heap[p]!;
          sums[ox]! += s;
        }
      } else {
        for (let ox = 0; ox < width; ox++, p += (factor - samples * step) * bpp) {
          let s = 0;
          for (let dx = 0; dx < factor; dx += step, p += step * bpp) {
            // Reduced images only locate codes: green alone (B, G, R order) carries most of the detail of a black and
            // white page, at a third of the reads.
            const green = heap[p + 1]!;
            s += alpha ? (green * heap[p + 3]! + 255 * (255 - heap[p + 3]!)) / 255 : green;
          }
          sums[ox]! += s;
        }
      }
    }
    const row = oy * width;
    for (let ox = 0; ox < width; ox++) data[row + ox] = sums[ox]! / area;
  }
  return { width, height, data };
}
