import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['runtime/**/*.test.ts', 'plugin/**/*.test.ts', 'toolchain/**/*.test.ts', 'cli/**/*.test.ts', 'client/**/*.test.ts', 'client/**/*.test.tsx', 'e2e/**/*.test.ts'],
    globalSetup: ['e2e/support/global-setup.ts'],
    // The default report, then one line per reason when suites were skipped (never a silent "passed").
    reporters: ['default', './e2e/support/skip-summary-reporter.ts'],
    // Two cores: a few files at a time; each file uses its own databases and ports.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
