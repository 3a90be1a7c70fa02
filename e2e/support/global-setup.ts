import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Builds dist/ when it is older than its sources (scripts/build-if-stale.mjs; the TypeScript alone):
 * spawned `fw` processes and test apps import the built package, as users do.
 */
export default function setup(): void {
  execFileSync(process.execPath, [path.join(repoRoot, 'scripts/build-if-stale.mjs'), '--tsc'], { cwd: repoRoot, stdio: 'inherit' });
  const missing = [
    ...(process.env.FW_TEST_DATABASE_URL ? [] : ['FW_TEST_DATABASE_URL is not set: PostgreSQL suites are skipped (PGlite suites still run)']),
    ...(existsSync('/usr/bin/chromium') ? [] : ['/usr/bin/chromium is missing: browser suites are skipped (apt-get install -y chromium)']),
    ...(['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].some((file) => existsSync(file)) ? [] : ['pgbouncer is missing: the transaction-pooler suite is skipped (apt-get install -y pgbouncer)']),
  ];
  // CI runs everything: fail before the first test rather than after a run of skips.
  if (missing.length > 0 && process.env.FW_TEST_REQUIRE_ALL === '1') throw new Error(`FW_TEST_REQUIRE_ALL=1, but ${missing.join('; ')}`);
  for (const line of missing) console.warn(`\n${line}. The run ends with a list of what was skipped.\n`);
}
