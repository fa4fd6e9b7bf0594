/**
 * The `swiss-doc` command as users run it: bin/swiss-doc.mjs started with this node on files written to a temporary
 * directory. Every line it prints must carry what the app answers over HTTP for the same file (traceId aside, which
 * is random per request; 200 answers have none and must match byte for byte).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, testApp, type TestApp } from '../support/http/app.ts';
import { describeShared, readShared, sharedPath } from '../support/corpus.ts';
import { simplePdf, toBase64 } from '../support/pdf/pdf-builder.ts';
import { grayPng, grayTiff } from '../support/qr/bill-images.ts';
import { billJpeg } from '../support/qr/degraded-bills.ts';
import { PAYMENT_PART_CODE, SAMPLE_BILL, billCode, qrBillPdf, rasterPage, spcCode } from '../support/qr/qr-bills.ts';
import { K_CREDITOR, PLAIN, payload } from '../support/qr/qr-payload.ts';

/** A clean bill page at 150 dpi, in grey. */
function billPage() {
  const { width, height, gray } = rasterPage({ codes: [{ code: billCode(SAMPLE_BILL), ...PAYMENT_PART_CODE }] }, 150);
  return { width, height, data: gray };
}

const LAUNCHER = join(import.meta.dirname, '..', '..', 'bin', 'swiss-doc.mjs');
const VALIDATE = '/api/v1/documents/validate';
const EXTRACT = '/api/v1/documents/extract-swiss-qr-code';
const TRACE_ID = /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Settings of the service that the environment running the tests might carry: the runs start without them. */
const SERVICE_VARIABLES = ['LOG_LEVEL', 'MAX_BODY_MB', 'PDF_TIMEOUT_MS', 'PDF_ENGINE_MEMORY_MB', 'PROBLEM_TYPE_BASE'];

let dir: string;

