import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, type RunningFw, startFw } from './support/app.ts';
import { hasChromium, launchChromium } from './support/browser.ts';
import { actAsTenant, freshTenantId } from './support/dev-tenant.ts';

/**
 * Paginated live queries and optimistic updates in Chromium against `fw dev` (docs/live.md
 * "Pagination", "Optimistic updates"): pages stay live with no row twice or missing when another
 * session writes at a page boundary; an optimistic note shows at once, is rolled back when its command
 * fails, and is replaced by the server's row without the list ever going back to the old state — also
 * with two commands in flight. The page records every list it renders, so a flash would show.
 */
const files: Record<string, string> = {
  'src/queries/pagedNotes.ts': `import { liveQuery, paginate, paginationArgs } from 'fwjs';
export default liveQuery({
  description: 'Notes by title, a page at a time.',
  policy: 'user',
  args: { page: paginationArgs },
  handler: (ctx, args) => paginate(ctx.db.selectFrom('notes').select(['id', 'title']), { orderBy: [['title', 'asc'], ['id', 'asc']] }, args),
});
`,
  'src/commands/slowNote.ts': `import { command, FwError, z } from 'fwjs';
export default command({
  description: 'Creates a note after a delay, or fails after it.',
  policy: 'user',
  args: { title: z.string(), delayMs: z.number().int().max(5000), fail: z.boolean().optional() },
  handler: async (ctx, args) => {
    await new Promise((resolve) => setTimeout(resolve, args.delayMs));
    if (args.fail) throw new FwError('conflict', 'Refused on purpose.');
    return ctx.db.insertInto('notes').values({ title: args.title, body: null, author_id: ctx.auth.userId! }).returningAll().executeTakeFirstOrThrow();
  },
});
`,
  'src/commands/deleteNote.ts': `import { command, z } from 'fwjs';
export default command({
  description: 'Deletes notes by title.',
  policy: 'user',
  args: { title: z.string() },
  handler: (ctx, args) => ctx.db.deleteFrom('notes').where('title', '=', args.title).execute().then(() => 'ok'),
});
`,
  'web/paged.html': '<!doctype html><html><body><div id="root"></div><script type="module" src="/src/paged.tsx"></script></body></html>',
  'web/src/paged.tsx': `import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { createFwReact } from 'fwjs/react';
import { api } from '../../src/fw/_generated/api.ts';

const { FwProvider, useCommand, useLiveQuery, usePaginatedLiveQuery } = createFwReact(api);
declare global { interface Window { rendered: string[] } }
window.rendered = [];

function Paged() {
  const { results, loadMore, status } = usePaginatedLiveQuery('pagedNotes', {}, { pageSize: 3 });
  return (
    <section>
      <p aria-label="Page status">{status}</p>
      <ul aria-label="Paged">{results.map((note) => <li key={note.id}>{note.title}</li>)}</ul>
      <button onClick={() => loadMore()}>Load more</button>
    </section>
  );
}

function Optimistic() {
  const live = useLiveQuery('liveNotes', {});
  const [error, setError] = useState('');
  const slow = useCommand('slowNote', {
    optimistic: (store, args) =>
      store.setLive('liveNotes', {}, (notes) => [{ id: 'pending-' + args.title, title: args.title + ' (saving)', body: null, author_id: 'me', created_at: '' }, ...notes]),
  });
  const titles = live.data?.map((note) => note.title) ?? [];
  useEffect(() => {
    if (live.data) window.rendered.push(titles.join('|'));
  });
  const run = (title: string, delayMs: number, fail = false) => slow.mutateAsync({ title, delayMs, fail }).catch((e: { code: string }) => setError(e.code));
  return (
    <section>
      <button onClick={() => void run('Alpha', 1500)}>Add alpha</button>
      <button onClick={() => void run('Beta', 700)}>Add beta</button>
      <button onClick={() => void run('Doomed', 700, true)}>Add doomed</button>
      <button onClick={() => void run('Gamma', 1500)}>Add gamma</button>
      <p aria-label="Command error">{error}</p>
      <ul aria-label="Live">{titles.map((title) => <li key={title}>{title}</li>)}</ul>
    </section>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <FwProvider apiUrl="" devAuth={{ userId: 'dev', tenantId: '00000000-0000-4000-8000-000000000001', role: 'member' }}>
      <Paged />
      <Optimistic />
    </FwProvider>
  </StrictMode>,
);
`,
};

const devAuth = (tenantId: string) => ({ 'x-fw-user-id': 'other-session', 'x-fw-tenant-id': tenantId });

