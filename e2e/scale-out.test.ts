import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openEventStream } from './support/live-server.ts';
import { createTestApp, post, runFw } from './support/app.ts';
import { processCluster } from './support/cluster.ts';
import { hs256Token } from './support/hs256-token.ts';
import { testDatabaseUrl } from './support/postgres.ts';
import { until } from './support/until.ts';

// N `fw start` processes on one PostgreSQL, as docs/deploy.md describes: the same DATABASE_URL, JWT
// settings, admin token and approval secret everywhere; no sticky sessions.
const TENANT = '00000000-0000-4000-8000-0000000000c1';
const SECRET = 'scale-out-test-secret-of-at-least-32-characters';
const ADMIN_TOKEN = 'scale-out-admin-token';

const files: Record<string, string> = {
  'src/fw/schema.ts': `import { defineSchema, t, table } from 'fwjs';

const schema = defineSchema({
  notes: table({
    id: t.uuid().primaryKey().defaultRandom(),
    title: t.text(),
    body: t.text().nullable(),
    author_id: t.text(),
    created_at: t.timestamptz().defaultNow(),
  }),
  // Who delivered each event and ran each workflow step (process ids): a unique key per effect.
  deliveries: table({ key: t.text().primaryKey(), pid: t.integer() }, { tenantScoped: false }),
  step_log: table({ key: t.text().primaryKey(), pid: t.integer() }, { tenantScoped: false }),
});
export default schema;
declare module 'fwjs' { interface Register { schema: typeof schema } }
`,
  'src/commands/createNote.ts': `import { command, z } from 'fwjs';

export default command({
  args: { title: z.string().min(1) },
  handler: async (ctx, args) => {
    const note = await ctx.db.insertInto('notes').values({ title: args.title, author_id: ctx.auth.userId! }).returningAll().executeTakeFirstOrThrow();
    ctx.emit('note.created', { noteId: note.id });
    return note;
  },
});
`,
  'src/commands/startResumable.ts': `import { command } from 'fwjs';

export default command({ handler: (ctx) => ctx.startWorkflow('resumable', {}) });
`,
  // Records who delivered the event, then waits until the other process has delivered one too: however
  // the claims fall, one worker cannot take every event (it runs out of room with its deliveries
  // waiting), so both take part without any timing. The deadline only bounds a hang.
  'src/actions/recordDelivery.ts': `import { action, sql, z } from 'fwjs';

export default action({
  on: 'note.created',
  args: { noteId: z.uuid() },
  handler: async (ctx) => {
    await ctx.db.insertInto('deliveries').values({ key: ctx.event.idempotencyKey, pid: process.pid }).onConflict((oc) => oc.doNothing()).execute();
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { n } = await ctx.db.selectFrom('deliveries').select(sql<number>\`count(distinct pid)::int\`.as('n')).executeTakeFirstOrThrow();
      if (n >= 2) return;
      if (Date.now() > deadline) throw new Error('no other process delivered an event');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  },
});
`,
  'src/workflows/stampNote.ts': `import { workflow, z } from 'fwjs';

export default workflow({
  on: 'note.created',
  args: { noteId: z.uuid() },
  handler: async (ctx, args) => {
    const title = await ctx.step('read', async () => (await ctx.db.selectFrom('notes').select('title').where('id', '=', args.noteId).executeTakeFirstOrThrow()).title);
    await ctx.step('stamp', () => ctx.db.updateTable('notes').set({ body: 'stamped: ' + title }).where('id', '=', args.noteId).execute().then(() => null));
  },
});
`,
  // Attempt 1 hangs in its second step (the test kills its process there); attempt 2 finishes.
  'src/workflows/resumable.ts': `import { workflow } from 'fwjs';

export default workflow({
  handler: async (ctx) => {
    const log = (key: string) => ctx.db.insertInto('step_log').values({ key, pid: process.pid }).execute();
    await ctx.step('first', () => log('first').then(() => 'done'));
    await ctx.step('second', async ({ attempt }) => {
      if (attempt === 1) {
        await log('second-started');
        await new Promise(() => {});
      }
      await log('second');
    });
  },
});
`,
};

