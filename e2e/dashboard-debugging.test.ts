import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, type RunningFw, startFw } from './support/app.ts';
import { axeViolations } from './support/axe.ts';
import { hasChromium, launchChromium } from './support/browser.ts';
import { dashboardAppFiles } from './support/dashboard-app.ts';
import { freshTenantId } from './support/dev-tenant.ts';
import { until } from './support/until.ts';

// The dashboard as a debugger (#44), in Chromium against a real `fw dev` (the built CLI and dashboard:
// run `npm run build` first): it follows the app without losing your place, draws waiting as waiting,
// says in a trace what happened, keeps failures, lets you pick who to act as, and moves time. Screenshots
// go to /tmp/fw-dashboard-debug-*.png (FW_DASHBOARD_SHOTS picks another folder).
const WAIT = 45_000;
const shots = process.env.FW_DASHBOARD_SHOTS ?? '/tmp';

/** minimal-web with the dashboard tests' entries, a policy, refusals of each kind and a workflow that fails until told. */
const files: Record<string, string> = {
  ...dashboardAppFiles,
  'src/policies.ts': `import { definePolicies } from 'fwjs';
export default definePolicies({
  admin: ({ auth }) => auth.role === 'admin',
});
`,
  'src/commands/adminNote.ts': `import { command, z } from 'fwjs';
export default command({
  policy: 'admin',
  args: { title: z.string() },
  handler: async (ctx, args) => ctx.db.insertInto('notes').values({ title: args.title, author_id: ctx.auth.userId! }).returningAll().executeTakeFirstOrThrow(),
});
`,
  'src/commands/conflictNote.ts': `import { command, conflict, z } from 'fwjs';
export default command({
  args: { title: z.string() },
  handler: async (_ctx, args) => {
    throw conflict('The title ' + args.title + ' is taken.');
  },
});
`,
  'src/commands/shoutNote.ts': `import { command, z } from 'fwjs';
export default command({
  args: { title: z.string() },
  handler: async (ctx, args) => {
    console.log('shouting ' + args.title);
    return ctx.db.insertInto('notes').values({ title: args.title, author_id: ctx.auth.userId! }).returningAll().executeTakeFirstOrThrow();
  },
});
`,
  'src/workflows/flaky.ts': `import { workflow, z } from 'fwjs';
export default workflow({
  args: { key: z.string() },
  handler: async (ctx, args) => {
    await ctx.step('check', async () => {
      const note = await ctx.db.selectFrom('notes').select('id').where('title', '=', args.key).executeTakeFirst();
      if (!note) throw new Error('no note ' + args.key + ' yet');
      return note.id;
    });
    return { ok: args.key };
  },
});
`,
  'src/commands/startFlaky.ts': `import { command, z } from 'fwjs';
export default command({
  args: { key: z.string() },
  handler: async (ctx, args) => ctx.startWorkflow('flaky', { key: args.key }),
});
`,
};

interface Summary {
  traceId: string;
  label: string;
  outcome: string;
  code: string | null;
  background: boolean;
  emittedBy: string | null;
  entry: string | null;
}

