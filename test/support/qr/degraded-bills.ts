/**
 * Degraded QR-bill PDFs made in code, for the extraction tests and the bench (`npm run bench` prints a table per
 * family): office scans (skewed, blurred, noisy JPEG with a toner streak), faxes (CCITT G4, bilevel, low resolution),
 * low-resolution JPEG scans, phone photos (perspective, rotation, uneven light and a shadow, blur, colour JPEG of 3 to
 * 12 megapixels), and pages with two bills. Web APIs only; every input is determined by its parameters and seed.
 */
import { generateQRData } from '../../../node_modules/swissqrbill/lib/esm/shared/qr-code.js';
import { readQrBill, type QrBill } from '../../../src/qr/bill.ts';
import { a4Dpi, withJfifDensity } from './bill-images.ts';
import { encodeG4 } from './ccitt-g4.ts';
import { blur, light, seededRandom, shrink, threshold, warp, type GrayImage, type Point } from './gray-image.ts';
import { encodeJpeg } from './jpeg-encoder.ts';
import { assemblePdf } from '../pdf/pdf-builder.ts';
import {
  A4,
  PAYMENT_PART_CODE,
  SAMPLE_BILL,
  billCode,
  imageObject,
  rasterPage,
  type BillData,
  type BillPage,
  type ImageStream,
} from './qr-bills.ts';
import { imageOnlyPdf } from './image-pdf.ts';

/** Bills of different shapes (QR reference, creditor reference, none; EUR; long texts), so code versions vary. */
export const BILLS: BillData[] = [
  SAMPLE_BILL,
  {
    currency: 'EUR',
    amount: 310.5,
    creditor: {
      account: 'CH9300762011623852957',
      name: 'Muster Krankenkasse',
      address: 'Musterstrasse',
      buildingNumber: '12',
      zip: '8000',
      city: 'Zürich',
      country: 'CH',
    },
    reference: 'RF18 5390 0754 7034',
  },
  {
    currency: 'CHF',
    amount: 50,
    creditor: {
      account: 'CH9300762011623852957',
      name: 'Verein für Gartenfreunde Oberwil',
      address: 'Hauptstrasse',
      buildingNumber: '7',
      zip: '4104',
      city: 'Oberwil',
      country: 'CH',
    },
    debtor: {
      name: 'Simon Muster',
      address: 'Musterweg',
      buildingNumber: '3',
      zip: '4000',
      city: 'Basel',
      country: 'CH',
    },
    message: 'Jahresbeitrag 2026, Mitglied 10473',
    additionalInformation: '//S1/10/10473/11/260115/30/106017086',
  },
];

/** The bill a reader must find for `data`: swissqrbill's payload, read by the service's own payload rules. */
export function expectedBill(data: BillData): QrBill {
  const reading = readQrBill(generateQRData(data));
  if (!reading.ok) throw new Error(`swissqrbill wrote an invalid payload: ${reading.reason}`);
  return reading.bill;
}

// ---- PDFs of one image --------------------------------------------------------------------------------------------

const n = (v: number): string => String(Math.round(v * 1000) / 1000);

export const jpegStream = (
  image: GrayImage | { width: number; height: number; r: Uint8Array; g: Uint8Array; b: Uint8Array },
  quality: number,
): ImageStream => ({
  width: image.width,
  height: image.height,
  entries: `/ColorSpace ${'data' in image ? '/DeviceGray' : '/DeviceRGB'} /BitsPerComponent 8 /Filter /DCTDecode`,
  data: encodeJpeg(image, quality),
});

export function g4Stream(image: GrayImage): ImageStream {
  const bilevel = threshold(image, 150);
  return {
    width: image.width,
    height: image.height,
    entries: `/ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /CCITTFaxDecode /DecodeParms << /K -1 /Columns ${image.width} /Rows ${image.height} >>`,
    data: encodeG4(bilevel),
  };
}

/**
 * One A4 page written as `strips` horizontal bands of a grey image, each its own JPEG image object, as some scanners
 * write a page: a code across two bands is whole only on the rendered page.
 */
