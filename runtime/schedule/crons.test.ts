import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import { createDatabase, type FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { command, query } from '../core/entries.ts';
import { crons, type CronDefinition } from '../core/crons.ts';
import { createOutboxWorker } from '../app/outbox-worker.ts';
import type { OutboxWorker } from '../outbox/worker.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import type { Clock } from '../core/clock.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { cronProblems } from './cron-spec.ts';
import { nextCronTicks } from './cron-ticks.ts';

const TENANT_A = '00000000-0000-4000-8000-00000000000a';
const TENANT_B = '00000000-0000-4000-8000-00000000000b';
const TENANT_C = '00000000-0000-4000-8000-00000000000c';
const MINUTE = 60_000;

const schema = defineSchema({
  ticks: table({ id: t.uuid().primaryKey().defaultRandom(), cron: t.text(), who: t.text() }),
  // The tenants of the app (one row each), readable without a tenant.
  workspaces: table({ id: t.uuid().primaryKey() }, { tenantScoped: false }),
});

/** A clock the test moves, on a whole minute, ahead of the database (rows written at its now() are due at once). */
function manualClock(): Clock & { advance(ms: number): void } {
  let now = Math.ceil((Date.now() + 2 * MINUTE) / MINUTE) * MINUTE + 30_000;
  return { now: () => now, at: () => () => {}, advance: (ms) => void (now += ms) };
}

function testApp(definitions: Record<string, CronDefinition>): AppDefinition {
  const entries = {
    recordTick: command({
      policy: 'system',
      args: { cron: z.string() },
      handler: async (ctx, args) => {
        await ctx.db.insertInto('ticks').values({ cron: args.cron, who: `${ctx.auth.kind}:${ctx.auth.tenantId}` }).execute();
      },
    }),
    listTicks: command({ handler: async () => {} }),
    allWorkspaces: query({ policy: 'system', handler: async (ctx) => (await ctx.db.selectFrom('workspaces').select('id').orderBy('id').execute()).map((w) => w.id) }),
    notSystem: query({ handler: async () => [] }),
  };
  return { entries: new Map(Object.entries(entries)), policies: {}, schema, crons: new Map(Object.entries(crons(definitions))) };
}

const everyMinute = { every: '1m', call: 'recordTick', args: { cron: 'everyMinute' }, tenant: TENANT_A } as const;

describe('cron definitions', () => {
  it('reports unknown targets, bad expressions and time zones, bad intervals and tenants, with hints', () => {
    const app = testApp({
      ok: { cron: '0 7 * * 1-5', timezone: 'Europe/Berlin', call: 'recordTick', args: { cron: 'ok' } },
      typo: { every: '1h', call: 'recordTik' },
      badExpression: { cron: '61 * * * *', call: 'recordTick' },
      badZone: { cron: '0 7 * * *', timezone: 'Mars/Olympus', call: 'recordTick' },
      tooOften: { every: '10ms', call: 'recordTick' },
      both: { cron: '* * * * *', every: '1m', call: 'recordTick' } as never,
      badTenant: { every: '1h', call: 'recordTick', tenant: 'acme' },
      eachAndOne: { every: '1h', call: 'recordTick', tenant: TENANT_A, forEachTenant: 'allWorkspaces' },
      eachUser: { every: '1h', call: 'recordTick', forEachTenant: 'notSystem' },
      eachOk: { every: '1h', call: 'recordTick', forEachTenant: 'allWorkspaces' },
    });
    const problems = cronProblems(app);
    expect(problems.map((p) => [p.cron, p.code])).toEqual([
      ['typo', 'unknown_cron_target'],
      ['badExpression', 'invalid_cron'],
      ['badZone', 'invalid_cron'],
      ['tooOften', 'invalid_cron'],
      ['both', 'invalid_cron'],
      ['badTenant', 'invalid_cron'],
      ['eachAndOne', 'invalid_cron'],
      ['eachUser', 'invalid_cron'],
    ]);
    expect(problems.find((p) => p.cron === 'eachUser')).toEqual({
      cron: 'eachUser',
      code: 'invalid_cron',
      message: "cron \"eachUser\": `forEachTenant` names \"notSystem\", which is a query with policy 'user': it must be a query with policy 'system' that answers the tenant ids.",
      hint: 'System queries: allWorkspaces.',
    });
    expect(problems[0]).toEqual({
      cron: 'typo',
      code: 'unknown_cron_target',
      message: 'cron "typo" calls "recordTik", which is no command or action of the app.',
      hint: 'Commands and actions: listTicks, recordTick.',
    });
    expect(problems[1]!.message).toContain('cron "badExpression": `61 * * * *` is not a valid cron schedule');
    expect(problems[2]!.message).toContain('in Mars/Olympus is not a valid cron schedule');
  });

  it('lists the next run of each cron, in its time zone', () => {
    const app = testApp({ digest: { cron: '0 7 * * *', timezone: 'Europe/Berlin', call: 'recordTick' }, sweep: { every: '15m', call: 'recordTick' } });
    const now = Date.parse('2026-01-15T10:05:00Z');
    expect(nextCronTicks(app, now)).toEqual([
      { name: 'digest', call: 'recordTick', schedule: '0 7 * * * (Europe/Berlin)', tenant: null, forEachTenant: null, nextRun: '2026-01-16T06:00:00.000Z' },
      { name: 'sweep', call: 'recordTick', schedule: 'every 15m', tenant: null, forEachTenant: null, nextRun: '2026-01-15T10:15:00.000Z' },
    ]);
  });
});

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`crons on ${target.name}`, () => {
    let db: FwDatabase;
    let drop = async () => {};
    const workers: OutboxWorker[] = [];
    let clock = manualClock();
    const newWorker = (app: AppDefinition, on: FwDatabase = db, workerId?: string) => {
      const worker = createOutboxWorker({ app, db: on, clock, onError: (e) => console.error(e), ...(workerId ? { workerId } : {}) });
      workers.push(worker);
      return worker;
    };
    const tickRows = async () =>
      (await sql<{ key: string; status: string }>`select idempotency_key as key, status from _fw_outbox where idempotency_key like 'cron:%' order by id`.execute(db.admin)).rows;
    const ticks = async () => (await db.admin.selectFrom('ticks').select(['cron', 'who']).execute());
    /** A second database handle on PostgreSQL (another process's pool); the same one on PGlite. */
    const another = async () => (db.driver.kind === 'postgres' ? await createDatabase({ url: db.driver.url }) : db);

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      expect((await applyMigration(db, schema)).blocked).toEqual([]);
    });
    beforeEach(async () => {
      for (const worker of workers.splice(0)) await worker.stop({ releaseLeases: false });
      await db.admin.deleteFrom('_fw_outbox').execute();
      await db.admin.deleteFrom('ticks').execute();
      await db.admin.deleteFrom('workspaces').execute();
      clock = manualClock();
    });
    afterAll(async () => {
      for (const worker of workers.splice(0)) await worker.stop({ releaseLeases: false });
      await db?.close();
      await drop();
    });

    it('one run per tick across processes, as the system in the declared tenant', async () => {
      const app = testApp({ everyMinute });
      const other = await another();
      try {
        const a = newWorker(app, db, 'a');
        const b = newWorker(app, other, 'b');
        // Both processes look: one row, for the next whole minute.
        await Promise.all([a.runOnce(), b.runOnce()]);
        const next = new Date(Math.ceil(clock.now() / MINUTE) * MINUTE).toISOString();
        expect((await tickRows()).map((r) => r.key)).toEqual([expect.stringMatching(new RegExp(`^cron:everyMinute:[0-9a-f]{12}:${next.replace(/\./g, '\\.')}$`))]);

        for (let minute = 1; minute <= 3; minute++) {
          clock.advance(MINUTE);
          const [x, y] = await Promise.all([a.runOnce(), b.runOnce()]);
          expect(x.delivered + y.delivered).toBe(1);
          // The next poll of either process adds the next tick (a poll is a second later in a running worker).
          await Promise.all([a.runOnce(), b.runOnce()]);
        }
        expect(await ticks()).toEqual(Array.from({ length: 3 }, () => ({ cron: 'everyMinute', who: `system:${TENANT_A}` })));
        // Three ran, the fourth waits.
        expect((await tickRows()).map((r) => r.status)).toEqual(['delivered', 'delivered', 'delivered', 'pending']);
      } finally {
        for (const worker of workers.splice(0)) await worker.stop({ releaseLeases: false });
        if (other !== db) await other.close();
      }
    });

    it('ticks missed while no process ran: the first runs once on start, the rest are skipped', async () => {
      const app = testApp({ everyMinute });
      const first = await another();
      const a = newWorker(app, first, 'a');
      await a.runOnce();
      await a.stop();
      if (first !== db) await first.close();

      clock.advance(10 * MINUTE); // ten ticks pass with no process
      const second = await another();
      try {
        const b = newWorker(app, second, 'b');
        expect(await b.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
        expect(await b.runOnce()).toMatchObject({ claimed: 0 });
        expect(await ticks()).toHaveLength(1);
        const rows = await tickRows();
        expect(rows.map((r) => r.status)).toEqual(['delivered', 'pending']);
        // The next tick is the first after now, not the second of the missed ones.
        expect(rows[1]!.key.endsWith(new Date(Math.ceil(clock.now() / MINUTE) * MINUTE).toISOString())).toBe(true);
      } finally {
        for (const worker of workers.splice(0)) await worker.stop({ releaseLeases: false });
        if (second !== db) await second.close();
      }
    });

    it('forEachTenant: each tick calls the target once in every tenant the query answers, as the system there', async () => {
      const app = testApp({ everyWorkspace: { every: '1m', call: 'recordTick', args: { cron: 'each' }, forEachTenant: 'allWorkspaces' } });
      await db.admin.insertInto('workspaces').values([{ id: TENANT_A }, { id: TENANT_B }]).execute();
      const worker = newWorker(app);
      await worker.runOnce();
      expect((await tickRows()).map((r) => r.status)).toEqual(['pending']);
      clock.advance(MINUTE);
      // The tick fans out; the calls it adds run on the next claims.
      for (let i = 0; i < 5 && (await worker.runOnce()).claimed > 0; i++);
      const who = async () => (await ticks()).map((r) => r.who).sort();
      expect(await who()).toEqual([`system:${TENANT_A}`, `system:${TENANT_B}`]);
      // The tick is not run again (its key), and a tenant added since is in the next one.
      await db.admin.insertInto('workspaces').values({ id: TENANT_C }).execute();
      clock.advance(MINUTE);
      for (let i = 0; i < 5 && (await worker.runOnce()).claimed > 0; i++);
      expect(await who()).toEqual([`system:${TENANT_A}`, `system:${TENANT_A}`, `system:${TENANT_B}`, `system:${TENANT_B}`, `system:${TENANT_C}`]);
      const calls = (await sql<{ key: string; tenant: string | null; status: string }>`
        select idempotency_key as key, tenant_id::text as tenant, status from _fw_outbox where event = 'fw.call:recordTick' order by id`.execute(db.admin)).rows;
      expect(calls).toHaveLength(5);
      expect(calls.every((c) => c.status === 'delivered' && c.key.startsWith(`cron-tenant:everyWorkspace:${c.tenant}:`))).toBe(true);
    });

    it('a changed cron replaces its waiting tick; a removed one’s is cancelled', async () => {
      await newWorker(testApp({ everyMinute })).runOnce();
      await newWorker(testApp({ everyMinute: { ...everyMinute, every: '5m' } })).runOnce();
      let rows = await tickRows();
      expect(rows.map((r) => r.status)).toEqual(['cancelled', 'pending']);
      expect(rows[1]!.key.endsWith(new Date(Math.ceil(clock.now() / (5 * MINUTE)) * 5 * MINUTE).toISOString())).toBe(true);
      await newWorker(testApp({})).runOnce();
      rows = await tickRows();
      expect(rows.map((r) => r.status)).toEqual(['cancelled', 'cancelled']);
    });
  });
}
