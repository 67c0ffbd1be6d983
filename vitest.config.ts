import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Test files mostly wait — on servers, child processes, Chromium, terraform — so more of them run at
// once than there are cores: vitest's default (cores − 1) ran one file at a time on a 2-core machine.
// AEGIS_TEST_WORKERS sets the number (CI runs several suites side by side and divides them).
const workers = Number(process.env.AEGIS_TEST_WORKERS) || Math.max(4, availableParallelism());

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'sdks/node/test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    maxWorkers: workers,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
