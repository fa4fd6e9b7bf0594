import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** Every problem this service answers with; the name is the last segment of the `type` URI clients branch on. */
export const PROBLEMS = {
  validation: { status: 400, title: 'One or more validation errors occurred.' },
  'invalid-base64': { status: 400, title: 'The PDF is not valid Base64.' },
  'invalid-pdf': { status: 400, title: 'The file is not a valid PDF.' },
  'invalid-image': { status: 400, title: 'The file is not a valid image.' },
  'encrypted-pdf': { status: 400, title: 'The PDF is encrypted.' },
  'pdf-too-complex': { status: 400, title: 'The PDF exceeds the processing limits.' },
  unauthorized: { status: 401, title: 'Authentication is required.' },
  'qr-code-not-found': { status: 404, title: 'No valid Swiss QR-bill on the last page.' },
  'not-found': { status: 404, title: 'Not found.' },
  'method-not-allowed': { status: 405, title: 'Method not allowed.' },
  'payload-too-large': { status: 413, title: 'The request body is too large.' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type.' },
  internal: { status: 500, title: 'An internal error occurred.' },
  overloaded: { status: 503, title: 'The service is busy; retry later.' },
} as const satisfies Record<string, { status: ContentfulStatusCode; title: string }>;

export type ProblemName = keyof typeof PROBLEMS;

/** RFC 9457 problem details, with `traceId` as ASP.NET writes it and extension members where a problem has them. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  traceId: string;
  [extension: string]: unknown;
}

/** Thrown anywhere in request handling to answer with a problem; the app's error handler renders it. */
export class Problem extends Error {
  constructor(
    readonly problem: ProblemName,
    readonly detail: string,
    readonly extensions: Record<string, unknown> = {},
    /** Response headers that belong to the problem (`WWW-Authenticate`, `Retry-After`). */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'Problem';
  }
}

export function problemResponse(c: Context, typeBase: string, p: Problem): Response {
  const { status, title } = PROBLEMS[p.problem];
  const body: ProblemDetails = {
    type: typeBase + p.problem,
    title,
    status,
    detail: p.detail,
    traceId: c.get('traceId'),
    ...p.extensions,
  };
  return c.body(JSON.stringify(body), status, { ...p.headers, 'Content-Type': 'application/problem+json' });
}
