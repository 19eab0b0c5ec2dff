import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/timeouts.ts'],
    // Files share their worker's module graph and PGlite (test/helpers/db.ts): importing the app once
    // per worker instead of once per file saves ~40% of the suite's CPU. Nothing in src/ keeps
    // module-level state, and the tests stub no modules or globals, so files cannot leak into each other.
    isolate: false,
    include: ['test/**/*.test.ts', 'clients/typescript/test/**/*.test.ts'],
    exclude: ['test/browser/**', 'test/ops/**'],
    // PGlite instances are heavy; two cores: keep parallelism modest.
    maxWorkers: 2,
    // testTimeout and hookTimeout: scaled per run from the measured start-up (test/helpers/timeouts.ts).
  },
});
