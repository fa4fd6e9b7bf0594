import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { decodeBase64Strict } from '../base64.ts';
import { validatePdf, type ValidateOptions } from '../pdf/validate.ts';
import type { AppEnv } from './env.ts';
import { Problem } from './problems.ts';
import { PdfBody, ValidatePdfForm, serviceResponses, unsupportedMediaType } from './body-schemas.ts';
import { bindCaseInsensitive, readDocumentBody } from './request-body.ts';
import { ValidatePdfRequest, ValidatePdfResponse, problemContent } from './schemas.ts';

export const validateRoute = createRoute({
  method: 'post',
  path: '/api/v1/documents/validate',
  operationId: 'ValidatePdf',
  summary: 'Validate a PDF and report page count, size, version and attachments',
  tags: ['Documents'],
  request: {
    body: {
      required: true,
      description:
        'The PDF as Base64 in JSON, as the file itself (`application/pdf`), or as the `file` part of a form.',
      content: {
        'application/json': { schema: ValidatePdfRequest },
        'application/pdf': { schema: PdfBody },
        'multipart/form-data': { schema: ValidatePdfForm },
      },
    },
  },
  responses: {
    200: { description: 'The PDF is valid.', content: { 'application/json': { schema: ValidatePdfResponse } } },
    400: problemContent('`validation`, `invalid-base64`, `invalid-pdf`, `encrypted-pdf` or `pdf-too-complex`.'),
    413: problemContent('`payload-too-large`: the body exceeds MAX_BODY_MB.'),
    415: unsupportedMediaType,
    500: problemContent('`internal`: an unexpected error; no details are leaked.'),
    ...serviceResponses,
  },
});

/**
 * Decodes the `base64Pdf` member of a request: missing or null is a validation problem naming the field, anything
 * else that is not strict Base64 is `invalid-base64`.
 */
export function readPdfFromBody(body: Record<string, unknown>): Uint8Array {
  const bound = bindCaseInsensitive(body, ['base64Pdf']);
  if (bound.base64Pdf === undefined || bound.base64Pdf === null) {
    throw new Problem('validation', 'The base64Pdf field is required.', {
      errors: { base64Pdf: ['The base64Pdf field is required.'] },
    });
  }
  const request = ValidatePdfRequest.safeParse(bound);
  const pdf = request.success ? decodeBase64Strict(request.data.base64Pdf.bytes) : undefined;
  if (!pdf) throw new Problem('invalid-base64', 'base64Pdf must be a string of standard, padded Base64.');
  return pdf;
}

export function registerValidateRoute(
  app: OpenAPIHono<AppEnv>,
  options: ValidateOptions & { maxBodyBytes: number },
): void {
  app.openAPIRegistry.registerPath(validateRoute);
  // Bound by hand rather than through app.openapi(): members bind case-insensitively, which zod's validator cannot do.
  app.post(validateRoute.path, async (c) => {
    const body = await readDocumentBody(c, options.maxBodyBytes, { bytes: ['base64Pdf'] });
    const pdf = body.form === 'json' ? readPdfFromBody(body.members) : body.pdf;
    const result = await validatePdf(pdf, options);
    if (!result.ok) throw new Problem(result.problem, result.detail);
    return c.json(ValidatePdfResponse.parse(result.value), 200);
  });
}
