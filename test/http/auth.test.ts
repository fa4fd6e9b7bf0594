/**
 * Authentication (docs/contract/http.md, "Running in production"): API keys from API_KEYS_FILE, JWTs of an OpenID
 * Connect provider whose JWKS the test serves, AUTH=none, and the refusal to serve a non-loopback HOST without any of
 * them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, readHttpConfig } from '../../src/config.ts';
import { identifyApiKey, parseApiKeys } from '../../src/http/api-keys.ts';
import {
  hmacWithPublicKey,
  serveJwks,
  sha256Hex,
  signingKey,
  signJwt,
  unsignedJwt,
  type JwksServer,
  type SigningKey,
} from '../support/http/jwt.ts';
import { postJson, problem, testApp, type TestApp } from '../support/http/app.ts';
import { simplePdf, toBase64 } from '../support/pdf/pdf-builder.ts';

const VALIDATE = '/api/v1/documents/validate';
const OPS_KEY = 'k_live_3f9a1c2b7d4e8f60a1b2c3d4e5f60718';
const BILLING_KEY = 'billing-Key/with+symbols~.';
const dir = mkdtempSync(join(tmpdir(), 'auth-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function keysFile(): Promise<string> {
  const path = join(dir, 'api-keys');
  writeFileSync(
    path,
    `# service accounts\nops:${await sha256Hex(OPS_KEY)}\n\n  billing : ${(await sha256Hex(BILLING_KEY)).toUpperCase()}   # the billing batch\n`,
  );
  return path;
}

const body = () => ({ base64Pdf: toBase64(simplePdf()) });

async function unauthorized(res: Response, error?: string) {
  const p = await problem(res, 401, 'unauthorized');
  const challenge = res.headers.get('www-authenticate') ?? '';
  expect(challenge).toMatch(/^Bearer realm="[^"]+"/);
  if (error) expect(challenge).toContain(`error="${error}"`);
  return p;
}

describe('API keys (API_KEYS_FILE)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ API_KEYS_FILE: await keysFile() });
  });

  it('accepts a listed key as Authorization: Bearer and as X-Api-Key, and logs the key name, never the key', async () => {
    expect((await postJson(t.app, VALIDATE, body(), { authorization: `Bearer ${OPS_KEY}` })).status).toBe(200);
    expect((await postJson(t.app, VALIDATE, body(), { authorization: `bearer ${BILLING_KEY}` })).status).toBe(200);
    expect((await postJson(t.app, VALIDATE, body(), { 'x-api-key': BILLING_KEY })).status).toBe(200);
    const callers = t.logs.filter((l) => l.message === 'request').map((l) => l.fields?.caller);
    expect(callers).toEqual(['ops', 'billing', 'billing']);
    expect(JSON.stringify(t.logs)).not.toContain(OPS_KEY);
    expect(JSON.stringify(t.logs)).not.toContain(BILLING_KEY);
  });

  it('answers 401 unauthorized with WWW-Authenticate: Bearer for a missing, wrong or malformed key', async () => {
    const missing = await unauthorized(await postJson(t.app, VALIDATE, body()));
    expect(missing.detail).toMatch(/Authorization: Bearer/);
    await unauthorized(
      await postJson(t.app, VALIDATE, body(), { authorization: `Bearer ${OPS_KEY}x` }),
      'invalid_token',
    );
    await unauthorized(await postJson(t.app, VALIDATE, body(), { 'x-api-key': 'nope' }), 'invalid_token');
    await unauthorized(await postJson(t.app, VALIDATE, body(), { 'x-api-key': '' }));
    await unauthorized(await postJson(t.app, VALIDATE, body(), { authorization: `Basic ${btoa('ops:x')}` }));
    await unauthorized(await postJson(t.app, VALIDATE, body(), { authorization: 'Bearer has spaces in it' }));
    const wrong = await postJson(t.app, VALIDATE, body(), { authorization: 'Bearer guessed-key-123' });
    expect(JSON.stringify(await wrong.json())).not.toContain('guessed-key-123');
  });

  it('answers 401 when both headers are sent, even with a right key in each', async () => {
    const p = await unauthorized(
      await postJson(t.app, VALIDATE, body(), { authorization: `Bearer ${OPS_KEY}`, 'x-api-key': OPS_KEY }),
    );
    expect(p.detail).toMatch(/not both/);
  });

  it('protects both document routes and /metrics; /health, /openapi.json and /docs stay open', async () => {
    await unauthorized(await postJson(t.app, '/api/v1/documents/extract-swiss-qr-code', { references: [], ...body() }));
    await unauthorized(await t.app.request('/metrics'));
    expect((await t.app.request('/metrics', { headers: { 'x-api-key': OPS_KEY } })).status).toBe(200);
    for (const path of ['/health', '/openapi.json', '/docs', '/docs/scalar.js'])
      expect((await t.app.request(path)).status, path).toBe(200);
  });

  it('is checked before the body is read', async () => {
    let pulled = false;
    // highWaterMark 0: nothing is pulled until someone reads.
    const stream = new ReadableStream(
      {
        pull() {
          pulled = true;
        },
      },
      { highWaterMark: 0 },
    );
    const res = await t.app.request(VALIDATE, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': '1000' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    await unauthorized(res);
    expect(pulled).toBe(false);
  });
});

describe('the API key list', () => {
  it('parses name:sha256hex lines with comments and blank lines; names may hold spaces', async () => {
    const keys = parseApiKeys(
      `# a comment\n\nops:${'a'.repeat(64)}\r\nbatch job : ${'B'.repeat(64)} # trailing\n`,
      'test',
    );
    expect(keys.map((k) => k.name)).toEqual(['ops', 'batch job']);
    expect(keys[1]!.sha256).toEqual(new Uint8Array(32).fill(0xbb));
  });

  it.each([
    ['a key instead of its hash', 'ops:my-secret-key'],
    ['a short hash', `ops:${'a'.repeat(63)}`],
    ['no name', `:${'a'.repeat(64)}`],
    ['no colon', 'a'.repeat(64)],
    ['the same hash twice', `a:${'c'.repeat(64)}\nb:${'c'.repeat(64)}`],
    ['no key at all', '# nothing\n'],
  ])('refuses %s, naming the source and line', (_, text) => {
    expect(() => parseApiKeys(text, 'API_KEYS_FILE /etc/keys')).toThrow(ConfigError);
    expect(() => parseApiKeys(text, 'API_KEYS_FILE /etc/keys')).toThrow(/API_KEYS_FILE \/etc\/keys/);
  });

  it('identifies a key by its SHA-256, whatever its position in the list', async () => {
    const keys = parseApiKeys(`a:${await sha256Hex('one')}\nb:${await sha256Hex('two')}`, 'test');
    expect(await identifyApiKey(keys, 'two')).toBe('b');
    expect(await identifyApiKey(keys, 'one')).toBe('a');
    expect(await identifyApiKey(keys, 'three')).toBeUndefined();
    expect(await identifyApiKey(keys, '')).toBeUndefined();
  });
});

describe('JWTs of an OpenID Connect provider (AUTH_JWKS_URL)', () => {
  const ISSUER = 'https://login.example.ch/realms/accounts';
  const AUDIENCE = 'swiss-doc-service';
  let jwks: JwksServer;
  let key: SigningKey;
  let t: TestApp;
  const now = () => Math.floor(Date.now() / 1000);
  const claims = (extra: Record<string, unknown> = {}) => ({
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'svc-ap-robot',
    iat: now() - 10,
    exp: now() + 3600,
    ...extra,
  });
  const withToken = (token: string) => postJson(t.app, VALIDATE, body(), { authorization: `Bearer ${token}` });

  beforeAll(async () => {
    key = await signingKey('key-1');
    jwks = await serveJwks([key]);
    t = await testApp({ AUTH_JWKS_URL: jwks.url, AUTH_JWT_ISSUER: ISSUER, AUTH_JWT_AUDIENCE: AUDIENCE });
  });
  afterAll(() => jwks.close());

  it('accepts a valid token, logs its subject, and fetches the keys once for many requests', async () => {
    const token = await signJwt(key, claims());
    expect((await withToken(token)).status).toBe(200);
    expect((await withToken(token)).status).toBe(200);
    expect(t.logs.filter((l) => l.message === 'request').map((l) => l.fields?.caller)).toEqual([
      'svc-ap-robot',
      'svc-ap-robot',
    ]);
    expect(JSON.stringify(t.logs)).not.toContain(token.split('.')[2]!.slice(0, 20));
    expect(jwks.fetches).toBe(1);
  });

  it.each([
    ['expired', () => claims({ exp: now() - 60 }), /expired/],
    ['for another audience', () => claims({ aud: 'some-other-app' }), /audience/],
    ['from another issuer', () => claims({ iss: 'https://evil.example/' }), /issuer/],
    ['not valid yet', () => claims({ nbf: now() + 600 }), /not valid yet/],
    ['without an expiry', () => ({ ...claims(), exp: undefined }), /expiry/],
    ['without a subject', () => ({ ...claims(), sub: undefined }), /subject/],
  ])('refuses a token %s', async (_, make, detail) => {
    const p = await unauthorized(await withToken(await signJwt(key, make())), 'invalid_token');
    expect(p.detail).toMatch(detail);
  });

  it('refuses alg none and HMAC keyed with the public key', async () => {
    expect((await unauthorized(await withToken(unsignedJwt(key.kid, claims())), 'invalid_token')).detail).toMatch(
      /algorithm/,
    );
    expect(
      (await unauthorized(await withToken(await hmacWithPublicKey(key, claims())), 'invalid_token')).detail,
    ).toMatch(/algorithm/);
  });

  it('refuses a token signed by a key the provider does not publish, and a tampered one', async () => {
    const stranger = await signingKey('key-1');
    await unauthorized(await withToken(await signJwt(stranger, claims())), 'invalid_token');
    const [h, , s] = (await signJwt(key, claims())).split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify(claims({ sub: 'admin' }))).toString('base64url')}.${s}`;
    expect((await unauthorized(await withToken(forged), 'invalid_token')).detail).toMatch(/signature/);
  });

  it('fetches the keys again when a token names a key it does not hold (rotation)', async () => {
    const rotated = await signingKey('key-2');
    jwks.keys = [key, rotated];
    // A fresh app: its cache was filled before the rotation and is younger than the refetch interval of 30 s.
    const fresh = await testApp({ AUTH_JWKS_URL: jwks.url, AUTH_JWT_ISSUER: ISSUER, AUTH_JWT_AUDIENCE: AUDIENCE });
    const fetches = jwks.fetches;
    expect(
      (await postJson(fresh.app, VALIDATE, body(), { authorization: `Bearer ${await signJwt(rotated, claims())}` }))
        .status,
    ).toBe(200);
    expect(jwks.fetches).toBe(fetches + 1);
  });

  it('takes API keys beside tokens when both are configured', async () => {
    const both = await testApp({
      AUTH_JWKS_URL: jwks.url,
      AUTH_JWT_ISSUER: ISSUER,
      AUTH_JWT_AUDIENCE: AUDIENCE,
      API_KEYS_FILE: await keysFile(),
    });
    expect((await postJson(both.app, VALIDATE, body(), { authorization: `Bearer ${OPS_KEY}` })).status).toBe(200);
    expect((await postJson(both.app, VALIDATE, body(), { 'x-api-key': OPS_KEY })).status).toBe(200);
    expect(
      (await postJson(both.app, VALIDATE, body(), { authorization: `Bearer ${await signJwt(key, claims())}` })).status,
    ).toBe(200);
    expect(both.logs.map((l) => l.fields?.caller)).toEqual(['ops', 'ops', 'svc-ap-robot']);
  });
});

describe('who must authenticate', () => {
  it('refuses to start on a non-loopback HOST without credentials, naming the variables', () => {
    for (const HOST of ['0.0.0.0', '::', '192.0.2.10', 'docs.example.ch']) {
      expect(() => readHttpConfig({ HOST })).toThrow(ConfigError);
      expect(() => readHttpConfig({ HOST })).toThrow(/API_KEYS_FILE.*AUTH_JWKS_URL.*AUTH=none/);
    }
  });

  it('serves loopback without credentials, and any HOST with AUTH=none, a key file or a JWKS URL', () => {
    for (const HOST of ['127.0.0.1', '127.1.2.3', 'localhost', '::1'])
      expect(readHttpConfig({ HOST }).auth).toEqual({ none: false });
    expect(readHttpConfig({ HOST: '0.0.0.0', AUTH: 'none' }).auth).toEqual({ none: true });
    expect(readHttpConfig({ HOST: '0.0.0.0', API_KEYS_FILE: '/etc/keys' }).auth.apiKeys).toEqual({
      from: 'file',
      path: '/etc/keys',
    });
    expect(
      readHttpConfig({
        HOST: '0.0.0.0',
        AUTH_JWKS_URL: 'https://idp/keys',
        AUTH_JWT_ISSUER: 'i',
        AUTH_JWT_AUDIENCE: 'a',
      }).auth.jwt,
    ).toEqual({ jwksUrl: 'https://idp/keys', issuer: 'i', audience: 'a' });
  });

  it.each([
    [{ AUTH: 'off' }, /AUTH must be none/],
    [{ AUTH_JWKS_URL: 'https://idp/keys' }, /AUTH_JWT_ISSUER and AUTH_JWT_AUDIENCE/],
    [{ AUTH_JWKS_URL: 'https://idp/keys', AUTH_JWT_ISSUER: 'i' }, /AUTH_JWT_AUDIENCE/],
    [{ AUTH_JWT_AUDIENCE: 'a' }, /need AUTH_JWKS_URL/],
    [{ AUTH_JWKS_URL: 'keys.json', AUTH_JWT_ISSUER: 'i', AUTH_JWT_AUDIENCE: 'a' }, /http\(s\) URL/],
    [{ AUTH: 'none', API_KEYS_FILE: '/k' }, /contradicts/],
    [{ API_KEYS_FILE: '/k', API_KEYS: 'x' }, /not both/],
  ])('refuses contradictory or incomplete settings %o', (env, message) => {
    expect(() => readHttpConfig(env)).toThrow(message);
  });

  it('needs no credential on loopback without settings', async () => {
    const open = await testApp();
    expect((await postJson(open.app, VALIDATE, body())).status).toBe(200);
    expect(open.logs[0]!.fields?.caller).toBeUndefined();
  });

  it('stops at start when the key file cannot be read', async () => {
    await expect(testApp({ API_KEYS_FILE: join(dir, 'missing') })).rejects.toThrow(
      /API_KEYS_FILE .*missing cannot be read: ENOENT/,
    );
  });

  it('declares the security schemes in the OpenAPI document', async () => {
    const doc = (await (await (await testApp()).app.request('/openapi.json')).json()) as {
      components: { securitySchemes: Record<string, unknown> };
      security: unknown[];
    };
    expect(doc.components.securitySchemes).toEqual({
      ApiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Api-Key' }),
      Bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    expect(doc.security).toEqual([{ ApiKey: [] }, { Bearer: [] }]);
  });
});
