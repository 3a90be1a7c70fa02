import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, repoRoot, runFw, runNode } from './support/app.ts';

// `fw make ui` on an app made from minimal-web without its web/. The made Nuxt UI is installed,
// typechecked and built in e2e/nuxt.test.ts, next to the nuxt-web template. Each test gets its own
// copy of that app; a test about an app that has a web/ makes the Vite one itself first.
describe('fw make ui', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;

  beforeEach(async () => {
    app = await createTestApp('minimal-web', {}, { insideRepo: true });
    await rm(path.join(app.dir, 'web'), { recursive: true });
  });
  afterEach(() => app?.remove());

  /** The step a test builds on: `fw make ui --framework vite` on this test's app without web/. */
  async function makeViteUi() {
    const made = await runFw(['make', 'ui', '--framework', 'vite', '--json'], { cwd: app.dir });
    expect(made.code, made.stdout + made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ ok: true, framework: 'vite', dryRun: false });
    expect(existsSync(path.join(app.dir, 'web/vite.config.ts'))).toBe(true);
  }

  it('--framework vite writes a React + Vite web/ wired to the entries, which typechecks', async () => {
    const made = await runFw(['make', 'ui', '--framework', 'vite', '--json'], { cwd: app.dir });
    expect(made.code, made.stdout + made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toEqual({
      ok: true,
      framework: 'vite',
      dryRun: false,
      files: [
        'web/index.html',
        'web/public/favicon.svg',
        'web/src/App.tsx',
        'web/src/components/ErrorBoundary.tsx',
        'web/src/lib/fw.ts',
        'web/src/lib/token.ts',
        'web/src/main.tsx',
        'web/src/vite-env.d.ts',
        'web/tsconfig.json',
        'web/vite.config.ts',
        'package.json',
      ],
    });
    const appTsx = await readFile(path.join(app.dir, 'web/src/App.tsx'), 'utf8');
    expect(appTsx).toContain('useCommand("createNote")');
    expect(appTsx).toContain('useQuery("listNotes", {  })');
    expect(appTsx).toContain('useLiveQuery("liveNotes", {  })');
    expect(appTsx).toContain('<input value={v0} onChange={(e) => setV0(e.target.value)} required />');
    const pkg = JSON.parse(await readFile(path.join(app.dir, 'package.json'), 'utf8'));
    expect(pkg.dependencies).toMatchObject({ react: expect.any(String), 'react-dom': expect.any(String) });
    expect(pkg.devDependencies).toMatchObject({ vite: expect.any(String), '@vitejs/plugin-react': expect.any(String) });

    const tsc = await runNode([path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', 'web/tsconfig.json'], { cwd: app.dir });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.code).toBe(0);
  }, 60_000);

  it('refuses to overwrite web/ without --yes, also on a dry run', async () => {
    await makeViteUi();
    for (const args of [['--framework', 'vite'], ['--framework', 'nuxt', '--dry-run']]) {
      const refused = await runFw(['make', 'ui', ...args, '--json'], { cwd: app.dir });
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, kind: 'web_exists', suggestions: [expect.stringContaining('--dry-run'), expect.stringContaining('--yes')] });
    }
  });

  it('--framework nuxt --dry-run lists the Nuxt files and writes nothing', async () => {
    await makeViteUi();
    const before = await readFile(path.join(app.dir, 'package.json'), 'utf8');
    const dry = await runFw(['make', 'ui', '--framework', 'nuxt', '--dry-run', '--yes', '--json'], { cwd: app.dir });
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toEqual({
      ok: true,
      framework: 'nuxt',
      dryRun: true,
      files: [
        'web/app.vue',
        'web/assets/main.css',
        'web/components/FwResult.vue',
        'web/components/fw/CreateNoteForm.vue',
        'web/components/fw/DeleteNoteForm.vue',
        'web/components/fw/FindNotesView.vue',
        'web/components/fw/ListNotesView.vue',
        'web/components/fw/LiveNotesView.vue',
        'web/components/fw/UpdateNoteForm.vue',
        'web/composables/fw.ts',
        'web/composables/token.ts',
        'web/error.vue',
        'web/nuxt.config.ts',
        'web/pages/index.vue',
        'web/plugins/fw-errors.server.ts',
        'web/plugins/fw.client.ts',
        'web/plugins/fw.server.ts',
        'web/public/favicon.svg',
        'web/server/api/fw-health.get.ts',
        'web/tsconfig.json',
        'package.json',
      ],
    });
    expect(existsSync(path.join(app.dir, 'web/nuxt.config.ts'))).toBe(false);
    expect(existsSync(path.join(app.dir, 'web/vite.config.ts'))).toBe(true);
    expect(await readFile(path.join(app.dir, 'package.json'), 'utf8')).toBe(before);
  });

  it('--framework nuxt --yes replaces web/ and adds the Nuxt dependencies and scripts', async () => {
    await makeViteUi();
    const made = await runFw(['make', 'ui', '--framework', 'nuxt', '--yes'], { cwd: app.dir });
    expect(made.code, made.stdout + made.stderr).toBe(0);
    expect(made.stderr).toContain('web/pages/index.vue');
    expect(existsSync(path.join(app.dir, 'web/vite.config.ts'))).toBe(false);
    const form = await readFile(path.join(app.dir, 'web/components/fw/CreateNoteForm.vue'), 'utf8');
    expect(form).toContain('useFwCommand("createNote")');
    expect(form).toContain('<input v-model="v0" required />');
    const pkg = JSON.parse(await readFile(path.join(app.dir, 'package.json'), 'utf8'));
    expect(pkg.dependencies).toMatchObject({ nuxt: expect.any(String), vue: expect.any(String) });
    expect(pkg.scripts).toMatchObject({ build: 'fw build && nuxt build web', postinstall: 'fw postinstall && nuxt prepare web' });
  });

  it('names the frameworks it knows', async () => {
    const unknown = await runFw(['make', 'ui', '--framework', 'svelte', '--json'], { cwd: app.dir });
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ ok: false, kind: 'bad_flags' });
  });
});
