import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import type { FwDatabase } from '../db/database.ts';
import { systemTables } from '../db/ddl.ts';
import { applyMigration, ensureSystemTables } from '../db/migrate.ts';
import { type ActionEvent, action, type Auth, command, liveQuery } from '../core/entries.ts';
import { callEntry } from '../app/call-entry.ts';
import { type LiveTestRuntime, openEventStream, serveLiveRuntime } from '../../e2e/support/live-server.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { createOutboxWorker, type OutboxWorkerOptions } from '../app/outbox-worker.ts';
import { type OutboxWorker } from './worker.ts';
import { until } from '../../e2e/support/until.ts';

const TENANT_A = '00000000-0000-4000-8000-00000000000a';
const TENANT_B = '00000000-0000-4000-8000-00000000000b';
const alice: Auth = { kind: 'user', userId: 'alice', tenantId: TENANT_A, role: 'member' };
const bob: Auth = { kind: 'user', userId: 'bob', tenantId: TENANT_B, role: 'member' };
const aliceHeaders = { 'x-fw-user-id': 'alice', 'x-fw-tenant-id': TENANT_A, 'x-fw-role': 'member' };

const schema = defineSchema({
  notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text() }),
  audit: table({ id: t.uuid().primaryKey().defaultRandom(), text: t.text(), created_at: t.timestamptz().defaultNow() }),
});

interface Call {
  action: string;
  args: unknown;
  event: ActionEvent;
  auth: Auth;
  traceId: string;
}

/** What the test actions do, changed by each test. */
interface Script {
  calls: Call[];
  /** `flaky` throws while this says so. */
  failFlaky: boolean;
  /** `slow` waits for this before it finishes (once: the gate is taken by the first call). */
  gate: { started: () => void; release: Promise<void> } | undefined;
}

function testApp(script: Script): AppDefinition {
  const record = (name: string) => (ctx: { event: ActionEvent; auth: Auth; traceId: string }, args: unknown) =>
    script.calls.push({ action: name, args, event: ctx.event, auth: ctx.auth, traceId: ctx.traceId });
  const entries = {
    createNote: command({
      args: { title: z.string().min(1) },
      handler: async (ctx, args) => {
        const note = await ctx.db.insertInto('notes').values({ title: args.title }).returningAll().executeTakeFirstOrThrow();
        ctx.emit('note.created', { noteId: note.id, title: note.title });
        return note;
      },
    }),
    createThenFail: command({
      args: { title: z.string() },
      handler: async (ctx, args) => {
        await ctx.db.insertInto('notes').values({ title: args.title }).execute();
        ctx.emit('note.created', { noteId: randomUuid(), title: args.title });
        throw new Error('boom after emit');
      },
    }),
    emit: command({
      args: { event: z.string(), payload: z.unknown().optional(), times: z.number().int().min(1).max(100).default(1) },
      handler: (ctx, args) => {
        for (let n = 0; n < args.times; n++) ctx.emit(args.event, args.times > 1 ? { n } : args.payload);
        return 'ok';
      },
    }),
    liveAudit: liveQuery({ handler: (ctx) => ctx.db.selectFrom('audit').select(['text']).orderBy('text').execute() }),

    // Actions. Their policy does not matter: the worker runs them as the system, for the event's caller.
    onNoteCreated: action({
      on: 'note.created',
      policy: 'admin',
      args: { noteId: z.uuid(), title: z.string() },
      handler: async (ctx, args) => {
        record('onNoteCreated')(ctx, args);
        await ctx.db.insertInto('audit').values({ text: `created ${args.title}` }).execute();
      },
    }),
    flaky: action({
      on: 'flaky',
      handler: (ctx, args) => {
        record('flaky')(ctx, args);
        if (script.failFlaky) throw new Error(`  upstream said no (attempt ${ctx.event.attempt})\n`);
      },
    }),
    slow: action({
      on: 'slow',
      handler: async (ctx, args) => {
        record('slow')(ctx, args);
        const gate = script.gate;
        script.gate = undefined;
        if (gate) {
          gate.started();
          await gate.release;
        }
      },
    }),
    counted: action({ on: 'counted', args: { n: z.number() }, handler: (ctx, args) => void record('counted')(ctx, args) }),
    grouped: action({
      on: 'grouped',
      handler: async (ctx, args) => {
        record('grouped')(ctx, args);
        await ctx.db.insertInto('audit').values({ text: 'grouped: alone' }).execute();
        await ctx.db.transaction().execute(async (trx) => {
          await trx.insertInto('audit').values({ text: 'grouped: together 1' }).execute();
          await trx.insertInto('audit').values({ text: 'grouped: together 2' }).execute();
          if (ctx.event.attempt === 1) throw new Error('roll the group back');
        });
      },
    }),
    summarize: action({
      on: 'note.summarize',
      args: { title: z.string() },
      handler: async (ctx, args) => {
        record('summarize')(ctx, args);
        const { object } = await ctx.ai.generateStructured({
          prompt: `Summarise the note titled ${args.title}.`,
          schema: z.object({ summary: z.string(), mood: z.enum(['calm', 'urgent']) }),
        });
        await ctx.db.insertInto('audit').values({ text: `summary ${object.mood}` }).execute();
      },
    }),
  };
  return { entries: new Map(Object.entries(entries)), policies: { admin: ({ auth }) => auth.role === 'admin' }, schema };
}

