import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { KNOWN_VERSIONS, findHeader } from '../pdf/syntax/structure.ts';
import type { QrExtractor } from '../qr/extractor.ts';
import { qrBillWarnings } from '../qr/warnings.ts';
import type { AppEnv } from './env.ts';
import { JsonWithText } from './json-object.ts';
import { Problem } from './problems.ts';
import {
  ExtractSwissQrCodeForm,
  PdfBody,
  ReferencesQuery,
  serviceResponses,
  unsupportedMediaType,
} from './body-schemas.ts';
import { bindCaseInsensitive, readDocumentBody } from './request-body.ts';
import { ExtractSwissQrCodeRequest, ExtractSwissQrCodeResponse, SwissQrCodeData, problemContent } from './schemas.ts';
import { readPdfFromBody } from './validate-route.ts';

export const extractRoute = createRoute({
  method: 'post',
  path: '/api/v1/documents/extract-swiss-qr-code',
  operationId: 'ExtractSwissQrCode',
  summary: 'Read the Swiss QR-bill on the last page of a PDF',
  tags: ['Documents'],
  request: {
    query: ReferencesQuery,
    body: {
      required: true,
      description:
        'The PDF as Base64 in JSON, as the file itself (`application/pdf`, references in the query), or as the `file` part of a form (and a `references` part).',
      content: {
        'application/json': { schema: ExtractSwissQrCodeRequest },
        'application/pdf': { schema: PdfBody },
        'multipart/form-data': { schema: ExtractSwissQrCodeForm },
      },
    },
  },
  responses: {
    200: {
      description:
        'The first valid QR-bill in reading order on the last page, and what it may need attention for (`warnings`).',
      content: { 'application/json': { schema: ExtractSwissQrCodeResponse } },
    },
    400: problemContent('`validation`, `invalid-base64`, `invalid-pdf`, `encrypted-pdf` or `pdf-too-complex`.'),
    404: problemContent(
      '`qr-code-not-found`: no valid QR-bill on the last page; `rejected` says why for each QR code found.',
    ),
    413: problemContent('`payload-too-large`: the body exceeds MAX_BODY_MB.'),
    415: unsupportedMediaType,
    500: problemContent('`internal`: an unexpected error; no details are leaked.'),
    ...serviceResponses,
  },
});

export function registerExtractRoute(
  app: OpenAPIHono<AppEnv>,
  options: { qr: QrExtractor; maxBodyBytes: number },
): void {
  app.openAPIRegistry.registerPath(extractRoute);
  app.post(extractRoute.path, async (c) => {
    const read = await readDocumentBody(c, options.maxBodyBytes, { bytes: ['base64Pdf'], text: ['references'] });
    // A PDF or form body carries the bytes themselves, and references (default []) from the query or a part.
    const body = read.form === 'json' ? read.members : { references: read.references };
    const bound = bindCaseInsensitive(body, ['references', 'base64Pdf']);
    const references = ExtractSwissQrCodeRequest.shape.references.safeParse(bound.references);
    if (!references.success) {
      const missing = !(bound.references instanceof JsonWithText) || bound.references.value === null;
      const message = missing
        ? 'The references field is required (an empty array is allowed).'
        : 'The references field must be an array.';
      // Like ASP.NET's model validation, name every missing field at once.
      const errors: Record<string, string[]> = { references: [message] };
      if (bound.base64Pdf === undefined || bound.base64Pdf === null)
        errors.base64Pdf = ['The base64Pdf field is required.'];
      throw new Problem('validation', message, { errors });
    }
    const pdf = read.form === 'json' ? readPdfFromBody(body) : read.pdf;
    const header = findHeader(pdf);
    if (!header || !KNOWN_VERSIONS.includes(header.version))
      throw new Problem('invalid-pdf', 'No %PDF-n.n header of a known version in the first 1024 bytes.');

    const outcome = await options.qr.scan(pdf);
    switch (outcome.status) {
      case 'found':
        // References go back as the client wrote them (big numbers, key order and all), not re-serialized.
        return c.body(
          `{"references":${references.data.text},"qrCodeData":${JSON.stringify(SwissQrCodeData.parse(outcome.bill))},"warnings":${JSON.stringify([...qrBillWarnings(outcome.bill), ...outcome.warnings])}}`,
          200,
          { 'Content-Type': 'application/json' },
        );
      case 'not-found':
        throw new Problem(
          'qr-code-not-found',
          outcome.rejected.length === 0
            ? 'The last page holds no QR code.'
            : `The last page holds ${outcome.rejected.length} QR code(s), none of them a valid Swiss QR-bill.`,
          { rejected: outcome.rejected },
        );
      case 'needs-password':
        throw new Problem('encrypted-pdf', 'The PDF is encrypted and needs a password to open.');
      case 'unreadable':
        throw new Problem('invalid-pdf', 'The PDF cannot be opened or its last page cannot be loaded.');
      case 'too-complex':
        throw new Problem('pdf-too-complex', `The PDF exceeds the processing limits: ${outcome.reason}.`);
    }
  });
}
