import type { GrayRaster } from '../pdf/engine/port.ts';
import { findFinderPatterns, type FinderPattern } from './finders.ts';
import type { RasterBox, RasterReading } from './reader.ts';

/**
 * A place in a raster that may hold a QR code the decoder did not read there: finder patterns no decoded code explains,
 * or a code zxing located but could not decode. Looked at closer (a crop at a higher resolution), a lead either yields
 * its code or is given up.
 */
export interface Lead {
  /** The rectangle to look at, in raster pixels, large enough for the whole code (clipped to the raster). */
  x: number;
  y: number;
  w: number;
  h: number;
  /** Module size in raster pixels (estimated when only zxing's outline is known). */
  module: number;
  /** A point inside the code (a finder's centre, or the outline's centre): a decoded code covering it explains the lead. */
  anchor: { x: number; y: number };
}

/** A code's quiet zone (4 modules) and the half of a finder (3.5 modules) around finder centres. */
const FINDER_MARGIN = 8;
/**
 * How far a code may reach from a finder when its other finders were not seen: 120 modules covers a version 25 code
 * (117 modules) from any corner; the longest QR-bill payload (997 characters) needs version 25 at level M.
 */
const PARTIAL_REACH = 120;
/** Finders further apart than this (in modules) belong to different codes: a version 25 code's diagonal is ~155. */
const SAME_CODE = 160;
/** A bill code has 57 to 117 modules a side: an outline's size over 70 is a fair guess of its module. */
const TYPICAL_MODULES = 70;

/**
 * The leads in a raster the decoder has read: codes it could not decode, and (with `finders`) finder patterns outside
 * every decoded code. Looking for finders costs a pass over the raster, worth it where a search may stop early.
 */
export function leadsIn(raster: GrayRaster, reading: RasterReading, { finders }: { finders: boolean }): Lead[] {
  const px = (b: RasterBox) => ({
    x: b.x * raster.width,
    y: b.y * raster.height,
    w: b.w * raster.width,
    h: b.h * raster.height,
  });
  const decoded = reading.codes.map((c) => px(c.box));
  const inside = (p: { x: number; y: number }, b: { x: number; y: number; w: number; h: number }, margin: number) =>
    p.x >= b.x - margin && p.x <= b.x + b.w + margin && p.y >= b.y - margin && p.y <= b.y + b.h + margin;
  const clip = (x0: number, y0: number, x1: number, y1: number) => {
    const [cx0, cy0] = [Math.max(0, x0), Math.max(0, y0)];
    return { x: cx0, y: cy0, w: Math.min(raster.width, x1) - cx0, h: Math.min(raster.height, y1) - cy0 };
  };

  const leads: Lead[] = [];
  for (const outline of reading.unreadable.map(px)) {
    const anchor = { x: outline.x + outline.w / 2, y: outline.y + outline.h / 2 };
    if (decoded.some((d) => inside(anchor, d, 0))) continue;
    const margin = Math.max(outline.w, outline.h) * 0.15;
    leads.push({
      ...clip(outline.x - margin, outline.y - margin, outline.x + outline.w + margin, outline.y + outline.h + margin),
      module: Math.max(outline.w, outline.h) / TYPICAL_MODULES,
      anchor,
    });
  }
  if (!finders) return leads;
  const loose = findFinderPatterns(raster).filter(
    (f) => !decoded.some((d) => inside(f, d, 2 * f.module)) && !leads.some((l) => inside(f, l, 0)),
  );
  for (const group of groupByCode(loose)) {
    const module = group.reduce((s, f) => s + f.module, 0) / group.length;
    // three finders outline one code; fewer (or finders of two codes) leave its extent open
    const points = group.length === 3 ? [...group, fourthCorner(group)] : group;
    const reach = (group.length === 3 ? FINDER_MARGIN : PARTIAL_REACH) * module;
    const xs = points.map((p) => p.x);
    const ys = points.map((p) => p.y);
    leads.push({
      ...clip(Math.min(...xs) - reach, Math.min(...ys) - reach, Math.max(...xs) + reach, Math.max(...ys) + reach),
      module,
      anchor: { x: group[0]!.x, y: group[0]!.y },
    });
  }
  return leads;
}

/** Finders of a similar size close enough to be corners of one code, grouped; a lone finder is a group of one. */
function groupByCode(finders: FinderPattern[]): FinderPattern[][] {
  const groups: FinderPattern[][] = [];
  for (const f of finders) {
    const group = groups.find((g) =>
      g.every(
        (o) =>
          o.module < f.module * 1.5 &&
          f.module < o.module * 1.5 &&
          Math.hypot(o.x - f.x, o.y - f.y) < SAME_CODE * Math.max(o.module, f.module),
      ),
    );
    if (group) group.push(f);
    else groups.push([f]);
  }
  return groups;
}

/** The corner a code's three finders leave out: opposite the finder at the right angle (the one off the longest side). */
function fourthCorner([a, b, c]: FinderPattern[]): { x: number; y: number } {
  const d = (p: FinderPattern, q: FinderPattern) => Math.hypot(p.x - q.x, p.y - q.y);
  const [ab, bc, ca] = [d(a!, b!), d(b!, c!), d(c!, a!)];
  // the right-angle corner is the one not on the longest side
  const [corner, p, q] = ab >= bc && ab >= ca ? [c!, a!, b!] : bc >= ca ? [a!, b!, c!] : [b!, c!, a!];
  return { x: p.x + q.x - corner.x, y: p.y + q.y - corner.y };
}
