import { existsSync } from 'node:fs';
import type { Reporter, TestModule, Vitest } from 'vitest/node';

/**
 * Ends `npm test` with one clear line per reason when suites were skipped, so that a run without
 * PostgreSQL or Chromium never reads as "all passed". With FW_TEST_REQUIRE_ALL=1 (CI sets it) any
 * skipped test fails the run instead.
 */
interface SkipReason {
  label: string;
  matches(fullName: string): boolean;
  /** Why the machine skipped them and what enables them; undefined when the machine has what they need. */
  missing(): string | undefined;
}

const reasons: SkipReason[] = [
  {
    label: 'PostgreSQL',
    matches: (name) => /postgres/i.test(name),
    missing: () =>
      process.env.FW_TEST_DATABASE_URL ? undefined : 'FW_TEST_DATABASE_URL is not set; run with FW_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test',
  },
  {
    label: 'PgBouncer',
    matches: (name) => /pgbouncer/i.test(name),
    missing: () =>
      ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].some((file) => existsSync(file)) ? undefined : 'pgbouncer is missing; install it with apt-get install -y pgbouncer',
  },
  {
    label: 'Chromium',
    matches: (name) => /chromium|browser/i.test(name),
    missing: () => (existsSync('/usr/bin/chromium') ? undefined : '/usr/bin/chromium is missing; install it with apt-get install -y chromium'),
  },
];

export default class SkipSummaryReporter implements Reporter {
  private filtered = false;

  onInit(vitest: Vitest): void {
    // A run narrowed with -t skips the rest on purpose; only whole-file runs are summarised.
    this.filtered = Boolean(vitest.config.testNamePattern);
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (this.filtered) return;
    const groups = new Map<string, { tests: number; files: Set<string>; why: string }>();
    for (const module of testModules) {
      for (const test of module.children.allTests('skipped')) {
        const reason = reasons.find((r) => r.matches(test.fullName) && r.missing());
        const key = reason?.label ?? 'other';
        const group = groups.get(key) ?? { tests: 0, files: new Set(), why: reason?.missing() ?? `skipped in code (.skip / .todo), e.g. "${test.fullName}"` };
        group.tests++;
        group.files.add(module.relativeModuleId);
        groups.set(key, group);
      }
    }
    if (groups.size === 0) return;
    const total = [...groups.values()].reduce((sum, group) => sum + group.tests, 0);
    const lines = [...groups].map(([label, group]) => `  ${label}: ${group.tests} tests in ${group.files.size} files skipped — ${group.why}`);
    const required = process.env.FW_TEST_REQUIRE_ALL === '1';
    const heading = required ? `FAIL: ${total} tests were skipped, and FW_TEST_REQUIRE_ALL=1 allows none:` : `NOTE: ${total} tests were skipped, not passed:`;
    console.log(`\n${heading}\n${lines.join('\n')}\n`);
    if (required) process.exitCode = 1;
  }
}
