/**
 * Durable work — the outbox rows the worker acts on (workflow starts, scheduled calls, cron ticks,
 * signals, events) — against a handler whose SQL an attacker controls (an injection), on PostgreSQL,
 * directly and behind PgBouncer in transaction mode. Each attack below worked before fw wrote intents
 * only through `_fw.enqueue` with a proof of its own (issue #43): a tenant took over another tenant's
 * workflow run, switched off a cron, started an admin-only workflow, cancelled other members' calls and
 * the system's ticks; and two tenants' equal idempotency keys named one run.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { entryServices } from '../runtime/app/entry-services.ts';
import { createOutboxWorker } from '../runtime/app/outbox-worker.ts';
import type { AppDefinition } from '../runtime/core/app-definition.ts';
import type { Clock } from '../runtime/core/clock.ts';
import { action, type Auth, command, workflow } from '../runtime/core/entries.ts';
import type { CronDefinition } from '../runtime/core/crons.ts';
import { defineSchema, t, table } from '../runtime/core/schema.ts';
import { createDatabase, type FwDatabase } from '../runtime/db/database.ts';
import { applyMigration } from '../runtime/db/migrate.ts';
import { invokeEntry } from '../runtime/entry/pipeline.ts';
import type { OutboxWorker } from '../runtime/outbox/worker.ts';
import { cronFingerprint } from '../runtime/schedule/cron-spec.ts';
import { cronTickKey } from '../runtime/schedule/cron-ticks.ts';
import { listCalls } from '../runtime/schedule/store.ts';
import { readRun } from '../runtime/workflows/store.ts';
import { hasPgBouncer, type RunningPgBouncer, startPgBouncer } from './support/pgbouncer.ts';
import { createTestPostgresDatabase, testDatabaseUrl } from './support/postgres.ts';

const TENANT_A = '00000000-0000-4000-8000-0000000000a1';
const TENANT_B = '00000000-0000-4000-8000-0000000000b2';
const alice: Auth = { kind: 'user', userId: 'alice', tenantId: TENANT_A, role: 'member' };
const amir: Auth = { kind: 'user', userId: 'amir', tenantId: TENANT_A, role: 'member' };
const ada: Auth = { kind: 'user', userId: 'ada', tenantId: TENANT_A, role: 'admin' };
const mallory: Auth = { kind: 'user', userId: 'mallory', tenantId: TENANT_B, role: 'member' };
const bea: Auth = { kind: 'user', userId: 'bea', tenantId: TENANT_B, role: 'member' };
const HOUR = 3600_000;

const schema = defineSchema({ audit: table({ id: t.uuid().primaryKey().defaultRandom(), text: t.text() }) });
const sweepCron: CronDefinition = { every: '1m', call: 'sweep', tenant: TENANT_A };

/** What ran, as the test process saw it (the worker runs here). */
interface Seen {
  /** Each workflow run's identity, by the step that recorded it: `run workflow auth`. */
  runs: Array<{ runId: string; workflow: string; auth: Auth }>;
  /** The identity each run of the `pinged` action had. */
  actions: Auth[];
}

function testApp(seen: Seen): AppDefinition {
  const record = (workflowName: string) => async (ctx: any) => {
    await ctx.step('who', async () => {
      seen.runs.push({ runId: ctx.run.id, workflow: workflowName, auth: ctx.auth });
      await ctx.db.insertInto('audit').values({ text: `${workflowName} began as ${ctx.auth.kind}:${ctx.auth.userId}:${ctx.auth.role}` }).execute();
    });
  };
  const entries = {
    startWaiter: command({
      args: { key: z.string() },
      handler: (ctx, args) => ctx.startWorkflow('waiter', {}, { idempotencyKey: args.key }),
    }),
    waiter: workflow({
      handler: async (ctx: any) => {
        await record('waiter')(ctx);
        const got = await ctx.waitForEvent('go', 'go');
        await ctx.step('finish', async () => {
          await ctx.db.insertInto('audit').values({ text: `waiter got ${JSON.stringify(got.payload)}` }).execute();
        });
      },
    }),
    go: command({ args: { note: z.string() }, handler: (ctx, args) => ctx.signal('go', { note: args.note }) }),
    startPayout: command({ policy: 'admin', handler: (ctx) => ctx.startWorkflow('payout', {}) }),
    payout: workflow({ handler: record('payout') }),
    // Internal: crons and scheduled calls run it; no request over HTTP can.
    sweep: command({ policy: 'system', handler: async (ctx) => void (await ctx.db.insertInto('audit').values({ text: `swept as ${ctx.auth.kind}` }).execute()) }),
    remindLater: command({ handler: async (ctx) => ({ id: await ctx.scheduler.runAfter(HOUR, 'sweep', {}) }) }),
    cancelCall: command({ args: { id: z.string() }, handler: (ctx, args) => ctx.scheduler.cancel(args.id) }),
    ping: command({ handler: (ctx) => ctx.emit('pinged' as never, {} as never) }),
    onPing: action({ on: 'pinged' as never, handler: async (ctx) => void seen.actions.push(ctx.auth) }),
    pingAsSystem: workflow({ on: 'pinged' as never, runAs: 'system', handler: record('pingAsSystem') }),
    // The injection: a handler that runs SQL its caller wrote.
    inject: command({ args: { sql: z.string() }, handler: async (ctx, args) => void (await sql.raw(args.sql).execute(ctx.db)) }),
  };
  return {
    entries: new Map(Object.entries(entries)),
    policies: { admin: ({ auth }) => auth.role === 'admin' },
    schema,
    crons: new Map([['sweep', sweepCron]]),
  };
}

