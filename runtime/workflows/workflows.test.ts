import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import type { FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { type Auth, command, workflow } from '../core/entries.ts';
import { callEntry } from '../app/call-entry.ts';
import { createRuntimeHandler } from '../http/handler.ts';
import { createOutboxWorker, type OutboxWorkerOptions } from '../app/outbox-worker.ts';
import { type OutboxWorker } from '../outbox/worker.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { workflowRunId } from './start.ts';
import { cancelRun, listRuns, readRun } from './store.ts';
import { until } from '../../e2e/support/until.ts';

const TENANT_A = '00000000-0000-4000-8000-00000000000a';
const TENANT_B = '00000000-0000-4000-8000-00000000000b';
const alice: Auth = { kind: 'user', userId: 'alice', tenantId: TENANT_A, role: 'member' };
const bob: Auth = { kind: 'user', userId: 'bob', tenantId: TENANT_B, role: 'member' };

const schema = defineSchema({
  orders: table({ id: t.uuid().primaryKey().defaultRandom(), item: t.text(), status: t.text() }),
  journal: table({ id: t.uuid().primaryKey().defaultRandom(), text: t.text() }),
});

/** What the test workflows do and saw, changed by each test. */
interface Script {
  /** Every step function that ran, as `step@attempt`. */
  ran: string[];
  /** `charge` throws while this is above 0 (and counts down). */
  chargeFailures: number;
  /** `fulfil` waits for this (taken by the first call). */
  gate: { started: () => void; release: Promise<void> } | undefined;
}

function testApp(script: Script): AppDefinition {
  const entries = {
    placeOrder: command({
      args: { item: z.string().min(1), key: z.string().optional() },
      handler: async (ctx, args) => {
        const order = await ctx.db.insertInto('orders').values({ item: args.item, status: 'placed' }).returningAll().executeTakeFirstOrThrow();
        const { runId } = await ctx.startWorkflow('fulfilOrder', { orderId: order.id }, args.key ? { idempotencyKey: args.key } : {});
        return { order, runId };
      },
    }),
    placeThenFail: command({
      handler: async (ctx) => {
        await ctx.startWorkflow('fulfilOrder', { orderId: crypto.randomUUID() });
        throw new Error('rolled back');
      },
    }),
    startBadly: command({ handler: (ctx) => ctx.startWorkflow('fulfilOrder', { orderId: 'not-a-uuid' }) }),
    startUnknown: command({ handler: (ctx) => ctx.startWorkflow('noSuchWorkflow', {}) }),
    emitSignup: command({ args: { email: z.string() }, handler: (ctx, args) => ctx.emit('user.signedUp', { email: args.email }) }),

    fulfilOrder: workflow({
      args: { orderId: z.uuid() },
      handler: async (ctx, args) => {
        const charge = await ctx.step('charge', async (step) => {
          script.ran.push(`charge@${step.attempt}`);
          if (script.chargeFailures > 0) {
            script.chargeFailures--;
            throw new Error('card declined, try later');
          }
          return { chargeId: `ch_${step.idempotencyKey}`, at: new Date(0) };
        });
        await ctx.step('fulfil', async (step) => {
          script.ran.push(`fulfil@${step.attempt}`);
          const gate = script.gate;
          script.gate = undefined;
          if (gate) {
            gate.started();
            await gate.release;
          }
          await ctx.db.updateTable('orders').set({ status: 'fulfilled' }).where('id', '=', args.orderId).execute();
        });
        await ctx.step('journal', async (step) => {
          script.ran.push(`journal@${step.attempt}`);
          await ctx.db.insertInto('journal').values({ text: `order ${args.orderId} charged ${charge.chargeId} at ${String(charge.at)}` }).execute();
        });
        return { chargeId: charge.chargeId };
      },
    }),
    welcome: workflow({
      on: 'user.signedUp',
      args: { email: z.email() },
      handler: async (ctx, args) => {
        await ctx.step('greet', () => {
          script.ran.push(`greet@${ctx.run.attempt}`);
          return `hello ${args.email}`;
        });
      },
    }),
    twice: workflow({
      handler: async (ctx) => {
        await ctx.step('same', () => 1);
        await ctx.step('same', () => 2);
      },
    }),
  };
  return { entries: new Map(Object.entries(entries)), policies: {}, schema };
}

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`workflows on ${target.name}`, () => {
    let db: FwDatabase;
    let drop = async () => {};
    const script: Script = { ran: [], chargeFailures: 0, gate: undefined };
    const app = testApp(script);
    const errors: string[] = [];
    const workers: OutboxWorker[] = [];

    const newWorker = (options: Partial<Omit<OutboxWorkerOptions, 'app' | 'db'>> = {}) => {
      const worker = createOutboxWorker({
        app,
        db,
        ai: { env: { FW_AI: 'mock' } },
        backoff: { random: () => 0 },
        onError: (e) => errors.push(e instanceof Error ? e.message : String(e)),
        ...options,
      });
      workers.push(worker);
      return worker;
    };
    const call = async (name: string, args: unknown = {}, auth: Auth = alice) => {
      const traceId = randomBytes(16).toString('hex');
      return { result: (await callEntry(app, db, app.entries.get(name)!, { auth, traceId, args, external: true })) as any, traceId };
    };
    const inTenant = <T>(auth: Auth, fn: (trx: FwDatabase['admin']) => Promise<T>) => db.transaction({ readOnly: true, auth }, fn);
    const run = async (runId: string) => (await readRun(db.admin, runId))!;
    /** Runs the worker until nothing is due (retries are due at once: the backoff's random is 0). */
    const drain = async (worker: OutboxWorker) => {
      for (let i = 0; i < 20; i++) if ((await worker.runOnce()).claimed === 0) return;
      throw new Error('the outbox never drained');
    };

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      expect((await applyMigration(db, app.schema)).blocked).toEqual([]);
    });

    beforeEach(async () => {
      for (const worker of workers.splice(0)) await worker.stop({ releaseLeases: false });
      await db.admin.deleteFrom('_fw_outbox').execute();
      await db.admin.deleteFrom('_fw_workflow_runs').execute();
      await db.admin.deleteFrom('orders').execute();
      await db.admin.deleteFrom('journal').execute();
      Object.assign(script, { ran: [], chargeFailures: 0, gate: undefined });
      errors.length = 0;
    });

    afterAll(async () => {
      for (const worker of workers.splice(0)) await worker.stop({ releaseLeases: false });
      await db?.close();
      await drop();
    });

    it('a command starts a run after its commit; each step runs once and its result is stored', async () => {
      const { result, traceId } = await call('placeOrder', { item: 'lamp' });
      expect(await run(result.runId)).toMatchObject({ runId: result.runId, workflow: 'fulfilOrder', status: 'pending', attempts: 0, tenantId: TENANT_A, traceId });
      expect(script.ran).toEqual([]);

      expect(await newWorker().runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
      expect(script.ran).toEqual(['charge@1', 'fulfil@1', 'journal@1']);
      const done = await run(result.runId);
      expect(done).toMatchObject({ status: 'completed', attempts: 1, lastError: null, cancelRequested: false });
      expect(done.finishedAt).not.toBeNull();
      expect(done.steps.map((s) => [s.name, s.attempt])).toEqual([['charge', 1], ['fulfil', 1], ['journal', 1]]);
      const stored = await db.admin.selectFrom('_fw_workflow_runs').select('result').where('id', '=', result.runId).executeTakeFirstOrThrow();
      expect(stored.result).toEqual({ chargeId: `ch_${result.runId}:charge` });

      // The workflow wrote as alice's tenant (row-level security), and the step got JSON back on its
      // first run too: the Date came back as its ISO string, as a resumed run would see it.
      expect(await inTenant(alice, (trx) => trx.selectFrom('orders').select('status').execute())).toEqual([{ status: 'fulfilled' }]);
      expect(await inTenant(bob, (trx) => trx.selectFrom('orders').select('status').execute())).toEqual([]);
      const [journal] = await inTenant(alice, (trx) => trx.selectFrom('journal').select('text').execute());
      expect(journal!.text).toContain(`at 1970-01-01T00:00:00.000Z`);
      // Its writes went through the live invalidation log under the command's trace id.
      const invalidated = await db.admin.selectFrom('_fw_live_invalidations').select('table_name').where('trace_id', '=', traceId).execute();
      expect(invalidated.map((r) => r.table_name).sort()).toEqual(['journal', 'orders', 'orders']);
      expect(errors).toEqual([]);
    });

    it('a retried run resumes after its last finished step', async () => {
      script.chargeFailures = 0;
      let started!: () => void;
      const fulfilStarted = new Promise<void>((resolve) => (started = resolve));
      let release!: () => void;
      script.gate = { started, release: new Promise<void>((resolve) => (release = resolve)) };
      const { result } = await call('placeOrder', { item: 'desk' });

      // Attempt 1 finishes `charge`, then its worker dies inside `fulfil` (no renewals, no release).
      const a = newWorker({ workerId: 'worker-a', leaseMs: 300 });
      const aRun = a.runOnce();
      await fulfilStarted;
      await a.stop({ releaseLeases: false });
      expect((await run(result.runId)).steps.map((s) => s.name)).toEqual(['charge']);

      // Attempt 2, on another worker once the lease ran out (nobody renews it now): `charge` is not run again.
      await until(async () => {
        const lease = await sql<{ expired: boolean }>`select lease_until < now() as expired from _fw_outbox where lease_owner = 'worker-a'`.execute(db.admin);
        return lease.rows.length === 1 && lease.rows[0]!.expired;
      }, 'worker-a’s lease to run out');
      const b = newWorker({ workerId: 'worker-b', leaseMs: 60_000 });
      expect(await b.runOnce()).toEqual({ claimed: 1, delivered: 1, retried: 0, waiting: 0, dead: 0, leaseLost: 0 });
      expect(script.ran).toEqual(['charge@1', 'fulfil@1', 'fulfil@2', 'journal@2']);
      expect(await run(result.runId)).toMatchObject({ status: 'completed', attempts: 2 });
      release();
      expect(await aRun).toEqual({ claimed: 1, delivered: 0, retried: 0, waiting: 0, dead: 0, leaseLost: 0 }); // a's late outcome is dropped
      expect((await run(result.runId)).steps.map((s) => [s.name, s.attempt])).toEqual([['charge', 1], ['fulfil', 2], ['journal', 2]]);
      expect(errors).toEqual([]);
    });

    it('a failing step is retried with backoff and the run fails once the attempts run out', async () => {
      script.chargeFailures = 1;
      const retried = await call('placeOrder', { item: 'chair' });
      const worker = newWorker({ maxAttempts: 2 });
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, retried: 1 });
      expect(await run(retried.result.runId)).toMatchObject({ status: 'retrying', attempts: 1, lastError: 'fulfilOrder: card declined, try later' });
      await drain(worker);
      expect(await run(retried.result.runId)).toMatchObject({ status: 'completed', attempts: 2 });
      expect(script.ran).toEqual(['charge@1', 'charge@2', 'fulfil@2', 'journal@2']);

      script.ran.length = 0;
      script.chargeFailures = 5;
      const failing = await call('placeOrder', { item: 'sofa' });
      await drain(worker);
      expect(await run(failing.result.runId)).toMatchObject({ status: 'failed', attempts: 2, lastError: 'fulfilOrder: card declined, try later' });
      expect(script.ran).toEqual(['charge@1', 'charge@2']);
      const [row] = await db.admin.selectFrom('_fw_outbox').select(['id', 'status']).where('trace_id', '=', failing.traceId).execute();
      expect(row).toMatchObject({ status: 'dead' });

      // Retried by hand once the cause is fixed (docs/workflows.md): the failed run runs again.
      script.chargeFailures = 0;
      await db.admin.updateTable('_fw_outbox').set({ status: 'pending', attempts: 0, available_at: sql`now()`, dead_at: null }).where('id', '=', row!.id).execute();
      await drain(worker);
      expect(await run(failing.result.runId)).toMatchObject({ status: 'completed', finishedAt: expect.any(String) });
      expect(script.ran).toEqual(['charge@1', 'charge@2', 'charge@1', 'fulfil@1', 'journal@1']);
    });

    it('one idempotency key, one run; a rolled-back command starts nothing; bad starts fail the command', async () => {
      const first = await call('placeOrder', { item: 'lamp', key: 'order-42' });
      const second = await call('placeOrder', { item: 'lamp', key: 'order-42' });
      expect(second.result.runId).toBe(first.result.runId);
      expect(first.result.runId).toBe(workflowRunId('fulfilOrder', 'order-42', TENANT_A));
      await expect(call('placeThenFail')).rejects.toThrow('rolled back');
      await expect(call('startBadly')).rejects.toThrow(/ctx.startWorkflow\('fulfilOrder'\): Invalid args: args.orderId/);
      await expect(call('startUnknown')).rejects.toThrow(/No workflow named "noSuchWorkflow". Workflows: fulfilOrder, twice, welcome./);

      await drain(newWorker());
      expect(await listRuns(db.admin)).toEqual([expect.objectContaining({ runId: first.result.runId, status: 'completed' })]);
      expect(script.ran.filter((r) => r.startsWith('charge'))).toEqual(['charge@1']);
    });

    it('an event starts the workflows listening on it, once however often it is delivered', async () => {
      const { traceId } = await call('emitSignup', { email: 'ann@example.com' });
      const worker = newWorker();
      await drain(worker);
      const [event] = await db.admin.selectFrom('_fw_outbox').select(['id']).where('event', '=', 'user.signedUp').execute();
      // Deliver the event again (as after a lost lease): the same run id, so no second run.
      await db.admin.updateTable('_fw_outbox').set({ status: 'pending', available_at: sql`now()` }).where('id', '=', event!.id).execute();
      await drain(worker);
      const runs = await listRuns(db.admin, { workflow: 'welcome' });
      expect(runs).toEqual([expect.objectContaining({ workflow: 'welcome', status: 'completed', traceId, tenantId: TENANT_A })]);
      expect(script.ran).toEqual(['greet@1']);

      // A payload the workflow refuses: the event is dead at once, naming the workflow and the argument (as an action's would be).
      const bad = await call('emitSignup', { email: 'not-an-email' });
      await drain(worker);
      const [dead] = await db.admin.selectFrom('_fw_outbox').select(['status', 'last_error']).where('trace_id', '=', bad.traceId).execute();
      expect(dead).toMatchObject({ status: 'dead', last_error: expect.stringMatching(/^welcome \(validation_failed\): Invalid args: args.email/) });
    });

    it('cancel: a waiting run at once; a running one before its next step; an ended one not at all', async () => {
      const waiting = await call('placeOrder', { item: 'rug' });
      expect(await cancelRun(db.admin, waiting.result.runId)).toEqual({ runId: waiting.result.runId, workflow: 'fulfilOrder', status: 'cancelled', cancelRequested: true });
      const worker = newWorker();
      await drain(worker);
      expect(await run(waiting.result.runId)).toMatchObject({ status: 'cancelled', cancelRequested: true });
      expect(script.ran).toEqual([]);

      let started!: () => void;
      const fulfilStarted = new Promise<void>((resolve) => (started = resolve));
      let release!: () => void;
      script.gate = { started, release: new Promise<void>((resolve) => (release = resolve)) };
      const running = await call('placeOrder', { item: 'vase' });
      const delivery = worker.runOnce();
      await fulfilStarted;
      expect(await cancelRun(db.admin, running.result.runId)).toMatchObject({ status: 'running', cancelRequested: true });
      release();
      expect(await delivery).toMatchObject({ delivered: 1 });
      expect(await run(running.result.runId)).toMatchObject({ status: 'cancelled' });
      expect(script.ran).toEqual(['charge@1', 'fulfil@1']); // `journal` never ran

      expect(await cancelRun(db.admin, running.result.runId)).toMatchObject({ status: 'cancelled', cancelRequested: false });
      expect(await cancelRun(db.admin, crypto.randomUUID())).toBeNull();
    });

    it('step names are unique within a run', async () => {
      await db.admin
        .insertInto('_fw_outbox')
        .values({ event: 'fw.workflow:twice', payload: sql`${JSON.stringify({ runId: crypto.randomUUID(), args: {} })}::jsonb`, idempotency_key: 'workflow:twice-test' })
        .execute();
      expect(await newWorker({ maxAttempts: 1 }).runOnce()).toEqual({ claimed: 1, delivered: 0, retried: 0, waiting: 0, dead: 1, leaseLost: 0 });
      const [run, ...more] = await listRuns(db.admin, { workflow: 'twice' });
      expect(more).toEqual([]);
      expect(run).toMatchObject({ status: 'failed', lastError: expect.stringContaining("ctx.step('same') ran twice in one run") });
    });

    it('the admin routes list, show and cancel runs; outside dev mode only with the admin token', async () => {
      const { result } = await call('placeOrder', { item: 'clock' });
      const handler = createRuntimeHandler({ app, db, dev: false, adminToken: 'secret-admin' });
      const { createServer } = await import('node:http');
      const server = createServer((req, res) => void handler(req, res));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const admin = { 'x-fw-admin-token': 'secret-admin' };
      try {
        expect((await fetch(`${base}/_fw/workflows`)).status).toBe(401);
        const listed = await (await fetch(`${base}/_fw/workflows`, { headers: admin })).json();
        expect(listed.runs).toEqual([expect.objectContaining({ runId: result.runId, status: 'pending' })]);
        expect((await fetch(`${base}/_fw/workflows/${result.runId}/cancel`, { method: 'POST', headers: admin })).status).toBe(415);
        expect((await fetch(`${base}/_fw/workflows/${result.runId}/cancel`, { method: 'GET', headers: admin })).status).toBe(405);
        const cancelled = await fetch(`${base}/_fw/workflows/${result.runId}/cancel`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: '{}' });
        expect(await cancelled.json()).toMatchObject({ runId: result.runId, status: 'cancelled', cancelRequested: true });
        expect(await (await fetch(`${base}/_fw/workflows/${result.runId}`, { headers: admin })).json()).toMatchObject({ runId: result.runId, status: 'cancelled', steps: [] });
        expect((await fetch(`${base}/_fw/workflows/not-a-uuid`, { headers: admin })).status).toBe(400);
        expect((await fetch(`${base}/_fw/workflows/${crypto.randomUUID()}`, { headers: admin })).status).toBe(404);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });
}
