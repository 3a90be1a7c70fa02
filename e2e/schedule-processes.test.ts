import { readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, runFw } from './support/app.ts';
import { processCluster } from './support/cluster.ts';
import { hs256Token } from './support/hs256-token.ts';
import { testDatabaseUrl } from './support/postgres.ts';
import { until } from './support/until.ts';

// Scheduled calls, a cron and a sleeping workflow (docs/scheduling.md, docs/workflows.md#sleeping) in
// real `fw start` / `fw worker` processes on one PostgreSQL database, and the operator's CLI
// (`fw schedule list/cancel`, `fw workflows show`) as real processes against a running `fw start`.
//
// Processes cannot take an injected clock (only createRuntime and fwjs/testing do), so nothing here
// waits for a time in the future: the call is due in the past, the cron ticks every two seconds, the
// workflow sleeps a few seconds, and every wait is a poll for the final state with a deadline.
const TENANT = '00000000-0000-4000-8000-0000000000d1';
const SECRET = 'schedule-processes-test-secret-of-32-characters';
const ADMIN_TOKEN = 'schedule-processes-admin-token';
const FAR = '2099-01-01T00:00:00.000Z';

// Every effect writes one row: which key, in which process. A handler first leaves a file
// `started-<key>-<pid>`, then waits while the file `hold` exists (the test decides when it may go on;
// the deadline only bounds a hang), then writes its row — so a process killed while holding wrote nothing.
const gate = `import { existsSync, writeFileSync } from 'node:fs';

export async function gate(key: string): Promise<void> {
  writeFileSync(\`started-\${key}-\${process.pid}\`, '');
  for (const deadline = Date.now() + 120_000; existsSync('hold'); ) {
    if (Date.now() > deadline) throw new Error('never released');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
`;

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
  records: table({ id: t.uuid().primaryKey().defaultRandom(), key: t.text(), pid: t.integer(), at: t.timestamptz().defaultNow() }, { tenantScoped: false }),
});
export default schema;
declare module 'fwjs' { interface Register { schema: typeof schema } }
`,
  'src/support/gate.ts': gate,
  'src/commands/record.ts': `import { command, z } from 'fwjs';
import { gate } from '../support/gate.ts';

export default command({
  args: { key: z.string() },
  handler: async (ctx, args) => {
    await gate(args.key);
    await ctx.db.insertInto('records').values({ key: args.key, pid: process.pid }).execute();
  },
});
`,
  // A call whose time has passed (due when a worker next looks), and one in 2099.
  'src/commands/callNow.ts': `import { command } from 'fwjs';

export default command({ handler: async (ctx) => ({ id: await ctx.scheduler.runAt(new Date(Date.now() - 60_000), 'record', { key: 'call' }) }) });
`,
  'src/commands/callLater.ts': `import { command, z } from 'fwjs';

export default command({
  args: { key: z.string() },
  handler: async (ctx, args) => ({ id: await ctx.scheduler.runAt(new Date('${FAR}'), 'record', { key: args.key }) }),
});
`,
  'src/commands/startNap.ts': `import { command } from 'fwjs';

export default command({ handler: (ctx) => ctx.startWorkflow('nap', {}) });
`,
  'src/commands/startLongNap.ts': `import { command } from 'fwjs';

export default command({ handler: (ctx) => ctx.startWorkflow('longNap', {}) });
`,
  'src/workflows/nap.ts': `import { workflow } from 'fwjs';
import { gate } from '../support/gate.ts';

export default workflow({
  handler: async (ctx) => {
    await ctx.step('before', () => ctx.db.insertInto('records').values({ key: 'before', pid: process.pid }).execute().then(() => null));
    await ctx.sleep('nap', '5s');
    await ctx.step('after', async () => {
      await gate('after');
      await ctx.db.insertInto('records').values({ key: 'after', pid: process.pid }).execute();
      return null;
    });
  },
});
`,
  'src/workflows/longNap.ts': `import { workflow } from 'fwjs';

export default workflow({
  handler: async (ctx) => {
    await ctx.step('before', () => 'ok');
    await ctx.sleepUntil('nap', new Date('${FAR}'));
  },
});
`,
  'src/crons.ts': `import { crons } from 'fwjs';

