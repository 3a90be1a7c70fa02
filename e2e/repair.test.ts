import { spawn } from 'node:child_process';
import { readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RepairDiagnosis } from '../toolchain/repair/repair.ts';
import type { LastTestRun } from '../toolchain/test/test-reporter.ts';
import { cliPath, createTestApp, repoRoot, type RunResult, type RunningFw, runFw, startFw } from './support/app.ts';
import { until } from './support/until.ts';

// `fw test` records the run through fw's Vitest reporter; `fw repair diagnose --from-last-test-run`
// maps each failure to its likely cause. The app's tests call a running `fw dev` over HTTP (its URL in
// FW_TEST_URL) and each fails for one seeded reason; one test passes, and so does the template's own
// tests/notes.test.ts (fw/testing).
const slow = 180_000;

const files: Record<string, string> = {
  'src/policies.ts': `import { definePolicies } from 'fwjs';

export default definePolicies({
  admin: ({ auth }) => auth.role === 'admin',
});
`,
  'src/commands/archiveNote.ts': `import { command, z } from 'fwjs';

export default command({
  description: 'Archive a note (admins only).',
  policy: 'admin',
  args: { id: z.string().uuid() },
  handler: async (ctx, args) => {
    await ctx.db.deleteFrom('notes').where('id', '=', args.id).execute();
    return { archived: true };
  },
});
`,
  // Reads a table the schema never declared.
  'src/queries/listArchive.ts': `import { query } from 'fwjs';

export default query({
  description: 'Archived notes.',
  policy: 'user',
  handler: (ctx) => (ctx.db as any).selectFrom('archived_notes').selectAll().execute(),
});
`,
  'tests/seeded.test.ts': `import { createElement } from 'react';
import { renderToString } from 'react-dom/server';
import { expect, it } from 'vitest';
import { createClient } from 'fwjs/client';
import { api } from '../src/fw/_generated/api.ts';
import { useQuery } from '../web/src/lib/fw.ts';

const apiUrl = process.env.FW_TEST_URL!;
const member = createClient({ apiUrl, api, devAuth: { userId: 'u1', tenantId: '00000000-0000-4000-8000-000000000001', role: 'member' } });

it('createNote saves a note', async () => {
  await member.command('createNote', { title: '' });
});

it('archiveNote archives a note', async () => {
  await member.command('archiveNote', { id: '00000000-0000-4000-8000-00000000000a' });
});

it('listArchive lists archived notes', async () => {
  await member.query('listArchive', {});
});

it('renders the notes list', () => {
  function Notes() {
    useQuery('listNotes', {});
    return null;
  }
  renderToString(createElement(Notes));
});

it('lists notes', async () => {
  expect(await member.query('listNotes', {})).toEqual([]);
});
`,
};

