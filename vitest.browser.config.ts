import { defineConfig } from 'vitest/config';

/** Browser tests (Playwright + Debian's Chromium): `npm run test:browser`. */
export default defineConfig({
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    include: ['test/browser/**/*.test.ts'],
    maxWorkers: 1,
    testTimeout: 60_000,
    hookTimeout: 90_000,
  },
});