describe.skipIf(!hasChromium)('paginated live queries and optimistic updates in a real browser', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw;
  let browser: Browser;

  beforeAll(async () => {
    app = await createTestApp('minimal-web', files, { insideRepo: true });
    dev = await startFw(['dev', '--port', '0', '--web-port', '0', '--json'], { cwd: app.dir, timeoutMs: 120_000 });
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
    await app?.remove();
  });

  async function open(tenantId: string): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext();
    await actAsTenant(context, tenantId);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${dev.ready.webUrl as string}/paged.html`);
    return { page, problems };
  }
  const write = async (tenantId: string, route: string, args: unknown) => {
    const response = await post(dev.ready.serverUrl as string, route, args, devAuth(tenantId));
    expect(response.status).toBe(200);
  };

  it('loaded pages stay live: a write from another session at a page boundary shows once, in order', async () => {
    const tenantId = freshTenantId();
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8]) await write(tenantId, '/commands/createNote', { title: `n0${n}` });
    const { page, problems } = await open(tenantId);
    const paged = page.getByRole('list', { name: 'Paged' });
    const shown = () => paged.getByRole('listitem').allTextContents();
    await expect.poll(shown, { timeout: 30_000 }).toEqual(['n01', 'n02', 'n03']);
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(shown, { timeout: 30_000 }).toEqual(['n01', 'n02', 'n03', 'n04', 'n05', 'n06']);
    await expect.poll(() => page.getByLabel('Page status').textContent()).toBe('canLoadMore');

    // Right after page one's last row (the boundary), and the first row of page two deleted.
    await write(tenantId, '/commands/createNote', { title: 'n03a' });
    await expect.poll(shown, { timeout: 30_000 }).toEqual(['n01', 'n02', 'n03', 'n03a', 'n04', 'n05', 'n06']);
    await write(tenantId, '/commands/deleteNote', { title: 'n04' });
    await expect.poll(shown, { timeout: 30_000 }).toEqual(['n01', 'n02', 'n03', 'n03a', 'n05', 'n06']);
    // Before the first row: page one (held by its end) grows.
    await write(tenantId, '/commands/createNote', { title: 'n00' });
    await expect.poll(shown, { timeout: 30_000 }).toEqual(['n00', 'n01', 'n02', 'n03', 'n03a', 'n05', 'n06']);

    await page.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(shown, { timeout: 30_000 }).toEqual(['n00', 'n01', 'n02', 'n03', 'n03a', 'n05', 'n06', 'n07', 'n08']);
    await expect.poll(() => page.getByLabel('Page status').textContent()).toBe('exhausted');
    // The last page is open-ended: a row after every other one joins it.
    await write(tenantId, '/commands/createNote', { title: 'n09' });
    await expect.poll(shown, { timeout: 30_000 }).toEqual(['n00', 'n01', 'n02', 'n03', 'n03a', 'n05', 'n06', 'n07', 'n08', 'n09']);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('optimistic notes show at once, are rolled back on failure, and are replaced by the server rows with no flash — two commands in flight', async () => {
    const tenantId = freshTenantId();
    await write(tenantId, '/commands/createNote', { title: 'Existing' });
    const { page, problems } = await open(tenantId);
    const live = page.getByRole('list', { name: 'Live' });
    const shown = () => live.getByRole('listitem').allTextContents();
    await expect.poll(shown, { timeout: 30_000 }).toEqual(['Existing']);

    // Failure: shown while in flight, then gone, and the server never had it.
    await page.getByRole('button', { name: 'Add doomed' }).click();
    await expect.poll(shown, { timeout: 5_000 }).toEqual(['Doomed (saving)', 'Existing']);
    await expect.poll(() => page.getByLabel('Command error').textContent(), { timeout: 30_000 }).toBe('conflict');
    await expect.poll(shown, { timeout: 5_000 }).toEqual(['Existing']);

    // Two in flight, Alpha answering after Beta.
    await page.getByRole('button', { name: 'Add alpha' }).click();
    await page.getByRole('button', { name: 'Add beta' }).click();
    await expect.poll(shown, { timeout: 5_000 }).toEqual(['Beta (saving)', 'Alpha (saving)', 'Existing']);
    // The server's rows, every layer gone (their order is the transactions' start times: not asserted).
    await expect.poll(async () => (await shown()).sort(), { timeout: 30_000 }).toEqual(['Alpha', 'Beta', 'Existing']);
    const rendered: string[] = await page.evaluate(() => (window as unknown as { rendered: string[] }).rendered);
    const has = (list: string, title: string) => list.split('|').filter((t) => t === title || t === `${title} (saving)`).length;
    // From the first render that showed a note (saving or saved), every later render shows it: no
    // flash back to the state before the command. (It may show twice — the server's row plus the
    // layer — for up to optimisticSettleMs when the snapshot with its write is labelled with a later
    // revision: docs/live.md "Optimistic updates". Not asserted away here, because it happens.)
    for (const title of ['Alpha', 'Beta']) {
      const first = rendered.findIndex((list) => has(list, title) > 0);
      expect(first, `${title} shown`).toBeGreaterThanOrEqual(0);
      expect(rendered.slice(first).filter((list) => has(list, title) === 0), `${title} never disappears: ${rendered.join(' ; ')}`).toEqual([]);
    }

    // Another session writes while a command is in flight: its row shows, the pending note stays on
    // top, and the note never disappears. (When the rerun reads both writes together its snapshot
    // carries the later revision: the note may show twice until optimisticSettleMs — docs/live.md.)
    await page.evaluate(() => void ((window as unknown as { rendered: string[] }).rendered = []));
    await page.getByRole('button', { name: 'Add gamma' }).click();
    await expect.poll(shown, { timeout: 5_000 }).toContain('Gamma (saving)');
    await write(tenantId, '/commands/createNote', { title: 'Other tab' });
    await expect.poll(async () => (await shown()).sort(), { timeout: 30_000 }).toEqual(['Alpha', 'Beta', 'Existing', 'Gamma', 'Other tab']);
    const later: string[] = await page.evaluate(() => (window as unknown as { rendered: string[] }).rendered);
    const firstGamma = later.findIndex((list) => has(list, 'Gamma') > 0);
    expect(later.slice(firstGamma).filter((list) => has(list, 'Gamma') === 0), `Gamma never disappears: ${later.join(' ; ')}`).toEqual([]);
    expect(later.some((list) => has(list, 'Other tab') > 0)).toBe(true);
    expect(rendered.some((list) => list.split('|').includes('Doomed'))).toBe(false);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
