import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, repoRoot, type RunningFw, runNode, startFw } from './support/app.ts';
import { hasChromium, holdRequests, launchChromium } from './support/browser.ts';
import { actAsTenant, freshTenantId } from './support/dev-tenant.ts';

/**
 * The b2b-support-web template in Chromium through the real `fw dev`: the empty state, a ticket opened
 * in the form appearing in the live list, a reply shown optimistically (before its command answers)
 * that stays, "Load more" paging the live list, finding tickets by words, status and priority, the
 * focus moving to an opened ticket, a refused field said under it, Assign offered to admins only, the
 * error banner (fw error code and trace id) when the server refuses a command, and the built app's
 * sign-in page on a phone. Every test acts as a tenant of its own.
 */
describe.skipIf(!hasChromium)('b2b-support-web in a real browser under fw dev', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw;
  let browser: Browser;

  beforeAll(async () => {
    app = await createTestApp('b2b-support-web', {}, { insideRepo: true });
    dev = await startFw(['dev', '--port', '0', '--web-port', '0', '--json'], { cwd: app.dir, timeoutMs: 120_000 });
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
    await app?.remove();
  });

  /** A page acting as a new tenant (the app's own dev identity is an agent), and the page errors it raised. */
  async function open(tenantId: string): Promise<{ page: Page; context: BrowserContext; problems: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await actAsTenant(context, tenantId);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(dev.ready.webUrl as string);
    return { page, context, problems };
  }
  const createTicket = async (tenantId: string, subject: string, extra: { priority?: string } = {}) => {
    const response = await post(dev.ready.serverUrl as string, '/commands/createTicket', { subject, body: `About ${subject}.`, ...extra }, { 'x-fw-user-id': 'other-agent', 'x-fw-tenant-id': tenantId, 'x-fw-role': 'agent' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.result as { id: string };
  };
  const listed = (page: Page) => page.getByRole('list', { name: 'Active tickets' }).locator('.ticket-subject').allTextContents();

  it('shows the empty state, then a ticket opened in the form at the top of the live list', async () => {
    const { page, context, problems } = await open(freshTenantId());
    await expect.poll(() => page.getByText('No open tickets').isVisible(), { timeout: 30_000 }).toBe(true);
    await expect.poll(() => page.getByRole('status', { name: /^Updates:/ }).textContent(), { timeout: 30_000 }).toBe('Live');

    await page.getByRole('button', { name: 'Open the first ticket' }).click();
    await page.getByLabel('Subject').fill('Printer on fire');
    await page.getByLabel('Description').fill('Smoke everywhere.');
    await page.getByRole('button', { name: 'Open ticket', exact: true }).click();
    await expect.poll(() => listed(page), { timeout: 30_000 }).toEqual(['Printer on fire']);
    // The form hands over to the new ticket's detail.
    await expect.poll(() => page.getByRole('heading', { level: 2 }).textContent(), { timeout: 30_000 }).toBe('Printer on fire');
    await expect.poll(() => page.getByText('No open tickets').count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('shows loading rows until the ticket list arrives, then the empty state', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await actAsTenant(context, freshTenantId());
    const page = await context.newPage();
    // The live stream is held until the test has seen the loading state.
    const release = await holdRequests(page, '**/live');
    await page.goto(dev.ready.webUrl as string);
    const loading = page.getByRole('list', { name: 'Loading tickets' });
    await loading.waitFor({ timeout: 30_000 });
    expect(await loading.getAttribute('aria-busy')).toBe('true');
    expect(await page.getByText('No open tickets').count()).toBe(0);
    release();
    await expect.poll(() => page.getByText('No open tickets').isVisible(), { timeout: 30_000 }).toBe(true);
    expect(await page.getByRole('list', { name: 'Loading tickets' }).count()).toBe(0);
    await context.close();
  });

  it('shows a reply at once, before its command answers, and keeps it', async () => {
    const tenantId = freshTenantId();
    await createTicket(tenantId, 'Cannot export invoices');
    const { page, context, problems } = await open(tenantId);
    await page.getByRole('button', { name: /Cannot export invoices/ }).click();
    const conversation = page.getByRole('list', { name: 'Conversation' });
    await expect.poll(() => conversation.textContent(), { timeout: 30_000 }).toContain('No replies yet.');

    // Hold the command at the network until the optimistic reply has been seen on the page.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/commands/addComment', async (route) => {
      await held;
      await route.fallback();
    });
    // From the first frame showing the reply, count every mutation after which it is missing.
    await page.evaluate(() => {
      const w = window as unknown as { seen: boolean; vanished: number };
      w.seen = false;
      w.vanished = 0;
      new MutationObserver(() => {
        const shown = [...document.querySelectorAll('.conversation .comment p')].some((p) => p.textContent === 'Which format do you need?');
        if (shown) w.seen = true;
        else if (w.seen) w.vanished += 1;
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await page.getByPlaceholder(/Write a reply/).fill('Which format do you need?');
    await page.getByRole('button', { name: 'Send reply' }).click();
    const reply = conversation.locator('.comment', { hasText: 'Which format do you need?' });
    await expect.poll(() => reply.getAttribute('data-pending'), { timeout: 5_000 }).toBe('true');
    release();
    // The server's row replaces the optimistic one; the ticket now waits on the customer.
    await expect.poll(async () => (await reply.count()) === 1 && (await reply.getAttribute('data-pending')) === null, { timeout: 30_000 }).toBe(true);
    await expect.poll(() => page.locator('.ticket-head .badge').first().textContent(), { timeout: 30_000 }).toBe('Awaiting customer');
    expect(await page.evaluate(() => (window as unknown as { vanished: number }).vanished)).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('pages the live list with Load more', async () => {
    const tenantId = freshTenantId();
    const subjects = Array.from({ length: 12 }, (_, i) => `Ticket ${String(i + 1).padStart(2, '0')}`);
    for (const subject of subjects) await createTicket(tenantId, subject);
    const newestFirst = [...subjects].reverse();
    const { page, context, problems } = await open(tenantId);
    await expect.poll(() => listed(page), { timeout: 30_000 }).toEqual(newestFirst.slice(0, 10));
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => listed(page), { timeout: 30_000 }).toEqual(newestFirst);
    await expect.poll(() => page.getByRole('button', { name: 'Load more' }).count(), { timeout: 30_000 }).toBe(0);
    // Every loaded page stays live: a ticket opened elsewhere joins the top.
    await createTicket(tenantId, 'Ticket 13');
    await expect.poll(() => listed(page), { timeout: 30_000 }).toEqual(['Ticket 13', ...newestFirst]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('finds tickets by words in the subject or description, by status and by priority', async () => {
    const tenantId = freshTenantId();
    await createTicket(tenantId, 'Printer jams', { priority: 'high' });
    await createTicket(tenantId, 'Password reset', { priority: 'low' });
    const waiting = await createTicket(tenantId, 'Invoice is wrong', { priority: 'high' });
    // An agent's reply puts it in the customer's court: pending.
    expect((await post(dev.ready.serverUrl as string, '/commands/addComment', { ticketId: waiting.id, body: 'Which invoice?' }, { 'x-fw-user-id': 'other-agent', 'x-fw-tenant-id': tenantId, 'x-fw-role': 'agent' })).status).toBe(200);
    const { page, context, problems } = await open(tenantId);
    await expect.poll(() => listed(page), { timeout: 30_000 }).toEqual(['Invoice is wrong', 'Password reset', 'Printer jams']);
    const search = page.getByRole('searchbox', { name: 'Search tickets' });
    await search.fill('print');
    await expect.poll(() => listed(page), { timeout: 30_000 }).toEqual(['Printer jams']);
    // The description counts too ("About Password reset.").
    await search.fill('about password');
    await expect.poll(() => listed(page), { timeout: 30_000 }).toEqual(['Password reset']);
    await search.fill('');
    await page.getByRole('combobox', { name: 'Status', exact: true }).selectOption('pending');
    await expect.poll(() => listed(page), { timeout: 30_000 }).toEqual(['Invoice is wrong']);
    await page.getByRole('combobox', { name: 'Status', exact: true }).selectOption('');
    await page.getByRole('combobox', { name: 'Priority', exact: true }).selectOption('high');
    await expect.poll(() => listed(page), { timeout: 30_000 }).toEqual(['Invoice is wrong', 'Printer jams']);
    await search.fill('nothing like this');
    await page.getByText('No tickets match').waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => listed(page), { timeout: 30_000 }).toEqual(['Invoice is wrong', 'Password reset', 'Printer jams']);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('moves the focus to the ticket it opens, from the list and from the form', async () => {
    const tenantId = freshTenantId();
    await createTicket(tenantId, 'Focus me');
    const { page, context, problems } = await open(tenantId);
    await page.getByRole('button', { name: /Focus me/ }).click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.id), { timeout: 30_000 }).toBe('ticket-subject');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Focus me');
    await page.getByRole('button', { name: 'New ticket' }).click();
    await page.getByLabel('Subject').fill('Opened here');
    await page.getByRole('button', { name: 'Open ticket', exact: true }).click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent), { timeout: 30_000 }).toBe('Opened here');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('says a refused subject under the field, in words, and puts the cursor there', async () => {
    const { page, context, problems } = await open(freshTenantId());
    await page.getByRole('button', { name: 'New ticket' }).click();
    // Only spaces: the browser lets it through (required), the command's trimmed min(1) refuses it.
    await page.getByLabel('Subject').fill('   ');
    await page.getByRole('button', { name: 'Open ticket', exact: true }).click();
    const problem = page.locator('#subject-problem');
    await expect.poll(() => problem.textContent().catch(() => null), { timeout: 30_000 }).toBe('Subject can’t be blank.');
    expect(await page.getByLabel('Subject').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Subject').getAttribute('aria-describedby')).toBe('subject-problem');
    expect(await page.locator('.banner').count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-describedby'))).toBe('subject-problem');
    // Being fixed: the words go.
    await page.getByLabel('Subject').fill('A real subject');
    await expect.poll(() => problem.count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('shows the error banner with the fw code and trace id when the server refuses a command', async () => {
    const tenantId = freshTenantId();
    await createTicket(tenantId, 'Needs an owner');
    const { page, context, problems } = await open(tenantId);
    await page.getByRole('button', { name: /Needs an owner/ }).click();
    // The app's dev identity is an agent; only admins may assign (src/policies.ts), so an agent is not offered it.
    await expect.poll(() => page.getByText('Only admins assign tickets.').isVisible(), { timeout: 30_000 }).toBe(true);
    expect(await page.getByLabel('Assign to').count()).toBe(0);
    // As an admin it is offered; the server still decides: here it hears an agent (the role taken away meanwhile) and refuses.
    await page.getByLabel('Role').selectOption('admin');
    await page.route('**/commands/assignTicket', (route) => route.fallback({ headers: { ...route.request().headers(), 'x-fw-role': 'agent' } }));
    await page.getByRole('button', { name: /Needs an owner/ }).click();
    await page.getByLabel('Assign to').fill('robin');
    await page.getByRole('button', { name: 'Assign', exact: true }).click();
    const banner = page.getByRole('alert');
    await expect.poll(() => banner.textContent(), { timeout: 30_000 }).toMatch(/^The ticket was not assignedPolicy "admin" does not allow this caller\.Code forbiddenTrace [0-9a-f]{32}✕$/);
    await page.getByRole('button', { name: 'Dismiss error' }).click();
    await expect.poll(() => banner.count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('the built app’s sign-in card is one column at 390 px (the header’s grid area stays in the header)', async () => {
    // As `fw build` builds it (a production build: vitest's NODE_ENV=test would make it a dev one, with the dev identity switcher).
    const build = await runNode([path.join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', 'web', '--logLevel', 'warn'], { cwd: app.dir, env: { NODE_ENV: 'production' } });
    expect(build.code, build.stdout + build.stderr).toBe(0);
    // The built page served as files: the sign-in page needs no API until it is submitted.
    const dist = path.join(app.dir, 'web/dist');
    const files = createServer((req, res) => {
      const file = path.join(dist, (req.url ?? '/').split('?')[0] === '/' ? 'index.html' : (req.url ?? '/').split('?')[0]!);
      readFile(file).then(
        (body) => res.writeHead(200, { 'content-type': file.endsWith('.js') ? 'text/javascript' : file.endsWith('.css') ? 'text/css' : file.endsWith('.svg') ? 'image/svg+xml' : 'text/html' }).end(body),
        () => res.writeHead(404).end(),
      );
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('response', (response) => response.status() >= 400 && problems.push(`${response.status()} ${response.url()}`));
    try {
      await page.goto(`http://127.0.0.1:${(files.address() as AddressInfo).port}/`);
      await expect.poll(async () => (problems.length ? problems.join('\n') : await page.locator('.sign-in-card').count()), { timeout: 30_000 }).toBe(1);
      const card = page.locator('.sign-in-card');
      await page.getByRole('heading', { name: 'Sign in to the support desk' }).waitFor({ timeout: 30_000 });
      // One column: every part of the card starts at the same left edge and spans its width; nothing is wider than the phone.
      const parts = await card.evaluate((el) => [...el.children].map((child) => { const box = child.getBoundingClientRect(); return { left: box.left, width: box.width }; }));
      const inner = await card.evaluate((el) => el.getBoundingClientRect().left + parseFloat(getComputedStyle(el).paddingLeft));
      expect(parts.map((part) => Math.abs(part.left - inner) <= 1 && part.width >= 280)).toEqual(parts.map(() => true));
      expect(await card.evaluate((el) => getComputedStyle(el).gridTemplateColumns.split(' ').length)).toBe(1);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      const field = await page.getByLabel('Workspace').boundingBox();
      expect(field!.width).toBeGreaterThan(280);
      await page.screenshot({ path: '/tmp/fw-b2b-sign-in-390.png', fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      files.close();
    }
  });
});
