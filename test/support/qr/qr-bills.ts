/**
 * QR-bills made in code for the extraction tests, with Web APIs only (and pure-JavaScript packages), so the same
 * documents are built in Node and inside workerd and no binary fixtures are needed.
 *
 * - `billCode(data)`: the QR code of swissqrbill 4.4.1 (`SwissQRCode` of `swissqrbill/pdf`: its validation, payload,
 *   ECI 26, error correction M, version 10 or more and Swiss cross), recorded from the drawing calls it makes on what it
 *   takes for a PDFKit document.
 * - `textCode(text)` / `spcCode(payload)`: any text (a URL, a broken or hand-written payload) through the QR encoder
 *   swissqrbill bundles (Nayuki's qrcodegen), the latter with the Swiss cross and ECI 26 as a bill generator would.
 * - `qrBillPdf(...)`: A4 pages with invoice text and codes placed in millimetres from the top left, each drawn as vector
 *   rectangles or embedded as an 8-bit DeviceGray image, or whole pages rasterised into one image (a scan look-alike).
 *
 * `pdfkit-bill.ts` has the complete swissqrbill + PDFKit payment part (Node only); `image-pdf.ts` wraps images (PNG,
 * JPEG, pixels) into PDFs.
 */
import { zlibSync } from 'fflate';
import { SwissQRCode } from 'swissqrbill/pdf';
import type { Data } from 'swissqrbill/types';
// Not in the package's exports map, hence the path; the same module SwissQRCode encodes with.
import { qrcodegen } from '../../../node_modules/swissqrbill/lib/esm/shared/qr-code-generator.js';
import { assemblePdf, concatBytes } from '../pdf/pdf-builder.ts';
import { PRINTED_PART_FONTS } from './printed-part.ts';

export type { Data as BillData } from 'swissqrbill/types';

/** Points per millimetre, and an A4 page in points. */
export const mm = (v: number): number => (v * 72) / 25.4;
export const A4 = { width: mm(210), height: mm(297) };

/** A filled rectangle of a code, in fractions of the code's side from its top left corner. */
export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
  white?: boolean;
}

type EccName = 'LOW' | 'MEDIUM' | 'QUARTILE' | 'HIGH';

/** A QR code as rectangles in a unit square (dark modules, then the Swiss cross if any, painted in order). */
export interface Code {
  modules: number;
  rects: Rect[];
}

/**
 * The code swissqrbill draws for `data`. SwissQRCode.attachTo calls save/translate/rect/fillColor/fill/restore on the
 * document it is given; this records the rectangles instead of drawing them.
 */
export function billCode(data: Data): Code {
  const side = mm(46);
  const rects: Rect[] = [];
  let pending: Rect[] = [];
  let white = false;
  const doc = {
    save: () => doc,
    restore: () => doc,
    translate: () => doc,
    rect(x: number, y: number, w: number, h: number) {
      pending.push({ x: x / side, y: y / side, w: w / side, h: h / side });
      return doc;
    },
    fillColor(color: string) {
      white = color === 'white';
      return doc;
    },
    fill() {
      rects.push(...pending.map((r) => (white ? { ...r, white } : r)));
      pending = [];
      return doc;
    },
  };
  // The type names PDFKit's document, of which only these methods are used.
  new SwissQRCode(data, 46).attachTo(doc as unknown as Parameters<SwissQRCode['attachTo']>[0], 0, 0);
  const module = rects[0]!.w;
  return { modules: Math.round(1 / module), rects };
}

/** Any text as a QR code (error correction M unless `ecc`, the smallest version that holds it), without a Swiss cross. */
export function textCode(text: string, { eci, ecc = 'MEDIUM' }: { eci?: number; ecc?: EccName } = {}): Code {
  const segments = qrcodegen.QrSegment.makeSegments(text);
  const qr = qrcodegen.QrCode.encodeSegments(
    eci === undefined ? segments : [qrcodegen.QrSegment.makeEci(eci), ...segments],
    qrcodegen.QrCode.Ecc[ecc],
    1,
    40,
    -1,
    false,
  );
  const unit = 1 / qr.size;
  const rects: Rect[] = [];
  for (let y = 0; y < qr.size; y++)
    for (let x = 0; x < qr.size; x++)
      if (qr.getModule(x, y)) rects.push({ x: x * unit, y: y * unit, w: unit, h: unit });
  return { modules: qr.size, rects };
}

/** A hand-written payload (valid or not) as a bill generator draws it: UTF-8 with ECI 26 and the Swiss cross. */
export function spcCode(payload: string, { ecc }: { ecc?: EccName } = {}): Code {
  const code = textCode(payload, { eci: 26, ecc });
  // IG QR-bill 6.4.2.1: a 7 mm cross (white border) in the middle of the 46 mm code, as swissqrbill draws it.
  const square = (side: number, white: boolean): Rect => ({
    x: 0.5 - side / 92,
    y: 0.5 - side / 92,
    w: side / 46,
    h: side / 46,
    white,
  });
  const bar = (w: number, h: number): Rect => ({ x: 0.5 - w / 92, y: 0.5 - h / 92, w: w / 46, h: h / 46, white: true });
  code.rects.push(square(7, true), square(6, false), bar(3.89, 1.17), bar(1.17, 3.89));
  return code;
}

