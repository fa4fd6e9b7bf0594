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
    ],
  },
});
