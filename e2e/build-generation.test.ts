import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, repoRoot, runFw, runNode } from './support/app.ts';

// A build never ships a typed client older than its entries: both build paths regenerate
// src/fw/_generated/ before bundling, and say so.
describe('builds regenerate the typed client first', () => {
  let remove = async () => {};
  afterEach(() => remove());

  const countNotes = (name: string) => `import { query } from 'fwjs';\n\nexport default query({ handler: async (ctx) => (await ctx.db.selectFrom('notes').select('id').execute()).length });\n// ${name}\n`;
  const generatedNames = async (dir: string) => {
    const api = JSON.parse(await readFile(path.join(dir, 'src/fw/_generated/api.json'), 'utf8')) as { entries: { name: string }[] };
    return api.entries.map((entry) => entry.name).sort();
  };
  const check = async (dir: string) => JSON.parse((await runFw(['check', '--json'], { cwd: dir })).stdout) as { ok: boolean; diagnostics: { code: string }[] };

  it('vite build with the fw plugin', async () => {
    const app = await createTestApp('minimal-web', {}, { insideRepo: true });
    remove = app.remove;
    await writeFile(path.join(app.dir, 'src/queries/countNotes.ts'), countNotes('added after the last generate'));
    expect((await check(app.dir)).diagnostics.map((d) => d.code)).toContain('generated_drift');

    const build = await runNode([path.join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', 'web'], { cwd: app.dir });
    expect(build.code, build.stderr).toBe(0);
    expect(build.stdout).toMatch(/fw: regenerated .*src\/fw\/_generated\/api\.ts/);
    expect(await generatedNames(app.dir)).toEqual(['countNotes', 'createNote', 'deleteNote', 'findNotes', 'listNotes', 'liveNotes', 'updateNote']);
    expect(await readFile(path.join(app.dir, 'src/fw/_generated/api.ts'), 'utf8')).toContain('countNotes');
    expect(await check(app.dir)).toMatchObject({ ok: true });
  });

  it('fw build', async () => {
    const app = await createTestApp('minimal-web', {}, { insideRepo: true });
    remove = app.remove;
    await writeFile(path.join(app.dir, 'src/queries/countNotes.ts'), countNotes('added after the last generate'));

    const build = await runFw(['build', '--json'], { cwd: app.dir });
    expect(build.code, build.stderr).toBe(0);
    expect(build.stderr).toMatch(/fw build: regenerated .*src\/fw\/_generated\/api\.ts/);
    expect(await generatedNames(app.dir)).toEqual(['countNotes', 'createNote', 'deleteNote', 'findNotes', 'listNotes', 'liveNotes', 'updateNote']);
    expect(await check(app.dir)).toMatchObject({ ok: true });
    // The server bundle has the new entry too.
    const manifest = JSON.parse(await readFile(path.join(app.dir, '.fw/build/server/manifest.json'), 'utf8')) as { entries: string[] };
    expect(manifest.entries.sort()).toEqual(['countNotes', 'createNote', 'deleteNote', 'findNotes', 'listNotes', 'liveNotes', 'updateNote']);
    // A production build of the web even under the suite's NODE_ENV=test: no React development build.
    expect(process.env.NODE_ENV).toBe('test');
    const assets = path.join(app.dir, '.fw/build/web/assets');
    const scripts = (await readdir(assets)).filter((name) => name.endsWith('.js'));
    expect(scripts.length).toBeGreaterThan(0);
    for (const script of scripts) expect((await readFile(path.join(assets, script), 'utf8')).includes('jsxDEV'), `${script} holds React's development build`).toBe(false);
  });
});
