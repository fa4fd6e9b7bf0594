/**
 * `npm start`'s listener (src/runtime/node/serve.ts): a client that sends `Expect: 100-continue` gets 100 Continue
 * only when its body fits MAX_INFLIGHT_MB, and otherwise the 503 at once, without sending a byte of the body.
 */
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { readHttpConfig } from '../../src/config.ts';
import { ByteBudget } from '../../src/byte-budget.ts';
import { readEndpointConfig } from '../../src/idb/config.ts';
import { serveNode } from '../../src/runtime/node/serve.ts';
import { inProcessEngines, serverDeps } from '../../src/runtime/shared/deps.ts';
import { simplePdf } from '../support/pdf/pdf-builder.ts';

const MiB = 1024 * 1024;

interface Outcome {
  status: number;
  continued: boolean;
  sentBody: boolean;
  body: string;
}

/** A POST with `Expect: 100-continue` that sends its body only after 100 Continue, as curl does for large bodies. */
function expectContinue(port: number, contentType: string, body: Uint8Array): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const outcome = { continued: false, sentBody: false };
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/api/v1/documents/validate',
        method: 'POST',
        headers: { 'content-type': contentType, 'content-length': body.length, expect: '100-continue' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ ...outcome, status: res.statusCode!, body: text }));
      },
    );
    req.on('continue', () => {
      outcome.continued = true;
      outcome.sentBody = true;
      req.end(body);
    });
    req.on('error', reject);
  });
}

describe('Node listener: Expect: 100-continue answered from MAX_INFLIGHT_MB', () => {
  let server: ServerType;
  let port: number;
  const budget = new ByteBudget(4 * MiB);

  beforeAll(async () => {
    const config = readHttpConfig({ MAX_INFLIGHT_MB: '4', MAX_BODY_MB: '4', LOG_LEVEL: 'error' });
    const app = createApp({
      ...serverDeps(config, readEndpointConfig({}), await inProcessEngines(config)),
      logger: { log: () => {} },
      budget,
    });
    await new Promise<void>((listening) => {
      server = serveNode(
        { fetch: app.fetch, port: 0, hostname: '127.0.0.1', budget, maxBodyBytes: config.maxBodyBytes },
        () => listening(),
      );
    });
    port = (server.address() as AddressInfo).port;
  });

  afterAll(() => new Promise<void>((closed) => server.close(() => closed())));

  it('sends 100 Continue for a body that fits, and answers it', async () => {
    const answer = await expectContinue(port, 'application/pdf', simplePdf({ pages: 2 }));
    expect(answer).toMatchObject({ status: 200, continued: true, sentBody: true });
    expect(JSON.parse(answer.body)).toMatchObject({ pageCount: 2 });
  });

  it('answers 503 overloaded without 100 Continue when the budget is spent, so the body is never sent', async () => {
    expect(budget.tryReserve(3 * MiB)).toBe(true); // another request holds most of the budget
    try {
      const answer = await expectContinue(port, 'application/pdf', simplePdf({ contentBytes: 2 * MiB }));
      expect(answer).toMatchObject({ status: 503, continued: false, sentBody: false });
      expect(JSON.parse(answer.body)).toMatchObject({ type: expect.stringMatching(/\/overloaded$/) });
    } finally {
      budget.release(3 * MiB);
    }
  });

  it('answers 413 without 100 Continue for a body over MAX_BODY_MB', async () => {
    const answer = await expectContinue(port, 'application/pdf', new Uint8Array(5 * MiB));
    expect(answer).toMatchObject({ status: 413, continued: false, sentBody: false });
  });
});