export function stripsPdf(image: GrayImage, strips: number, quality = 75): Uint8Array {
  const rows = Math.ceil(image.height / strips);
  const objects: (string | Uint8Array)[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '',
    '',
  ];
  let content = '';
  const names: string[] = [];
  for (let i = 0; i * rows < image.height; i++) {
    const height = Math.min(rows, image.height - i * rows);
    const band = {
      width: image.width,
      height,
      data: image.data.subarray(i * rows * image.width, (i * rows + height) * image.width),
    };
    objects.push(imageObject(jpegStream(band, quality)));
    names.push(`/S${i} ${objects.length} 0 R`);
    // band i's top edge at i * rows pixels from the page's top
    const [h, y] = [(A4.height * height) / image.height, A4.height - (A4.height * (i * rows + height)) / image.height];
    content += `q ${n(A4.width)} 0 0 ${n(h)} 0 ${n(y)} cm /S${i} Do Q\n`;
  }
  objects[2] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${n(A4.width)} ${n(A4.height)}] /Resources << /XObject << ${names.join(' ')} >> >> /Contents 4 0 R >>`;
  objects[3] = `<< /Length ${content.length} >>\nstream\n${content}\nendstream`;
  return assemblePdf({ objects });
}

// ---- what happens to the paper ------------------------------------------------------------------------------------

const gray = ({ width, height, gray: data }: { width: number; height: number; gray: Uint8Array }): GrayImage => ({
  width,
  height,
  data,
});

/** The page as printed: the clean raster of qr-bills.ts at `dpi`. */
const printed = (page: BillPage, dpi: number): GrayImage => gray(rasterPage(page, dpi));

/** The page turned by `degrees` about its centre on a white scanner bed of the same size. */
function skewed(image: GrayImage, degrees: number): GrayImage {
  const a = (degrees * Math.PI) / 180;
  const [cx, cy] = [image.width / 2, image.height / 2];
  const turn = ([x, y]: Point): Point => [
    cx + (x - cx) * Math.cos(a) - (y - cy) * Math.sin(a),
    cy + (x - cx) * Math.sin(a) + (y - cy) * Math.cos(a),
  ];
  return warp(
    image,
    image.width,
    image.height,
    [turn([0, 0]), turn([image.width, 0]), turn([image.width, image.height]), turn([0, image.height])],
    () => 250,
  );
}

/** A dark vertical streak a worn toner drum or a dirty scanner glass leaves, `x` as a fraction of the width. */
function streak(image: GrayImage, x: number, widthPx: number, darkness: number): GrayImage {
  const out = { ...image, data: image.data.slice() };
  const x0 = Math.round(x * image.width);
  for (let y = 0; y < image.height; y++)
    for (let dx = 0; dx < widthPx; dx++)
      out.data[y * image.width + x0 + dx] = out.data[y * image.width + x0 + dx]! * (1 - darkness);
  return out;
}

// ---- families -----------------------------------------------------------------------------------------------------

const billPage = (data: BillData): BillPage => ({ codes: [{ code: billCode(data), ...PAYMENT_PART_CODE }] });

/** An office scan: skewed by up to ±2°, slightly blurred, noisy, a toner streak through the code, grey JPEG. */
export const officeScan = (options: Parameters<typeof officeScanImage>[0] = {}): Uint8Array =>
  imageOnlyPdf(officeScanImage(options));

/** officeScan's image: a JPEG file as it is (the stream's data), for the image bodies of extract. */
export function officeScanImage({
  data = SAMPLE_BILL,
  page,
  dpi = 200,
  seed = 1,
  quality = 60,
}: {
  data?: BillData;
  page?: BillPage;
  dpi?: number;
  seed?: number;
  quality?: number;
} = {}): ImageStream {
  const random = seededRandom(seed);
  let image = skewed(printed(page ?? billPage(data), dpi), (random() * 2 - 1) * 2);
  image = blur(image, 1, 1);
  image = streak(image, (PAYMENT_PART_CODE.x + 10 + random() * 26) / 210, Math.max(1, Math.round(dpi / 150)), 0.35);
  image = light(image, { bright: 0.98, dim: 0.9, noise: 14, seed });
  return jpegStream(image, quality);
}

/** A fax: printed at twice the resolution, averaged down, skewed a little, cut to black and white, CCITT G4. */
export const fax = (options: Parameters<typeof faxRaster>[0] = {}): Uint8Array =>
  imageOnlyPdf(g4Stream(faxRaster(options)));

/** fax's page before G4 encoding (g4Stream cuts it to black and white at 150). */
export function faxRaster({
  data = SAMPLE_BILL,
  dpi = 200,
  seed = 1,
}: {
  data?: BillData;
  dpi?: number;
  seed?: number;
} = {}): GrayImage {
  const random = seededRandom(seed);
  const image = blur(skewed(shrink(printed(billPage(data), dpi * 2), 2), (random() * 2 - 1) * 0.8), 1, 1);
  return light(image, { bright: 1, dim: 0.95, noise: 30, seed });
}

/** A scan at a low resolution (75 to 100 dpi), heavily compressed. */
export const lowResJpeg = (options: Parameters<typeof lowResJpegImage>[0] = {}): Uint8Array =>
  imageOnlyPdf(lowResJpegImage(options));

/** lowResJpeg's image, a JPEG file. */
export function lowResJpegImage({
  data = SAMPLE_BILL,
  dpi = 100,
  seed = 1,
  quality = 45,
}: {
  data?: BillData;
  dpi?: number;
  seed?: number;
  quality?: number;
} = {}): ImageStream {
  // printed at 4× and averaged down, as a scanner's sensor integrates over its pixel
  const image = light(shrink(printed(billPage(data), dpi * 4), 4), { bright: 0.97, dim: 0.92, noise: 8, seed });
  return jpegStream(image, quality);
}

export interface PhotoOptions {
  data?: BillData;
  /** The printed page, when it is not one bill in the payment part. */
  page?: BillPage;
  /** Photo size in megapixels, 4:3 portrait. */
  megapixels?: number;
  seed?: number;
  /** Largest rotation of the page in the frame, in degrees. */
  rotation?: number;
  /** How much narrower the far edge looks (camera tilt), as a fraction of the page width. */
  tilt?: number;
  blurRadius?: number;
  quality?: number;
}

/**
 * A phone photo of the printed page on a dark desk: the page fills about 80% of a 4:3 portrait frame, turned and seen
 * at a tilt (perspective), lit unevenly with the phone's shadow across it, slightly out of focus, noisy, and stored as a
 * colour JPEG with warm white balance.
 */
export const phonePhoto = (options: PhotoOptions = {}): Uint8Array => imageOnlyPdf(phonePhotoImage(options));

/** phonePhoto's image, a colour JPEG file. */
export function phonePhotoImage({
  data = SAMPLE_BILL,
  page: printedPage,
  megapixels = 12,
  seed = 1,
  rotation = 6,
  tilt = 0.08,
  blurRadius = 1,
  quality = 85,
}: PhotoOptions = {}): ImageStream {
  const random = seededRandom(seed);
  const height = Math.round(Math.sqrt((megapixels * 1e6 * 4) / 3));
  const width = Math.round((height * 3) / 4);
  // the page 80% of the frame's height, printed at the resolution it has there
  const pageHeight = 0.8 * height;
  const dpi = pageHeight / (297 / 25.4);
  const page = printed(printedPage ?? billPage(data), dpi);
  const pageWidth = (pageHeight * 210) / 297;
  const a = ((random() * 2 - 1) * rotation * Math.PI) / 180;
  const [cx, cy] = [width / 2 + (random() - 0.5) * 0.05 * width, height / 2 + (random() - 0.5) * 0.05 * height];
  const narrow = tilt * pageWidth * (0.5 + random() / 2);
  // corners before turning: the top edge narrower (the camera leans back from the page's foot)
  const corners: Point[] = [
    [-pageWidth / 2 + narrow / 2, -pageHeight / 2],
    [pageWidth / 2 - narrow / 2, -pageHeight / 2],
    [pageWidth / 2, pageHeight / 2],
    [-pageWidth / 2, pageHeight / 2],
  ];
  const placed = corners.map(
    ([x, y]): Point => [cx + x * Math.cos(a) - y * Math.sin(a), cy + x * Math.sin(a) + y * Math.cos(a)],
  ) as [Point, Point, Point, Point];
  const desk = seededRandom(seed + 7);
  let image = warp(page, width, height, placed, (x, y) => 60 + 25 * Math.sin(x / 37 + Math.sin(y / 90)) + desk() * 10);
  image = blur(image, blurRadius, 2);
  image = light(image, {
    bright: 1,
    dim: 0.62,
    noise: 6,
    seed,
    shadow: { x: 0.3 + random() * 0.4, width: 0.12, depth: 0.3 },
  });
  const r = new Uint8Array(image.data.length);
  const g = new Uint8Array(image.data.length);
  const b = new Uint8Array(image.data.length);
  for (let i = 0; i < image.data.length; i++) {
    const v = image.data[i]!;
    r[i] = Math.min(255, v * 1.02);
    g[i] = v * 0.97;
    b[i] = v * 0.86;
  }
  return jpegStream({ width, height, r, g, b }, quality);
}

/** A bill as an office scan's JPEG (200 dpi, said in its JFIF header): what a caller's scanner uploads. */
export function billJpeg(data: BillData = SAMPLE_BILL): Uint8Array {
  const image = officeScanImage({ data, dpi: 200 });
  return withJfifDensity(image.data, a4Dpi(image.width));
}