/**
 * The IG's example bill (QR-IBAN, QR reference, CHF 1949.75, an ultimate debtor), the usual subject of these tests.
 * IBAN and reference have spaces, as people write them; swissqrbill removes them.
 */
export const SAMPLE_BILL: Data = {
  currency: 'CHF',
  amount: 1949.75,
  creditor: {
    account: 'CH44 3199 9123 0008 8901 2',
    name: 'Robert Schneider AG',
    address: 'Rue du Lac',
    buildingNumber: '1268',
    zip: '2501',
    city: 'Biel',
    country: 'CH',
  },
  debtor: {
    name: 'Pia-Maria Rutschmann-Schnyder',
    address: 'Grosse Marktgasse',
    buildingNumber: 28,
    zip: 9400,
    city: 'Rorschach',
    country: 'CH',
  },
  reference: '21 00000 00003 13947 14300 09017',
  message: 'Auftrag vom 15.06.2020',
};

/** A code on a page: top left corner `x`, `y` and side `size` in millimetres from the page's top left. */
export interface Placement {
  code: Code;
  x: number;
  y: number;
  size?: number;
  /** `vector` (default): filled rectangles; `raster`: an image of `dpi` (default 300) pixels per inch. */
  as?: 'vector' | 'raster';
  dpi?: number;
}

/** Where a bill generator puts the payment part's code: 67 mm from the left, 17 mm into the bottom 105 mm. */
export const PAYMENT_PART_CODE = { x: 67, y: 297 - 105 + 17 } as const;

export interface BillPage {
  codes?: Placement[];
  /** The invoice's title (Helvetica text at the top). */
  title?: string;
  /** The whole page as one image of this many dpi (a scan): text as grey bars, the codes as pixels. */
  raster?: number;
  /** Content stream operators printing the receipt and payment part (printed-part.ts), with fonts /F2 and /F3. */
  printed?: string;
}

const enc = new TextEncoder();
const n = (v: number): string => String(Math.round(v * 1000) / 1000);

/** An image XObject: its pixel size, its dictionary entries after /Width /Height, and its encoded data. */
export interface ImageStream {
  width: number;
  height: number;
  entries: string;
  data: Uint8Array;
}

/** The image XObject as a PDF object. */
export function imageObject({ width, height, entries, data }: ImageStream): Uint8Array {
  return concatBytes(
    enc.encode(
      `<< /Type /XObject /Subtype /Image /Width ${width} /Height ${height} ${entries} /Length ${data.length} >>\nstream\n`,
    ),
    data,
    enc.encode('\nendstream'),
  );
}

