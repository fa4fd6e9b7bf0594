#!/usr/bin/env node
/**
 * `swiss-doc`: the API's validate and extract operations on local files, for checking a folder of invoices.
 *
 * Every file goes through the real app in this process (`createApp(...).request`), sent as the API receives it: a JSON
 * body with the file's Base64 and its Content-Length. So each printed body is what the HTTP service would answer,
 * MAX_BODY_MB's 413 included; the CLI has no rules of its own. The engines run in this thread (`inProcessEngines`),
 * files one after another, and each result is printed as soon as it is known (JSON Lines on stdout). Logs never go to
 * stdout: at LOG_LEVEL=debug the request lines go to stderr, otherwise nothing is logged.
 *
 * Started by bin/swiss-doc.mjs: this source through tsx, or its bundle dist/node/cli.mjs (`npm run build:node`).
 */
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { access, constants, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createApp } from '../../app.ts';
import { ConfigError, readHttpConfig } from '../../config.ts';
import { extractRoute } from '../../http/extract-route.ts';
import { readEndpointConfig } from '../../idb/config.ts';
import { validateRoute } from '../../http/validate-route.ts';
import { jsonLogger } from '../../logger.ts';
import type { Logger } from '../../ports.ts';
import { layoutJson } from './cli-json.ts';
import { inProcessEngines, serverDeps } from '../shared/deps.ts';

const USAGE = `Usage: swiss-doc validate <file|dir>... [options]
       swiss-doc extract <file|dir>... [--references '<json array>'] [options]

Runs the service's operations on local files, in this process, and prints one JSON line per file:
  {"file":"<path>","status":<HTTP status>,"body":<the API's response body>}

  validate   as POST /api/v1/documents/validate: page count, size, PDF version, attachments
  extract    as POST /api/v1/documents/extract-swiss-qr-code: the Swiss QR-bill on the last page of a PDF, or in a
             photo or scan (*.jpg, *.jpeg, *.png, *.tif, *.tiff: read as a one-page document whose page is the image,
             its size from the resolution in the file or 300 dpi, EXIF orientation applied)

Options:
  --references <json>  extract: the request's references array, echoed in the answer (default [])
  -r, --recursive      also search the subdirectories of directories
  --pretty             pretty-print the result (one file only)
  -h, --help           print this text

Directories are searched for *.pdf, and for extract also for the images above (any letter case; hidden entries
skipped); files named explicitly are sent whatever their name: an image by its extension as the image itself (validate
answers 415 for it), any other file as a PDF. MAX_BODY_MB, PDF_TIMEOUT_MS, PDF_ENGINE_MEMORY_MB and PROBLEM_TYPE_BASE apply as in the
service; LOG_LEVEL=debug logs each request to stderr.

An extract answer's "warnings" name what a valid bill needs attention for (exit status 0 all the same):
IG 2.3 payload warnings, printed-differs (the printed payment part shows another account, creditor, reference,
currency, amount or debtor than the QR code: check before paying), printed-not-checked (no text layer to compare),
error-correction-level, no-swiss-cross and symbol-size (the symbol breaks the IG's rules).

Exit status: 0 every file answered 200; 1 at least one answered a problem (4xx); 2 usage error or unreadable path;
3 the tool itself failed.
`;

const EXIT = { ok: 0, problem: 1, usage: 2, failed: 3 } as const;
const ROUTES = { validate: validateRoute.path, extract: extractRoute.path } as const;
type Command = keyof typeof ROUTES;

class UsageError extends Error {}

interface Options {
  command: Command;
  paths: string[];
  recursive: boolean;
  pretty: boolean;
  /** extract: the references member, as compact JSON text. */
  references?: string;
}

/** A file to send: its path as printed and its size when listed (for Content-Length). */
interface Input {
  path: string;
  size: number;
}

