import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAppOnce } from '../plugin/load-app-once.ts';
import { checkMigrations } from '../plugin/verify-database.ts';
import type { GateResult, VerifyReport } from '../plugin/verify.ts';
import { defineSchema, t, table } from '../runtime/schema.ts';
import { createTestApp, type RunResult, runFw } from './support/app.ts';

// `fw verify` on two apps shared by the tests: a healthy minimal-web with one passing test, and a
// broken one with one fault per gate. Inside the repo, so the apps' TypeScript, Vite and Vitest resolve.
// Under load a gate can take tens of seconds (each PGlite start), hence the generous timeouts.
const slow = 300_000;

const passingTest = `import { expect, it } from 'vitest';

it('adds', () => {
  expect(1 + 1).toBe(2);
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
    expect(run).toMatchObject({ version: 1, reason: 'passed', totals: { files: 1, tests: 1, passed: 1, failed: 0 }, failures: [] });
  });

  it('strict (`--strict`) adds migrations, the red team and the web build; the backend build is skipped with its reason', { timeout: slow }, async () => {
    const result = await runFw(['verify', '--strict', '--json'], { cwd: app.dir });
    const r = report(result);
    expect(result.code, result.stdout).toBe(0);
    expect(r.level).toBe('strict');
    expect(r.gates.map((g) => g.name)).toEqual(['generated', 'check', 'typecheck', 'migrations', 'boot', 'tests', 'redteam', 'web-build', 'backend-build']);
    expect(statuses(r)).toMatchObject({ migrations: 'passed', redteam: 'passed', 'web-build': 'passed', 'backend-build': 'skipped' });
    expect(gate(r, 'backend-build').reason).toMatch(/fw build/);
    // The earlier boot created .fw/db, so the migrations are checked against it.
    expect(gate(r, 'migrations').diagnostics).toEqual([expect.objectContaining({ code: 'migrations_database', path: '.fw/db', severity: 'info' })]);
    for (const g of r.gates) expect(typeof g.durationMs).toBe('number');
  });

  it('the migrations check: additive pending changes warn, changes that need a decision fail', { timeout: slow }, async () => {
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
  let app: Awaited<ReturnType<typeof createTestApp>>;
  beforeAll(async () => {
    app = await createTestApp(
      'minimal-web',
      {
        'tests/health.test.ts': passingTest,
        'tests/broken.test.ts': `import { expect, it } from 'vitest';\n\nit('counts notes', () => {\n  expect(1 + 1).toBe(3);\n});\n`,
      },
      { insideRepo: true },
    );
    // createNote: a type error, and a write tool that runs without approval (red team: approval_bypass_risk).
    const entry = path.join(app.dir, 'src/commands/createNote.ts');
    const source = await readFile(entry, 'utf8');
    await writeFile(
      entry,
      source.replace("  policy: 'user',", "  policy: 'user',\n  tool: { needsApproval: false },") + "\nexport const pageSize: number = 'twenty';\n",
    );
    const generated = await runFw(['generate', '--json'], { cwd: app.dir });
    expect(generated.code, generated.stdout + generated.stderr).toBe(0);
    // A hand edit under src/fw/_generated/ (drift), made after generating.
    await appendFile(path.join(app.dir, 'src/fw/_generated/api.ts'), '\n// edited by hand\n');
  }, slow);
  afterAll(() => app?.remove());

  it('smoke fails on drift and the type error, still probes the boot, and exits non-zero', { timeout: slow }, async () => {
    const result = await runFw(['verify', '--smoke', '--json'], { cwd: app.dir });
    const r = report(result);
    expect(result.code).toBe(1);
    expect(r.ok).toBe(false);
    expect(statuses(r)).toEqual({ generated: 'failed', check: 'passed', typecheck: 'failed', boot: 'passed' });
    expect(gate(r, 'generated').diagnostics).toEqual([expect.objectContaining({ code: 'generated_drift', path: 'src/fw/_generated/api.ts', suggestedCommand: 'fw generate' })]);
    expect(gate(r, 'typecheck').diagnostics).toContainEqual(expect.objectContaining({ path: expect.stringMatching(/^src\/commands\/createNote\.ts:\d+:\d+$/), code: 'TS2322', severity: 'error' }));
  });

  it('strict also fails the tests and the red team, and checks the database in memory while another process holds it', { timeout: slow }, async () => {
    // What a running `fw dev` leaves: .fw/db locked by a live process (this one).
    await mkdir(path.join(app.dir, '.fw/db'), { recursive: true });
    await writeFile(path.join(app.dir, '.fw/db.lock'), String(process.pid));
    const result = await runFw(['verify', 'release', '--json'], { cwd: app.dir });
    const r = report(result);
    expect(result.code).toBe(1);
    expect(statuses(r)).toEqual({
      generated: 'failed',
      check: 'passed',
      typecheck: 'failed',
      migrations: 'passed',
      boot: 'passed',
      tests: 'failed',
      redteam: 'failed',
      'web-build': 'passed',
      'backend-build': 'skipped',
    });
    expect(gate(r, 'tests').diagnostics).toContainEqual(expect.objectContaining({ code: 'test_failed', path: 'tests/broken.test.ts', message: expect.stringContaining('counts notes') }));
    expect(gate(r, 'redteam').diagnostics).toContainEqual(expect.objectContaining({ code: 'approval_bypass_risk', path: 'createNote', severity: 'error' }));
    expect(gate(r, 'migrations').diagnostics).toContainEqual(expect.objectContaining({ code: 'migrations_database', path: 'memory://', message: expect.stringContaining('in use by another fw process') }));
    expect(gate(r, 'boot').diagnostics).toContainEqual(expect.objectContaining({ code: 'boot_database', path: 'memory://' }));
  });
});
