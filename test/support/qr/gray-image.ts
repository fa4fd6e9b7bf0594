/**
 * Grey images and what happens to paper between printer and PDF, made in code so degraded inputs need no binary
 * fixtures: a camera's perspective and rotation, lens blur, uneven light, sensor noise, a scanner's threshold.
 * Web APIs only (the workerd tests build the same inputs). Every random choice comes from a seeded generator, so an
 * input is the same on every run.
 */
import type { GrayRaster } from '../../../src/pdf/engine/port.ts';

/** 8-bit grey, 0 black to 255 white, rows top to bottom: the scan's own raster. */
export type GrayImage = GrayRaster;

export const grayImage = (width: number, height: number, fill = 255): GrayImage => ({
  width,
  height,
  data: new Uint8Array(width * height).fill(fill),
});

/** Mulberry32: a small, fast, seeded generator of numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A point in pixels. */
export type Point = [number, number];

/**
 * The 3×3 homography (row-major, h[8] = 1) that maps the unit square's corners (0,0), (1,0), (1,1), (0,1) to the four
 * points given in that order. Heckbert's closed form for the square-to-quadrilateral case.
 */
function squareToQuad([[x0, y0], [x1, y1], [x2, y2], [x3, y3]]: [Point, Point, Point, Point]): number[] {
  const dx1 = x1 - x2;
  const dx2 = x3 - x2;
  const sx = x0 - x1 + x2 - x3;
  const dy1 = y1 - y2;
  const dy2 = y3 - y2;
  const sy = y0 - y1 + y2 - y3;
  const den = dx1 * dy2 - dx2 * dy1;
  const g = (sx * dy2 - dx2 * sy) / den;
  const h = (dx1 * sy - sx * dy1) / den;
  return [x1 - x0 + g * x1, x3 - x0 + h * x3, x0, y1 - y0 + g * y1, y3 - y0 + h * y3, y0, g, h, 1];
}

/** The inverse of a 3×3 matrix (row-major). */
function invert3(m: number[]): number[] {
  const [a, b, c, d, e, f, g, h, i] = m as [number, number, number, number, number, number, number, number, number];
  const A = e * i - f * h;
  const B = -(d * i - f * g);
  const C = d * h - e * g;
  const det = a * A + b * B + c * C;
  return [
    A / det,
    -(b * i - c * h) / det,
    (b * f - c * e) / det,
    B / det,
    (a * i - c * g) / det,
    -(a * f - c * d) / det,
    C / det,
    -(a * h - b * g) / det,
    (a * e - b * d) / det,
  ];
}

/**
 * Photographs `source` onto a `width` × `height` frame: the source's corners land on `corners` (top left, top right,
 * bottom right, bottom left, in frame pixels), bilinear sampling, `background` where the source is not.
 */
export function warp(
  source: GrayImage,
  width: number,
  height: number,
  corners: [Point, Point, Point, Point],
  background: (x: number, y: number) => number,
): GrayImage {
  // frame -> unit square -> source pixels
  const toUnit = invert3(squareToQuad(corners));
  const out = grayImage(width, height);
  const sw = source.width;
  const sh = source.height;
  const src = source.data;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const w = toUnit[6]! * x + toUnit[7]! * y + toUnit[8]!;
      const u = (toUnit[0]! * x + toUnit[1]! * y + toUnit[2]!) / w;
      const v = (toUnit[3]! * x + toUnit[4]! * y + toUnit[5]!) / w;
      const sx = u * sw - 0.5;
      const sy = v * sh - 0.5;
      if (sx < -0.5 || sy < -0.5 || sx > sw - 0.5 || sy > sh - 0.5) {
        out.data[y * width + x] = background(x, y);
        continue;
      }
      const x0 = Math.max(0, Math.min(sw - 2, Math.floor(sx)));
      const y0 = Math.max(0, Math.min(sh - 2, Math.floor(sy)));
      const fx = Math.max(0, Math.min(1, sx - x0));
      const fy = Math.max(0, Math.min(1, sy - y0));
      const i = y0 * sw + x0;
      const top = src[i]! + (src[i + 1]! - src[i]!) * fx;
      const bottom = src[i + sw]! + (src[i + sw + 1]! - src[i + sw]!) * fx;
      out.data[y * width + x] = top + (bottom - top) * fy + 0.5;
    }
  }
  return out;
}

