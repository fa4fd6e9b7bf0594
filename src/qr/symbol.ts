import type { GrayRaster } from '../pdf/engine/port.ts';
import type { DecodedSymbol, RasterPoint } from './reader.ts';
import type { QrBillWarning } from './warnings.ts';

/** What the code itself says besides its text, as far as the IG has rules for it. */
export interface SymbolFacts {
  /** L, M, Q or H; the IG requires M. */
  ecLevel: string;
  /** The Swiss cross (7 x 7 mm, black with a white cross) is in the middle of the code; undefined: too few pixels to tell. */
  swissCross: boolean | undefined;
  /** The side of the symbol on the page in millimetres (its outer modules, quiet zone excluded). */
  sideMm: number;
}

/**
 * Where to look, as fractions of the symbol's side from its centre (SIX IG QR-bill 2.3, 5.6: the cross is 7 mm of a
 * 46 mm code; its black square 6 mm, its arms 3.9 mm long and 1.2 mm wide): the cross's centre and arms are light, the
 * square's corners between the arms dark. Chosen well inside those shapes, for a code drawn a little larger or
 * smaller, turned, or blurred by a scan.
 */
const LIGHT: readonly [number, number][] = [
  [0, 0],
  [0.028, 0],
  [-0.028, 0],
  [0, 0.028],
  [0, -0.028],
];
const DARK: readonly [number, number][] = [
  [0.04, 0.04],
  [-0.04, 0.04],
  [0.04, -0.04],
  [-0.04, -0.04],
];

/**
 * The cross's arms are 1.17 mm of the 46 mm code: under about 3 pixels (a symbol under this many pixels across in its
 * source) they blur into the square, and nothing can be told.
 */
const MIN_SIDE_PIXELS = 120;

/**
 * Whether the Swiss cross is in the middle of a symbol read from `raster`; undefined when its source (`detail`: source
 * pixels per raster pixel, under 1 for an enlarged image) has too few pixels to tell.
 */
export function hasSwissCross(
  raster: GrayRaster,
  { topLeft, topRight, bottomLeft }: DecodedSymbol['corners'],
  detail: number,
): boolean | undefined {
  const side = Math.hypot((topRight.x - topLeft.x) * raster.width, (topRight.y - topLeft.y) * raster.height);
  if (side * detail < MIN_SIDE_PIXELS) return undefined;
  // The symbol's own axes, so that a turned code is sampled where its cross is.
  const at = ([u, v]: readonly [number, number]): number => {
    const p: RasterPoint = {
      x: topLeft.x + (0.5 + u) * (topRight.x - topLeft.x) + (0.5 + v) * (bottomLeft.x - topLeft.x),
      y: topLeft.y + (0.5 + u) * (topRight.y - topLeft.y) + (0.5 + v) * (bottomLeft.y - topLeft.y),
    };
    const x = Math.min(raster.width - 1, Math.max(0, Math.round(p.x * raster.width)));
    const y = Math.min(raster.height - 1, Math.max(0, Math.round(p.y * raster.height)));
    return raster.data[y * raster.width + x]!;
  };
  const light = LIGHT.map(at);
  const dark = DARK.map(at);
  // The darkest light sample must be clearly lighter than the lightest dark one, whatever the page's contrast.
  return Math.min(...light) - Math.max(...dark) > 64;
}

/** Sides within this many millimetres of 46 mm pass: printers and PDF producers round, and a code may be 45 mm. */
const SIZE_TOLERANCE_MM = 4;
/** The side IG 2.3 requires; the symbol's outer modules span a little less than the printed 46 mm with its margin. */
const SIDE_MM = 46;

/**
 * The symbol's facts that break the IG's rules, as warnings: `error-correction-level` (not M), `no-swiss-cross`, and,
 * only where the page's size is the bill's own (`vector`: a page with a text layer, not a scan or photo whose scale
 * is unknown), `symbol-size`.
 */
export function symbolWarnings(facts: SymbolFacts, vector: boolean): QrBillWarning[] {
  const warnings: QrBillWarning[] = [];
  if (facts.ecLevel !== 'M') {
    warnings.push({
      code: 'error-correction-level',
      fields: [],
      detail: `The QR code's error correction level is ${facts.ecLevel || 'unknown'}; SIX IG QR-bill 2.3 requires M (15%).`,
    });
  }
  if (facts.swissCross === false) {
    warnings.push({
      code: 'no-swiss-cross',
      fields: [],
      detail:
        'No Swiss cross in the middle of the QR code (SIX IG QR-bill 2.3 requires it): the code may not be a genuine QR-bill code.',
    });
  }
  if (vector && Math.abs(facts.sideMm - SIDE_MM) > SIZE_TOLERANCE_MM) {
    warnings.push({
      code: 'symbol-size',
      fields: [],
      detail: `The QR code measures ${facts.sideMm.toFixed(1)} mm on the page; SIX IG QR-bill 2.3 requires 46 x 46 mm.`,
    });
  }
  return warnings;
}
