/** JwksCache: a provider that is down costs one fetch per refetch interval, not one per token. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { JwksCache } from '../../src/http/jwks.ts';

describe('JwksCache when the provider fails', () => {
  it('tries again only after the refetch interval, with or without keys held', async () => {
    let requests = 0;
    const server = createServer((_, res) => {
      requests++;
      res.writeHead(503).end();
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', () => listening()));
    try {
      let now = 0;
      const warnings: string[] = [];
      const cache = new JwksCache({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`,
        clock: { now: () => now },
        logger: { log: (_level, message) => void warnings.push(message) },
      });
      expect(await cache.keysFor('k1')).toEqual([]);
      expect(requests).toBe(1);
      for (const at of [1_000, 10_000, 29_000]) {
        now = at;
        await cache.keysFor('k1');
      }
      expect(requests).toBe(1);
      now = 31_000;
      await cache.keysFor('k1');
      expect(requests).toBe(2);
      now = 700_000; // stale as well as unknown: still one fetch
      await cache.keysFor('k1');
      await cache.keysFor('k2');
      expect(requests).toBe(3);
      expect(warnings).toEqual(['JWKS fetch failed', 'JWKS fetch failed', 'JWKS fetch failed']);
    } finally {
      await new Promise((closed) => server.close(closed));
    }
  });
});