function swissDoc(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SERVICE_VARIABLES) delete childEnv[name];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LAUNCHER, ...args], {
      cwd: dir,
      env: { ...childEnv, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The lines of a JSON Lines output, each ended by a newline. */
function lines(stdout: string): string[] {
  expect(stdout.endsWith('\n')).toBe(true);
  return stdout.slice(0, -1).split('\n');
}

/** What the app answers over HTTP: status and body text. */
async function api(app: TestApp, path: string, body: string) {
  const res = await postJson(app.app, path, body);
  return { status: res.status, text: await res.text() };
}
const pdfRequest = (bytes: Uint8Array, references?: string) =>
  `{"base64Pdf":"${toBase64(bytes)}"${references === undefined ? '' : `,"references":${references}`}}`;

/** The line the CLI must print for an answer without a traceId: exactly the API's body text. */
const exactLine = (file: string, answer: { status: number; text: string }) =>
  `{"file":${JSON.stringify(file)},"status":${answer.status},"body":${answer.text}}`;

/** A line carrying a problem: the API's problem, with a traceId of its own. */
function expectProblemLine(line: string, file: string, answer: { status: number; text: string }) {
  const { traceId, ...expected } = JSON.parse(answer.text) as Record<string, unknown>;
  expect(traceId).toMatch(TRACE_ID);
  expect(answer.status).toBeGreaterThanOrEqual(400);
  expect(JSON.parse(line)).toEqual({
    file,
    status: answer.status,
    body: { ...expected, traceId: expect.stringMatching(TRACE_ID) },
  });
}

const files = {
  one: simplePdf({ pages: 2, attachments: 1 }),
  a: simplePdf({ pages: 3 }),
  b: simplePdf({ pages: 1, version: '1.4' }),
  c: simplePdf({ pages: 4 }),
  noQr: simplePdf(),
  notPdf: new TextEncoder().encode('Invoice 2024-001, CHF 120.00: plain text, no PDF.\n'),
  big: simplePdf({ contentBytes: 1_000_000 }),
  billJpeg: billJpeg(),
  billPng: grayPng(billPage(), 150),
  billTiff: grayTiff(billPage(), 150),
  /** A valid bill with a K creditor: answered with the combined-address warning. */
  legacy: qrBillPdf([
    {
      codes: [
        {
          ...PAYMENT_PART_CODE,
          code: spcCode(payload({ ...PLAIN, ...K_CREDITOR })),
        },
      ],
    },
  ]),
};

let app: TestApp;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'swiss-doc-cli-'));
  writeFileSync(join(dir, 'one.pdf'), files.one);
  writeFileSync(join(dir, 'no-qr.pdf'), files.noQr);
  writeFileSync(join(dir, 'note.txt'), files.notPdf);
  writeFileSync(join(dir, 'big.pdf'), files.big);
  writeFileSync(join(dir, 'legacy.pdf'), files.legacy);
  mkdirSync(join(dir, 'invoices', 'older'), { recursive: true });
  writeFileSync(join(dir, 'invoices', 'a.pdf'), files.a);
  writeFileSync(join(dir, 'invoices', 'b.PDF'), files.b);
  writeFileSync(join(dir, 'invoices', 'notes.txt'), files.notPdf);
  writeFileSync(join(dir, 'invoices', 'older', 'c.pdf'), files.c);
  mkdirSync(join(dir, 'empty'));
  mkdirSync(join(dir, 'scans'));
  writeFileSync(join(dir, 'scans', 'bill.JPG'), files.billJpeg);
  writeFileSync(join(dir, 'scans', 'broken.jpeg'), files.billJpeg.subarray(0, 2000));
  writeFileSync(join(dir, 'scans', 'page.png'), files.billPng);
  writeFileSync(join(dir, 'scans', 'page.tif'), files.billTiff);
  writeFileSync(join(dir, 'scans', 'scan.pdf'), files.one);
  writeFileSync(join(dir, 'scans', 'notes.txt'), files.notPdf);
  app = await testApp();
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('swiss-doc: usage', () => {
  it('--help prints the usage on stdout and exits 0', async () => {
    const run = await swissDoc(['--help']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^Usage: swiss-doc validate/);
    expect(run.stdout).toContain('extract');
    expect(run.stdout).toContain('--references');
  });

  it.each([
    ['no arguments', []],
    ['an unknown command', ['check', 'one.pdf']],
    ['no files', ['validate']],
    ['an unknown option', ['validate', '--fast', 'one.pdf']],
    ['--references with validate', ['validate', '--references', '[]', 'one.pdf']],
    ['--references that is not an array', ['extract', '--references', '{"id":1}', 'one.pdf']],
    ['--references that is not JSON', ['extract', '--references', '[INV-1]', 'one.pdf']],
    ['--pretty over two files', ['validate', '--pretty', 'invoices']],
    ['a directory without PDFs', ['validate', 'empty']],
  ])('%s: usage on stderr, nothing on stdout, exit 2', async (_, args) => {
    const run = await swissDoc(args);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(/^swiss-doc: /);
    expect(run.stderr).toContain('Usage: swiss-doc');
  });

  it('a missing file: exit 2, the path on stderr, nothing sent or printed (not even for the files that exist)', async () => {
    const run = await swissDoc(['validate', 'one.pdf', 'missing.pdf']);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toContain('missing.pdf: no such file or directory');
  });
});

