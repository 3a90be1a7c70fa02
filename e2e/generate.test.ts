import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, runFw } from './support/app.ts';

describe('fw generate on an app', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(() => app?.remove());

  it('ships the template with generated files that match this fw exactly', async () => {
    const check = await runFw(['generate', '--check', '--json'], { cwd: app.dir });
    expect(check.stderr).toBe('');
    expect(check.code, `${check.stdout}\nRegenerate templates/*/src/fw/_generated with \`fw generate\`.`).toBe(0);
    expect(JSON.parse(check.stdout).files.map((f: { status: string }) => f.status)).toEqual(['unchanged', 'unchanged', 'unchanged', 'unchanged', 'unchanged', 'unchanged', 'unchanged']);
  });

  it('detects drift after an entry changes, names the files, and generate fixes it', async () => {
    await writeFile(
      path.join(app.dir, 'src/queries/countNotes.ts'),
      "import { query, sql } from 'fwjs';\nexport default query({ handler: (ctx) => ctx.db.selectFrom('notes').select(sql<string>`count(*)`.as('n')).execute() });\n",
    );
    const drift = await runFw(['generate', '--check', '--json'], { cwd: app.dir });
    expect(drift.code).not.toBe(0);
    const failure = JSON.parse(drift.stdout);
    expect(failure).toMatchObject({ ok: false, kind: 'generated_drift', suggestions: ['fw generate'] });
    expect(failure.diagnostics.map((d: { path: string }) => d.path)).toEqual(
      expect.arrayContaining(['src/fw/_generated/api.json', 'src/fw/_generated/api.ts', 'src/fw/_generated/capabilityMap.json']),
    );
    const apiBefore = await readFile(path.join(app.dir, 'src/fw/_generated/api.ts'), 'utf8');
    expect(apiBefore).not.toContain('countNotes');

    const generated = await runFw(['generate', '--json'], { cwd: app.dir });
    expect(generated.code, generated.stderr).toBe(0);
    expect(await readFile(path.join(app.dir, 'src/fw/_generated/api.ts'), 'utf8')).toContain("countNotes: { kind: 'query', name: 'countNotes', reads: ['notes'], writes: [] }");
    const again = await runFw(['generate', '--check', '--json'], { cwd: app.dir });
    expect(again.code).toBe(0);
  });
});
