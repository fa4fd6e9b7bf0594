import type { Context, MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { HTTPException } from 'hono/http-exception';
import { jwk } from 'hono/jwk';
import type { AsymmetricAlgorithm } from 'hono/utils/jwt/jwa';
import { decodeHeader } from 'hono/utils/jwt/jwt';
import { identifyApiKey, type ApiKey } from './api-keys.ts';
import type { AppEnv } from './env.ts';
import type { JwksCache } from './jwks.ts';
import { Problem } from './problems.ts';

/** Signatures a provider makes with its private key. HMAC (HS*) is never accepted, nor `none`. */
const JWT_ALGORITHMS: AsymmetricAlgorithm[] = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];

export interface AuthOptions {
  apiKeys?: readonly ApiKey[];
  jwt?: { jwks: JwksCache; issuer: string; audience: string };
}

const REALM = 'swiss-doc-service';

/** 401 `unauthorized` with the RFC 6750 challenge; the detail never quotes what the caller sent. */
function unauthorized(detail: string, error?: 'invalid_token' | 'invalid_request'): Problem {
  return new Problem(
    'unauthorized',
    detail,
    {},
    { 'WWW-Authenticate': `Bearer realm="${REALM}"${error ? `, error="${error}"` : ''}` },
  );
}

/**
 * Who is calling: an API key (`Authorization: Bearer <key>` or `X-Api-Key: <key>`), checked by hono's bearer-auth
 * middleware against the keys' SHA-256 hashes, or a JWT of the OpenID Connect provider (`Authorization: Bearer
 * <jwt>`), checked by hono's jwk middleware against the provider's cached keys, its issuer and audience. The caller's
 * name (the key's name, or the token's `sub`) is set for the request log; the key or token itself is never kept.
 * hono's own 400/401 answers are turned into this service's 401 problem.
 */
export function authMiddleware(options: AuthOptions): MiddlewareHandler<AppEnv> {
  const { apiKeys, jwt } = options;
  const verifyToken = async (token: string, c: Context) => {
    const name = apiKeys ? await identifyApiKey(apiKeys, token) : undefined;
    if (name !== undefined) c.set('caller', name);
    return name !== undefined;
  };
  const bearerKey = bearerAuth({ verifyToken, realm: REALM });
  const headerKey = bearerAuth({ verifyToken, realm: REALM, headerName: 'X-Api-Key', prefix: '' });
  const bearerJwt =
    jwt &&
    jwk({
      keys: (c) => jwt.jwks.keysFor(keyIdOf(c.req.header('authorization'))),
      alg: JWT_ALGORITHMS,
      verification: { iss: jwt.issuer, aud: jwt.audience, exp: true, nbf: true, iat: true },
      realm: REALM,
    });

  return async (c, next) => {
    const authorization = c.req.header('authorization');
    const apiKeyHeader = c.req.header('x-api-key');
    if (authorization !== undefined && apiKeyHeader !== undefined) {
      throw unauthorized('Send one credential, in Authorization or in X-Api-Key, not both.', 'invalid_request');
    }
    if (apiKeyHeader !== undefined) {
      if (!apiKeys)
        throw unauthorized('This service takes no API keys; send Authorization: Bearer <token>.', 'invalid_request');
      await passes(headerKey, c, 'The API key is not valid');
    } else if (authorization === undefined) {
      throw unauthorized(
        `Send Authorization: Bearer <${[apiKeys && 'API key', jwt && 'token'].filter(Boolean).join(' or ')}>${apiKeys ? ', or X-Api-Key: <API key>' : ''}.`,
      );
    } else if (bearerJwt && looksLikeJwt(authorization)) {
      await passes(bearerJwt, c, 'The bearer token is not valid');
      const payload = c.get('jwtPayload' as never) as { sub?: unknown; exp?: unknown } | undefined;
      if (typeof payload?.sub !== 'string' || payload.sub === '')
        throw unauthorized('The bearer token names no subject (sub).', 'invalid_token');
      if (typeof payload.exp !== 'number') throw unauthorized('The bearer token has no expiry (exp).', 'invalid_token');
      c.set('caller', payload.sub);
    } else if (apiKeys) {
      await passes(bearerKey, c, 'The API key is not valid');
    } else {
      throw unauthorized('The bearer token is not valid: not a JWT.', 'invalid_token');
    }
    await next();
  };
}

/**
 * Runs one of hono's auth middlewares up to the point where it would call the next handler; any refusal it answers
 * with becomes the 401 problem (`detail`, a sentence without its full stop, and the reason when hono's JWT checks
 * give one). The next handler runs outside it, so nothing the route throws is taken for a refusal.
 */
async function passes(middleware: MiddlewareHandler, c: Context<AppEnv>, detail: string): Promise<void> {
  let accepted = false;
  try {
    await middleware(c as Context, async () => {
      accepted = true;
    });
  } catch (e) {
    if (!(e instanceof Error)) throw e;
    const reason = e instanceof HTTPException ? jwtRefusal(e.cause) : undefined;
    throw unauthorized(`${detail}${reason ? `: ${reason}` : ''}.`, 'invalid_token');
  }
  if (!accepted) throw unauthorized(`${detail}.`, 'invalid_token');
}

/** Why hono's JWT checks refused a token, in words that quote nothing of it (its error messages include the token). */
function jwtRefusal(cause: unknown): string | undefined {
  const name = cause instanceof Error ? cause.name : '';
  const reasons: Record<string, string> = {
    JwtTokenExpired: 'it has expired',
    JwtTokenNotBefore: 'it is not valid yet',
    JwtTokenIssuedAt: 'it is issued in the future',
    JwtTokenIssuer: 'it is from another issuer',
    JwtTokenAudience: 'it is for another audience',
    JwtPayloadRequiresAud: 'it names no audience',
    JwtHeaderInvalid: 'its algorithm is not accepted',
    JwtAlgorithmNotAllowed: 'its algorithm is not accepted',
    JwtSymmetricAlgorithmNotAllowed: 'its algorithm is not accepted',
    JwtAlgorithmMismatch: 'its algorithm does not match its key',
    JwtHeaderRequiresKid: 'it names no key (kid)',
    JwtTokenSignatureMismatched: 'its signature does not verify',
  };
  if (name in reasons) return reasons[name];
  return cause === undefined ? undefined : 'it cannot be verified (unknown key or malformed)';
}

/** `Bearer <header>.<payload>.<signature>` whose header is a JSON object: a JWT, not an opaque API key. */
function looksLikeJwt(authorization: string): boolean {
  const token = /^bearer\s+(\S+)$/i.exec(authorization)?.[1];
  if (!token || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token)) return false;
  return decodeJwtHeader(token) !== undefined;
}

function keyIdOf(authorization: string | undefined): string | undefined {
  const token = /^bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
  const kid = token ? decodeJwtHeader(token)?.kid : undefined;
  return typeof kid === 'string' ? kid : undefined;
}

function decodeJwtHeader(token: string): Record<string, unknown> | undefined {
  try {
    const header: unknown = decodeHeader(token);
    return header && typeof header === 'object' && !Array.isArray(header)
      ? (header as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
