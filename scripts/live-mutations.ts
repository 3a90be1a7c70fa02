/**
 * The live tests' mutation check (#47): applies, one at a time, ten mutations of the live code that give
 * wrong results (the ones the #47 review made by hand), runs the live tests against each, and prints
 * which tests caught it — or MISSED. A mutation is a text replacement that must match exactly once, so
 * an edit that moves the code makes the tool fail loudly instead of testing nothing.
 *
 * It works on a temporary copy of the committed tree (`git archive HEAD`, node_modules linked), so the
 * checkout is never touched, even when interrupted. Not part of `npm test`: it runs the suites ten times.
 *
 *   npm run -s live:mutations                       # every mutation, the live tests below
 *   npm run -s live:mutations -- --only 3,9         # some of them
 *   npm run -s live:mutations -- --tests runtime/live/live-steps.property.test.ts
 *
 * PostgreSQL suites run when FW_TEST_DATABASE_URL is set, as in the test suite. Exit code 1 when a
 * mutation was missed by every test run.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface Mutation {
  what: string;
  file: string;
  find: string;
  replace: string;
}

/** The review's ten mutations (issue #47, finding 4), in its order. */
const MUTATIONS: Mutation[] = [
  {
    what: 'a table dropped from the installed read set',
    file: 'runtime/live/hub/reruns.ts',
    find: '  for (const table of declared) readSet.set(table, [{ conditions: [] }]);\n  return readSet;',
    replace: '  for (const table of declared) readSet.set(table, [{ conditions: [] }]);\n  if (readSet.size > 1) readSet.delete([...readSet.keys()].at(-1)!);\n  return readSet;',
  },
  {
    what: '`<>` read as `=`',
    file: 'runtime/live/read-set.ts',
    find: "return test({ op: 'none-of', values: [...new Set(constants as string[])] });",
    replace: "return test({ op: 'one-of', values: [...new Set(constants as string[])] });",
  },
  {
    what: 'an integer `<=` bound losing its edge',
    file: 'runtime/live/read-set.ts',
    find: "if (operator === '<=') return found({ column, kind: 'range', max: n });",
    replace: "if (operator === '<=') return found({ column, kind: 'range', max: n - 1n });",
  },
  {
    what: 'every function treated as built-in',
    file: 'runtime/live/function-reads.ts',
    find: 'export function unprovenFunctions(called: Iterable<string>, catalog: FunctionCatalog): string[] {',
    replace: 'export function unprovenFunctions(called: Iterable<string>, catalog: FunctionCatalog): string[] {\n  if (called || catalog) return [];',
  },
  {
    what: 'the clock refusal off',
    file: 'runtime/live/hub/reruns.ts',
    find: 'if (clock.length + recorder.clockInputs.size > 0 && refreshOf(group.entry) === undefined) {',
    replace: 'if (false && clock.length + recorder.clockInputs.size > 0 && refreshOf(group.entry) === undefined) {',
  },
  {
    what: 'resume ignoring the oldest-open transaction',
    file: 'runtime/live/log.ts',
    find: "and (r.revision > ${last}::bigint or r.xid >= coalesce((select horizon from anchor), '0'::xid8))",
    replace: 'and (r.revision > ${last}::bigint)',
  },
  {
    what: 'no recheck after a failed run',
    file: 'runtime/live/hub/reruns.ts',
    find: '(a run that succeeds clears the error).\n        if (scheduler.missedDuringRun(group, group.readSet!)) void group.runs.wake();',
    replace: '(a run that succeeds clears the error).',
  },
  {
    what: 'a strict pagination bound',
    file: 'runtime/core/paginate.ts',
    find: "return eb.and([eb(first, `${strict(direction)}=` as '<=' | '>=', values[0]!), nested(0)]);",
    replace: 'return eb.and([eb(first, strict(direction), values[0]!), nested(0)]);',
  },
  {
    what: 'capturing only the new row image',
    file: 'runtime/db/ddl.ts',
    find: 'from (select to_jsonb(o.*) as j from fw_old o union all select to_jsonb(n.*) from fw_new n) i group by 1',
    replace: 'from (select to_jsonb(n.*) as j from fw_new n) i group by 1',
  },
  {
    what: "a LEFT JOIN's WHERE conditions kept for the joined table",
    file: 'runtime/live/read-set.ts',
    find: 'for (const conjunct of where) keep(conjunct, (entry) => !entry.nullable);',
    replace: 'for (const conjunct of where) keep(conjunct, () => true);',
  },
];

