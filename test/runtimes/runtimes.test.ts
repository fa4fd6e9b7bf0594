/**
 * Smoke test across runtimes: the Node, Bun and Deno entries run as child processes, exactly as their npm scripts
 * start them, and must answer the same requests with the same status, content type and body as Node (the random
 * `traceId` aside). The requests: parity-cases.ts; starting and asking the runtimes: runtime-processes.ts.
 */
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/net.ts';
import { API_KEY, CASES, REFERENCES, type QrWarning } from './parity-cases.ts';
import {
  ROOT,
  RUNTIMES,
  START_TIMEOUT_MS,
  ask,
  scriptCommand,
  servers,
  setUpAuthentication,
  start,
  stop,
  tearDownAuthentication,
  type Answer,
  type Runtime,
} from './runtime-processes.ts';

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
    await tearDownAuthentication();
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
