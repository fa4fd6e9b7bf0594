import type { Context } from 'hono';
import { Problem } from './problems.ts';

/**
 * Reads a JSON object body under a byte limit. The limit is enforced while streaming, so a client that lies about
 * (or omits) Content-Length cannot make the service buffer more than the limit.
 */
export async function readJsonObject(c: Context, maxBytes: number): Promise<Record<string, unknown>> {
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(type)) {
    throw new Problem('unsupported-media-type', 'Send the request body as application/json.');
  }
  const declared = Number(c.req.header('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);

  const text = await readLimitedText(c.req.raw, maxBytes);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new Problem('validation', 'The request body is not valid JSON.', { errors: { $: [(e as Error).message] } });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Problem('validation', 'The request body must be a JSON object.', { errors: { $: ['Expected a JSON object.'] } });
  }
  return parsed as Record<string, unknown>;
}

async function readLimitedText(request: Request, maxBytes: number): Promise<string> {
  if (!request.body) return '';
  const reader = request.body.getReader();
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const parts: string[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel();
        throw tooLarge(maxBytes);
      }
      parts.push(decoder.decode(value, { stream: true }));
    }
    parts.push(decoder.decode());
  } catch (e) {
    if (e instanceof Problem) throw e;
    if (e instanceof TypeError) throw new Problem('validation', 'The request body is not valid UTF-8 JSON.', { errors: { $: ['Invalid UTF-8.'] } });
    throw e;
  }
  return parts.join('');
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
