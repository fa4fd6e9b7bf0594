/**
 * A baseline JPEG encoder (ITU T.81: sequential DCT, Huffman, 8-bit), grey or YCbCr with 4:2:0 chroma as phone cameras
 * write it, so tests and the bench make JPEG scans and photos in code, in any runtime. The quantization tables are the
 * standard's (Annex K) scaled by quality as libjpeg scales them; the Huffman tables are Annex K's too.
 */
import type { GrayImage } from './gray-image.ts';

const ZIGZAG = [
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
  35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47,
  55, 62, 63,
];

const LUMA_QUANT = [
  16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51,
  87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101,
  72, 92, 95, 98, 112, 100, 103, 99,
];
const CHROMA_QUANT = [
  17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99,
  99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
  99, 99, 99, 99, 99, 99,
];

/** Annex K.3: code lengths (how many codes of 1..16 bits) and the symbols in code order. */
interface HuffmanSpec {
  counts: number[];
  symbols: number[];
}
const DC_LUMA: HuffmanSpec = {
  counts: [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0],
  symbols: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
};
const DC_CHROMA: HuffmanSpec = {
  counts: [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
  symbols: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
};
const AC_LUMA: HuffmanSpec = {
  counts: [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d],
  symbols: [
    0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07, 0x22, 0x71, 0x14,
    0x32, 0x81, 0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0, 0x24, 0x33, 0x62, 0x72, 0x82, 0x09,
    0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a,
    0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65,
    0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88,
    0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9,
    0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca,
    0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea,
    0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa,
  ],
};
const AC_CHROMA: HuffmanSpec = {
  counts: [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77],
  symbols: [
    0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71, 0x13, 0x22, 0x32,
    0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0, 0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16,
    0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38, 0x39,
    0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64,
    0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86,
    0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
    0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8,
    0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9,
    0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa,
  ],
};

/** Canonical codes (Annex C): symbol -> [code, length]. */
function huffmanCodes({ counts, symbols }: HuffmanSpec): Map<number, [number, number]> {
  const codes = new Map<number, [number, number]>();
  let code = 0;
  let k = 0;
  for (let length = 1; length <= 16; length++) {
    for (let i = 0; i < counts[length - 1]!; i++) codes.set(symbols[k++]!, [code++, length]);
    code <<= 1;
  }
  return codes;
}

/** The libjpeg quality scaling of a base table (quality 1..100), in zigzag order as DQT stores it. */
function quantTable(base: number[], quality: number): number[] {
  const q = Math.max(1, Math.min(100, quality));
  const scale = q < 50 ? 5000 / q : 200 - 2 * q;
  return ZIGZAG.map((i) => Math.max(1, Math.min(255, Math.floor((base[i]! * scale + 50) / 100))));
}

/** cos((2x + 1) u π / 16) · C(u) / 2, the 8-point DCT-II basis. */
const BASIS = (() => {
  const b = new Float64Array(64);
  for (let u = 0; u < 8; u++)
    for (let x = 0; x < 8; x++)
      b[u * 8 + x] = (u === 0 ? Math.SQRT1_2 : 1) * 0.5 * Math.cos(((2 * x + 1) * u * Math.PI) / 16);
  return b;
})();

class BitWriter {
  private bytes: number[] = [];
  private acc = 0;
  private n = 0;

  write(code: number, length: number): void {
    for (let i = length - 1; i >= 0; i--) {
      this.acc = (this.acc << 1) | ((code >> i) & 1);
      if (++this.n === 8) {
        this.bytes.push(this.acc);
        if (this.acc === 0xff) this.bytes.push(0); // byte stuffing
        this.acc = 0;
        this.n = 0;
      }
    }
  }

  /** Pads the last byte with 1 bits (T.81 F.1.2.3). */
  finish(): number[] {
    if (this.n > 0) this.write(0xff >> this.n, 8 - this.n);
    return this.bytes;
  }
}

interface Component {
  id: number;
  /** Samples per MCU horizontally and vertically (2, 2 for luma in 4:2:0; 1, 1 otherwise). */
  h: number;
  v: number;
  quant: number[];
  dc: Map<number, [number, number]>;
  ac: Map<number, [number, number]>;
  table: number;
  /** The component's plane at its own resolution, padded to whole MCUs. */
  plane: Float64Array;
  stride: number;
  predictor: number;
}

/**
 * Encodes `image` (grey) or `rgb` (planes of the same size: r, g, b) as a baseline JFIF JPEG of `quality` (1..100).
 * Colour is stored as YCbCr with chroma subsampled 2×2 (4:2:0).
 */
export function encodeJpeg(
  image: GrayImage | { width: number; height: number; r: Uint8Array; g: Uint8Array; b: Uint8Array },
  quality = 75,
): Uint8Array {
  const { width, height } = image;
  const colour = !('data' in image);
  const maxH = colour ? 2 : 1;
  const mcuW = 8 * maxH;
  const mcusX = Math.ceil(width / mcuW);
  const mcusY = Math.ceil(height / mcuW);
  const lumaQ = quantTable(LUMA_QUANT, quality);
  const chromaQ = quantTable(CHROMA_QUANT, quality);
  const plane = (h: number, get: (x: number, y: number) => number): { plane: Float64Array; stride: number } => {
    // full-resolution samples averaged down by maxH / h, edges repeated to fill whole MCUs
    const f = maxH / h;
    const stride = mcusX * 8 * h;
    const rows = mcusY * 8 * h;
    const out = new Float64Array(stride * rows);
    for (let y = 0; y < rows; y++) {
      for (let x = 0; x < stride; x++) {
        let sum = 0;
        for (let dy = 0; dy < f; dy++)
          for (let dx = 0; dx < f; dx++) sum += get(Math.min(width - 1, x * f + dx), Math.min(height - 1, y * f + dy));
        out[y * stride + x] = sum / (f * f) - 128;
      }
    }
    return { plane: out, stride };
  };
  const components: Component[] = [];
  const dcL = huffmanCodes(DC_LUMA);
  const acL = huffmanCodes(AC_LUMA);
  if ('data' in image) {
    components.push({
      id: 1,
      h: 1,
      v: 1,
      quant: lumaQ,
      dc: dcL,
      ac: acL,
      table: 0,
      predictor: 0,
      ...plane(1, (x, y) => image.data[y * width + x]!),
    });
  } else {
    const { r, g, b } = image;
    const at = (x: number, y: number) => y * width + x;
    const Y = (x: number, y: number) => 0.299 * r[at(x, y)]! + 0.587 * g[at(x, y)]! + 0.114 * b[at(x, y)]!;
    const Cb = (x: number, y: number) => -0.168736 * r[at(x, y)]! - 0.331264 * g[at(x, y)]! + 0.5 * b[at(x, y)]! + 128;
    const Cr = (x: number, y: number) => 0.5 * r[at(x, y)]! - 0.418688 * g[at(x, y)]! - 0.081312 * b[at(x, y)]! + 128;
    const dcC = huffmanCodes(DC_CHROMA);
    const acC = huffmanCodes(AC_CHROMA);
    components.push({ id: 1, h: 2, v: 2, quant: lumaQ, dc: dcL, ac: acL, table: 0, predictor: 0, ...plane(2, Y) });
    components.push({ id: 2, h: 1, v: 1, quant: chromaQ, dc: dcC, ac: acC, table: 1, predictor: 0, ...plane(1, Cb) });
    components.push({ id: 3, h: 1, v: 1, quant: chromaQ, dc: dcC, ac: acC, table: 1, predictor: 0, ...plane(1, Cr) });
  }

  const bits = new BitWriter();
  const block = new Float64Array(64);
  const tmp = new Float64Array(64);
  for (let my = 0; my < mcusY; my++) {
    for (let mx = 0; mx < mcusX; mx++) {
      for (const c of components) {
        for (let by = 0; by < c.v; by++) {
          for (let bx = 0; bx < c.h; bx++) {
            const x0 = (mx * c.h + bx) * 8;
            const y0 = (my * c.v + by) * 8;
            for (let y = 0; y < 8; y++)
              for (let x = 0; x < 8; x++) block[y * 8 + x] = c.plane[(y0 + y) * c.stride + x0 + x]!;
            encodeBlock(bits, block, tmp, c);
          }
        }
      }
    }
  }
  const scan = bits.finish();

  const out: number[] = [0xff, 0xd8];
  const segment = (marker: number, body: number[]) =>
    out.push(0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 0xff, ...body);
  segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]); // JFIF 1.1, no density, no thumbnail
  segment(0xdb, [0, ...lumaQ, ...(colour ? [1, ...chromaQ] : [])]);
  segment(0xc0, [
    8,
    height >> 8,
    height & 0xff,
    width >> 8,
    width & 0xff,
    components.length,
    ...components.flatMap((c) => [c.id, (c.h << 4) | c.v, c.table]),
  ]);
  const dht = (cls: number, id: number, spec: HuffmanSpec) => [(cls << 4) | id, ...spec.counts, ...spec.symbols];
  segment(0xc4, [
    ...dht(0, 0, DC_LUMA),
    ...dht(1, 0, AC_LUMA),
    ...(colour ? [...dht(0, 1, DC_CHROMA), ...dht(1, 1, AC_CHROMA)] : []),
  ]);
  segment(0xda, [components.length, ...components.flatMap((c) => [c.id, (c.table << 4) | c.table]), 0, 63, 0]);
  const bytes = new Uint8Array(out.length + scan.length + 2);
  bytes.set(out);
  bytes.set(scan, out.length);
  bytes.set([0xff, 0xd9], out.length + scan.length);
  return bytes;
}

