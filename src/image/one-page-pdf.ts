import { zlibSync } from 'fflate';
import { concatBytes } from '../bytes.ts';

/**
 * The one-page PDF an image becomes (image-document.ts): a page the size of the image at its resolution, drawing the
 * image and nothing else, turned as its EXIF orientation says. The scan then reads it exactly as it reads a scan or a
 * photo inside a PDF (the page is one image: read on its own pixels, never rendered), so an image gets the answers,
 * reasons and warnings the same image inside a PDF would, by construction.
 */

/** An image XObject: its dictionary entries besides /Type, /Subtype, /Width, /Height and /Length, and its stream. */
export interface PdfImage {
  width: number;
  height: number;
  /** Extra dictionary entries, as PDF source (`/ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode`). */
  entries: string;
  data: Uint8Array;
}

/**
 * Decoded pixels (8-bit grey or RGB, rows top to bottom) as an image XObject. Stored as they are up to
 * MAX_UNCOMPRESSED_BYTES (the PDF is read at once and dropped: compressing a 300 dpi A4 page with zlib's fastest
 * level took 0.56 s here, most of a TIFF's time), Flate-compressed above, where holding the page twice would cost more.
 */
export function pixelImage(width: number, height: number, colour: boolean, pixels: Uint8Array): PdfImage {
  const space = `/ColorSpace ${colour ? '/DeviceRGB' : '/DeviceGray'} /BitsPerComponent 8`;
  if (pixels.length <= MAX_UNCOMPRESSED_BYTES) return { width, height, entries: space, data: pixels };
  return { width, height, entries: `${space} /Filter /FlateDecode`, data: zlibSync(pixels, { level: 1 }) };
}

const MAX_UNCOMPRESSED_BYTES = 32 << 20;

/** How the stored pixels are shown, as EXIF and TIFF tag 274 number it: 1 as stored, 6 turned 90° clockwise, ... */
export type Orientation = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

/** Dots per inch along the stored image's rows (`x`) and columns (`y`). */
export interface Resolution {
  x: number;
  y: number;
}

/** When a file says nothing of its resolution: a scanner's usual setting (docs/contract/http.md). */
export const DEFAULT_DPI = 300;

/** Where the stored image's (u right, v down, 0..1) lands on the shown picture, for each orientation. */
const SHOWN: Record<Orientation, (u: number, v: number) => [number, number]> = {
  1: (u, v) => [u, v],
  2: (u, v) => [1 - u, v],
  3: (u, v) => [1 - u, 1 - v],
  4: (u, v) => [u, 1 - v],
  5: (u, v) => [v, u],
  6: (u, v) => [1 - v, u],
  7: (u, v) => [1 - v, 1 - u],
  8: (u, v) => [v, 1 - u],
};

export function onePagePdf(image: PdfImage, resolution: Resolution, orientation: Orientation): Uint8Array {
  const stored = { w: (image.width * 72) / resolution.x, h: (image.height * 72) / resolution.y };
  const turned = orientation >= 5;
  const page = turned ? { w: stored.h, h: stored.w } : stored;
  // PDF draws an image on the unit square, its first row at the top (t = 1); the matrix takes that square to the page.
  const toPage = (s: number, t: number) => {
    const [x, y] = SHOWN[orientation](s, 1 - t);
    return [x * page.w, (1 - y) * page.h] as const;
  };
  const [e, f] = toPage(0, 0);
  const [ax, ay] = toPage(1, 0);
  const [cx, cy] = toPage(0, 1);
  const matrix = [ax - e, ay - f, cx - e, cy - f, e, f].map(number).join(' ');
  const content = `q ${matrix} cm /Im0 Do Q`;

  const parts: (string | Uint8Array)[] = [];
  const offsets: number[] = [];
  let length = 0;
  const write = (part: string | Uint8Array) => {
    const bytes = typeof part === 'string' ? LATIN1(part) : part;
    parts.push(bytes);
    length += bytes.length;
  };
  const object = (body: string, stream?: Uint8Array) => {
    offsets.push(length);
    write(`${offsets.length} 0 obj\n${body}`);
    if (stream) {
      write('\nstream\n');
      write(stream);
      write('\nendstream');
    }
    write('\nendobj\n');
  };
  write('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n');
  object('<< /Type /Catalog /Pages 2 0 R >>');
  object('<< /Type /Pages /Kids [3 0 R] /Count 1 >>');
  object(
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${number(page.w)} ${number(page.h)}] /Resources << /XObject << /Im0 5 0 R >> >> /Contents 4 0 R >>`,
  );
  object(`<< /Length ${content.length} >>`, LATIN1(content));
  object(
    `<< /Type /XObject /Subtype /Image /Width ${image.width} /Height ${image.height} ${image.entries} /Length ${image.data.length} >>`,
    image.data,
  );
  const xref = length;
  write(`xref\n0 ${offsets.length + 1}\n0000000000 65535 f \n`);
  write(offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join(''));
  write(`trailer\n<< /Size ${offsets.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);

  return concatBytes(parts as Uint8Array[]);
}

function number(n: number): string {
  return String(Math.round(n * 10_000) / 10_000);
}

function LATIN1(text: string): Uint8Array {
  return Uint8Array.from(text, (ch) => ch.charCodeAt(0));
}
