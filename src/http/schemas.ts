import { z } from '@hono/zod-openapi';
import { RawJsonString } from './json-object.ts';

/** The wire shapes of spec/HTTP.md. These schemas validate requests and generate /openapi.json alike. */

/** Read from the body's bytes without becoming a JavaScript string (json-object.ts); documented as the string it is. */
export const Base64Pdf = z.instanceof(RawJsonString).openapi({
  type: 'string',
  description: 'The PDF as standard Base64 (RFC 4648 §4, padded; line breaks allowed; an optional `data:application/pdf;base64,` prefix).',
  format: 'byte',
  example: 'JVBERi0xLjcK...',
});

export const ValidatePdfRequest = z.object({ base64Pdf: Base64Pdf }).openapi('ValidatePdfRequest', {
  description: 'Property names bind case-insensitively (`Base64Pdf` is accepted).',
});

export const ValidatePdfResponse = z
  .object({
    pageCount: z.number().int().min(1).openapi({ example: 1 }),
    fileSizeBytes: z.number().int().min(0).openapi({ example: 1319 }),
    fileSizeMB: z.number().openapi({ description: 'fileSizeBytes / 1048576, two decimals, ties to even.', example: 0 }),
    pdfVersion: z.string().openapi({ description: 'The later of the header version and the catalog /Version.', example: '1.7' }),
    hasAttachments: z.boolean(),
    attachmentCount: z.number().int().min(0).openapi({ description: 'Distinct file specifications in the /EmbeddedFiles name tree.' }),
  })
  .openapi('ValidatePdfResponse');

export const ProblemDetails = z
  .object({
    type: z.string().openapi({ description: 'Stable URI; clients branch on its last segment.', example: 'https://errors.example/problems/invalid-pdf' }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    traceId: z.string(),
    errors: z.record(z.string(), z.array(z.string())).optional().openapi({ description: 'For `validation`: messages per offending field.' }),
  })
  .openapi('ProblemDetails');

export const problemContent = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemDetails } },
});
