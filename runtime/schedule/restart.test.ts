import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTestPostgresDatabase, testDatabaseUrl } from '../../e2e/support/postgres.ts';
import { until } from '../../e2e/support/until.ts';
import { createDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { command, workflow } from '../core/entries.ts';
import { crons } from '../core/crons.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import type { Clock } from '../core/clock.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { createRuntime, type Runtime } from '../create-runtime.ts';

const TENANT_A = '00000000-0000-4000-8000-00000000000a';
const HOUR = 3600_000;
const schema = defineSchema({ journal: table({ id: t.uuid().primaryKey().defaultRandom(), text: t.text() }) });

const app: AppDefinition = {
  entries: new Map(
    Object.entries({
      write: command({ args: { text: z.string() }, handler: async (ctx, args) => void (await ctx.db.insertInto('journal').values({ text: args.text }).execute()) }),
      plan: command({
        handler: async (ctx) => {
          const id = await ctx.scheduler.runAfter(HOUR, 'write', { text: `called back for ${ctx.auth.userId}` });
          await ctx.startWorkflow('trial', {});
          return { id };
        },
      }),
      trial: workflow({
        handler: async (ctx) => {
          await ctx.step('start', () => ctx.db.insertInto('journal').values({ text: 'trial started' }).execute().then(() => null));
          await ctx.sleep('wait', '2h');
          await ctx.step('end', () => ctx.db.insertInto('journal').values({ text: 'trial ended' }).execute().then(() => null));
        },
      }),
    }),
  ),
  policies: {},
  schema,
  crons: new Map(Object.entries(crons({ hourly: { every: '1h', call: 'write', args: { text: 'hourly' }, tenant: TENANT_A } }))),
};

/**
 * The real assembly (createRuntime: HTTP handler, worker, crons) twice on one PostgreSQL database, as
 * two deployments of a process: the first schedules and stops, the second — started after the times
 * passed — runs everything once. The test's clock stands in for the hours in between.
 */
describe.skipIf(!testDatabaseUrl)('scheduled calls, crons and a sleeping workflow across a restart (PostgreSQL)', () => {
  let url = '';
  let drop = async () => {};
  let now = Math.ceil((Date.now() + 2 * 60_000) / HOUR) * HOUR + 60_000; // just after a whole hour, ahead of the database
  const clock: Clock = { now: () => now, at: () => () => {} };

  beforeAll(async () => {
    ({ url, drop } = await createTestPostgresDatabase());
    const db = await createDatabase({ url });
    expect((await applyMigration(db, schema)).blocked).toEqual([]);
    await db.close();
  });
  afterAll(() => drop());

  async function start(): Promise<{ runtime: Runtime; base: string; server: Server }> {
    const runtime = await createRuntime({ app, db: await createDatabase({ url }), dev: true, live: false, clock, worker: { pollMs: 10 } });
    const server = createServer(runtime.handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { runtime, server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  }
  async function stop({ runtime, server }: { runtime: Runtime; server: Server }) {
    await new Promise((resolve) => server.close(resolve));
    await runtime.close();
  }

  it('runs each once in the process that comes up after the times passed', async () => {
    const first = await start();
    const headers = { 'content-type': 'application/json', 'x-fw-user-id': 'alice', 'x-fw-tenant-id': TENANT_A, 'x-fw-role': 'member' };
    const planned = await (await fetch(`${first.base}/commands/plan`, { method: 'POST', headers, body: '{}' })).json();
    expect(planned).toMatchObject({ ok: true, result: { id: expect.any(String) } });
    const listed = await (await fetch(`${first.base}/_fw/schedule`)).json();
    const rows = (name: string) => first.runtime.db.admin.selectFrom('journal').select('text').where('text', '=', name).execute();
    await until(async () => (await rows('trial started')).length === 1, 'the workflow to start and sleep');
    // The call waits an hour; the cron's first tick (the next whole hour) too.
    expect(listed.calls.map((c: any) => c.entry).sort()).toEqual(expect.arrayContaining(['write']));
    // The admin route that `fw schedule cancel` asks.
    const cancel = (id: string) => fetch(`${first.base}/_fw/schedule/${id}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect((await cancel('nope')).status).toBe(400);
    expect(await (await cancel(crypto.randomUUID())).json()).toMatchObject({ ok: false, error: { code: 'not_found' } });
    await stop(first);

    now += 3 * HOUR; // three cron ticks, the call's hour and the workflow's two pass with no process up
    const second = await start();
    try {
      const texts = async () => (await second.runtime.db.admin.selectFrom('journal').select('text').orderBy('text').execute()).map((r) => r.text);
      await until(async () => (await texts()).length === 4, 'the call, the workflow and the cron to run');
      const delivered = async () => (await second.runtime.db.admin.selectFrom('_fw_outbox').select('event').where('status', '=', 'delivered').execute()).map((r) => r.event).sort();
      await until(async () => (await delivered()).length === 3, 'their rows to be settled');
      // Each ran once: the call, the workflow's end, and one tick of the three missed.
      expect(await texts()).toEqual(['called back for alice', 'hourly', 'trial ended', 'trial started']);
      expect(await delivered()).toEqual(['fw.call:write', 'fw.call:write', 'fw.workflow:trial']);
      const waiting = await (await fetch(`${second.base}/_fw/schedule`)).json();
      expect(waiting.calls).toEqual([expect.objectContaining({ entry: 'write', status: 'pending', runAt: new Date(Math.ceil(now / HOUR) * HOUR).toISOString() })]);
    } finally {
      await stop(second);
    }
  });
});
