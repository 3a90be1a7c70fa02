import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../testing/index.ts';
import { openEventStream } from './support/live-server.ts';
import { createTestApp, post, repoRoot, runFw, runNode, type RunningFw, startFw } from './support/app.ts';
import { until } from './support/until.ts';

const ACME = '00000000-0000-4000-8000-000000000001';
const GLOBEX = '00000000-0000-4000-8000-000000000002';
const MISSING = '00000000-0000-4000-8000-00000000dead';
const as = (role: string, tenant = ACME, user = `${role}-1`) => ({ 'x-fw-user-id': user, 'x-fw-tenant-id': tenant, 'x-fw-role': role });
const acmeAgent = as('agent');
const acmeAdmin = as('admin');
const acmeViewer = as('viewer');
const globexAgent = as('agent', GLOBEX, 'globex-agent');
const firstPage = (view: 'active' | 'closed', numItems = 50) => ({ view, page: { cursor: null, numItems } });

// One app for the file, inside the checkout so its web dependencies (React, Vite) resolve from the
// checkout's node_modules: static checks first, then one `fw dev --api-only` for the HTTP behaviour.
describe('the b2b-support-web template', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  beforeAll(async () => {
    app = await createTestApp('b2b-support-web', {}, { insideRepo: true });
  });
  afterAll(() => app?.remove());

  it('ships generated files that match this fw, passes fw check, the red team, and lists its triage agent and crons', async () => {
    const [generated, check, redteam, agents, crons] = await Promise.all([
      runFw(['generate', '--check', '--json'], { cwd: app.dir }),
      runFw(['check', '--json'], { cwd: app.dir }),
      runFw(['ai', 'redteam', '--json'], { cwd: app.dir }),
      runFw(['ai', 'agents', '--json'], { cwd: app.dir, env: { FW_AI: 'mock' } }),
      runFw(['inspect', 'crons', '--json'], { cwd: app.dir }),
    ]);
    expect(generated.code, `${generated.stdout}\nRegenerate templates/b2b-support-web/src/fw/_generated with \`fw generate\`.`).toBe(0);
    expect(new Set(JSON.parse(generated.stdout).files.map((f: { status: string }) => f.status))).toEqual(new Set(['unchanged']));

    expect(check.code, check.stdout + check.stderr).toBe(0);
    const report = JSON.parse(check.stdout);
    expect(report.ok).toBe(true);
    expect(report.diagnostics.filter((d: { severity: string }) => d.severity === 'error')).toEqual([]);

    expect(redteam.code, redteam.stdout + redteam.stderr).toBe(0);
    expect(JSON.parse(redteam.stdout)).toMatchObject({ ok: true, findings: [], summary: { fail: 0 } });

    expect(agents.code, agents.stderr).toBe(0);
    expect(JSON.parse(agents.stdout).agents).toEqual([
      expect.objectContaining({ name: 'triage', model: 'openai/gpt-4o-mini', maxSteps: 4, maxStepsDeclared: true, tools: ['assignTicket', 'listTickets'] }),
    ]);

    expect(crons.code, crons.stderr).toBe(0);
    expect(JSON.parse(crons.stdout).crons).toEqual([
      expect.objectContaining({ name: 'nightlyDigest', call: 'recordDigest', schedule: '0 2 * * * (UTC)', tenant: null, forEachTenant: 'allWorkspaces' }),
    ]);
  });

  it('typechecks (backend and web) and builds the web app with no edits', async () => {
    const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');
    const results = await Promise.all(['tsconfig.json', 'web/tsconfig.json'].map((project) => runNode([tsc, '-p', project, '--noEmit'], { cwd: app.dir })));
    for (const result of results) {
      expect(result.stdout + result.stderr).toBe('');
      expect(result.code).toBe(0);
    }
    const build = await runNode([path.join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', 'web', '--logLevel', 'warn'], { cwd: app.dir });
    expect(build.code, build.stdout + build.stderr).toBe(0);
    expect(existsSync(path.join(app.dir, 'web/dist/index.html'))).toBe(true);
  }, 120_000);

  it('passes its own tests (tests/tickets.test.ts through fw/testing) with fw test, and fw verify --standard runs them', { timeout: 300_000 }, async () => {
    const tested = await runFw(['test', '--json'], { cwd: app.dir });
    expect(tested.code, tested.stderr).toBe(0);
    const printed = JSON.parse(tested.stdout);
    expect(printed).toMatchObject({ ok: true, exitCode: 0, run: { reason: 'passed', totals: { files: 1, tests: 15, passed: 15, failed: 0 }, failures: [] } });
    // Nothing failed, so repair has nothing to explain.
    const diagnosis = await runFw(['repair', 'diagnose', '--from-last-test-run', '--json'], { cwd: app.dir });
    expect(diagnosis.code, diagnosis.stdout + diagnosis.stderr).toBe(0);
    expect(JSON.parse(diagnosis.stdout)).toMatchObject({ ok: true, failures: [] });

    const verified = await runFw(['verify', '--standard', '--json'], { cwd: app.dir });
    const report = JSON.parse(verified.stdout);
    expect(verified.code, verified.stdout).toBe(0);
    expect(Object.fromEntries(report.gates.map((g: { name: string; status: string }) => [g.name, g.status]))).toEqual({ generated: 'passed', check: 'passed', typecheck: 'passed', boot: 'passed', tests: 'passed' });
    expect(report.gates.find((g: { name: string }) => g.name === 'tests').diagnostics).toEqual([
      expect.objectContaining({ code: 'test_totals', message: '15 passed, 0 failed, 0 skipped in 1 file(s).' }),
    ]);
  });

  describe('over HTTP (fw dev --api-only)', () => {
    let dev: RunningFw;
    let url: string;
    beforeAll(async () => {
      dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir });
      url = dev.ready.serverUrl as string;
    });
    afterAll(() => dev?.stop());

    const createTicket = (subject: string, headers = acmeAgent) => post(url, '/commands/createTicket', { subject, body: `About ${subject}.` }, headers);

    it('an agent opens a ticket; listTickets and the liveTickets first page return it, newest first', async () => {
      const created = await createTicket('Printer on fire');
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      expect(created.body.result).toMatchObject({ subject: 'Printer on fire', status: 'open', priority: 'normal', assignee: null, created_by: 'agent-1', tenant_id: ACME });
      const urgent = await post(url, '/commands/createTicket', { subject: 'Site down', body: '', priority: 'urgent' }, acmeAgent);
      expect(urgent.body.result).toMatchObject({ priority: 'urgent' });

      const listed = await post(url, '/queries/listTickets', {}, acmeAgent);
      expect(listed.status).toBe(200);
      expect(listed.body.result.map((t: { subject: string }) => t.subject).slice(0, 2)).toEqual(['Site down', 'Printer on fire']);
      const open = await post(url, '/queries/listTickets', { status: 'open' }, acmeAgent);
      expect(open.body.result.map((t: { id: string }) => t.id)).toContain(created.body.result.id);
      const live = await post(url, '/queries/liveTickets', firstPage('active'), acmeAgent);
      expect(live.status).toBe(200);
      expect(live.body.result.page.map((t: { id: string }) => t.id)).toContain(created.body.result.id);
    });

    it('validates args', async () => {
      const empty = await post(url, '/commands/createTicket', { subject: '  ', body: '' }, acmeAgent);
      expect(empty.status).toBe(400);
      expect(empty.body.error.diagnostics[0]).toMatchObject({ path: 'args.subject' });
      const badPriority = await post(url, '/commands/createTicket', { subject: 'x', body: '', priority: 'asap' }, acmeAgent);
      expect(badPriority.status).toBe(400);
      const badStatus = await post(url, '/queries/listTickets', { status: 'archived' }, acmeAgent);
      expect(badStatus.status).toBe(400);
    });

    it('isolates tenants: another tenant’s agent sees none of the tickets and cannot act on them', async () => {
      const ticket = (await createTicket('Acme only')).body.result;
      const listed = await post(url, '/queries/listTickets', {}, globexAgent);
      expect(listed.status).toBe(200);
      expect(listed.body.result).toEqual([]);
      expect((await post(url, '/queries/liveTickets', firstPage('active'), globexAgent)).body.result).toMatchObject({ page: [], isDone: true });
      expect((await post(url, '/queries/liveTicket', { ticketId: ticket.id }, globexAgent)).body.result).toEqual({ ticket: null, comments: [] });
      const close = await post(url, '/commands/closeTicket', { ticketId: ticket.id }, globexAgent);
      expect(close.status).toBe(404);
      expect(close.body.error.code).toBe('not_found');
      const comment = await post(url, '/commands/addComment', { ticketId: ticket.id, body: 'Not yours.' }, globexAgent);
      expect(comment.status).toBe(404);
      const assign = await post(url, '/commands/assignTicket', { ticketId: ticket.id, assignee: 'mallory' }, as('admin', GLOBEX));
      expect(assign.status).toBe(404);
      // Untouched in its own tenant.
      const own = (await post(url, '/queries/listTickets', {}, acmeAgent)).body.result.find((t: { id: string }) => t.id === ticket.id);
      expect(own).toMatchObject({ status: 'open', assignee: null });
    });

    it('enforces the role policies', async () => {
      const ticket = (await createTicket('Needs an owner')).body.result;
      for (const [route, args] of [['/commands/createTicket', { subject: 'x', body: '' }], ['/queries/listTickets', {}], ['/queries/liveTickets', firstPage('active')]] as const) {
        const viewer = await post(url, route, args, acmeViewer);
        expect(viewer.status, route).toBe(403);
        expect(viewer.body.error.code, route).toBe('forbidden');
      }
      const byAgent = await post(url, '/commands/assignTicket', { ticketId: ticket.id, assignee: 'sam' }, acmeAgent);
      expect(byAgent.status).toBe(403);
      const byAdmin = await post(url, '/commands/assignTicket', { ticketId: ticket.id, assignee: 'sam' }, acmeAdmin);
      expect(byAdmin.status, JSON.stringify(byAdmin.body)).toBe(200);
      expect(byAdmin.body.result).toMatchObject({ id: ticket.id, assignee: 'sam' });
      expect(new Date(byAdmin.body.result.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(ticket.updated_at).getTime());
      expect((await post(url, '/commands/assignTicket', { ticketId: MISSING, assignee: 'sam' }, acmeAdmin)).status).toBe(404);
    });

    it('closes a ticket once (409 the second time), comments only on tickets that exist', async () => {
      const ticket = (await createTicket('Close me')).body.result;
      const comment = await post(url, '/commands/addComment', { ticketId: ticket.id, body: 'Looking into it.' }, acmeAgent);
      expect(comment.status).toBe(200);
      expect(comment.body.result).toMatchObject({ ticket_id: ticket.id, body: 'Looking into it.', author: 'agent-1', tenant_id: ACME });

      const closed = await post(url, '/commands/closeTicket', { ticketId: ticket.id }, acmeAgent);
      expect(closed.status).toBe(200);
      expect(closed.body.result).toMatchObject({ id: ticket.id, status: 'closed' });
      const again = await post(url, '/commands/closeTicket', { ticketId: ticket.id }, acmeAgent);
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('conflict');
      expect((await post(url, '/commands/closeTicket', { ticketId: MISSING }, acmeAgent)).status).toBe(404);

      const live = (await post(url, '/queries/liveTickets', firstPage('active'), acmeAgent)).body.result.page.map((t: { id: string }) => t.id);
      expect(live).not.toContain(ticket.id);
      const closedPage = (await post(url, '/queries/liveTickets', firstPage('closed'), acmeAgent)).body.result.page.map((t: { id: string }) => t.id);
      expect(closedPage).toEqual([ticket.id]);
      const closedList = (await post(url, '/queries/listTickets', { status: 'closed' }, acmeAgent)).body.result.map((t: { id: string }) => t.id);
      expect(closedList).toEqual([ticket.id]);

      const missing = await post(url, '/commands/addComment', { ticketId: MISSING, body: 'Hello?' }, acmeAgent);
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('not_found');
    });

    it('pushes a liveTickets snapshot over SSE after createTicket', async () => {
      const stream = await openEventStream(`${url}/live/liveTickets?args=${encodeURIComponent(JSON.stringify(firstPage('active', 5)))}`, { headers: acmeAgent });
      try {
        expect(stream.status).toBe(200);
        const first = await stream.next();
        expect(first.event).toBe('snapshot');
        const created = await createTicket('Pushed live');
        const update = await stream.nextWhere((e) => e.event === 'snapshot' && e.json.result.page.some((t: { id: string }) => t.id === created.body.result.id));
        expect(update.json.result.page[0]).toMatchObject({ subject: 'Pushed live', status: 'open' });
        // A later revision (tokens are opaque per tenant: only their difference is visible).
        expect(update.json.revision).not.toBe(first.json.revision);
      } finally {
        stream.close();
      }
    });

    it('runs the triage agent as the caller: assignTicket waits for approval, and only admins are offered it', async () => {
      const ticket = (await createTicket('Triage me')).body.result;
      const run = async (headers: Record<string, string>, prompt: string) => {
        const response = await fetch(`${url}/ai/agents/run`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ agent: 'triage', prompt }) });
        return { status: response.status, body: (await response.json()) as any };
      };
      const prompt = `call assignTicket {"ticketId":"${ticket.id}","assignee":"robin"}`;
      const byAdmin = await run(acmeAdmin, prompt);
      expect(byAdmin.status, JSON.stringify(byAdmin.body)).toBe(200);
      expect(byAdmin.body.result).toMatchObject({ status: 'awaiting-approval', pendingApprovals: [expect.objectContaining({ toolName: 'assignTicket' })] });
      const byAgent = await run(acmeAgent, prompt);
      expect(byAgent.status).toBe(200);
      expect(byAgent.body.result.toolCalls.map((c: { toolName: string }) => c.toolName)).not.toContain('assignTicket');
      const after = (await post(url, '/queries/listTickets', {}, acmeAgent)).body.result.find((t: { id: string }) => t.id === ticket.id);
      expect(after.assignee).toBeNull();
    });

    it('pages the live ticket list by keyset, page after page; a cursor is bound to its view', async () => {
      const tenant = as('agent', randomUUID());
      const subjects = ['one', 'two', 'three', 'four', 'five'];
      for (const subject of subjects) expect((await createTicket(subject, tenant)).status).toBe(200);
      const pageOf = async (cursor: string | null) => (await post(url, '/queries/liveTickets', { view: 'active', page: { cursor, numItems: 2 } }, tenant)).body.result;
      const first = await pageOf(null);
      expect(first).toMatchObject({ isDone: false, continueCursor: expect.any(String) });
      const second = await pageOf(first.continueCursor);
      const third = await pageOf(second.continueCursor);
      expect([first, second, third].map((p) => p.page.map((t: { subject: string }) => t.subject))).toEqual([['five', 'four'], ['three', 'two'], ['one']]);
      expect(third.isDone).toBe(true);
      // A cursor is bound to its args: another view refuses it.
      const mixed = await post(url, '/queries/liveTickets', { view: 'closed', page: { cursor: first.continueCursor, numItems: 2 } }, tenant);
      expect(mixed.status).toBe(400);
      expect(mixed.body.error.code).toBe('invalid_cursor');
    });

    it('schedules the SLA check with the ticket, and a reply’s awaitCustomer run waits until the customer answers', async () => {
      const tenantId = randomUUID();
      const agent = as('agent', tenantId);
      const ticket = (await createTicket('Cannot log in', agent)).body.result;
      // The checkSla call waits in the outbox for four hours after the ticket (fw schedule list shows it).
      const calls = (await (await fetch(`${url}/_fw/schedule?limit=500`)).json()).calls as Array<{ entry: string; tenantId: string; status: string; runAt: string }>;
      const sla = calls.find((c) => c.entry === 'checkSla' && c.tenantId === tenantId);
      expect(sla).toMatchObject({ status: 'pending' });
      expect(new Date(sla!.runAt).getTime() - new Date(ticket.created_at).getTime()).toBeGreaterThanOrEqual(4 * 3600_000 - 5_000);

      const reply = await post(url, '/commands/addComment', { ticketId: ticket.id, body: 'Which browser?' }, agent);
      expect(reply.body.result).toMatchObject({ author_kind: 'agent' });
      expect((await post(url, '/queries/liveTicket', { ticketId: ticket.id }, agent)).body.result.ticket).toMatchObject({ status: 'pending' });
      // fw dev's worker starts the run; it waits for the customer's answer, holding no worker.
      const runOf = async () => ((await (await fetch(`${url}/_fw/workflows?workflow=awaitCustomer&limit=500`)).json()).runs as Array<{ runId: string; tenantId: string; status: string; waitingFor: any }>).find((r) => r.tenantId === tenantId);
      const waiting = await until(async () => ((await runOf())?.status === 'sleeping' ? runOf() : undefined), 'the awaitCustomer run to wait');
      expect(waiting!.waitingFor).toMatchObject({ kind: 'event', step: 'answer', event: 'ticket.customerReplied', match: { ticketId: ticket.id } });

      const answer = await post(url, '/commands/addComment', { ticketId: ticket.id, body: 'Firefox.', from: 'customer' }, agent);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      await until(async () => (await runOf())?.status === 'completed', 'the signal to end the run');
      const after = (await post(url, '/queries/liveTicket', { ticketId: ticket.id }, agent)).body.result;
      expect(after.ticket).toMatchObject({ status: 'open', sla_breached_at: null });
      expect(after.comments.map((c: { author_kind: string; body: string }) => `${c.author_kind}: ${c.body}`)).toEqual(['agent: Which browser?', 'customer: Firefox.']);
      // An agent cannot reply on a closed ticket; the customer's answer reopens it.
      await post(url, '/commands/closeTicket', { ticketId: ticket.id }, agent);
      expect((await post(url, '/commands/addComment', { ticketId: ticket.id, body: 'Anything else?' }, agent)).status).toBe(409);
    });
  });

  // Hours and days pass on the test's clock (fwjs/testing: advanceTime, then deliverEvents runs what fell
  // due), over HTTP against the same app: no test waits for wall time.
  describe('over time (fwjs/testing’s clock)', () => {
    let fw: TestApp<any>;
    beforeAll(async () => {
      fw = await startTestApp({ root: app.dir });
    }, 60_000);
    afterAll(() => fw?.close());

    const call = async (route: string, args: unknown, headers = acmeAgent) => {
      const response = await post(fw.url, route, args, headers);
      expect(response.status, `${route}: ${JSON.stringify(response.body)}`).toBe(200);
      return response.body.result;
    };
    const detail = (ticketId: string) => call('/queries/liveTicket', { ticketId });

    it('the SLA check escalates an unanswered ticket four hours later, not an answered one', async () => {
      const ignored = await call('/commands/createTicket', { subject: 'Nobody answers', body: '', priority: 'normal' });
      const answered = await call('/commands/createTicket', { subject: 'Answered', body: '', priority: 'normal' });
      await call('/commands/addComment', { ticketId: answered.id, body: 'On it.' });
      await fw.deliverEvents();
      fw.advanceTime(4 * 3600_000 - 120_000);
      await fw.deliverEvents();
      expect((await detail(ignored.id)).ticket).toMatchObject({ sla_breached_at: null, priority: 'normal' });

      fw.advanceTime('2m');
      const delivered = await fw.deliverEvents();
      expect(delivered.outcomes.filter((o) => o.kind !== 'delivered')).toEqual([]);
      expect((await detail(ignored.id)).ticket).toMatchObject({ status: 'open', priority: 'high', sla_breached_at: expect.any(String) });
      expect((await detail(answered.id)).ticket).toMatchObject({ status: 'pending', priority: 'normal', sla_breached_at: null });
    });

    it('a reply’s run reminds the silent customer after a day and closes the ticket after three', async () => {
      const ticket = await call('/commands/createTicket', { subject: 'Silent customer', body: '' });
      await call('/commands/addComment', { ticketId: ticket.id, body: 'Can you send a screenshot?' });
      await fw.deliverEvents();
      const bodies = async () => (await detail(ticket.id)).comments.map((c: { body: string }) => c.body);
      fw.advanceTime('23h');
      await fw.deliverEvents();
      expect(await bodies()).toEqual(['Can you send a screenshot?']);
      fw.advanceTime('1h');
      await fw.deliverEvents();
      expect(await bodies()).toEqual(['Can you send a screenshot?', 'No answer for a day: the customer was reminded.']);
      fw.advanceTime('2d');
      await fw.deliverEvents();
      expect((await detail(ticket.id)).ticket.status).toBe('closed');
    });
  });
});
