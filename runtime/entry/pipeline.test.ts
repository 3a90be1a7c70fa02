/**
 * One entry pipeline (pipeline.ts), seen from every caller: the same entry body — cast an argument to
 * uuid in SQL — reached over HTTP as a command and a query, as an endpoint, as an agent's tool, as a
 * live rerun, as an action and as a workflow run. Each caller reports in its own form (a JSON error, an
 * error frame, a tool result, the outbox's last_error), and every one of them says the same thing:
 * the same policy denial, the same validation error, and a database error mapped to the same code
 * with the argument it came from.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import { openEventStream, serveLiveRuntime, type LiveTestRuntime } from '../../e2e/support/live-server.ts';
import { until } from '../../e2e/support/until.ts';
import { agent } from '../core/ai-definitions.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { action, command, definePolicies, endpoint, liveQuery, query, workflow } from '../core/entries.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { createOutboxWorker } from '../app/outbox-worker.ts';
import type { FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';

const schema = defineSchema({ marks: table({ id: t.uuid().primaryKey().defaultRandom(), label: t.text() }) });

const args = { ref: z.string(), n: z.number().int().min(1) };
/** The shared body: a class-22 error (`invalid input syntax for type uuid`) when `ref` is not a uuid. */
const castRef = async (db: any, ref: string) => (await sql<{ ref: string }>`select ${ref}::uuid as ref`.execute(db)).rows[0]!.ref;

function testApp(): AppDefinition {
  const entries = {
    probeCommand: command({ args, tool: { needsApproval: false }, handler: (ctx, a) => castRef(ctx.db, a.ref) }),
    probeQuery: query({ args, handler: (ctx, a) => castRef(ctx.db, a.ref) }),
    // Casts only once a mark exists: the first run succeeds, the rerun a write causes fails.
    probeLive: liveQuery({
      args,
      handler: async (ctx, a) => ((await ctx.db.selectFrom('marks').select('id').execute()).length > 0 ? castRef(ctx.db, a.ref) : 'no marks yet'),
    }),
    probeEndpoint: endpoint({ method: 'POST', path: '/api/probe', args, handler: (ctx, a) => castRef(ctx.db, a.ref) }),
    probeAction: action({ on: 'probe.action', args, handler: (ctx, a) => castRef(ctx.db, a.ref) }),
    probeWorkflow: workflow({ on: 'probe.workflow', args, handler: (ctx, a) => castRef(ctx.db, a.ref) }),
    deniedCommand: command({ args, policy: 'nobody', tool: { needsApproval: false }, handler: () => 'never' }),
    deniedQuery: query({ args, policy: 'nobody', handler: () => 'never' }),
    deniedLive: liveQuery({ args, policy: 'nobody', handler: () => 'never' }),
    deniedEndpoint: endpoint({ method: 'POST', path: '/api/denied', args, policy: 'nobody', handler: () => 'never' }),
    mark: command({ handler: (ctx) => ctx.db.insertInto('marks').values({ label: 'x' }).execute().then(() => 'marked') }),
    emit: command({ args: { event: z.string(), payload: z.unknown() }, handler: (ctx, a) => ctx.emit(a.event, a.payload) }),
  };
  const prober = agent({
    provider: 'mock',
    model: 'fw-mock',
    tools: { probeCommand: entries.probeCommand, probeQuery: entries.probeQuery, deniedCommand: entries.deniedCommand },
  });
  return {
    entries: new Map(Object.entries(entries)),
    policies: definePolicies({ nobody: () => false }),
    schema,
    agents: new Map([['prober', prober]]),
  };
}

/** What a caller was told: fw's code, and the path of the first diagnostic when the form carries diagnostics. */
interface Told {
  code: string;
  path?: string;
}

