import { defineConfig } from 'vitest/config';

/**
 * Operations tests (`npm run test:ops`): real `carebook` child processes, SIGKILL rounds, a private
 * PostgreSQL stopped and restarted. Slow and process-heavy, so one file at a time and apart from `npm test`.
 */
export default defineConfig({
  test: {
    include: ['test/ops/**/*.test.ts'],
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
