/**
 * Authentication and metrics inside workerd (docs/contract/http.md, "Running in production"): the API_KEYS secret
 * binding, JWTs checked against a provider's JWKS (fetched through the Worker's fetch, answered here), the refusal to
 * serve a deployed (public) Worker without credentials, and /metrics moving. Each test imports a fresh instance of the
 * Worker module so its environment is its own (as config.test.ts does).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { simplePdf, toBase64 } from '../../support/pdf/pdf-builder.ts';

const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: {} };
const VALIDATE = 'http://localhost/api/v1/documents/validate';
const enc = new TextEncoder();

async function freshWorker() {
  vi.resetModules();
  return (await import('../../../src/runtime/workers/main.ts')).default;
}

const hex = (bytes: ArrayBuffer) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
const sha256Hex = async (text: string) => hex(await crypto.subtle.digest('SHA-256', enc.encode(text)));
const b64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
const part = (value: unknown) => b64url(enc.encode(JSON.stringify(value)));

const validate = (headers: Record<string, string> = {}) =>
  new Request(VALIDATE, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ base64Pdf: toBase64(simplePdf()) }),
  });

function logLines(log: { mock: { calls: unknown[][] } }) {
  return log.mock.calls.map((call: unknown[]) => JSON.parse(call[0] as string) as Record<string, unknown>);
}

describe('Workers: authentication and metrics', () => {
  afterEach(() => vi.restoreAllMocks());

  it('takes API keys from the API_KEYS secret, as Authorization: Bearer or X-Api-Key, and logs the key name', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const worker = await freshWorker();
    const env = { API_KEYS: `# keys\nops:${await sha256Hex('ops-key-1')}\n` };
    expect((await worker.fetch(validate({ authorization: 'Bearer ops-key-1' }), env, ctx)).status).toBe(200);
    expect((await worker.fetch(validate({ 'x-api-key': 'ops-key-1' }), env, ctx)).status).toBe(200);
    for (const headers of [
      {},
      { 'x-api-key': 'wrong' },
      { authorization: 'Bearer ops-key-1', 'x-api-key': 'ops-key-1' },
    ] as Record<string, string>[]) {
      const res = await worker.fetch(validate(headers), env, ctx);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(((await res.json()) as { type: string }).type).toMatch(/\/problems\/unauthorized$/);
    }
    expect((await worker.fetch(new Request('http://localhost/health'), env, ctx)).status).toBe(200);
    const lines = logLines(log).filter((l) => l.msg === 'request');
    expect(lines.slice(0, 2).map((l) => l.caller)).toEqual(['ops', 'ops']);
    expect(JSON.stringify(lines)).not.toContain('ops-key-1');
  });

  it('accepts a JWT signed by the provider and refuses an expired one or alg none', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const pair = (await crypto.subtle.generateKey(
      { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
      true,
      ['sign', 'verify'],
    )) as CryptoKeyPair;
    const { kty, n, e } = (await crypto.subtle.exportKey('jwk', pair.publicKey)) as JsonWebKey;
    const jwksUrl = 'https://idp.example.ch/realms/ap/protocol/openid-connect/certs';
    const realFetch = globalThis.fetch;
    const fetched: string[] = [];
    vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url !== jwksUrl) return realFetch(input, init);
      fetched.push(url);
      return Response.json({ keys: [{ kty, n, e, kid: 'k1', alg: 'RS256', use: 'sig' }] });
    });
    const sign = async (claims: Record<string, unknown>) => {
      const head = `${part({ alg: 'RS256', typ: 'JWT', kid: 'k1' })}.${part(claims)}`;
      return `${head}.${b64url(new Uint8Array(await crypto.subtle.sign('RSASSA-PKCS1-v1_5', pair.privateKey, enc.encode(head))))}`;
    };
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: 'https://idp.example.ch/realms/ap', aud: 'swiss-doc', sub: 'robot', exp: now + 600 };
    const env = { AUTH_JWKS_URL: jwksUrl, AUTH_JWT_ISSUER: claims.iss, AUTH_JWT_AUDIENCE: claims.aud };
    const worker = await freshWorker();
    expect((await worker.fetch(validate({ authorization: `Bearer ${await sign(claims)}` }), env, ctx)).status).toBe(
      200,
    );
    expect(
      (await worker.fetch(validate({ authorization: `Bearer ${await sign({ ...claims, exp: now - 10 })}` }), env, ctx))
        .status,
    ).toBe(401);
    expect(
      (
        await worker.fetch(
          validate({ authorization: `Bearer ${part({ alg: 'none', kid: 'k1' })}.${part(claims)}.` }),
          env,
          ctx,
        )
      ).status,
    ).toBe(401);
    expect(fetched).toHaveLength(1);
  });

  it('refuses to serve a deployed Worker (no HOST) without credentials, naming the variables; AUTH=none serves it', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const refused = await (await freshWorker()).fetch(validate(), {}, ctx);
    expect(refused.status).toBe(500);
    expect(logLines(log)[0]).toMatchObject({
      msg: 'invalid configuration',
      message: expect.stringMatching(/API_KEYS_FILE.*AUTH_JWKS_URL.*AUTH=none/),
    });
    expect((await (await freshWorker()).fetch(validate(), { AUTH: 'none' }, ctx)).status).toBe(200);
  });

  it('serves /metrics in the Prometheus text format, moving with the requests', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const worker = await freshWorker();
    const env = { HOST: '127.0.0.1' };
    await worker.fetch(validate(), env, ctx);
    await worker.fetch(
      new Request(VALIDATE, {
        method: 'POST',
        headers: { 'content-type': 'application/pdf' },
        body: simplePdf() as BodyInit,
      }),
      env,
      ctx,
    );
    const res = await worker.fetch(new Request('http://localhost/metrics'), env, ctx);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    expect(text).toMatch(
      /^http_requests_total\{route="\/api\/v1\/documents\/validate",method="POST",status="200"\} 2$/m,
    );
    expect(text).toMatch(/^http_request_duration_seconds_count\{route="\/api\/v1\/documents\/validate"\} 2$/m);
    for (const name of [
      'http_inflight_body_bytes',
      'pdf_documents_waiting',
      'pdf_engine_restarts_total',
      'qr_bills_found_total',
    ])
      expect(text).toContain(`# TYPE ${name} `);
  });
});
