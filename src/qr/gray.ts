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
