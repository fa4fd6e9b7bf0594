import type { GrayRaster } from '../pdf/engine/port.ts';

/**
 * Finds QR finder patterns (the three 7×7 squares in a code's corners: dark, light, dark 3×3 core, light, dark, or
 * 1:1:3:1:1 along any line through the centre) in a grey raster. The scan uses them to know whether a page may hold a
 * code it has not read yet: a code zxing could not decode at this resolution still shows its finders. Cheap on purpose
 * (one pass over every other row, a vertical check where a row matches), so it runs on every pass.
 */

export interface FinderPattern {
  /** Centre, in raster pixels. */
  x: number;
  y: number;
  /** Module size in pixels (the pattern is 7 modules wide). */
  module: number;
}

/** Side of the square blocks whose mean brightness sets the local threshold (a power of two: a shift finds a pixel's block). */
const BLOCK_SHIFT = 3;
const BLOCK = 1 << BLOCK_SHIFT;
/** The threshold of a block is the mean of the (2·REACH + 1)² blocks around it: about 40 pixels, a finder's width at 6 px a module. */
const REACH = 2;
/** A pixel is dark when it is this much below its local mean (so paper grain and JPEG noise stay light). */
const MARGIN = 12;
/** A row match counts when this many rows near the same centre match too. */
const MIN_HITS = 2;

export function findFinderPatterns(raster: GrayRaster): FinderPattern[] {
  const { width, height, data } = raster;
  const { threshold, columns } = localThresholds(raster);
  const isDark = (x: number, y: number) =>
    data[y * width + x]! < threshold[(y >> BLOCK_SHIFT) * columns + (x >> BLOCK_SHIFT)]!;
  const hits: (FinderPattern & { hits: number })[] = [];
  const runs = [0, 0, 0, 0, 0];
  /** At a light pixel (or the row's end) after five runs: check them, then keep the last dark run as a new first one. */
  const complete = (x: number, y: number) => {
    if (ratiosMatch(runs)) {
      const total = runs[0]! + runs[1]! + runs[2]! + runs[3]! + runs[4]!;
      const cx = x - runs[4]! - runs[3]! - runs[2]! / 2;
      const vertical = crossCheck(isDark, height, Math.floor(cx), y, total);
      if (vertical) record(hits, { x: cx, y: vertical.y, module: (total + vertical.total) / 14 });
    }
    runs[0] = runs[2]!;
    runs[1] = runs[3]!;
    runs[2] = runs[4]!;
    runs[3] = 1;
    runs[4] = 0;
  };
  for (let y = 0; y < height; y += 2) {
    const row = y * width;
    const thresholds = (y >> BLOCK_SHIFT) * columns;
    runs.fill(0);
    // runs[state] is the run being counted: even states dark, odd states light (zxing's FinderPatternFinder)
    let state = 0;
    for (let x = 0; x < width; x++) {
      if (data[row + x]! < threshold[thresholds + (x >> BLOCK_SHIFT)]!) {
        if (state % 2 === 1) state++;
        runs[state]!++;
      } else if (state % 2 === 1) {
        runs[state]!++;
      } else if (state === 4) {
        complete(x, y);
        state = 3;
      } else if (runs[0] !== 0) {
        state++;
        runs[state]!++;
      }
    }
    if (state === 4) complete(width, y);
  }
  return hits.filter((h) => h.hits >= MIN_HITS).map(({ x, y, module }) => ({ x, y, module }));
}

/**
 * 1:1:3:1:1 within a little more than half a module each (zxing's tolerance), and at least a pixel: at 2 pixels a
 * module an anti-aliased edge pixel falls to either side.
 */
function ratiosMatch(runs: number[]): boolean {
  const total = runs[0]! + runs[1]! + runs[2]! + runs[3]! + runs[4]!;
  if (total < 7) return false;
  const module = total / 7;
  const tolerance = Math.max(module / 2, 1);
  return (
    Math.abs(module - runs[0]!) < tolerance * 1.2 &&
    Math.abs(module - runs[1]!) < tolerance * 1.2 &&
    Math.abs(3 * module - runs[2]!) < 3 * tolerance &&
    Math.abs(module - runs[3]!) < tolerance * 1.2 &&
    Math.abs(module - runs[4]!) < tolerance * 1.2
  );
}