function parseCommandLine(argv: string[]): Options | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        recursive: { type: 'boolean', short: 'r' },
        pretty: { type: 'boolean' },
        references: { type: 'string' },
      },
    });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help || positionals[0] === 'help') return 'help';
  const [command, ...paths] = positionals;
  if (command === undefined) throw new UsageError('no command given.');
  if (command !== 'validate' && command !== 'extract') throw new UsageError(`unknown command "${command}".`);
  if (paths.length === 0) throw new UsageError(`no files given to ${command}.`);

  let references: string | undefined;
  if (values.references !== undefined) {
    if (command !== 'extract') throw new UsageError('--references is an option of extract.');
    let value: unknown;
    try {
      value = JSON.parse(values.references);
    } catch {
      // not JSON: reported below
    }
    if (!Array.isArray(value))
      throw new UsageError(`--references must be a JSON array, as in --references '["INV-1"]'.`);
    // Sent compact (so the echo fits on one line) but otherwise as written: big numbers keep their digits.
    references = layoutJson(values.references);
  } else if (command === 'extract') references = '[]';
  return { command, paths, recursive: values.recursive ?? false, pretty: values.pretty ?? false, references };
}

/**
 * The files the arguments name, in order, each once: files as given, then the *.pdf of directories in code-point order
 * of their names. Every path that cannot be read is reported, so that nothing is sent when any is wrong.
 */
async function listInputs(
  paths: string[],
  recursive: boolean,
  wanted: (name: string) => boolean,
): Promise<{ inputs: Input[]; errors: string[] }> {
  const inputs: Input[] = [];
  const errors: string[] = [];
  const seen = new Set<string>();

  const addFile = async (path: string, size: number) => {
    try {
      await access(path, constants.R_OK);
    } catch (e) {
      errors.push(`${path}: ${reason(e)}`);
      return;
    }
    if (seen.has(resolve(path))) return;
    seen.add(resolve(path));
    inputs.push({ path, size });
  };

  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (e) {
      errors.push(`${dir}: ${reason(e)}`);
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        // Symbolic links to directories are not followed (no cycles), as find(1) does by default.
        if (recursive) await walk(path);
      } else if (wanted(entry.name) && (entry.isFile() || entry.isSymbolicLink())) {
        try {
          const info = await stat(path);
          if (info.isFile()) await addFile(path, info.size);
        } catch (e) {
          errors.push(`${path}: ${reason(e)}`);
        }
      }
    }
  };

  for (const path of paths) {
    let info;
    try {
      info = await stat(path);
    } catch (e) {
      errors.push(`${path}: ${reason(e)}`);
      continue;
    }
    if (info.isDirectory()) await walk(path);
    else if (info.isFile()) await addFile(path, info.size);
    else errors.push(`${path}: not a file or directory`);
  }
  return { inputs, errors };
}

function reason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  const known: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    ENOTDIR: 'not a directory',
    ELOOP: 'too many levels of symbolic links',
  };
  return (code && known[code]) ?? (e as Error).message;
}

/** Image files by extension, sent as the image itself (the API's image bodies). */
const IMAGE_TYPES: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  tif: 'image/tiff',
  tiff: 'image/tiff',
};

const imageTypeOf = (path: string): string | undefined =>
  IMAGE_TYPES[/\.([a-z]+)$/i.exec(path)?.[1]?.toLowerCase() ?? ''];

/** A file that could not be read while it was being sent. */
class ReadError extends Error {}

const ascii = (text: string) => Buffer.from(text, 'latin1');

/** The request body, streamed: `prefix`, the file's Base64 (encoded in whole 3-byte groups), `suffix`. */
async function* jsonBody(path: string, prefix: string, suffix: string): AsyncGenerator<Uint8Array> {
  yield ascii(prefix);
  let carry: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(path, { highWaterMark: 3 * 256 * 1024 })) {
    const bytes = carry.length > 0 ? Buffer.concat([carry, chunk as Buffer]) : (chunk as Buffer);
    const whole = bytes.length - (bytes.length % 3);
    yield ascii(bytes.toString('base64', 0, whole));
    carry = bytes.subarray(whole);
  }
  yield Buffer.from(carry.toString('base64') + suffix, 'utf8');
}

async function* fileBody(path: string): AsyncGenerator<Uint8Array> {
  for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024 })) yield chunk as Buffer;
}

/**
 * Sends one file to the app as an HTTP client would: Content-Type and Content-Length set, the body streamed. The app
 * refuses a body over MAX_BODY_MB from its Content-Length before reading any of it, so a huge file is never read.
 */
