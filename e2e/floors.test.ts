import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repo = path.resolve(import.meta.dirname, '..');

/** `npm run lint` (dependency-cruiser) on a copy of runtime/ with `plants` added: its exit code and report. */
async function lintWith(dir: string, plants: Record<string, string>): Promise<{ code: number; report: string }> {
  const work = await mkdtemp(path.join(dir, 'tree-'));
  await cp(path.join(repo, 'runtime'), path.join(work, 'runtime'), { recursive: true, filter: (source) => !source.endsWith('.test.ts') });
  for (const file of ['.dependency-cruiser.cjs', 'tsconfig.json', 'package.json']) await cp(path.join(repo, file), path.join(work, file));
  await symlink(path.join(repo, 'node_modules'), path.join(work, 'node_modules'), 'dir');
  for (const [file, text] of Object.entries(plants)) await writeFile(path.join(work, file), text);
  try {
    const { stdout } = await run(path.join(repo, 'node_modules/.bin/depcruise'), ['runtime', '--config', '.dependency-cruiser.cjs'], { cwd: work });
    return { code: 0, report: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, report: failed.stdout };
  }
}

describe("runtime/'s floors, as npm run lint checks them", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'fw-floors-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('pass on the tree as it is', async () => {
    const { code, report } = await lintWith(dir, {});
    expect(report).toContain('no dependency violations found');
    expect(code).toBe(0);
  });

  it('fail on a cycle between two feature folders, though no file imports itself back', async () => {
    const { code, report } = await lintWith(dir, {
      'runtime/live/planted.ts': "import { claimRows } from '../outbox/store.ts';\nexport const a = claimRows;\n",
      'runtime/outbox/planted.ts': "import { readInvalidations } from '../live/log.ts';\nexport const b = readInvalidations;\n",
    });
    expect(code).not.toBe(0);
    expect(report).toContain('runtime-features-apart: runtime/live/planted.ts → runtime/outbox/store.ts');
    expect(report).toContain('runtime-features-apart: runtime/outbox/planted.ts → runtime/live/log.ts');
    expect(report).not.toContain('no-circular');
  });

  it('fail on an import up a floor: core reaching for the database, the database for a feature', async () => {
    const { code, report } = await lintWith(dir, {
      'runtime/core/planted.ts': "import type { FwDatabase } from '../db/database.ts';\nexport type A = FwDatabase;\n",
      'runtime/db/planted.ts': "import type { LiveHub } from '../live/hub.ts';\nexport type B = LiveHub;\n",
    });
    expect(code).not.toBe(0);
    expect(report).toContain('runtime-core-is-a-leaf: runtime/core/planted.ts → runtime/db/database.ts');
    expect(report).toContain('runtime-db-below-features: runtime/db/planted.ts → runtime/live/hub.ts');
  });
});