/** A box blur of radius `r` (a (2r+1)² mean), run `passes` times: three passes come close to a Gaussian. */
export function blur(image: GrayImage, r: number, passes = 2): GrayImage {
  if (r <= 0) return image;
  const { width, height } = image;
  let data = image.data;
  const line = new Float64Array(Math.max(width, height) + 1);
  for (let pass = 0; pass < passes; pass++) {
    const next = new Uint8Array(data.length);
    // horizontal then vertical, each as running sums with the edge pixel repeated
    for (const horizontal of [true, false]) {
      const n = horizontal ? width : height;
      const lines = horizontal ? height : width;
      const step = horizontal ? 1 : width;
      const from = horizontal ? data : next.slice();
      const to = next;
      for (let l = 0; l < lines; l++) {
        const base = horizontal ? l * width : l;
        line[0] = 0;
        for (let i = 0; i < n; i++) line[i + 1] = line[i]! + from[base + i * step]!;
        for (let i = 0; i < n; i++) {
          const lo = i - r;
          const hi = i + r;
          let sum = line[Math.min(n, hi + 1)]! - line[Math.max(0, lo)]!;
          if (lo < 0) sum += -lo * from[base]!;
          if (hi >= n) sum += (hi - n + 1) * from[base + (n - 1) * step]!;
          to[base + i * step] = sum / (2 * r + 1) + 0.5;
        }
      }
    }
    data = next;
  }
  return { width, height, data };
}

/**
 * Paper under uneven light, then sensor noise: each pixel scaled by a light level that falls from `bright` at one
 * corner to `dim` at the opposite one (and a soft shadow band if asked), plus uniform noise of ±`noise`.
 */
export function light(
  image: GrayImage,
  {
    bright = 1,
    dim = 0.75,
    noise = 0,
    seed = 1,
    shadow,
  }: {
    bright?: number;
    dim?: number;
    noise?: number;
    seed?: number;
    shadow?: { x: number; width: number; depth: number };
  },
): GrayImage {
  const { width, height } = image;
  const random = seededRandom(seed);
  const out = new Uint8Array(image.data.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let level = bright + (dim - bright) * ((x / width + y / height) / 2);
      if (shadow) {
        const d = (x / width - shadow.x) / shadow.width;
        level *= 1 - shadow.depth * Math.exp(-d * d);
      }
      out[y * width + x] = Math.max(
        0,
        Math.min(255, image.data[y * width + x]! * level + (random() * 2 - 1) * noise + 0.5),
      );
    }
  }
  return { width, height, data: out };
}

/** Area-averaged downscaling by an integer factor, as a scanner's lower resolution sees the page. */
export function shrink(image: GrayImage, factor: number): GrayImage {
  const width = Math.floor(image.width / factor);
  const height = Math.floor(image.height / factor);
  const out = grayImage(width, height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let sum = 0;
      for (let dy = 0; dy < factor; dy++)
        for (let dx = 0; dx < factor; dx++) sum += image.data[(y * factor + dy) * image.width + x * factor + dx]!;
      out.data[y * width + x] = sum / (factor * factor) + 0.5;
    }
  }
  return out;
}

/** Black and white at a fixed threshold, as a fax or a bilevel scanner writes it: true where the pixel is black. */
export function threshold(image: GrayImage, level = 128): { width: number; height: number; black: Uint8Array } {
  const black = new Uint8Array(image.data.length);
  for (let i = 0; i < black.length; i++) black[i] = image.data[i]! < level ? 1 : 0;
  return { width: image.width, height: image.height, black };
}
