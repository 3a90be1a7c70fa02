// Builds dist/ (`npm run build`: tsc, then the dashboard's Vite build) unless it is newer than every
// source it is made from, saying so as it goes — a build of ~1 min says what it is doing at least every
// few seconds instead of sitting silent. `npm install` here (prepare), `npm run demo` and the test suite's
// global setup build through it, so a checkout built once is not built again. `--tsc` builds the
// TypeScript alone (what the suite needs), and `--force` builds whatever the dates say.
// Plain JavaScript: it may run on the Node.js that installs an app linking this checkout.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const checkout = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tscOnly = process.argv.includes('--tsc');
const force = process.argv.includes('--force');
/** What the build reads: every file under these, and these files. */
const sources = ['runtime', 'client', 'plugin', 'toolchain', 'cli', 'testing', 'dashboard', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];
/** Written after a build that finished; its time is the build's. */
const stamp = path.join(checkout, 'dist', tscOnly ? '.tsc-built' : '.built');
const HEARTBEAT_MS = 3_000;

function newestSource(entry) {
  const stat = statSync(entry, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const name of readdirSync(entry)) {
    if (name === 'node_modules' || name === 'dist') continue;
    newest = Math.max(newest, newestSource(path.join(entry, name)));
  }
  return newest;
}

function isStale() {
  if (force || !existsSync(stamp)) return true;
  const built = statSync(stamp).mtimeMs;
  return sources.some((source) => newestSource(path.join(checkout, source)) > built);
}

function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: checkout, stdio: 'inherit' });
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

if (!isStale()) {
  process.stdout.write(`fw: dist/ is up to date with the sources (${path.relative(process.cwd(), stamp) || stamp}); not rebuilding it.\n`);
  process.exit(0);
}
const started = Date.now();
const what = tscOnly ? 'the TypeScript (tsc)' : 'the TypeScript (tsc) and the dashboard (vite build)';
process.stdout.write(`fw: building dist/ — ${what}, about a minute on two cores…\n`);
const heartbeat = setInterval(() => process.stdout.write(`fw: … still building dist/ (${Math.round((Date.now() - started) / 1000)} s)\n`), HEARTBEAT_MS);
const node = process.execPath;
let code = await run(node, [path.join(checkout, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json']);
if (code === 0 && !tscOnly) code = await run(node, [path.join(checkout, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'dashboard/vite.config.ts', '--logLevel', 'warn']);
clearInterval(heartbeat);
if (code !== 0) {
  process.stdout.write(`fw: building dist/ failed (exit ${code}).\n`);
  process.exit(code);
}
writeFileSync(stamp, `${new Date().toISOString()}\n`);
// A full build holds the TypeScript one too.
if (!tscOnly) writeFileSync(path.join(checkout, 'dist', '.tsc-built'), `${new Date().toISOString()}\n`);
process.stdout.write(`fw: built dist/ in ${Math.round((Date.now() - started) / 1000)} s.\n`);