async function ask(app: ReturnType<typeof createApp>, route: string, input: Input, references: string | undefined) {
  const image = imageTypeOf(input.path);
  let chunks: AsyncGenerator<Uint8Array>;
  let headers: Record<string, string>;
  if (image) {
    // An image goes as itself, references in the query (the /file form of the API).
    if (references !== undefined) route += `?references=${encodeURIComponent(references)}`;
    chunks = fileBody(input.path);
    headers = { 'Content-Type': image, 'Content-Length': String(input.size) };
  } else {
    const prefix = '{"base64Pdf":"';
    const suffix = references === undefined ? '"}' : `","references":${references}}`;
    const length = prefix.length + 4 * Math.ceil(input.size / 3) + Buffer.byteLength(suffix);
    chunks = jsonBody(input.path, prefix, suffix);
    headers = { 'Content-Type': 'application/json', 'Content-Length': String(length) };
  }
  let readError: unknown;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      } catch (e) {
        readError = e;
        controller.error(e);
      }
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
  const init: RequestInit & { duplex: 'half' } = {
    method: 'POST',
    headers,
    body,
    duplex: 'half',
  };
  const response = await app.request(route, init);
  const text = await response.text();
  if (readError !== undefined) throw new ReadError(`${input.path}: ${reason(readError)}`);
  // Every answer of these routes is JSON; anything else would be printed as a JSON string rather than break the line.
  const json = /^application\/([a-z0-9.+-]*\+)?json\b/i.test(response.headers.get('content-type') ?? '');
  return { status: response.status, body: json ? layoutJson(text) : JSON.stringify(text) };
}

async function write(text: string): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

function usageError(message: string): number {
  process.stderr.write(`swiss-doc: ${message}\n\n${USAGE}`);
  return EXIT.usage;
}

async function main(argv: string[]): Promise<number> {
  let options: Options | 'help';
  try {
    options = parseCommandLine(argv);
  } catch (e) {
    if (e instanceof UsageError) return usageError(e.message);
    throw e;
  }
  if (options === 'help') {
    await write(USAGE);
    return EXIT.ok;
  }

  let config;
  try {
    // PORT and HOST mean nothing here, nor who may call: the app runs in this process for this user alone. A stray
    // value must not stop the tool.
    const serviceOnly = {
      PORT: undefined,
      HOST: undefined,
      API_KEYS_FILE: undefined,
      API_KEYS: undefined,
      AUTH_JWKS_URL: undefined,
      AUTH_JWT_ISSUER: undefined,
      AUTH_JWT_AUDIENCE: undefined,
    };
    config = readHttpConfig({ ...process.env, ...serviceOnly, AUTH: 'none' });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`swiss-doc: ${e.message}\n`);
    return EXIT.usage;
  }

  const images = options.command === 'extract';
  const wanted = (name: string) => /\.pdf$/i.test(name) || (images && imageTypeOf(name) !== undefined);
  const { inputs, errors } = await listInputs(options.paths, options.recursive, wanted);
  if (errors.length > 0) return usageError(`cannot read:\n${errors.map((e) => `  ${e}\n`).join('')}`.trimEnd());
  if (inputs.length === 0)
    return usageError(`no PDF${images ? ' or image' : ''} files in ${options.paths.join(', ')}.`);
  if (options.pretty && inputs.length > 1)
    return usageError(`--pretty prints one file's result; ${inputs.length} files were found.`);

  const logger: Logger =
    config.logLevel === 'debug' ? jsonLogger('debug', (line) => process.stderr.write(`${line}\n`)) : { log: () => {} };
  // The CLI only validates and extracts, so the bridge's settings (published in the WSDL) do not apply to it, nor
  // metrics: nothing scrapes them here.
  const app = createApp({
    ...serverDeps(config, readEndpointConfig({}), await inProcessEngines(config)),
    logger,
    metrics: undefined,
  });

  let exit: number = EXIT.ok;
  for (const input of inputs) {
    let answer;
    try {
      answer = await ask(app, ROUTES[options.command], input, options.references);
    } catch (e) {
      if (!(e instanceof ReadError)) throw e;
      process.stderr.write(`swiss-doc: cannot read ${e.message}\n`);
      exit = EXIT.usage;
      continue;
    }
    const line = `{"file":${JSON.stringify(input.path)},"status":${answer.status},"body":${answer.body}}`;
    await write(`${options.pretty ? layoutJson(line, 2) : line}\n`);
    if (answer.status !== 200 && exit === EXIT.ok) exit = EXIT.problem;
  }
  return exit;
}

// A reader that stops early (`| head`) closes the pipe: stop quietly.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code !== 'EPIPE') throw e;
  process.exit(process.exitCode ?? EXIT.ok);
});

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`swiss-doc: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = EXIT.failed;
}
