import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type EventStream, type LiveTestRuntime, openEventStream, serveLiveRuntime } from '../../e2e/support/live-server.ts';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import { until } from '../../e2e/support/until.ts';
import type { FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { command, liveQuery, query } from '../core/entries.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import type { LiveHub } from './hub.ts';
import { logBounds } from './log.ts';

/**
 * Live queries rerun only for the writes that can change them (read sets, docs/live.md), and never
 * miss one: rows moved between groups, writes that land while a run is in flight, and a burst of
 * concurrent writes after which every subscriber must hold what a fresh run returns.
 */
const schema = defineSchema({
  // `n` and `o`: the capture trigger's own aliases for new and old rows must not be taken for them.
  tickets: table({ id: t.uuid().primaryKey().defaultRandom(), board: t.integer(), title: t.text(), status: t.text(), n: t.integer().nullable(), o: t.text().nullable() }),
  /** Which board a user looks at: read first, so the tickets read depends on data (a run/install race). */
  preferences: table({ id: t.uuid().primaryKey().defaultRandom(), user_id: t.text(), board: t.integer() }),
  /** Every kind of value a result can carry, for batched and solo runs to agree on. */
  measures: table({
    id: t.uuid().primaryKey().defaultRandom(),
    slot: t.integer(),
    big: t.bigint(),
    amount: t.numeric(),
    at: t.timestamptz(),
    meta: t.jsonb(),
    flag: t.boolean().nullable(),
    label: t.text(),
  }),
  /** One column per ordered kind, for the shapes of `PRECISE_SHAPES` (each row named by its label). */
  events: table({
    id: t.uuid().primaryKey().defaultRandom(),
    label: t.text(),
    title: t.text().nullable(),
    amount: t.numeric().nullable(),
    at: t.timestamptz().nullable(),
    day: t.date().nullable(),
    ref: t.uuid().nullable(),
    n: t.integer().nullable(),
    stage: t.enum(['draft', 'open', 'review', 'closed']).nullable(),
  }),
});

const THOUSAND = Array.from({ length: 1000 }, (_, i) => 1000 + i);
const BOUND = new Date('2026-03-01T00:00:00Z');

/**
 * Shapes of WHERE that are kept precisely: each with the read set it shows, values of its column that
 * no row it reads can have (`outside`: edge values at the bounds, NULL, other spellings of the same
 * value) and values that it reads (`inside`). Outside values rerun nothing; inside ones each rerun.
 */
const PRECISE_SHAPES: Record<string, { column: string; where: (eb: any) => any; readSet: string[]; outside: unknown[]; inside: unknown[] }> = {
  textRange: { column: 'title', where: (eb) => eb.and([eb('title', '>=', 'm'), eb('title', '<', 'n')]), readSet: ['title >= "m" and title < "n"'], outside: ['l', 'n', 'N', 'M', null], inside: ['m', 'mzz'] },
  numericRange: { column: 'amount', where: (eb) => eb('amount', '>=', '10.5'), readSet: ['amount >= "10.5"'], outside: ['10.49', '-11', '-Infinity', null], inside: ['10.50', '100', 'NaN'] },
  numericEquality: { column: 'amount', where: (eb) => eb('amount', '=', 2), readSet: ['amount = "2"'], outside: ['2.001', '-2', null], inside: ['2.000', '2'] },
  timestampRange: {
    column: 'at',
    where: (eb) => eb('at', '<', BOUND),
    readSet: ['at < "2026-03-01T00:00:00.000000+00:00"'],
    outside: ['2026-03-01T01:00:00+01:00', '2026-03-01T00:00:00.000001Z', 'infinity', null],
    inside: ['2026-02-28T23:59:59.999999Z', '2026-03-01T00:59:59+01:00', '-infinity'],
  },
  dateBetween: { column: 'day', where: (eb) => eb.between('day', '2026-01-01', '2026-01-31'), readSet: ['day >= "2026-01-01" and day <= "2026-01-31"'], outside: ['2025-12-31', '2026-02-01', null], inside: ['2026-01-01', '2026-01-31'] },
  uuidRange: {
    column: 'ref',
    where: (eb) => eb('ref', '>', 'DDDDDDDD-0000-4000-8000-000000000000'),
    readSet: ['ref > "dddddddd-0000-4000-8000-000000000000"'],
    outside: ['dddddddd-0000-4000-8000-000000000000', '0aaaaaaa-0000-4000-8000-000000000000', null],
    inside: ['dddddddd-0000-4000-8000-000000000001', 'f0000000-0000-4000-8000-000000000000'],
  },
  likePrefix: { column: 'title', where: (eb) => eb('title', 'like', 'ab%'), readSet: ['title like "ab%"'], outside: ['AB', 'xab', 'a', 'a_', null], inside: ['ab', 'abc'] },
  ilikePrefix: { column: 'title', where: (eb) => eb('title', 'ilike', 'Ab%'), readSet: ['title ilike "ab%"'], outside: ['xab', 'a b', null], inside: ['AB', 'aBc'] },
  lowerEquals: { column: 'title', where: (eb) => eb(eb.fn('lower', ['title']), '=', 'x'), readSet: ['lower(title) = "x"'], outside: ['xx', 'y', null], inside: ['X', 'x'] },
  arithmetic: { column: 'n', where: (eb) => eb(eb('n', '+', 1), '=', 5), readSet: ['n + 1 = "5"'], outside: [5, 3, null], inside: [4] },
  equalsAny: { column: 'n', where: (eb) => eb('n', '=', eb.fn('any', [eb.val([7, 8])])), readSet: ['n in ("7", "8")'], outside: [6, 9, null], inside: [7, 8] },
  thousandValues: { column: 'n', where: (eb) => eb('n', 'in', THOUSAND), readSet: [`n in (${THOUSAND.map((n) => `"${n}"`).join(', ')})`], outside: [999, 2000, null], inside: [1000, 1999] },
  notEqual: { column: 'n', where: (eb) => eb('n', '<>', 3), readSet: ['n <> "3"'], outside: [3, null], inside: [4, -3] },
  notIn: { column: 'n', where: (eb) => eb('n', 'not in', [3, 4]), readSet: ['n not in ("3", "4")'], outside: [3, 4, null], inside: [5] },
  enumRange: { column: 'stage', where: (eb) => eb('stage', '>', 'open'), readSet: ['stage not in ("draft", "open")'], outside: ['draft', 'open', null], inside: ['review', 'closed'] },
};

/** Runs of `myBoard` wait here when armed, after both reads (test-controlled). */
const gates: Array<{ reached: () => void; release: Promise<void> }> = [];

/** A slot's measures; slot 13 fails with a statement error (division by zero) once it holds a row without a flag. */
async function slotRows(ctx: any, slot: number) {
  const rows = await ctx.db.selectFrom('measures').select(['slot', 'big', 'amount', 'at', 'meta', 'flag', 'label']).where('slot', '=', slot).orderBy('label').execute();
  if (slot === 13 && rows.some((row: { flag: boolean | null }) => row.flag === null)) {
    await ctx.db.selectFrom('measures').select(sql<number>`1 / 0`.as('boom')).where('slot', '=', slot).execute();
  }
  return rows;
}

const shareOf = (ctx: any, args: { slot: number; k: number }) =>
  ctx.db.selectFrom('measures').select(sql<number>`(count(*) * 10 / (count(*) - ${args.k}))::int`.as('share')).where('slot', '=', args.slot).executeTakeFirst();

function testApp(): AppDefinition {
  const boardTickets = (ctx: any, board: number) =>
    ctx.db.selectFrom('tickets').select(['title', 'status', 'board']).where('board', '=', board).orderBy('title').execute();
  const entries = {
    addTicket: command({
      args: { board: z.number().int(), title: z.string() },
      handler: (ctx, args) => ctx.db.insertInto('tickets').values({ board: args.board, title: args.title, status: 'open' }).execute().then(() => 'ok'),
    }),
    moveTicket: command({
      args: { title: z.string(), board: z.number().int() },
      handler: (ctx, args) => ctx.db.updateTable('tickets').set({ board: args.board }).where('title', '=', args.title).execute().then(() => 'ok'),
    }),
    deleteTicket: command({
      args: { title: z.string() },
      handler: (ctx, args) => ctx.db.deleteFrom('tickets').where('title', '=', args.title).execute().then(() => 'ok'),
    }),
    lookAt: command({
      args: { board: z.number().int() },
      handler: async (ctx, args) => {
        const updated = await ctx.db.updateTable('preferences').set({ board: args.board }).where('user_id', '=', ctx.auth.userId!).executeTakeFirst();
        if (Number(updated.numUpdatedRows) === 0) await ctx.db.insertInto('preferences').values({ user_id: ctx.auth.userId!, board: args.board }).execute();
        return 'ok';
      },
    }),
    board: liveQuery({ args: { board: z.number().int() }, handler: (ctx, args) => boardTickets(ctx, args.board) }),
    slot: liveQuery({ args: { slot: z.number().int() }, handler: (ctx, args) => slotRows(ctx, args.slot) }),
    slotNow: query({ args: { slot: z.number().int() }, handler: (ctx, args) => slotRows(ctx, args.slot) }),
    // 10 × rows / (rows − k): a division by zero once the slot holds k rows.
    share: liveQuery({ args: { slot: z.number().int(), k: z.number().int() }, handler: (ctx, args) => shareOf(ctx, args) }),
    shareNow: query({ args: { slot: z.number().int(), k: z.number().int() }, handler: (ctx, args) => shareOf(ctx, args) }),
    events: liveQuery({
      args: { shape: z.string() },
      handler: async (ctx, args) => {
        const rows = await ctx.db.selectFrom('events').select('label').where(PRECISE_SHAPES[args.shape]!.where).groupBy('label').execute();
        return rows.map((row: { label: string }) => row.label).sort();
      },
    }),
    boardNow: query({ args: { board: z.number().int() }, handler: (ctx, args) => boardTickets(ctx, args.board) }),
    myBoard: liveQuery({
      handler: async (ctx) => {
        const preference = await ctx.db.selectFrom('preferences').select('board').where('user_id', '=', ctx.auth.userId!).executeTakeFirst();
        const rows = await boardTickets(ctx, preference?.board ?? 0);
        const gate = gates.shift();
        if (gate) {
          gate.reached();
          await gate.release;
        }
        return { board: preference?.board ?? 0, rows };
      },
    }),
  };
  return { entries: new Map(Object.entries(entries)), policies: {}, schema };
}

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`precise live invalidation (${target.name})`, () => {
    let db: FwDatabase;
    let runtime: LiveTestRuntime;
    let hub: LiveHub;
    let url: string;
    let drop = async () => {};

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      const app = testApp();
      await applyMigration(db, app.schema);
      // No safety polls: in this file a read of the log is woken by the write's own notification only,
      // after the hub was handed the row it carries (the early-run tests count on that order).
      runtime = await serveLiveRuntime(app, db, { pollIntervalMs: 100, safetyPollIntervalMs: 600_000 });
      ({ hub, url } = runtime);
    });

    afterAll(async () => {
      await runtime?.close();
      await db?.close();
      await drop();
    });

    /** A user of a tenant of its own: the test owns every row and group it sees. */
    const member = () => {
      const tenantId = randomUUID();
      return { tenantId, headers: { 'x-fw-user-id': `u-${randomUUID()}`, 'x-fw-tenant-id': tenantId, 'x-fw-role': 'member' } };
    };
    const call = async (kind: 'commands' | 'queries', name: string, args: unknown, headers: Record<string, string>) => {
      const response = await fetch(`${url}/${kind}/${name}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ args }) });
      const body = await response.json();
      expect(response.status, JSON.stringify(body)).toBe(200);
      return body.result ?? body;
    };
    const live = (name: string, args: unknown, headers: Record<string, string>) =>
      openEventStream(`${url}/live/${name}?args=${encodeURIComponent(JSON.stringify(args))}`, { headers });
    const groupOf = (name: string, tenantId: string, args: unknown) =>
      hub
        .status()
        .liveQueries.find((q) => q.name === name)
        ?.groupList.find((group) => group.tenantId === tenantId && JSON.stringify(group.args) === JSON.stringify(args));
    /** The hub has read every log row written so far (its reader's revision is past them). */
    const caughtUp = async () => {
      const { latestRevision } = await logBounds(db.admin);
      await until(async () => hub.status().revision >= latestRevision, `the live reader to read revision ${latestRevision}`);
    };
    const titles = (event: { json: any }) => (event.json.result.rows ?? event.json.result).map((row: { title: string }) => row.title);

    it('a write reruns only the groups whose rows it touches; a move reruns both boards', async () => {
      const { tenantId, headers } = member();
      const one = await live('board', { board: 1 }, headers);
      const two = await live('board', { board: 2 }, headers);
      try {
        expect(titles(await one.next())).toEqual([]);
        expect(titles(await two.next())).toEqual([]);
        expect(groupOf('board', tenantId, { board: 1 })?.readSet).toEqual({ tickets: ['board = "1"'] });
        const runsOfTwo = groupOf('board', tenantId, { board: 2 })!.runs;

        await call('commands', 'addTicket', { board: 1, title: 'a' }, headers);
        expect(titles(await one.next())).toEqual(['a']);
        await caughtUp();
        // Board 2 did not rerun for board 1's write: its own write is the next run it makes.
        await call('commands', 'addTicket', { board: 2, title: 'b' }, headers);
        expect(titles(await two.next())).toEqual(['b']);
        expect(groupOf('board', tenantId, { board: 2 })!.runs).toBe(runsOfTwo + 1);

        // An update that moves a row: the old image concerns board 1, the new one board 2.
        await call('commands', 'moveTicket', { title: 'a', board: 2 }, headers);
        expect(titles(await one.next())).toEqual([]);
        expect(titles(await two.next())).toEqual(['a', 'b']);
        await call('commands', 'deleteTicket', { title: 'b' }, headers);
        expect(titles(await two.next())).toEqual(['a']);
        // A TRUNCATE records no values: every group reruns.
        await sql`truncate table tickets`.execute(db.admin);
        expect(titles(await two.next())).toEqual([]);
      } finally {
        one.close();
        two.close();
      }
    });

    it('a write reruns its group from the row its notification carries, and the log read then runs it no more', async () => {
      const { tenantId, headers } = member();
      const stream = await live('board', { board: 21 }, headers);
      try {
        const first = await stream.next();
        expect(titles(first)).toEqual([]);
        await caughtUp();
        const before = hub.status();
        const runs = groupOf('board', tenantId, { board: 21 })!.runs;
        await call('commands', 'addTicket', { board: 21, title: 'noticed' }, headers);
        expect(titles(await stream.next())).toEqual(['noticed']);
        await caughtUp();
        await until(async () => hub.debug(first.json.subscriptionId)?.group.running === false, 'the group to be idle');
        const after = hub.status();
        // One run: woken by the notice, before the read; the row, read after, found it already seen.
        expect(groupOf('board', tenantId, { board: 21 })!.runs).toBe(runs + 1);
        expect(after.noticeWakeups - before.noticeWakeups).toBe(1);
        expect(after.coveredByNotice - before.coveredByNotice).toBe(1);
        expect(after.reader.notices - before.reader.notices).toBe(1);
      } finally {
        stream.close();
      }
    });

    it('a forged notification is refused: it cannot make a group skip the write it claims (the app role can NOTIFY, not sign)', async () => {
      const { tenantId, headers } = member();
      const stream = await live('board', { board: 22 }, headers);
      try {
        expect(titles(await stream.next())).toEqual([]);
        await caughtUp();
        const { notices, rejectedNotices } = hub.status().reader;
        const handled = () => hub.status().reader.notices + hub.status().reader.rejectedNotices;
        // The log row the next write will make, claimed before that write exists, with a made-up
        // signature, sent from a request transaction (SQL any handler could run). Accepted, it would run
        // the group now and let the real row count as seen.
        const next = (await sql<{ next: string }>`select (last_value + case when is_called then 1 else 0 end)::text as next from _fw_live_invalidations_revision_seq`.execute(db.admin)).rows[0]!.next;
        const forged = `${'ab'.repeat(32)}${JSON.stringify({ r: next, t: 'tickets', n: tenantId, w: '0', c: null })}`;
        await db.transaction({ readOnly: false, auth: { kind: 'user', userId: 'intruder', tenantId, role: null } }, (trx) => sql`select pg_notify('fw_live', ${forged})`.execute(trx));
        await until(async () => handled() === notices + rejectedNotices + 1, 'the forged notice to be handled');
        // The real write, with no signed row of its own to correct the record (as a transaction's
        // second statement on the table has none): made while the notice key is away.
        const [key] = (await sql<{ value: Buffer }>`delete from _fw.secrets where name = 'live.notice' returning value`.execute(db.admin)).rows;
        try {
          await call('commands', 'addTicket', { board: 22, title: 'real' }, headers);
        } finally {
          await sql`insert into _fw.secrets (name, value) values ('live.notice', ${key!.value})`.execute(db.admin);
        }
        expect(titles(await stream.next())).toEqual(['real']);
        expect(hub.status().reader.rejectedNotices).toBe(rejectedNotices + 1);
      } finally {
        stream.close();
      }
    });

    it('a reconnect after writes to other groups resumes up-to-date, and the resumed group still updates', async () => {
      const { tenantId, headers } = member();
      const first = await live('board', { board: 7 }, headers);
      const snapshot = await first.next();
      first.close();
      // The hub notices the disconnect later; until then the group lives on.
      await until(async () => groupOf('board', tenantId, { board: 7 }) === undefined, 'the group to be dropped');
      // Same table, same tenant, another board: table × tenant would call this a change.
      await call('commands', 'addTicket', { board: 8, title: 'elsewhere' }, headers);
      await caughtUp();
      const resumed = await openEventStream(`${url}/live/board?args=${encodeURIComponent(JSON.stringify({ board: 7 }))}`, {
        headers: { ...headers, 'last-event-id': String(snapshot.json.revision) },
      });
      try {
        const event = await resumed.next();
        expect(event.event).toBe('up-to-date');
        expect(event.json).not.toHaveProperty('result');
        await call('commands', 'addTicket', { board: 7, title: 'here' }, headers);
        expect(titles(await resumed.next())).toEqual(['here']);
      } finally {
        resumed.close();
      }
    });

    // PGlite runs one transaction at a time: no write can land while a run is in flight, so the race
    // exists (and is tested) on PostgreSQL only.
    const raceIt = target.name === 'postgres' ? it : () => undefined;
    raceIt('a write that lands while a run is in flight is matched against the read set the run installs', async () => {
      const { headers } = member();
      await call('commands', 'lookAt', { board: 1 }, headers);
      const stream = await live('myBoard', {}, headers);
      try {
        const first = await stream.next();
        expect(first.json.result).toEqual({ board: 1, rows: [] });
        // The preference written before subscribing may reach the hub only now and wake one more run:
        // let it pass, so the gate below stops exactly the run the next write wakes.
        await caughtUp();
        await until(async () => hub.debug(first.json.subscriptionId)?.group.running === false, 'the group to be idle');
        // The next run (woken by the preference change) reads board 2 and stops before installing
        // that read set; the installed one still says board 1.
        let reached!: () => void;
        let release!: () => void;
        const atGate = new Promise<void>((resolve) => (reached = resolve));
        gates.push({ reached, release: new Promise<void>((resolve) => (release = resolve)) });
        await call('commands', 'lookAt', { board: 2 }, headers);
        await atGate;
        // A ticket on board 2, committed after the paused run read board 2: only the new read set covers it.
        await call('commands', 'addTicket', { board: 2, title: 'during the run' }, headers);
        await caughtUp();
        release();
        expect((await stream.next()).json.result).toEqual({ board: 2, rows: [] });
        expect((await stream.next()).json.result).toEqual({ board: 2, rows: [{ title: 'during the run', status: 'open', board: 2 }] });
      } finally {
        gates.length = 0;
        stream.close();
      }
    });

    const measure = (tenantId: string, slot: number, label: string, flag: boolean | null) =>
      sql`insert into measures (tenant_id, slot, big, amount, at, meta, flag, label)
        values (${tenantId}, ${slot}, ${'9007199254740993'}::bigint, ${'12.340'}::numeric, ${'2026-11-25T10:00:00.123Z'}::timestamptz, ${JSON.stringify({ label, nested: [1, null] })}::jsonb, ${flag}, ${label})`;
    /** One statement writing a row into each slot: one log row whose values wake every slot's group at once. */
    const fillSlots = (tenantId: string, slots: number[], label: string, flag: (slot: number) => boolean | null) =>
      sql`insert into measures (tenant_id, slot, big, amount, at, meta, flag, label)
        select ${tenantId}::uuid, s, 9007199254740993, 12.340, '2026-11-25T10:00:00.123Z'::timestamptz, ${JSON.stringify({ label })}::jsonb, f, ${label}
        from unnest(${slots}::int[], ${slots.map(flag)}::boolean[]) as x(s, f)`.execute(db.admin);

    it('groups of one identity woken together rerun in one transaction and send what solo runs return', async () => {
      const { tenantId, headers } = member();
      const slots = [1, 2, 3, 4, 5, 6];
      for (const slot of slots) await measure(tenantId, slot, `first ${slot}`, slot % 2 === 0).execute(db.admin);
      const streams = await Promise.all(slots.map((slot) => live('slot', { slot }, headers)));
      try {
        for (const stream of streams) expect((await stream.next()).json.result).toHaveLength(1);
        const before = hub.status();
        await fillSlots(tenantId, slots, 'second', () => true);
        for (const [i, stream] of streams.entries()) {
          const frame = (await stream.next()).json.result;
          // Exactly the solo run's answer: rows, order, and every type's JSON form.
          expect(frame).toEqual(await call('queries', 'slotNow', { slot: slots[i] }, headers));
          expect(frame.map((row: { label: string }) => row.label)).toEqual([`first ${slots[i]}`, 'second']);
          expect(frame[0]).toMatchObject({ big: '9007199254740993', amount: '12.340', meta: { label: `first ${slots[i]}`, nested: [1, null] } });
        }
        const after = hub.status();
        expect([after.batches - before.batches, after.batchedRuns - before.batchedRuns, after.batchFallbacks - before.batchFallbacks]).toEqual([1, slots.length, 0]);
        // The six groups ran one SELECT of the same shape: sent as one statement, answering all six.
        expect([after.multiplexed - before.multiplexed, after.multiplexedRuns - before.multiplexedRuns]).toEqual([1, slots.length]);
      } finally {
        for (const stream of streams) stream.close();
      }
    });

    it('a batched rerun that fails falls back to solo runs: the others still update, the failing one reports its own error', async () => {
      const { headers, tenantId } = member();
      const slots = [1, 2, 13, 3];
      for (const slot of slots) await measure(tenantId, slot, `first ${slot}`, true).execute(db.admin);
      const streams = await Promise.all(slots.map((slot) => live('slot', { slot }, headers)));
      try {
        for (const stream of streams) expect((await stream.next()).json.result).toHaveLength(1);
        const before = hub.status();
        await fillSlots(tenantId, slots, 'second', () => null);
        const solo13 = await fetch(`${url}/queries/slotNow`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ args: { slot: 13 } }) });
        const soloError = (await solo13.json()).error;
        expect(soloError.code).toBeTruthy();
        for (const [i, stream] of streams.entries()) {
          const event = await stream.next();
          if (slots[i] === 13) {
            expect(event.event).toBe('error');
            expect(event.json.error.code).toBe(soloError.code);
          } else {
            expect(event.event).toBe('snapshot');
            expect(event.json.result).toEqual(await call('queries', 'slotNow', { slot: slots[i] }, headers));
          }
        }
        const after = hub.status();
        expect(after.batches - before.batches).toBe(1);
        expect(after.batchFallbacks - before.batchFallbacks).toBeGreaterThanOrEqual(1);
        expect(after.batchedRuns - before.batchedRuns + after.batchFallbacks - before.batchFallbacks).toBe(slots.length);
      } finally {
        for (const stream of streams) stream.close();
      }
    });

    it('a multiplexed statement that fails sends its groups to solo runs, with their own outcomes', async () => {
      const { headers, tenantId } = member();
      const fine = await live('share', { slot: 20, k: 3 }, headers);
      const failing = await live('share', { slot: 20, k: 1 }, headers);
      try {
        expect((await fine.next()).json.result).toEqual({ share: 0 });
        expect((await failing.next()).json.result).toEqual({ share: 0 });
        const before = hub.status();
        await measure(tenantId, 20, 'one', true).execute(db.admin);
        const snapshot = await fine.next();
        expect(snapshot.event).toBe('snapshot');
        expect(snapshot.json.result).toEqual(await call('queries', 'shareNow', { slot: 20, k: 3 }, headers));
        expect(snapshot.json.result).toEqual({ share: -5 });
        const error = await failing.next();
        expect(error.event).toBe('error');
        const solo = await fetch(`${url}/queries/shareNow`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ args: { slot: 20, k: 1 } }) });
        expect(error.json.error.code).toBe((await solo.json()).error.code);
        const after = hub.status();
        expect([after.multiplexFailures - before.multiplexFailures, after.multiplexed - before.multiplexed, after.batchFallbacks - before.batchFallbacks]).toEqual([1, 0, 2]);
      } finally {
        fine.close();
        failing.close();
      }
    });

    it('after a burst of concurrent writes every subscriber holds what a fresh run returns', async () => {
      const { tenantId, headers } = member();
      const boards = [1, 2, 3, 4, 5];
      const streams: Array<{ board: number; stream: EventStream; last: unknown }> = [];
      for (const board of boards) {
        for (let i = 0; i < 3; i++) streams.push({ board, stream: await live('board', { board }, headers), last: undefined });
      }
      try {
        for (const entry of streams) entry.last = (await entry.stream.next()).json.result;
        // Seeded, so a failure can be replayed: inserts, moves between boards and deletes, 8 at a time.
        let seed = 7;
        const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
        const made: string[] = [];
        const writes: Array<() => Promise<unknown>> = [];
        for (let i = 0; i < 60; i++) {
          const kind = made.length < 3 ? 0 : random(3);
          if (kind === 0) {
            const title = `t${i}`;
            made.push(title);
            writes.push(() => call('commands', 'addTicket', { board: boards[random(boards.length)], title }, headers));
          } else if (kind === 1) {
            writes.push(() => call('commands', 'moveTicket', { title: made[random(made.length)], board: boards[random(boards.length)] }, headers));
          } else {
            writes.push(() => call('commands', 'deleteTicket', { title: made.splice(random(made.length), 1)[0] }, headers));
          }
        }
        for (let i = 0; i < writes.length; i += 8) await Promise.all(writes.slice(i, i + 8).map((write) => write()));
        await caughtUp();
        for (const entry of streams) {
          const fresh = await call('queries', 'boardNow', { board: entry.board }, headers);
          // The last frame is the fresh result: take frames until it arrives (a deadline bounds a hang).
          await until(async () => {
            while (entry.stream.buffered > 0) entry.last = (await entry.stream.next()).json.result;
            return JSON.stringify(entry.last) === JSON.stringify(fresh);
          }, `board ${entry.board}'s subscriber to hold ${JSON.stringify(fresh)} (it holds ${JSON.stringify(entry.last)}; its group: ${JSON.stringify(groupOf('board', tenantId, { board: entry.board }))}; hub: ${JSON.stringify({ ...hub.status(), liveQueries: undefined })})`);
        }
        // And precision: not every group reran for every write.
        const runs = boards.map((board) => groupOf('board', tenantId, { board })!.runs);
        expect(runs.reduce((a, b) => a + b, 0)).toBeLessThan(boards.length * (writes.length + 1));
      } finally {
        for (const entry of streams) entry.stream.close();
      }
    });

    /** One row of `events` in the tenant, its `column` set to `value` (a parameter typed by the column). */
    const putEvent = (tenantId: string, label: string, column: string, value: unknown) =>
      sql`insert into events (tenant_id, label, ${sql.ref(column)}) values (${tenantId}, ${label}, ${value})`.execute(db.admin);
    const setEvent = (tenantId: string, label: string, column: string, value: unknown) =>
      sql`update events set ${sql.ref(column)} = ${value} where tenant_id = ${tenantId} and label = ${label}`.execute(db.admin);

    for (const [shape, { column, readSet, outside, inside }] of Object.entries(PRECISE_SHAPES)) {
      it(`${shape}: kept precisely (${readSet[0]!.slice(0, 60)}): every write that concerns it reruns it, no other does`, async () => {
        const { tenantId, headers } = member();
        const stream = await live('events', { shape }, headers);
        try {
          const first = await stream.next();
          expect(first.json.result).toEqual([]);
          expect(groupOf('events', tenantId, { shape })?.readSet).toEqual({ events: readSet });
          const idle = () => until(async () => hub.debug(first.json.subscriptionId)?.group.running === false, 'the group to be idle');
          const runs = () => groupOf('events', tenantId, { shape })!.runs;
          await idle();
          const before = runs();
          // Rows it never reads — at its bounds, NULL, equal spellings of excluded values — rerun nothing.
          for (const [i, value] of outside.entries()) await putEvent(tenantId, `out${i}`, column, value);
          await caughtUp();
          await idle();
          expect(runs()).toBe(before);
          // Each row it reads reruns it.
          const expected: string[] = [];
          for (const [i, value] of inside.entries()) {
            await putEvent(tenantId, `in${i}`, column, value);
            expected.push(`in${i}`);
            expect((await stream.next()).json.result).toEqual([...expected].sort());
          }
          // A row moving out (its old image), one moving in (its new image), a delete.
          await setEvent(tenantId, 'in0', column, outside[0]);
          expect((await stream.next()).json.result).toEqual(expected.slice(1).sort());
          await setEvent(tenantId, 'out0', column, inside[0]);
          expect((await stream.next()).json.result).toEqual([...expected.slice(1), 'out0'].sort());
          await sql`delete from events where tenant_id = ${tenantId} and label = 'out0'`.execute(db.admin);
          expect((await stream.next()).json.result).toEqual(expected.slice(1).sort());
          await caughtUp();
          await idle();
          expect(runs()).toBe(before + inside.length + 3);
        } finally {
          stream.close();
        }
      });
    }

    it('one statement writing 1000 distinct values reruns only the groups of those values; 1001 count as any value', async () => {
      const { tenantId, headers } = member();
      const stream = await live('events', { shape: 'equalsAny' }, headers);
      try {
        const first = await stream.next();
        const idle = () => until(async () => hub.debug(first.json.subscriptionId)?.group.running === false, 'the group to be idle');
        const runs = () => groupOf('events', tenantId, { shape: 'equalsAny' })!.runs;
        await idle();
        const before = runs();
        // 40 rows of 40 other values (an UPDATE of 40 boards): once "any value" past 32, now each value.
        const fill = (from: number, count: number) =>
          sql`insert into events (tenant_id, label, n) select ${tenantId}::uuid, 'bulk ' || v, v from generate_series(${from}::int, ${from + count - 1}::int) v`.execute(db.admin);
        await fill(100, 40);
        await sql`update events set n = n + 1000 where tenant_id = ${tenantId} and n between 100 and 139`.execute(db.admin);
        await fill(10_000, 1000);
        await caughtUp();
        await idle();
        expect(runs()).toBe(before);
        // 1001 distinct values in one log row: "any value", so it reruns (its answer is the same: no frame).
        await fill(20_000, 1001);
        await caughtUp();
        await idle();
        expect(runs()).toBe(before + 1);
        await putEvent(tenantId, 'seven', 'n', 7);
        expect((await stream.next()).json.result).toEqual(['seven']);
      } finally {
        stream.close();
      }
    });
  });
}
