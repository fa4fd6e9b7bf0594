/**
 * Builds small, exact PDF files in code, so tests need no binary fixtures. Objects are numbered from 1 in the order
 * given; the cross-reference table and trailer are computed.
 */
export interface PdfParts {
  /** Object bodies (without `n 0 obj`/`endobj`); object 1 is the catalog unless `root` says otherwise. */
  objects: (string | Uint8Array)[];
  header?: string;
  root?: number;
  trailerExtra?: string;
  /** Bytes before the header (junk some writers prepend). */
  prefix?: string;
}

const enc = new TextEncoder();

export function assemblePdf({
  objects,
  header = '%PDF-1.7',
  root = 1,
  trailerExtra = '',
  prefix = '',
}: PdfParts): Uint8Array {
  const chunks: Uint8Array[] = [enc.encode(`${prefix}${header}\n%\xe2\xe3\xcf\xd3\n`)];
  let length = chunks[0]!.length;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(length - prefix.length);
    const parts = [
      enc.encode(`${i + 1} 0 obj\n`),
      typeof body === 'string' ? enc.encode(body) : body,
      enc.encode('\nendobj\n'),
    ];
    for (const p of parts) {
      chunks.push(p);
      length += p.length;
    }
  });
  const xrefAt = length - prefix.length;
  const rows = offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('');
  chunks.push(
    enc.encode(
      `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${rows}trailer\n<< /Size ${objects.length + 1} /Root ${root} 0 R ${trailerExtra}>>\nstartxref\n${xrefAt}\n%%EOF\n`,
    ),
  );
  return concatBytes(...chunks);
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export interface SimplePdf {
  pages?: number;
  version?: string;
  catalogVersion?: string;
  attachments?: number;
  /** Extra bytes of page content per page (to make large files). */
  contentBytes?: number;
}

/** A valid PDF with `pages` pages (Helvetica text), optionally with embedded files in the /EmbeddedFiles name tree. */
export function simplePdf({
  pages = 1,
  version = '1.7',
  catalogVersion,
  attachments = 0,
  contentBytes = 0,
}: SimplePdf = {}): Uint8Array {
  // 1 catalog, 2 page tree, 3 font, then per page: page + content, then per attachment: filespec + embedded file
  const objects: string[] = [];
  const firstPage = 4;
  const firstAttachment = firstPage + pages * 2;
  const names = Array.from({ length: attachments }, (_, i) => `(file${i + 1}.txt) ${firstAttachment + i * 2} 0 R`).join(
    ' ',
  );
  objects.push(
    `<< /Type /Catalog /Pages 2 0 R${catalogVersion ? ` /Version /${catalogVersion}` : ''}${attachments ? ` /Names << /EmbeddedFiles << /Names [${names}] >> >>` : ''} >>`,
  );
  const kids = Array.from({ length: pages }, (_, i) => `${firstPage + i * 2} 0 R`).join(' ');
  objects.push(`<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`);
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  for (let i = 0; i < pages; i++) {
    const text = `BT /F1 24 Tf 72 720 Td (Page ${i + 1}) Tj ET\n${contentBytes ? `% ${'x'.repeat(contentBytes)}\n` : ''}`;
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents ${firstPage + i * 2 + 1} 0 R >>`,
    );
    objects.push(`<< /Length ${enc.encode(text).length} >>\nstream\n${text}\nendstream`);
  }
  for (let i = 0; i < attachments; i++) {
    const data = `attachment ${i + 1}`;
    objects.push(
      `<< /Type /Filespec /F (file${i + 1}.txt) /UF (file${i + 1}.txt) /EF << /F ${firstAttachment + i * 2 + 1} 0 R >> >>`,
    );
    objects.push(`<< /Type /EmbeddedFile /Length ${data.length} >>\nstream\n${data}\nendstream`);
  }
  return assemblePdf({ objects, header: `%PDF-${version}` });
}

export const toBase64 = (bytes: Uint8Array): string => {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
};