describe.skipIf(!testDatabaseUrl)('several fw start processes on one PostgreSQL', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let token: string;
  const baseEnv: Record<string, string> = {
    FW_AUTH: 'jwt',
    FW_JWT_ISSUER: 'https://issuer.test/',
    FW_JWT_AUDIENCE: 'fw-scale-out',
    FW_JWT_ALGORITHMS: 'HS256',
    FW_JWT_HS_SECRET: SECRET,
    FW_ADMIN_TOKEN: ADMIN_TOKEN,
    FW_AI_APPROVAL_SECRET: 'scale-out-approvals',
    FW_AI: 'mock',
  };
  const cluster = processCluster({ dir: () => app.dir, env: baseEnv });

  beforeAll(async () => {
    app = await createTestApp('minimal-web', files);
    // The API only: fw build then bundles the backend alone.
    await rm(path.join(app.dir, 'web'), { recursive: true, force: true });
    token = await hs256Token({ FW_JWT_ISSUER: baseEnv.FW_JWT_ISSUER!, FW_JWT_AUDIENCE: baseEnv.FW_JWT_AUDIENCE!, FW_JWT_HS_SECRET: SECRET }, 'user-1', TENANT);
    const built = await runFw(['build', '--json'], { cwd: app.dir, env: baseEnv });
    expect(built.code, built.stderr).toBe(0);
  }, 120_000);

  afterEach(async () => {
    await cluster.close();
  });

  afterAll(async () => {
    await app?.remove();
  });

  it('live updates, outbox deliveries and workflow runs are shared across processes', async () => {
    const { start, rows } = await cluster.open();
    const one = await start(['start', '--port', '0', '--host', '127.0.0.1', '--migrate', '--json']);
    const two = await start(['start', '--port', '0', '--host', '127.0.0.1', '--json']);
    expect(one.ready).toMatchObject({ ok: true, database: 'postgres', worker: true });
    expect(two.ready).toMatchObject({ ok: true, database: 'postgres', worker: true });
    const [urlOne, urlTwo] = [one.ready.serverUrl as string, two.ready.serverUrl as string];
    const auth = { authorization: `Bearer ${token}` };

    // A live stream on process one sees a write made through process two.
    const stream = await openEventStream(`${urlOne}/live/liveNotes`, { headers: auth });
    try {
      expect(stream.status).toBe(200);
      expect((await stream.next(30_000)).json.result).toEqual([]);
      const created = await post(urlTwo, '/commands/createNote', { title: 'via two' }, auth);
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const update = await stream.nextWhere((e) => e.json.result?.some((n: { title: string }) => n.title === 'via two'), 30_000);
      expect(update.json.result.map((n: { title: string }) => n.title)).toContain('via two');
    } finally {
      stream.close();
    }

    // Events emitted through both processes: each is delivered once, and both workers take part.
    for (let i = 0; i < 19; i++) {
      const created = await post(i % 2 ? urlOne : urlTwo, '/commands/createNote', { title: `note ${i}` }, auth);
      expect(created.status).toBe(200);
    }
    // The final state is the outbox's: an action's delivery row commits before the worker marks its
    // outbox row delivered, so waiting on the delivery rows alone reads too early on a busy machine.
    const events = await until(async () => {
      const [counts] = await rows(
        `select count(*)::int as n, count(*) filter (where status = 'delivered')::int as delivered, count(*) filter (where attempts = 1)::int as "firstAttempt" from _fw_outbox where event = 'note.created'`,
      );
      return counts.delivered === 20 && counts;
    }, 'all 20 outbox rows delivered', { timeoutMs: 90_000 });
    expect(events).toEqual({ n: 20, delivered: 20, firstAttempt: 20 });
    const deliveries = await rows('select key, pid from deliveries');
    expect(deliveries).toHaveLength(20);
    const pids = new Set(deliveries.map((d: { pid: number }) => d.pid));
    expect(pids).toEqual(new Set([one.child.pid, two.child.pid]));

    // Every note's workflow ran to the end once, whichever process ran it.
    const admin = { 'x-fw-admin-token': ADMIN_TOKEN };
    const runs = await until(async () => {
      const { runs } = (await (await fetch(`${urlTwo}/_fw/workflows?workflow=stampNote&limit=100`, { headers: admin })).json()) as { runs: Array<{ status: string }> };
      return runs.length === 20 && runs.every((r) => r.status === 'completed') && runs;
    }, 'all 20 stampNote runs completed', { timeoutMs: 60_000 });
    expect(runs).toHaveLength(20);
    expect(await rows(`select count(*)::int as n from notes where body like 'stamped: %'`)).toEqual([{ n: 20 }]);
    expect((await fetch(`${urlOne}/_fw/workflows`)).status).toBe(401); // the admin plane needs the token
  }, 180_000);

  it('a stopping process ends its live streams with a reconnect hint', async () => {
    const { start } = await cluster.open();
    const one = await start(['start', '--port', '0', '--host', '127.0.0.1', '--migrate', '--no-worker', '--json']);
    const response = await fetch(`${one.ready.serverUrl as string}/live/liveNotes`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const read = async () => {
      const { value, done } = await reader.read();
      if (value) text += decoder.decode(value, { stream: true });
      return done;
    };
    // The stream is running once its first snapshot arrived: only then stop the process.
    while (!text.includes('data: ')) if (await read()) throw new Error(`the stream ended before its first snapshot: ${text}`);
    expect(await one.stop()).toBe(0);
    while (!(await read()));
    expect(text.endsWith(': fw shutting down, reconnect\nretry: 250\n\n')).toBe(true);
  }, 60_000);

  it('a workflow resumes on another worker after its process is killed, without re-running finished steps', async () => {
    const { start, rows } = await cluster.open();
    const api = await start(['start', '--port', '0', '--host', '127.0.0.1', '--migrate', '--no-worker', '--json']);
    const url = api.ready.serverUrl as string;
    // Renewed every second: a busy machine does not let the lease run out under the living worker.
    const first = await start(['worker', '--lease-ms', '3000', '--poll-ms', '100', '--json']);

    const started = await post(url, '/commands/startResumable', {}, { authorization: `Bearer ${token}` });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const runId = started.body.result.runId as string;
    await until(async () => (await rows(`select 1 from step_log where key = 'second-started'`)).length === 1, 'attempt 1 to reach its second step');
    first.child.kill('SIGKILL');
    await first.stop();

    const second = await start(['worker', '--lease-ms', '3000', '--poll-ms', '100', '--json']);
    const admin = { 'x-fw-admin-token': ADMIN_TOKEN };
    const run = await until(async () => {
      const body = (await (await fetch(`${url}/_fw/workflows/${runId}`, { headers: admin })).json()) as { status: string };
      return body.status === 'completed' && (body as any);
    }, 'the run to complete on the second worker');
    expect(run).toMatchObject({ runId, workflow: 'resumable', attempts: 2 });
    expect(run.steps.map((s: { name: string; attempt: number }) => [s.name, s.attempt])).toEqual([['first', 1], ['second', 2]]);
    const log = await rows('select key, pid from step_log order by key');
    expect(log).toEqual([
      { key: 'first', pid: first.child.pid },
      { key: 'second', pid: second.child.pid },
      { key: 'second-started', pid: first.child.pid },
    ]);
    // The run completes inside the delivery; the worker marks its row delivered (and says so) after.
    await until(async () => second.stderr().includes('delivered "fw.workflow:resumable"'), 'the second worker to report the delivery');
    expect(await rows(`select status, attempts from _fw_outbox where event = 'fw.workflow:resumable'`)).toEqual([{ status: 'delivered', attempts: 2 }]);
  }, 120_000);
});
