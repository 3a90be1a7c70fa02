import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp } from '../e2e/support/app.ts';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { AppDefinition } from '../runtime/core/app-definition.ts';
import { createAppLoader } from './load-app.ts';
import { AppLoadError } from './app-load-error.ts';
import { loadAppOnce } from './load-app-once.ts';

const apps: Array<{ remove(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.remove()));
});

// Both ways fw loads an app: the dev module runner (reloads single files) and the one-shot bundle of
// the CLI's read-and-exit commands. They must agree on every app, valid or not.
const loaders: Array<[string, (dir: string) => Promise<AppDefinition>]> = [
  ['the module runner', async (dir) => {
    const loader = await createAppLoader(dir);
    try {
      return await loader.load();
    } finally {
      await loader.close();
    }
  }],
  ['the one-shot bundle', loadAppOnce],
];

describe.each(loaders)('loading an app through %s', (_, loadApp) => {
  async function load(files: Record<string, string>) {
    const app = await createTestApp('minimal-web', files);
    apps.push(app);
    const loaded = await loadApp(app.dir);
    // The bundle is evaluated from a file it removes again.
    const cache = path.join(app.dir, '.fw/cache');
    expect(existsSync(cache) ? readdirSync(cache) : []).toEqual([]);
    return loaded;
  }

  async function loadError(files: Record<string, string>): Promise<AppLoadError> {
    const error = await load(files).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppLoadError);
    return error as AppLoadError;
  }

  it('loads agents and aiTools, and refuses tools that are not the app\'s own or listed under another name', async () => {
    const tool = "import { aiTool } from 'fwjs';\nexport default aiTool({ description: 'Counts', risk: 'read', handler: () => 1 });\n";
    const app = await load({ 'src/ai/tools/count-notes.ts': tool });
    expect([...app.agents!.keys()]).toEqual(['assistant']);
    expect([...app.tools!.keys()]).toEqual(['countNotes']);
    expect(Object.keys(app.agents!.get('assistant')!.tools).sort()).toEqual(['createNote', 'listNotes']);

    const error = await loadError({
      'src/ai/tools/listNotes.ts': tool,
      'src/ai/agents/rogue.ts': "import { agent, aiTool, query } from 'fwjs';\nimport createNote from '../../commands/createNote.ts';\nexport default agent({ model: 'm', tools: { inline: aiTool({ description: 'x', handler: () => 1 }), make: createNote } });\n",
      'src/ai/agents/notAnAgent.ts': 'export default 1;\n',
    });
    expect(error.problems).toEqual(expect.arrayContaining([
      { file: 'src/ai/tools/listNotes.ts', message: expect.stringContaining('already the auto-tool of src/queries/listNotes.ts') },
      { file: 'src/ai/agents/rogue.ts', message: expect.stringContaining('tool "inline" is not one of the app') },
      { file: 'src/ai/agents/rogue.ts', message: expect.stringContaining('tools: { createNote }') },
      { file: 'src/ai/agents/notAnAgent.ts', message: expect.stringContaining('export default agent(') },
    ]));
  });

  it('loads the template: entries named after their files, with kinds and policies', async () => {
    const app = await load({ 'src/queries/list-recent-notes.ts': "import { query } from 'fwjs';\nexport default query({ policy: 'public', handler: () => [] });\n" });
    expect([...app.entries].map(([name, e]) => [name, e.kind, e.policy]).sort()).toEqual([
      ['createNote', 'command', 'user'],
      ['deleteNote', 'command', 'user'],
      ['findNotes', 'liveQuery', 'user'],
      ['listNotes', 'query', 'user'],
      ['listRecentNotes', 'query', 'public'],
      ['liveNotes', 'liveQuery', 'user'],
      ['updateNote', 'command', 'user'],
    ]);
    expect(Object.keys(app.schema.tables)).toEqual(['notes']);
  });

  it('names a file that does not export an entry', async () => {
    const error = await loadError({ 'src/commands/broken.ts': 'export const x = 1;\n' });
    expect(error.problems).toEqual([{ file: 'src/commands/broken.ts', message: expect.stringContaining('export default') }]);
  });

  it('refuses an entry in the wrong folder', async () => {
    const error = await loadError({ 'src/commands/sneaky.ts': "import { query } from 'fwjs';\nexport default query({ handler: () => 1 });\n" });
    expect(error.problems[0]).toMatchObject({ file: 'src/commands/sneaky.ts', message: expect.stringContaining('src/commands/ holds command') });
  });

  it('refuses duplicate entry names across folders', async () => {
    const error = await loadError({ 'src/queries/createNote.ts': "import { query } from 'fwjs';\nexport default query({ handler: () => 1 });\n" });
    expect(error.problems[0]?.message).toMatch(/already taken/);
  });

  it('refuses an unknown policy, naming the known ones', async () => {
    const error = await loadError({ 'src/commands/adminThing.ts': "import { command } from 'fwjs';\nexport default command({ policy: 'admins', handler: () => 1 });\n" });
    expect(error.problems[0]?.message).toMatch(/policy "admins".*Known policies: public, user, system/);
    // Placed where the policy is named, with the fix.
    expect(error.problems[0]).toMatchObject({ file: 'src/commands/adminThing.ts', line: 2, column: 26, code: 'unknown_policy', hint: 'Define "admins" in src/policies.ts with definePolicies(), or use one of: public, user, system.' });
  });

  it('reports a syntax error with its file and line', async () => {
    const error = await loadError({ 'src/commands/typo.ts': "import { command } from 'fwjs';\n\nexport default command({ handler: () => { return 1 +; } });\n" });
    expect(error.problems[0]?.file).toBe('src/commands/typo.ts');
    expect(error.problems[0]?.message).toMatch(/line 3/);
    expect(error.problems[0]).toMatchObject({ line: 3 });
  });

  it('shares a helper module between entries and evaluates each module once', async () => {
    const app = await load({
      'src/lib/counter.ts': 'export let loads = 0;\nloads++;\nexport const limit = 5;\n',
      'src/queries/limitA.ts': "import { query } from 'fwjs';\nimport { limit, loads } from '../lib/counter';\nexport default query({ handler: () => ({ limit, loads }) });\n",
      'src/queries/limitB.ts': "import { query } from 'fwjs';\nimport { loads } from '../lib/counter.ts';\nexport default query({ handler: () => loads });\n",
    });
    const a = (await app.entries.get('limitA')!.handler({}, {})) as { limit: number; loads: number };
    expect(a).toEqual({ limit: 5, loads: 1 });
    expect(await app.entries.get('limitB')!.handler({}, {})).toBe(1);
  });

  it('names the file of an entry that throws while it loads', async () => {
    const error = await loadError({ 'src/commands/explodes.ts': "import { command } from 'fwjs';\nthrow new Error('cannot start');\nexport default command({ handler: () => 1 });\n" });
    expect(error.problems).toEqual([{ file: 'src/commands/explodes.ts', message: expect.stringContaining('cannot start') }]);
  });
});

describe('the one-shot bundle', () => {
  it('evaluates a valid app as one bundle, not through the module runner fallback', async () => {
    const app = await createTestApp('minimal-web', { 'src/queries/whereAmI.ts': "import { query } from 'fwjs';\nexport default query({ handler: () => import.meta.url });\n" });
    apps.push(app);
    const loaded = await loadAppOnce(app.dir);
    expect(await loaded.entries.get('whereAmI')!.handler({}, {})).toMatch(/\/\.fw\/cache\/backend-[0-9a-f-]+\.mjs$/);
  });
});
