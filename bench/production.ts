/**
 * The HTTP service in production (issue 13): (1) 100 and 200 concurrent clients each sending a 40 MB body to a server
 * started with MAX_INFLIGHT_MB=256: answers by status and the server's peak RSS (targets: peak RSS within
 * MAX_INFLIGHT_MB + 600 MB, only 200 and 503); (2) validate and extract latency of a 10 MB file sent as the raw
 * `application/pdf` body beside the same file as Base64 JSON (target: raw at least 25 % faster). Loopback only; every
 * loop is bounded. Runs alone with `npx tsx bench/production.ts` after `npm run build:node`.
 */
import { request } from 'node:http';
import { concatBytes, simplePdf } from '../test/support/pdf/pdf-builder.ts';
import { billCode, PAYMENT_PART_CODE, qrBillPdf, SAMPLE_BILL } from '../test/support/qr/qr-bills.ts';
import { procMemMB, startServer, type RunningServer } from './server.ts';
import { fmtMs, measure, p50, type Sample } from './stats.ts';
import { isMainModule } from './main-module.ts';

const MiB = 1024 * 1024;
const VALIDATE = '/api/v1/documents/validate';
const EXTRACT = '/api/v1/documents/extract-swiss-qr-code';
const log = (s: string) => process.stderr.write(`${s}\n`);

/**
 * One POST over its own connection (no pooling: 200 clients are 200 sockets), written in 1 MiB chunks with
 * backpressure; like a careful client it stops sending once an answer has come (a 503 comes before the body is read).
 * With `expectContinue` it sends `Expect: 100-continue` and its body only after 100 Continue, as curl does for bodies
 * over 1 MB. Resolves with the status, or `error <code>` when the connection failed before any answer.
 */
function post(
  port: number,
  path: string,
  contentType: string,
  body: Uint8Array,
  timeoutMs: number,
  expectContinue = false,
): Promise<string> {
  return new Promise((resolve) => {
    let answered = false;
    const headers = {
      'content-type': contentType,
      'content-length': body.length,
      ...(expectContinue ? { expect: '100-continue' } : {}),
    };
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent: false, headers }, (res) => {
      answered = true;
      res.resume();
      res.on('error', () => {});
      res.on('end', () => resolve(String(res.statusCode)));
      res.on('close', () => resolve(String(res.statusCode)));
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', (e: NodeJS.ErrnoException) => resolve(`error ${e.code ?? e.message}`));
    const send = async () => {
      for (let at = 0; at < body.length && !answered && !req.destroyed; at += MiB) {
        if (!req.write(body.subarray(at, at + MiB))) {
          await new Promise<void>((r) => {
            const done = () => {
              req.off('drain', done);
              req.off('close', done);
              r();
            };
            req.on('drain', done).on('close', done);
          });
        }
      }
      if (!answered && !req.destroyed) req.end();
    };
    if (expectContinue) req.once('continue', () => void send());
    else void send();
  });
}

interface OverloadRow {
  clients: number;
  statuses: Record<string, number>;
  idleRssMB: number;
  peakRssMB: number;
  seconds: number;
}

async function overloadRound(clients: number, body: Uint8Array, expectContinue: boolean): Promise<OverloadRow> {
  const server = await startServer({ MAX_INFLIGHT_MB: '256' });
  try {
    await post(
      server.port,
      VALIDATE,
      'application/json',
      new TextEncoder().encode(`{"base64Pdf":"${Buffer.from(simplePdf()).toString('base64')}"}`),
      10_000,
    );
    const idleRssMB = procMemMB(server.serverPid, 'VmRSS');
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: clients }, () =>
        post(server.port, VALIDATE, 'application/json', body, 120_000, expectContinue),
      ),
    );
    const statuses: Record<string, number> = {};
    for (const a of answers) statuses[a] = (statuses[a] ?? 0) + 1;
    return {
      clients,
      statuses,
      idleRssMB,
      peakRssMB: procMemMB(server.serverPid, 'VmHWM'),
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await server.stop();
  }
}

interface LatencyRow {
  route: string;
  raw: Sample;
  json: Sample;
  answer: string;
}

async function latency(server: RunningServer, path: string, pdf: Uint8Array): Promise<LatencyRow> {
  const json = new TextEncoder().encode(
    path === EXTRACT
      ? `{"references":[],"base64Pdf":"${Buffer.from(pdf).toString('base64')}"}`
      : `{"base64Pdf":"${Buffer.from(pdf).toString('base64')}"}`,
  );
  let answer = '';
  const one = (contentType: string, body: Uint8Array) => async () => {
    answer = await post(server.port, path, contentType, body, 60_000);
  };
  const options = { warmups: 1, minRuns: 5, targetMs: 3000, maxMs: 8000, maxRuns: 200 };
  // Alternate the two forms so that neither gets a warmer process.
  const raw: number[] = [];
  const base64: number[] = [];
  for (let round = 0; round < 3; round++) {
    raw.push(...(await measure(one('application/pdf', pdf), { ...options, warmups: round === 0 ? 1 : 0 })).ms);
    base64.push(...(await measure(one('application/json', json), { ...options, warmups: round === 0 ? 1 : 0 })).ms);
  }
  return { route: path, raw: { ms: raw }, json: { ms: base64 }, answer };
}

