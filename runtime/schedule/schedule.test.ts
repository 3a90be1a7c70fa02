import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import { createDatabase, type FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { action, type Auth, command } from '../core/entries.ts';
import { entryServices } from '../app/entry-services.ts';
import { invokeEntry } from '../entry/pipeline.ts';
import { createOutboxWorker, type OutboxWorkerOptions } from '../app/outbox-worker.ts';
import type { OutboxWorker } from '../outbox/worker.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import type { Clock } from '../core/clock.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { cancelCall, listCalls } from './store.ts';

const TENANT_A = '00000000-0000-4000-8000-00000000000a';
const TENANT_B = '00000000-0000-4000-8000-00000000000b';
const alice: Auth = { kind: 'user', userId: 'alice', tenantId: TENANT_A, role: 'member' };
const anna: Auth = { kind: 'user', userId: 'anna', tenantId: TENANT_A, role: 'manager' };
const bob: Auth = { kind: 'user', userId: 'bob', tenantId: TENANT_B, role: 'member' };
const HOUR = 3600_000;

const schema = defineSchema({
  reminders: table({ id: t.uuid().primaryKey().defaultRandom(), text: t.text(), by: t.text(), role: t.text() }),
});

/** A clock the test moves, a minute ahead of the database (rows written at its `now()` are due at once). */
function manualClock(start = Date.now() + 60_000): Clock & { advance(ms: number): void } {
  let now = start;
  return { now: () => now, at: () => () => {}, advance: (ms) => void (now += ms) };
}

interface Script {
  /** `remind` throws while above 0 (counting down). */
  failures: number;
  /** What the `notify` action saw. */
  notified: Array<{ text: string; auth: Auth; attempt: number }>;
}

function testApp(script: Script): AppDefinition {
  const entries = {
    remind: command({
      args: { text: z.string().min(1) },
      handler: async (ctx, args) => {
        if (script.failures > 0) {
          script.failures--;
          throw new Error('mail server down');
        }
        await ctx.db.insertInto('reminders').values({ text: args.text, by: ctx.auth.userId ?? '-', role: `${ctx.auth.kind}:${ctx.auth.role ?? '-'}` }).execute();
      },
    }),
    managersOnly: command({
      policy: 'manager',
      handler: async (ctx) => {
        await ctx.db.insertInto('reminders').values({ text: 'managers', by: ctx.auth.userId ?? '-', role: ctx.auth.role ?? '-' }).execute();
      },
    }),
    notify: action({
      args: { text: z.string() },
      handler: async (ctx, args) => {
        script.notified.push({ text: args.text, auth: ctx.auth, attempt: ctx.event.attempt });
      },
    }),
    schedule: command({
      args: { text: z.string(), delayMs: z.number(), target: z.string().default('remind'), fail: z.boolean().default(false) },
      handler: async (ctx, args) => {
        const id = await ctx.scheduler.runAfter(args.delayMs, args.target, args.target === 'managersOnly' ? {} : { text: args.text });
        if (args.fail) throw new Error('rolled back');
        return { id };
      },
    }),
    scheduleAt: command({
      args: { at: z.number(), text: z.string() },
      handler: async (ctx, args) => ({ id: await ctx.scheduler.runAt(new Date(args.at), 'remind', { text: args.text }) }),
    }),
    scheduleBadly: command({ handler: (ctx) => ctx.scheduler.runAfter(10, 'remind', { text: 42 }) }),
    scheduleUnknown: command({ handler: (ctx) => ctx.scheduler.runAfter(10, 'noSuchCommand', {}) }),
    scheduleThenCancel: command({
      handler: async (ctx) => {
        const id = await ctx.scheduler.runAfter(10, 'remind', { text: 'never' });
        return { cancelled: await ctx.scheduler.cancel(id) };
      },
    }),
    cancel: command({ args: { id: z.string() }, handler: (ctx, args) => ctx.scheduler.cancel(args.id) }),
    // A command whose policy would let its caller manage the tenant's calls (the app's code decides).
    cancelAny: command({ args: { id: z.string() }, handler: (ctx, args) => ctx.scheduler.cancel(args.id, { anyCaller: true }) }),
    // A handler whose SQL an attacker controls: it writes outbox rows itself, or calls fw's functions.
    inject: command({
      args: { tenant: z.string(), role: z.string().nullable(), kind: z.string() },
      handler: async (ctx, args) => {
        await sql`insert into _fw_outbox (event, payload, tenant_id, user_id, caller_kind, caller_role, idempotency_key)
          values ('fw.call:remind', '{"args":{"text":"forged"}}', ${args.tenant}::uuid, ${ctx.auth.userId}, ${args.kind}, ${args.role}, ${`call:${crypto.randomUUID()}`})`.execute(ctx.db);
      },
    }),
    injectRaw: command({ args: { sql: z.string() }, handler: async (ctx, args) => void (await sql.raw(args.sql).execute(ctx.db)) }),
  };
  return { entries: new Map(Object.entries(entries)), policies: { manager: ({ auth }) => auth.role === 'manager' }, schema };
}

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`scheduled calls on ${target.name}`, () => {
    let db: FwDatabase;
    let drop = async () => {};
    const script: Script = { failures: 0, notified: [] };
    const app = testApp(script);
    const workers: OutboxWorker[] = [];
    let clock = manualClock();

    const newWorker = (options: Partial<Omit<OutboxWorkerOptions, 'app' | 'db'>> = {}, on: FwDatabase = db) => {
      const worker = createOutboxWorker({ app, db: on, clock, backoff: { random: () => 0.5, baseMs: 1000 }, onError: () => {}, ...options });
      workers.push(worker);
      return worker;
    };
    // Through the pipeline as a request would, with the test's clock.
    const call = async (name: string, args: unknown = {}, auth: Auth = alice) =>
      (await invokeEntry(entryServices(app, db, { clock }), app.entries.get(name)!, { name, auth, traceId: randomBytes(16).toString('hex'), args, external: true })) as any;
    const reminders = (auth: Auth = alice) => db.transaction({ readOnly: true, auth }, (trx) => trx.selectFrom('reminders').select(['text', 'by', 'role']).orderBy('text').execute());
    const callRows = async () => (await sql<{ n: number }>`select count(*)::int as n from _fw_outbox where event like 'fw.call:%'`.execute(db.admin)).rows[0]!.n;

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      expect((await applyMigration(db, app.schema)).blocked).toEqual([]);
    });

    beforeEach(async () => {
      for (const worker of workers.splice(0)) await worker.stop({ releaseLeases: false });
      await db.admin.deleteFrom('_fw_outbox').execute();
      await db.admin.deleteFrom('reminders').execute();
      Object.assign(script, { failures: 0, notified: [] });
      clock = manualClock();
    });

    afterAll(async () => {
      for (const worker of workers.splice(0)) await worker.stop({ releaseLeases: false });
      await db?.close();
      await drop();
    });

    it('runAfter schedules a command in the command’s transaction; it runs once, when due, as the scheduling caller', async () => {
      const { id } = await call('schedule', { text: 'call back', delayMs: HOUR }, alice);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const [listed] = await listCalls(db.admin);
      expect(listed).toMatchObject({ id, entry: 'remind', status: 'pending', attempts: 0, tenantId: TENANT_A, userId: 'alice' });

      const worker = newWorker();
      expect(await worker.runOnce()).toMatchObject({ claimed: 0 });
      clock.advance(HOUR - 1);
      expect(await worker.runOnce()).toMatchObject({ claimed: 0 });
      clock.advance(1);
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
      // As alice, with her kind and role, in her tenant (row-level security).
      expect(await reminders(alice)).toEqual([{ text: 'call back', by: 'alice', role: 'user:member' }]);
      expect(await reminders(bob)).toEqual([]);
      clock.advance(HOUR);
      expect(await worker.runOnce()).toMatchObject({ claimed: 0 });
      expect(await listCalls(db.admin, { status: 'delivered' })).toMatchObject([{ id, status: 'delivered', attempts: 1 }]);
    });

    it('a command that rolls back schedules nothing; runAt takes a date', async () => {
      await expect(call('schedule', { text: 'x', delayMs: 0, fail: true })).rejects.toThrow('rolled back');
      expect(await callRows()).toBe(0);
      await call('scheduleAt', { at: clock.now() + 2 * HOUR, text: 'at' });
      const worker = newWorker();
      clock.advance(HOUR);
      expect(await worker.runOnce()).toMatchObject({ claimed: 0 });
      clock.advance(HOUR);
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
      expect(await reminders()).toEqual([{ text: 'at', by: 'alice', role: 'user:member' }]);
    });

    it('checks the target and its args when scheduled', async () => {
      await expect(call('scheduleBadly')).rejects.toMatchObject({ code: 'internal', message: expect.stringContaining("ctx.scheduler.runAfter(10, 'remind')") });
      await expect(call('scheduleUnknown')).rejects.toMatchObject({ code: 'internal', message: expect.stringContaining('No command or action named "noSuchCommand"') });
      expect(await callRows()).toBe(0);
    });

    it('cancel: in the same command, from another command of the tenant, never from another tenant', async () => {
      expect(await call('scheduleThenCancel')).toEqual({ cancelled: true });
      expect(await callRows()).toBe(0);

      const { id } = await call('schedule', { text: 'later', delayMs: HOUR });
      // Another tenant never; another member of the tenant only through a command that says so.
      expect(await call('cancel', { id }, bob)).toBe(false);
      expect(await call('cancelAny', { id }, bob)).toBe(false);
      expect(await call('cancel', { id }, anna)).toBe(false);
      expect(await listCalls(db.admin)).toMatchObject([{ id, status: 'pending' }]);
      expect(await call('cancel', { id }, alice)).toBe(true);
      expect(await call('cancel', { id }, alice)).toBe(false);
      const others = await call('schedule', { text: 'later', delayMs: HOUR });
      expect(await call('cancelAny', { id: others.id }, anna)).toBe(true);
      expect(await listCalls(db.admin)).toEqual([]);
      clock.advance(2 * HOUR);
      expect(await newWorker().runOnce()).toMatchObject({ claimed: 0 });
      expect((await listCalls(db.admin, { status: 'cancelled' })).map((c) => c.id).sort()).toEqual([id, others.id].sort());
      expect(await reminders()).toEqual([]);

      // And by an operator (fw schedule cancel).
      const second = await call('schedule', { text: 'later', delayMs: HOUR });
      expect(await cancelCall(db.admin, second.id)).toEqual({ id: second.id, cancelled: true, status: 'cancelled' });
      expect(await cancelCall(db.admin, second.id)).toEqual({ id: second.id, cancelled: false, status: 'cancelled' });
      expect(await cancelCall(db.admin, crypto.randomUUID())).toBeNull();
    });

    it('runs under the target’s policy: a member cannot get a managers’ command run by scheduling it', async () => {
      await call('schedule', { text: '', delayMs: 0, target: 'managersOnly' }, alice);
      await call('schedule', { text: '', delayMs: 0, target: 'managersOnly' }, anna);
      const worker = newWorker();
      expect(await worker.runOnce()).toMatchObject({ claimed: 2, delivered: 1, dead: 1 });
      expect(await reminders()).toEqual([{ text: 'managers', by: 'anna', role: 'manager' }]);
      const [dead] = await listCalls(db.admin, { status: 'dead' });
      expect(dead).toMatchObject({ userId: 'alice', attempts: 1, lastError: 'managersOnly (forbidden): Policy "manager" does not allow this caller.' });
    });

    it('a failing call is retried with backoff, then dead after maxAttempts', async () => {
      script.failures = 5;
      await call('schedule', { text: 'flaky', delayMs: 0 });
      const worker = newWorker({ maxAttempts: 3 });
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, retried: 1 });
      expect(await worker.runOnce()).toMatchObject({ claimed: 0 }); // backoff: 0.5 · 1 s
      clock.advance(500);
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, retried: 1 });
      clock.advance(999);
      expect(await worker.runOnce()).toMatchObject({ claimed: 0 }); // 0.5 · 2 s
      clock.advance(1);
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, dead: 1 });
      expect(await listCalls(db.admin, { status: 'dead' })).toMatchObject([{ entry: 'remind', attempts: 3, lastError: 'remind: mail server down' }]);
      expect(await reminders()).toEqual([]);
    });

    it('an action can be scheduled: it runs as the system on behalf of the caller', async () => {
      await call('schedule', { text: 'ping', delayMs: 10, target: 'notify' }, alice);
      clock.advance(10);
      expect(await newWorker().runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
      expect(script.notified).toEqual([{ text: 'ping', auth: { kind: 'user', userId: 'alice', tenantId: TENANT_A, role: 'member' }, attempt: 1 }]);
    });

    it('a handler’s own SQL cannot schedule, cancel or settle a call — not as another tenant, role or the system, nor as itself', async () => {
      const refused = { code: 'forbidden' };
      await expect(call('inject', { tenant: TENANT_B, role: 'member', kind: 'user' })).rejects.toMatchObject(refused);
      await expect(call('inject', { tenant: TENANT_A, role: 'manager', kind: 'user' })).rejects.toMatchObject(refused);
      await expect(call('inject', { tenant: TENANT_A, role: null, kind: 'system' })).rejects.toMatchObject(refused);
      await expect(call('inject', { tenant: TENANT_A, role: 'member', kind: 'user' })).rejects.toMatchObject(refused);
      expect(await callRows()).toBe(0);
      // PGlite is one superuser session: SQL that attacks (RESET ROLE) has everything there (docs/security.md).
      if (db.dialect !== 'postgres') return;
      // fw's own functions, called by the SQL without fw's proof (or with a made-up one).
      const rows = JSON.stringify([{ event: 'fw.call:remind', payload: { args: { text: 'forged' } }, key: `call:${crypto.randomUUID()}`, trace_id: null, available_at: null }]);
      await expect(call('injectRaw', { sql: `select _fw.enqueue('${rows}', null)` })).rejects.toMatchObject(refused);
      await expect(call('injectRaw', { sql: `select _fw.enqueue('${rows}', '${'0'.repeat(64)}')` })).rejects.toMatchObject(refused);
      expect(await callRows()).toBe(0);
      const { id } = await call('schedule', { text: 'kept', delayMs: HOUR });
      await expect(call('injectRaw', { sql: `select _fw.cancel_call('call:${id}', 'tenant', null)` })).rejects.toMatchObject(refused);
      await expect(call('injectRaw', { sql: `select _fw.settle_call(id, 'w', null) from (select 1::bigint as id) x` })).rejects.toMatchObject(refused);
      expect(await listCalls(db.admin)).toMatchObject([{ id, status: 'pending' }]);
    });

    it('two workers on one database run every call exactly once', async () => {
      for (let i = 0; i < 12; i++) await call('schedule', { text: `r${String(i).padStart(2, '0')}`, delayMs: 1000 });
      clock.advance(1000);
      // On PostgreSQL, two databases (pools) as two processes would have.
      const other = db.driver.kind === 'postgres' ? await createDatabase({ url: db.driver.url }) : db;
      try {
        const a = newWorker({ workerId: 'a', batchSize: 4 });
        const b = newWorker({ workerId: 'b', batchSize: 4 }, other);
        const summaries = await Promise.all([a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]);
        const claimed = summaries.reduce((n, s) => n + s.claimed, 0);
        expect(claimed + (await a.runOnce()).claimed + (await b.runOnce()).claimed).toBe(12);
        const rows = await reminders();
        expect(rows.length).toBe(12);
        expect(new Set(rows.map((r) => r.text)).size).toBe(12);
        expect(await listCalls(db.admin, { status: 'delivered', limit: 100 })).toHaveLength(12);
      } finally {
        if (other !== db) {
          for (const worker of workers.splice(0)) await worker.stop({ releaseLeases: false });
          await other.close();
        }
      }
    });
  });
}
