import type { HonoJsonWebKey } from 'hono/utils/jwt/jws';
import type { Clock, Logger } from '../ports.ts';

export interface JwksOptions {
  url: string;
  clock: Clock;
  logger: Logger;
}

/** Keys are fetched again after this long (providers rotate keys). */
const MAX_AGE_MS = 600_000;
/** A token naming a key not in the cache fetches again, but not more often than this: no refetch storm. */
const MIN_REFETCH_MS = 30_000;

/**
 * The signing keys of an OpenID Connect provider (its `jwks_uri`), cached and refreshed: fetched on first use, again
 * when they are older than MAX_AGE_MS, and when a token names a key id the cache does not hold (a rotation), at most
 * once per MIN_REFETCH_MS. A failed fetch keeps the keys held and is not tried again for MIN_REFETCH_MS either, so a
 * provider that is down costs one fetch per MIN_REFETCH_MS, not one per token. Only public keys of asymmetric algorithms are kept: a symmetric (`oct`) entry or private
 * material is dropped, so no token can be checked as an HMAC keyed with something public.
 */
export class JwksCache {
  private keys: HonoJsonWebKey[] = [];
  private fetchedAt = Number.NEGATIVE_INFINITY;
  /** The last fetch begun, whatever became of it. */
  private attemptedAt = Number.NEGATIVE_INFINITY;
  private pending: Promise<void> | undefined;

  constructor(private readonly options: JwksOptions) {}

  async keysFor(kid: string | undefined): Promise<HonoJsonWebKey[]> {
    const now = this.options.clock.now();
    const stale = now - this.fetchedAt > MAX_AGE_MS;
    const unknownKid = kid !== undefined && !this.keys.some((k) => k.kid === kid);
    if ((stale || unknownKid) && now - this.attemptedAt > MIN_REFETCH_MS) {
      this.pending ??= this.refresh().finally(() => {
        this.pending = undefined;
      });
      await this.pending;
    }
    return this.keys;
  }

  private async refresh(): Promise<void> {
    const { url, logger } = this.options;
    this.attemptedAt = this.options.clock.now();
    try {
      const res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(10_000) });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const body = (await res.json()) as { keys?: unknown };
      if (!Array.isArray(body.keys)) throw new Error('no "keys" array');
      this.keys = (body.keys as HonoJsonWebKey[]).filter(isPublicAsymmetricKey);
      this.fetchedAt = this.options.clock.now();
    } catch (e) {
      // Keep the keys held so far: a provider that is down for a moment does not lock every caller out.
      logger.log('warn', 'JWKS fetch failed', { url, message: (e as Error).message, keysKept: this.keys.length });
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