/**
 * A one-page QR bill grown to `bytes` by an unreferenced stream of random bytes (what a scan's image data weighs),
 * placed before the cross-reference table so every offset in it stays right.
 */
function paddedBillPdf(bytes: number): Uint8Array {
  const bill = qrBillPdf([{ title: 'Invoice', codes: [{ ...PAYMENT_PART_CODE, code: billCode(SAMPLE_BILL) }] }]);
  const text = new TextDecoder('latin1').decode(bill);
  const xref = text.lastIndexOf('\nxref') + 1;
  const padding = new Uint8Array(bytes);
  for (let at = 0; at < bytes; at += 65536) crypto.getRandomValues(padding.subarray(at, Math.min(bytes, at + 65536)));
  const head = new TextEncoder().encode(`9999 0 obj\n<< /Length ${bytes} >>\nstream\n`);
  const tail = new TextEncoder().encode('\nendstream\nendobj\n');
  const trailer = text.slice(xref).replace(/startxref\s+\d+/, `startxref\n${xref + head.length + bytes + tail.length}`);
  return concatBytes(bill.subarray(0, xref), head, padding, tail, new TextEncoder().encode(trailer));
}

export async function runProductionBench(): Promise<void> {
  const body40 = new TextEncoder().encode(
    `{"base64Pdf":"${Buffer.from(simplePdf({ contentBytes: 30 * 1000 * 1000 })).toString('base64')}"}`,
  );
  console.log('');
  console.log('# HTTP service under overload and raw bodies');
  console.log('');
  console.log(
    `Each client sends one validate request whose Base64 JSON body is ${(body40.length / MiB).toFixed(1)} MiB (a 30 MB PDF), all at once, to a fresh server (\`npm start\`'s bundle, MAX_INFLIGHT_MB=256, other settings default); no retries.`,
  );
  console.log('');
  console.log(
    'Clients send `Expect: 100-continue` (as curl does for bodies over 1 MB), so a refused body is never sent; the last row is clients that upload without waiting, whose 503 can be lost when the server closes the socket under a body it will not read.',
  );
  console.log('');
  console.log(
    '| clients | Expect: 100-continue | answers by status | server RSS idle → peak MB | limit (MAX_INFLIGHT_MB + 600) | wall s | target |',
  );
  console.log('|---:|---|---|---:|---:|---:|---|');
  for (const [clients, expectContinue] of [
    [100, true],
    [200, true],
    [200, false],
  ] as const) {
    log(`overload: ${clients} clients${expectContinue ? ', Expect: 100-continue' : ''}`);
    const row = await overloadRound(clients, body40, expectContinue);
    const only200and503 = Object.keys(row.statuses).every((s) => s === '200' || s === '503');
    const withinRss = row.peakRssMB <= 256 + 600;
    const statuses = Object.entries(row.statuses)
      .sort()
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ');
    console.log(
      `| ${clients} | ${expectContinue ? 'yes' : 'no'} | ${statuses} | ${row.idleRssMB.toFixed(0)} → ${row.peakRssMB.toFixed(0)} | 856 | ${row.seconds.toFixed(1)} | ${withinRss && only200and503 ? 'PASS' : 'FAIL'} (RSS ${withinRss ? 'within' : 'over'}; ${only200and503 ? 'only 200/503' : 'other answers'}) |`,
    );
  }

  log('raw vs Base64 JSON: 10 MB file');
  const pdf10 = paddedBillPdf(10 * 1000 * 1000);
  const server = await startServer();
  try {
    const rows = [await latency(server, VALIDATE, pdf10), await latency(server, EXTRACT, pdf10)];
    console.log('');
    console.log(
      `The same ${(pdf10.length / MiB).toFixed(1)} MiB PDF (a one-page QR bill and 10 MB of incompressible stream data) sent as \`application/pdf\` and as Base64 JSON (${((4 * Math.ceil(pdf10.length / 3)) / MiB).toFixed(1)} MiB), alternating, over loopback to \`npm start\`'s bundle.`,
    );
    console.log('');
    console.log('| route | answer | raw p50 ms | Base64 JSON p50 ms | raw faster by | target ≥ 25 % | n (raw/JSON) |');
    console.log('|---|---|---:|---:|---:|---|---:|');
    for (const r of rows) {
      const gain = 1 - p50(r.raw) / p50(r.json);
      console.log(
        `| ${r.route.split('/').pop()} | ${r.answer} | ${fmtMs(p50(r.raw))} | ${fmtMs(p50(r.json))} | ${(gain * 100).toFixed(0)} % | ${gain >= 0.25 ? 'PASS' : 'FAIL'} | ${r.raw.ms.length}/${r.json.ms.length} |`,
      );
    }
  } finally {
    await server.stop();
  }
}

if (isMainModule(import.meta)) {
  await runProductionBench();
}