function randomUuid(): string {
  return crypto.randomUUID();
}

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`the outbox worker on ${target.name}`, () => {
    let db: FwDatabase;
    let drop = async () => {};
    const script: Script = { calls: [], failFlaky: false, gate: undefined };
    const app = testApp(script);
    const errors: string[] = [];
    const workers: OutboxWorker[] = [];

    const newWorker = (options: Partial<Omit<OutboxWorkerOptions, 'app' | 'db'>> = {}) => {
      const worker = createOutboxWorker({ app, db, ai: { env: { FW_AI: 'mock' } }, onError: (e) => errors.push(e instanceof Error ? e.message : String(e)), ...options });
      workers.push(worker);
      return worker;
    };
    const run = async (name: string, args: unknown, auth: Auth = alice) => {
      const traceId = randomBytes(16).toString('hex');
      const result = await callEntry(app, db, app.entries.get(name)!, { auth, traceId, args, external: true });
      return { result, traceId };
    };
    const rows = async (traceId: string) =>
      (await db.admin.selectFrom('_fw_outbox').selectAll().where('trace_id', '=', traceId).orderBy('id').execute()) as Array<Record<string, any>>;
    const audit = async (tenant = alice) =>
      db.transaction({ readOnly: true, auth: tenant }, (trx) => trx.selectFrom('audit').select('text').orderBy('text').execute()).then((r) => r.map((a) => a.text as string));

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      const migration = await applyMigration(db, app.schema);
      expect(migration.blocked).toEqual([]);
    });

    beforeEach(async () => {
      for (const worker of workers.splice(0)) await worker.stop({ releaseLeases: false });
      await db.admin.deleteFrom('_fw_outbox').execute();
      await db.admin.deleteFrom('audit').execute();
      script.calls.length = 0;
      script.failFlaky = false;
      script.gate = undefined;
      errors.length = 0;
    });

    afterAll(async () => {
      for (const worker of workers.splice(0)) await worker.stop({ releaseLeases: false });
      await db?.close();
      await drop();
    });

    it('runs the action after the commit, once, as the event’s emitter, with the payload and the idempotency key', async () => {
      const { result, traceId } = await run('createNote', { title: 'Milk' });
      const note = result as { id: string };
      const [pending] = await rows(traceId);
      expect(pending).toMatchObject({ event: 'note.created', status: 'pending', attempts: 0, tenant_id: TENANT_A, user_id: 'alice', lease_owner: null });
      expect(pending!.idempotency_key).toMatch(/^[0-9a-f-]{36}$/);
      expect(script.calls).toEqual([]);

      const worker = newWorker({ workerId: 'w1' });
      expect(await worker.runOnce()).toEqual({ claimed: 1, delivered: 1, retried: 0, waiting: 0, dead: 0, leaseLost: 0 });
      expect(script.calls).toEqual([
        {
          action: 'onNoteCreated',
          args: { noteId: note.id, title: 'Milk' },
          event: { name: 'note.created', payload: { noteId: note.id, title: 'Milk' }, id: String(pending!.id), idempotencyKey: pending!.idempotency_key, attempt: 1 },
          auth: alice,
          traceId,
        },
      ]);
      const [delivered] = await rows(traceId);
      expect(delivered).toMatchObject({ status: 'delivered', attempts: 1, lease_owner: null, lease_until: null, last_error: null, dead_at: null });
      expect(delivered!.delivered_at).toBeInstanceOf(Date);
      // The action's write went to alice's tenant, under row-level security.
      expect(await audit(alice)).toEqual(['created Milk']);
      expect(await audit(bob)).toEqual([]);

      expect(await worker.runOnce()).toMatchObject({ claimed: 0 });
      expect(script.calls).toHaveLength(1);
      expect(worker.status()).toMatchObject({ workerId: 'w1', state: 'idle', claimed: 1, delivered: 1, inFlight: 0 });
      expect(errors).toEqual([]);
    });

    it('a command that rolls back emits nothing', async () => {
      const traceId = randomBytes(16).toString('hex');
      await expect(callEntry(app, db, app.entries.get('createThenFail')!, { auth: alice, traceId, args: { title: 'x' }, external: true })).rejects.toThrow(/boom/);
      expect(await rows(traceId)).toEqual([]);
      expect(await newWorker().runOnce()).toMatchObject({ claimed: 0 });
      expect(script.calls).toEqual([]);
    });

    it('marks an event nobody listens for delivered, with a note, and a payload the action refuses dead', async () => {
      const nobody = await run('emit', { event: 'nobody.listens', payload: { a: 1 } });
      const invalid = await run('emit', { event: 'note.created', payload: { noteId: 'not-a-uuid' } });
      expect(await newWorker().runOnce()).toMatchObject({ claimed: 2, delivered: 1, dead: 1 });
      expect((await rows(nobody.traceId))[0]).toMatchObject({ status: 'delivered', last_error: expect.stringContaining('No action or workflow listens for "nobody.listens"') });
      const [dead] = await rows(invalid.traceId);
      expect(dead).toMatchObject({ status: 'dead', attempts: 1, last_error: expect.stringMatching(/^onNoteCreated \(validation_failed\): Invalid args: args\.noteId: .*args\.title/) });
      expect(dead!.dead_at).toBeInstanceOf(Date);
      expect(script.calls).toEqual([]);
    });

    it('retries a failing action with growing backoff, the same idempotency key each time, then dead-letters it', async () => {
      script.failFlaky = true;
      const { traceId } = await run('emit', { event: 'flaky' });
      // Delays of a minute and more: "not due yet" holds however slow this machine is.
      const delays: number[] = [];
      const worker = newWorker({
        maxAttempts: 4,
        backoff: { baseMs: 60_000, capMs: 600_000, random: () => 1 },
        onOutcome: (outcome) => outcome.kind === 'retry' && delays.push(outcome.delayMs!),
      });
      for (let attempt = 1; attempt <= 3; attempt++) {
        expect(await worker.runOnce()).toEqual({ claimed: 1, delivered: 0, retried: 1, waiting: 0, dead: 0, leaseLost: 0 });
        const [row] = await rows(traceId);
        expect(row).toMatchObject({ status: 'pending', attempts: attempt, lease_owner: null, lease_until: null, last_error: `flaky: upstream said no (attempt ${attempt})` });
        // The row waits the attempt's delay, by the database's clock (less the moments since it was written).
        const wait = await sql<{ ms: number }>`select (extract(epoch from available_at - now()) * 1000)::float8 as ms from _fw_outbox where id = ${row!.id}`.execute(db.admin);
        const ms = Number(wait.rows[0]!.ms);
        expect(ms).toBeGreaterThan(delays[attempt - 1]! - 30_000);
        expect(ms).toBeLessThanOrEqual(delays[attempt - 1]!);
        // Not due yet: nothing to claim until available_at.
        expect(await worker.runOnce()).toMatchObject({ claimed: 0 });
        await db.admin.updateTable('_fw_outbox').set({ available_at: sql`now()` }).where('id', '=', row!.id).execute();
      }
      // The ceiling doubles per attempt (random 1 takes the ceiling itself).
      expect(delays).toEqual([60_000, 120_000, 240_000]);

      expect(await worker.runOnce()).toEqual({ claimed: 1, delivered: 0, retried: 0, waiting: 0, dead: 1, leaseLost: 0 });
      const [dead] = await rows(traceId);
      expect(dead).toMatchObject({ status: 'dead', attempts: 4, last_error: 'flaky: upstream said no (attempt 4)', lease_owner: null });
      expect(script.calls.map((c) => c.event.attempt)).toEqual([1, 2, 3, 4]);
      expect(new Set(script.calls.map((c) => c.event.idempotencyKey))).toEqual(new Set([dead!.idempotency_key]));
      expect(errors).toEqual([1, 2, 3, 4].map((n) => `action flaky:   upstream said no (attempt ${n})\n`));
      expect(await worker.runOnce()).toMatchObject({ claimed: 0 });
    });

    it('a worker killed mid-delivery loses its lease; another worker delivers the event again with the same key', async () => {
      let started!: () => void;
      const handlerStarted = new Promise<void>((resolve) => (started = resolve));
      let release!: () => void;
      script.gate = { started, release: new Promise<void>((resolve) => (release = resolve)) };
      const { traceId } = await run('emit', { event: 'slow' });

      const a = newWorker({ workerId: 'worker-a', leaseMs: 300 });
      const aRun = a.runOnce();
      await handlerStarted;
      expect((await rows(traceId))[0]).toMatchObject({ status: 'pending', lease_owner: 'worker-a', attempts: 1 });
      await a.stop({ releaseLeases: false }); // a crash: no renewals, no release

      // Nobody renews a's lease any more: it runs out by the database's clock (a running worker renews
      // it every 100 ms, so it would not). That b may not take a live lease is the next test's.
      await until(async () => {
        const lease = await sql<{ expired: boolean }>`select lease_until < now() as expired from _fw_outbox where trace_id = ${traceId} and lease_owner = 'worker-a'`.execute(db.admin);
        return lease.rows[0]?.expired === true;
      }, 'worker-a’s lease to run out');
      const b = newWorker({ workerId: 'worker-b', leaseMs: 60_000 });
      expect(await b.runOnce()).toEqual({ claimed: 1, delivered: 1, retried: 0, waiting: 0, dead: 0, leaseLost: 0 });
      const [row] = await rows(traceId);
      expect(row).toMatchObject({ status: 'delivered', attempts: 2, lease_owner: null, last_error: null });
      expect(script.calls.map((c) => c.event.attempt)).toEqual([1, 2]);
      expect(script.calls[0]!.event.idempotencyKey).toBe(row!.idempotency_key);
      expect(script.calls[1]!.event.idempotencyKey).toBe(row!.idempotency_key);

      // The stopped worker's handler finally returns: its outcome is dropped, b's stands.
      release();
      expect(await aRun).toEqual({ claimed: 1, delivered: 0, retried: 0, waiting: 0, dead: 0, leaseLost: 0 });
      expect((await rows(traceId))[0]).toMatchObject({ status: 'delivered', attempts: 2 });
      expect(errors).toEqual([]);
    });

    it('renews the lease of a slow delivery, so a second worker never takes it while it runs', async () => {
      let started!: () => void;
      const handlerStarted = new Promise<void>((resolve) => (started = resolve));
      let release!: () => void;
      script.gate = { started, release: new Promise<void>((resolve) => (release = resolve)) };
      const { traceId } = await run('emit', { event: 'slow' });
      // Renewed every second: b could only slip in if a renewal came 2 s late.
      const a = newWorker({ workerId: 'worker-a', leaseMs: 3000 });
      const aRun = a.runOnce();
      await handlerStarted;
      const lease = async () =>
        (await sql<{ until: string }>`select lease_until::text as until from _fw_outbox where trace_id = ${traceId} and lease_owner = 'worker-a'`.execute(db.admin)).rows[0]?.until;
      const first = await lease();
      expect(first).toEqual(expect.any(String));
      const b = newWorker({ workerId: 'worker-b', leaseMs: 3000 });
      // b tries all along, until the lease a held then has run out by the database's clock and a renewed
      // one holds the row: b never gets it.
      await until(async () => {
        expect(await b.runOnce()).toMatchObject({ claimed: 0 });
        const now = await sql<{ past: boolean; renewed: boolean }>`
          select now() > ${first}::timestamptz as past, lease_until > ${first}::timestamptz as renewed
          from _fw_outbox where trace_id = ${traceId} and lease_owner = 'worker-a'`.execute(db.admin);
        return now.rows[0]?.past === true && now.rows[0].renewed === true;
      }, 'a renewed lease outliving the first one');
      expect(await b.runOnce()).toMatchObject({ claimed: 0 });
      release();
      expect(await aRun).toEqual({ claimed: 1, delivered: 1, retried: 0, waiting: 0, dead: 0, leaseLost: 0 });
      expect((await rows(traceId))[0]).toMatchObject({ status: 'delivered', attempts: 1, lease_owner: null });
      expect(script.calls).toHaveLength(1);
      expect(errors).toEqual([]);
    });

    it('two running workers deliver every row exactly once (SKIP LOCKED)', async () => {
      await run('emit', { event: 'counted', times: 40 });
      const a = newWorker({ workerId: 'worker-a', batchSize: 3, pollMs: 5 });
      const b = newWorker({ workerId: 'worker-b', batchSize: 3, pollMs: 5 });
      a.start();
      b.start();
      await until(async () => {
        const left = await db.admin.selectFrom('_fw_outbox').select(sql<number>`count(*)::int`.as('n')).where('status', '<>', 'delivered').executeTakeFirstOrThrow();
        return left.n === 0;
      }, 'every row delivered', { intervalMs: 25 });
      await Promise.all([a.stop(), b.stop()]);
      const seen = script.calls.map((c) => (c.args as { n: number }).n).sort((x, y) => x - y);
      expect(seen).toEqual(Array.from({ length: 40 }, (_, n) => n));
      expect(a.status().delivered + b.status().delivered).toBe(40);
      expect(a.status()).toMatchObject({ state: 'stopped', inFlight: 0, leaseLost: 0 });
      expect(b.status()).toMatchObject({ state: 'stopped', inFlight: 0, leaseLost: 0 });
      expect(errors).toEqual([]);
      const attempts = await db.admin.selectFrom('_fw_outbox').select('attempts').distinct().execute();
      expect(attempts).toEqual([{ attempts: 1 }]);
    });

    it('ctx.db commits statement by statement; ctx.db.transaction() groups statements and rolls them back together', async () => {
      const { traceId } = await run('emit', { event: 'grouped' });
      const worker = newWorker({ backoff: { baseMs: 0, capMs: 0 } });
      expect(await worker.runOnce()).toMatchObject({ retried: 1 });
      expect(await audit()).toEqual(['grouped: alone']);
      expect(await worker.runOnce()).toMatchObject({ delivered: 1 });
      expect(await audit()).toEqual(['grouped: alone', 'grouped: alone', 'grouped: together 1', 'grouped: together 2']);
      expect((await rows(traceId))[0]).toMatchObject({ status: 'delivered', attempts: 2 });
    });

    it('runs ctx.ai.generateStructured with the mock model in an action, traced under the event’s trace id', async () => {
      const { traceId } = await run('emit', { event: 'note.summarize', payload: { title: 'Quarterly report' } });
      expect(await newWorker().runOnce()).toMatchObject({ delivered: 1 });
      expect(errors).toEqual([]);
      expect(await audit()).toEqual(['summary calm']);
      const traces = await db.admin.selectFrom('_fw_ai_runs').select(['kind', 'provider', 'status', 'tenant_id', 'user_id']).where('trace_id', '=', traceId).execute();
      expect(traces).toEqual([{ kind: 'generate-structured', provider: 'mock', status: 'completed', tenant_id: TENANT_A, user_id: 'alice' }]);
    });

    it('stop() waits for running deliveries; started workers deliver soon after the commit', async () => {
      const worker = newWorker({ pollMs: 10 });
      worker.start();
      expect(worker.status().state).toBe('running');
      const { traceId } = await run('createNote', { title: 'Eggs' });
      await until(async () => (await rows(traceId))[0]?.status === 'delivered', 'the delivery', { intervalMs: 25 });
      await worker.stop();
      expect(worker.status()).toMatchObject({ state: 'stopped', delivered: 1, inFlight: 0 });
    });

    describe('over HTTP', () => {
      let runtime: LiveTestRuntime;
      let url: string;
      beforeAll(async () => {
        runtime = await serveLiveRuntime(app, db, { pollIntervalMs: 50 });
        url = runtime.url;
      });
      afterAll(() => runtime?.close());
      const post = async (path: string, args: unknown) => {
        const response = await fetch(url + path, { method: 'POST', headers: { ...aliceHeaders, 'content-type': 'application/json' }, body: JSON.stringify({ args }) });
        return { status: response.status, body: (await response.json()) as any };
      };

      it('an action’s writes reach live queries', async () => {
        const stream = await openEventStream(`${url}/live/liveAudit`, { headers: aliceHeaders });
        try {
          const first = await stream.next(30_000);
          expect(first.json.result).toEqual([]);
          expect((await post('/commands/createNote', { title: 'Bread' })).status).toBe(200);
          expect(await newWorker().runOnce()).toEqual({ claimed: 1, delivered: 1, retried: 0, waiting: 0, dead: 0, leaseLost: 0 });
          const update = await stream.nextWhere((e) => e.event === 'snapshot' && e.json.result.length > 0, 30_000);
          expect(update.json.result).toEqual([{ text: 'created Bread' }]);
          expect(update.json.revision).not.toBe(first.json.revision); // a later revision (opaque per tenant)
        } finally {
          stream.close();
        }
      });

      it('never serves actions over HTTP, whatever their policy', async () => {
        for (const path of ['/commands/onNoteCreated', '/queries/onNoteCreated', '/commands/flaky']) {
          const response = await post(path, { noteId: randomUuid(), title: 'x' });
          expect(response.status, path).toBe(404);
          expect(response.body.error.code).toBe('not_found');
        }
        const entries = (await (await fetch(`${url}/entries`)).json()) as { entries: Array<{ name: string; kind: string; route?: string }> };
        expect(entries.entries.find((e) => e.name === 'onNoteCreated')).toEqual({ name: 'onNoteCreated', kind: 'action', policy: 'admin' });
        await expect(callEntry(app, db, app.entries.get('flaky')!, { auth: { kind: 'system', userId: null, tenantId: null, role: null }, traceId: 'trace-internal-1', args: {}, external: false })).rejects.toThrow(/not callable/);
      });

      it('GET /_fw/outbox shows counts, the oldest pending row and dead rows with their last error', async () => {
        await run('emit', { event: 'note.created', payload: { noteId: 'bad' } });
        expect(await newWorker().runOnce()).toEqual({ claimed: 1, delivered: 0, retried: 0, waiting: 0, dead: 1, leaseLost: 0 });
        await run('emit', { event: 'counted', payload: { n: 1 } });
        const overview = (await (await fetch(`${url}/_fw/outbox`)).json()) as any;
        expect(overview).toMatchObject({ counts: { pending: 1, delivered: 0, dead: 1 }, leased: 0, oldestPending: { event: 'counted', attempts: 0 } });
        expect(overview.dead).toEqual([expect.objectContaining({ event: 'note.created', attempts: 1, lastError: expect.stringContaining('Invalid args'), tenantId: TENANT_A })]);
      });
    });

    it('adds the worker’s columns to an outbox made by an earlier fw, and the app role may not touch it', async () => {
      let other: FwDatabase;
      let dropOther = async () => {};
      ({ db: other, drop: dropOther } = await openTestDatabase(target));
      try {
        // The outbox as fw created it before the worker existed, with rows waiting in it.
        const original = systemTables.find((table) => table.name === '_fw_outbox')!.create[0]!;
        await sql.raw(original).execute(other.admin);
        await sql.raw(`insert into _fw_outbox (event, payload) values ('old.one', '{}'), ('old.two', null)`).execute(other.admin);
        await ensureSystemTables(other);
        await ensureSystemTables(other);
        const old = await other.admin.selectFrom('_fw_outbox').select(['event', 'status', 'idempotency_key', 'lease_owner', 'dead_at']).orderBy('id').execute();
        expect(old.map((r) => r.event)).toEqual(['old.one', 'old.two']);
        expect(new Set(old.map((r) => r.idempotency_key)).size).toBe(2);
        expect(old.every((r) => typeof r.idempotency_key === 'string' && r.status === 'pending' && r.lease_owner === null)).toBe(true);

        await expect(other.transaction({ readOnly: false, auth: alice }, (trx) => trx.insertInto('_fw_outbox').values({ event: 'new.one' }).execute())).rejects.toThrow(/permission denied/);
        await expect(other.transaction({ readOnly: true, auth: alice }, (trx) => trx.selectFrom('_fw_outbox').selectAll().execute())).rejects.toThrow(/permission denied/);
        await expect(other.transaction({ readOnly: false, auth: alice }, (trx) => trx.updateTable('_fw_outbox').set({ status: 'delivered' }).execute())).rejects.toThrow(/permission denied/);
        await expect(
          other.admin.insertInto('_fw_outbox').values({ event: 'dup', idempotency_key: old[0]!.idempotency_key }).execute(),
        ).rejects.toThrow(/duplicate key|unique/);
      } finally {
        await other.close();
        await dropOther();
      }
    });
  });
}
