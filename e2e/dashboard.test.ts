import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, type RunningFw, startFw } from './support/app.ts';
import { hasChromium, launchChromium } from './support/browser.ts';
import { dashboardAppFiles } from './support/dashboard-app.ts';
import { freshTenantId } from './support/dev-tenant.ts';

// Each view of the dashboard in Chromium, served by a real `fw dev` (the built CLI: run `npm run build`
// first), with assertions on what it shows. Screenshots go to /tmp/fw-dashboard-*.png for a look.
const WAIT = 45_000;
const shots = process.env.FW_DASHBOARD_SHOTS ?? '/tmp';

describe.skipIf(!hasChromium)('the dashboard under fw dev', { timeout: 180_000 }, () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw;
  let browser: Browser;
  let page: Page;
  let dashboardUrl: string;
  let serverUrl: string;
  const tenant = freshTenantId();
  const as = { 'x-fw-user-id': 'dash', 'x-fw-tenant-id': tenant };

  beforeAll(async () => {
    app = await createTestApp('minimal-web', dashboardAppFiles);
    dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir, timeoutMs: 120_000 });
    serverUrl = String(dev.ready.serverUrl);
    dashboardUrl = String(dev.ready.dashboardUrl);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    // The identity the dashboard acts as: this test's own tenant.
    await page.addInitScript((id) => localStorage.setItem('fw.dashboard.identity', JSON.stringify({ userId: 'dash', tenantId: id, role: '' })), tenant);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
    await app?.remove();
  });

  const open = async (hash: string) => {
    await page.goto(`${dashboardUrl}#/${hash}`);
  };
  const shoot = (name: string) => page.screenshot({ path: `${shots}/fw-dashboard-${name}.png`, fullPage: true });

  it('is served by fw dev on its API port, and says where', async () => {
    expect(dashboardUrl).toBe(`${serverUrl}/_fw/dashboard/`);
    const res = await fetch(dashboardUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    // Another Host is refused before the dashboard (the dev server's allow-list).
    const url = new URL(dashboardUrl);
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: url.pathname, headers: { host: 'evil.example' } }, (r) => resolve(r.statusCode ?? 0));
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });

  it('Functions: lists entries with kind, policy, args and source, runs one as the chosen identity and shows errors with their place', async () => {
    await open('functions/createNote');
    await page.getByRole('heading', { name: 'createNote' }).waitFor({ timeout: WAIT });
    const card = page.locator('article.card');
    await expect.poll(() => card.innerText(), { timeout: WAIT }).toContain('src/commands/createNote.ts');
    expect(await card.innerText()).toMatch(/Policy\s+user/);
    expect(await page.getByRole('region', { name: 'Args' }).innerText()).toContain('title');
    for (const name of ['createNote', 'listNotes', 'liveNotes', 'onBad', 'greet']) await page.getByRole('option', { name: new RegExp(`^${name}`) }).waitFor({ timeout: WAIT });

    await page.getByLabel('Args (JSON)').fill('{ "title": "from the dashboard" }');
    await page.getByRole('button', { name: 'Run command' }).click();
    const result = page.getByTestId('run-result');
    await result.waitFor({ timeout: WAIT });
    expect(await result.innerText()).toContain('from the dashboard');
    expect(await result.innerText()).toContain(tenant);
    await shoot('functions');

    await page.getByLabel('Args (JSON)').fill('{ "title": "" }');
    await page.getByRole('button', { name: 'Run command' }).click();
    await expect.poll(() => page.getByTestId('run-error').innerText().catch(() => ''), { timeout: WAIT }).toContain('validation_failed');
    expect(await page.getByTestId('run-error').innerText()).toContain('args.title');

    await page.getByRole('option', { name: /^failNote/ }).click();
    await page.getByRole('heading', { name: 'failNote' }).waitFor({ timeout: WAIT });
    await page.getByLabel('Args (JSON)').fill('{ "title": "x" }');
    await page.getByLabel('Args (JSON)').press('Control+Enter');
    await expect.poll(() => page.getByTestId('run-error').innerText().catch(() => ''), { timeout: WAIT }).toContain('the note could not be filed');
    expect(await page.getByTestId('run-error').innerText()).toMatch(/internal[\s\S]*src\/commands\/failNote\.ts:6:\d+/);
    await shoot('functions-error');
  });

  it('Data: tables with rows per tenant, a paged, filterable browser as the owner or as the tenant, and the migrations', async () => {
    for (let i = 1; i <= 30; i++) expect((await post(serverUrl, '/commands/createNote', { title: `note ${String(i).padStart(2, '0')}` }, as)).status).toBe(200);
    const other = freshTenantId();
    await post(serverUrl, '/commands/createNote', { title: 'someone else' }, { ...as, 'x-fw-tenant-id': other });

    await open('data/notes');
    await page.getByRole('heading', { name: 'notes' }).waitFor({ timeout: WAIT });
    const range = page.getByTestId('row-range');
    await expect.poll(() => range.innerText(), { timeout: WAIT }).toMatch(/^1–25 of \d+$/);
    const tenants = page.getByRole('region', { name: 'Rows per tenant' });
    await expect.poll(() => tenants.innerText(), { timeout: WAIT }).toContain(other);
    expect(await tenants.innerText()).toMatch(new RegExp(`${tenant}\\s+31`));

    await page.getByLabel('Read as').selectOption('tenant');
    await expect.poll(() => range.innerText(), { timeout: WAIT }).toBe('1–25 of 31 (as the tenant)');
    await page.getByRole('button', { name: 'Next →' }).click();
    await expect.poll(() => range.innerText(), { timeout: WAIT }).toBe('26–31 of 31 (as the tenant)');
    expect(await page.getByRole('region', { name: 'Rows of notes' }).innerText()).not.toContain('someone else');

    await page.getByLabel('Filter column').selectOption('title');
    await page.getByLabel('Filter value').fill('note 1');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => range.innerText(), { timeout: WAIT }).toBe('1–10 of 10 (as the tenant)');
    await shoot('data');

    await page.getByRole('option', { name: /Schema & migrations/ }).click();
    const applied = page.getByRole('region', { name: 'Applied migrations' });
    await expect.poll(() => applied.innerText().catch(() => ''), { timeout: WAIT }).toContain('notes');
    expect(await page.locator('article.card').first().innerText()).toContain('The database matches src/fw/schema.ts.');
  });

  it('Live: subscriptions and groups with their read set, reruns, last run and result size', async () => {
    const controller = new AbortController();
    const stream = await fetch(`${serverUrl}/live/liveNotes?args=${encodeURIComponent('{}')}`, { headers: as, signal: controller.signal });
    expect(stream.status).toBe(200);
    try {
      await open('live');
      const card = page.getByRole('article', { name: 'liveQuery liveNotes' });
      await expect.poll(() => card.innerText().catch(() => ''), { timeout: WAIT }).toContain('1 subscription');
      const groups = page.getByRole('region', { name: 'Groups of liveNotes' });
      const before = await groups.innerText();
      expect(before).toMatch(/notes: all/);
      expect(before).toMatch(/\d+(\.\d)? KB|\d+ B/);
      // A write reruns the group; the view polls and shows the new count.
      await post(serverUrl, '/commands/createNote', { title: 'live one' }, as);
      await expect.poll(() => groups.innerText(), { timeout: WAIT }).toMatch(/2 \(0 unchanged\)/);
      await shoot('live');
    } finally {
      controller.abort();
    }
  });

  it('Outbox & workflows: dead-lettered rows with retry and discard, workflow runs with their steps', async () => {
    expect((await post(serverUrl, '/commands/emitBad', {}, as)).status).toBe(200);
    const started = await post(serverUrl, '/commands/startGreet', { name: 'ada' }, as);
    const runId = String(started.body.result.runId);
    await open('outbox');
    const dead = page.getByRole('region', { name: 'Outbox rows (dead)' });
    await expect.poll(() => dead.innerText().catch(() => ''), { timeout: WAIT }).toContain('note.bad');
    expect(await dead.innerText()).toContain('validation_failed');
    const id = (await dead.locator('tbody tr td').first().innerText()).trim();

    const deadRow = async () => ((await fetch(`${serverUrl}/_fw/dashboard/api/outbox?status=dead`).then((r) => r.json())) as { rows: Array<{ id: string; deadAt: string }> }).rows.find((r) => r.id === id);
    const firstDeath = (await deadRow())!.deadAt;
    const notice = page.locator('.view [role=status]');
    await page.getByRole('button', { name: `Retry row ${id}` }).click();
    await expect.poll(() => notice.innerText(), { timeout: WAIT }).toContain(`Retried row ${id}`);
    // The worker delivers it again; its payload is still refused, so it dies a second time.
    await expect.poll(async () => (await deadRow())?.deadAt ?? firstDeath, { timeout: WAIT }).not.toBe(firstDeath);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: `Discard row ${id}` }).click();
    await expect.poll(() => notice.innerText(), { timeout: WAIT }).toContain(`Discarded row ${id}`);
    await page.getByText('No dead-lettered rows.').waitFor({ timeout: WAIT });
    expect(await deadRow()).toBeUndefined();

    const runs = page.getByRole('region', { name: 'Workflow runs' });
    await expect.poll(() => runs.innerText(), { timeout: WAIT }).toMatch(/greet\s+completed/);
    await page.getByRole('link', { name: runId.slice(0, 8) }).first().click();
    const steps = page.getByRole('region', { name: 'Steps' });
    await expect.poll(() => steps.innerText().catch(() => ''), { timeout: WAIT }).toContain('compose');
    expect(await steps.innerText()).toContain('deliver');
    expect(await page.getByRole('button', { name: 'Cancel run' }).isDisabled()).toBe(true);
    await shoot('outbox');
  });

  it('Requests: the last requests with status, entry and duration, and a waterfall of their spans', async () => {
    const created = await post(serverUrl, '/commands/createNote', { title: 'traced' }, as);
    const traceId = String(created.body.traceId);
    await open('requests');
    const list = page.getByRole('region', { name: 'Recent requests' });
    await expect.poll(() => list.innerText().catch(() => ''), { timeout: WAIT }).toContain('POST /commands/createNote');
    // The dashboard's own polling is not listed; its runs are, by entry.
    expect(await list.innerText()).not.toContain('GET /_fw/');
    expect(await list.innerText()).toContain('run createNote (dashboard)');
    // Who made it: the dev identity (kept beside the spans, not on them).
    expect(await list.innerText()).toContain(`dash · tenant ${tenant.slice(0, 8)}…`);
    await open(`requests/${traceId}`);
    const spans = page.getByRole('list', { name: 'Spans' });
    await expect.poll(() => spans.innerText().catch(() => ''), { timeout: WAIT }).toContain('fw.entry createNote');
    expect(await spans.innerText()).toMatch(/INSERT notes/);
    await shoot('requests');
  });

  it('Logs: the last lines with links to their request; AI runs with their trace', async () => {
    // A line of its own to find: a failed run, which the dashboard logs with its trace id.
    await fetch(`${serverUrl}/_fw/dashboard/api/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'failNote', args: { title: 'x' }, identity: { userId: 'dash', tenantId: tenant } }) });
    await open('logs');
    const log = page.getByRole('log', { name: 'Log lines' });
    await expect.poll(() => log.innerText().catch(() => ''), { timeout: WAIT }).toContain('fw dashboard: ran command failNote as user dash');
    const link = page.getByRole('link', { name: /^Request of trace / }).first();
    const href = await link.getAttribute('href');
    expect(href).toMatch(/^#\/requests\/[0-9a-f]{32}$/);
    await page.getByLabel('Level').selectOption('warn');
    await expect.poll(() => log.innerText(), { timeout: WAIT }).not.toContain(': ok in ');
    await shoot('logs');

    const agent = await fetch(`${serverUrl}/ai/agents/run`, { method: 'POST', headers: { 'content-type': 'application/json', ...as }, body: JSON.stringify({ agent: 'assistant', prompt: 'hello', maxSteps: 1 }) });
    expect(agent.status).toBe(200);
    const { traceId } = (await agent.json()) as { traceId: string };
    await open('ai');
    const runs = page.getByRole('region', { name: 'Recorded AI runs' });
    await expect.poll(() => runs.innerText().catch(() => ''), { timeout: WAIT }).toContain(traceId.slice(0, 12));
    await page.getByRole('link', { name: traceId.slice(0, 12) }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'AI trace' }).isVisible(), { timeout: WAIT }).toBe(true);
    expect(await page.locator('article.card').innerText()).toContain('assistant');
  });

  it('reads at phone width and in dark mode, and moves between views with the keyboard', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
    try {
      await phone.goto(`${dashboardUrl}#/functions/createNote`);
      await phone.getByRole('heading', { name: 'createNote' }).waitFor({ timeout: WAIT });
      // Nothing wider than the screen but the scrollable tables.
      expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      expect(await phone.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(17, 18, 20)');
      await phone.screenshot({ path: `${shots}/fw-dashboard-phone.png` });
      await phone.locator('body').press('2');
      await phone.getByRole('heading', { name: 'Data' }).waitFor({ timeout: WAIT });
      expect(await phone.getByRole('link', { name: 'Data' }).getAttribute('aria-current')).toBe('page');
    } finally {
      await phone.close();
    }
  });
});
