import { Inflate } from 'fflate';
import { PdfName, PdfSyntaxError, isDict, type PdfDict, type PdfStream, type PdfValue } from './objects.ts';

/**
 * Decodes the streams structural validation needs (cross-reference and object streams). Output is capped:
 * pdf.js and PDFium inflate without a limit, which is how a 2.5 KB file becomes a 1 GiB allocation.
 */
export function decodeStream(stream: PdfStream, maxBytes: number): Uint8Array {
  const filters = asArray(stream.dict.get('Filter'));
  const params = asArray(stream.dict.get('DecodeParms'));
  let data = stream.data;
  filters.forEach((filter, i) => {
    if (!(filter instanceof PdfName)) throw new PdfSyntaxError('invalid', 'filter is not a name');
    if (filter.value !== 'FlateDecode' && filter.value !== 'Fl')
      throw new PdfSyntaxError('unsupported', `filter ${filter.value}`);
    data = inflateCapped(data, maxBytes);
    const p = params[i];
    if (isDict(p)) data = unpredict(data, p);
  });
  return data;
}

function asArray(v: PdfValue | undefined): PdfValue[] {
  return v === undefined || v === null ? [] : Array.isArray(v) ? v : [v];
}

function inflateCapped(input: Uint8Array, maxBytes: number): Uint8Array {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const inflater = new Inflate((chunk) => {
    total += chunk.length;
    if (total > maxBytes) throw new PdfSyntaxError('too-complex', `stream inflates beyond ${maxBytes} bytes`);
    chunks.push(chunk);
  });
  // zlib header: 2 bytes. Many writers get the Adler-32 trailer wrong, so the raw deflate body is read instead.
  const body = input.length > 2 && (input[0]! & 0x0f) === 8 ? input.subarray(2) : input;
  try {
    for (let off = 0; off < body.length; off += 65536) inflater.push(body.subarray(off, off + 65536), false);
  } catch (e) {
    if (e instanceof PdfSyntaxError) throw e;
    // A truncated or damaged stream keeps what inflated so far, as readers do.
  }
  const out = new Uint8Array(total);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

/** PNG predictors (ISO 32000-2 §7.4.4.4), which cross-reference streams nearly always use. */
function unpredict(data: Uint8Array, params: PdfDict): Uint8Array {
  const predictor = num(params.get('Predictor'), 1);
  if (predictor < 10) {
    if (predictor === 1) return data;
    throw new PdfSyntaxError('unsupported', `predictor ${predictor}`);
  }
  const colors = num(params.get('Colors'), 1);
  const bpc = num(params.get('BitsPerComponent'), 8);
  const columns = num(params.get('Columns'), 1);
  const bpp = Math.max(1, Math.ceil((colors * bpc) / 8));
  const rowLength = Math.ceil((colors * bpc * columns) / 8);
  if (rowLength <= 0 || rowLength > 1 << 20) throw new PdfSyntaxError('invalid', 'bad predictor columns');
  const rows = Math.floor(data.length / (rowLength + 1));
  const out = new Uint8Array(rows * rowLength);
  let prev = new Uint8Array(rowLength);
  for (let r = 0; r < rows; r++) {
    const type = data[r * (rowLength + 1)]!;
    const src = data.subarray(r * (rowLength + 1) + 1, (r + 1) * (rowLength + 1));
    const row = out.subarray(r * rowLength, (r + 1) * rowLength);
    for (let i = 0; i < rowLength; i++) {
      const left = i >= bpp ? row[i - bpp]! : 0;
      const up = prev[i]!;
      const upLeft = i >= bpp ? prev[i - bpp]! : 0;
      const x = src[i]!;
      switch (type) {
        case 0:
          row[i] = x;
          break;
        case 1:
          row[i] = x + left;
          break;
        case 2:
          row[i] = x + up;
          break;
        case 3:
          row[i] = x + ((left + up) >> 1);
          break;
        case 4:
          row[i] = x + paeth(left, up, upLeft);
          break;
        default:
          throw new PdfSyntaxError('invalid', `PNG filter type ${type}`);
      }
    }
    prev = row;
  }
  return out;
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a),
    pb = Math.abs(p - b),
    pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

const num = (v: PdfValue | undefined, fallback: number) => (typeof v === 'number' ? v : fallback);