export default crons({ tick: { every: '2s', call: 'record', args: { key: 'cron' } } });
`,
};

describe.skipIf(!testDatabaseUrl)('scheduled calls, crons and sleeping workflows in real processes (PostgreSQL)', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let auth: Record<string, string>;
  const baseEnv: Record<string, string> = {
    FW_AUTH: 'jwt',
    FW_JWT_ISSUER: 'https://issuer.test/',
    FW_JWT_AUDIENCE: 'fw-schedule-processes',
    FW_JWT_ALGORITHMS: 'HS256',
    FW_JWT_HS_SECRET: SECRET,
    FW_ADMIN_TOKEN: ADMIN_TOKEN,
    FW_AI: 'mock',
  };
  const cluster = processCluster({ dir: () => app.dir, env: baseEnv });
  /** The `started-<key>-<pid>` files: which process reached which gate. */
  const started = async () => (await readdir(app.dir)).filter((f) => f.startsWith('started-')).sort();

  beforeAll(async () => {
    app = await createTestApp('minimal-web', files);
    await rm(path.join(app.dir, 'web'), { recursive: true, force: true }); // the API only
    const token = await hs256Token({ FW_JWT_ISSUER: baseEnv.FW_JWT_ISSUER!, FW_JWT_AUDIENCE: baseEnv.FW_JWT_AUDIENCE!, FW_JWT_HS_SECRET: SECRET }, 'user-1', TENANT);
    auth = { authorization: `Bearer ${token}` };
    const built = await runFw(['build', '--json'], { cwd: app.dir, env: baseEnv });
    expect(built.code, built.stderr).toBe(0);
  }, 120_000);

  afterEach(async () => {
    await cluster.close();
    await rm(path.join(app.dir, 'hold'), { force: true });
    for (const file of await started()) await rm(path.join(app.dir, file), { force: true });
  });

  afterAll(async () => {
    await app?.remove();
  });

  it('a worker killed while it runs a due call, a cron tick and a woken workflow: the other process runs each exactly once', async () => {
    const { start, rows } = await cluster.open();
    await writeFile(path.join(app.dir, 'hold'), '');
    const api = await start(['start', '--port', '0', '--host', '127.0.0.1', '--migrate', '--no-worker', '--json']);
    const url = api.ready.serverUrl as string;
    const admin = { 'x-fw-admin-token': ADMIN_TOKEN };
    // Leases of 3 s, renewed every second: a living worker keeps its rows, a dead one's come back soon.
    const workerArgs = ['worker', '--lease-ms', '3000', '--poll-ms', '100', '--json'];
    const doomed = await start(workerArgs);
    const doomedPid = doomed.child.pid!;

    // The call (due a minute ago) and the cron's first tick (within 2 s) reach their handlers in the
    // only worker there is, which holds them.
    const call = await post(url, '/commands/callNow', {}, auth);
    expect(call.status, JSON.stringify(call.body)).toBe(200);
    await until(async () => (await started()).length === 2 && (await started()), 'the call and the cron tick to start in the doomed worker');
    expect(await started()).toEqual([`started-call-${doomedPid}`, `started-cron-${doomedPid}`]);

    // A workflow that sleeps 5 s after its first step: its worker is given back while it sleeps.
    const nap = await post(url, '/commands/startNap', {}, auth);
    expect(nap.status, JSON.stringify(nap.body)).toBe(200);
    const runId = nap.body.result.runId as string;
    const sleeping = await until(async () => {
      const run = (await (await fetch(`${url}/_fw/workflows/${runId}`, { headers: admin })).json()) as any;
      return run.status === 'sleeping' && run;
    }, 'the workflow run to sleep');
    expect(sleeping.waitingFor).toMatchObject({ kind: 'sleep', step: 'nap', until: expect.any(String) });

    // A second worker process alongside: it must not take rows the first one holds a live lease on.
    const survivor = await start(workerArgs);
    const survivorPid = survivor.child.pid!;
    doomed.child.kill('SIGKILL');
    expect(await doomed.stop()).toBe(null);
    await rm(path.join(app.dir, 'hold'));

    // The survivor takes the dead worker's rows once their leases run out, and wakes the workflow.
    const keys = async () => (await rows(`select key, pid from records order by key, at`)) as Array<{ key: string; pid: number }>;
    await until(async () => {
      const all = await keys();
      return ['after', 'call', 'cron'].every((key) => all.some((row) => row.key === key));
    }, 'the call, the tick and the workflow to finish in the survivor', { timeoutMs: 60_000 });
    expect(await survivor.stop()).toBe(0); // no more ticks: the rows are final

    const all = await keys();
    const crons = all.filter((r) => r.key === 'cron');
    expect(all.filter((r) => r.key !== 'cron')).toEqual([
      { key: 'after', pid: survivorPid },
      { key: 'before', pid: doomedPid },
      { key: 'call', pid: survivorPid },
    ]);
    // The held tick ran once, in the survivor; so did every tick after it (one row per tick, as many
    // rows as delivered ticks: a command settles its tick's row in its own transaction).
    expect(crons.every((r) => r.pid === survivorPid)).toBe(true);
    const ticks = await rows(`select idempotency_key, status, attempts from _fw_outbox where idempotency_key like 'cron:%' and status = 'delivered' order by available_at`);
    expect(crons).toHaveLength(ticks.length);
    expect(ticks[0]).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(new Set(ticks.map((t: { idempotency_key: string }) => t.idempotency_key)).size).toBe(ticks.length);
    expect(await rows(`select event, status, attempts from _fw_outbox where event <> 'fw.call:record' or idempotency_key not like 'cron:%' order by id`)).toEqual([
      { event: 'fw.call:record', status: 'delivered', attempts: 2 },
      { event: 'fw.workflow:nap', status: 'delivered', attempts: expect.any(Number) },
    ]);
    expect(await rows(`select count(*)::int as n from _fw_outbox where status in ('dead', 'cancelled')`)).toEqual([{ n: 0 }]);
    const run = (await (await fetch(`${url}/_fw/workflows/${runId}`, { headers: admin })).json()) as any;
    expect(run).toMatchObject({ runId, workflow: 'nap', status: 'completed', waitingFor: null });
    expect(run.steps.map((s: { name: string }) => s.name)).toEqual(['before', 'nap', 'after']);
  }, 120_000);

  it('fw schedule list/cancel and fw workflows show print what the running runtime has', async () => {
    const { start, env } = await cluster.open();
    const api = await start(['start', '--port', '0', '--host', '127.0.0.1', '--migrate', '--no-worker', '--json']);
    const url = api.ready.serverUrl as string;
    const fw = async (args: string[]) => {
      const result = await runFw([...args, '--url', url, '--admin-token', ADMIN_TOKEN], { cwd: app.dir, env });
      expect(result.code, result.stderr).toBe(0);
      return result;
    };

    // No worker runs: no cron tick has a row yet, and nothing runs the calls.
    expect((await fw(['schedule', 'list'])).stderr).toBe('No scheduled calls match.\n');
    const first = await post(url, '/commands/callLater', { key: 'first' }, auth);
    const second = await post(url, '/commands/callLater', { key: 'second' }, auth);
    expect([first.status, second.status]).toEqual([200, 200]);
    const [a, b] = [first.body.result.id as string, second.body.result.id as string];
    // Soonest first; the same time, then in the order scheduled.
    const listed = await fw(['schedule', 'list']);
    expect(listed.stdout).toBe('');
    expect(listed.stderr).toBe(
      [`${a} record pending · at ${FAR} · attempt 0 · tenant ${TENANT}`, `${b} record pending · at ${FAR} · attempt 0 · tenant ${TENANT}`, ''].join('\n'),
    );
    const json = JSON.parse((await fw(['schedule', 'list', '--json'])).stdout);
    expect(json).toEqual({
      ok: true,
      calls: [a, b].map((id) => ({
        id,
        entry: 'record',
        cron: null,
        status: 'pending',
        runAt: FAR,
        attempts: 0,
        tenantId: TENANT,
        userId: 'user-1',
        traceId: expect.any(String),
        lastError: null,
        createdAt: expect.any(String),
      })),
    });

    expect((await fw(['schedule', 'cancel', a])).stderr).toBe(`${a} cancelled.\n`);
    expect((await fw(['schedule', 'cancel', a])).stderr).toBe(`${a} is cancelled; nothing to cancel.\n`);
    expect(JSON.parse((await fw(['schedule', 'cancel', a, '--json'])).stdout)).toEqual({ ok: true, id: a, cancelled: false, status: 'cancelled' });
    expect((await fw(['schedule', 'list'])).stderr).toBe(`${b} record pending · at ${FAR} · attempt 0 · tenant ${TENANT}\n`);
    expect((await fw(['schedule', 'list', '--status', 'cancelled'])).stderr).toBe(
      `${a} record cancelled · at ${FAR} · attempt 0 · tenant ${TENANT} · Cancelled by an operator (fw schedule cancel).\n`,
    );
    // An id that is no call: the command fails and says so.
    const unknown = crypto.randomUUID();
    const missing = await runFw(['schedule', 'cancel', unknown, '--url', url, '--admin-token', ADMIN_TOKEN], { cwd: app.dir, env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`\n✖ No scheduled call ${unknown}.\n  • url: fw schedule list --json shows the calls and their ids.\n`);

    // A workflow run asleep until 2099, started through the API and run by a worker as far as its sleep.
    const nap = await post(url, '/commands/startLongNap', {}, auth);
    expect(nap.status, JSON.stringify(nap.body)).toBe(200);
    const runId = nap.body.result.runId as string;
    await start(['worker', '--poll-ms', '100', '--json']);
    await until(async () => {
      const body = (await (await fetch(`${url}/_fw/workflows/${runId}`, { headers: { 'x-fw-admin-token': ADMIN_TOKEN } })).json()) as { status: string };
      return body.status === 'sleeping';
    }, 'the run to sleep');
    const run = JSON.parse((await fw(['workflows', 'show', runId, '--json'])).stdout);
    expect(run).toMatchObject({
      ok: true,
      runId,
      workflow: 'longNap',
      status: 'sleeping',
      attempts: 1,
      steps: [expect.objectContaining({ name: 'before', attempt: 1 }), expect.objectContaining({ name: 'nap', attempt: 1, durationMs: 0 })],
      waitingFor: { kind: 'sleep', step: 'nap', until: FAR },
    });
    const shown = await fw(['workflows', 'show', runId]);
    expect(shown.stdout).toBe('');
    expect(shown.stderr).toBe(
      [
        `${runId} longNap sleeping · attempt 1 · ${run.createdAt}`,
        `  ✓ before (attempt 1, ${run.steps[0].durationMs} ms)`,
        `  ✓ nap (attempt 1, 0 ms)`,
        `  … sleeping in nap until ${FAR}`,
        '',
      ].join('\n'),
    );
  }, 120_000);
});
