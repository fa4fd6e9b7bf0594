import type { Context } from 'hono';
import type { AppEnv } from './env.ts';
import { overloaded, tooLarge } from './inflight.ts';
import { JsonSyntaxError, JsonWithText, parseJsonObject, type RawMembers } from './json-object.ts';
import { MultipartError, boundaryOf, parseMultipart } from './multipart.ts';
import { Problem } from './problems.ts';
import type { ImageMedia } from '../image/media.ts';

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;
const MULTIPART_TYPE = /^multipart\/form-data\s*(;|$)/i;

/** What a document's bytes are: a PDF, or an image that extract reads as a one-page document (image-document.ts). */
export type DocumentMedia = 'pdf' | ImageMedia;

/** The media types of a body that is the file itself, as the OpenAPI document lists them. */
export const FILE_MEDIA_TYPES = {
  'application/pdf': 'pdf',
  'image/jpeg': 'jpeg',
  'image/png': 'png',
  'image/tiff': 'tiff',
} as const satisfies Record<string, DocumentMedia>;

/** The three ways a document comes (docs/contract/http.md, "Other request bodies"). */
export type BodyForm = 'json' | 'file' | 'multipart';
export const BODY_FORMS: readonly BodyForm[] = ['json', 'file', 'multipart'];

/**
 * A document request in any of its three forms (docs/contract/http.md, "Other request bodies"):
 * - `json`: the members of the JSON object (json-object.ts; `base64Pdf` a view of the body, still Base64);
 * - `file` (`application/pdf`, or an image type) and `multipart` (`multipart/form-data`): the file's bytes as a view of
 *   the one buffer the body was read into, what they are (`media`: from the Content-Type of the body or of the form's
 *   `file` part), and `references` (for extract) from the query parameter or the form's `references` part.
 */
export type DocumentBody =
  | { form: 'json'; members: Record<string, unknown> }
  | { form: 'file' | 'multipart'; file: Uint8Array; media: DocumentMedia; references: JsonWithText };

/** Which bodies a route takes: its forms (a form's own path takes only that form) and whether images are documents. */
export interface BodyRules {
  forms: readonly BodyForm[];
  images: boolean;
}

function fileMediaOf(contentType: string): DocumentMedia | undefined {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return (FILE_MEDIA_TYPES as Record<string, DocumentMedia>)[type];
}

function formOf(contentType: string): BodyForm | undefined {
  if (JSON_TYPE.test(contentType)) return 'json';
  if (MULTIPART_TYPE.test(contentType)) return 'multipart';
  return fileMediaOf(contentType) ? 'file' : undefined;
}

const FORM_TYPES: Record<BodyForm, string> = {
  json: 'application/json',
  file: 'application/pdf',
  multipart: 'multipart/form-data',
};

function unsupported(rules: BodyRules, detail?: string): Problem {
  const types = rules.forms.flatMap((form) =>
    form === 'file' && rules.images ? Object.keys(FILE_MEDIA_TYPES) : [FORM_TYPES[form]],
  );
  const list = types.length === 1 ? types[0] : `${types.slice(0, -1).join(', ')} or ${types.at(-1)}`;
  return new Problem('unsupported-media-type', detail ?? `Send the request body as ${list}.`);
}

const IMAGE_ON_VALIDATE =
  'validate reads PDFs only; an image (JPEG, PNG, TIFF) is read by POST /api/v1/documents/extract-swiss-qr-code.';

/**
 * Reads the body of a document request under MAX_BODY_MB (checked on Content-Length, and while streaming so a client
 * that lies about or omits it cannot make the service buffer more) and the request's share of MAX_INFLIGHT_MB.
 * `raw` names the JSON members kept as bytes or text (see json-object.ts).
 */