describe.skipIf(!hasChromium)('the dashboard as a debugger', { timeout: 240_000 }, () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw;
  let browser: Browser;
  let page: Page;
  let dashboardUrl: string;
  let serverUrl: string;
  const tenant = freshTenantId();
  const as = { 'x-fw-user-id': 'dash', 'x-fw-tenant-id': tenant };

  beforeAll(async () => {
    app = await createTestApp('minimal-web', files);
    dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir, timeoutMs: 120_000 });
    serverUrl = String(dev.ready.serverUrl);
    dashboardUrl = String(dev.ready.dashboardUrl);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.addInitScript((id) => localStorage.setItem('fw.dashboard.identity', JSON.stringify({ userId: 'dash', tenantId: id, role: '' })), tenant);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
    await app?.remove();
  });

  const open = (target: Page, hash: string) => target.goto(`${dashboardUrl}#/${hash}`);
  const shoot = (target: Page, name: string) => target.screenshot({ path: `${shots}/fw-dashboard-debug-${name}.png`, fullPage: true });
  const traces = async () => ((await fetch(`${serverUrl}/_fw/dashboard/api/traces`).then((r) => r.json())) as { traces: Summary[] }).traces;
  const traceLink = (target: Page, traceId: string) => target.getByRole('region', { name: 'Recent requests' }).locator(`a[href="#/requests/${traceId}"]`);
  const note = async (title: string) => {
    const created = await post(serverUrl, '/commands/createNote', { title }, as);
    expect(created.status).toBe(200);
    return String(created.body.traceId);
  };

  it('keeps focus, the open trace, an opened span and sideways scroll while requests arrive; Live and Paused', async () => {
    const first = await note('focus one');
    await note('focus two');
    await open(page, 'requests');
    await traceLink(page, first).waitFor({ timeout: WAIT });
    await traceLink(page, first).focus();
    // Requests arrive while the developer's keyboard is on a row: each shows up, and the focus stays.
    for (let i = 0; i < 3; i++) {
      const arrived = await note(`arrived ${i}`);
      await expect.poll(() => traceLink(page, arrived).count(), { timeout: WAIT }).toBe(1);
      expect(await page.evaluate(() => document.activeElement?.getAttribute('href'))).toBe(`#/requests/${first}`);
    }

    // An open trace with an opened span stays open, and its row selected, as the list grows.
    await traceLink(page, first).click();
    const spans = page.getByRole('list', { name: 'Spans' });
    const insert = spans.getByRole('button', { name: /INSERT notes/ });
    await insert.click();
    await expect.poll(() => insert.getAttribute('aria-expanded'), { timeout: WAIT }).toBe('true');
    const later = await note('later');
    await expect.poll(() => traceLink(page, later).count(), { timeout: WAIT }).toBe(1);
    expect(await insert.getAttribute('aria-expanded')).toBe('true');
    expect(await page.locator('tr.selected a').getAttribute('href')).toBe(`#/requests/${first}`);
    expect(await page.getByRole('heading', { name: 'POST /commands/createNote' }).count()).toBe(1);

    // On a phone the list scrolls sideways: where it was scrolled to stays.
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await open(phone, 'requests');
      const wrap = phone.getByRole('region', { name: 'Recent requests' });
      await traceLink(phone, later).waitFor({ timeout: WAIT });
      await wrap.evaluate((el) => (el.scrollLeft = 150));
      const next = await note('scrolled');
      await expect.poll(() => traceLink(phone, next).count(), { timeout: WAIT }).toBe(1);
      expect(await wrap.evaluate((el) => el.scrollLeft)).toBe(150);
    } finally {
      await phone.close();
    }

    // Paused, nothing is asked for; Live again, what came meanwhile shows.
    const toggle = page.getByRole('button', { name: 'Live', exact: true });
    await toggle.click();
    const paused = page.getByRole('button', { name: 'Paused', exact: true });
    expect(await paused.getAttribute('aria-pressed')).toBe('false');
    expect(await page.getByRole('status').last().innerText()).toBe('Paused: updates are held until you press Live.');
    let asked = 0;
    const count = (request: { url(): string }) => void (request.url().includes('/_fw/dashboard/api/traces') && asked++);
    page.on('request', count);
    const meanwhile = await note('meanwhile');
    await until(async () => (await traces()).some((t) => t.traceId === meanwhile), 'the server to keep the trace', { timeoutMs: WAIT });
    expect(await traceLink(page, meanwhile).count()).toBe(0);
    expect(asked).toBe(0);
    page.off('request', count);
    await paused.click();
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    await expect.poll(() => traceLink(page, meanwhile).count(), { timeout: WAIT }).toBe(1);
  });

  it('draws a sleeping or waiting workflow run as waiting, never red; the Outbox opens on the tab that has rows', async () => {
    const started = await post(serverUrl, '/commands/startWaits', { name: `order-${tenant.slice(0, 6)}` }, as);
    expect(started.status).toBe(200);
    const startTrace = String(started.body.traceId);
    const napId = String(started.body.result.nap.runId);
    const deliveries = async () => (await traces()).filter((t) => t.emittedBy === startTrace);
    await until(async () => (await deliveries()).length === 2, 'both runs to be delivered once', { timeoutMs: WAIT });
    expect((await deliveries()).map((t) => [t.entry, t.outcome, t.code]).sort()).toEqual([
      ['awaitApproval', 'waiting', null],
      ['nap', 'waiting', null],
    ]);

    await open(page, `requests/${startTrace}`);
    const setOff = page.getByRole('list', { name: 'What it set off' });
    await expect.poll(() => setOff.locator('li').count(), { timeout: WAIT }).toBe(2);
    expect(await setOff.locator('.badge.bad').count()).toBe(0);
    expect(await setOff.locator('.badge.wait').allInnerTexts()).toEqual(['waiting', 'waiting']);
    // In the list: a neutral "waiting" in the Outcome column, no red anywhere in those rows.
    const nap = (await deliveries()).find((t) => t.entry === 'nap')!;
    const row = page.getByRole('region', { name: 'Recent requests' }).locator('tr', { has: page.locator(`a[href="#/requests/${nap.traceId}"]`) });
    await expect.poll(async () => (await row.locator('td').allInnerTexts()).map((t) => t.trim()).slice(0, 3), { timeout: WAIT }).toEqual(['fw.outbox.deliver fw.workflow:nap', '—', 'waiting']);
    expect(await row.locator('.badge.bad').count()).toBe(0);

    // Its trace: a grey bar, a waiting badge, and a word that says it is no failure.
    await setOff.getByRole('link', { name: 'fw.outbox.deliver fw.workflow:nap' }).click();
    await page.getByTestId('trace-wait').waitFor({ timeout: WAIT });
    const trace = page.getByRole('article', { name: 'fw.outbox.deliver fw.workflow:nap' });
    expect(await trace.locator('.span-bar.error, .badge.bad, [data-testid="trace-error"]').count()).toBe(0);
    expect(await trace.locator('.span-bar.wait').count()).toBeGreaterThan(0);
    expect(await trace.getByRole('button', { name: /^fw\.workflow nap waiting/ }).count()).toBe(1);
    await shoot(page, 'waiting');

    // The Outbox: pending rows and no dead ones, so it opens on Pending; the runs say waiting, neutral.
    const overview = (await fetch(`${serverUrl}/_fw/outbox`).then((r) => r.json())) as { counts: { pending: number; dead: number } };
    expect(overview.counts.dead).toBe(0);
    expect(overview.counts.pending).toBeGreaterThan(0);
    await open(page, 'outbox');
    await expect.poll(() => page.getByRole('group', { name: 'Outbox rows' }).locator('[aria-pressed="true"]').innerText().catch(() => ''), { timeout: WAIT }).toMatch(/^Pending \(\d+\)$/);
    const runRow = page.getByRole('region', { name: 'Workflow runs' }).locator('tr', { has: page.getByRole('link', { name: `Run ${napId.slice(0, 8)} of nap` }) });
    await expect.poll(() => runRow.locator('.badge').first().innerText().catch(() => ''), { timeout: WAIT }).toBe('waiting');
    expect(await runRow.locator('.badge.wait').count()).toBe(1);
  });

  it('says in a trace what happened: the failure and its place, a policy’s roles, spans that open to attributes and SQL, args and result, the log lines', async () => {
    const failed = await post(serverUrl, '/commands/failNote', { title: 'x' }, as);
    expect(failed.status).toBe(500);
    await open(page, `requests/${failed.body.traceId}`);
    const error = page.getByTestId('trace-error');
    const lines = async () => (await error.innerText().catch(() => '')).split(/\n+/);
    await expect.poll(lines, { timeout: WAIT }).toEqual(['internal 500', 'command failNote: the note could not be filed', 'at src/commands/failNote.ts:6:11']);
    await shoot(page, 'trace-error');

    // A refusal by a policy says which roles it lets in, and which the caller had.
    const refused = await post(serverUrl, '/commands/adminNote', { title: 'no' }, as);
    expect(refused.status).toBe(403);
    await open(page, `requests/${refused.body.traceId}`);
    await expect.poll(() => page.getByTestId('policy-hint').innerText().catch(() => ''), { timeout: WAIT }).toBe('Policy admin lets in role admin; the caller had no role.');
    expect(await error.innerText()).toContain('Policy "admin" does not allow this caller.');

    // A command that logs: its statements open to their SQL, its args and result are there, its line too.
    const title = `shout ${tenant.slice(0, 8)}`;
    const shouted = await post(serverUrl, '/commands/shoutNote', { title }, as);
    expect(shouted.status).toBe(200);
    await open(page, `requests/${shouted.body.traceId}`);
    const insert = page.getByRole('list', { name: 'Spans' }).getByRole('button', { name: /INSERT notes/ });
    await insert.click();
    await expect.poll(() => page.getByLabel('SQL of INSERT notes').innerText().catch(() => ''), { timeout: WAIT }).toBe('insert into "notes" ("title", "author_id") values ($1, $2) returning *');
    expect(await page.locator(`#${await insert.getAttribute('aria-controls')}`).innerText()).toContain('db.collection.name\nnotes');
    const entry = page.getByRole('region', { name: 'command shoutNote' });
    expect(JSON.parse(await entry.getByLabel('Args').innerText())).toEqual({ title });
    expect(JSON.parse(await entry.getByLabel('Result').innerText())).toMatchObject({ title, author_id: 'dash', tenant_id: tenant });
    expect(await page.getByRole('log', { name: 'Log lines of this trace' }).innerText()).toContain(`shouting ${title}`);
    await shoot(page, 'trace-sql');

    // Raw SQL (fw's own enqueue here) is named by its statement and what it names, and its text opens too.
    const waits = await post(serverUrl, '/commands/startWaits', { name: `raw-${tenant.slice(0, 6)}` }, as);
    await open(page, `requests/${waits.body.traceId}`);
    const enqueue = page.getByRole('list', { name: 'Spans' }).getByRole('button', { name: /^SELECT _fw\.enqueue/ });
    await enqueue.waitFor({ timeout: WAIT });
    await enqueue.click();
    await expect.poll(() => page.getByLabel('SQL of SELECT _fw.enqueue').innerText().catch(() => ''), { timeout: WAIT }).toMatch(/^select "_fw"\."enqueue"\(\$1, \$2\)$/);
  });

  it('keeps nothing back: background traffic hidden until asked for, outcome filters, failures kept apart from a flood of good requests', async () => {
    // A live stream: kept once it ends, and hidden by default.
    const controller = new AbortController();
    const stream = await fetch(`${serverUrl}/live/liveNotes?args=${encodeURIComponent('{}')}`, { headers: as, signal: controller.signal });
    expect(stream.status).toBe(200);
    controller.abort();
    await until(async () => (await traces()).some((t) => t.background && t.label.startsWith('GET /live')), 'the live stream’s trace', { timeoutMs: WAIT });

    const conflict = await post(serverUrl, '/commands/conflictNote', { title: 'taken' }, as);
    expect(conflict.status).toBe(409);
    const failed = await post(serverUrl, '/commands/failNote', { title: 'y' }, as);
    expect(failed.status).toBe(500);
    // A flood of good requests, more than the buffer holds: the failures stay.
    for (let i = 0; i < 21; i++) await Promise.all(Array.from({ length: 10 }, (_, j) => note(`flood ${i * 10 + j}`)));
    const kept = await traces();
    expect(kept.filter((t) => !t.background && t.outcome !== 'failed').length).toBe(200);
    expect(kept.map((t) => t.traceId)).toEqual(expect.arrayContaining([conflict.body.traceId, failed.body.traceId]));

    await open(page, 'requests');
    const list = page.getByRole('region', { name: 'Recent requests' });
    await expect.poll(() => page.getByTestId('requests-count').innerText(), { timeout: WAIT }).toMatch(/ kept · \d+ background hidden$/);
    expect(await list.innerText()).not.toContain('GET /live/');
    await page.getByLabel('Filter requests').fill('GET /live');
    await page.getByText('No request matches.').waitFor({ timeout: WAIT });
    await page.getByLabel('Live streams, reruns, health').check();
    await expect.poll(() => list.innerText().catch(() => ''), { timeout: WAIT }).toContain('GET /live/liveNotes');
    await page.getByLabel('Live streams, reruns, health').uncheck();
    await page.getByLabel('Filter requests').fill('');

    const outcome = (filter: string) => page.getByRole('group', { name: 'Outcome' }).getByRole('button', { name: filter, exact: true });
    const httpColumn = async () => (await list.locator('tbody tr td:nth-child(2)').allInnerTexts()).map((t) => t.trim());
    await outcome('4xx').click();
    await expect.poll(() => traceLink(page, conflict.body.traceId).count(), { timeout: WAIT }).toBe(1);
    expect(await traceLink(page, failed.body.traceId).count()).toBe(0);
    expect((await httpColumn()).every((status) => /^4\d\d$/.test(status))).toBe(true);
    await outcome('5xx').click();
    await expect.poll(() => traceLink(page, failed.body.traceId).count(), { timeout: WAIT }).toBe(1);
    expect(await traceLink(page, conflict.body.traceId).count()).toBe(0);
    expect((await httpColumn()).every((status) => /^(5\d\d|—)$/.test(status))).toBe(true);
    await outcome('Errors').click();
    await expect.poll(() => traceLink(page, conflict.body.traceId).count(), { timeout: WAIT }).toBe(1);
    expect(await traceLink(page, failed.body.traceId).count()).toBe(1);
    expect(await list.locator('tbody .badge.good').allInnerTexts()).not.toContain('ok');
    await shoot(page, 'errors');
    await outcome('All').click();
  });

  it('Logs: one line per failed execution — what ran, the code, the time it took — linked to its trace', async () => {
    const calls = [
      ['/commands/adminNote', { title: 'a' }, 'POST /commands/adminNote → 403 forbidden', 'Policy "admin" does not allow this caller.'],
      ['/commands/noSuchCommand', {}, 'POST /commands/noSuchCommand → 404 not_found', 'No command named "noSuchCommand".'],
      ['/commands/conflictNote', { title: 'twice' }, 'POST /commands/conflictNote → 409 conflict', 'The title twice is taken.'],
      ['/commands/createNote', { title: '' }, 'POST /commands/createNote → 400 validation_failed', 'Invalid args: args.title: Too small: expected string to have >=1 characters'],
      ['/commands/failNote', { title: 'z' }, 'POST /commands/failNote → 500 internal', 'command failNote: the note could not be filed'],
    ] as const;
    const answered: Array<{ traceId: string; what: string; message: string }> = [];
    for (const [route, args, what, message] of calls) answered.push({ traceId: String((await post(serverUrl, route, args, as)).body.traceId), what, message });
    await open(page, 'logs');
    await page.getByLabel('Level').selectOption('failures');
    const log = page.getByRole('log', { name: 'Log lines' });
    for (const { traceId, what, message } of answered) {
      const line = log.locator('.log-line', { has: page.locator(`a[href="#/requests/${traceId}"]`) });
      await expect.poll(() => line.count(), { timeout: WAIT }).toBe(1);
      const text = await line.locator('.log-text').innerText();
      expect(text.startsWith(`fw: ${what} in `)).toBe(true);
      expect(text).toMatch(/ in \d+ ms: /);
      expect(text.endsWith(`: ${message}`)).toBe(true);
    }
    await shoot(page, 'logs');
  });

  it('controls time (dev): runs a scheduled call now, triggers a cron, skips a sleep, sends the awaited signal, reruns a failed run; shows args, step outputs and results', async () => {
    // A call an hour away, shown with its args, run now.
    const scheduled = await post(serverUrl, '/commands/remindLater', { text: `now ${tenant.slice(0, 6)}` }, as);
    const callId = String(scheduled.body.result.callId);
    await open(page, 'outbox');
    const calls = page.getByRole('region', { name: 'Scheduled calls (pending)' });
    const callRow = calls.locator('tr', { has: page.getByRole('button', { name: `Cancel call sendReminder ${callId.slice(0, 8)}` }) });
    await expect.poll(() => callRow.locator('td').nth(1).innerText().catch(() => ''), { timeout: WAIT }).toBe(`{"text":"now ${tenant.slice(0, 6)}"}`);
    await page.getByRole('button', { name: `Run now: call sendReminder ${callId.slice(0, 8)}` }).click();
    const done = async () => ((await fetch(`${serverUrl}/_fw/schedule?status=delivered&limit=500`).then((r) => r.json())) as { calls: Array<{ id: string; cron: string | null; entry: string }> }).calls;
    await until(async () => (await done()).some((c) => c.id === callId), 'the call to run', { timeoutMs: WAIT });

    // A cron's tick now, its schedule untouched.
    const before = ((await fetch(`${serverUrl}/_fw/schedule`).then((r) => r.json())) as { calls: Array<{ cron: string | null; runAt: string }> }).calls.find((c) => c.cron === 'hourlyDigest')!;
    await page.getByRole('button', { name: 'Trigger now: cron hourlyDigest' }).click();
    await until(async () => (await done()).some((c) => c.cron === 'hourlyDigest' && c.entry === 'sendDigest'), 'the cron’s call to run', { timeoutMs: WAIT });
    const after = ((await fetch(`${serverUrl}/_fw/schedule`).then((r) => r.json())) as { calls: Array<{ cron: string | null; runAt: string }> }).calls.find((c) => c.cron === 'hourlyDigest')!;
    expect(after.runAt).toBe(before.runAt);

    // A sleeping run woken, and a waiting one sent its signal (prefilled from what it matches).
    const started = await post(serverUrl, '/commands/startWaits', { name: `time-${tenant.slice(0, 6)}` }, as);
    const napId = String(started.body.result.nap.runId);
    const waitId = String(started.body.result.approval.runId);
    const runOf = async (id: string) => (await fetch(`${serverUrl}/_fw/dashboard/api/workflows/${id}`).then((r) => r.json())) as { status: string; outputs: Record<string, unknown>; args: unknown; result: unknown };
    await until(async () => (await runOf(napId)).status === 'sleeping' && (await runOf(waitId)).status === 'sleeping', 'both runs to wait', { timeoutMs: WAIT });
    await open(page, `outbox/${napId}`);
    await page.getByRole('button', { name: 'Skip the sleep' }).click();
    await until(async () => (await runOf(napId)).status === 'completed', 'the nap to end', { timeoutMs: WAIT });
    const steps = page.getByRole('region', { name: 'Steps' });
    await expect.poll(async () => (await steps.locator('tbody tr').allInnerTexts().catch(() => [])).length, { timeout: WAIT }).toBe(3);
    expect((await steps.locator('tbody tr td:nth-child(1)').allInnerTexts()).sort()).toEqual(['after-nap', 'nap', 'wake-up']);
    expect(await steps.locator('tr', { hasText: 'wake-up' }).locator('td').nth(1).innerText()).toBe(`"time-${tenant.slice(0, 6)}"`);
    expect(JSON.parse(await page.getByLabel('Run args').innerText())).toEqual({ name: `time-${tenant.slice(0, 6)}` });

    await open(page, `outbox/${waitId}`);
    const payload = page.getByLabel('Payload of order.approved');
    await expect.poll(async () => JSON.parse((await payload.inputValue().catch(() => '')) || 'null'), { timeout: WAIT }).toEqual({ orderId: `time-${tenant.slice(0, 6)}` });
    await payload.fill(JSON.stringify({ orderId: `time-${tenant.slice(0, 6)}`, by: 'dashboard' }));
    await shoot(page, 'signal');
    await page.getByRole('button', { name: 'Send signal' }).click();
    await until(async () => (await runOf(waitId)).status === 'completed', 'the run to get its signal', { timeoutMs: WAIT });
    expect((await runOf(waitId)).outputs.approval).toEqual({ payload: { orderId: `time-${tenant.slice(0, 6)}`, by: 'dashboard' } });

    // A run that failed (its step throws until a note exists; its attempts spent through Retry), run again once fixed.
    const key = `flaky-${tenant.slice(0, 8)}`;
    const flaky = await post(serverUrl, '/commands/startFlaky', { key }, as);
    const flakyId = String(flaky.body.result.runId);
    const startRow = async () => ((await fetch(`${serverUrl}/_fw/dashboard/api/outbox?status=pending&limit=500`).then((r) => r.json())) as { rows: Array<{ id: string; event: string; leased: boolean; attempts: number }> }).rows.find((r) => r.event === 'fw.workflow:flaky');
    await until(
      async () => {
        const run = await runOf(flakyId);
        if (run.status === 'failed') return true;
        const row = await startRow();
        if (row && !row.leased) await fetch(`${serverUrl}/_fw/dashboard/api/outbox/${row.id}/retry`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        return false;
      },
      'the flaky run to fail its 8 attempts',
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    await note(key);
    await open(page, `outbox/${flakyId}`);
    await page.getByRole('button', { name: 'Run again' }).click();
    await until(async () => (await runOf(flakyId)).status === 'completed', 'the rerun to complete', { timeoutMs: WAIT });
    expect((await runOf(flakyId)).result).toEqual({ ok: key });
    await expect.poll(() => page.getByLabel('Run result').innerText().catch(() => ''), { timeout: WAIT }).toBe(JSON.stringify({ ok: key }, null, 2));
    await shoot(page, 'rerun');
  });

  it('the smaller things: no column under a pinned one at 1280, no format regex, one Tab stop per list, and a Data view with a row drawer, sort and clipped cells', async () => {
    // Each list of the Outbox view with a row in it: a call, a workflow run, a dead-lettered row.
    await post(serverUrl, '/commands/remindLater', { text: 'wide' }, as);
    await post(serverUrl, '/commands/startGreet', { name: 'wide' }, as);
    await post(serverUrl, '/commands/emitBad', {}, as);
    await until(async () => ((await fetch(`${serverUrl}/_fw/outbox`).then((r) => r.json())) as { counts: { dead: number } }).counts.dead > 0, 'a dead letter', { timeoutMs: WAIT });
    await open(page, 'outbox');
    await page.getByRole('button', { name: /^Dead-lettered/ }).click();
    await page.getByRole('region', { name: 'Outbox rows (dead)' }).waitFor({ timeout: WAIT });
    await page.getByRole('region', { name: 'Scheduled calls (pending)' }).waitFor({ timeout: WAIT });
    await page.getByRole('region', { name: 'Workflow runs' }).waitFor({ timeout: WAIT });
    const overflowing = await page.locator('.table-wrap').evaluateAll((wraps) => wraps.filter((el) => el.scrollWidth > el.clientWidth).map((el) => `${el.getAttribute('aria-label')}: ${el.scrollWidth} > ${el.clientWidth}`));
    expect(overflowing).toEqual([]);

    await open(page, 'functions/deleteNote');
    const args = page.getByRole('region', { name: 'Args' });
    await expect.poll(() => args.innerText().catch(() => ''), { timeout: WAIT }).toContain('string (uuid)');
    expect(await args.innerText()).not.toContain('matches');
    // The entries are one Tab stop: Tab from the filter lands on the chosen one, the next Tab leaves the list.
    await page.getByLabel('Filter entries').focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-selected'))).toBe('true');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toMatch(/^deleteNote/);
    await page.keyboard.press('ArrowDown');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('option');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).not.toBe('option');

    // Data: a tenant's notes sorted by title, both ways; a long title clipped in its cell, whole in the drawer.
    const mine = freshTenantId();
    const long = `long ${'x'.repeat(190)}`;
    for (const title of ['sort b', 'sort a', 'sort c', long]) expect((await post(serverUrl, '/commands/createNote', { title }, { ...as, 'x-fw-tenant-id': mine })).status).toBe(200);
    await open(page, 'data/notes');
    await page.getByLabel('Tenant', { exact: true }).selectOption(mine);
    const rows = page.getByRole('region', { name: 'Rows of notes' });
    await expect.poll(() => page.getByTestId('row-range').innerText(), { timeout: WAIT }).toBe('1–4 of 4');
    await rows.getByRole('button', { name: 'title' }).click();
    const titles = async () => (await rows.locator('tbody tr td:nth-child(3)').allInnerTexts()).map((t) => t.trim().slice(0, 6));
    await expect.poll(titles, { timeout: WAIT }).toEqual(['long x', 'sort a', 'sort b', 'sort c']);
    expect(await rows.locator('th[aria-sort]').getAttribute('aria-sort')).toBe('ascending');
    await rows.getByRole('button', { name: 'title' }).click();
    await expect.poll(titles, { timeout: WAIT }).toEqual(['sort c', 'sort b', 'sort a', 'long x']);
    const longCell = rows.locator('tbody tr').last().locator('td').nth(2);
    expect((await longCell.boundingBox())!.width).toBeLessThanOrEqual(270);
    const opener = rows.locator('tbody tr').last().getByRole('button', { name: /^Open row / });
    await opener.click();
    const drawer = page.getByRole('dialog', { name: 'Row of notes' });
    await drawer.waitFor({ timeout: WAIT });
    expect(await drawer.innerText()).toContain(long);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('drawer-title');
    await shoot(page, 'drawer');
    await page.keyboard.press('Escape');
    await expect.poll(() => drawer.count(), { timeout: WAIT }).toBe(0);
    expect(await opener.evaluate((el) => el === document.activeElement)).toBe(true);
  });

  it('keeps axe-core at 0 violations across its states, at 1280 and 390, light and dark', async () => {
    const failed = await post(serverUrl, '/commands/failNote', { title: 'axe' }, as);
    const started = await post(serverUrl, '/commands/startWaits', { name: `axe-${tenant.slice(0, 6)}` }, as);
    const waitId = String(started.body.result.approval.runId);
    await until(async () => ((await fetch(`${serverUrl}/_fw/workflows/${waitId}`).then((r) => r.json())) as { status: string }).status === 'sleeping', 'the run to wait', { timeoutMs: WAIT });
    const states: Array<[string, (target: Page) => Promise<unknown>]> = [
      ['functions/createNote', (p) => p.getByRole('heading', { name: 'createNote' }).waitFor({ timeout: WAIT })],
      ['data/notes', (p) => p.getByTestId('row-range').waitFor({ timeout: WAIT })],
      ['live', (p) => p.getByText('Log revision').waitFor({ timeout: WAIT })],
      [`outbox/${waitId}`, (p) => p.getByRole('button', { name: 'Send signal' }).waitFor({ timeout: WAIT })],
      [
        `requests/${failed.body.traceId}`,
        async (p) => {
          await p.getByTestId('trace-error').waitFor({ timeout: WAIT });
          await p.getByRole('list', { name: 'Spans' }).getByRole('button').first().click();
        },
      ],
      ['logs', (p) => p.getByRole('log', { name: 'Log lines' }).locator('.log-line').first().waitFor({ timeout: WAIT })],
      ['ai', (p) => p.getByText('No AI run yet.').waitFor({ timeout: WAIT })],
    ];
    const found: string[] = [];
    for (const [width, height, colorScheme] of [[1280, 800, 'light'], [1280, 800, 'dark'], [390, 844, 'light'], [390, 844, 'dark']] as const) {
      const target = await browser.newPage({ viewport: { width, height }, colorScheme });
      await target.addInitScript((id) => localStorage.setItem('fw.dashboard.identity', JSON.stringify({ userId: 'dash', tenantId: id, role: '' })), tenant);
      try {
        for (const [hash, ready] of states) {
          await open(target, hash);
          await ready(target);
          for (const violation of await axeViolations(target)) found.push(`${hash} at ${width} ${colorScheme}: ${violation}`);
        }
        await open(target, 'data/notes');
        await target.getByTestId('row-range').waitFor({ timeout: WAIT });
        await target.getByRole('button', { name: /^Open row / }).first().click();
        await target.getByRole('dialog', { name: 'Row of notes' }).waitFor({ timeout: WAIT });
        for (const violation of await axeViolations(target)) found.push(`row drawer at ${width} ${colorScheme}: ${violation}`);
        if (width === 390) await shoot(target, `phone-${colorScheme}`);
      } finally {
        await target.close();
      }
    }
    expect(found).toEqual([]);
  });
});

