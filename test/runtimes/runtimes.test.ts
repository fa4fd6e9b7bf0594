/**
 * Smoke test across runtimes: the Node, Bun and Deno entries run as child processes, exactly as their npm scripts
 * start them, and must answer the same requests with the same status, content type and body as Node (the random
 * `traceId` aside).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  serveJwks,
  sha256Hex,
  signingKey,
  signJwt,
  unsignedJwt,
  type JwksServer,
  type SigningKey,
} from '../support/http/jwt.ts';
import { freePort } from '../support/net.ts';
import { IMAGE_CASES } from './workers/cases.ts';
import { NODE_ANSWERS } from './workers/node-answers.ts';
import { simplePdf, toBase64 } from '../support/pdf/pdf-builder.ts';
import { PRINTED_BILLS } from '../support/qr/printed-bills.ts';
import { PAYMENT_PART_CODE, SAMPLE_BILL, billCode, qrBillPdf, spcCode, textCode } from '../support/qr/qr-bills.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const START_TIMEOUT_MS = 20_000;
const RUNTIMES = { node: 'start', bun: 'start:bun', deno: 'start:deno' } as const;
type Runtime = keyof typeof RUNTIMES;

interface Case {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  contentType?: string;
  body?: string | Uint8Array;
  /** Request headers; `jwt:<name>` stands for a token signed in beforeAll. Default: the API key as Bearer. */
  headers?: Record<string, string>;
  /** Node's status, checked so that runtimes agreeing on a broken answer do not pass. */
  status: number;
  /** Compare the body as text, not as parsed JSON (answers echoing the client's spelling). */
  raw?: boolean;
}

const validate = (name: string, status: number, body: string, contentType = 'application/json'): Case => ({
  name,
  method: 'POST',
  path: '/api/v1/documents/validate',
  contentType,
  body,
  status,
});
const pdfBody = (pdf: Uint8Array) => JSON.stringify({ base64Pdf: toBase64(pdf) });
const enc = new TextEncoder();

const EXTRACT = '/api/v1/documents/extract-swiss-qr-code';
/** References the service must echo as written: a number beyond 2^53, a 1.0, keys out of order. */
const REFERENCES = '[12345678901234567890, 1.0, {"z": "INV-2026-0042", "a": null}]';
const extract = (name: string, status: number, pdf: Uint8Array): Case => ({
  name,
  method: 'POST',
  path: EXTRACT,
  contentType: 'application/json',
  body: `{"references": ${REFERENCES}, "base64Pdf": "${toBase64(pdf)}"}`,
  status,
  raw: status === 200,
});
const sampleBill = { code: billCode(SAMPLE_BILL), ...PAYMENT_PART_CODE };
type QrWarning = { code: string; fields: string[] };
/** A valid bill with a K creditor and version 0201: answered with IG 2.3 warnings. */
const legacyBill = {
  code: spcCode(
    [
      'SPC',
      '0201',
      '1',
      'CH4431999123000889012',
      'K',
      'Robert Schneider AG',
      'Rue du Lac 1268',
      '2501 Biel',
      '',
      '',
      'CH',
      '',
      '',
      '',
      '',
      '',
      '',
      '',
      '10.00',
      'CHF',
      '',
      '',
      '',
      '',
      '',
      '',
      '',
      'QRR',
      '210000000003139471430009017',
      'Facture 12 €',
      'EPD',
    ].join('\n'),
  ),
  ...PAYMENT_PART_CODE,
};

