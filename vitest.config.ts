import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';

/**
 * Three projects:
 * - `unit`: everything that needs only `npm ci` (the fast loop: `npx vitest --project unit`);
 * - `peers`: suites named `*.peers.test.ts`, which start or call system peers (Mono, an MIT KDC, gss-ntlmssp and
 *   python3-gssapi, PostgreSQL, tshark, the .NET SDK, Samba) that `.ci/run` installs. Each declares its peers through
 *   test/support/peers.ts: a missing peer skips the suite with a message naming it, or fails the run under
 *   REQUIRE_PEERS=1, which `.ci/run` sets;
 * - `workers`: test/runtimes/workers, run inside workerd.
 */
const PEERS = '**/*.peers.test.ts';
const WORKERS = 'test/runtimes/workers/**';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'tcp-bridge/**/*.test.ts'],
          exclude: [PEERS, WORKERS, '**/node_modules/**'],
          environment: 'node',
          testTimeout: 30000,
        },
      },
      {
        test: {
          name: 'peers',
          include: ['test/**/*.peers.test.ts', 'tcp-bridge/**/*.peers.test.ts'],
          exclude: [WORKERS, '**/node_modules/**'],
          environment: 'node',
          testTimeout: 30000,
        },
      },
      {
        // Runs inside workerd: the worker of wrangler.toml (its main, module rules and [vars]) answers SELF.fetch.
        plugins: [
          cloudflareTest({
            wrangler: { configPath: './wrangler.toml' },
            remoteBindings: false,
            // Keep the test output to failures: the request log lines of [vars] LOG_LEVEL=info are noise here.
            // HOST as `npm run start:workers` passes it: loopback, so the parity cases need no credential.
            miniflare: { bindings: { LOG_LEVEL: 'warn', HOST: '127.0.0.1' } },
          }),
        ],
        test: {
          name: 'workers',
          include: ['test/runtimes/workers/**/*.test.ts'],
          testTimeout: 30000,
        },
      },
    ],
  },
});