const notUuid = 'not-a-uuid';
const badArgs = { ref: randomUUID(), n: 0 };
const castFails = { ref: notUuid, n: 1 };

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`one entry pipeline, every caller (${target.name})`, () => {
    let db: FwDatabase;
    let runtime: LiveTestRuntime;
    let url: string;
    let drop = async () => {};
    const app = testApp();

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      await applyMigration(db, app.schema);
      runtime = await serveLiveRuntime(app, db, { pollIntervalMs: 100 });
      url = runtime.url;
    });
    afterAll(async () => {
      await runtime?.close();
      await db?.close();
      await drop();
    });

    const caller = () => ({ 'x-fw-user-id': 'u1', 'x-fw-tenant-id': randomUUID(), 'content-type': 'application/json' });
    const post = async (path: string, body: unknown, headers = caller()) => {
      const response = await fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as any };
    };
    const toldByJson = (body: any): Told => ({ code: body.error.code, ...(body.error.diagnostics[0] ? { path: body.error.diagnostics[0].path } : {}) });

    /** Each caller path: how it calls an entry with args, and what it was told. */
    const paths: Record<string, { call(name: 'probe' | 'denied', given: unknown): Promise<Told | 'not offered'> }> = {
      'HTTP command': {
        async call(name, given) {
          const { status, body } = await post(`/commands/${name}Command`, { args: given });
          expect(status).toBe(body.error.code === 'forbidden' ? 403 : 400);
          return toldByJson(body);
        },
      },
      'HTTP query': {
        async call(name, given) {
          return toldByJson((await post(`/queries/${name}Query`, { args: given })).body);
        },
      },
      endpoint: {
        async call(name, given) {
          return toldByJson((await post(`/api/${name}`, given)).body);
        },
      },
      'live rerun': {
        async call(name, given) {
          const headers = caller();
          const href = `${url}/live/${name}Live?args=${encodeURIComponent(JSON.stringify(given))}`;
          // Refused before the first run (policy, args): a JSON error instead of a stream.
          const first = await fetch(href, { headers });
          if (first.status !== 200) return toldByJson(await first.json());
          await first.body?.cancel();
          const stream = await openEventStream(href, { headers });
          try {
            expect((await stream.next()).json.result).toBe('no marks yet');
            expect((await post('/commands/mark', { args: {} }, headers)).status).toBe(200);
            const frame = await stream.nextWhere((event) => event.event === 'error');
            return { code: frame.json.error.code, path: frame.json.error.diagnostics[0]?.path };
          } finally {
            stream.close();
          }
        },
      },
      'agent tool': {
        async call(name, given) {
          const { status, body } = await post('/ai/agents/run', { agent: 'prober', prompt: `${name}Command ${JSON.stringify(given)}` });
          expect(status).toBe(200);
          const result = body.result.toolResults.find((r: any) => r.toolName === `${name}Command`);
          // A tool the caller may not call is never offered: the model cannot call it.
          if (!result) return 'not offered';
          return { code: result.error.code };
        },
      },
      action: {
        async call(name, given) {
          return deliver(name === 'denied' ? undefined : 'probe.action', given);
        },
      },
      'workflow run': {
        async call(name, given) {
          return deliver(name === 'denied' ? undefined : 'probe.workflow', given);
        },
      },
    };

    /** Emits `event` with `payload` and delivers it once: what the outbox kept as the attempt's error. */
    async function deliver(event: string | undefined, payload: unknown): Promise<Told | 'not offered'> {
      // Actions and workflows have no callers outside fw: no policy applies to them.
      if (event === undefined) return 'not offered';
      const headers = caller();
      const emitted = await post('/commands/emit', { args: { event, payload } }, headers);
      expect(emitted.status).toBe(200);
      const worker = createOutboxWorker({ app, db, backoff: { baseMs: 60_000, capMs: 60_000 } });
      // The event's row, and for a workflow the run's row it starts (same trace): the first error either keeps.
      const lastError = async () =>
        (await db.admin.selectFrom('_fw_outbox').select(['last_error']).where('trace_id', '=', emitted.body.traceId).where('last_error', 'is not', null).executeTakeFirst())?.last_error as
          | string
          | undefined;
      const message = await until(async () => (await lastError()) ?? ((await worker.runOnce()), await lastError()), `an attempt at ${event} to fail`);
      const code = /^\w+ \((\w+)\):/.exec(message)?.[1];
      return { code: code ?? `(no code) ${message}` };
    }

    const expected: Record<string, { denied: Told | 'not offered'; invalid: Told; cast: Told }> = {
      'HTTP command': { denied: { code: 'forbidden' }, invalid: { code: 'validation_failed', path: 'args.n' }, cast: { code: 'validation_failed', path: 'args.ref' } },
      'HTTP query': { denied: { code: 'forbidden' }, invalid: { code: 'validation_failed', path: 'args.n' }, cast: { code: 'validation_failed', path: 'args.ref' } },
      endpoint: { denied: { code: 'forbidden' }, invalid: { code: 'validation_failed', path: 'args.n' }, cast: { code: 'validation_failed', path: 'args.ref' } },
      'live rerun': { denied: { code: 'forbidden' }, invalid: { code: 'validation_failed', path: 'args.n' }, cast: { code: 'validation_failed', path: 'args.ref' } },
      'agent tool': { denied: 'not offered', invalid: { code: 'validation_failed' }, cast: { code: 'validation_failed' } },
      action: { denied: 'not offered', invalid: { code: 'validation_failed' }, cast: { code: 'validation_failed' } },
      'workflow run': { denied: 'not offered', invalid: { code: 'validation_failed' }, cast: { code: 'validation_failed' } },
    };

    for (const [path, { call }] of Object.entries(paths)) {
      describe(path, () => {
        it('refuses a caller the policy refuses', async () => {
          expect(await call('denied', castFails)).toEqual(expected[path]!.denied);
        });
        it('refuses args that fail the schema, naming the argument', async () => {
          expect(await call('probe', badArgs)).toEqual(expected[path]!.invalid);
        });
        it('maps a database error to its code and the argument that sent the value', async () => {
          expect(await call('probe', castFails)).toEqual(expected[path]!.cast);
        });
      });
    }
  });
}