/** The live tests: the whole-path property tests first, then the focused suites. */
const LIVE_TESTS = [
  'runtime/live/live-steps.property.test.ts',
  'runtime/live/read-set.property.test.ts',
  'runtime/live/live-http.test.ts',
  'runtime/live/live-pagination.test.ts',
  'runtime/live/log.test.ts',
  'runtime/live/read-set.test.ts',
  'runtime/live/live-precision.test.ts',
  'runtime/live/live-join-precision.test.ts',
  'runtime/live/function-identity.test.ts',
  'runtime/live/clock-inputs.test.ts',
  'runtime/live/function-reads.test.ts',
];

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const only = option('--only')?.split(',').map(Number);
const tests = option('--tests')?.split(',') ?? LIVE_TESTS;

/** A copy of the committed tree with the checkout's node_modules, and a vitest config without the build step. */
function copyTree(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'fw-live-mutations-'));
  execFileSync('sh', ['-c', `git -C "${root}" archive HEAD | tar -x -C "${dir}"`]);
  symlinkSync(realpathSync(path.join(root, 'node_modules')), path.join(dir, 'node_modules'));
  // The global setup builds dist/ (spawned fw processes use it); the live tests run from source.
  writeFileSync(
    path.join(dir, 'vitest.mutations.config.ts'),
    `import { defineConfig } from 'vitest/config';\nexport default defineConfig({ test: { include: ['runtime/**/*.test.ts'], maxWorkers: 2, testTimeout: 300_000, hookTimeout: 120_000 } });\n`,
  );
  return dir;
}

interface Outcome {
  caughtBy: string[];
  seconds: number;
}

/** Runs the tests in `dir`; the files with a failed test (and how many failed in each). */
function runTests(dir: string): Outcome {
  const report = path.join(dir, 'vitest-report.json');
  rmSync(report, { force: true });
  const started = Date.now();
  // This Node (node_modules/.bin/vitest would start whatever `node` the PATH has first, maybe an old one).
  spawnSync(process.execPath, [path.join(dir, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'vitest.mutations.config.ts', '--reporter=json', `--outputFile=${report}`, ...tests], {
    cwd: dir,
    env: { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  if (!existsSync(report)) return { caughtBy: ['(vitest wrote no report: the run itself failed)'], seconds };
  const result = JSON.parse(readFileSync(report, 'utf8')) as { testResults: Array<{ name: string; status: string; assertionResults: Array<{ status: string }> }> };
  const caughtBy = result.testResults
    .map((file) => ({ file: path.relative(dir, file.name), failed: file.assertionResults.filter((test) => test.status === 'failed').length || (file.status === 'failed' ? 1 : 0) }))
    .filter((file) => file.failed > 0)
    .map((file) => `${file.file.replace(/^runtime\/live\//, '')} (${file.failed})`);
  return { caughtBy, seconds };
}

const dir = copyTree();
const rows: Array<{ no: number; what: string } & Outcome> = [];
try {
  console.error(`fw live mutations: ${tests.length} test file(s) per mutation, in ${dir}`);
  const baseline = runTests(dir);
  if (baseline.caughtBy.length > 0) throw new Error(`the unmutated tree fails already (${baseline.caughtBy.join(', ')}): fix that first`);
  console.error(`baseline: green in ${baseline.seconds}s`);
  for (const [i, mutation] of MUTATIONS.entries()) {
    const no = i + 1;
    if (only && !only.includes(no)) continue;
    const file = path.join(dir, mutation.file);
    const original = readFileSync(file, 'utf8');
    const matches = original.split(mutation.find).length - 1;
    if (matches !== 1) throw new Error(`mutation ${no} (${mutation.what}) matches ${matches} times in ${mutation.file}: update its text in scripts/live-mutations.ts`);
    writeFileSync(file, original.replace(mutation.find, () => mutation.replace));
    try {
      const outcome = runTests(dir);
      rows.push({ no, what: mutation.what, ...outcome });
      console.error(`${no}. ${mutation.what}: ${outcome.caughtBy.length > 0 ? `caught by ${outcome.caughtBy.join(', ')}` : 'MISSED'} (${outcome.seconds}s)`);
    } finally {
      writeFileSync(file, original);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

console.log('| # | mutation | caught by (failed tests) | s |');
console.log('|---|---|---|---|');
for (const row of rows) console.log(`| ${row.no} | ${row.what} | ${row.caughtBy.length > 0 ? row.caughtBy.join(', ') : '**MISSED**'} | ${row.seconds} |`);
process.exitCode = rows.some((row) => row.caughtBy.length === 0) ? 1 : 0;
