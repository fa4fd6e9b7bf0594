import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'node',
          include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'tcp-bridge/**/*.test.ts'],
          exclude: ['test/workers/**', '**/node_modules/**'],
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
            miniflare: { bindings: { LOG_LEVEL: 'warn' } },
          }),
        ],
        test: {
          name: 'workers',
          include: ['test/workers/**/*.test.ts'],
          testTimeout: 30000,
        },
      },
    ],
  },
});
