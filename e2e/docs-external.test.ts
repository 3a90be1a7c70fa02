import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, runFw } from './support/app.ts';

// docs/external.md's example manifest, as written: valid against the schema and the protocol's rules
// (outside an app: the app's policies and tables are not asked).
describe("docs/external.md's manifest", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'fw-docs-manifest-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('passes fw manifest validate with no diagnostic', async () => {
    const doc = await readFile(path.join(repoRoot, 'docs/external.md'), 'utf8');
    const manifest = /<!-- run by e2e\/docs-external\.test\.ts -->\n```json\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(manifest).toBeDefined();
    await writeFile(path.join(dir, 'fw.manifest.json'), manifest!);
    const validated = await runFw(['manifest', 'validate', 'fw.manifest.json', '--json'], { cwd: dir });
    expect(validated.code, validated.stdout + validated.stderr).toBe(0);
    expect(JSON.parse(validated.stdout)).toEqual({ ok: true, file: path.join(dir, 'fw.manifest.json'), service: 'tickets', entries: 2, app: 'none', diagnostics: [] });
  });
});
