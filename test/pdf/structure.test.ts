import { zlibSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { PdfSyntaxError } from '../../src/pdf/syntax/objects.ts';
import { findHeader, readStructure } from '../../src/pdf/syntax/structure.ts';
import { assemblePdf, concatBytes as concat, simplePdf } from '../support/pdf/pdf-builder.ts';

const limits = { maxStreamBytes: 1 << 20, checkpoint: () => {} };
const read = (pdf: Uint8Array) => readStructure(pdf, findHeader(pdf)!.offset, limits);
const enc = new TextEncoder();

function syntaxError(pdf: Uint8Array): PdfSyntaxError {
  try {
    read(pdf);
  } catch (e) {
    if (e instanceof PdfSyntaxError) return e;
    throw e;
  }
  throw new Error('expected a PdfSyntaxError');
}

const page = (parent = 2) => `<< /Type /Page /Parent ${parent} 0 R /MediaBox [0 0 10 10] >>`;

/**
 * A PDF 1.5-style file: objects after the first `plain` live in one object stream, indexed by a cross-reference
 * stream with the PNG Up predictor. `objectStreamBody` replaces the object stream's decoded content (for bombs).
 */
function objectStreamPdf(objects: string[], plain: number, objectStreamBody?: Uint8Array): Uint8Array {
  const packed = objects.slice(plain);
  let index = '';
  let body = '';
  packed.forEach((o, i) => {
    index += `${plain + 1 + i} ${body.length} `;
    body += `${o}\n`;
  });
  const objstmNum = objects.length + 1;
  const xrefNum = objects.length + 2;
  const chunks: Uint8Array[] = [enc.encode('%PDF-1.5\n')];
  const offsets = new Map<number, number>();
  let length = chunks[0]!.length;
  const add = (num: number, head: string, data?: Uint8Array) => {
    offsets.set(num, length);
    const parts = data
      ? [enc.encode(`${num} 0 obj\n${head}\nstream\n`), data, enc.encode('\nendstream\nendobj\n')]
      : [enc.encode(`${num} 0 obj\n${head}\nendobj\n`)];
    for (const p of parts) {
      chunks.push(p);
      length += p.length;
    }
  };
  for (const [i, o] of objects.slice(0, plain).entries()) add(i + 1, o);
  const objstmData = zlibSync(objectStreamBody ?? enc.encode(index + body));
  add(
    objstmNum,
    `<< /Type /ObjStm /N ${packed.length} /First ${index.length} /Filter /FlateDecode /Length ${objstmData.length} >>`,
    objstmData,
  );
  offsets.set(xrefNum, length);
  const rows: number[][] = [[0, 0, 0]];
  for (let n = 1; n <= plain; n++) rows.push([1, offsets.get(n)!, 0]);
  for (const i of packed.keys()) rows.push([2, objstmNum, i]);
  rows.push([1, offsets.get(objstmNum)!, 0], [1, offsets.get(xrefNum)!, 0]);
  const raw: number[] = [];
  let prev = [0, 0, 0, 0, 0, 0, 0];
  for (const [t, a, b] of rows) {
    const row = [t!, (a! >>> 24) & 255, (a! >>> 16) & 255, (a! >>> 8) & 255, a! & 255, (b! >>> 8) & 255, b! & 255];
    raw.push(2, ...row.map((x, i) => (x - prev[i]! + 256) & 255));
    prev = row;
  }
  const xrefData = zlibSync(new Uint8Array(raw));
  add(
    xrefNum,
    `<< /Type /XRef /Size ${xrefNum + 1} /W [1 4 2] /Root 1 0 R /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 7 >> /Length ${xrefData.length} >>`,
    xrefData,
  );
  chunks.push(enc.encode(`startxref\n${offsets.get(xrefNum)}\n%%EOF\n`));
  return concat(...chunks);
}

describe('findHeader', () => {
  it('finds the header after leading bytes within 1024', () => {
    expect(findHeader(enc.encode(`${'x'.repeat(500)}%PDF-1.4\n`))).toEqual({ offset: 500, version: '1.4' });
    expect(findHeader(enc.encode('\ufeff%PDF-2.0\n'))?.version).toBe('2.0');
  });
  it('refuses a missing, late or malformed header', () => {
    expect(findHeader(enc.encode(`${'x'.repeat(2000)}%PDF-1.4\n`))).toBeUndefined();
    expect(findHeader(enc.encode('%pdf-1.4\n'))).toBeUndefined();
    expect(findHeader(enc.encode('%PDF-1.10\n'))).toBeUndefined();
    expect(findHeader(enc.encode('%PDF-x.y\n'))).toBeUndefined();
  });
});

describe('readStructure', () => {
  it('counts pages by walking the tree', () => {
    expect(read(simplePdf({ pages: 7 })).pageCount).toBe(7);
  });

  it('does not trust /Count in either direction', () => {
    expect(
      read(
        assemblePdf({
          objects: ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1000 >>', page()],
        }),
      ).pageCount,
    ).toBe(1);
    expect(
      read(
        assemblePdf({
          objects: [
            '<< /Type /Catalog /Pages 2 0 R >>',
            '<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 1 >>',
            page(),
            page(),
          ],
        }),
      ).pageCount,
    ).toBe(2);
  });

  it('refuses a negative /Count, a cycle and an empty tree', () => {
    expect(
      syntaxError(
        assemblePdf({
          objects: ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count -5 >>', page()],
        }),
      ).message,
    ).toMatch(/negative/);
    expect(
      syntaxError(
        assemblePdf({
          objects: ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>', page()],
        }),
      ).message,
    ).toMatch(/cycle/);
    expect(
      syntaxError(
        assemblePdf({ objects: ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [] /Count 0 >>'] }),
      ).message,
    ).toMatch(/no pages/);
    expect(syntaxError(assemblePdf({ objects: ['<< /Type /Catalog >>'] })).message).toMatch(/no page tree/);
  });

  it('walks a page tree thousands of levels deep without recursion', () => {
    const depth = 3000;
    const objects = ['<< /Type /Catalog /Pages 2 0 R >>'];
    for (let i = 0; i < depth; i++) objects.push(`<< /Type /Pages /Kids [${i + 3} 0 R] /Count 1 >>`);
    objects.push(page(depth + 1));
    expect(read(assemblePdf({ objects })).pageCount).toBe(1);
  });

  it('refuses a catalog nested deeper than 500 levels but ignores deep objects nobody references', () => {
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    expect(
      syntaxError(
        assemblePdf({
          objects: [`<< /Type /Catalog /Pages 2 0 R /Deep ${deep(600)} >>`, '<< /Type /Pages /Kids [3 0 R] >>', page()],
        }),
      ).kind,
    ).toBe('invalid');
    expect(
      read(
        assemblePdf({
          objects: [
            '<< /Type /Catalog /Pages 2 0 R /Deep 4 0 R >>',
            '<< /Type /Pages /Kids [3 0 R] >>',
            page(),
            deep(5000),
          ],
        }),
      ).pageCount,
    ).toBe(1);
  });

  it('reads cross-reference streams with PNG predictors and object streams', () => {
    const objects = [
      '<< /Type /Catalog /Pages 2 0 R /Version /2.0 >>',
      '<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >>',
      page(),
      page(),
      page(),
    ];
    const structure = read(objectStreamPdf(objects, 1));
    expect(structure).toMatchObject({ pageCount: 3, catalogVersion: '2.0', repaired: false });
  });

  it('refuses an object stream that inflates past the limit', () => {
    const objects = ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] >>', page()];
    expect(syntaxError(objectStreamPdf(objects, 1, new Uint8Array(4 << 20)))).toMatchObject({ kind: 'too-complex' });
  });

  it('repairs a file whose cross-reference offsets are wrong', () => {
    const pdf = simplePdf({ pages: 3 });
    const text = new TextDecoder('latin1').decode(pdf);
    const broken = text.replace(
      /(\d{10}) 00000 n/g,
      (_, o: string) => `${String(Number(o) + 7).padStart(10, '0')} 00000 n`,
    );
    const s = read(Uint8Array.from(broken, (c) => c.charCodeAt(0)));
    expect(s.pageCount).toBe(3);
  });

  it('rebuilds from a scan when startxref is missing, but needs a trailer', () => {
    const text = new TextDecoder('latin1').decode(simplePdf({ pages: 2 }));
    expect(read(enc.encode(text.replace(/startxref\n\d+\n/, ''))).pageCount).toBe(2);
    expect(read(enc.encode(text.replace(/startxref\n\d+\n/, ''))).repaired).toBe(true);
    expect(syntaxError(enc.encode(text.slice(0, text.indexOf('xref\n0'))))).toMatchObject({ kind: 'invalid' });
  });

  it('reads offsets relative to a header preceded by junk', () => {
    const pdf = assemblePdf({
      prefix: 'J'.repeat(500),
      objects: ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] >>', page()],
    });
    expect(read(pdf).pageCount).toBe(1);
  });

  it('counts distinct file specifications in the EmbeddedFiles name tree', () => {
    expect(read(simplePdf({ attachments: 3 })).attachmentCount).toBe(3);
    const spec = '<< /Type /Filespec /F (a.txt) >>';
    const tree = (names: string, extra = '') => [
      `<< /Type /Catalog /Pages 2 0 R /Names << /EmbeddedFiles 4 0 R >> >>`,
      '<< /Type /Pages /Kids [3 0 R] >>',
      page(),
      `<< ${names} ${extra} >>`,
    ];
    // two keys naming one specification count once; one key name used twice for two specifications counts twice
    expect(read(assemblePdf({ objects: [...tree('/Names [(a) 5 0 R (b) 5 0 R]'), spec] })).attachmentCount).toBe(1);
    expect(read(assemblePdf({ objects: [...tree('/Names [(a) 5 0 R (a) 6 0 R]'), spec, spec] })).attachmentCount).toBe(
      2,
    );
    // nested kids, and a kid that points back at its parent
    expect(
      read(assemblePdf({ objects: [...tree('/Kids [5 0 R 4 0 R]'), '<< /Names [(a) 6 0 R (b) 7 0 R] >>', spec, spec] }))
        .attachmentCount,
    ).toBe(2);
  });

  it('takes a catalog /Version only when it names a real version', () => {
    expect(read(simplePdf({ catalogVersion: '2.0' })).catalogVersion).toBe('2.0');
    expect(
      read(
        assemblePdf({
          objects: ['<< /Type /Catalog /Pages 2 0 R /Version (1.7) >>', '<< /Type /Pages /Kids [3 0 R] >>', page()],
        }),
      ).catalogVersion,
    ).toBeUndefined();
  });
});