describe('fw test and fw repair diagnose --from-last-test-run', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw;
  beforeAll(async () => {
    app = await createTestApp('minimal-web', files, { insideRepo: true });
    dev = await startFw(['dev', '--api-only', '--port', '0', '--no-watch', '--json'], { cwd: app.dir, timeoutMs: slow });
  }, slow);
  afterAll(async () => {
    await dev?.stop();
    await app?.remove();
  });

  // `fw test` in the shared app, run once by whichever test needs its record first; nothing else in
  // this file writes the app's .fw/last-test-run.json, so every test that reads it reads this run.
  let testRun: Promise<RunResult> | undefined;
  const recordTestRun = () => (testRun ??= runFw(['test', '--json'], { cwd: app.dir, env: { FW_TEST_URL: String(dev.ready.serverUrl) } }));

  it('without a recorded run, fails with no_test_run and suggests fw test', async () => {
    // An app of its own, where `fw test` never ran.
    const fresh = await createTestApp('minimal-web', files);
    try {
      const result = await runFw(['repair', 'diagnose', '--from-last-test-run', '--json'], { cwd: fresh.dir });
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, kind: 'no_test_run', suggestions: expect.arrayContaining(['fw test']) });
    } finally {
      await fresh.remove();
    }
  });

  it('needs a source: --from-last-test-run', async () => {
    const result = await runFw(['repair', 'diagnose', '--json'], { cwd: app.dir });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, kind: 'invalid_arguments' });
  });

  it('fw test runs the app’s Vitest, exits with its code and records each failure', { timeout: slow }, async () => {
    const result = await recordTestRun();
    expect(result.code, result.stderr).toBe(1);
    // --json: Vitest's default reporter writes to stderr, the record is the one document on stdout.
    expect(result.stderr).toContain('seeded.test.ts');
    const printed = JSON.parse(result.stdout) as { ok: boolean; exitCode: number; run: LastTestRun };
    const recorded = JSON.parse(await readFile(path.join(app.dir, '.fw/last-test-run.json'), 'utf8')) as LastTestRun;
    expect(printed).toMatchObject({ ok: false, exitCode: 1 });
    expect(printed.run).toEqual(recorded);
    expect(recorded).toMatchObject({ version: 1, reason: 'failed', totals: { files: 2, tests: 8, passed: 4, failed: 4, skipped: 0 } });
    expect(recorded.failures.map((f) => [f.file, f.test])).toEqual([
      ['tests/seeded.test.ts', 'createNote saves a note'],
      ['tests/seeded.test.ts', 'archiveNote archives a note'],
      ['tests/seeded.test.ts', 'listArchive lists archived notes'],
      ['tests/seeded.test.ts', 'renders the notes list'],
    ]);
    expect(recorded.failures[0]).toMatchObject({ name: 'FwError', code: 'validation_failed', diagnostics: [expect.objectContaining({ path: 'args.title' })] });
    expect(recorded.failures[0]!.stack).toMatch(/tests\/seeded\.test\.ts:\d+:\d+/);
    expect(new Date(recorded.when).getTime()).toBeGreaterThan(Date.now() - 10 * 60_000);
  });

  it('maps each failure to its cause, naming the entry, its policy and the fix', { timeout: slow }, async () => {
    const recorded = await recordTestRun();
    expect(recorded.code, recorded.stderr).toBe(1);
    const result = await runFw(['repair', 'diagnose', '--from-last-test-run', '--json'], { cwd: app.dir });
    expect(result.code, result.stderr).toBe(1);
    const diagnosis = JSON.parse(result.stdout) as RepairDiagnosis;
    expect(diagnosis).toMatchObject({ ok: false, run: { failed: 4, passed: 4 } });
    const causes = Object.fromEntries(diagnosis.failures.map((f) => [f.test, f.causes]));
    expect(causes['createNote saves a note']).toEqual([
      expect.objectContaining({ kind: 'schema', entry: 'createNote', detail: expect.stringContaining('src/commands/createNote.ts'), suggestedCommand: 'fw inspect client --json' }),
    ]);
    expect(causes['createNote saves a note']![0]!.detail).toContain('args.title');
    expect(causes['archiveNote archives a note']).toEqual([
      expect.objectContaining({ kind: 'policy', entry: 'archiveNote', detail: expect.stringContaining('policy "admin"'), hint: expect.stringContaining('src/policies.ts') }),
    ]);
    expect(causes['listArchive lists archived notes']).toEqual([
      expect.objectContaining({ kind: 'database', entry: 'listArchive', detail: expect.stringContaining('"archived_notes"'), suggestedCommand: 'fw db migrate' }),
    ]);
    expect(causes['listArchive lists archived notes']![0]!.hint).toContain('src/fw/schema.ts');
    expect(causes['renders the notes list']).toEqual([expect.objectContaining({ kind: 'frontend_wiring', suggestedCommand: 'fw do connect-ui' })]);
  });
});

describe('fw test --watch', () => {
  it('records a run, then records again when a test file changes, until stopped', { timeout: slow }, async () => {
    const app = await createTestApp('minimal-web', { 'tests/watched.test.ts': "import { expect, it } from 'vitest';\n\nit('adds', () => expect(1 + 1).toBe(2));\n" }, { insideRepo: true });
    const child = spawn(process.execPath, [cliPath, 'test', '--watch', '--', 'tests/watched.test.ts'], { cwd: app.dir, env: { ...process.env, NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise((resolve) => child.on('exit', resolve));
    const record = async () => {
      try {
        return JSON.parse(await readFile(path.join(app.dir, '.fw/last-test-run.json'), 'utf8')) as LastTestRun;
      } catch {
        return undefined;
      }
    };
    try {
      const first = await until(async () => (await record())?.reason === 'passed' && (await record()), 'the first recorded run', { timeoutMs: slow });
      expect(first.totals).toMatchObject({ files: 1, tests: 1, passed: 1, failed: 0 });
      await writeFile(path.join(app.dir, 'tests/watched.test.ts'), "import { expect, it } from 'vitest';\n\nit('adds', () => expect(1 + 1).toBe(3));\n");
      const second = await until(async () => (await record())?.reason === 'failed' && (await record()), `a run after the change (output: ${output})`, { timeoutMs: slow });
      expect(second.failures.map((f) => [f.file, f.test])).toEqual([['tests/watched.test.ts', 'adds']]);
      expect(child.exitCode).toBeNull();
      // Stopped by its pid, fw stops Vitest too: nothing keeps watching the app.
      child.kill('SIGTERM');
      await exited;
      await until(async () => !(await watchers(app.dir)), 'Vitest to stop with fw', { timeoutMs: 30_000 });
    } finally {
      child.kill('SIGKILL');
      await exited;
      await app.remove();
    }
  });

  it('refuses --json with --watch', async () => {
    const result = await runFw(['test', '--watch', '--json'], { cwd: repoRoot });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, kind: 'invalid_arguments' });
  });
});

/** Whether a Vitest still runs in `dir` (its working directory, as /proc says). */
async function watchers(dir: string): Promise<boolean> {
  for (const pid of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid)) continue;
    const [cmdline, cwd] = await Promise.all([readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => ''), readlink(`/proc/${pid}/cwd`).catch(() => '')]);
    if (cwd === dir && cmdline.includes('vitest')) return true;
  }
  return false;
}
