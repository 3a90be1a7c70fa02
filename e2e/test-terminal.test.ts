import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliPath, repoRoot } from './support/app.ts';
import { until } from './support/until.ts';

// #30: `fw test` on a terminal keeps one status line under Vitest's output (files done, tests passed so
// far), drawn once the run has taken two seconds and erased at the end. A real terminal: util-linux's
// `script` gives fw a pseudo-terminal for stdout and stderr. The run is held open by one of the app's
// tests, which waits for a file this test writes once the status line is on the screen: no sleeping.
describe('fw test on a terminal', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('shows files done and tests passed on one line while the run goes, and erases it at the end', async () => {
    await mkdir(path.join(repoRoot, '.test-apps'), { recursive: true });
    // Inside this checkout, so Vitest resolves as an app's own would.
    dir = await mkdtemp(path.join(repoRoot, '.test-apps', 'test-terminal-'));
    const go = path.join(dir, 'go');
    await mkdir(path.join(dir, 'tests'));
    await writeFile(path.join(dir, 'package.json'), '{ "type": "module" }\n');
    await writeFile(
      path.join(dir, 'tests/held.test.ts'),
      [
        "import { existsSync, watch } from 'node:fs';",
        "import { expect, it } from 'vitest';",
        "it('quick', () => expect(1).toBe(1));",
        `it('held until the status line shows', async () => {`,
        // Woken by the file's creation (a watch on its folder), not by a timer.
        '  await new Promise<void>((resolve) => {',
        `    const watcher = watch(${JSON.stringify(dir)}, () => existsSync(${JSON.stringify(go)}) && (watcher.close(), resolve()));`,
        `    if (existsSync(${JSON.stringify(go)})) (watcher.close(), resolve());`,
        '  });',
        '  expect(2).toBe(2);',
        '}, 300_000);',
        '',
      ].join('\n'),
    );

    const command = [process.execPath, cliPath, 'test'].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: dir, env: { ...process.env, NO_COLOR: '1', FW_AI: 'mock' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let screen = '';
    child.stdout.on('data', (chunk: Buffer) => (screen += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (screen += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      // The quick test has passed while the held one waits: the line says so, redrawn in place.
      await until(async () => screen.includes('\r\u001b[2K… Testing: 0/1 files, 1 passed'), 'the status line', { timeoutMs: 120_000, intervalMs: 50 });
      await writeFile(go, '');
      expect(await exited).toBe(0);
    } finally {
      child.kill();
    }
    // Vitest's own summary, and the status line erased after the last redraw (nothing drawn after it).
    expect(screen).toMatch(/Tests\s+2 passed \(2\)/);
    const lastDraw = screen.lastIndexOf('\r\u001b[2K… Testing:');
    const lastErase = screen.lastIndexOf('\r\u001b[2K');
    expect(lastErase).toBeGreaterThan(lastDraw);
    expect(screen.slice(lastErase + 4)).not.toContain('… Testing:');
  }, 300_000);

  it('piped: Vitest\'s output without colour, even where Vitest would colour by itself (CI=true)', async () => {
    await mkdir(path.join(repoRoot, '.test-apps'), { recursive: true });
    dir = await mkdtemp(path.join(repoRoot, '.test-apps', 'test-piped-'));
    await mkdir(path.join(dir, 'tests'));
    await writeFile(path.join(dir, 'package.json'), '{ "type": "module" }\n');
    await writeFile(path.join(dir, 'tests/one.test.ts'), "import { expect, it } from 'vitest';\nit('one', () => expect(1).toBe(1));\n");
    const { NO_COLOR: _, FORCE_COLOR: __, ...env } = process.env;
    const child = spawn(process.execPath, [cliPath, 'test'], { cwd: dir, env: { ...env, CI: 'true', FW_AI: 'mock' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    expect(await new Promise<number | null>((resolve) => child.once('exit', resolve))).toBe(0);
    expect(output).toMatch(/Tests\s+1 passed \(1\)/);
    expect(output).not.toContain('\u001b[');
  }, 120_000);
});