/** A clock the test moves, a minute ahead of the database (rows written at its `now()` are due at once). */
function manualClock(): Clock & { advance(ms: number): void } {
  let now = Date.now() + 60_000;
  return { now: () => now, at: () => () => {}, advance: (ms) => void (now += ms) };
}

const targets = [
  { name: 'directly connected', enabled: Boolean(testDatabaseUrl), pooled: false },
  { name: 'behind PgBouncer (transaction mode)', enabled: hasPgBouncer, pooled: true },
] as const;

for (const target of targets) {
  describe.skipIf(!target.enabled)(`durable work no handler SQL can forge (PostgreSQL, ${target.name})`, () => {
    let db: FwDatabase;
    let drop = async () => {};
    let bouncer: RunningPgBouncer | undefined;
    const seen: Seen = { runs: [], actions: [] };
    const app = testApp(seen);
    let clock = manualClock();
    const workers: OutboxWorker[] = [];
    const failures: string[] = [];

    const newWorker = () => {
      const worker = createOutboxWorker({ app, db, clock, backoff: { random: () => 0 }, onError: (e) => failures.push(e instanceof Error ? e.message : String(e)) });
      workers.push(worker);
      return worker;
    };
    /** Runs the worker until nothing is due. */
    const drain = async (worker = newWorker()) => {
      for (let i = 0; i < 30; i++) if ((await worker.runOnce()).claimed === 0) return;
      throw new Error('the outbox never drained');
    };
    const call = async (name: string, args: unknown, auth: Auth) =>
      (await invokeEntry(entryServices(app, db, { clock }), app.entries.get(name)!, { name, auth, traceId: randomBytes(16).toString('hex'), args, external: true })) as any;
    /** The attacker's SQL, run by `inject` as `auth`: resolves to the error code it ended with (or 'ok'). */
    const inject = (text: string, auth: Auth = mallory) => call('inject', { sql: text }, auth).then(
      () => 'ok',
      (error: { code?: string }) => error.code ?? 'error',
    );
    const audit = (auth: Auth) => db.transaction({ readOnly: true, auth }, async (trx) => (await trx.selectFrom('audit').select('text').orderBy('text').execute()).map((r) => r.text));
    const outboxOf = async (tenant: string) =>
      (await sql<{ n: number }>`select count(*)::int as n from _fw_outbox where tenant_id = ${tenant}::uuid`.execute(db.admin)).rows[0]!.n;
    const startRow = (runId: string, key = `workflow:${runId}`) =>
      `insert into _fw_outbox (event, payload, idempotency_key) values ('fw.workflow:waiter', '{"runId":"${runId}","args":{}}', '${key}')`;

    beforeAll(async () => {
      const database = await createTestPostgresDatabase();
      drop = database.drop;
      if (target.pooled) {
        bouncer = await startPgBouncer({ serverPoolSize: 3 });
        db = await createDatabase({ url: bouncer.pooled(database.url), directUrl: database.url, poolSize: 6 });
      } else {
        db = await createDatabase({ url: database.url });
      }
      expect((await applyMigration(db, schema)).blocked).toEqual([]);
    }, 60_000);

    beforeEach(async () => {
      for (const worker of workers.splice(0)) await worker.stop({ releaseLeases: false });
      await db.admin.deleteFrom('_fw_outbox').execute();
      await db.admin.deleteFrom('_fw_workflow_runs').execute();
      await db.admin.deleteFrom('audit').execute();
      seen.runs.length = 0;
      seen.actions.length = 0;
      failures.length = 0;
      clock = manualClock();
    });

    afterAll(async () => {
      for (const worker of workers.splice(0)) await worker.stop({ releaseLeases: false });
      await db?.close();
      await bouncer?.stop();
      await drop();
    });

    it('a tenant cannot take over another tenant’s workflow run: the forged start row is refused, and the run finishes as its own', async () => {
      const { runId } = await call('startWaiter', { key: 'order-42' }, alice);
      await drain();
      expect(await readRun(db.admin, runId)).toMatchObject({ status: 'sleeping', tenantId: TENANT_A });

      // Mallory (tenant B) names alice's run in a start row of her own, as a plain insert and through fw's function.
      expect(await inject(startRow(runId, `workflow:${runId}:again`))).toBe('forbidden');
      const rows = JSON.stringify([{ event: 'fw.workflow:waiter', payload: { runId, args: {} }, key: 'x', trace_id: null, available_at: null }]);
      expect(await inject(`select _fw.enqueue('${rows}', null)`)).toBe('forbidden');
      expect(await outboxOf(TENANT_B)).toBe(0);
      await drain();

      await call('go', { note: 'from alice' }, alice);
      await drain();
      expect(await readRun(db.admin, runId)).toMatchObject({ status: 'completed', tenantId: TENANT_A });
      expect(seen.runs).toEqual([{ runId, workflow: 'waiter', auth: alice }]);
      expect(await audit(alice)).toEqual(['waiter began as user:alice:member', 'waiter got {"note":"from alice"}']);
      expect(await audit(mallory)).toEqual([]);
    });

    it('the worker refuses a row that names another tenant’s run (one written before this fw): dead, saying why; the run is untouched', async () => {
      const { runId } = await call('startWaiter', { key: 'order-7' }, alice);
      await drain();
      // Written as the owner, as a row from an older fw could have been: tenant B, alice's run id.
      await sql`insert into _fw_outbox (event, payload, tenant_id, user_id, caller_kind, idempotency_key)
        values ('fw.workflow:waiter', ${JSON.stringify({ runId, args: {} })}::jsonb, ${TENANT_B}::uuid, 'mallory', 'user', 'workflow:forged')`.execute(db.admin);
      await drain();
      const [dead] = (await sql<{ status: string; last_error: string }>`select status, last_error from _fw_outbox where idempotency_key = 'workflow:forged'`.execute(db.admin)).rows;
      expect(dead).toEqual({ status: 'dead', last_error: `waiter: The start row names workflow run ${runId}, which belongs to another tenant: refused, and that run was not touched.` });
      expect(await readRun(db.admin, runId)).toMatchObject({ status: 'sleeping', tenantId: TENANT_A, attempts: 1 });
      expect(seen.runs).toEqual([{ runId, workflow: 'waiter', auth: alice }]);
    });

    it('equal idempotency keys in two tenants start two runs, each its own tenant’s', async () => {
      const a = await call('startWaiter', { key: 'order-42' }, alice);
      const b = await call('startWaiter', { key: 'order-42' }, bea);
      expect(b.runId).not.toBe(a.runId);
      // Within a tenant the key still names one run.
      expect((await call('startWaiter', { key: 'order-42' }, amir)).runId).toBe(a.runId);
      await drain();
      await call('go', { note: 'b' }, bea);
      await drain();
      expect(await readRun(db.admin, a.runId)).toMatchObject({ status: 'sleeping', tenantId: TENANT_A });
      expect(await readRun(db.admin, b.runId)).toMatchObject({ status: 'completed', tenantId: TENANT_B });
      expect(seen.runs.map((r) => r.auth.userId).sort()).toEqual(['alice', 'bea']);
      expect(seen.runs.find((r) => r.runId === b.runId)?.auth).toEqual(bea);
    });

    it('injected SQL cannot start a workflow only admins may start; an admin’s start runs as the admin', async () => {
      const fresh = '00000000-0000-4000-8000-00000000f00d';
      expect(await inject(`insert into _fw_outbox (event, payload, idempotency_key) values ('fw.workflow:payout', '{"runId":"${fresh}","args":{}}', 'workflow:${fresh}')`, amir)).toBe('forbidden');
      await expect(call('startPayout', {}, amir)).rejects.toMatchObject({ code: 'forbidden' });
      await drain();
      expect(await readRun(db.admin, fresh)).toBeNull();
      expect(seen.runs).toEqual([]);

      const { runId } = await call('startPayout', {}, ada);
      await drain();
      expect(seen.runs).toEqual([{ runId, workflow: 'payout', auth: ada }]);
      expect(await audit(ada)).toEqual(['payout began as user:ada:admin']);
    });

    it('injected SQL cannot switch off a cron with a far-future tick, nor run its call in the tick’s place', async () => {
      const fingerprint = cronFingerprint(sweepCron);
      const farFuture = cronTickKey('sweep', fingerprint, Date.UTC(2099, 0, 1));
      expect(await inject(`insert into _fw_outbox (event, payload, idempotency_key, available_at) values ('fw.call:sweep', '{"args":{}}', '${farFuture}', '2099-01-01')`, alice)).toBe('forbidden');
      expect(await outboxOf(TENANT_A)).toBe(0);

      // The scheduler makes the next tick itself, and it runs when its time comes.
      const worker = newWorker();
      await worker.runOnce();
      const [tick] = await listCalls(db.admin);
      expect(tick).toMatchObject({ entry: 'sweep', cron: 'sweep', tenantId: TENANT_A, status: 'pending' });
      clock.advance(60_000);
      await drain(worker);
      expect(await audit(alice)).toEqual(['swept as system']);
    });

    it('a member cancels only their own calls; no SQL cancels another member’s call or the system’s tick', async () => {
      const worker = newWorker();
      await worker.runOnce(); // the cron's next tick
      const [tick] = await listCalls(db.admin);
      const { id } = await call('remindLater', {}, alice);
      const tickKey = (await sql<{ key: string }>`select idempotency_key as key from _fw_outbox where event = 'fw.call:sweep' and idempotency_key like 'cron:%'`.execute(db.admin)).rows[0]!.key;

      expect(await call('cancelCall', { id }, amir)).toBe(false);
      // Through fw's functions, old and new, as the SQL would call them.
      for (const attack of [`select _fw.cancel_call('call:${id}', 'tenant', null)`, `select _fw.cancel_call('${tickKey}', 'tenant', null)`]) {
        expect(await inject(attack, amir)).toBe('forbidden');
      }
      for (const attack of [`select _fw_cancel_call('call:${id}')`, `select _fw_cancel_call('${tickKey}')`]) {
        expect(await inject(attack, amir)).not.toBe('ok');
      }
      expect((await listCalls(db.admin)).map((c) => ({ id: c.id, status: c.status })).sort((x, y) => (x.id < y.id ? -1 : 1))).toEqual(
        [{ id: tick!.id, status: 'pending' }, { id, status: 'pending' }].sort((x, y) => (x.id < y.id ? -1 : 1)),
      );
      expect(await call('cancelCall', { id }, alice)).toBe(true);
    });

    it('an event’s action runs as its emitter; a workflow that declares runAs: system runs as the system in the emitter’s tenant', async () => {
      await call('ping', {}, amir);
      await drain();
      expect(seen.actions).toEqual([amir]);
      expect(seen.runs.map((r) => ({ workflow: r.workflow, auth: r.auth }))).toEqual([
        { workflow: 'pingAsSystem', auth: { kind: 'system', tenantId: TENANT_A, userId: 'amir', role: null } },
      ]);
      expect(await audit(amir)).toEqual(['pingAsSystem began as system:amir:null']);
    });

    it('a scheduled internal command runs as the member who scheduled it; over HTTP it is refused, naming its kind and the fix', async () => {
      await call('remindLater', {}, bea);
      clock.advance(HOUR);
      await drain();
      expect(await listCalls(db.admin, { status: 'dead' })).toEqual([]);
      expect(await audit(bea)).toEqual(['swept as user']);
      await expect(call('sweep', {}, bea)).rejects.toMatchObject({
        code: 'forbidden',
        message: "Command sweep is internal (policy: 'system'): the app's server code runs it — ctx.scheduler, crons, workflows, actions, ctx.runAsSystem — and no request over HTTP can. To let signed-in callers call it, give it policy: 'user' or a named policy.",
      });
      expect(failures).toEqual([]);
    });
  });
}