/** The same pattern up and down the column through a row match's centre, of a similar size; its centre row and length. */
function crossCheck(
  isDark: (x: number, y: number) => boolean,
  height: number,
  x: number,
  y: number,
  rowTotal: number,
): { y: number; total: number } | undefined {
  const at = (yy: number) => isDark(x, yy);
  if (!at(y)) return undefined;
  const counts = [0, 0, 0, 0, 0];
  const limit = rowTotal * 1.5;
  // from the centre up: the rest of the core, light, dark
  let yy = y;
  while (yy >= 0 && at(yy) && counts[2]! <= limit) {
    counts[2]!++;
    yy--;
  }
  while (yy >= 0 && !at(yy) && counts[1]! <= limit) {
    counts[1]!++;
    yy--;
  }
  while (yy >= 0 && at(yy) && counts[0]! <= limit) {
    counts[0]!++;
    yy--;
  }
  const top = yy + 1;
  // and down
  yy = y + 1;
  while (yy < height && at(yy) && counts[2]! <= limit) {
    counts[2]!++;
    yy++;
  }
  while (yy < height && !at(yy) && counts[3]! <= limit) {
    counts[3]!++;
    yy++;
  }
  while (yy < height && at(yy) && counts[4]! <= limit) {
    counts[4]!++;
    yy++;
  }
  const total = counts.reduce((a, b) => a + b, 0);
  if (counts.some((c) => c === 0) || total > limit || total < rowTotal / 1.5 || !ratiosMatch(counts)) return undefined;
  return { y: top + counts[0]! + counts[1]! + counts[2]! / 2, total };
}

/** Adds a hit to the pattern it repeats (centre within a module, similar size) or as a new one. */
function record(hits: (FinderPattern & { hits: number })[], p: FinderPattern): void {
  for (const h of hits) {
    if (
      Math.abs(h.x - p.x) <= Math.max(2, h.module) &&
      Math.abs(h.y - p.y) <= Math.max(2, h.module) * 1.5 &&
      p.module < h.module * 1.5 &&
      h.module < p.module * 1.5
    ) {
      // running mean, so the centre settles on the middle of the rows that saw it
      h.x = (h.x * h.hits + p.x) / (h.hits + 1);
      h.y = (h.y * h.hits + p.y) / (h.hits + 1);
      h.module = (h.module * h.hits + p.module) / (h.hits + 1);
      h.hits++;
      return;
    }
  }
  hits.push({ ...p, hits: 1 });
}

/**
 * The local threshold of each BLOCK × BLOCK block: the mean of the blocks around it less MARGIN. A local threshold,
 * because phone photos and scans are lit unevenly; on a page rendered from vector content it acts as a fixed one.
 */
function localThresholds({ width, height, data }: GrayRaster): { threshold: Int16Array; columns: number } {
  const columns = (width + BLOCK - 1) >> BLOCK_SHIFT;
  const rows = (height + BLOCK - 1) >> BLOCK_SHIFT;
  // summed-area tables of the blocks' pixel sums and pixel counts (edge blocks are smaller)
  const stride = columns + 1;
  const sums = new Float64Array(stride * (rows + 1));
  const counts = new Float64Array(stride * (rows + 1));
  // every other row and column: a block's mean from 16 of its 64 pixels, at a quarter of the reads
  for (let y = 0; y < height; y += 2) {
    const t = ((y >> BLOCK_SHIFT) + 1) * stride + 1;
    const row = y * width;
    for (let x = 0; x < width; x += 2) sums[t + (x >> BLOCK_SHIFT)]! += data[row + x]!;
  }
  for (let by = 0; by < rows; by++) {
    const h = Math.ceil(Math.min(BLOCK, height - by * BLOCK) / 2);
    for (let bx = 0; bx < columns; bx++)
      counts[(by + 1) * stride + bx + 1] = h * Math.ceil(Math.min(BLOCK, width - bx * BLOCK) / 2);
  }
  for (const table of [sums, counts]) {
    for (let by = 1; by <= rows; by++)
      for (let bx = 1; bx <= columns; bx++)
        table[by * stride + bx]! +=
          table[by * stride + bx - 1]! + table[(by - 1) * stride + bx]! - table[(by - 1) * stride + bx - 1]!;
  }
  const threshold = new Int16Array(columns * rows);
  for (let by = 0; by < rows; by++) {
    const y0 = Math.max(0, by - REACH) * stride;
    const y1 = Math.min(rows, by + REACH + 1) * stride;
    for (let bx = 0; bx < columns; bx++) {
      const x0 = Math.max(0, bx - REACH);
      const x1 = Math.min(columns, bx + REACH + 1);
      const sum = sums[y1 + x1]! - sums[y0 + x1]! - sums[y1 + x0]! + sums[y0 + x0]!;
      const count = counts[y1 + x1]! - counts[y0 + x1]! - counts[y1 + x0]! + counts[y0 + x0]!;
      threshold[by * columns + bx] = sum / count - MARGIN;
    }
  }
  return { threshold, columns };
}
