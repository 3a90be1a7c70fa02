import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { until } from '../../e2e/support/until.ts';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { formatTypeDiagnostic, startTypecheck, type Typecheck, type TypeDiagnostic, typecheckProjects, typeReporter } from './typecheck.ts';

const notANumber: TypeDiagnostic = { file: 'src/a.ts', line: 2, column: 7, code: 2322, message: "Type 'string' is not assignable to type 'number'." };
const missing: TypeDiagnostic = { file: 'web/src/b.tsx', line: 9, column: 1, code: 2304, message: "Cannot find name 'nope'." };

describe('typeReporter', () => {
  it('prints each error once and a summary when the set changes, nothing when it does not', () => {
    const lines: string[] = [];
    const report = typeReporter({ log: (line) => lines.push(line), colour: false, projects: ['tsconfig.json', 'web/tsconfig.json'] });
    report([]);
    expect(lines.splice(0)).toEqual(['fw: types OK (tsconfig.json, web/tsconfig.json)']);
    report([notANumber]);
    expect(lines.splice(0)).toEqual(["fw: src/a.ts:2:7 error TS2322 Type 'string' is not assignable to type 'number'.", 'fw: 1 type error in 1 file']);
    report([notANumber]);
    expect(lines).toEqual([]);
    report([notANumber, missing]);
    expect(lines.splice(0)).toEqual(["fw: web/src/b.tsx:9:1 error TS2304 Cannot find name 'nope'.", 'fw: 2 type errors in 2 files']);
    report([missing]);
    expect(lines.splice(0)).toEqual(['fw: 1 type error in 1 file']);
    report([]);
    expect(lines.splice(0)).toEqual(['fw: types OK']);
    report([]);
    expect(lines).toEqual([]);
  });

  it('names the projects in its first summary, whatever it is', () => {
    const lines: string[] = [];
    typeReporter({ log: (line) => lines.push(line), colour: false, projects: ['tsconfig.json'] })([notANumber]);
    expect(lines.at(-1)).toBe('fw: 1 type error in 1 file (tsconfig.json)');
  });

  it('colours only when asked', () => {
    const lines: string[] = [];
    typeReporter({ log: (line) => lines.push(line), colour: true, projects: [] })([]);
    expect(lines[0]).toContain('\u001b[32mtypes OK');
  });
});

describe('formatTypeDiagnostic', () => {
  it('indents the rest of a chained message, and a tsconfig error has no line', () => {
    expect(formatTypeDiagnostic({ ...notANumber, message: 'Argument is wrong.\n  Type a is not b.' })).toBe('fw: src/a.ts:2:7 error TS2322 Argument is wrong.\n      Type a is not b.');
    expect(formatTypeDiagnostic({ file: 'tsconfig.json', code: 5023, message: "Unknown compiler option 'x'." })).toBe("fw: tsconfig.json error TS5023 Unknown compiler option 'x'.");
  });
});

// The worker itself, with fw's own TypeScript (the project lives inside this checkout, so it resolves).
describe('startTypecheck', () => {
  const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  let dir: string | undefined;
  let typecheck: Typecheck | undefined;
  afterEach(async () => {
    await typecheck?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('reports an error as it appears and clears it when fixed', async () => {
    await mkdir(path.join(repoRoot, '.test-apps'), { recursive: true });
    dir = await mkdtemp(path.join(repoRoot, '.test-apps', 'typecheck-'));
    await mkdir(path.join(dir, 'src'));
    await writeFile(path.join(dir, 'package.json'), '{ "type": "module" }\n');
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, types: [], lib: ['es2023'], target: 'es2023', module: 'nodenext' }, include: ['src'] }));
    await writeFile(path.join(dir, 'src/a.ts'), 'export const n: number = 1;\n');
    const lines: string[] = [];
    typecheck = startTypecheck({ root: dir, log: (line) => lines.push(line) });
    expect(typecheck?.projects).toEqual(['tsconfig.json']);
    await until(async () => lines.includes('fw: types OK (tsconfig.json)'), 'the first check', { timeoutMs: 45_000, intervalMs: 50 });
    await writeFile(path.join(dir, 'src/a.ts'), "export const n: number = 1;\nexport const m: number = 'x';\n");
    await until(async () => lines.includes('fw: 1 type error in 1 file'), 'the type error', { timeoutMs: 45_000, intervalMs: 50 });
    expect(lines).toContain("fw: src/a.ts:2:14 error TS2322 Type 'string' is not assignable to type 'number'.");
    await writeFile(path.join(dir, 'src/a.ts'), 'export const n: number = 1;\nexport const m: number = 2;\n');
    await until(async () => lines.includes('fw: types OK'), 'the fix', { timeoutMs: 45_000, intervalMs: 50 });
    expect(lines.filter((line) => line.includes('TS2322'))).toHaveLength(1);

    // A file with an error, then deleted: its error goes, and the deletion flashes no "file not found".
    await writeFile(path.join(dir, 'src/b.ts'), "export const s: number = 's';\n");
    await until(async () => lines.at(-1) === 'fw: 1 type error in 1 file', 'the error in b.ts', { timeoutMs: 45_000, intervalMs: 50 });
    await rm(path.join(dir, 'src/b.ts'));
    await until(async () => lines.at(-1) === 'fw: types OK', 'the deletion checked', { timeoutMs: 45_000, intervalMs: 50 });
    expect(lines.filter((line) => line.includes('TS6053'))).toEqual([]);
  }, 90_000);

  it('checks web/tsconfig.json beside the app\'s, but not a Nuxt web/\'s (its .vue files need vue-tsc)', async () => {
    dir = await mkdtemp(path.join((await import('node:os')).tmpdir(), 'fw-typecheck-'));
    await mkdir(path.join(dir, 'web'));
    await writeFile(path.join(dir, 'tsconfig.json'), '{}\n');
    await writeFile(path.join(dir, 'web/tsconfig.json'), '{}\n');
    expect(typecheckProjects(dir)).toEqual(['tsconfig.json', 'web/tsconfig.json']);
    await writeFile(path.join(dir, 'web/nuxt.config.ts'), 'export default {};\n');
    expect(typecheckProjects(dir)).toEqual(['tsconfig.json']);
  });

  it('says once that typechecking is off when the app has no typescript', async () => {
    dir = await mkdtemp(path.join((await import('node:os')).tmpdir(), 'fw-typecheck-'));
    await writeFile(path.join(dir, 'package.json'), '{}\n');
    await writeFile(path.join(dir, 'tsconfig.json'), '{}\n');
    const lines: string[] = [];
    typecheck = startTypecheck({ root: dir, log: (line) => lines.push(line) });
    expect(typecheck).toBeUndefined();
    expect(lines).toEqual([expect.stringContaining('fw dev: typechecking is off: the app has no typescript installed (npm install --save-dev typescript')]);
  });
});

