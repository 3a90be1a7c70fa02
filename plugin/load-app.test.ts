import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp } from '../e2e/support/app.ts';
import { AppLoadError, createAppLoader } from './load-app.ts';

const apps: Array<{ remove(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.remove()));
});

async function load(files: Record<string, string>) {
  const app = await createTestApp('minimal-web', files);
  apps.push(app);
  const loader = await createAppLoader(app.dir);
  try {
    return await loader.load();
  } finally {
    await loader.close();
  }
}

async function loadError(files: Record<string, string>): Promise<AppLoadError> {
  const error = await load(files).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppLoadError);
  return error as AppLoadError;
}

describe('loading an app', () => {
  it('loads the template: entries named after their files, with kinds and policies', async () => {
    const app = await load({ 'src/queries/list-recent-notes.ts': "import { query } from 'fw';\nexport default query({ policy: 'public', handler: () => [] });\n" });
    expect([...app.entries].map(([name, e]) => [name, e.kind, e.policy]).sort()).toEqual([
      ['createNote', 'command', 'user'],
      ['listNotes', 'query', 'user'],
      ['listRecentNotes', 'query', 'public'],
      ['liveNotes', 'liveQuery', 'user'],
    ]);
    expect(Object.keys(app.schema.tables)).toEqual(['notes']);
  });

  it('names a file that does not export an entry', async () => {
    const error = await loadError({ 'src/commands/broken.ts': 'export const x = 1;\n' });
    expect(error.problems).toEqual([{ file: 'src/commands/broken.ts', message: expect.stringContaining('export default') }]);
  });

  it('refuses an entry in the wrong folder', async () => {
    const error = await loadError({ 'src/commands/sneaky.ts': "import { query } from 'fw';\nexport default query({ handler: () => 1 });\n" });
    expect(error.problems[0]).toMatchObject({ file: 'src/commands/sneaky.ts', message: expect.stringContaining('src/commands/ holds command') });
  });

  it('refuses duplicate entry names across folders', async () => {
    const error = await loadError({ 'src/queries/createNote.ts': "import { query } from 'fw';\nexport default query({ handler: () => 1 });\n" });
    expect(error.problems[0]?.message).toMatch(/already taken/);
  });

  it('refuses an unknown policy, naming the known ones', async () => {
    const error = await loadError({ 'src/commands/adminThing.ts': "import { command } from 'fw';\nexport default command({ policy: 'admins', handler: () => 1 });\n" });
    expect(error.problems[0]?.message).toMatch(/policy "admins".*Known policies: public, user, system/);
  });

  it('reports a syntax error with its file and line', async () => {
    const error = await loadError({ 'src/commands/typo.ts': "import { command } from 'fw';\n\nexport default command({ handler: () => { return 1 +; } });\n" });
    expect(error.problems[0]?.file).toBe('src/commands/typo.ts');
    expect(error.problems[0]?.message).toMatch(/line 3/);
  });
});
