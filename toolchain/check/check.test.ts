import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp } from '../../e2e/support/app.ts';
import { runChecks } from './check.ts';

const apps: Array<{ remove(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.remove()));
});

describe('fw check: generated_drift', () => {
  it('reports drift once, naming every drifted file and the one command that fixes it', async () => {
    const app = await createTestApp('minimal-web', {
      'src/queries/countNotes.ts': "import { query, sql } from 'fwjs';\nexport default query({ handler: (ctx) => ctx.db.selectFrom('notes').select(sql<string>`count(*)`.as('n')).execute() });\n",
    }, { insideRepo: true });
    apps.push(app);
    const report = await runChecks({ root: app.dir, typecheck: false });
    const drift = report.diagnostics.filter((d) => d.code === 'generated_drift');
    expect(drift).toHaveLength(1);
    expect(drift[0]).toMatchObject({ file: 'src/fw/_generated/agentContract.json', severity: 'error', suggestedCommand: 'fw generate' });
    expect(drift[0]!.message).toMatch(/^src\/fw\/_generated\/agentContract\.json is out of date\. .* Also out of date: src\/fw\/_generated\/agentTools\.json \(.*\), src\/fw\/_generated\/api\.json/);
    expect(report.checks.find((c) => c.name === 'generated')).toMatchObject({ ok: false, errors: 1 });
  });

  it('passes after a web/ edit that only moves code (the generated files record no line numbers)', async () => {
    const app = await createTestApp('minimal-web', {}, { insideRepo: true });
    apps.push(app);
    const file = path.join(app.dir, 'web/src/App.tsx');
    await writeFile(file, `\n\n\n${await readFile(file, 'utf8')}`);
    const report = await runChecks({ root: app.dir, typecheck: false });
    expect(report.diagnostics.filter((d) => d.code === 'generated_drift')).toEqual([]);
  });
});

// The app's own TypeScript, for real, over a project small enough to check in a second or two.
describe('fw check: types', () => {
  const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const tsconfig = JSON.stringify({ compilerOptions: { strict: true, noEmit: true, types: [], lib: ['es2023'], target: 'es2023', module: 'nodenext' }, include: ['src'] });
  const project = async (parent: string) => {
    await mkdir(parent, { recursive: true });
    const dir = await mkdtemp(path.join(parent, 'fw-check-types-'));
    apps.push({ remove: () => rm(dir, { recursive: true, force: true }) });
    await mkdir(path.join(dir, 'src'));
    await writeFile(path.join(dir, 'package.json'), '{ "type": "module" }\n');
    await writeFile(path.join(dir, 'tsconfig.json'), tsconfig);
    await writeFile(path.join(dir, 'src/a.ts'), "export const n: number = 1;\nexport const m: number = 'x';\n");
    return dir;
  };

  it('reports each type error as a type_error with its place, TypeScript’s code and a fix, and fails the types check', async () => {
    // Inside this checkout, so `typescript` resolves as an app's own would.
    const dir = await project(path.join(repoRoot, '.test-apps'));
    const report = await runChecks({ root: dir });
    expect(report.ok).toBe(false);
    expect(report.checks.find((c) => c.name === 'types')).toEqual({ name: 'types', ok: false, errors: 1, warnings: 0, infos: 0 });
    expect(report.diagnostics.filter((d) => d.code === 'type_error')).toEqual([
      {
        code: 'type_error',
        severity: 'error',
        message: "TS2322: Type 'string' is not assignable to type 'number'.",
        path: 'src/a.ts:2:14',
        file: 'src/a.ts',
        line: 2,
        column: 14,
        hint: 'A TypeScript error: fix it where it points (fw dev shows type errors as they appear, in the terminal and the overlay).',
        suggestedCommand: 'npx tsc -p tsconfig.json --noEmit',
      },
    ]);
    // Skipped when asked (fw verify reports the same typecheck as a gate of its own).
    const without = await runChecks({ root: dir, typecheck: false });
    expect(without.checks.map((c) => c.name)).not.toContain('types');
    expect(without.diagnostics.filter((d) => d.code === 'type_error')).toEqual([]);
  }, 60_000);

  it('says the types were not checked, as an info, when the app has no typescript', async () => {
    const dir = await project(tmpdir());
    const report = await runChecks({ root: dir });
    expect(report.checks.find((c) => c.name === 'types')).toEqual({ name: 'types', ok: true, errors: 0, warnings: 0, infos: 1 });
    expect(report.diagnostics.filter((d) => d.code === 'typecheck_skipped')).toEqual([
      expect.objectContaining({ severity: 'info', file: 'package.json', message: expect.stringContaining('npm install --save-dev typescript'), suggestedCommand: 'npm install --save-dev typescript' }),
    ]);
  }, 60_000);
});
