import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../testing/index.ts';
import { createTestApp } from './support/app.ts';
import { docFiles } from './support/doc-blocks.ts';

const THIS = 'e2e/docs-entries-variants.test.ts';
const REPORTED = '8f0c6d2e-3b1a-4c5d-9e7f-a1b2c3d4e5f6'; // acmeReport's tenant in docs/scheduling.md
const MINUTE = 60_000;

const schema = `import { defineSchema, t, table } from 'fwjs';
const schema = defineSchema({
  notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text(), body: t.text().nullable(), author_id: t.text(), created_at: t.timestamptz().defaultNow() }),
  purges: table({ id: t.uuid().primaryKey().defaultRandom(), older_than_days: t.integer(), kind: t.text(), in_tenant: t.text().nullable() }, { tenantScoped: false }),
  reports: table({ id: t.uuid().primaryKey().defaultRandom(), kind: t.text() }),
});
export default schema;
declare module 'fwjs' { interface Register { schema: typeof schema } }
`;

// The entries the pages' blocks name and do not show, each recording who ran it and where.
const helpers: Record<string, string> = {
  'src/commands/sendDigest.ts': `import { command } from 'fwjs';
export default command({ policy: 'system', handler: async () => {} });
`,
  'src/commands/purgeExpiredSessions.ts': `import { command, z } from 'fwjs';
export default command({
  policy: 'system',
  args: { olderThanDays: z.number().int() },
  handler: async (ctx, args) => {
    await ctx.db.insertInto('purges').values({ older_than_days: args.olderThanDays, kind: ctx.auth.kind, in_tenant: ctx.auth.tenantId }).execute();
  },
});
`,
  'src/commands/monthlyReport.ts': `import { command } from 'fwjs';
export default command({ policy: 'system', handler: async (ctx) => { await ctx.db.insertInto('reports').values({ kind: ctx.auth.kind }).execute(); } });
`,
  'src/queries/listPurges.ts': `import { query } from 'fwjs';
export default query({ handler: (ctx) => ctx.db.selectFrom('purges').select(['older_than_days', 'kind', 'in_tenant']).execute() });
`,
  'src/queries/listReports.ts': `import { query } from 'fwjs';
export default query({ handler: (ctx) => ctx.db.selectFrom('reports').select(['kind', 'tenant_id']).execute() });
`,
  'src/commands/startFulfilment.ts': `import { command, z } from 'fwjs';
export default command({ args: { orderId: z.uuid() }, handler: (ctx, args) => ctx.startWorkflow('fulfilOrder', args) });
`,
};

/** What the pages leave out: imports, and the workflow and command around docs/workflows.md's lines. */
const leftOut: Record<string, (source: string) => string> = {
  'src/crons.ts': (source) => source,
  // escalate and ship record what they were asked in the test's process (the app runs in it).
  'src/workflows/fulfilOrder.ts': (source) => `import { workflow, z } from 'fwjs';
const calls = ((globalThis as any).docsSignalCalls ??= []);
const escalate = async (orderId: string) => (calls.push({ escalate: orderId }), { escalated: orderId });
const ship = async (orderId: string, by: string) => (calls.push({ ship: orderId, by }), { shipped: orderId });
export default workflow({
  args: { orderId: z.uuid() },
  handler: async (ctx, args) => {
${source}  },
});
`,
  'src/commands/approveOrder.ts': (source) => `import { command, z } from 'fwjs';
export default command({ args: { orderId: z.uuid() }, handler: async (ctx, args) => {\n${source}} });\n`,
};

interface Call {
  entry: string;
  cron: string | null;
  status: string;
  runAt: string;
  tenantId: string | null;
}

