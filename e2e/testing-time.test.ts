import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from './support/app.ts';
import { until } from './support/until.ts';
import { startTestApp, type TestApp } from '../testing/index.ts';

const ACME = '00000000-0000-4000-8000-000000000001';

const files = {
  'src/commands/noteLater.ts': [
    "import { command, z } from 'fwjs';",
    'export default command({',
    '  args: { title: z.string() },',
    "  handler: async (ctx, args) => ({ id: await ctx.scheduler.runAfter(3600_000, 'createNote', { title: args.title }) }),",
    '});',
    '',
  ].join('\n'),
  'src/commands/stampNote.ts': [
    "import { command } from 'fwjs';",
    "export default command({ policy: 'system', handler: (ctx) => ctx.db.insertInto('notes').values({ title: 'stamp', body: null, author_id: 'cron' }).execute() });",
    '',
  ].join('\n'),
  // ctx.now() reads the runtime's clock (the one advanceTime moves); SQL's now() is the database's.
  'src/commands/whatTime.ts': [
    "import { command, sql } from 'fwjs';",
    'export default command({',
    '  handler: async (ctx) => {',
    '    const { rows } = await sql<{ db: Date; bound: Date }>`select now() as db, ${ctx.now()}::timestamptz as bound`.execute(ctx.db);',
    '    return { now: ctx.now().toISOString(), db: new Date(rows[0]!.db).toISOString(), bound: new Date(rows[0]!.bound).toISOString() };',
    '  },',
    '});',
    '',
  ].join('\n'),
  // A live subscription's ctx.now() is the runtime's clock too (the live hub's reruns get it).
  'src/queries/liveClock.ts': [
    "import { liveQuery } from 'fwjs';",
    'export default liveQuery({',
    '  handler: async (ctx) => {',
    "    const notes = await ctx.db.selectFrom('notes').select('id').execute();",
    '    return { now: ctx.now().toISOString(), notes: notes.length };',
    '  },',
    '});',
    '',
  ].join('\n'),
  // One instant per invocation: the clock moves while the handler waits, ctx.now() does not.
  'src/commands/twoReads.ts': [
    "import { command } from 'fwjs';",
    'export default command({',
    '  handler: async (ctx) => {',
    '    const first = ctx.now().toISOString();',
    '    await (globalThis as { fwTestPause?: () => Promise<void> }).fwTestPause?.();',
    "    await ctx.db.selectFrom('notes').select('id').execute();",
    '    return { first, second: ctx.now().toISOString() };',
    '  },',
    '});',
    '',
  ].join('\n'),
  'src/crons.ts': `import { crons } from 'fwjs';\nexport default crons({ stamp: { every: '1d', call: 'stampNote', tenant: '${ACME}' } });\n`,
};

describe('fw/testing moves time', () => {
  let app: Awaited<ReturnType<typeof createTestApp>> | undefined;
  let fw: TestApp<any>;
  beforeAll(async () => {
    app = await createTestApp('minimal-web', files);
    fw = await startTestApp({ root: app.dir });
  }, 60_000);
  afterAll(async () => {
    await fw?.close();
    await app?.remove();
  });

  it('runs a scheduled call and a cron tick when the test advances the clock past them', async () => {
    const alice = fw.client({ userId: 'alice', tenantId: ACME, role: 'member' });
    await alice.command('noteLater' as never, { title: 'later' } as never);
    expect(await fw.deliverEvents()).toMatchObject({ delivered: 0 });
    const titles = async () => ((await alice.query('listNotes' as never, {} as never)) as Array<{ title: string }>).map((n) => n.title).sort();
    expect(await titles()).toEqual([]);

    // The cron ticks at midnight UTC (intervals are aligned to the epoch): the hour may cross one.
    const DAY = 86_400_000;
    const crossed = Math.floor((fw.now() + 3600_000) / DAY) > Math.floor(fw.now() / DAY);
    fw.advanceTime('1h');
    expect(await fw.deliverEvents()).toMatchObject({ delivered: crossed ? 2 : 1 });
    expect(await titles()).toEqual(crossed ? ['later', 'stamp'] : ['later']);

    fw.advanceTime('1d');
    expect(await fw.deliverEvents()).toMatchObject({ delivered: 1 });
    expect(await titles()).toEqual(crossed ? ['later', 'stamp', 'stamp'] : ['later', 'stamp']);
  });

  it('a live subscription’s ctx.now() is the test clock, on its first result and after advanceTime', async () => {
    const alice = fw.client({ userId: 'alice', tenantId: ACME, role: 'member' });
    const seen: Array<{ now: string; notes: number }> = [];
    const subscription = alice.live('liveClock' as never, {} as never, { onData: (value) => void seen.push(value as never) });
    try {
      await until(async () => seen.length >= 1, 'the first result');
      expect(seen[0]!.now).toBe(new Date(fw.now()).toISOString());
      fw.advanceTime('2h');
      await alice.command('createNote' as never, { title: 'wakes the subscription' } as never);
      await until(async () => seen.some((v) => v.notes > seen[0]!.notes), 'the result after the write');
      expect(seen.at(-1)!.now).toBe(new Date(fw.now()).toISOString());
    } finally {
      subscription.close();
    }
  });

  it('ctx.now() is one instant per handler invocation, however the clock moves meanwhile', async () => {
    const alice = fw.client({ userId: 'alice', tenantId: ACME, role: 'member' });
    let paused: () => void = () => {};
    const reached = new Promise<void>((resolve) => {
      (globalThis as { fwTestPause?: () => Promise<void> }).fwTestPause = () => (resolve(), new Promise<void>((go) => (paused = go)));
    });
    try {
      const answer = alice.command('twoReads' as never, {} as never) as Promise<{ first: string; second: string }>;
      await reached;
      fw.advanceTime('1h');
      paused();
      const { first, second } = await answer;
      expect(second).toBe(first);
      expect(Date.parse(first)).toBe(fw.now() - 3600_000);
    } finally {
      delete (globalThis as { fwTestPause?: unknown }).fwTestPause;
    }
  });

  it('ctx.now() in a handler is the test clock: advanceTime moves it, the database clock stays', async () => {
    const alice = fw.client({ userId: 'alice', tenantId: ACME, role: 'member' });
    const whatTime = async () => (await alice.command('whatTime' as never, {} as never)) as { now: string; db: string; bound: string };
    const before = await whatTime();
    expect(before.now).toBe(new Date(fw.now()).toISOString());
    expect(before.bound).toBe(before.now);

    fw.advanceTime('8d');
    const after = await whatTime();
    expect(after.now).toBe(new Date(fw.now()).toISOString());
    expect(Date.parse(after.now) - Date.parse(before.now)).toBe(8 * 86_400_000);
    // SQL's now() is the database's clock, which advanceTime does not move: bind ctx.now() instead.
    expect(Date.parse(after.bound)).toBe(Date.parse(after.now));
    expect(Date.parse(after.db)).toBeLessThan(Date.parse(after.now) - 7 * 86_400_000);
  });
});

