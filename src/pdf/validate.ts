import type { Clock } from '../ports.ts';
import type { PdfEngine } from './engine/port.ts';
import { PdfSyntaxError } from './syntax/objects.ts';
import { KNOWN_VERSIONS, findHeader, readStructure, type PdfStructure } from './syntax/structure.ts';

export interface PdfValidation {
  pageCount: number;
  fileSizeBytes: number;
  fileSizeMB: number;
  pdfVersion: string;
  hasAttachments: boolean;
  attachmentCount: number;
}

/** Why a PDF was refused; each maps to one problem type. */
export type PdfRejection = { problem: 'invalid-pdf' | 'encrypted-pdf' | 'pdf-too-complex'; detail: string };

export type PdfValidationResult = { ok: true; value: PdfValidation } | ({ ok: false } & PdfRejection);

/** Largest decoded cross-reference or object stream the service reads: real ones are kilobytes, so this only stops bombs. */
export const MAX_STRUCTURE_STREAM_BYTES = 16 * 1024 * 1024;

export interface ValidateOptions {
  engine: PdfEngine;
  clock: Clock;
  timeoutMs: number;
  /** Largest decoded cross-reference or object stream the structure reader inflates. */
  maxStreamBytes: number;
}

/**
 * Validates a PDF: the engine decides whether it opens (and whether it needs a password); the file's own structure
 * gives page count, catalog version and attachments, because engines trust /Count and miss cycles.
 */
export async function validatePdf(pdf: Uint8Array, options: ValidateOptions): Promise<PdfValidationResult> {
  const header = findHeader(pdf);
  if (!header) return reject('invalid-pdf', 'No %PDF-n.n header in the first 1024 bytes.');
  if (!KNOWN_VERSIONS.includes(header.version))
    return reject('invalid-pdf', `PDF version ${header.version} does not exist.`);

  // The structure is read first because the engine may take the bytes (a worker thread receives them by transfer).
  const deadline = options.clock.now() + options.timeoutMs;
  let structure: PdfStructure | PdfSyntaxError;
  try {
    structure = readStructure(pdf, header.offset, {
      maxStreamBytes: options.maxStreamBytes,
      checkpoint: () => {
        if (options.clock.now() > deadline) throw new PdfSyntaxError('too-complex', 'time budget exhausted');
      },
    });
  } catch (e) {
    if (!(e instanceof PdfSyntaxError)) throw e;
    structure = e;
  }
  const fileSizeBytes = pdf.length;
  if (structure instanceof PdfSyntaxError && structure.kind === 'too-complex') {
    return reject('pdf-too-complex', `The PDF exceeds the processing limits: ${structure.message}.`);
  }

  // The engine's verdict comes first: a file needing a password is `encrypted-pdf` even where its structure is unreadable.
  const report = await options.engine.inspect(pdf);
  if (report.status === 'needs-password')
    return reject('encrypted-pdf', 'The PDF is encrypted and needs a password to open.');
  if (report.status === 'too-complex')
    return reject('pdf-too-complex', `The PDF exceeds the processing limits: ${report.reason}.`);
  if (report.status === 'unreadable') return reject('invalid-pdf', 'The PDF cannot be opened.');

  if (structure instanceof PdfSyntaxError) {
    if (structure.kind === 'invalid')
      return reject('invalid-pdf', `The PDF structure is broken: ${structure.message}.`);
    // Only the engine can read it (for example object streams of an encrypted file): take its view.
    if (report.pageCount < 1 || !report.firstAndLastPageLoad)
      return reject('invalid-pdf', 'The PDF has no loadable pages.');
    structure = {
      pageCount: report.pageCount,
      catalogVersion: report.version,
      attachmentCount: report.attachmentCount,
      repaired: false,
    };
  }

  return {
    ok: true,
    value: {
      pageCount: structure.pageCount,
      fileSizeBytes,
      fileSizeMB: megabytesHalfEven(fileSizeBytes),
      pdfVersion: laterVersion(header.version, structure.catalogVersion),
      hasAttachments: structure.attachmentCount > 0,
      attachmentCount: structure.attachmentCount,
    },
  };
}

/** ISO 32000-1 §7.2.2 (table 28): the catalog's /Version applies only when later than the header's. */
function laterVersion(header: string, catalog: string | undefined): string {
  return catalog !== undefined && Number(catalog) > Number(header) ? catalog : header;
}

/** bytes / 2^20 to two decimals, ties to even, as .NET's Math.Round does; done in integers so no tie is misjudged. */
export function megabytesHalfEven(bytes: number): number {
  const scaled = bytes * 100;
  const unit = 1048576;
  let hundredths = Math.floor(scaled / unit);
  const twiceRemainder = 2 * (scaled - hundredths * unit);
  if (twiceRemainder > unit || (twiceRemainder === unit && hundredths % 2 === 1)) hundredths++;
  return hundredths / 100;
}

const reject = (problem: PdfRejection['problem'], detail: string): PdfValidationResult => ({
  ok: false,
  problem,
  detail,
});