// b2b-support-web's policies and workspaces: the identity is picked, and a refusal says which role would pass.
describe.skipIf(!hasChromium)('the dashboard’s identity in b2b-support-web', { timeout: 240_000 }, () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw;
  let browser: Browser;
  const ACME = '00000000-0000-4000-8000-000000000001';
  const GLOBEX = '00000000-0000-4000-8000-000000000002';

  beforeAll(async () => {
    app = await createTestApp('b2b-support-web');
    dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir, timeoutMs: 120_000 });
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
    await app?.remove();
  });

  it('offers the roles of src/policies.ts and the tenants in the data, says which role a policy needs, runs again as it, and remembers the identity', async () => {
    const serverUrl = String(dev.ready.serverUrl);
    for (const tenantId of [ACME, GLOBEX]) {
      const created = await post(serverUrl, '/commands/createTicket', { subject: `in ${tenantId.slice(-1)}`, body: 'b' }, { 'x-fw-user-id': 'seed', 'x-fw-tenant-id': tenantId, 'x-fw-role': 'agent' });
      expect(created.status).toBe(200);
    }
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      // As a developer who typed a user and kept the blank role the dashboard used to start with.
      await page.addInitScript((id) => localStorage.setItem('fw.dashboard.identity', JSON.stringify({ userId: 'dash', tenantId: id, role: '' })), ACME);
      await page.goto(`${String(dev.ready.dashboardUrl)}#/functions/createTicket`);
      const role = page.getByLabel('Act as role');
      await expect.poll(async () => (await role.locator('option').allInnerTexts()).sort(), { timeout: WAIT }).toEqual(['admin', 'agent', 'none']);
      expect(await role.inputValue()).toBe('');
      const tenants = await page.locator('#identity-tenants option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value).sort());
      expect(tenants).toEqual([ACME, GLOBEX]);

      await page.getByLabel('Args (JSON)').fill(JSON.stringify({ subject: 'from the dashboard', body: 'hi' }));
      await page.getByRole('button', { name: 'Run command' }).click();
      const hint = page.getByTestId('policy-hint');
      await expect.poll(() => hint.innerText().catch(() => ''), { timeout: WAIT }).toBe('Policy agent lets in roles agent, admin; the caller had no role.');
      await page.screenshot({ path: `${shots}/fw-dashboard-debug-forbidden.png`, fullPage: true });
      await page.getByRole('button', { name: 'Run as agent' }).click();
      await expect.poll(() => page.getByTestId('run-result').innerText().catch(() => ''), { timeout: WAIT }).toContain('from the dashboard');
      expect(await role.inputValue()).toBe('agent');
      const recent = page.getByLabel('Recent identities');
      expect(await recent.locator('option').allInnerTexts()).toEqual(['Recent…', 'dash · 00000000… · agent', 'dash · 00000000… · no role']);

      // Another tenant picked from the data, then the last identity back from the recent ones.
      await page.getByLabel('Act as tenant').fill(GLOBEX);
      await page.getByLabel('Act as tenant').blur();
      expect(JSON.parse((await page.evaluate(() => localStorage.getItem('fw.dashboard.identity')))!)).toEqual({ userId: 'dash', tenantId: GLOBEX, role: 'agent' });
      await recent.selectOption({ label: 'dash · 00000000… · agent' });
      expect(JSON.parse((await page.evaluate(() => localStorage.getItem('fw.dashboard.identity')))!)).toEqual({ userId: 'dash', tenantId: ACME, role: 'agent' });
    } finally {
      await page.close();
    }
  });
});
