import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/app.ts';

// The harness itself. Its real run (minimal-web with npm, from the packed checkout, with runtime
// probes) is in .ci/run, because it installs from the registry.
function fieldTest(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'e2e/field-test/run.ts'), ...args], { cwd: repoRoot });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const validate = async () => new Ajv2020({ allErrors: true, strict: true }).compile(JSON.parse(await readFile(path.join(repoRoot, 'schemas/field-test-report.schema.json'), 'utf8')));

describe('the field-test harness', () => {
  it('--dry-run prints the plan for every template × package manager and runs nothing', async () => {
    const run = await fieldTest(['--dry-run', '--runtime-probes', '--templates', 'minimal-web,nuxt-web,b2b-support-web', '--package-managers', 'npm,pnpm', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect((await validate())(report)).toBe(true);
    expect(report).toMatchObject({ ok: true, dryRun: true, results: [] });
    expect(report.plan.map((p: { template: string; packageManager: string }) => `${p.template}/${p.packageManager}`)).toEqual([
      'minimal-web/npm', 'minimal-web/pnpm', 'nuxt-web/npm', 'nuxt-web/pnpm', 'b2b-support-web/npm', 'b2b-support-web/pnpm',
    ]);
    expect(report.plan[0].steps).toEqual(['create', 'install', 'generate', 'dev-once', 'verify-smoke', 'start-server', 'probe-health', 'probe-entries', 'probe-command', 'probe-query']);
    // pnpm results begin with pnpm's bootstrap.
    expect(report.plan[1].steps).toEqual(['install-pnpm', ...report.plan[0].steps]);
  });

  it('records the pnpm bootstrap (install-pnpm) in every pnpm result, passed or failed', async () => {
    const run = await fieldTest(['--install', '--package-managers', 'npm,pnpm', '--fw-spec', 'file:/nonexistent/fw-0.0.0.tgz', '--json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect((await validate())(report)).toBe(true);
    const [npm, pnpm] = report.results;
    // The npm result does not depend on pnpm.
    expect(npm.steps.map((s: { name: string }) => s.name)).toEqual(['create', 'install']);
    const bootstrap = pnpm.steps[0];
    expect(bootstrap).toMatchObject({ name: 'install-pnpm', command: expect.stringMatching(/^(pnpm --version|npm install --prefix .* pnpm@10)$/) });
    if (bootstrap.ok) {
      // With pnpm in hand the result goes on, and fails at the install of the missing fw tarball.
      expect(pnpm).toMatchObject({ packageManager: 'pnpm', ok: false, failedStep: 'install' });
      expect(pnpm.steps.map((s: { name: string; ok: boolean }) => [s.name, s.ok])).toEqual([['install-pnpm', true], ['create', true], ['install', false]]);
    } else {
      // Offline: the bootstrap itself is the failed step, with its output.
      expect(pnpm).toMatchObject({ ok: false, failedStep: 'install-pnpm' });
      expect(pnpm.steps).toHaveLength(1);
    }
  }, 300_000);

  it('reports a failing step with its command, exit code and output, and runs nothing after it', async () => {
    const run = await fieldTest(['--install', '--fw-spec', 'file:/nonexistent/fw-0.0.0.tgz', '--json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect((await validate())(report)).toBe(true);
    const [result] = report.results;
    expect(result).toMatchObject({ template: 'minimal-web', packageManager: 'npm', ok: false, failedStep: 'install' });
    expect(result.steps.map((s: { name: string; ok: boolean }) => [s.name, s.ok])).toEqual([['create', true], ['install', false]]);
    const install = result.steps[1];
    expect(install).toMatchObject({ command: 'npm install --no-audit --no-fund', timedOut: false });
    expect(install.exitCode).not.toBe(0);
    expect(install.stderr).toContain('nonexistent');
  }, 120_000);

  it('refuses unknown templates and package managers with a JSON failure', async () => {
    const run = await fieldTest(['--templates', 'nope', '--json']);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, kind: 'invalid_arguments', message: expect.stringContaining('nope') });
  });
});
