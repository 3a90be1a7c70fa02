import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliPath, createTestApp, post, type RunningFw, startFw } from './support/app.ts';
import { hasChromium, launchChromium } from './support/browser.ts';
import { dashboardAppFiles } from './support/dashboard-app.ts';
import { freshTenantId } from './support/dev-tenant.ts';
import { until } from './support/until.ts';

// Each view of the dashboard in Chromium, served by a real `fw dev` (the built CLI: run `npm run build`
// first), with assertions on what it shows. Screenshots go to /tmp/fw-dashboard-*.png for a look
// (FW_DASHBOARD_SHOTS picks another folder).
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
    // Tool calls' inputs and outputs are kept in AI traces only when the app opts in: the AI view shows them.
    dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir, timeoutMs: 120_000, env: { FW_AI_RECORD_CONTENT: '1' } });
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
  const logged = async (text: string) => ((await fetch(`${serverUrl}/_fw/dashboard/api/logs`).then((r) => r.json())) as { lines: Array<{ text: string }> }).lines.some((l) => l.text.includes(text));
  const acceptDialogs = () => page.once('dialog', (dialog) => void dialog.accept());

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
    await page.getByRole('button', { name: /^Dead-lettered/ }).click();
    const dead = page.getByRole('region', { name: 'Outbox rows (dead)' });
    await expect.poll(() => dead.innerText().catch(() => ''), { timeout: WAIT }).toContain('note.bad');
    expect(await dead.innerText()).toContain('validation_failed');
    const id = (await dead.locator('tbody tr td').first().innerText()).trim();

    const deadRow = async () => ((await fetch(`${serverUrl}/_fw/dashboard/api/outbox?status=dead`).then((r) => r.json())) as { rows: Array<{ id: string; deadAt: string }> }).rows.find((r) => r.id === id);
    const firstDeath = (await deadRow())!.deadAt;
    const notice = page.getByRole('article', { name: 'Outbox', exact: true }).getByRole('status');
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

  it('Outbox: a scheduled call with its time, attempts, caller and state, cancelled through fw and logged; the crons with their next run', async () => {
    const scheduled = await post(serverUrl, '/commands/remindLater', { text: 'call back' }, as);
    expect(scheduled.status).toBe(200);
    const callId = String(scheduled.body.result.callId);
    const short = callId.slice(0, 8);
    const call = ((await fetch(`${serverUrl}/_fw/schedule`).then((r) => r.json())) as { calls: Array<{ id: string; runAt: string; traceId: string }> }).calls.find((c) => c.id === callId)!;
    await open('outbox');
    const calls = page.getByRole('region', { name: 'Scheduled calls (pending)' });
    const cancel = page.getByRole('button', { name: `Cancel call sendReminder ${short}` });
    const row = calls.locator('tbody tr').filter({ has: cancel });
    await expect.poll(() => row.innerText().catch(() => ''), { timeout: WAIT }).toContain('sendReminder');
    // Due in an hour, by the call's own time (hover: the ISO time), not run yet, as the caller who scheduled it.
    expect(await row.locator('.time').getAttribute('title')).toBe(call.runAt);
    const cells = async () => (await row.locator('td').allInnerTexts()).map((text) => text.trim());
    const [name, args, runsAt, caller, state, trace, action] = await cells();
    expect(name).toBe('sendReminder');
    expect(runsAt).toMatch(/^in (59|60) min\n\S/);
    expect([args, caller, state, trace, action]).toEqual(['{"text":"call back"}', `dash · tenant ${tenant.slice(0, 8)}…`, 'pending', call.traceId.slice(0, 8), 'Run now\nCancel']);

    // The cron's next tick waits in the same list, as the system; the crons show their next run.
    const hour = () => new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000).toISOString();
    const crons = page.getByRole('region', { name: 'Crons' });
    await expect.poll(async () => (await crons.locator('tbody tr').first().locator('td').allInnerTexts().catch(() => [])).slice(0, 4), { timeout: WAIT }).toEqual(['hourlyDigest', 'every 1h', 'sendDigest', 'none']);
    await expect.poll(async () => (await crons.locator('.time').getAttribute('title')) === hour(), { timeout: WAIT }).toBe(true);
    // (Within a minute of the hour it says seconds.)
    const soon = /^(now|in \d{1,2} (s|min))\n\S/;
    expect(await crons.locator('tbody tr td').nth(4).innerText()).toMatch(soon);
    const tick = calls.locator('tbody tr').filter({ hasText: 'cron hourlyDigest' });
    await expect.poll(async () => (await tick.locator('td').allInnerTexts().catch(() => [])).map((t) => t.trim()), { timeout: WAIT }).toEqual([
      'sendDigest cron hourlyDigest',
      '{}',
      expect.stringMatching(soon),
      'system',
      'pending',
      '—',
      'src/crons.ts',
    ]);
    await shoot('schedules');

    acceptDialogs();
    await cancel.click();
    const notice = page.getByRole('article', { name: 'Scheduled calls' }).getByRole('status');
    await expect.poll(() => notice.innerText(), { timeout: WAIT }).toBe(`Cancelled the call of sendReminder (${short}).`);
    await expect.poll(() => cancel.count(), { timeout: WAIT }).toBe(0);
    // Through fw's own cancel (what fw schedule cancel does), and logged.
    const cancelled = ((await fetch(`${serverUrl}/_fw/schedule?status=cancelled`).then((r) => r.json())) as { calls: Array<{ id: string; status: string }> }).calls.find((c) => c.id === callId);
    expect(cancelled?.status).toBe('cancelled');
    await expect.poll(() => logged(`fw dashboard: cancelled scheduled call ${callId} [trace `), { timeout: WAIT }).toBe(true);
    await page.getByRole('button', { name: 'Cancelled', exact: true }).click();
    const gone = page.getByRole('region', { name: 'Scheduled calls (cancelled)' }).locator('tbody tr').filter({ has: page.getByRole('link', { name: call.traceId.slice(0, 8) }) });
    await expect.poll(async () => (await gone.locator('td').allInnerTexts().catch(() => [])).map((t) => t.trim()), { timeout: WAIT }).toEqual([
      'sendReminder',
      '{"text":"call back"}',
      expect.stringMatching(/^in (59|60) min\n\S/),
      `dash · tenant ${tenant.slice(0, 8)}…`,
      'cancelled',
      call.traceId.slice(0, 8),
      '—',
    ]);
  });

  it('Outbox: a full list pages ("Show more"), a page of 50 at a time', async () => {
    // 51 calls a month away (after every other test's, soonest first): the first page is full.
    for (let i = 0; i < 51; i++) expect((await post(serverUrl, '/commands/remindInDays', { text: `paged ${i}`, days: 30 }, as)).status).toBe(200);
    await open('outbox');
    await page.getByRole('button', { name: 'Waiting', exact: true }).click();
    const calls = page.getByRole('region', { name: 'Scheduled calls (pending)' }).locator('tbody tr');
    const more = page.getByRole('button', { name: 'Show more scheduled calls' });
    await more.waitFor({ timeout: WAIT });
    expect(await calls.count()).toBe(50);
    expect(await more.locator('xpath=..').innerText()).toContain('50 shown');
    await more.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${shots}/fw-dashboard-show-more.png` });
    await more.click();
    // The next page holds the rest: every pending call, and no pager under a list that is not full.
    const pending = ((await fetch(`${serverUrl}/_fw/schedule?limit=1000`).then((r) => r.json())) as { calls: unknown[] }).calls.length;
    expect(pending).toBeGreaterThan(50);
    expect(pending).toBeLessThan(100);
    await expect.poll(() => calls.count(), { timeout: WAIT }).toBe(pending);
    expect(await more.count()).toBe(0);
    // Cleaned up for the other tests: cancelled as fw schedule cancel does.
    const mine = ((await fetch(`${serverUrl}/_fw/schedule?limit=1000`).then((r) => r.json())) as { calls: Array<{ id: string; runAt: string }> }).calls.filter((c) => Date.parse(c.runAt) > Date.now() + 20 * 86_400_000);
    expect(mine).toHaveLength(51);
    for (const call of mine) expect((await post(serverUrl, `/_fw/schedule/${call.id}/cancel`, {}, {})).status).toBe(200);
  });

  it('Outbox: what a workflow run waits for — a sleep until a time, a signal with its timeout — and cancelling a sleeping run', async () => {
    const started = await post(serverUrl, '/commands/startWaits', { name: `order-${tenant.slice(0, 6)}` }, as);
    expect(started.status).toBe(200);
    const napId = String(started.body.result.nap.runId);
    const waitId = String(started.body.result.approval.runId);
    const runOf = async (id: string) => (await fetch(`${serverUrl}/_fw/workflows/${id}`).then((r) => r.json())) as { status: string; waitingFor: { until: string } | null };
    await until(async () => (await runOf(napId)).status === 'sleeping' && (await runOf(waitId)).status === 'sleeping', 'both runs to wait', { timeoutMs: WAIT });
    await open('outbox');
    const runs = page.getByRole('region', { name: 'Workflow runs' });
    const cellsOf = async (id: string, workflow: string) =>
      (await runs.locator('tbody tr').filter({ has: page.getByRole('link', { name: `Run ${id.slice(0, 8)} of ${workflow}` }) }).locator('td').allInnerTexts().catch(() => [])).map((t) => t.trim()).slice(0, 5);
    // A sleeping run is waiting, not failing: a neutral badge that says so.
    await expect.poll(() => cellsOf(napId, 'nap'), { timeout: WAIT }).toEqual([napId.slice(0, 8), 'nap', 'waiting', expect.stringMatching(/^sleep · in (59|60) min$/), '1']);
    expect(await cellsOf(waitId, 'awaitApproval')).toEqual([waitId.slice(0, 8), 'awaitApproval', 'waiting', 'signal order.approved · times out in 2 d', '1']);

    await page.getByRole('link', { name: `Run ${napId.slice(0, 8)} of nap` }).click();
    const until_ = (await runOf(napId)).waitingFor!.until;
    const local = await page.evaluate((iso) => new Date(iso).toLocaleString(), until_);
    const wait = page.getByTestId('run-wait');
    await expect.poll(() => wait.innerText().catch(() => ''), { timeout: WAIT }).toMatch(new RegExp(`^Sleeping in step nap until ${local.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(in (59|60) min\\)\\.$`));
    expect(await page.getByRole('region', { name: 'Steps' }).innerText()).toContain('wake-up');
    await shoot('workflow-wait');

    acceptDialogs();
    await page.getByRole('button', { name: 'Cancel run' }).click();
    const notice = page.getByRole('article', { name: 'Workflow runs' }).getByRole('status');
    await expect.poll(() => notice.innerText(), { timeout: WAIT }).toBe(`Cancelled run ${napId.slice(0, 8)} of nap.`);
    expect((await runOf(napId)).status).toBe('cancelled');
    await expect.poll(() => page.getByRole('button', { name: 'Cancel run' }).isDisabled(), { timeout: WAIT }).toBe(true);
    expect(await wait.count()).toBe(0);
    await expect.poll(() => cellsOf(napId, 'nap'), { timeout: WAIT }).toEqual([napId.slice(0, 8), 'nap', 'cancelled', '—', '1']);
    await expect.poll(() => logged(`fw dashboard: cancelled workflow run nap ${napId} [trace `), { timeout: WAIT }).toBe(true);
    // The other run still waits; it is this test's own and is cancelled too.
    expect((await fetch(`${serverUrl}/_fw/dashboard/api/workflows/${waitId}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(200);
  });

  it('Requests: the last requests with status, entry and duration, and a waterfall of their spans', async () => {
    const created = await post(serverUrl, '/commands/createNote', { title: 'traced' }, as);
    const traceId = String(created.body.traceId);
    await open('requests');
    const list = page.getByRole('region', { name: 'Recent requests' });
    await expect.poll(() => list.innerText().catch(() => ''), { timeout: WAIT }).toContain('POST /commands/createNote');
    // 25 at a time (the Data test made more): Show more adds the next ones until all are shown.
    expect(await list.locator('tbody tr').count()).toBe(25);
    expect(await page.getByTestId('requests-shown').innerText()).toMatch(/^25 of \d+$/);
    while ((await page.getByRole('button', { name: 'Show more' }).count()) > 0) await page.getByRole('button', { name: 'Show more' }).click();
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

  it('AI runs: an agent run’s messages, tool calls with input and output, approvals pending, used and refused, and its tokens', async () => {
    const who = { 'x-fw-user-id': 'agent-user', 'x-fw-tenant-id': freshTenantId() };
    const runAgent = async (body: unknown) => {
      const res = await fetch(`${serverUrl}/ai/agents/run`, { method: 'POST', headers: { 'content-type': 'application/json', ...who }, body: JSON.stringify(body) });
      expect(res.status).toBe(200);
      return (await res.json()) as { traceId: string; result: { status: string; messages: unknown[]; pendingApprovals: Array<{ approvalId: string; toolCallId: string }> } };
    };
    const prompt = 'call listNotes and createNote {"title":"from the agent"}';
    const asked = await runAgent({ agent: 'assistant', prompt, maxSteps: 3 });
    expect(asked.result.status).toBe('awaiting-approval');
    const [approval] = asked.result.pendingApprovals;
    const [recorded] = ((await fetch(`${serverUrl}/_fw/ai/traces/${asked.traceId}`).then((r) => r.json())) as { runs: Array<{ inputTokens: number; outputTokens: number }> }).runs;

    await open(`ai/${asked.traceId}`);
    const card = page.getByRole('article', { name: 'AI trace' });
    const rows = async (name: string) => Promise.all((await card.getByRole('region', { name }).locator('tbody tr').all()).map(async (tr) => (await tr.locator('td').allInnerTexts()).map((t) => t.trim())));
    await expect.poll(() => rows('Tool calls').catch(() => []), { timeout: WAIT }).toEqual([
      ['0', 'listNotes', '{}', '[]', 'ok', expect.stringMatching(/^\d+(\.\d+)? ms$/)],
      ['0', 'createNote', '{"title":"from the agent"}', '—', 'awaiting approval', '—'],
    ]);
    expect(await card.getByRole('list', { name: 'Messages' }).locator('li').allInnerTexts()).toEqual([`User\n${prompt}`, 'Assistant\n(no text: awaiting approval)']);
    expect(await card.getByTestId('ai-tokens').innerText()).toBe(`${recorded!.inputTokens} in · ${recorded!.outputTokens} out · ${recorded!.inputTokens + recorded!.outputTokens} total`);
    const approvals = await rows('Approvals');
    expect(approvals.map((r) => r.slice(0, 3))).toEqual([['createNote', approval!.toolCallId, 'pending']]);
    expect(approvals[0]![4]).toMatch(/^expires \S/);

    // Approved by a later request: the open trace follows the ledger, and links to the request that decided.
    const approved = await runAgent({ agent: 'assistant', messages: asked.result.messages, approvals: [{ approvalId: approval!.approvalId, approved: true }] });
    await expect.poll(async () => (await rows('Approvals'))[0]?.[2], { timeout: WAIT }).toBe('used');
    await shoot('ai');
    await card.getByRole('region', { name: 'Approvals' }).getByRole('link').click();
    await expect.poll(() => page.getByRole('article', { name: 'AI trace' }).locator('code.muted').first().innerText().catch(() => ''), { timeout: WAIT }).toBe(approved.traceId);
    await expect.poll(async () => (await rows('Tool calls').catch(() => []))[0]?.slice(0, 3), { timeout: WAIT }).toEqual(['approved', 'createNote', '{"title":"from the agent"}']);
    const [, , , output, outcome] = (await rows('Tool calls'))[0]!;
    expect(JSON.parse(output!)).toMatchObject({ title: 'from the agent', tenant_id: who['x-fw-tenant-id'] });
    expect(outcome).toBe('ok');

    // Refused: the approval says so, and the tool never ran.
    const again = await runAgent({ agent: 'assistant', prompt: 'call createNote {"title":"not this one"}', maxSteps: 3 });
    await runAgent({ agent: 'assistant', messages: again.result.messages, approvals: [{ approvalId: again.result.pendingApprovals[0]!.approvalId, approved: false }] });
    await open(`ai/${again.traceId}`);
    await expect.poll(async () => (await rows('Approvals').catch(() => []))[0]?.slice(0, 3), { timeout: WAIT }).toEqual(['createNote', again.result.pendingApprovals[0]!.toolCallId, 'refused']);
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

// `fw dev --open` opens the dashboard as it starts, and `d` + enter on its terminal opens it again: through
// BROWSER (the convention Vite follows), here a script that writes down the URL it is given instead of a
// browser. A real terminal: util-linux's `script` gives fw dev a pseudo-terminal, and what the test
// writes to it is typed there (Ctrl-C included).
describe('fw dev --open and the d key', () => {
  it('opens the dashboard at start and when d + enter is typed, and prints the key with the address', async () => {
    const app = await createTestApp('minimal-web');
    const opened = path.join(app.dir, 'opened.txt');
    const recorder = path.join(app.dir, 'record-browser.js');
    await writeFile(recorder, `import('node:fs').then((fs) => fs.appendFileSync(${JSON.stringify(opened)}, process.argv[2] + '\\n'));\n`);
    // `exec`: fw dev is the terminal's process, not a child of script's shell ($SHELL, or sh when unset,
    // which would end on the Ctrl-C itself, by the signal, whatever fw dev answered to it).
    const command = `exec ${[process.execPath, cliPath, 'dev', '--api-only', '--port', '0', '--open', '--no-typecheck'].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ')}`;
    // A developer's terminal: not CI (under CI=true, as CI machines set it, fw dev leaves stdin alone and binds no key).
    const { CI: _ci, ...terminal } = process.env;
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: app.dir, env: { ...terminal, NO_COLOR: '1', FW_AI: 'mock', BROWSER: recorder }, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    child.stdout.on('data', (chunk: Buffer) => (screen += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (screen += chunk.toString()));
    let exitCode: number | null | undefined;
    child.once('exit', (code) => (exitCode = code));
    const read = () => readFile(opened, 'utf8').catch(() => '');
    try {
      // Fails as soon as fw dev ends early, and either way with what it printed.
      const url = await until(
        async () => {
          if (exitCode !== undefined) throw new Error(`fw dev ended (exit code ${exitCode}) before its dashboard line`);
          return /fw dev: dashboard on (http:\/\/127\.0\.0\.1:\d+\/_fw\/dashboard\/) \(press d \+ enter to open it\)/.exec(screen)?.[1];
        },
        'the dashboard line',
        { timeoutMs: 120_000 },
      ).catch((error: Error) => {
        throw new Error(`${error.message}; fw dev printed:\n${screen}`);
      });
      await until(async () => (await read()) === `${url}\n`, 'the dashboard opened at start', { timeoutMs: WAIT });
      child.stdin.write('d\n');
      await until(async () => (await read()) === `${url}\n${url}\n`, 'the dashboard opened by the key', { timeoutMs: WAIT });
      child.stdin.write('\u0003');
      await until(async () => exitCode !== undefined, 'fw dev to stop on Ctrl-C', { timeoutMs: WAIT });
      expect(exitCode).toBe(0);
      expect(await read()).toBe(`${url}\n${url}\n`);
    } finally {
      child.kill();
      await app.remove();
    }
  }, 240_000);
});

