import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Builds dist/ once: spawned `fw` processes and test apps import the built package, as users do. */
export default function setup(): void {
  execFileSync(process.execPath, [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: repoRoot,
    stdio: 'inherit',
  });
  if (!process.env.FW_TEST_DATABASE_URL) {
    console.warn('\nFW_TEST_DATABASE_URL is not set: PostgreSQL suites are skipped (PGlite suites still run).\n');
  }
}
