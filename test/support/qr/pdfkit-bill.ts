/**
 * The QR-bill as invoicing software makes it: swissqrbill 4.4.1's complete payment part (receipt, texts, scissors and
 * the vector QR code) on PDFKit, at the bottom of a one-page A4 invoice. Node only (PDFKit reads its font metrics from
 * disk); qr-bills.ts builds bills with Web APIs only.
 */
import PDFDocument from 'pdfkit';
import { SwissQRBill, SwissQRCode } from 'swissqrbill/pdf';
import type { Data, PDFOptions } from 'swissqrbill/types';

const mm = (v: number): number => (v * 72) / 25.4;

/**
 * `code`: a tampered bill, as a fraudster makes it from a genuine one: the printed payment part of `data` kept, its QR
 * code painted over with white and another bill's code drawn in its place.
 */
export async function swissQrBillPdf(
  data: Data,
  options: PDFOptions = {},
  { code }: { code?: Data } = {},
): Promise<Uint8Array> {
  // A fixed creation date keeps the file (and its /ID) the same on every run.
  const doc = new PDFDocument({ size: 'A4', info: { CreationDate: new Date(Date.UTC(2026, 0, 15)) } });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    doc.on('end', resolve);
    doc.on('error', reject);
  });
  doc.fontSize(16).text('Rechnung 2026-001', 57, 57);
  doc.fontSize(10).moveDown();
  for (let i = 1; i <= 10; i++)
    doc.text(`Position ${i}: Gartenarbeit und Entsorgung von Grünmaterial .......... CHF ${(i * 17.35).toFixed(2)}`);
  // Without coordinates, attachTo puts the payment part at the bottom of the current page (a new page if it lacks room).
  new SwissQRBill(data, { language: 'DE', ...options }).attachTo(doc);
  if (code) {
    const [x, y, side] = [mm(67), doc.page.height - mm(105 - 17), mm(46)];
    doc.rect(x, y, side, side).fillColor('white').fill();
    new SwissQRCode(code).attachTo(doc, x, y);
  }
  doc.end();
  await ended;
  return new Uint8Array(Buffer.concat(chunks));
}
