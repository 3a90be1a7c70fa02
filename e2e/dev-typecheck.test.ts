import { realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type RunningFw, startFw } from './support/app.ts';
import { until } from './support/until.ts';

// #30: `fw dev` typechecks the app in the background (a worker thread running the app's TypeScript in
// watch mode): type errors are printed as they appear, once, and "types OK" when they are fixed; with
// the Vite web/ they show in its error overlay too (the payloads a page gets on Vite's websocket).
// A check of the minimal app takes seconds, and far longer on a busy machine: generous deadlines.
const checked = { timeoutMs: 240_000, intervalMs: 250 };

const command = (body: string) => ["import { command } from 'fwjs';", '', 'export default command({', "  policy: 'user',", body, '});', ''].join('\n');
const typeErrorLine = '  handler: () => { const n: number = "one"; return n; },';

describe('fw dev typechecks in the background', () => {
  // Inside this checkout, so the app's `typescript` (a devDependency of the template) resolves.
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw | undefined;
  const lines = () => dev!.stderr().split('\n');
  const count = (text: string) => lines().filter((line) => line.includes(text)).length;

  beforeAll(async () => {
    app = await createTestApp('minimal-web', { 'src/commands/counted.ts': command("  handler: () => { const n: number = 1; return n; },") }, { insideRepo: true });
  }, 120_000);
  afterEach(async () => {
    await dev?.stop();
    dev = undefined;
  });
  afterAll(async () => {
    await app?.remove();
  });

  it('reports a type error with its place once, in the terminal and the overlay, and "types OK" when it is fixed', async () => {
    dev = await startFw(['dev', '--port', '0', '--web-port', '0', '--json', '--typecheck'], { cwd: app.dir, timeoutMs: 90_000 });
    // The first check names the projects: the app's and web/'s, as `npm run typecheck` checks them.
    await until(async () => lines().includes('fw: types OK (tsconfig.json, web/tsconfig.json)'), 'the first check', checked);
    const page = await openHmrSocket(String(dev.ready.webUrl));

    await writeFile(path.join(app.dir, 'src/commands/counted.ts'), command(typeErrorLine));
    const error = "fw: src/commands/counted.ts:5:26 error TS2322 Type 'string' is not assignable to type 'number'.";
    await until(async () => lines().includes(error), 'the type error', checked);
    await until(async () => lines().includes('fw: 1 type error in 1 file'), 'the summary', checked);
    // The overlay gets it: its place as the link, with the count and the message.
    const file = path.join(await realpath(app.dir), 'src/commands/counted.ts');
    await until(async () => page.received.some((p) => p.type === 'error'), 'the overlay error', checked);
    expect(page.received.find((p) => p.type === 'error')).toMatchObject({
      type: 'error',
      err: {
        plugin: 'fw',
        message: "1 type error in 1 file (fw dev's typecheck; the page still runs)\nsrc/commands/counted.ts:5:26 TS2322 Type 'string' is not assignable to type 'number'.",
        id: file,
        loc: { file, line: 5, column: 26 },
      },
    });

    // A second error in another file: only it is printed, the first is not repeated.
    await writeFile(path.join(app.dir, 'src/commands/second.ts'), command('  handler: () => missingName,'));
    await until(async () => lines().includes("fw: src/commands/second.ts:5:18 error TS2304 Cannot find name 'missingName'."), 'the second error', checked);
    await until(async () => lines().includes('fw: 2 type errors in 2 files'), 'the second summary', checked);
    expect(count(error)).toBe(1);

    await writeFile(path.join(app.dir, 'src/commands/counted.ts'), command("  handler: () => { const n: number = 1; return n; },"));
    await writeFile(path.join(app.dir, 'src/commands/second.ts'), command('  handler: () => 2,'));
    await until(async () => lines().includes('fw: types OK'), 'types OK after the fix', checked);
    expect(count(error)).toBe(1);
    expect(count('TS2304')).toBe(1);
    // …and the overlay is cleared: an empty update, which Vite's client clears its overlay for.
    await until(async () => page.received.some((p) => p.type === 'update' && p.updates?.length === 0), 'the overlay cleared', checked);
    page.close();

    // Stopping fw dev ends the check with it (a worker thread: nothing is left running), and fw dev's
    // own shutdown runs to its end: 0, not the 143 of Vite's SIGTERM handler exiting halfway (vite-exit.ts).
    const stopping = dev;
    dev = undefined;
    expect(await stopping.stop()).toBe(0);
  }, 600_000);

  it('prints no typecheck line with --no-typecheck', async () => {
    dev = await startFw(['dev', '--api-only', '--port', '0', '--json', '--no-typecheck'], { cwd: app.dir });
    // A type error the check would report; the reload of the file shows the session saw it.
    await writeFile(path.join(app.dir, 'src/commands/counted.ts'), command(typeErrorLine));
    await until(async () => lines().includes('fw: reloaded src/commands/counted.ts'), 'the reload line', checked);
    expect(lines().filter((line) => /types OK|type errors? in|error TS\d+|typecheck/.test(line))).toEqual([]);
  }, 300_000);
});

// An app without typescript gets one line saying typechecking is off: plugin/dev-server/typecheck.test.ts.

/** A page's view of Vite's websocket: the HMR payloads it receives (Vite's client draws the overlay from them). */
async function openHmrSocket(webUrl: string): Promise<{ received: Array<{ type: string; err?: unknown; updates?: unknown[] }>; close(): void }> {
  // Vite admits a websocket with the token its client carries.
  const client = await (await fetch(`${webUrl}/@vite/client`)).text();
  const token = /const wsToken = "([^"]+)"/.exec(client)?.[1];
  expect(token).toBeTruthy();
  const socket = new WebSocket(`${webUrl.replace(/^http/, 'ws')}/?token=${token}`, 'vite-hmr');
  const received: Array<{ type: string }> = [];
  socket.addEventListener('message', (event) => received.push(JSON.parse(String(event.data)) as { type: string }));
  await until(async () => received.some((p) => p.type === 'connected'), 'the websocket', { timeoutMs: 30_000, intervalMs: 50 });
  return { received, close: () => socket.close() };
}
