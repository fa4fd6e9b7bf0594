/** The benchmark's input files, generated in code (plus the shared corpus's bombs when that folder exists). */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, deflateRawSync } from 'node:zlib';
import { concatBytes, simplePdf } from '../test/support/pdf/pdf-builder.ts';

export interface BenchCase {
  name: string;
  path: string;
  bytes: Uint8Array;
  /** Page count a correct answer reports (undefined for bombs, where a refusal is fine too). */
  pages: number | undefined;
  bomb: boolean;
  /** Gets a server of its own so the peak RSS is for this file alone. */
  big: boolean;
}

const SHARED_BOMBS = ['bomb-object-stream-1GiB.pdf', 'bomb-xmp-metadata-1GiB.pdf'];
export const SHARED_DIR = '/work/shared/corpus/pdf/gen';

const enc = new TextEncoder();
const GiB = 1024 * 1024 * 1024;

export async function makeCases(): Promise<{ dir: string; cases: BenchCase[]; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'doc-bench-'));
  const cases: BenchCase[] = [];
  const add = async (
    name: string,
    file: string,
    bytes: Uint8Array,
    pages: number | undefined,
    bomb = false,
    big = false,
  ) => {
    const path = join(dir, file);
    await writeFile(path, bytes);
    cases.push({ name, path, bytes, pages, bomb, big });
  };
  await add('1 page', '1-page.pdf', simplePdf({ pages: 1 }), 1);
  await add('100 pages', '100-pages.pdf', simplePdf({ pages: 100 }), 100);
  await add('2000 pages', '2000-pages.pdf', simplePdf({ pages: 2000 }), 2000);
  // One page whose uncompressed content stream carries 50 MB of comment: the Base64 JSON body (~67 MB) stays under
  // the default MAX_BODY_MB of 64 MiB.
  await add('50 MB (1 page)', '50MB.pdf', simplePdf({ pages: 1, contentBytes: 50_000_000 }), 1, false, true);
  await add('bomb: gen objstm 1 GiB', 'bomb-objstm-1GiB.pdf', objectStreamBomb(GiB), undefined, true, true);
  for (const file of SHARED_BOMBS) {
    const path = join(SHARED_DIR, file);
    if (!existsSync(path)) continue;
    cases.push({
      name: `bomb: shared ${file.replace(/^bomb-|\.pdf$/g, '')}`,
      path,
      bytes: new Uint8Array(await readFile(path)),
      pages: undefined,
      bomb: true,
      big: true,
    });
  }
  return { dir, cases, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A PDF 1.5 file whose catalog and page tree live in a FlateDecode object stream that inflates to `inflatedBytes`
 * (the two objects, then zeros, which are PDF white-space). Every reader must inflate it to find the catalog.
 *
 * The deflate data is built from chunks: one 16 MiB chunk of zeros is compressed once (raw deflate, sync flush, so it
 * ends on a byte boundary) and repeated; a final empty block and the zlib header and Adler-32 wrap it. About 1 MB for
 * 1 GiB, in tens of milliseconds.
 */
export function objectStreamBomb(inflatedBytes: number): Uint8Array {
  const catalog = '<< /Type /Catalog /Pages 2 0 R >>\n';
  const pagesObj = '<< /Type /Pages /Kids [4 0 R] /Count 1 >>\n';
  const offsets = `1 0 2 ${catalog.length} `;
  const prefix = enc.encode(offsets + catalog + pagesObj);
  const first = offsets.length;

  const CHUNK = 16 * 1024 * 1024;
  if (inflatedBytes % CHUNK !== 0 || inflatedBytes < CHUNK)
    throw new Error('inflatedBytes must be a multiple of 16 MiB');
  const sync = { level: 9, finishFlush: constants.Z_SYNC_FLUSH };
  const head = new Uint8Array(CHUNK);
  head.set(prefix);
  const firstChunk = deflateRawSync(head, sync);
  const zeroChunk = deflateRawSync(new Uint8Array(CHUNK), sync);
  const finalBlock = deflateRawSync(new Uint8Array(0)); // an empty final block
  const zlibHeader = Uint8Array.of(0x78, 0xda);
  const trailer = new Uint8Array(4);
  new DataView(trailer.buffer).setUint32(0, adler32PrefixThenZeros(prefix, inflatedBytes - prefix.length));
  const deflated = concatBytes(
    ...[zlibHeader, firstChunk, ...Array<Uint8Array>(inflatedBytes / CHUNK - 1).fill(zeroChunk), finalBlock, trailer],
  );

  // 3 font, 4 page, 5 content, 6 object stream (1 catalog, 2 pages), 7 cross-reference stream
  const content = 'BT /F1 24 Tf 72 720 Td (objstm bomb) Tj ET';
  const parts: Uint8Array[] = [enc.encode('%PDF-1.5\n%\xe2\xe3\xcf\xd3\n')];
  const offsetOf: Record<number, number> = {};
  let length = parts[0]!.length;
  const push = (p: Uint8Array) => {
    parts.push(p);
    length += p.length;
  };
  const object = (n: number, body: string, stream?: Uint8Array) => {
    offsetOf[n] = length;
    push(enc.encode(`${n} 0 obj\n${body}${stream ? '\nstream\n' : ''}`));
    if (stream) {
      push(stream);
      push(enc.encode('\nendstream'));
    }
    push(enc.encode('\nendobj\n'));
  };
  object(3, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  object(
    4,
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>',
  );
  object(5, `<< /Length ${content.length} >>`, enc.encode(content));
  object(6, `<< /Type /ObjStm /N 2 /First ${first} /Filter /FlateDecode /Length ${deflated.length} >>`, deflated);
  offsetOf[7] = length;
  // W [1 4 2]: type, offset or object stream number, generation or index
  const rows = new Uint8Array(8 * 7);
  const view = new DataView(rows.buffer);
  const row = (i: number, type: number, field2: number, field3: number) => {
    view.setUint8(i * 7, type);
    view.setUint32(i * 7 + 1, field2);
    view.setUint16(i * 7 + 5, field3);
  };
  row(0, 0, 0, 65535);
  row(1, 2, 6, 0);
  row(2, 2, 6, 1);
  for (const n of [3, 4, 5, 6, 7]) row(n, 1, offsetOf[n]!, 0);
  object(7, `<< /Type /XRef /Size 8 /W [1 4 2] /Root 1 0 R /Length ${rows.length} >>`, rows);
  push(enc.encode(`startxref\n${offsetOf[7]}\n%%EOF\n`));
  return concatBytes(...parts);
}

function adler32PrefixThenZeros(prefix: Uint8Array, zeros: number): number {
  const MOD = 65521;
  let a = 1;
  let b = 0;
  for (const byte of prefix) {
    a = (a + byte) % MOD;
    b = (b + a) % MOD;
  }
  // each zero byte leaves a unchanged and adds a to b
  b = (b + (zeros % MOD) * a) % MOD;
  return ((b << 16) | a) >>> 0;
}
