import { z } from '@hono/zod-openapi';
import { problemContent } from './schemas.ts';

/**
 * The OpenAPI side of the two request forms besides JSON (docs/contract/http.md, "Other request bodies"):
 * `application/pdf` with
 * `references` in the query, and `multipart/form-data` with a `file` part (a file picker in /docs) and, for extract, a
 * `references` part. request-body.ts reads them; these schemas only document them.
 */

const pdfFile = (description: string) =>
  z.instanceof(Uint8Array).openapi({ type: 'string', format: 'binary', description });

export const PdfBody = pdfFile('The PDF file itself (no Base64).');

export const FileBody = pdfFile('The PDF or image file itself (no Base64).');

const referencesText =
  'A JSON array, as for the JSON body: any JSON values, returned exactly as written. `[]` when absent.';

export const ValidatePdfForm = z.object({ file: pdfFile('The PDF file.') }).openapi('ValidatePdfForm');

export const ExtractSwissQrCodeForm = z
  .object({
    file: pdfFile(
      "The PDF, or a JPEG, PNG or TIFF image (the part's Content-Type says which: image/jpeg, image/png or image/tiff; anything else is read as a PDF).",
    ),
    references: z.string().optional().openapi({ description: referencesText, example: '["INV-2026-0042"]' }),
  })
  .openapi('ExtractSwissQrCodeForm');

export const ReferencesQuery = z.object({
  references: z
    .string()
    .optional()
    .openapi({
      param: { name: 'references', in: 'query' },
      description: `URL-encoded. ${referencesText} Not a JSON array: 400 \`validation\`.`,
      example: '["INV-2026-0042"]',
    }),
});

/** The answers every document route may give besides its own. */
export const serviceResponses = {
  401: problemContent(
    '`unauthorized`: no credential, a wrong one, or both headers at once (with `WWW-Authenticate: Bearer`). Only when the service requires authentication.',
  ),
  503: problemContent(
    '`overloaded`: the bodies in flight would exceed MAX_INFLIGHT_MB (answered before the body is read), or the document waited QUEUE_TIMEOUT_MS for a PDF engine; with `Retry-After`.',
  ),
};
