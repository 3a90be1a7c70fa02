// `npm install` here, and `npm pack`, build dist/ when it is older than its sources (build-if-stale.mjs,
// which says what it is doing as it goes). npm also runs this for every app
// that links this checkout (`"fwjs": "file:<checkout>"`, as fw's tests and `npm run demo` create them)
// on each of that app's installs — and a rebuild there rewrites dist/ under whatever is using it at that
// moment (a running `fw dev`, the rest of the test suite). A linked checkout that is built already is
// left as it is. Plain JavaScript: it may run on the Node.js that installs the app, not this repo's.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const checkout = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const installer = process.env.INIT_CWD ? path.resolve(process.env.INIT_CWD) : checkout;
if (installer !== checkout && existsSync(path.join(checkout, 'dist/cli/bin.js'))) {
  process.stdout.write(`fw: ${checkout} is linked and built already; not rebuilding it (npm run build there does).\n`);
  process.exit(0);
}
const build = spawnSync(process.execPath, [path.join(checkout, 'scripts/build-if-stale.mjs')], { cwd: checkout, stdio: 'inherit' });
process.exit(build.status ?? 1);