/** An A4 PDF of these pages: text, the payment part's separation line, and the codes. Deterministic. */
export function qrBillPdf(pages: BillPage[]): Uint8Array {
  // 1 catalog, 2 page tree, 3 font; then per page: page, content, images
  const objects: (string | Uint8Array)[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  const kids: number[] = [];
  for (const [index, page] of pages.entries()) {
    const pageNumber = objects.length + 1;
    kids.push(pageNumber);
    objects.push('', ''); // page and content, filled below
    const images: string[] = [];
    const addImage = (width: number, height: number, gray: Uint8Array): string => {
      const name = `/Im${images.length + 1}`;
      objects.push(
        imageObject({
          width,
          height,
          entries: '/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode',
          data: zlibSync(gray, { level: 6 }),
        }),
      );
      images.push(`${name} ${objects.length} 0 R`);
      return name;
    };
    const title = page.title ?? `Rechnung ${index + 1}`;
    let content: string;
    if (page.raster) {
      const { width, height, gray } = rasterPage(page, page.raster);
      content = `q ${n(A4.width)} 0 0 ${n(A4.height)} 0 0 cm ${addImage(width, height, gray)} Do Q\n`;
    } else {
      content = pageText(title) + (page.printed ?? '');
      for (const placed of page.codes ?? []) {
        const size = placed.size ?? 46;
        if (placed.as === 'raster') {
          const pixels = Math.round((size / 25.4) * (placed.dpi ?? 300));
          const gray = new Uint8Array(pixels * pixels).fill(255);
          paint(gray, pixels, placed.code, 0, 0, pixels);
          const name = addImage(pixels, pixels, gray);
          content += `q ${n(mm(size))} 0 0 ${n(mm(size))} ${n(mm(placed.x))} ${n(A4.height - mm(placed.y + size))} cm ${name} Do Q\n`;
        } else {
          content += vectorCode(placed.code, mm(placed.x), mm(placed.y), mm(size));
        }
      }
    }
    const fonts = page.printed
      ? ` /F2 ${objects.push(PRINTED_PART_FONTS[0])} 0 R /F3 ${objects.push(PRINTED_PART_FONTS[1])} 0 R`
      : '';
    const resources = `/Font << /F1 3 0 R${fonts} >>${images.length ? ` /XObject << ${images.join(' ')} >>` : ''}`;
    objects[pageNumber - 1] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${n(A4.width)} ${n(A4.height)}] /Resources << ${resources} >> /Contents ${pageNumber + 1} 0 R >>`;
    objects[pageNumber] = `<< /Length ${enc.encode(content).length} >>\nstream\n${content}\nendstream`;
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`;
  return assemblePdf({ objects });
}

/** Invoice lines at the top and the payment part's separation line 105 mm above the bottom. */
function pageText(title: string): string {
  let s = `BT /F1 16 Tf ${n(mm(20))} ${n(A4.height - mm(25))} Td (${title}) Tj ET\n`;
  for (let i = 1; i <= 8; i++) {
    s += `BT /F1 10 Tf ${n(mm(20))} ${n(A4.height - mm(40 + i * 6))} Td (Position ${i}: Gartenarbeit .......... CHF ${(i * 17.35).toFixed(2)}) Tj ET\n`;
  }
  s += `0.5 w 0 ${n(mm(105))} m ${n(A4.width)} ${n(mm(105))} l S ${n(mm(62))} 0 m ${n(mm(62))} ${n(mm(105))} l S\n`;
  s += `BT /F1 11 Tf ${n(mm(67))} ${n(mm(105 - 10))} Td (Zahlteil) Tj ET\n`;
  return s;
}

/** The code's rectangles in page space (y flipped), one fill per run of the same colour. */
function vectorCode(code: Code, x: number, y: number, side: number): string {
  let s = `q 1 0 0 -1 ${n(x)} ${n(A4.height - y)} cm\n`;
  let white: boolean | undefined;
  let run = '';
  const flush = () => {
    if (run) s += `${white ? '1' : '0'} g\n${run}f\n`;
    run = '';
  };
  for (const r of code.rects) {
    if ((r.white ?? false) !== white) {
      flush();
      white = r.white ?? false;
    }
    run += `${n(r.x * side)} ${n(r.y * side)} ${n(r.w * side)} ${n(r.h * side)} re\n`;
  }
  flush();
  return `${s}Q\n`;
}

/** Paints a code's rectangles into a grey image `stride` pixels wide, at (`left`, `top`) with a side of `side` pixels. */
function paint(gray: Uint8Array, stride: number, code: Code, left: number, top: number, side: number): void {
  for (const r of code.rects) {
    // Edges rounded, so neighbouring modules share their edge pixels exactly.
    const x0 = Math.round(left + r.x * side);
    const x1 = Math.round(left + (r.x + r.w) * side);
    const y0 = Math.round(top + r.y * side);
    const y1 = Math.round(top + (r.y + r.h) * side);
    const value = r.white ? 255 : 0;
    for (let y = y0; y < y1; y++) gray.fill(value, y * stride + x0, y * stride + x1);
  }
}

/** A page as a scanner would see it: white, title and invoice lines as grey bars, the codes as pixels. */
export function rasterPage(page: BillPage, dpi: number): { width: number; height: number; gray: Uint8Array } {
  const px = (millimetres: number) => Math.round((millimetres / 25.4) * dpi);
  const width = px(210);
  const height = px(297);
  const gray = new Uint8Array(width * height).fill(255);
  const bar = (x: number, y: number, w: number, h: number, value: number) => {
    for (let row = px(y); row < px(y + h); row++) gray.fill(value, row * width + px(x), row * width + px(x + w));
  };
  bar(20, 19, 70, 6, 60);
  for (let i = 1; i <= 8; i++) bar(20, 37 + i * 6, 110, 2.5, 110);
  bar(0, 297 - 105, 210, 0.2, 0);
  for (const placed of page.codes ?? [])
    paint(gray, width, placed.code, px(placed.x), px(placed.y), px(placed.size ?? 46));
  return { width, height, gray };
}

/**
 * The IG's example bill as payload lines (S addresses, a QR-IBAN and a QR reference, version 0200, ASCII only, no
 * optional lines): line n of a payload is IG_EXAMPLE_LINES[n - 1], numbered as the IG numbers them.
 */
export const IG_EXAMPLE_LINES: readonly string[] = [
  'SPC',
  '0200',
  '1',
  'CH4431999123000889012',
  'S',
  'Robert Schneider AG',
  'Rue du Lac',
  '1268',
  '2501',
  'Biel',
  'CH',
  '',
  '',
  '',
  '',
  '',
  '',
  '',
  '1949.75',
  'CHF',
  'S',
  'Pia-Maria Rutschmann-Schnyder',
  'Grosse Marktgasse',
  '28',
  '9400',
  'Rorschach',
  'CH',
  'QRR',
  '210000000003139471430009017',
  'Order dated 18.06.2020',
  'EPD',
];
