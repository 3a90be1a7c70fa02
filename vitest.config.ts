import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['runtime/**/*.test.ts', 'plugin/**/*.test.ts', 'toolchain/**/*.test.ts', 'cli/**/*.test.ts', 'client/**/*.test.ts', 'client/**/*.test.tsx', 'dashboard/**/*.test.ts', 'e2e/**/*.test.ts'],
    globalSetup: ['e2e/support/global-setup.ts'],
    // The default report, then one line per reason when suites were skipped (never a silent "passed").
    reporters: ['default', './e2e/support/skip-summary-reporter.ts'],
    // Two cores: a few files at a time; each file uses its own databases and ports.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // happy-dom's fetch closes a response body stream twice when a live stream is reopened at once
    // (FetchBodyUtility, "Controller is already closed"): a bug of the test DOM, not of fw, which
    // browsers do not have (e2e/pages-optimistic-browser.test.ts runs the same in Chromium). Every
    // other unhandled error still fails the run.
    onUnhandledError(error) {
      if (/Controller is already closed/.test(error.message ?? '') && /FetchBodyUtility/.test(error.stack ?? '')) return false;
    },
  },
});
