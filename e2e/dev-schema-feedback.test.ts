import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, post, type RunningFw, startFw } from './support/app.ts';
import { hasChromium, launchChromium } from './support/browser.ts';
import { until } from './support/until.ts';

const devAuth = { 'x-fw-user-id': 'user-1', 'x-fw-tenant-id': '00000000-0000-4000-8000-000000000001', 'x-fw-role': 'member' };

// #45.7: what fw dev says about a schema edit — an additive migration as what it did, a blocked one
// with only the fixes that apply to it, and in the overlay before the type errors it causes.
describe('fw dev tells what a schema edit did', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw | undefined;
  let original: string;
  const schemaFile = () => path.join(app.dir, 'src/fw/schema.ts');

  // Each test its own app and database. Inside this checkout, so the app's typescript (for fw dev's typecheck) resolves.
  beforeEach(async () => {
    app = await createTestApp('minimal-web', {}, { insideRepo: true });
    original = await readFile(schemaFile(), 'utf8');
  }, 120_000);
  afterEach(async () => {
    await dev?.stop();
    dev = undefined;
    await app?.remove();
  });

  it('announces an additive migration as the change it made, and offers --accept-data-loss only for a drop', async () => {
    dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir });
    const url = dev.ready.serverUrl as string;
    const pinned = original.replace('      title: t.text(),\n', '      title: t.text(),\n      pinned: t.boolean().default(false),\n');
    await writeFile(schemaFile(), pinned);
    const announced = 'fw: reloaded src/fw/schema.ts; migrated the database: add column notes.pinned (boolean, not null, default false::boolean)';
    await until(async () => dev!.stderr().split('\n').includes(announced), 'the announcement');

    // A type change is blocked; --accept-data-loss would not apply it, so it is not offered.
    await writeFile(schemaFile(), pinned.replace('author_id: t.text(),', 'author_id: t.integer(),'));
    await until(async () => (await post(url, '/queries/listNotes', {}, devAuth)).status === 503, 'the hold');
    const typeChange = await post(url, '/queries/listNotes', {}, devAuth);
    expect(typeChange.body.error.diagnostics.map((d: { code: string }) => d.code)).toEqual(['column_type_change']);
    expect(typeChange.body.error.message).not.toContain('--accept-data-loss');
    expect(typeChange.body.error.message).toContain('fw db migrate --dry-run');

    // A drop is: that is what the flag applies.
    await writeFile(schemaFile(), pinned.replace('      body: t.text().nullable(),\n', ''));
    await until(async () => (await post(url, '/queries/listNotes', {}, devAuth)).body.error?.diagnostics?.[0]?.code === 'drop_column', 'the drop');
    expect((await post(url, '/queries/listNotes', {}, devAuth)).body.error.message).toContain(
      'fw db migrate --accept-data-loss  (applies drops of columns and tables, beside fw dev too; only if losing that data is intended)',
    );
  }, 180_000);

  it.skipIf(!hasChromium)("the dashboard's Data view counts pending and blocked changes apart, in the same words", async () => {
    dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir });
    const url = dev.ready.serverUrl as string;
    await writeFile(schemaFile(), original.replace('author_id: t.text(),', 'author_id: t.integer(),'));
    await until(async () => (await post(url, '/queries/listNotes', {}, devAuth)).status === 503, 'the hold');
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`${url}/_fw/dashboard/#/data`);
      const item = page.getByRole('option', { name: /Schema & migrations/ });
      const stats = () => page.locator('.stat').evaluateAll((els) => els.map((el) => [el.querySelector('.label')?.textContent, el.querySelector('.value')?.textContent]));
      await until(async () => ((await stats()).length > 0 ? true : undefined), 'the overview');
      // One change, blocked: the list says "1 blocked", beside "Pending changes 0" and "Blocked changes 1" (it said "1 pending").
      await until(async () => ((await item.textContent()) === 'Schema & migrations1 blocked' ? true : undefined), 'the badge');
      expect(await stats()).toEqual(expect.arrayContaining([['Pending changes', '0'], ['Blocked changes', '1']]));
    } finally {
      await browser.close();
    }
  }, 180_000);

  it('shows the schema block in the overlay above the type errors the edit causes', async () => {
    dev = await startFw(['dev', '--port', '0', '--web-port', '0', '--json', '--typecheck'], { cwd: app.dir, timeoutMs: 120_000 });
    const checked = { timeoutMs: 240_000, intervalMs: 250 };
    await until(async () => dev!.stderr().includes('fw: types OK'), 'the first check', checked);
    const page = await openHmrSocket(String(dev.ready.webUrl));
    // author_id becomes an integer: blocked (a type change), and createNote's string author a type error.
    await writeFile(schemaFile(), original.replace('author_id: t.text(),', 'author_id: t.integer(),'));
    const withTypeErrors = await until(
      async () => page.received.filter((p) => p.type === 'error').find((p) => p.err!.message.includes('TS2322')),
      'the type errors in the overlay',
      checked,
    );
    const message = withTypeErrors.err!.message;
    expect(message.startsWith('The schema has a change fw will not apply automatically; nothing was applied.')).toBe(true);
    expect(message.indexOf('schema.notes.author_id')).toBeLessThan(message.indexOf('type error'));
    expect(withTypeErrors.err!.loc).toMatchObject({ line: 10, column: 7 });
    page.close();
  }, 300_000);
});

/** A Vite HMR websocket as the page's client opens it: what the overlay is sent. */
async function openHmrSocket(webUrl: string): Promise<{ received: Array<{ type: string; err?: { message: string; loc?: unknown } }>; close(): void }> {
  // Vite admits a websocket with the token its client carries.
  const client = await (await fetch(`${webUrl}/@vite/client`)).text();
  const token = /const wsToken = "([^"]+)"/.exec(client)?.[1];
  expect(token).toBeTruthy();
  const socket = new WebSocket(`${webUrl.replace(/^http/, 'ws')}/?token=${token}`, 'vite-hmr');
  const received: Array<{ type: string; err?: { message: string } }> = [];
  socket.addEventListener('message', (event) => received.push(JSON.parse(String(event.data)) as { type: string }));
  await until(async () => received.some((p) => p.type === 'connected'), 'the websocket', { timeoutMs: 30_000, intervalMs: 50 });
  return { received, close: () => socket.close() };
}
