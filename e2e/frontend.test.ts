import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, runFw } from './support/app.ts';

describe('fw inspect and fw check', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(() => app?.remove());

  it('inspect client lists each entry with its route, args schema and hooks', async () => {
    const run = await runFw(['inspect', 'client', '--json'], { cwd: app.dir });
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out).toMatchObject({ ok: true, layout: 'vite', bridge: 'web/src/lib/fw.ts' });
    expect(out.entries.find((e: { name: string }) => e.name === 'createNote')).toMatchObject({
      kind: 'command', route: 'POST /commands/createNote', policy: 'user',
      args: { properties: { title: { type: 'string' } } },
      hooks: { react: "useCommand('createNote')", vue: 'useFwCommand(api.commands.createNote)' },
    });
  });

  it('inspect frontend and capabilities describe the template with no errors or warnings', async () => {
    const frontend = await runFw(['inspect', 'frontend', '--json'], { cwd: app.dir });
    expect(frontend.code).toBe(0);
    const graph = JSON.parse(frontend.stdout);
    expect(graph.hooks.map((h: { hook: string; entry: string; status: string }) => [h.hook, h.entry, h.status])).toEqual([
      ['useLiveQuery', 'liveNotes', 'ok'],
      ['useCommand', 'createNote', 'ok'],
    ]);
    expect(graph.diagnostics.filter((d: { severity: string }) => d.severity !== 'info')).toEqual([]);
    const capabilities = await runFw(['inspect', 'capabilities', '--json'], { cwd: app.dir });
    expect(capabilities.code).toBe(0);
    const caps = JSON.parse(capabilities.stdout);
    expect(caps.ui.paths.find((p: { entry: string }) => p.entry === 'createNote')).toMatchObject({
      action: { handler: 'addNote', event: 'onSubmit', element: 'form' }, routes: ['/'], writes: ['notes'], policy: 'user',
    });
  });

  it('check passes on the template and fails, naming file:line:col, on a raw fetch', async () => {
    const clean = await runFw(['check', '--json'], { cwd: app.dir });
    expect(clean.code, clean.stdout + clean.stderr).toBe(0);
    expect(JSON.parse(clean.stdout)).toMatchObject({ ok: true, checks: expect.arrayContaining([{ name: 'frontend', ok: true, errors: 0, warnings: 0, infos: 1 }]) });

    await writeFile(path.join(app.dir, 'web/src/raw.ts'), "export const load = () => fetch('/queries/listNotes', { method: 'POST' });\n");
    const broken = await runFw(['check', '--json'], { cwd: app.dir });
    expect(broken.code).toBe(1);
    const report = JSON.parse(broken.stdout);
    expect(report.ok).toBe(false);
    expect(report.checks.find((c: { name: string }) => c.name === 'frontend')).toMatchObject({ ok: false, errors: 1 });
    expect(report.diagnostics.find((d: { code: string }) => d.code === 'raw_runtime_fetch')).toMatchObject({
      severity: 'error', file: 'web/src/raw.ts', line: 1, column: 27, suggestedCommand: 'fw do connect-ui',
    });
    // The artifacts now differ from the sources too.
    expect(report.checks.find((c: { name: string }) => c.name === 'generated')).toMatchObject({ ok: false });

    const human = await runFw(['check'], { cwd: app.dir });
    expect(human.code).toBe(1);
    expect(human.stderr).toContain('web/src/raw.ts:1:27 error raw_runtime_fetch');
  });

  it('dev --once --json reports the frontend diagnostics', async () => {
    const run = await runFw(['dev', '--once', '--json'], { cwd: app.dir });
    const report = JSON.parse(run.stdout);
    expect(report.diagnostics).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'raw_runtime_fetch', path: 'web/src/raw.ts:1:27' })]));
    expect(run.code).toBe(1);
  });
});
