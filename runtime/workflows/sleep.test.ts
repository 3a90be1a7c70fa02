import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import { createDatabase, type FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { type Auth, command, workflow } from '../core/entries.ts';
import { entryServices } from '../app/entry-services.ts';
import { invokeEntry } from '../entry/pipeline.ts';
import { createOutboxWorker } from '../app/outbox-worker.ts';
import type { OutboxWorker } from '../outbox/worker.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import type { Clock } from '../core/clock.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { cancelRun, readRun } from './store.ts';

const TENANT_A = '00000000-0000-4000-8000-00000000000a';
const alice: Auth = { kind: 'user', userId: 'alice', tenantId: TENANT_A, role: 'member' };
const bob: Auth = { kind: 'user', userId: 'bob', tenantId: '00000000-0000-4000-8000-00000000000b', role: 'member' };
const HOUR = 3600_000;

const schema = defineSchema({ journal: table({ id: t.uuid().primaryKey().defaultRandom(), text: t.text() }) });

/** A clock the test moves, a minute ahead of the database (rows written at its `now()` are due at once). */
function manualClock(start = Date.now() + 60_000): Clock & { advance(ms: number): void } {
  let now = start;
  return { now: () => now, at: () => () => {}, advance: (ms) => void (now += ms) };
}

function testApp(ran: string[]): AppDefinition {
  const entries = {
    begin: command({
      args: { trial: z.string() },
      handler: async (ctx, args) => ctx.startWorkflow('trial', args),
    }),
    approve: command({
      args: { orderId: z.string(), by: z.string() },
      handler: async (ctx, args) => ctx.signal('order.approved', { orderId: args.orderId, by: args.by }),
    }),
    awaitApproval: command({ args: { orderId: z.string() }, handler: (ctx, args) => ctx.startWorkflow('approval', args) }),
    approval: workflow({
      args: { orderId: z.string() },
      handler: async (ctx, args) => {
        const approved = await ctx.waitForEvent<{ by: string }>('approved', 'order.approved', { match: { orderId: args.orderId }, timeout: '1d' });
        await ctx.step('after', () => void ran.push(approved.ok ? `approved by ${approved.payload.by}` : 'timed out'));
        return approved;
      },
    }),
    trial: workflow({
      args: { trial: z.string() },
      handler: async (ctx, args) => {
        await ctx.step('welcome', async () => {
          ran.push('welcome');
          await ctx.db.insertInto('journal').values({ text: `welcome ${args.trial}` }).execute();
        });
        await ctx.sleep('cool-off', '1h');
        await ctx.step('nudge', () => void ran.push('nudge'));
        await ctx.sleepUntil('already-past', new Date(0));
        // A handler that swallows the sleep still sleeps.
        try {
          await ctx.sleep('day', 24 * HOUR);
        } catch {
          ran.push('swallowed');
        }
        await ctx.step('close', async () => {
          ran.push('close');
          await ctx.db.insertInto('journal').values({ text: `closed ${args.trial}` }).execute();
        });
        return 'done';
      },
    }),
  };
  return { entries: new Map(Object.entries(entries)), policies: {}, schema };
}

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`workflow sleeps on ${target.name}`, () => {
    let db: FwDatabase;
    let drop = async () => {};
    const ran: string[] = [];
    const app = testApp(ran);
    const workers: OutboxWorker[] = [];
    let clock = manualClock();
    const newWorker = (on: FwDatabase = db, workerId?: string) => {
      const worker = createOutboxWorker({ app, db: on, clock, onError: () => {}, ...(workerId ? { workerId } : {}) });
      workers.push(worker);
      return worker;
    };
    const callAs = async (auth: Auth, name: string, args: unknown) =>
      (await invokeEntry(entryServices(app, db, { clock }), app.entries.get(name)!, { name, auth, traceId: randomBytes(16).toString('hex'), args, external: true })) as any;
    const start = async (trial: string) =>
      ((await invokeEntry(entryServices(app, db, { clock }), app.entries.get('begin')!, { name: 'begin', auth: alice, traceId: randomBytes(16).toString('hex'), args: { trial }, external: true })) as { runId: string })
        .runId;
    const journal = async () => (await db.admin.selectFrom('journal').select('text').orderBy('text').execute()).map((r) => r.text);

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      expect((await applyMigration(db, app.schema)).blocked).toEqual([]);
    });
    beforeEach(async () => {
      for (const worker of workers.splice(0)) await worker.stop({ releaseLeases: false });
      await db.admin.deleteFrom('_fw_outbox').execute();
      await db.admin.deleteFrom('_fw_workflow_runs').execute();
      await db.admin.deleteFrom('journal').execute();
      ran.length = 0;
      clock = manualClock();
    });
    afterAll(async () => {
      for (const worker of workers.splice(0)) await worker.stop({ releaseLeases: false });
      await db?.close();
      await drop();
    });

    it('a sleeping run gives its worker back and resumes when the time comes, without running finished steps again', async () => {
      const runId = await start('t1');
      const worker = newWorker();
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, waiting: 1, delivered: 0 });
      expect(ran).toEqual(['welcome']);
      const asleep = (await readRun(db.admin, runId))!;
      expect(asleep).toMatchObject({ status: 'sleeping', attempts: 1, waitingFor: { kind: 'sleep', step: 'cool-off', until: new Date(clock.now() + HOUR).toISOString() } });
      expect(asleep.steps.map((s) => s.name)).toEqual(['welcome', 'cool-off']);

      clock.advance(HOUR - 1);
      expect(await worker.runOnce()).toMatchObject({ claimed: 0 });
      clock.advance(1);
      // Woken: `nudge` runs, the past sleepUntil returns at once, and the swallowed day-long sleep still ends the attempt.
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, waiting: 1 });
      expect(ran).toEqual(['welcome', 'nudge', 'swallowed']);
      expect((await readRun(db.admin, runId))!).toMatchObject({ status: 'sleeping', waitingFor: { step: 'day' } });

      clock.advance(24 * HOUR);
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
      expect(ran).toEqual(['welcome', 'nudge', 'swallowed', 'close']);
      // Sleeps are not attempts: the run took one attempt's worth of claims.
      expect((await readRun(db.admin, runId))!).toMatchObject({ status: 'completed', attempts: 1, waitingFor: null, lastError: null });
      expect(await journal()).toEqual(['closed t1', 'welcome t1']);
    });

    it('survives a restart: another process’s worker resumes the run', async () => {
      const runId = await start('t2');
      // "Process" A runs the run until it sleeps, then stops (its database too, on PostgreSQL).
      const firstDb = db.driver.kind === 'postgres' ? await createDatabase({ url: db.driver.url }) : db;
      const a = newWorker(firstDb, 'process-a');
      expect(await a.runOnce()).toMatchObject({ waiting: 1 });
      await a.stop();
      if (firstDb !== db) await firstDb.close();

      // "Process" B starts later on the same database.
      clock.advance(HOUR);
      const secondDb = db.driver.kind === 'postgres' ? await createDatabase({ url: db.driver.url }) : db;
      try {
        const b = newWorker(secondDb, 'process-b');
        expect(await b.runOnce()).toMatchObject({ claimed: 1, waiting: 1 });
        clock.advance(24 * HOUR);
        expect(await b.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
        await b.stop();
      } finally {
        if (secondDb !== db) await secondDb.close();
      }
      expect(ran).toEqual(['welcome', 'nudge', 'swallowed', 'close']);
      expect(await journal()).toEqual(['closed t2', 'welcome t2']);
      expect((await readRun(db.admin, runId))!.status).toBe('completed');
    });

    it('waitForEvent: a matching signal of the tenant wakes the run with its payload; others do not', async () => {
      const { runId } = await callAs(alice, 'awaitApproval', { orderId: 'o-1' });
      const worker = newWorker();
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, waiting: 1 });
      expect((await readRun(db.admin, runId))!).toMatchObject({
        status: 'sleeping',
        waitingFor: { kind: 'event', step: 'approved', event: 'order.approved', match: { orderId: 'o-1' }, until: new Date(clock.now() + 24 * HOUR).toISOString() },
      });
      // Another order, and the same order in another tenant: delivered, nobody woken.
      await callAs(alice, 'approve', { orderId: 'o-2', by: 'anna' });
      await callAs(bob, 'approve', { orderId: 'o-1', by: 'bob' });
      expect(await worker.runOnce()).toMatchObject({ claimed: 2, delivered: 2 });
      expect(await worker.runOnce()).toMatchObject({ claimed: 0 });
      expect(ran).toEqual([]);

      await callAs(alice, 'approve', { orderId: 'o-1', by: 'anna' });
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 1 }); // the signal
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 1 }); // the run, woken at once
      expect(ran).toEqual(['approved by anna']);
      const done = await db.admin.selectFrom('_fw_workflow_runs').select(['status', 'result', 'waiting_for']).where('id', '=', runId).executeTakeFirstOrThrow();
      expect(done).toEqual({ status: 'completed', result: { ok: true, payload: { orderId: 'o-1', by: 'anna' } }, waiting_for: null });
    });

    it('waitForEvent times out with a typed result', async () => {
      const { runId } = await callAs(alice, 'awaitApproval', { orderId: 'o-3' });
      const worker = newWorker();
      await worker.runOnce();
      clock.advance(24 * HOUR);
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
      expect(ran).toEqual(['timed out']);
      // A signal after the timeout changes nothing.
      await callAs(alice, 'approve', { orderId: 'o-3', by: 'late' });
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
      const done = await db.admin.selectFrom('_fw_workflow_runs').select(['status', 'result']).where('id', '=', runId).executeTakeFirstOrThrow();
      expect(done).toEqual({ status: 'completed', result: { ok: false, timedOut: true } });
    });

    it('a sleeping run is cancelled at once', async () => {
      const runId = await start('t3');
      const worker = newWorker();
      await worker.runOnce();
      expect(await cancelRun(db.admin, runId)).toMatchObject({ status: 'cancelled', cancelRequested: true });
      // Its start row was made due now: the worker settles it without waiting for the wake-up.
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
      expect((await readRun(db.admin, runId))!).toMatchObject({ status: 'cancelled' });
      expect(ran).toEqual(['welcome']);
    });
  });
}
