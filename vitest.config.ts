import { tmpdir } from 'node:os';
import path from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';

// Node's compile cache for the workers (forked with this environment after the config loads): each
// file loads the same modules again, and the cache spares compiling them (fw's own processes keep
// theirs, cli/bin.ts).
process.env.NODE_COMPILE_CACHE ??= path.join(tmpdir(), 'node-compile-cache');

const include = ['runtime/**/*.test.ts', 'plugin/**/*.test.ts', 'toolchain/**/*.test.ts', 'cli/**/*.test.ts', 'client/**/*.test.ts', 'client/**/*.test.tsx', 'dashboard/**/*.test.ts', 'e2e/**/*.test.ts'];

/**
 * Test files that start nothing (no database, server, process, DOM or fake timer), write no
 * environment variable and switch on no module-wide state (telemetry's recent spans, say): they can
 * share one worker's modules instead of paying a worker of their own each (~0.3 s per file). Every
 * other file, and any new one until it is listed here, runs isolated.
 */
const sharingWorkers = [
  'client/live-store.test.ts',
  'client/nuxt/index.test.ts',
  'client/optimistic.test.ts',
  'client/paginated-live.test.ts',
  'client/resolve-entry.test.ts',
  'dashboard/src/default-identity.test.ts',
  'plugin/analyse/check-diagnostic.test.ts',
  'plugin/analyse/table-access.test.ts',
  'plugin/dev-server/log-once.test.ts',
  'plugin/dev-server/reload-report.test.ts',
  'plugin/generate/json-schema-type.test.ts',
  'plugin/overlay-load-error.test.ts',
  'plugin/schema-locations.test.ts',
  'runtime/ai/mock-model.test.ts',
  'runtime/auth/mint-token.test.ts',
  'runtime/config/config.test.ts',
  'runtime/core/backoff.test.ts',
  'runtime/core/canonical-json.test.ts',
  'runtime/core/single-flight.test.ts',
  'runtime/external/manifest.test.ts',
  'runtime/http/client-address.test.ts',
  'runtime/http/route-table.test.ts',
  'runtime/telemetry/database-spans.test.ts',
  'toolchain/ai/redteam/live-model.test.ts',
  'toolchain/create/template-bridge.test.ts',
  'toolchain/create/template-lock.test.ts',
  'toolchain/repair/repair-causes.test.ts',
  'toolchain/test/test-progress.test.ts',
];

export default defineConfig({
  test: {
    projects: [
      { extends: true, test: { name: 'isolated', include, exclude: [...configDefaults.exclude, ...sharingWorkers] } },
      { extends: true, test: { name: 'shared', include: sharingWorkers, isolate: false } },
    ],
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
