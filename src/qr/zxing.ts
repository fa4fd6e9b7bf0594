import { prepareZXingModule, readBarcodes } from 'zxing-wasm/reader';
import type { Raster } from '../pdf/engine/port.ts';
import type { BarcodeReader, DecodedSymbol } from './reader.ts';

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

  async readQrCodes(raster: Raster, { tryHarder }: { tryHarder: boolean }): Promise<DecodedSymbol[]> {
    this.ready ??= prepareZXingModule({
      overrides: {
        instantiateWasm: (imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void) => {
          void WebAssembly.instantiate(this.wasm, imports).then((instance) => done(instance, this.wasm));
          return {};
        },
      },
      fireImmediately: true,
    });
    await this.ready;
    // zxing-wasm reads any object shaped like ImageData (Node has no ImageData class).
    const image = { data: raster.data, width: raster.width, height: raster.height, colorSpace: 'srgb' } as unknown as ImageData;
    const results = await readBarcodes(image, { formats: ['QRCode'], tryHarder, maxNumberOfSymbols: MAX_SYMBOLS, returnErrors: false });
    return results
      .filter((r) => r.isValid)
      .map((r) => {
        const xs = [r.position.topLeft.x, r.position.topRight.x, r.position.bottomLeft.x, r.position.bottomRight.x];
        const ys = [r.position.topLeft.y, r.position.topRight.y, r.position.bottomLeft.y, r.position.bottomRight.y];
        const [x0, y0] = [Math.min(...xs), Math.min(...ys)];
        return {
          // The raw bytes, not zxing's text: QR-bills are UTF-8 (coding type 1) whether or not they carry an ECI.
          bytes: r.bytes,
          box: { x: x0 / raster.width, y: y0 / raster.height, w: (Math.max(...xs) - x0) / raster.width, h: (Math.max(...ys) - y0) / raster.height },
        };
      });
  }
}
