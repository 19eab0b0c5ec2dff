import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    include: ['test/**/*.test.ts', 'clients/typescript/test/**/*.test.ts'],
    exclude: ['test/browser/**', 'test/ops/**'],
    // PGlite instances are heavy; two cores: keep parallelism modest.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
