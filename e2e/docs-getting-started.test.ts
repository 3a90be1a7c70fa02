import { readdirSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, repoRoot, runFw } from './support/app.ts';

const template = path.join(repoRoot, 'templates/minimal-web');
const guide = readFileSync(path.join(repoRoot, 'docs/getting-started.md'), 'utf8');

/** The guide's blocks run by this file (docs/getting-started.md, each marked so), in order. */
const blocks = [...guide.matchAll(/<!-- run by e2e\/docs-getting-started\.test\.ts -->\n```\w*\n([\s\S]*?)```/g)].map((m) => m[1]!);

function filesUnder(dir: string, skip: RegExp): string[] {
  return readdirSync(path.join(template, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(template, path.join(entry.parentPath, entry.name)))
    .filter((file) => !skip.test(file));
}

describe('docs/getting-started.md on the minimal-web template', () => {
  it('has six blocks this file runs: the tree, the column, toggleNote, liveNotes, npm test and the new test', () => {
    expect(blocks.map((b) => b.split('\n')[0]!.trim().slice(0, 24).trim())).toEqual(['my-app/', 'author_id: t.text(),', "import { command, z } fr", "import { liveQuery } fro", 'npm test', "it('toggles a note', asy"]);
  });

  it("the tree names each of the template's source, test and web files (a web/src/components/ file by its folder)", () => {
    const tree = blocks[0]!;
    const files = [...filesUnder('src', /_generated/), ...filesUnder('tests', /^$/), ...filesUnder('web/src', /\.d\.ts$/)];
    expect(files.length).toBeGreaterThan(10);
    const unnamed = files.filter((file) => !tree.includes(file.startsWith('web/src/components/') ? 'src/components/' : path.basename(file)));
    expect(unnamed).toEqual([]);
  });

  it('liveNotes is the template’s, as the guide says ("already one")', async () => {
    expect(await readFile(path.join(template, 'src/queries/liveNotes.ts'), 'utf8')).toBe(blocks[3]);
  });

  describe('steps 3 and 5 as written: the done column, toggleNote and its test, run by npm test', () => {
    let app: Awaited<ReturnType<typeof createTestApp>>;
    beforeAll(async () => {
      app = await createTestApp('minimal-web', { 'src/commands/toggleNote.ts': blocks[2]! }, { insideRepo: true });
      const schemaFile = path.join(app.dir, 'src/fw/schema.ts');
      const schema = await readFile(schemaFile, 'utf8');
      const [anchor] = blocks[1]!.split('\n');
      expect(schema).toContain(`${anchor}\n`);
      await writeFile(schemaFile, schema.replace(`${anchor}\n`, blocks[1]!));
      // The block joins the template's test file, beside its own test.
      const testFile = path.join(app.dir, 'tests/notes.test.ts');
      await writeFile(testFile, `${await readFile(testFile, 'utf8')}\n${blocks[5]!}`);
    });
    afterAll(() => app?.remove());

    it('npm test (fw test) passes the template’s three tests and the new one', { timeout: 300_000 }, async () => {
      expect(blocks[4]!.trim().split(/\s+/).slice(0, 2)).toEqual(['npm', 'test']);
      const pkg = JSON.parse(await readFile(path.join(app.dir, 'package.json'), 'utf8'));
      expect(pkg.scripts.test).toBe('fw test');
      const generated = await runFw(['generate', '--json'], { cwd: app.dir });
      expect(generated.code, generated.stdout + generated.stderr).toBe(0);
      const tested = await runFw(['test', '--json'], { cwd: app.dir });
      expect(tested.code, tested.stdout + tested.stderr).toBe(0);
      expect(JSON.parse(tested.stdout)).toMatchObject({ ok: true, run: { reason: 'passed', totals: { files: 1, tests: 4, passed: 4, failed: 0 } } });
    });
  });
});