// Authentication on every runtime: each serves API_KEYS_FILE and a JWKS this test serves (docs/contract/http.md,
// "Running in production").
const API_KEY = 'parity-key-0b7d4e8f60a1b2c3';
const ISSUER = 'https://idp.example.ch/realms/ap';
const AUDIENCE = 'swiss-doc-service';
const withHeaders = (c: Case, headers: Record<string, string>, name: string, status: number): Case => ({
  ...c,
  name,
  headers,
  status,
  raw: false,
});
const onePage = validate('1-page PDF', 200, pdfBody(simplePdf()));
const form = (pdf: Uint8Array, references?: string) => {
  const b = '----runtimes-boundary';
  const parts = [
    `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
    pdf,
    '\r\n',
  ];
  if (references !== undefined)
    parts.push(`--${b}\r\nContent-Disposition: form-data; name="references"\r\n\r\n${references}\r\n`);
  parts.push(`--${b}--\r\n`);
  return {
    contentType: `multipart/form-data; boundary=${b}`,
    body: new Uint8Array(Buffer.concat(parts.map((p) => (typeof p === 'string' ? enc.encode(p) : p)))),
  };
};
const bill = () => qrBillPdf([{ codes: [sampleBill] }]);
const PRODUCTION_CASES: Case[] = [
  withHeaders(onePage, {}, 'auth: no credential', 401),
  withHeaders(onePage, { authorization: 'Bearer wrong-key' }, 'auth: wrong key', 401),
  withHeaders(onePage, { 'x-api-key': API_KEY }, 'auth: X-Api-Key', 200),
  withHeaders(onePage, { authorization: `Bearer ${API_KEY}`, 'x-api-key': API_KEY }, 'auth: both headers', 401),
  withHeaders(onePage, { authorization: 'Bearer jwt:valid' }, 'auth: JWT of the provider', 200),
  withHeaders(onePage, { authorization: 'Bearer jwt:expired' }, 'auth: expired JWT', 401),
  withHeaders(onePage, { authorization: 'Bearer jwt:wrong-audience' }, 'auth: JWT for another audience', 401),
  withHeaders(onePage, { authorization: 'Bearer jwt:none' }, 'auth: JWT with alg none', 401),
  {
    name: 'body: application/pdf (validate)',
    method: 'POST',
    path: '/api/v1/documents/validate',
    contentType: 'application/pdf',
    body: simplePdf({ pages: 3, attachments: 1 }),
    status: 200,
  },
  {
    name: 'body: multipart/form-data (validate)',
    method: 'POST',
    path: '/api/v1/documents/validate',
    ...form(simplePdf({ pages: 3, attachments: 1 })),
    status: 200,
  },
  {
    name: 'body: application/pdf with references (extract)',
    method: 'POST',
    path: `${EXTRACT}?references=${encodeURIComponent(REFERENCES)}`,
    contentType: 'application/pdf',
    body: bill(),
    status: 200,
    raw: true,
  },
  {
    name: 'body: multipart/form-data with references (extract)',
    method: 'POST',
    path: EXTRACT,
    ...form(bill(), REFERENCES),
    status: 200,
    raw: true,
  },
  {
    name: 'body: references query not an array',
    method: 'POST',
    path: `${EXTRACT}?references=%7B%7D`,
    contentType: 'application/pdf',
    body: bill(),
    status: 400,
  },
  { name: 'metrics without a credential', method: 'GET', path: '/metrics', headers: {}, status: 401 },
  // Photos and scans as image bodies (workers/cases.ts, whose Node answers are recorded for workerd too).
  ...IMAGE_CASES.map((c): Case => ({ ...c, status: NODE_ANSWERS[c.name]!.status, raw: c.compare === 'text' })),
];

const CASES: Case[] = [
  validate('1-page PDF', 200, pdfBody(simplePdf())),
  validate('5-page PDF with 2 attachments', 200, pdfBody(simplePdf({ pages: 5, attachments: 2 }))),
  validate('catalog /Version 2.0', 200, pdfBody(simplePdf({ catalogVersion: '2.0' }))),
  validate('invalid Base64', 400, JSON.stringify({ base64Pdf: 'not base64!' })),
  validate('not-a-PDF bytes', 400, pdfBody(enc.encode('Hello, this is plain text and no PDF at all.\n'))),
  validate('PDF header, unreadable body (engine refuses)', 400, pdfBody(enc.encode('%PDF-1.7\nnothing else\n'))),
  validate('missing base64Pdf', 400, '{}'),
  // JSON.parse's messages differ between V8 and JavaScriptCore: the service's own must not.
  validate('malformed JSON value', 400, '{"base64Pdf": "QUJD", "references": [tru]}'),
  validate('JSON with wrong content type', 415, pdfBody(simplePdf()), 'text/plain'),
  // Above MAX_BODY_MB (1 here) and well above it: no runtime's own body limit may answer instead of the app.
  validate('body over MAX_BODY_MB', 413, JSON.stringify({ base64Pdf: 'A'.repeat(3 * 1024 * 1024) })),
  extract('QR-bill: vector code in the payment part', 200, qrBillPdf([{ codes: [sampleBill] }])),
  // The printed payment part against the code (printed-differs, printed-not-checked), in the four languages.
  ...PRINTED_BILLS.map(({ name, pdf }) => extract(`QR-bill: ${name}`, 200, pdf)),
  extract(
    'QR-bill: only a URL code on the last page',
    404,
    qrBillPdf([
      { codes: [sampleBill] },
      { codes: [{ code: textCode('https://example.com/pay'), ...PAYMENT_PART_CODE }] },
    ]),
  ),
  extract('QR-bill: no QR code at all', 404, simplePdf()),
  extract('QR-bill: K address, version 0201 (IG 2.3 warnings)', 200, qrBillPdf([{ codes: [legacyBill] }])),
  { name: 'health', method: 'GET', path: '/health', status: 200 },
  { name: 'OpenAPI document', method: 'GET', path: '/openapi.json', status: 200 },
  { name: 'unknown route', method: 'GET', path: '/nope', status: 404 },
  ...PRODUCTION_CASES,
];

interface Answer {
  status: number;
  contentType: string | null;
  body: unknown;
  traceId: unknown;
}

const tokens = new Map<string, string>();

async function ask(baseUrl: string, c: Case): Promise<Answer> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(c.headers ?? { authorization: `Bearer ${API_KEY}` }))
    headers[name] = value.replace(/jwt:([a-z-]+)/, (_, t: string) => tokens.get(t)!);
  const res = await fetch(baseUrl + c.path, {
    method: c.method,
    headers: { ...headers, ...(c.contentType ? { 'Content-Type': c.contentType } : {}) },
    body: c.body as BodyInit | undefined,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let body: unknown = text;
  let traceId: unknown;
  try {
    if (!c.raw) body = JSON.parse(text);
  } catch {
    // compared as text
  }
  if (body && typeof body === 'object' && 'traceId' in body) {
    ({ traceId, ...body } = body as Record<string, unknown>);
  }
  return { status: res.status, contentType: res.headers.get('content-type'), body, traceId };
}

// ---- child processes -------------------------------------------------------------------------------------------

interface Server {
  runtime: Runtime;
  child: ChildProcess;
  baseUrl: string;
  exited: Promise<void>;
}

const servers = new Map<Runtime, Server>();
const keysDir = mkdtempSync(join(tmpdir(), 'runtimes-keys-'));
let jwks: JwksServer | undefined;
let productionEnv: Record<string, string> = {};

/** The JWKS server, the key file and the tokens the cases use; the env every runtime is started with. */
async function setUpAuthentication(): Promise<void> {
  const key: SigningKey = await signingKey('parity-1');
  jwks = await serveJwks([key]);
  writeFileSync(join(keysDir, 'keys'), `# parity\nparity:${await sha256Hex(API_KEY)}\n`);
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: ISSUER, aud: AUDIENCE, sub: 'parity-robot', exp: now + 3600 };
  tokens.set('valid', await signJwt(key, claims));
  tokens.set('expired', await signJwt(key, { ...claims, exp: now - 60 }));
  tokens.set('wrong-audience', await signJwt(key, { ...claims, aud: 'another-app' }));
  tokens.set('none', unsignedJwt(key.kid, claims));
  productionEnv = {
    API_KEYS_FILE: join(keysDir, 'keys'),
    AUTH_JWKS_URL: jwks.url,
    AUTH_JWT_ISSUER: ISSUER,
    AUTH_JWT_AUDIENCE: AUDIENCE,
  };
}

