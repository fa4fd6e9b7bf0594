import type { HonoJsonWebKey } from 'hono/utils/jwt/jws';
import type { Clock, Logger } from '../ports.ts';

export interface JwksOptions {
  url: string;
  clock: Clock;
  logger: Logger;
  fetch?: typeof fetch;
  /** Keys are fetched again after this long (providers rotate keys; 10 minutes). */
  maxAgeMs?: number;
  /** A token naming a key not in the cache fetches again, but not more often than this (30 s): no refetch storm. */
  minRefetchMs?: number;
}

/**
 * The signing keys of an OpenID Connect provider (its `jwks_uri`), cached and refreshed: fetched on first use, again
 * when they are older than `maxAgeMs`, and when a token names a key id the cache does not hold (a rotation), at most
 * once per `minRefetchMs`. Only public keys of asymmetric algorithms are kept: a symmetric (`oct`) entry or private
 * material is dropped, so no token can be checked as an HMAC keyed with something public.
 */
export class JwksCache {
  private keys: HonoJsonWebKey[] = [];
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private pending: Promise<void> | undefined;

  constructor(private readonly options: JwksOptions) {}

  async keysFor(kid: string | undefined): Promise<HonoJsonWebKey[]> {
    const age = this.options.clock.now() - this.fetchedAt;
    const stale = age > (this.options.maxAgeMs ?? 600_000);
    const unknownKid = kid !== undefined && !this.keys.some((k) => k.kid === kid) && age > (this.options.minRefetchMs ?? 30_000);
    if (stale || unknownKid) await (this.pending ??= this.refresh().finally(() => (this.pending = undefined)));
    return this.keys;
  }

  private async refresh(): Promise<void> {
    const { url, logger } = this.options;
    try {
      const res = await (this.options.fetch ?? fetch)(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(10_000) });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const body = (await res.json()) as { keys?: unknown };
      if (!Array.isArray(body.keys)) throw new Error('no "keys" array');
      this.keys = (body.keys as HonoJsonWebKey[]).filter(isPublicAsymmetricKey);
      this.fetchedAt = this.options.clock.now();
    } catch (e) {
      // Keep the keys held so far: a provider that is down for a moment does not lock every caller out.
      logger.log('warn', 'JWKS fetch failed', { url, message: (e as Error).message, keysKept: this.keys.length });
      // Try again on the next token rather than on every one.
      this.fetchedAt = this.keys.length > 0 ? this.fetchedAt : this.options.clock.now() - (this.options.maxAgeMs ?? 600_000) + (this.options.minRefetchMs ?? 30_000);
    }
  }
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'];

function isPublicAsymmetricKey(key: HonoJsonWebKey): boolean {
  if (typeof key !== 'object' || key === null) return false;
  if (!['RSA', 'EC', 'OKP'].includes(String(key.kty))) return false;
  if (key.use !== undefined && key.use !== 'sig') return false;
  return !PRIVATE_MEMBERS.some((member) => member in key);
}
