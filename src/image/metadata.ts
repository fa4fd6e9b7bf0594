import type { Orientation, Resolution } from './one-page-pdf.ts';

/** What an image file says about how to show it; absent when it says nothing (then 300 dpi, as stored). */
export interface ImageMetadata {
  resolution?: Resolution | undefined;
  orientation?: Orientation | undefined;
}

/** The file is not the image its type says, or is cut short: 400 `invalid-image`. */
export class InvalidImage extends Error {
  override name = 'InvalidImage';
}

/** A usable resolution: a scan's or a photo's, not 1 dpi or 72 000 (some writers put aspect ratios or junk there). */
export function plausible(resolution: Resolution | undefined): Resolution | undefined {
  if (!resolution) return undefined;
  const ok = (dpi: number) => Number.isFinite(dpi) && dpi >= 10 && dpi <= 10_000;
  return ok(resolution.x) && ok(resolution.y) ? resolution : undefined;
}

const TAG = { orientation: 274, xResolution: 282, yResolution: 283, resolutionUnit: 296 } as const;

/**
 * The orientation and resolution tags of the first IFD of a TIFF structure (an EXIF block is one). Only these four
 * tags are read; a block that is cut short or malformed is ignored, as viewers ignore it, rather than refused.
 */
export function readExif(tiff: Uint8Array): ImageMetadata {
  try {
    const view = new DataView(tiff.buffer, tiff.byteOffset, tiff.byteLength);
    const little = tiff[0] === 0x49;
    if (!little && tiff[0] !== 0x4d) return {};
    const u16 = (at: number) => view.getUint16(at, little);
    const u32 = (at: number) => view.getUint32(at, little);
    const ifd = u32(4);
    const tags = new Map<number, number>();
    for (let i = 0, n = u16(ifd); i < n; i++) {
      const entry = ifd + 2 + i * 12;
      const [tag, type] = [u16(entry), u16(entry + 2)];
      if (type === 3) tags.set(tag, u16(entry + 8));
      else if (type === 4) tags.set(tag, u32(entry + 8));
      else if (type === 5) {
        const at = u32(entry + 8);
        tags.set(tag, u32(at) / u32(at + 4));
      }
    }
    const orientation = tags.get(TAG.orientation);
    const unit = tags.get(TAG.resolutionUnit) ?? 2;
    const perInch = unit === 3 ? 2.54 : unit === 2 ? 1 : undefined;
    const [x, y] = [tags.get(TAG.xResolution), tags.get(TAG.yResolution)];
    return {
      orientation: orientation && orientation >= 1 && orientation <= 8 ? (orientation as Orientation) : undefined,
      resolution: perInch && x && y ? plausible({ x: x * perInch, y: y * perInch }) : undefined,
    };
  } catch (e) {
    if (e instanceof RangeError) return {};
    throw e;
  }
}
