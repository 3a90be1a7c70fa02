import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadAppOnce } from '../plugin/load-app-once.ts';
import { checkMigrations } from '../toolchain/verify/verify-database.ts';
import type { GateResult, VerifyReport } from '../toolchain/verify/verify.ts';
import { defineSchema, t, table } from '../runtime/core/schema.ts';
import { copyTestApp, createTestApp, type RunResult, runFw } from './support/app.ts';

// `fw verify` on two apps: a healthy minimal-web (its template test plus one more) shared by its tests,
// each setting up the app database it reads, and a broken one with one fault per gate, copied for each
// test (a run leaves a database, a recorded test run or a lock behind). Inside the repo, so the apps'
// TypeScript, Vite and Vitest resolve.
// Under load a gate can take tens of seconds (each PGlite start), hence the generous timeouts.
const slow = 300_000;

const passingTest = `import { expect, it } from 'vitest';

it('adds', () => {
  expect(1 + 1).toBe(2);
});
`;

const buildModeQuery = `import { query } from 'fwjs';

const mode: string = (import.meta as unknown as { env: { MODE: string } }).env.MODE;

export default query({
  description: 'The mode the backend runs in.',
  policy: 'user',
  handler: () => ({ mode }),
});
`;

function report(result: RunResult): VerifyReport {
  try {
    return JSON.parse(result.stdout) as VerifyReport;
  } catch {
    throw new Error(`fw verify printed no JSON (exit ${result.code}).\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  }
}

const statuses = (r: VerifyReport) => Object.fromEntries(r.gates.map((g) => [g.name, g.status]));
const gate = (r: VerifyReport, name: GateResult['name']) => r.gates.find((g) => g.name === name)!;

describe('fw verify on a healthy app', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  beforeAll(async () => {
    app = await createTestApp('minimal-web', { 'tests/health.test.ts': passingTest }, { insideRepo: true });
  });
  afterAll(() => app?.remove());

  it('smoke (`fw verify quick`): drift, check, typecheck and the boot probe pass', { timeout: slow }, async () => {
    const result = await runFw(['verify', 'quick', '--json'], { cwd: app.dir });
    const r = report(result);
    expect(result.code, result.stdout).toBe(0);
    expect(r).toMatchObject({ ok: true, level: 'smoke' });
    expect(statuses(r)).toEqual({ generated: 'passed', check: 'passed', typecheck: 'passed', boot: 'passed' });
    expect(gate(r, 'boot').diagnostics).toContainEqual(expect.objectContaining({ code: 'boot_database', path: '.fw/db' }));
  });

  it('standard (`--level agent`) adds the app’s tests, recorded in .fw/last-test-run.json', { timeout: slow }, async () => {
    const result = await runFw(['verify', '--level', 'agent', '--json'], { cwd: app.dir });
    const r = report(result);
    expect(result.code, result.stdout).toBe(0);
    expect(r.level).toBe('standard');
    expect(statuses(r)).toEqual({ generated: 'passed', check: 'passed', typecheck: 'passed', boot: 'passed', tests: 'passed' });
    const run = JSON.parse(await readFile(path.join(app.dir, '.fw/last-test-run.json'), 'utf8'));
    // tests/notes.test.ts comes with the template (fw/testing, in-memory database); tests/health.test.ts is this test's.
    expect(run).toMatchObject({ version: 1, reason: 'passed', totals: { files: 2, tests: 4, passed: 4, failed: 0 }, failures: [] });
    expect(gate(r, 'tests').ran).toEqual([expect.stringMatching(/^vitest run /)]);
  });

  it('strict (`--strict`) adds migrations, the red team and the production build (web and backend), each saying what it ran', { timeout: slow }, async () => {
    // The app database exists (as after `fw dev`), so the migrations gate checks against it.
    const migrated = await runFw(['db', 'migrate', '--json'], { cwd: app.dir });
    expect(migrated.code, migrated.stdout + migrated.stderr).toBe(0);
    const result = await runFw(['verify', '--strict', '--json'], { cwd: app.dir });
    const r = report(result);
    expect(result.code, result.stdout).toBe(0);
    expect(r.level).toBe('strict');
    expect(r.gates.map((g) => g.name)).toEqual(['generated', 'check', 'typecheck', 'migrations', 'boot', 'tests', 'redteam', 'web-build', 'backend-build']);
    expect(statuses(r)).toMatchObject({ migrations: 'passed', redteam: 'passed', 'web-build': 'passed', 'backend-build': 'passed' });
    expect(gate(r, 'backend-build').ran).toEqual([expect.stringMatching(/^fw build's server step: bundle src\/ into \.fw\/verify\/\w+\/server\/app\.mjs/)]);
    expect(gate(r, 'backend-build').diagnostics).toEqual([expect.objectContaining({ code: 'backend_build', severity: 'info', message: 'Bundled and loaded 6 entries.' })]);
    expect(gate(r, 'web-build').ran).toEqual([expect.stringMatching(/^vite build web --outDir \.fw\/verify\/\w+\/web/)]);
    expect(gate(r, 'typecheck').ran).toEqual([expect.stringContaining('tsc -p tsconfig.json --noEmit'), expect.stringContaining('tsc -p web/tsconfig.json --noEmit')]);
    for (const g of r.gates) expect(g.ran.length, g.name).toBeGreaterThan(0);
    // The builds go to a scratch directory, removed afterwards: nothing replaces a deployable .fw/build.
    expect(existsSync(path.join(app.dir, '.fw/verify'))).toBe(false);
    expect(existsSync(path.join(app.dir, '.fw/build'))).toBe(false);
    // .fw/db exists, so the migrations are checked against it.
    expect(gate(r, 'migrations').diagnostics).toEqual([expect.objectContaining({ code: 'migrations_database', path: '.fw/db', severity: 'info' })]);
    for (const g of r.gates) expect(typeof g.durationMs).toBe('number');
  });

  it('the migrations check: additive pending changes warn, changes that need a decision fail', { timeout: slow }, async () => {
    // The app database, migrated to the template's schema: what the changed schema below is planned against.
    const migrated = await runFw(['db', 'migrate', '--json'], { cwd: app.dir });
    expect(migrated.code, migrated.stdout + migrated.stderr).toBe(0);
    const loaded = await loadAppOnce(app.dir);
    // notes without `body` (a drop: needs a decision) and with a new nullable `pinned` (additive).
    const schema = defineSchema({
      notes: table(
        { id: t.uuid().primaryKey().defaultRandom(), title: t.text(), author_id: t.text(), created_at: t.timestamptz().defaultNow(), pinned: t.boolean().nullable() },
        { indexes: [{ columns: ['created_at'] }] },
      ),
    });
    const diagnostics = await checkMigrations(app.dir, { ...loaded, schema });
    expect(diagnostics).toContainEqual(expect.objectContaining({ code: 'migration_pending', severity: 'warning', path: 'schema.notes.pinned', suggestedCommand: 'fw db migrate' }));
    expect(diagnostics.find((d) => d.severity === 'error')).toMatchObject({ suggestedCommand: 'fw db status --json' });
    expect(diagnostics.find((d) => d.severity === 'error')!.message).toMatch(/body/);
  });

  it('refuses two different levels and unknown ones', async () => {
    const both = await runFw(['verify', 'quick', '--strict', '--json'], { cwd: app.dir });
    expect(both.code).toBe(1);
    expect(JSON.parse(both.stdout)).toMatchObject({ ok: false, kind: 'invalid_arguments' });
    const unknown = await runFw(['verify', '--level', 'thorough', '--json'], { cwd: app.dir });
    expect(JSON.parse(unknown.stdout)).toMatchObject({ ok: false, kind: 'invalid_arguments', message: expect.stringContaining('thorough') });
  });
});

describe('fw verify on a broken app', () => {
  // The broken app as set up once; each test runs fw verify on a copy of its own.
  let broken: Awaited<ReturnType<typeof createTestApp>>;
  let app: Awaited<ReturnType<typeof createTestApp>>;
  beforeAll(async () => {
    broken = await createTestApp(
      'minimal-web',
      {
        'tests/health.test.ts': passingTest,
        'tests/broken.test.ts': `import { expect, it } from 'vitest';\n\nit('counts notes', () => {\n  expect(1 + 1).toBe(3);\n});\n`,
        // fw check: a component calling the runtime with raw fetch instead of the generated client.
        'web/src/raw.ts': "export const load = () => fetch('/queries/listNotes', { method: 'POST' });\n",
        // Loads under fw dev (Vite's module runner defines import.meta.env), throws in the production bundle.
        'src/queries/buildMode.ts': buildModeQuery,
      },
      { insideRepo: true },
    );
    // createNote: a type error, and a write tool that runs without approval (red team: approval_bypass_risk).
    const entry = path.join(broken.dir, 'src/commands/createNote.ts');
    const source = await readFile(entry, 'utf8');
    await writeFile(
      entry,
      source.replace("  policy: 'user',", "  policy: 'user',\n  tool: { needsApproval: false },") + "\nexport const pageSize: number = 'twenty';\n",
    );
    const generated = await runFw(['generate', '--json'], { cwd: broken.dir });
    expect(generated.code, generated.stdout + generated.stderr).toBe(0);
    // A hand edit under src/fw/_generated/ (drift), made after generating.
    await appendFile(path.join(broken.dir, 'src/fw/_generated/api.ts'), '\n// edited by hand\n');
  }, slow);
  afterAll(() => broken?.remove());
  beforeEach(async () => {
    app = await copyTestApp(broken.dir);
  });
  afterEach(() => app?.remove());

  it('smoke fails on drift, the check error and the type error, still probes the boot, and exits non-zero', { timeout: slow }, async () => {
    const result = await runFw(['verify', '--smoke', '--json'], { cwd: app.dir });
    const r = report(result);
    expect(result.code).toBe(1);
    expect(r.ok).toBe(false);
    expect(statuses(r)).toEqual({ generated: 'failed', check: 'failed', typecheck: 'failed', boot: 'passed' });
    expect(gate(r, 'check').diagnostics).toContainEqual(expect.objectContaining({ code: 'raw_runtime_fetch', path: 'web/src/raw.ts:1:27', severity: 'error' }));
    expect(gate(r, 'check').ran).toEqual(['fw check --no-typecheck']);
    expect(gate(r, 'generated').diagnostics).toEqual([expect.objectContaining({ code: 'generated_drift', path: 'src/fw/_generated/api.ts', suggestedCommand: 'fw generate' })]);
    expect(gate(r, 'typecheck').diagnostics).toContainEqual(expect.objectContaining({ path: expect.stringMatching(/^src\/commands\/createNote\.ts:\d+:\d+$/), code: 'TS2322', severity: 'error' }));
  });

  it('standard (the default level) also runs the tests: the failing one fails the gate, the template’s passes', { timeout: slow }, async () => {
    const result = await runFw(['verify', '--json'], { cwd: app.dir });
    const r = report(result);
    expect(result.code).toBe(1);
    expect(r.level).toBe('standard');
    expect(statuses(r)).toEqual({ generated: 'failed', check: 'failed', typecheck: 'failed', boot: 'passed', tests: 'failed' });
    expect(gate(r, 'tests').diagnostics).toEqual([
      expect.objectContaining({ code: 'test_failed', path: 'tests/broken.test.ts', suggestedCommand: 'fw repair diagnose --from-last-test-run --json' }),
      expect.objectContaining({ code: 'test_totals', severity: 'info', message: '4 passed, 1 failed, 0 skipped in 3 file(s).' }),
    ]);
  });

  it('strict also fails the tests, the red team and the backend build, and checks the database in memory while another process holds it', { timeout: slow }, async () => {
    // What a running `fw dev` leaves: .fw/db locked by a live process (this one).
    await mkdir(path.join(app.dir, '.fw/db'), { recursive: true });
    await writeFile(path.join(app.dir, '.fw/db.lock'), String(process.pid));
    const result = await runFw(['verify', 'release', '--json'], { cwd: app.dir });
    const r = report(result);
    expect(result.code).toBe(1);
    expect(statuses(r)).toEqual({
      generated: 'failed',
      check: 'failed',
      typecheck: 'failed',
      migrations: 'passed',
      boot: 'passed',
      tests: 'failed',
      redteam: 'failed',
      'web-build': 'passed',
      'backend-build': 'failed',
    });
    expect(gate(r, 'backend-build').diagnostics).toEqual([
      expect.objectContaining({ code: 'build_evaluation_failed', path: 'src/queries/buildMode.ts', severity: 'error', message: expect.stringContaining("reading 'MODE'"), suggestedCommand: 'fw build --json' }),
    ]);
    expect(gate(r, 'tests').diagnostics).toContainEqual(expect.objectContaining({ code: 'test_failed', path: 'tests/broken.test.ts', message: expect.stringContaining('counts notes') }));
    expect(gate(r, 'redteam').diagnostics).toContainEqual(expect.objectContaining({ code: 'approval_bypass_risk', path: 'createNote', severity: 'error' }));
    expect(gate(r, 'migrations').diagnostics).toContainEqual(expect.objectContaining({ code: 'migrations_database', path: 'memory://', message: expect.stringContaining('in use by another process') }));
    expect(gate(r, 'boot').diagnostics).toContainEqual(expect.objectContaining({ code: 'boot_database', path: 'memory://' }));
    // Drift is reported, not repaired: the web build (whose fw plugin regenerates) left the hand edit alone.
    expect(await readFile(path.join(app.dir, 'src/fw/_generated/api.ts'), 'utf8')).toMatch(/\n\/\/ edited by hand\n$/);
  });
});
