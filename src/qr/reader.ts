import type { GrayRaster } from '../pdf/engine/port.ts';

/** A rectangle as fractions of a raster's width and height from its top left corner. */
export interface RasterBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** A QR code found in a raster: its raw bytes and where it lies. */
export interface DecodedSymbol {
  bytes: Uint8Array;
  box: RasterBox;
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
