import type { GrayRaster } from '../pdf/engine/port.ts';

/** A rectangle as fractions of a raster's width and height from its top left corner. */
export interface RasterBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** A point as fractions of a raster's width and height. */
export interface RasterPoint {
  x: number;
  y: number;
}

/** A QR code found in a raster: its raw bytes, where it lies, and what the symbol says of itself. */
export interface DecodedSymbol {
  bytes: Uint8Array;
  box: RasterBox;
  /** The symbol's corners (its outer edge, quiet zone excluded) in the symbol's own orientation. */
  corners: { topLeft: RasterPoint; topRight: RasterPoint; bottomLeft: RasterPoint; bottomRight: RasterPoint };
  /** Error correction level: L, M, Q or H. */
  ecLevel: string;
}

/** What a decoder saw in a raster: the codes it read, and where it found a code it could not read. */
export interface RasterReading {
  codes: DecodedSymbol[];
  unreadable: RasterBox[];
}

/** The port to a barcode decoder; adapters load their engine their own way. */
export interface BarcodeReader {
  readQrCodes(raster: GrayRaster, options: { tryHarder: boolean }): Promise<RasterReading>;
}
