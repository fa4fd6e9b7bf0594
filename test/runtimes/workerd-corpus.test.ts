/**
 * The QR-bill corpus's PDFs through the real Workers runtime: `wrangler dev` (workerd, offline) serves the worker of
 * wrangler.toml, and every file is posted to it over HTTP. The Workers build reads documents differently from Node
 * (no run-time WebAssembly compilation: PDFium copies the file into its heap) and has a 96 MB engine ceiling, so the
 * corpus is its proof too, not only the subset in test/runtimes/workers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { describeShared } from '../support/corpus.ts';
import { freePort } from '../support/net.ts';
import { toBase64 } from '../support/pdf/pdf-builder.ts';
import { qrCorpusPdfSuites, type ExtractRequest } from '../support/qr/qr-corpus.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const START_TIMEOUT_MS = 60_000;

describeShared('extract inside workerd (wrangler dev)', () => {
  let wrangler: ChildProcess | undefined;
  let url = '';
  let output = '';

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    wrangler = spawn(
      join(ROOT, 'node_modules/.bin/wrangler'),
      ['dev', '--ip', '127.0.0.1', '--port', String(port), '--var', 'HOST:127.0.0.1', '--log-level', 'warn'],
      {
        cwd: ROOT,
        env: { ...process.env, NO_COLOR: '1', WRANGLER_SEND_METRICS: 'false', CI: 'true' },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true, // its own process group: workerd goes down with it
      },
    );
    const keep = (d: Buffer) => (output = (output + d.toString()).slice(-4000));
    wrangler.stdout!.on('data', keep);
    wrangler.stderr!.on('data', keep);
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (wrangler.exitCode !== null) throw new Error(`wrangler dev exited (code ${wrangler.exitCode}):\n${output}`);
      try {
        if ((await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) })).ok) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline)
        throw new Error(`wrangler dev did not answer /health within ${START_TIMEOUT_MS / 1000} s:\n${output}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }, START_TIMEOUT_MS + 5_000);

  afterAll(() => {
    if (wrangler?.pid) {
      try {
        process.kill(-wrangler.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

  const extract: ExtractRequest = async (pdf, references) => {
    const res = await fetch(`${url}/api/v1/documents/extract-swiss-qr-code`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ references, base64Pdf: toBase64(pdf) }),
      signal: AbortSignal.timeout(30_000),
    });
    return {
      status: res.status,
      contentType: res.headers.get('content-type'),
      body: (await res.json()) as Record<string, unknown>,
    };
  };
  qrCorpusPdfSuites(() => extract);
});