/** The npm script's command line, run from node_modules/.bin without npm (so signals reach the server itself). */
function scriptCommand(script: string): [string, string[]] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const line = pkg.scripts[script];
  if (!line) throw new Error(`package.json has no "${script}" script`);
  if (/[$|&;<>'"`\\]/.test(line))
    throw new Error(`package.json script "${script}" uses shell syntax this test cannot run: ${line}`);
  const [bin, ...args] = line.trim().split(/\s+/);
  if (bin === 'node') return [process.execPath, args];
  const path = join(ROOT, 'node_modules', '.bin', bin!);
  if (!existsSync(path))
    throw new Error(
      `${bin} is missing at ${path}: it is a devDependency, run npm install (needed by npm run ${script})`,
    );
  return [path, args];
}

async function start(runtime: Runtime): Promise<Server> {
  const [bin, args] = scriptCommand(RUNTIMES[runtime]);
  const port = await freePort();
  // Own process group, so tsx's child node process goes down with it.
  const child = spawn(bin, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      MAX_BODY_MB: '1',
      PDF_WORKERS: '2',
      NO_COLOR: '1',
      ...productionEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stdout = '';
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));

  const baseUrl = await new Promise<string>((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(
        new Error(
          `${runtime} (${bin} ${args.join(' ')}) ${why}\n--- stderr ---\n${stderr.trim() || '(empty)'}\n--- stdout ---\n${stdout.trim() || '(empty)'}`,
        ),
      );
    };
    const timer = setTimeout(
      () => fail(`logged no {"msg":"listening"} line within ${START_TIMEOUT_MS / 1000} s`),
      START_TIMEOUT_MS,
    );
    child.once('error', (e) => fail(`could not start: ${e.message}`));
    child.once('exit', (code, signal) => fail(`exited before listening (code ${code}, signal ${signal})`));
    child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
      const listening = stdout.split('\n').some((line) => {
        try {
          return (JSON.parse(line) as { msg?: string }).msg === 'listening';
        } catch {
          return false; // not a (complete) JSON line yet
        }
      });
      if (listening) {
        clearTimeout(timer);
        child.stdout!.removeAllListeners('data').resume();
        resolve(`http://127.0.0.1:${port}`);
      }
    });
  });
  const server = { runtime, child, baseUrl, exited };
  servers.set(runtime, server);
  return server;
}