// Blocks that name a file docs-entries.test.ts's app already has from another block (src/crons.ts,
// src/workflows/fulfilOrder.ts), run as written in an app of their own: docs/scheduling.md's three crons
// (with a real tenant id: the page had a placeholder that fw refuses) and docs/workflows.md's
// fulfilOrder waiting for order.approved, with approveOrder (its lines inside a workflow and a command).
describe('docs/ blocks whose files docs-entries.test.ts holds already, run as written', () => {
  let app: Awaited<ReturnType<typeof createTestApp>> | undefined;
  let fw: TestApp<any>;
  beforeAll(async () => {
    app = await createTestApp('minimal-web', {
      'src/fw/schema.ts': schema,
      ...helpers,
      ...(await docFiles(THIS, 'docs/scheduling.md', leftOut)),
      ...(await docFiles(THIS, 'docs/workflows.md', leftOut)),
    });
    fw = await startTestApp({ root: app.dir });
  }, 120_000);
  afterAll(async () => {
    await fw?.close();
    await app?.remove();
  });

  async function pendingTicks(): Promise<Call[]> {
    const response = await fetch(`${fw.url}/_fw/schedule?status=pending&limit=500`);
    return ((await response.json()) as { calls: Call[] }).calls.filter((call) => call.cron !== null);
  }

  it('docs/scheduling.md: each cron waits for its next tick, and purgeSessions and acmeReport run as the system there', async () => {
    await fw.deliverEvents(); // each cron gets the row of its next tick
    const ticks = Object.fromEntries((await pendingTicks()).map((call) => [call.cron, call]));
    expect(Object.keys(ticks).sort()).toEqual(['acmeReport', 'nightlyDigest', 'purgeSessions']);
    const now = fw.now();

    // Every 15 minutes, aligned to the epoch; with its args, in no tenant.
    const purgeAt = Date.parse(ticks.purgeSessions!.runAt);
    expect([ticks.purgeSessions!.entry, ticks.purgeSessions!.tenantId, purgeAt % (15 * MINUTE), purgeAt > now && purgeAt <= now + 15 * MINUTE]).toEqual(['purgeExpiredSessions', null, 0, true]);
    // 07:00 in Berlin on a weekday (summer or winter time alike).
    const digestAt = new Date(ticks.nightlyDigest!.runAt);
    const berlin = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(digestAt);
    expect(berlin).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 07:00$/);
    expect([ticks.nightlyDigest!.entry, digestAt.getTime() > now, digestAt.getTime() <= now + 4 * 86_400_000]).toEqual(['sendDigest', true, true]);
    // 06:00 UTC on the 1st, in its tenant.
    const reportAt = new Date(ticks.acmeReport!.runAt);
    expect([ticks.acmeReport!.entry, ticks.acmeReport!.tenantId, reportAt.getUTCDate(), reportAt.getUTCHours(), reportAt.getUTCMinutes()]).toEqual(['monthlyReport', REPORTED, 1, 6, 0]);

    const reader = fw.client({ userId: 'olga', tenantId: REPORTED, role: 'member' });
    const purgesBefore = ((await reader.query('listPurges' as never, {} as never)) as unknown[]).length;
    fw.advanceTime(purgeAt - now);
    const purged = await fw.deliverEvents();
    expect(purged.outcomes.filter((o) => o.event === 'fw.call:purgeExpiredSessions').map((o) => o.kind)).toEqual(['delivered']);
    expect(((await reader.query('listPurges' as never, {} as never)) as unknown[]).slice(purgesBefore)).toEqual([{ older_than_days: 30, kind: 'system', in_tenant: null }]);

    expect(await reader.query('listReports' as never, {} as never)).toEqual([]);
    fw.advanceTime(reportAt.getTime() - fw.now());
    const reported = await fw.deliverEvents();
    expect(reported.outcomes.filter((o) => o.event === 'fw.call:monthlyReport').map((o) => o.kind)).toEqual(['delivered']);
    expect(await reader.query('listReports' as never, {} as never)).toEqual([{ kind: 'system', tenant_id: REPORTED }]);
  });

  describe('docs/workflows.md: fulfilOrder waits for order.approved', () => {
    const tenant = '00000000-0000-4000-8000-0000000000f7';
    const gina = () => fw.client({ userId: 'gina', tenantId: tenant, role: 'member' });
    const calls = (): unknown[] => ((globalThis as any).docsSignalCalls ??= []);

    async function run(runId: string): Promise<{ status: string; result: unknown; steps: Array<{ name: string }> }> {
      return (await fetch(`${fw.url}/_fw/dashboard/api/workflows/${runId}`)).json() as never;
    }

    async function startWaiting(orderId: string): Promise<string> {
      const { runId } = (await gina().command('startFulfilment' as never, { orderId } as never)) as { runId: string };
      await fw.deliverEvents();
      expect((await run(runId)).status).toBe('sleeping');
      return runId;
    }

    it('approveOrder wakes it: ship runs with the approver', async () => {
      const orderId = crypto.randomUUID();
      const runId = await startWaiting(orderId);
      const before = calls().length;
      await gina().command('approveOrder' as never, { orderId } as never);
      await fw.deliverEvents();
      expect(calls().slice(before)).toEqual([{ ship: orderId, by: 'gina' }]);
      expect(await run(runId)).toMatchObject({ status: 'completed', result: null });
      // The wait is a step, with its timeout's deadline beside it (as the page says).
      expect((await run(runId)).steps.map((step) => step.name)).toEqual(['approval#deadline', 'approval', 'ship']);
    });

    it('unapproved for two days, it escalates', async () => {
      const orderId = crypto.randomUUID();
      const runId = await startWaiting(orderId);
      const before = calls().length;
      fw.advanceTime(2 * 86_400_000 + 1000); // just past the two days
      await fw.deliverEvents();
      expect(calls().slice(before)).toEqual([{ escalate: orderId }]);
      expect(await run(runId)).toMatchObject({ status: 'completed', result: { escalated: orderId } });
    });
  });
});
