/**
 * multipart/form-data (RFC 7578 over RFC 2046 §5.1) read in place: the body is already in one buffer, and each part's
 * content comes back as a view of it, so a PDF sent as a form's file part is never copied.
 */

export interface FormPart {
  /** The `name` of its Content-Disposition. */
  name: string;
  filename: string | undefined;
  contentType: string | undefined;
  /** A view of the body's bytes. */
  body: Uint8Array;
}

export class MultipartError extends Error {
  override name = 'MultipartError';
}

const CR = 0x0d;
const LF = 0x0a;
const DASH = 0x2d;
const MAX_HEADER_BYTES = 16 * 1024;
const enc = new TextEncoder();

/** The boundary parameter of a multipart/form-data Content-Type (1 to 70 characters, RFC 2046), or undefined. */
export function boundaryOf(contentType: string): string | undefined {
  const match = /;\s*boundary\s*=\s*(?:"((?:[^"\\]|\\.){1,70})"|([^\s;"]{1,70}))\s*(?:;|$)/i.exec(contentType);
  const boundary = match?.[1]?.replace(/\\(.)/g, '$1') ?? match?.[2];
  return boundary && /^[0-9A-Za-z'()+_,\-./:=? ]*[0-9A-Za-z'()+_,\-./:=?]$/.test(boundary) ? boundary : undefined;
}

/** The parts of a multipart body, in order. Throws MultipartError when the body does not follow the format. */
export function parseMultipart(body: Uint8Array, boundary: string): FormPart[] {
  const delimiter = enc.encode(`\r\n--${boundary}`);
  const parts: FormPart[] = [];
  // The first delimiter may open the body, without the CRLF that belongs to every later one.
  let pos = startsWith(body, delimiter.subarray(2), 0) ? 0 : indexOfBytes(body, delimiter, 0);
  if (pos < 0) throw new MultipartError('The body holds no part delimited by the boundary of its Content-Type.');
  pos += pos === 0 && body[0] === DASH ? delimiter.length - 2 : delimiter.length;
  for (;;) {
    if (body[pos] === DASH && body[pos + 1] === DASH) return parts; // the close delimiter; an epilogue is ignored
    pos = skipTransportPadding(body, pos);
    if (body[pos] !== CR || body[pos + 1] !== LF)
      throw new MultipartError('Expected a line break after a boundary delimiter.');
    pos += 2;
    const headersEnd = indexOfBytes(body, CRLFCRLF, pos, pos + MAX_HEADER_BYTES);
    if (headersEnd < 0) throw new MultipartError('A part has no end of its headers.');
    const contentStart = headersEnd + 4;
    const contentEnd = indexOfBytes(body, delimiter, contentStart);
    if (contentEnd < 0) throw new MultipartError('The body ends before its closing boundary delimiter.');
    parts.push(partOf(decodeHeaders(body.subarray(pos, headersEnd)), body.subarray(contentStart, contentEnd)));
    pos = contentEnd + delimiter.length;
  }
}

const CRLFCRLF = Uint8Array.of(CR, LF, CR, LF);

function skipTransportPadding(b: Uint8Array, pos: number): number {
  while (b[pos] === 0x20 || b[pos] === 0x09) pos++;
  return pos;
}

function decodeHeaders(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new MultipartError('Part headers are not valid UTF-8.');
  }
}

function partOf(headerBlock: string, body: Uint8Array): FormPart {
  const headers = new Map<string, string>();
  for (const line of headerBlock.split('\r\n')) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new MultipartError('A part header line has no name.');
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const disposition = headers.get('content-disposition');
  if (!disposition || !/^form-data\s*(;|$)/i.test(disposition))
    throw new MultipartError('A part has no Content-Disposition: form-data header.');
  const params = dispositionParams(disposition);
  const name = params.get('name');
  if (name === undefined) throw new MultipartError('A part has no name.');
  return { name, filename: params.get('filename'), contentType: headers.get('content-type'), body };
}

/** `; name=value` or `; name="quoted \"value\""` parameters after the disposition type. */
function dispositionParams(value: string): Map<string, string> {
  const params = new Map<string, string>();
  const re = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  for (let m = re.exec(value); m; m = re.exec(value)) {
    params.set(m[1]!.toLowerCase(), m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]!.trim());
  }
  return params;
}

function startsWith(b: Uint8Array, prefix: Uint8Array, at: number): boolean {
  if (at + prefix.length > b.length) return false;
  for (let i = 0; i < prefix.length; i++) if (b[at + i] !== prefix[i]) return false;
  return true;
}

/**
 * First index of `needle` in `haystack` at or after `from` (and starting before `until`), or -1: Boyer-Moore-Horspool,
 * which skips up to the needle's length per step, so finding a 70-byte delimiter after a 40 MB file part takes
 * milliseconds.
 */
export function indexOfBytes(haystack: Uint8Array, needle: Uint8Array, from = 0, until = haystack.length): number {
  const n = needle.length;
  const last = n - 1;
  const end = Math.min(haystack.length, until + last);
  if (n === 0) return Math.max(0, from);
  const skip = new Uint32Array(256).fill(n);
  for (let i = 0; i < last; i++) skip[needle[i]!] = last - i;
  for (let pos = Math.max(0, from); pos + last < end; pos += skip[haystack[pos + last]!]!) {
    let i = last;
    while (i >= 0 && haystack[pos + i] === needle[i]) i--;
    if (i < 0) return pos;
  }
  return -1;
}
