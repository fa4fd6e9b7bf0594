/**
 * An OpenID Connect provider's part in the tests: RSA signing keys, tokens signed (or forged) with them, and a JWKS
 * document served over HTTP on loopback, counting how often it is fetched.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  /** The public JWK as a provider publishes it. */
  jwk: JsonWebKey & { kid: string; alg: string; use: string };
}

export async function signingKey(kid: string): Promise<SigningKey> {
  const pair = (await crypto.subtle.generateKey(
    { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
    true,
    ['sign', 'verify'],
  )) as CryptoKeyPair;
  const { kty, n, e } = await crypto.subtle.exportKey('jwk', pair.publicKey);
  return { kid, privateKey: pair.privateKey, jwk: { kty, n, e, kid, alg: 'RS256', use: 'sig' } };
}

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const part = (value: unknown) => b64url(new TextEncoder().encode(JSON.stringify(value)));

/** An RS256 token with the given claims (defaults: valid for an hour, from `issuer` for `audience`). */
export async function signJwt(
  key: SigningKey,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
): Promise<string> {
  const head = `${part({ alg: 'RS256', typ: 'JWT', kid: key.kid, ...header })}.${part(claims)}`;
  const signature = await crypto.subtle.sign('RSASSA-PKCS1-v1_5', key.privateKey, new TextEncoder().encode(head));
  return `${head}.${b64url(new Uint8Array(signature))}`;
}

/** `alg: none`, no signature. */
export const unsignedJwt = (kid: string, claims: Record<string, unknown>) =>
  `${part({ alg: 'none', typ: 'JWT', kid })}.${part(claims)}.`;

/** HS256 keyed with the provider's public key (the modulus as text): the classic algorithm-confusion forgery. */
export async function hmacWithPublicKey(key: SigningKey, claims: Record<string, unknown>): Promise<string> {
  const head = `${part({ alg: 'HS256', typ: 'JWT', kid: key.kid })}.${part(claims)}`;
  const secret = await crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(JSON.stringify(key.jwk)),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  return `${head}.${b64url(new Uint8Array(await crypto.subtle.sign('HMAC', secret, new TextEncoder().encode(head))))}`;
}

export interface JwksServer {
  url: string;
  keys: SigningKey[];
  fetches: number;
  close(): Promise<void>;
}

/** Serves `{ keys: [...] }` of the given keys (the list may be changed later: rotation) at http://127.0.0.1:<port>/jwks. */
export async function serveJwks(keys: SigningKey[]): Promise<JwksServer> {
  const state: JwksServer = { url: '', keys, fetches: 0, close: async () => {} };
  const server = createServer((req, res) => {
    if (req.url !== '/jwks') {
      res.writeHead(404).end();
      return;
    }
    state.fetches++;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ keys: state.keys.map((k) => k.jwk) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
  state.close = () => new Promise((resolve) => server.close(() => resolve()));
  return state;
}

export const sha256Hex = async (text: string) =>
  Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))).toString('hex');