/** The size category of a coefficient and its magnitude bits (T.81 F.1.2.1). */
function category(value: number): [number, number] {
  const abs = Math.abs(value);
  let size = 0;
  while (abs >> size) size++;
  return [size, value < 0 ? value + (1 << size) - 1 : value];
}

function encodeBlock(bits: BitWriter, block: Float64Array, tmp: Float64Array, c: Component): void {
  // separable 2D DCT: rows, then columns
  for (let y = 0; y < 8; y++) {
    for (let u = 0; u < 8; u++) {
      let s = 0;
      for (let x = 0; x < 8; x++) s += BASIS[u * 8 + x]! * block[y * 8 + x]!;
      tmp[y * 8 + u] = s;
    }
  }
  for (let u = 0; u < 8; u++) {
    for (let v = 0; v < 8; v++) {
      let s = 0;
      for (let y = 0; y < 8; y++) s += BASIS[v * 8 + y]! * tmp[y * 8 + u]!;
      block[v * 8 + u] = s;
    }
  }
  const q = new Int32Array(64);
  for (let k = 0; k < 64; k++) q[k] = Math.round(block[ZIGZAG[k]!]! / c.quant[k]!);
  const diff = q[0]! - c.predictor;
  c.predictor = q[0]!;
  const [dcSize, dcBits] = category(diff);
  const [dcCode, dcLength] = c.dc.get(dcSize)!;
  bits.write(dcCode, dcLength);
  if (dcSize > 0) bits.write(dcBits, dcSize);
  let run = 0;
  for (let k = 1; k < 64; k++) {
    if (q[k] === 0) {
      run++;
      continue;
    }
    while (run > 15) {
      const [zrl, zrlLength] = c.ac.get(0xf0)!;
      bits.write(zrl, zrlLength);
      run -= 16;
    }
    const [size, magnitude] = category(q[k]!);
    const [code, length] = c.ac.get((run << 4) | size)!;
    bits.write(code, length);
    bits.write(magnitude, size);
    run = 0;
  }
  if (run > 0) {
    const [eob, eobLength] = c.ac.get(0x00)!;
    bits.write(eob, eobLength);
  }
}
