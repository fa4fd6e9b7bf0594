import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { imageDocument } from '../image/image-document.ts';
import { KNOWN_VERSIONS, findHeader } from '../pdf/syntax/structure.ts';
import type { QrExtractor } from '../qr/extractor.ts';
import { qrBillWarnings } from '../qr/warnings.ts';
import type { AppEnv } from './env.ts';
import { JsonWithText } from './json-object.ts';
import { Problem } from './problems.ts';
import { ExtractSwissQrCodeForm, FileBody, ReferencesQuery, serviceResponses } from './body-schemas.ts';
import { documentPaths, FORM_PATH_SUFFIX } from './form-routes.ts';
import {
  type BodyForm,
  bindCaseInsensitive,
  type DocumentMedia,
  FILE_MEDIA_TYPES,
  readDocumentBody,
} from './request-body.ts';
import { ExtractSwissQrCodeRequest, ExtractSwissQrCodeResponse, SwissQrCodeData, problemContent } from './schemas.ts';
import { readPdfFromBody } from './validate-route.ts';

const PATH = '/api/v1/documents/extract-swiss-qr-code';

const responses = {
  200: {
    description:
      'The first valid QR-bill in reading order on the last page, and what it may need attention for (`warnings`).',
    content: { 'application/json': { schema: ExtractSwissQrCodeResponse } },
  },
  400: problemContent(
    '`validation`, `invalid-base64`, `invalid-pdf`, `invalid-image`, `encrypted-pdf` or `pdf-too-complex`.',
  ),
  404: problemContent(
    '`qr-code-not-found`: no valid QR-bill on the last page; `rejected` says why for each QR code found.',
  ),
  413: problemContent('`payload-too-large`: the body exceeds MAX_BODY_MB.'),
  415: problemContent('`unsupported-media-type`: the body is not of a media type this operation takes.'),
  500: problemContent('`internal`: an unexpected error; no details are leaked.'),
  ...serviceResponses,
};

const common = {
  method: 'post' as const,
  summary: 'Read the Swiss QR-bill on the last page of a PDF, or in a photo or scan (JPEG, PNG, TIFF)',
  tags: ['Documents'],
  responses,
};

const IMAGES =
  'An image is read as a one-page document whose page is the image (its size from the resolution in the file, 300 dpi when it has none; EXIF orientation applied).';

/** The JSON form; its path also takes the other two forms (form-routes.ts). */
export const extractRoute = createRoute({
  ...common,
  path: PATH,
  operationId: 'ExtractSwissQrCode',
  description: `The PDF as Base64 in JSON. The same path also takes the file itself (a PDF or an image, \`references\` in the query) or a form with a \`file\` part and a \`references\` part, described as their own operations at \`${PATH}${FORM_PATH_SUFFIX.file}\` and \`${PATH}${FORM_PATH_SUFFIX.multipart}\`.`,
  request: { body: { required: true, content: { 'application/json': { schema: ExtractSwissQrCodeRequest } } } },
});

export const extractFileRoute = createRoute({
  ...common,
  path: PATH + FORM_PATH_SUFFIX.file,
  operationId: 'ExtractSwissQrCodeFromFile',
  description: `The file itself as the body: a PDF, or a photo or scan. ${IMAGES} Answers as ExtractSwissQrCode with the same document.`,
  request: {
    query: ReferencesQuery,
    body: {
      required: true,
      content: Object.fromEntries(Object.keys(FILE_MEDIA_TYPES).map((type) => [type, { schema: FileBody }])),
    },
  },
});

export const extractFormRoute = createRoute({
  ...common,
  path: PATH + FORM_PATH_SUFFIX.multipart,
  operationId: 'ExtractSwissQrCodeFromForm',
  description: `The PDF or image as the \`file\` part of a form, \`references\` as a part. ${IMAGES} Answers as ExtractSwissQrCode.`,
  request: { body: { required: true, content: { 'multipart/form-data': { schema: ExtractSwissQrCodeForm } } } },
});

export function registerExtractRoute(
  app: OpenAPIHono<AppEnv>,
  options: { qr: QrExtractor; maxBodyBytes: number },
): void {
  for (const route of [extractRoute, extractFileRoute, extractFormRoute]) app.openAPIRegistry.registerPath(route);
  for (const { path, forms } of documentPaths(PATH)) app.post(path, (c) => extract(c, forms, options));
}

async function extract(
  c: Context<AppEnv>,
  forms: readonly BodyForm[],
  options: { qr: QrExtractor; maxBodyBytes: number },
): Promise<Response> {
  const read = await readDocumentBody(
    c,
    options.maxBodyBytes,
    { bytes: ['base64Pdf'], text: ['references'] },
    { forms, images: true },
  );
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
  const pdf = read.form === 'json' ? readPdfFromBody(body) : documentOf(read.file, read.media);
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
}

/** The PDF a file body stands for: itself, or the one-page document of an image (invalid-image when it is not one). */
function documentOf(file: Uint8Array, media: DocumentMedia): Uint8Array {
  if (media === 'pdf') return file;
  const document = imageDocument(file, media);
  if (document.ok) return document.pdf;
  throw new Problem(document.problem, document.detail);
}