export async function readDocumentBody(
  c: Context<AppEnv>,
  maxBytes: number,
  raw: RawMembers,
  rules: BodyRules,
): Promise<DocumentBody> {
  const type = c.req.header('content-type') ?? '';
  const form = formOf(type);
  if (!form || !rules.forms.includes(form)) throw unsupported(rules);
  const declaredMedia = form === 'file' ? fileMediaOf(type)! : undefined;
  if (declaredMedia && declaredMedia !== 'pdf' && !rules.images) throw unsupported(rules, IMAGE_ON_VALIDATE);
  const boundary = form === 'multipart' ? boundaryOf(type) : undefined;
  if (form === 'multipart' && !boundary) {
    throw new Problem('validation', 'A multipart/form-data body needs a boundary parameter in its Content-Type.', {
      errors: { $: ['The Content-Type has no valid boundary parameter.'] },
    });
  }
  // Only this request's own limit is checked here: its share of MAX_INFLIGHT_MB was reserved on admission
  // (inflight.ts).
  const declared = Number(c.req.header('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const reservation = c.get('bodyReservation');
  const body = await readLimitedBytes(
    c.req.raw,
    maxBytes,
    Number.isInteger(declared) && declared > 0 ? declared : 0,
    (bytes) => reservation?.grow(bytes) ?? true,
  );
  if (form === 'json') return { form, members: parseJson(body, raw) };
  const wantsReferences = (raw.text ?? []).some((name) => name.toLowerCase() === 'references');
  if (form === 'file') {
    const query = c.req.query('references');
    return {
      form,
      file: body,
      media: declaredMedia!,
      references: referencesFrom(wantsReferences ? query : undefined, 'The references query parameter'),
    };
  }
  let parts;
  try {
    parts = parseMultipart(body, boundary!);
  } catch (e) {
    if (!(e instanceof MultipartError)) throw e;
    throw new Problem('validation', 'The request body is not valid multipart/form-data.', {
      errors: { $: [e.message] },
    });
  }
  // Part names bind ignoring letter case, as JSON members do; the first part of a name counts.
  const part = (name: string) => parts.find((p) => p.name.toLowerCase() === name);
  const file = part('file');
  if (!file)
    throw new Problem('validation', 'The file part is required.', { errors: { file: ['The file part is required.'] } });
  // The part's own Content-Type says whether it is an image (curl -F sets it from the file name, generated clients from
  // the caller); anything else is a PDF, so a PNG renamed .pdf answers as it does in the JSON form.
  const media = fileMediaOf(file.contentType ?? '') ?? 'pdf';
  if (media !== 'pdf' && !rules.images) throw unsupported(rules, IMAGE_ON_VALIDATE);
  const referencesPart = wantsReferences ? part('references') : undefined;
  return {
    form,
    file: file.body,
    media,
    references: referencesFrom(referencesPart && utf8(referencesPart.body, 'references'), 'The references part'),
  };
}

function parseJson(body: Uint8Array, raw: RawMembers): Record<string, unknown> {
  try {
    return parseJsonObject(body, raw);
  } catch (e) {
    if (e instanceof JsonSyntaxError) {
      throw new Problem('validation', 'The request body is not a valid JSON object.', { errors: { $: [e.message] } });
    }
    throw e;
  }
}

/** `references` given as text (a JSON array), `[]` when absent; kept with its text, echoed as written. */
function referencesFrom(text: string | undefined, what: string): JsonWithText {
  if (text === undefined) return new JsonWithText([], '[]');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (!Array.isArray(value)) {
    const message = `${what} must be a JSON array, for example ["INV-2026-0042"].`;
    throw new Problem('validation', message, { errors: { references: [message] } });
  }
  return new JsonWithText(value, text.trim());
}

function utf8(bytes: Uint8Array, field: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    const message = `The ${field} part is not valid UTF-8.`;
    throw new Problem('validation', message, { errors: { [field]: [message] } });
  }
}

/**
 * The body in one buffer, sized from Content-Length when given (one copy), else grown by doubling. Each size the
 * buffer takes is first reserved through `reserve` (the request's share of MAX_INFLIGHT_MB); a refusal stops reading.
 */
async function readLimitedBytes(
  request: Request,
  maxBytes: number,
  declared: number,
  reserve: (bytes: number) => boolean,
): Promise<Uint8Array<ArrayBuffer>> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const allocate = async (bytes: number) => {
    if (reserve(bytes)) return new Uint8Array(bytes);
    await reader.cancel();
    throw overloaded(
      'The service is reading or working on as many documents as MAX_INFLIGHT_MB allows (this body came without Content-Length); retry later.',
    );
  };
  let buffer = await allocate(declared || 64 * 1024);
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (length + value.byteLength > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    if (length + value.byteLength > buffer.length) {
      const grown = await allocate(Math.min(maxBytes, Math.max(buffer.length * 2, length + value.byteLength)));
      grown.set(buffer.subarray(0, length));
      buffer = grown;
    }
    buffer.set(value, length);
    length += value.byteLength;
  }
  return buffer.subarray(0, length);
}

/**
 * Binds JSON members to the given property names ignoring letter case, as ASP.NET Core's web defaults do
 * (`Base64Pdf`, `base64Pdf` and `BASE64PDF` all bind). When several spellings are present the last one wins.
 */
export function bindCaseInsensitive<K extends string>(
  body: Record<string, unknown>,
  names: readonly K[],
): Partial<Record<K, unknown>> {
  const byLower = new Map(names.map((n) => [n.toLowerCase(), n]));
  const bound: Partial<Record<K, unknown>> = {};
  for (const [key, value] of Object.entries(body)) {
    const name = byLower.get(key.toLowerCase());
    if (name) bound[name] = value;
  }
  return bound;
}
