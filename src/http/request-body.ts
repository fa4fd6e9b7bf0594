import type { Context } from 'hono';
import { JsonSyntaxError, parseJsonObject, type RawMembers } from './json-object.ts';
import { Problem } from './problems.ts';

/**
 * Reads a JSON object body under a byte limit. The limit is enforced while streaming, so a client that lies about
 * (or omits) Content-Length cannot make the service buffer more than the limit. Members named in `raw` keep their
 * bytes or text (see json-object.ts).
 */
export async function readJsonObject(c: Context, maxBytes: number, raw: RawMembers = {}): Promise<Record<string, unknown>> {
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(type)) {
    throw new Problem('unsupported-media-type', 'Send the request body as application/json.');
  }
  const declared = Number(c.req.header('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const body = await readLimitedBytes(c.req.raw, maxBytes, Number.isInteger(declared) && declared > 0 ? declared : 0);
  try {
    return parseJsonObject(body, raw);
  } catch (e) {
    if (e instanceof JsonSyntaxError) {
      throw new Problem('validation', 'The request body is not a valid JSON object.', { errors: { $: [e.message] } });
    }
    throw e;
  }
}

/** The body in one buffer, sized from Content-Length when given (one copy), else grown by doubling. */
async function readLimitedBytes(request: Request, maxBytes: number, declared: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  let buffer = new Uint8Array(declared || 64 * 1024);
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (length + value.byteLength > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    if (length + value.byteLength > buffer.length) {
      const grown = new Uint8Array(Math.min(maxBytes, Math.max(buffer.length * 2, length + value.byteLength)));
      grown.set(buffer.subarray(0, length));
      buffer = grown;
    }
    buffer.set(value, length);
    length += value.byteLength;
  }
  return buffer.subarray(0, length);
}

const tooLarge = (maxBytes: number) =>
  new Problem('payload-too-large', `The request body is larger than ${Math.round(maxBytes / 1048576)} MB (MAX_BODY_MB).`);

/**
 * Binds JSON members to the given property names ignoring letter case, as ASP.NET Core's web defaults do
 * (`Base64Pdf`, `base64Pdf` and `BASE64PDF` all bind). When several spellings are present the last one wins.
 */
export function bindCaseInsensitive<K extends string>(body: Record<string, unknown>, names: readonly K[]): Partial<Record<K, unknown>> {
  const byLower = new Map(names.map((n) => [n.toLowerCase(), n]));
  const bound: Partial<Record<K, unknown>> = {};
  for (const [key, value] of Object.entries(body)) {
    const name = byLower.get(key.toLowerCase());
    if (name) bound[name] = value;
  }
  return bound;
}
