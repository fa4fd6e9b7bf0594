import { prepareZXingModule, readBarcodes, type ReadResult } from 'zxing-wasm/reader';
import { boxAround, type GrayRaster } from '../pdf/engine/port.ts';
import type { BarcodeReader, DecodedSymbol, RasterBox, RasterReading } from './reader.ts';

/** Most codes a page can hold that are worth reading (a bill, a URL, a few more). */
const MAX_SYMBOLS = 8;

/**
 * zxing-cpp compiled to WebAssembly (`zxing-wasm/reader`). Its module is handed in compiled: left to itself the package
 * fetches its .wasm from a CDN, even on Node, and Workers refuse to compile WebAssembly from bytes at run time.
 * The package holds one module per isolate, so one reader serves the whole process.
 */
export class ZxingReader implements BarcodeReader {
  private ready: Promise<unknown> | undefined;

  constructor(private readonly wasm: WebAssembly.Module) {}

  async readQrCodes(raster: GrayRaster, { tryHarder }: { tryHarder: boolean }): Promise<RasterReading> {
    this.ready ??= prepareZXingModule({
      overrides: {
        instantiateWasm: (
          imports: WebAssembly.Imports,
          done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
        ) => {
          void WebAssembly.instantiate(this.wasm, imports).then((instance) => done(instance, this.wasm));
          return {};
        },
      },
      fireImmediately: true,
    });
    await this.ready;
    const results = await readBarcodes(rgbaOf(raster), {
      formats: ['QRCode'],
      tryHarder,
      // A QR code reads in any orientation and bills are never printed inverted: zxing's retries with the image turned
      // or inverted only cost time on pages without a code.
      tryRotate: false,
      tryInvert: false,
      maxNumberOfSymbols: MAX_SYMBOLS,
      // Codes zxing located but could not read tell the scan where to look closer.
      returnErrors: true,
    });
    const box = ({ position: p }: ReadResult): RasterBox => {
      const { x, y, w, h } = boxAround([p.topLeft, p.topRight, p.bottomLeft, p.bottomRight]);
      return { x: x / raster.width, y: y / raster.height, w: w / raster.width, h: h / raster.height };
    };
    const point = ({ x, y }: { x: number; y: number }) => ({ x: x / raster.width, y: y / raster.height });
    const corners = ({ position: p }: ReadResult): DecodedSymbol['corners'] => ({
      topLeft: point(p.topLeft),
      topRight: point(p.topRight),
      bottomLeft: point(p.bottomLeft),
      bottomRight: point(p.bottomRight),
    });
    return {
      // The raw bytes, not zxing's text: QR-bills are UTF-8 (coding type 1) whether or not they carry an ECI.
      codes: results
        .filter((r) => r.isValid)
        .map((r) => ({ bytes: r.bytes, box: box(r), ecLevel: r.ecLevel, corners: corners(r) })),
      unreadable: results.filter((r) => !r.isValid).map(box),
    };
  }
}

/** zxing-wasm takes ImageData-shaped RGBA (and turns it back into luma): grey goes in as R = G = B. */
function rgbaOf(raster: GrayRaster): ImageData {
  const { width, height, data } = raster;
  const rgba = new Uint8ClampedArray(width * height * 4);
  // One 32-bit store a pixel: 0xAABBGGRR in little-endian memory (every platform these runtimes run on).
  const words = new Uint32Array(rgba.buffer);
  for (let i = 0; i < data.length; i++) words[i] = 0xff000000 | (data[i]! * 0x010101);
  // zxing-wasm reads any object shaped like ImageData (Node has no ImageData class).
  return { data: rgba, width, height, colorSpace: 'srgb' } as unknown as ImageData;
}