describe('swiss-doc validate', () => {
  it('prints the API body of a valid PDF byte for byte and exits 0', async () => {
    const run = await swissDoc(['validate', 'one.pdf']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(lines(run.stdout)).toEqual([exactLine('one.pdf', await api(app, VALIDATE, pdfRequest(files.one)))]);
  });

  it('a file that is no PDF: the API problem (400 invalid-pdf), exit 1', async () => {
    const run = await swissDoc(['validate', 'note.txt']);
    expect(run).toMatchObject({ code: 1, stderr: '' });
    const answer = await api(app, VALIDATE, pdfRequest(files.notPdf));
    expect(JSON.parse(answer.text)).toMatchObject({ type: 'https://errors.example/problems/invalid-pdf', status: 400 });
    const [line, ...rest] = lines(run.stdout);
    expect(rest).toEqual([]);
    expectProblemLine(line!, 'note.txt', answer);
  });

  it('one line per file in argument order; exit 1 when any is refused', async () => {
    const run = await swissDoc(['validate', 'one.pdf', 'note.txt', 'invoices/a.pdf']);
    expect(run.code).toBe(1);
    const [one, note, a, ...rest] = lines(run.stdout);
    expect(rest).toEqual([]);
    expect(one).toBe(exactLine('one.pdf', await api(app, VALIDATE, pdfRequest(files.one))));
    expectProblemLine(note!, 'note.txt', await api(app, VALIDATE, pdfRequest(files.notPdf)));
    expect(a).toBe(exactLine('invoices/a.pdf', await api(app, VALIDATE, pdfRequest(files.a))));
  });

  it('a directory: its *.pdf in any letter case, by name, not other files, not subdirectories', async () => {
    const run = await swissDoc(['validate', 'invoices/']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(lines(run.stdout)).toEqual([
      exactLine('invoices/a.pdf', await api(app, VALIDATE, pdfRequest(files.a))),
      exactLine('invoices/b.PDF', await api(app, VALIDATE, pdfRequest(files.b))),
    ]);
  });

  it('--recursive also walks subdirectories; a file named twice is sent once', async () => {
    const run = await swissDoc(['validate', '--recursive', 'invoices', 'invoices/a.pdf']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(lines(run.stdout)).toEqual([
      exactLine('invoices/a.pdf', await api(app, VALIDATE, pdfRequest(files.a))),
      exactLine('invoices/b.PDF', await api(app, VALIDATE, pdfRequest(files.b))),
      exactLine(join('invoices', 'older', 'c.pdf'), await api(app, VALIDATE, pdfRequest(files.c))),
    ]);
  });

  it('--pretty pretty-prints the one result', async () => {
    const run = await swissDoc(['validate', '--pretty', 'one.pdf']);
    expect(run.code).toBe(0);
    const expected = JSON.parse(exactLine('one.pdf', await api(app, VALIDATE, pdfRequest(files.one)))) as unknown;
    expect(run.stdout).toBe(`${JSON.stringify(expected, null, 2)}\n`);
  });

  it('a file over MAX_BODY_MB gets the API 413 problem', async () => {
    const small = await testApp({ MAX_BODY_MB: '1' });
    const answer = await api(small, VALIDATE, pdfRequest(files.big));
    expect(JSON.parse(answer.text)).toMatchObject({
      type: 'https://errors.example/problems/payload-too-large',
      status: 413,
    });
    const run = await swissDoc(['validate', 'big.pdf'], { MAX_BODY_MB: '1' });
    expect(run.code).toBe(1);
    const [line, ...rest] = lines(run.stdout);
    expect(rest).toEqual([]);
    expectProblemLine(line!, 'big.pdf', answer);
  });

  it('logs go to stderr at LOG_LEVEL=debug only, never to stdout', async () => {
    const run = await swissDoc(['validate', 'one.pdf'], { LOG_LEVEL: 'debug' });
    expect(run.code).toBe(0);
    expect(lines(run.stdout)).toEqual([exactLine('one.pdf', await api(app, VALIDATE, pdfRequest(files.one)))]);
    const log = JSON.parse(run.stderr.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(log).toMatchObject({ msg: 'request', path: VALIDATE, status: 200 });
  });
});

describe('swiss-doc extract', () => {
  it('a PDF without a QR-bill: the API 404 problem, exit 1', async () => {
    const run = await swissDoc(['extract', 'no-qr.pdf']);
    expect(run).toMatchObject({ code: 1, stderr: '' });
    const answer = await api(app, EXTRACT, pdfRequest(files.noQr, '[]'));
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.text)).toMatchObject({
      type: 'https://errors.example/problems/qr-code-not-found',
      rejected: [],
    });
    const [line, ...rest] = lines(run.stdout);
    expect(rest).toEqual([]);
    expectProblemLine(line!, 'no-qr.pdf', answer);
  });
});

describe('swiss-doc extract on images', () => {
  const image = async (bytes: Uint8Array, type: string, references = '[]') => {
    const res = await app.app.request(`${EXTRACT}?references=${encodeURIComponent(references)}`, {
      method: 'POST',
      headers: { 'content-type': type },
      body: bytes as BodyInit,
    });
    return { status: res.status, text: await res.text() };
  };

  it('sends *.jpg, *.png and *.tif as the images themselves: the API body byte for byte, references echoed', async () => {
    const run = await swissDoc([
      'extract',
      'scans/bill.JPG',
      'scans/page.png',
      'scans/page.tif',
      '--references',
      '["INV-9"]',
    ]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const answers = await Promise.all([
      image(files.billJpeg, 'image/jpeg', '["INV-9"]'),
      image(files.billPng, 'image/png', '["INV-9"]'),
      image(files.billTiff, 'image/tiff', '["INV-9"]'),
    ]);
    for (const answer of answers) expect(answer.status).toBe(200);
    expect(lines(run.stdout)).toEqual([
      exactLine('scans/bill.JPG', answers[0]!),
      exactLine('scans/page.png', answers[1]!),
      exactLine('scans/page.tif', answers[2]!),
    ]);
  });

  it('a directory: extract takes its images too, validate only its PDFs (an image named to validate is its 415)', async () => {
    const extract = await swissDoc(['extract', 'scans']);
    expect(lines(extract.stdout).map((l) => JSON.parse(l).file)).toEqual([
      'scans/bill.JPG',
      'scans/broken.jpeg',
      'scans/page.png',
      'scans/page.tif',
      'scans/scan.pdf',
    ]);
    const broken = JSON.parse(lines(extract.stdout)[1]!);
    expect(broken).toMatchObject({ status: 400, body: { type: 'https://errors.example/problems/invalid-image' } });
    expect(extract.code).toBe(1);
    const validate = await swissDoc(['validate', 'scans']);
    expect(lines(validate.stdout).map((l) => JSON.parse(l).file)).toEqual(['scans/scan.pdf']);
    const named = await swissDoc(['validate', 'scans/page.png']);
    expect(named.code).toBe(1);
    expect(JSON.parse(lines(named.stdout)[0]!)).toMatchObject({
      status: 415,
      body: { type: 'https://errors.example/problems/unsupported-media-type' },
    });
  });
});

describe('swiss-doc extract on a bill with IG 2.3 warnings', () => {
  it('prints the warnings as the API answers them, exit 0 (the bill is valid)', async () => {
    const run = await swissDoc(['extract', 'legacy.pdf']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const answer = await api(app, EXTRACT, pdfRequest(files.legacy, '[]'));
    expect(lines(run.stdout)).toEqual([exactLine('legacy.pdf', answer)]);
    expect(JSON.parse(answer.text)).toMatchObject({
      warnings: [{ code: 'combined-address', fields: ['creditor'] }, { code: 'printed-not-checked' }],
    });
  });
});

describeShared('swiss-doc extract on a QR-bill', () => {
  const bill = 'corpus/qr/generated/01_vector_qrr_a4.pdf';

  it('prints the API body byte for byte, references echoed as written (big numbers too), exit 0', async () => {
    const references = '[12345678901234567890123,"INV-1",{"po":7}]';
    const run = await swissDoc([
      'extract',
      sharedPath(bill),
      '--references',
      '[ 12345678901234567890123, "INV-1", {"po": 7} ]',
    ]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const answer = await api(app, EXTRACT, pdfRequest(readShared(bill), references));
    expect(answer.status).toBe(200);
    expect(lines(run.stdout)).toEqual([exactLine(sharedPath(bill), answer)]);
  });

  it('references default to []; a bill and a PDF without one: exit 1', async () => {
    const run = await swissDoc(['extract', sharedPath(bill), 'no-qr.pdf']);
    expect(run.code).toBe(1);
    const [found, missing, ...rest] = lines(run.stdout);
    expect(rest).toEqual([]);
    expect(found).toBe(exactLine(sharedPath(bill), await api(app, EXTRACT, pdfRequest(readShared(bill), '[]'))));
    expectProblemLine(missing!, 'no-qr.pdf', await api(app, EXTRACT, pdfRequest(files.noQr, '[]')));
  });
});