async function stop({ child, exited }: Server): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const group = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  group('SIGTERM');
  const timedOut = await Promise.race([
    exited.then(() => false),
    new Promise<boolean>((r) => setTimeout(() => r(true), 3000)),
  ]);
  if (timedOut) group('SIGKILL');
}

// ---- tests -----------------------------------------------------------------------------------------------------

describe('the service answers alike on Node, Bun and Deno', () => {
  let reference: Answer[];

  beforeAll(async () => {
    // `npm start` builds the Node entry first (its prestart); do the same, as npm would.
    execFileSync(join(ROOT, 'node_modules', '.bin', 'esbuild'), scriptCommand('build:node')[1], {
      cwd: ROOT,
      stdio: 'pipe',
    });
    await setUpAuthentication();
    const started = await Promise.allSettled((Object.keys(RUNTIMES) as Runtime[]).map(start));
    const failures = started.flatMap((s) => (s.status === 'rejected' ? [(s.reason as Error).message] : []));
    if (failures.length) throw new Error(failures.join('\n\n'));
    const node = servers.get('node')!;
    reference = [];
    for (const c of CASES) reference.push(await ask(node.baseUrl, c));
  }, START_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    await Promise.all([...servers.values()].map(stop));
    await jwks?.close();
    rmSync(keysDir, { recursive: true, force: true });
  });

  it("Node's own answers are the expected ones", () => {
    expect(reference.map((a) => a.status)).toEqual(CASES.map((c) => c.status));
    expect(reference[0]!.body).toMatchObject({
      pageCount: 1,
      pdfVersion: '1.7',
      hasAttachments: false,
      attachmentCount: 0,
    });
    expect(reference[1]!.body).toMatchObject({ pageCount: 5, hasAttachments: true, attachmentCount: 2 });
    expect(reference[2]!.body).toMatchObject({ pdfVersion: '2.0' });
    const answer = (name: string) => reference[CASES.findIndex((c) => c.name === name)]!;
    const bill = answer('QR-bill: vector code in the payment part').body as string;
    expect(bill.startsWith(`{"references":${REFERENCES},"qrCodeData":{"qrType":"SPC"`)).toBe(true);
    expect((JSON.parse(bill) as { qrCodeData: unknown }).qrCodeData).toMatchObject({
      iban: 'CH4431999123000889012',
      amount: 1949.75,
      reference: '210000000003139471430009017',
    });
    expect(answer('QR-bill: only a URL code on the last page').body).toMatchObject({
      type: 'https://errors.example/problems/qr-code-not-found',
      rejected: [{ index: 0, reason: 'not-spc' }],
    });
    expect(answer('QR-bill: no QR code at all').body).toMatchObject({
      type: 'https://errors.example/problems/qr-code-not-found',
      rejected: [],
    });
    // no payment part printed beside the code: not compared
    expect(JSON.parse(bill)).toMatchObject({ warnings: [{ code: 'printed-not-checked', fields: [] }] });
    const warnings = (
      JSON.parse(answer('QR-bill: K address, version 0201 (IG 2.3 warnings)').body as string) as {
        warnings: { code: string }[];
      }
    ).warnings;
    expect(warnings.map((w) => w.code)).toEqual([
      'combined-address',
      'extended-character-set',
      'version-02xx',
      'printed-not-checked',
    ]);
    // The printed payment part against the code, as Node answers it (the other runtimes must answer the same).
    const printed = (name: string) =>
      (JSON.parse(answer(`QR-bill: ${name}`).body as string) as { warnings: QrWarning[] }).warnings.map((w) => [
        w.code,
        ...w.fields,
      ]);
    for (const language of ['DE', 'FR', 'IT', 'EN']) {
      expect(printed(`printed ${language}: matching code`)).toEqual([]);
      expect(printed(`printed ${language}: code of another account`)).toEqual([['printed-differs', 'account']]);
      expect(printed(`printed ${language}: amount changed in the code`)).toEqual([['printed-differs', 'amount']]);
      expect(printed(`printed ${language}: blank amount`)).toEqual([]);
    }
    expect(printed('printed: a scanned page')).toEqual([['printed-not-checked']]);
    CASES.forEach((c, i) => {
      if (reference[i]!.status >= 400)
        expect(reference[i]!.traceId, `${c.name}: problem traceId`).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    });
  });

  it.each(['bun', 'deno'] as const)('%s answers every request as Node does', async (runtime) => {
    const server = servers.get(runtime)!;
    for (const [i, c] of CASES.entries()) {
      const { traceId, ...answer } = await ask(server.baseUrl, c);
      const { traceId: nodeTraceId, ...expected } = reference[i]!;
      expect(answer, `${runtime}: ${c.method} ${c.path} (${c.name})`).toEqual(expected);
      expect(typeof traceId, `${runtime}: ${c.name}: traceId present as on Node`).toBe(typeof nodeTraceId);
    }
  });

  it.each(Object.keys(RUNTIMES) as Runtime[])(
    '%s serves /metrics behind the same authentication, moving with the requests',
    async (runtime) => {
      const { baseUrl } = servers.get(runtime)!;
      const res = await fetch(`${baseUrl}/metrics`, { headers: { 'x-api-key': API_KEY } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const text = await res.text();
      const count = Number(
        /^http_requests_total\{route="\/api\/v1\/documents\/validate",method="POST",status="200"\} (\d+)$/m.exec(
          text,
        )?.[1],
      );
      expect(count).toBeGreaterThanOrEqual(
        CASES.filter((c) => c.path === '/api/v1/documents/validate' && c.status === 200).length,
      );
      for (const name of [
        'http_request_duration_seconds',
        'http_inflight_body_bytes',
        'pdf_documents_waiting',
        'pdf_engine_restarts_total',
        'qr_bills_found_total',
      ])
        expect(text, name).toContain(`# TYPE ${name} `);
      expect(Number(/^qr_bills_found_total\{pass="page-100dpi"\} (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(0);
    },
  );

  it.each(Object.keys(RUNTIMES) as Runtime[])(
    '%s refuses to start on a non-loopback HOST without credentials, naming the variables',
    async (runtime) => {
      const [bin, args] = scriptCommand(RUNTIMES[runtime]);
      const env: Record<string, string | undefined> = {
        ...process.env,
        PORT: String(await freePort()),
        HOST: '0.0.0.0',
        NO_COLOR: '1',
      };
      for (const name of ['API_KEYS_FILE', 'API_KEYS', 'AUTH_JWKS_URL', 'AUTH']) delete env[name];
      const child = spawn(bin, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let output = '';
      child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
      const code = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => {
          process.kill(-child.pid!, 'SIGKILL');
          resolve(null);
        }, START_TIMEOUT_MS);
        child.once('exit', (c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
      expect(code, output).not.toBe(0);
      expect(code, 'exited by itself').not.toBeNull();
      expect(output).toMatch(/API_KEYS_FILE.*AUTH_JWKS_URL.*AUTH=none/);
      expect(output).not.toMatch(/"msg":"listening"/);
    },
  );
});
