import type { GrayRaster } from '../pdf/engine/port.ts';

/**
 * A raster framed for a decoder: `scale` times larger (nearest pixel, so module edges stay sharp) inside a white margin
 * of `margin` pixels. An embedded QR image is often cropped to its modules (no quiet zone) and may be 1 pixel a module;
 * zxing needs the white border and a few pixels a module.
 */
export function framed(raster: GrayRaster, scale: number, margin: number): GrayRaster {
  const width = raster.width * scale + 2 * margin;
  const height = raster.height * scale + 2 * margin;
  const data = new Uint8Array(width * height).fill(255);
  for (let y = 0; y < raster.height * scale; y++) {
    const from = Math.floor(y / scale) * raster.width;
    const to = (y + margin) * width + margin;
    for (let x = 0; x < raster.width * scale; x++) data[to + x] = raster.data[from + Math.floor(x / scale)]!;
  }
  return { width, height, data };
}

/**
 * A raster `scale` times larger by bilinear interpolation. A blurred code of 2 to 3 pixels a module reads better
 * enlarged smoothly than as it is (zxing's binarizer sees cleaner edges) or enlarged by repeating pixels.
 */
export function enlarged(raster: GrayRaster, scale: number): GrayRaster {
  const { width: sw, height: sh, data: src } = raster;
  const width = Math.round(sw * scale);
  const height = Math.round(sh * scale);
  const data = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const sy = Math.min(sh - 1, Math.max(0, (y + 0.5) / scale - 0.5));
    const y0 = Math.floor(sy);
    const y1 = Math.min(sh - 1, y0 + 1);
    const fy = sy - y0;
    for (let x = 0; x < width; x++) {
      const sx = Math.min(sw - 1, Math.max(0, (x + 0.5) / scale - 0.5));
      const x0 = Math.floor(sx);
      const x1 = Math.min(sw - 1, x0 + 1);
      const fx = sx - x0;
      const top = src[y0 * sw + x0]! + (src[y0 * sw + x1]! - src[y0 * sw + x0]!) * fx;
      const bottom = src[y1 * sw + x0]! + (src[y1 * sw + x1]! - src[y1 * sw + x0]!) * fx;
      data[y * width + x] = top + (bottom - top) * fy + 0.5;
    }
  }
  return { width, height, data };
}
