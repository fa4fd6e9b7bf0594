import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { decodeBase64Strict } from '../base64.ts';
import { validatePdf, type ValidateOptions } from '../pdf/validate.ts';
import type { AppEnv } from './env.ts';
import { documentPaths, FORM_PATH_SUFFIX } from './form-routes.ts';
import { Problem } from './problems.ts';
import { PdfBody, ValidatePdfForm, serviceResponses } from './body-schemas.ts';
import { bindCaseInsensitive, readDocumentBody } from './request-body.ts';
import { ValidatePdfRequest, ValidatePdfResponse, problemContent } from './schemas.ts';

const PATH = '/api/v1/documents/validate';

const responses = {
  200: { description: 'The PDF is valid.', content: { 'application/json': { schema: ValidatePdfResponse } } },
  400: problemContent('`validation`, `invalid-base64`, `invalid-pdf`, `encrypted-pdf` or `pdf-too-complex`.'),
  413: problemContent('`payload-too-large`: the body exceeds MAX_BODY_MB.'),
  415: problemContent(
    '`unsupported-media-type`: the body is not of the media type this operation takes, or is an image (validate reads PDFs only).',
  ),
  500: problemContent('`internal`: an unexpected error; no details are leaked.'),
  ...serviceResponses,
};

const common = {
  method: 'post' as const,
  summary: 'Validate a PDF and report page count, size, version and attachments',
  tags: ['Documents'],
  responses,
};

/** The JSON form; its path also takes the other two forms (form-routes.ts). */
export const validateRoute = createRoute({
  ...common,
  path: PATH,
  operationId: 'ValidatePdf',
  description: `The PDF as Base64 in JSON. The same path also takes the PDF itself (\`application/pdf\`) or a form with a \`file\` part, described as their own operations at \`${PATH}${FORM_PATH_SUFFIX.file}\` and \`${PATH}${FORM_PATH_SUFFIX.multipart}\`.`,
  request: {
    body: { required: true, content: { 'application/json': { schema: ValidatePdfRequest } } },
  },
});

export const validateFileRoute = createRoute({
  ...common,
  path: PATH + FORM_PATH_SUFFIX.file,
  operationId: 'ValidatePdfFromFile',
  description: 'The PDF itself as the body. Answers as ValidatePdf with the same bytes.',
  request: { body: { required: true, content: { 'application/pdf': { schema: PdfBody } } } },
});

export const validateFormRoute = createRoute({
  ...common,
  path: PATH + FORM_PATH_SUFFIX.multipart,
  operationId: 'ValidatePdfFromForm',
  description: 'The PDF as the `file` part of a form (a file picker in /docs). Answers as ValidatePdf.',
  request: { body: { required: true, content: { 'multipart/form-data': { schema: ValidatePdfForm } } } },
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
  for (const route of [validateRoute, validateFileRoute, validateFormRoute]) app.openAPIRegistry.registerPath(route);
  // Bound by hand rather than through app.openapi(): members bind case-insensitively, which zod's validator cannot do.
  for (const { path, forms } of documentPaths(PATH)) {
    app.post(path, async (c) => {
      const body = await readDocumentBody(c, options.maxBodyBytes, { bytes: ['base64Pdf'] }, { forms, images: false });
      const pdf = body.form === 'json' ? readPdfFromBody(body.members) : body.file;
      const result = await validatePdf(pdf, options);
      if (!result.ok) throw new Problem(result.problem, result.detail);
      return c.json(ValidatePdfResponse.parse(result.value), 200);
    });
  }
}
