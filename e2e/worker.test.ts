import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDatabase } from '../runtime/db/database.ts';
import { createTestApp, post, runFw, type RunningFw, startFw } from './support/app.ts';
import { until } from './support/until.ts';

const ACME = '00000000-0000-4000-8000-000000000001';
const acmeAgent = { 'x-fw-user-id': 'agent-1', 'x-fw-tenant-id': ACME, 'x-fw-role': 'agent' };
const env = { FW_AI: 'mock' };

const getJson = async (url: string) => (await (await fetch(url)).json()) as any;

// The b2b-support-web template's triageTicket action listens for createTicket's `ticket.created` and
// asks a model (fw's mock here) for a priority and a summary, which it writes to the ticket (the priority
// only when the opener chose none): its trace lands in _fw_ai_runs under createTicket's trace id.
describe('the outbox worker: fw dev runs actions, --no-worker does not, fw worker does alone', () => {
  // Each test its own copy of the template, so its own embedded database.
  let app: Awaited<ReturnType<typeof createTestApp>> | undefined;
  let dev: RunningFw | undefined;
  beforeEach(async () => {
    app = await createTestApp('b2b-support-web');
  });
  afterEach(async () => {
    await dev?.stop();
    dev = undefined;
    await app?.remove();
    app = undefined;
  });

  it('fw dev --no-worker leaves events pending; fw worker alone delivers them afterwards', async () => {
    const dir = app!.dir;
    dev = await startFw(['dev', '--api-only', '--no-worker', '--port', '0', '--json'], { cwd: dir, env });
    // This process has no worker at all, so no wait could show more: the row stays as the command left it.
    expect(dev.ready).toMatchObject({ ok: true, worker: false });
    const url = dev.ready.serverUrl as string;
    const created = await post(url, '/commands/createTicket', { subject: 'Printer on fire', body: 'Smoke everywhere.' }, acmeAgent);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    // Due now: ticket.created. Scheduled for later: createTicket's SLA check (a call of checkSla in 4 hours).
    expect(await getJson(`${url}/_fw/outbox`)).toMatchObject({ counts: { pending: 2, due: 1, scheduled: 1, delivered: 0, dead: 0 }, leased: 0, oldestPending: { event: 'ticket.created', attempts: 0 } });
    expect((await getJson(`${url}/_fw/ai/traces/${created.body.traceId}`)).runs).toEqual([]);
    expect(await dev.stop()).toBe(0);
    dev = undefined;

    // fw worker, alone on the same database, delivers what waited.
    const worker = await startFw(['worker', '--json'], { cwd: dir, env });
    try {
      expect(worker.ready).toMatchObject({ ok: true, database: 'pglite', actions: 2, workflows: 1, workerId: expect.any(String) });
      await until(async () => worker.stderr().includes('delivered "ticket.created"'), 'fw worker to deliver the event');
      expect(worker.stderr()).toContain('→ triageTicket');
    } finally {
      expect(await worker.stop()).toBe(0);
    }
    const trace = await runFw(['ai', 'trace', created.body.traceId, '--json'], { cwd: dir, env });
    expect(trace.code, trace.stderr).toBe(0);
    expect(JSON.parse(trace.stdout).runs).toEqual([expect.objectContaining({ kind: 'generate-structured', status: 'completed', provider: 'mock' })]);

    // The app's database, read once no process holds it: delivered at the first attempt (so nothing
    // claimed the row before fw worker did), and the ticket triaged by the action. The SLA check and the
    // nightly digest's next tick wait for their time.
    const db = await createDatabase({ dataDir: path.join(dir, '.fw', 'db') });
    try {
      expect(await db.admin.selectFrom('_fw_outbox').select(['event', 'status', 'attempts']).orderBy('id').execute()).toEqual([
        { event: 'ticket.created', status: 'delivered', attempts: 1 },
        { event: 'fw.call:checkSla', status: 'pending', attempts: 0 },
        // One nightly digest tick for every workspace (forEachTenant fans it out when it is due).
        { event: 'fw.tenants:nightlyDigest', status: 'pending', attempts: 0 },
      ]);
      const tickets = await db.admin.selectFrom('tickets').select(['id', 'priority', 'priority_source', 'triaged_at', 'triage_summary']).execute();
      expect(tickets).toEqual([{ id: created.body.result.id, priority: 'low', priority_source: 'triage', triaged_at: expect.any(Date), triage_summary: expect.any(String) }]);
    } finally {
      await db.close();
    }
  }, 120_000);

  it('fw dev --api-only runs the triageTicket action after createTicket commits, and the ticket shows its result', async () => {
    dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app!.dir, env });
    expect(dev.ready).toMatchObject({ ok: true, worker: true });
    const url = dev.ready.serverUrl as string;
    const created = await post(url, '/commands/createTicket', { subject: 'Site down', body: 'Nothing loads.' }, acmeAgent);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.result).toMatchObject({ priority: 'normal', priority_source: 'default', triaged_at: null, triage_summary: null });
    const chosen = await post(url, '/commands/createTicket', { subject: 'Invoice typo', body: '', priority: 'urgent' }, acmeAgent);
    expect(chosen.status, JSON.stringify(chosen.body)).toBe(200);
    // The final state is the outbox's: both rows delivered (each after its action's writes committed).
    const outbox = await until(async () => {
      const overview = await getJson(`${url}/_fw/outbox`);
      return overview.counts.due === 0 && overview;
    }, 'the outbox rows marked delivered');
    // Left for later: the two SLA checks (4 hours) and the nightly digest's next tick (one, for every workspace).
    expect(outbox).toMatchObject({ counts: { due: 0, scheduled: 3, delivered: 2, dead: 0 }, leased: 0, oldestPending: null, dead: [] });
    const { runs } = await getJson(`${url}/_fw/ai/traces/${created.body.traceId}`);
    expect(runs).toEqual([expect.objectContaining({ kind: 'generate-structured', status: 'completed', provider: 'mock' })]);

    // The triage result, through the app's own query: the model's priority where the opener chose none.
    const tickets = (await post(url, '/queries/listTickets', {}, acmeAgent)).body.result as Array<Record<string, unknown>>;
    expect(tickets).toHaveLength(2);
    const byId = (id: string) => tickets.find((t) => t.id === id);
    expect(byId(created.body.result.id)).toMatchObject({ priority: 'low', priority_source: 'triage', triaged_at: expect.any(String), triage_summary: expect.any(String) });
    expect(byId(chosen.body.result.id)).toMatchObject({ priority: 'urgent', priority_source: 'user', triaged_at: expect.any(String) });
  }, 120_000);
});
