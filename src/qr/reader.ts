import type { Raster } from '../pdf/engine/port.ts';

/** A QR code found in a raster: its raw bytes and where it lies, as fractions of the raster from its top left. */
export interface DecodedSymbol {
  bytes: Uint8Array;
  box: { x: number; y: number; w: number; h: number };
}

/** The port to a barcode decoder; adapters load their engine their own way. */
export interface BarcodeReader {
  readQrCodes(raster: Raster, options: { tryHarder: boolean }): Promise<DecodedSymbol[]>;
}
