import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliPath, createTestApp, startFw } from './support/app.ts';
import { until } from './support/until.ts';

// #30 item 5, #45 item 4: the first `fw dev` start takes seconds (the embedded database, migrations,
// Vite); it says what it is doing after 2 s — on a terminal on one status line on stderr; piped (and
// with --json, on stderr) as plain lines, one per step and one every 3 s, never cursor control or colour. The app here is slow to load on purpose (an entry file waits 3 s
// at its top level), so the status line is due on any machine.
const slowEntry = ["import { query } from 'fwjs';", 'await new Promise((resolve) => setTimeout(resolve, 3000));', "export default query({ policy: 'user', handler: () => 'loaded' });", ''].join('\n');

/** The steps a first start goes through, in order (dev-runtime.ts, dev-server.ts). */
const steps = ['starting', 'loading the app', 'opening the database', 'loading the app', 'migrating the database', 'generating src/fw/_generated', 'starting the runtime', 'starting Vite', 'watching files'];
const ready = 'Ctrl-C to stop.';
const erase = '\r\u001b[2K';

interface Run {
  output(): string;
  /** Stops the `fw dev` the app's .fw/runtime.json names (SIGTERM), and waits for the run to end. */
  stop(): Promise<void>;
}

describe('fw dev says what its first start is doing', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;

  beforeAll(async () => {
    // Inside this checkout, so web/'s Vite and React resolve: the start goes through Vite too.
    app = await createTestApp('minimal-web', { 'src/queries/slowToLoad.ts': slowEntry }, { insideRepo: true });
  }, 120_000);
  afterAll(async () => {
    await app?.remove();
  });

  /** Runs `command` (a shell command line) in the app until `fw dev` is ready; its output as one string. */
  async function runUntilReady(file: string, args: string[], readyIn: 'stdout' | 'stderr'): Promise<Run & { stderr(): string }> {
    const child = spawn(file, args, { cwd: app.dir, env: { ...process.env, FW_AI: 'mock' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    let ended = false;
    void exited.then(() => (ended = true));
    await until(async () => (readyIn === 'stdout' ? stdout : stderr).includes(ready) || ended, 'fw dev to be ready', { timeoutMs: 180_000, intervalMs: 200 });
    expect(readyIn === 'stdout' ? stdout : stderr).toContain(ready);
    return {
      output: () => stdout,
      stderr: () => stderr,
      async stop() {
        const { pid } = JSON.parse(await readFile(path.join(app.dir, '.fw', 'runtime.json'), 'utf8')) as { pid: number };
        process.kill(pid, 'SIGTERM');
        await exited;
      },
    };
  }

  it.skipIf(!existsSync('/usr/bin/script'))('on a terminal: one status line naming each step with the elapsed time, erased before the ready line and never drawn again', async () => {
    // util-linux `script` gives fw a real terminal (its output is the terminal's transcript).
    const command = [process.execPath, cliPath, 'dev', '--port', '0', '--web-port', '0', '--no-typecheck'].map((a) => `'${a}'`).join(' ');
    const run = await runUntilReady('script', ['-qec', command, '/dev/null'], 'stdout');
    await run.stop();
    const transcript = run.output();
    const readyAt = transcript.indexOf('fw dev: web on ');
    expect(readyAt).toBeGreaterThan(0);
    // Every drawn status, in order, without repeats (the same step redrawn each second).
    const drawn = [...transcript.slice(0, readyAt).matchAll(/\r\u001b\[2K… fw dev: (.+?) \d+ s/g)].map((match) => match[1]!);
    const sequence = drawn.filter((step, i) => step !== drawn[i - 1]);
    expect(sequence.every((step) => steps.includes(step))).toBe(true);
    // From the slow load on, each step is drawn as it starts (earlier ones may finish within the 2 s).
    expect(sequence.slice(sequence.lastIndexOf('loading the app'))).toEqual(steps.slice(steps.lastIndexOf('loading the app')));
    // Erased, then the ready line in its place; after it, no status is drawn again.
    expect(transcript.slice(readyAt - erase.length, readyAt)).toBe(erase);
    expect(transcript.slice(readyAt)).not.toContain('… fw dev:');
  }, 240_000);

  it('piped, and with --json: plain lines saying each step (the slow load among them), no cursor control, no colour', async () => {
    const node = process.execPath;
    const piped = await runUntilReady(node, [cliPath, 'dev', '--port', '0', '--web-port', '0', '--no-typecheck'], 'stderr');
    await piped.stop();
    expect(piped.output()).toBe('');
    expect(piped.stderr()).not.toContain('\u001b');
    const lines = piped.stderr().split('\n');
    const said = lines.flatMap((line) => /^… fw dev: (.+?) \d+ s$/.exec(line)?.[1] ?? []);
    expect(said.every((step) => steps.includes(step))).toBe(true);
    // The 3 s load is said while it runs (it passes the 2 s delay), and the steps after it in order.
    const fromLoad = said.slice(said.lastIndexOf('loading the app')).filter((step, i, all) => step !== all[i - 1]);
    expect(fromLoad).toEqual(steps.slice(steps.lastIndexOf('loading the app')));
    // Then where it serves and the dashboard, and no step after the ready line.
    const readyAt = lines.findIndex((line) => line.startsWith('fw dev: web on '));
    expect(lines[readyAt]).toMatch(/^fw dev: web on http:\/\/127\.0\.0\.1:\d+, API on http:\/\/127\.0\.0\.1:\d+ \(pglite, 7 entries\)\. Ctrl-C to stop\.$/);
    expect(lines.slice(readyAt).some((line) => line.startsWith('… fw dev'))).toBe(false);

    const json = await startFw(['dev', '--port', '0', '--web-port', '0', '--json', '--no-typecheck'], { cwd: app.dir, timeoutMs: 180_000 });
    await json.stop();
    expect(json.ready).toMatchObject({ ok: true, entries: 7 });
    expect(json.stderr()).toMatch(/^… fw dev: loading the app \d+ s$/m);
    expect(json.stderr()).not.toContain('\u001b');
  }, 420_000);
});
