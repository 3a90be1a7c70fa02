import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { resolvePackageBin } from './app-bin.ts';
import { advanceTestProgress, formatTestProgress, noProgress, parseTestProgressEvent, type TestProgress, type TestProgressEvent } from './test-progress.ts';
import { runAppTests } from './test-run.ts';

const run = (events: TestProgressEvent[]): TestProgress => events.reduce(advanceTestProgress, noProgress);

describe('test progress', () => {
  it('counts files done and tests by outcome, from zero at each run', () => {
    const first = run([{ type: 'run-start', files: 3 }, { type: 'test', state: 'passed' }, { type: 'test', state: 'failed' }, { type: 'test', state: 'skipped' }, { type: 'test', state: 'passed' }, { type: 'file-end' }]);
    expect(first).toEqual({ files: 3, filesDone: 1, passed: 2, failed: 1, skipped: 1 });
    expect(advanceTestProgress(first, { type: 'run-start', files: 1 })).toEqual({ files: 1, filesDone: 0, passed: 0, failed: 0, skipped: 0 });
  });

  it('says files done of planned and the counts that are not zero, coloured only when asked', () => {
    expect(formatTestProgress({ files: 10, filesDone: 0, passed: 0, failed: 0, skipped: 0 }, false)).toBe('Testing: 0/10 files');
    expect(formatTestProgress({ files: 10, filesDone: 3, passed: 25, failed: 1, skipped: 2 }, false)).toBe('Testing: 3/10 files, 25 passed, 1 failed, 2 skipped');
    expect(formatTestProgress({ files: 1, filesDone: 0, passed: 1, failed: 1, skipped: 0 }, true)).toBe('Testing: 0/1 files, \u001b[32m1 passed\u001b[39m, \u001b[31m1 failed\u001b[39m');
  });

  it('reads the reporter’s lines and nothing else', () => {
    expect(parseTestProgressEvent('{"type":"test","state":"failed"}')).toEqual({ type: 'test', state: 'failed' });
    expect(parseTestProgressEvent('{"type":"run-start","files":2}')).toEqual({ type: 'run-start', files: 2 });
    expect(parseTestProgressEvent('{"type":"test","state":"todo"}')).toBeUndefined();
    expect(parseTestProgressEvent('not json')).toBeUndefined();
  });
});

// A real Vitest run, through fw's progress reporter and the pipe fw test reads it from.
describe('runAppTests with progress', () => {
  const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('hands over each event as the run goes and Vitest’s output line by line, colourless when asked', async () => {
    await mkdir(path.join(repoRoot, '.test-apps'), { recursive: true });
    // Inside this checkout, so Vitest resolves as an app's own would.
    dir = await mkdtemp(path.join(repoRoot, '.test-apps', 'test-progress-'));
    await mkdir(path.join(dir, 'tests'));
    await writeFile(path.join(dir, 'package.json'), '{ "type": "module" }\n');
    await writeFile(
      path.join(dir, 'tests/a.test.ts'),
      "import { expect, it } from 'vitest';\nit('one', () => expect(1).toBe(1));\nit('two', () => expect(2).toBe(3));\nit.skip('three', () => {});\n",
    );
    await writeFile(path.join(dir, 'tests/b.test.ts'), "import { expect, it } from 'vitest';\nit('four', () => expect(4).toBe(4));\n");
    const vitest = resolvePackageBin(dir, 'vitest', 'vitest')!;
    const events: TestProgressEvent[] = [];
    const lines: Array<{ line: string; stream: string }> = [];
    const result = await runAppTests(vitest, {
      root: dir,
      progress: { colour: false, onEvent: (event) => events.push(event), onLine: (line, stream) => lines.push({ line, stream }) },
    });
    expect(result.exitCode).toBe(1);
    expect(events[0]).toEqual({ type: 'run-start', files: 2 });
    expect(events.filter((e) => e.type === 'file-end')).toHaveLength(2);
    expect(run(events)).toEqual({ files: 2, filesDone: 2, passed: 2, failed: 1, skipped: 1 });
    const output = lines.map((l) => l.line).join('\n');
    expect(output).toMatch(/Tests\s+1 failed \| 2 passed \| 1 skipped \(4\)/);
    expect(output).not.toContain('\u001b[');
    // The record fw repair diagnose reads is written as without progress.
    expect(result.run?.totals).toEqual({ files: 2, tests: 4, passed: 2, failed: 1, skipped: 1 });
  }, 60_000);
});
