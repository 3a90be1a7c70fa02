import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, repoRoot, runFw, startFw } from './support/app.ts';

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
  it('has eight blocks this file runs: the tree, npm run dev, curl, the column, toggleNote, liveNotes, npm test and the new test', () => {
    expect(blocks.map((b) => b.split('\n')[0]!.trim().slice(0, 24).trim())).toEqual([
      'my-app/', 'npm run dev', 'curl -s -X POST http://1', 'author_id: t.text(),', "import { command, z } fr", "import { liveQuery } fro", 'npm test', "it('toggles a note', asy",
    ]);
  });

  it("the tree names each of the template's source, test and web files (a web/src/components/ file by its folder)", () => {
    const tree = blocks[0]!;
    const files = [...filesUnder('src', /_generated/), ...filesUnder('tests', /^$/), ...filesUnder('web/src', /\.d\.ts$/)];
    expect(files.length).toBeGreaterThan(10);
    const unnamed = files.filter((file) => !tree.includes(file.startsWith('web/src/components/') ? 'src/components/' : path.basename(file)));
    expect(unnamed).toEqual([]);
  });

  it('liveNotes is the template’s, as the guide says ("already one")', async () => {
    expect(await readFile(path.join(template, 'src/queries/liveNotes.ts'), 'utf8')).toBe(blocks[5]);
  });

  describe('steps 2, 3 and 5 as written: fw dev and a call to it, the done column, toggleNote and its test, run by npm test', () => {
    let app: Awaited<ReturnType<typeof createTestApp>>;
    beforeAll(async () => {
      app = await createTestApp('minimal-web', { 'src/commands/toggleNote.ts': blocks[4]! }, { insideRepo: true });
      const schemaFile = path.join(app.dir, 'src/fw/schema.ts');
      const schema = await readFile(schemaFile, 'utf8');
      const [anchor] = blocks[3]!.split('\n');
      expect(schema).toContain(`${anchor}\n`);
      await writeFile(schemaFile, schema.replace(`${anchor}\n`, blocks[3]!));
      // The block joins the template's test file, beside its own test.
      const testFile = path.join(app.dir, 'tests/notes.test.ts');
      await writeFile(testFile, `${await readFile(testFile, 'utf8')}\n${blocks[7]!}`);
    });
    afterAll(() => app?.remove());

    it('npm run dev (fw dev) serves the API, and the curl call creates the note as the headers say', { timeout: 180_000 }, async () => {
      expect(blocks[1]!.trim().split(/\s+/).slice(0, 3)).toEqual(['npm', 'run', 'dev']);
      expect(JSON.parse(await readFile(path.join(app.dir, 'package.json'), 'utf8')).scripts.dev).toBe('fw dev');
      // On free ports instead of 3100 and 5173, which other tests may hold; the curl block is run as
      // written but for its port.
      const dev = await startFw(['dev', '--port', '0', '--web-port', '0', '--json'], { cwd: app.dir, timeoutMs: 120_000 });
      try {
        const serverUrl = String(dev.ready.serverUrl).replace(/\/$/, '');
        expect(blocks[2]!).toContain('http://127.0.0.1:3100/');
        const { stdout } = await promisify(execFile)('bash', ['-c', blocks[2]!.replace('http://127.0.0.1:3100', serverUrl)], { cwd: app.dir });
        expect(JSON.parse(stdout)).toMatchObject({
          ok: true,
          result: { id: expect.any(String), title: 'Hello', author_id: 'me', tenant_id: '00000000-0000-4000-8000-000000000001' },
        });
      } finally {
        await dev.stop();
      }
    });

    it('npm test (fw test) passes the template’s three tests and the new one', { timeout: 300_000 }, async () => {
      expect(blocks[6]!.trim().split(/\s+/).slice(0, 2)).toEqual(['npm', 'test']);
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
