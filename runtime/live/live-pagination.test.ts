import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type LiveTestRuntime, openEventStream, serveLiveRuntime } from '../../e2e/support/live-server.ts';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import { until } from '../../e2e/support/until.ts';
import type { FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { command, liveQuery } from '../core/entries.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { paginate, paginationArgs, type PaginationOptions } from '../core/paginate.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import type { LiveHub } from './hub.ts';
import { logBounds } from './log.ts';

/**
 * Paginated liveQueries (docs/live.md "Pagination"): each page's read set is the range of its bounds,
 * so a write inside page 3 reruns page 3 and no other page; pages held by their bounds neither lose nor
 * repeat a row when rows are inserted, deleted or moved across a boundary.
 */
const schema = defineSchema({
  items: table({ id: t.uuid().primaryKey().defaultRandom(), list: t.integer(), rank: t.integer(), title: t.text() }),
  posts: table({ id: t.uuid().primaryKey().defaultRandom(), at: t.timestamptz(), title: t.text() }),
});

function testApp(): AppDefinition {
  const entries = {
    addItem: command({
      args: { list: z.number().int(), rank: z.number().int(), title: z.string() },
      handler: (ctx, args) => ctx.db.insertInto('items').values(args).execute().then(() => 'ok'),
    }),
    renameItem: command({
      args: { rank: z.number().int(), title: z.string() },
      handler: (ctx, args) => ctx.db.updateTable('items').set({ title: args.title }).where('rank', '=', args.rank).execute().then(() => 'ok'),
    }),
    moveItem: command({
      args: { from: z.number().int(), to: z.number().int() },
      handler: (ctx, args) => ctx.db.updateTable('items').set({ rank: args.to }).where('rank', '=', args.from).execute().then(() => 'ok'),
    }),
    deleteItem: command({
      args: { rank: z.number().int() },
      handler: (ctx, args) => ctx.db.deleteFrom('items').where('rank', '=', args.rank).execute().then(() => 'ok'),
    }),
    addPost: command({
      args: { at: z.string(), title: z.string() },
      handler: (ctx, args) => ctx.db.insertInto('posts').values({ at: new Date(args.at), title: args.title }).execute().then(() => 'ok'),
    }),
    posts: liveQuery({
      args: { page: paginationArgs },
      handler: (ctx, args) => paginate(ctx.db.selectFrom('posts').select(['at', 'title', 'id']), { orderBy: [['at', 'desc'], ['id', 'desc']] }, args),
    }),
    items: liveQuery({
      args: { list: z.number().int(), page: paginationArgs },
      handler: (ctx, args) =>
        paginate(ctx.db.selectFrom('items').select(['rank', 'title']).where('list', '=', args.list), { orderBy: [['rank', 'desc'], ['title', 'desc']] }, args),
    }),
  };
  return { entries: new Map(Object.entries(entries)), policies: {}, schema };
}

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`paginated live queries (${target.name})`, () => {
    let db: FwDatabase;
    let runtime: LiveTestRuntime;
    let hub: LiveHub;
    let url: string;
    let drop = async () => {};

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      const app = testApp();
      await applyMigration(db, app.schema);
      runtime = await serveLiveRuntime(app, db, { pollIntervalMs: 100, safetyPollIntervalMs: 600_000 });
      ({ hub, url } = runtime);
    });

    afterAll(async () => {
      await runtime?.close();
      await db?.close();
      await drop();
    });

    const member = () => {
      const tenantId = randomUUID();
      return { tenantId, headers: { 'x-fw-user-id': `u-${randomUUID()}`, 'x-fw-tenant-id': tenantId, 'x-fw-role': 'member' } };
    };
    const call = async (name: string, args: unknown, headers: Record<string, string>) => {
      const response = await fetch(`${url}/commands/${name}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ args }) });
      const body = await response.json();
      expect(response.status, JSON.stringify(body)).toBe(200);
      return body.result;
    };
    const read = async (args: unknown, headers: Record<string, string>) => {
      const response = await fetch(`${url}/queries/items`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ args }) });
      return { status: response.status, body: await response.json() };
    };
    const live = (args: unknown, headers: Record<string, string>) => openEventStream(`${url}/live/items?args=${encodeURIComponent(JSON.stringify(args))}`, { headers });
    const groupOf = (tenantId: string, args: unknown) =>
      hub
        .status()
        .liveQueries.find((q) => q.name === 'items')
        ?.groupList.find((group) => group.tenantId === tenantId && JSON.stringify(group.args) === JSON.stringify(args));
    const caughtUp = async () => {
      const { latestRevision } = await logBounds(db.admin);
      await until(async () => hub.status().revision >= latestRevision, `the live reader to read revision ${latestRevision}`);
    };
    const ranks = (result: { page: Array<{ rank: number }> }) => result.page.map((row) => row.rank);

    it('pages split the order with no gap or duplicate, and a held page keeps its bounds', async () => {
      const { headers } = member();
      for (let rank = 1; rank <= 7; rank++) await call('addItem', { list: 1, rank, title: `r${rank}` }, headers);
      const page = (options: PaginationOptions) => read({ list: 1, page: options }, headers).then((answer) => answer.body.result);
      const one = await page({ cursor: null, numItems: 3 });
      expect(ranks(one)).toEqual([7, 6, 5]);
      expect(one.isDone).toBe(false);
      const two = await page({ cursor: one.continueCursor, numItems: 3 });
      expect(ranks(two)).toEqual([4, 3, 2]);
      const three = await page({ cursor: two.continueCursor, numItems: 3 });
      expect(ranks(three)).toEqual([1]);
      expect(three.isDone).toBe(true);

      // Inserts at both boundaries, and a delete inside page two. Held by its bounds, a page takes every
      // row between them and no row of its neighbours: 'r5a' ties with page one's last row on rank and
      // sorts before it (title desc), so it joins page one; 'r2a' sorts just before page two's last row.
      await call('addItem', { list: 1, rank: 5, title: 'r5a' }, headers);
      await call('addItem', { list: 1, rank: 2, title: 'r2a' }, headers);
      await call('deleteItem', { rank: 3 }, headers);
      const oneHeld = await page({ cursor: null, numItems: 3, endCursor: one.continueCursor });
      const twoHeld = await page({ cursor: one.continueCursor, numItems: 3, endCursor: two.continueCursor });
      const threeOpen = await page({ cursor: two.continueCursor, numItems: 3 });
      const all = [...oneHeld.page, ...twoHeld.page, ...threeOpen.page].map((row: { title: string }) => row.title);
      expect(all).toEqual(['r7', 'r6', 'r5a', 'r5', 'r4', 'r2a', 'r2', 'r1']);
      expect(oneHeld.page.map((row: { title: string }) => row.title)).toEqual(['r7', 'r6', 'r5a', 'r5']);
      expect(twoHeld.continueCursor).toBe(two.continueCursor);
    });

    it('a malformed cursor, or one issued for other args, answers 400 invalid_cursor', async () => {
      const { headers } = member();
      await call('addItem', { list: 2, rank: 1, title: 'a' }, headers);
      const first = (await read({ list: 2, page: { cursor: null, numItems: 1 } }, headers)).body.result;
      const malformed = await read({ list: 2, page: { cursor: 'not a cursor', numItems: 1 } }, headers);
      expect(malformed.status).toBe(400);
      expect(malformed.body.error.code).toBe('invalid_cursor');
      expect(malformed.body.error.diagnostics[0].path).toBe('page.cursor');
      const otherArgs = await read({ list: 3, page: { cursor: first.continueCursor, numItems: 1 } }, headers);
      expect(otherArgs.status).toBe(400);
      expect(otherArgs.body.error.code).toBe('invalid_cursor');
    });

    it('pages ordered by a timestamptz read ranges too: a write in page 2 reruns page 2 only', async () => {
      const { tenantId, headers } = member();
      const at = (minute: number) => `2026-11-27T10:${String(minute).padStart(2, '0')}:00.123456Z`;
      for (let minute = 1; minute <= 6; minute++) await call('addPost', { at: at(minute * 5), title: `m${minute * 5}` }, headers);
      const readPosts = async (page: PaginationOptions) => {
        const response = await fetch(`${url}/queries/posts`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ args: { page } }) });
        return (await response.json()).result;
      };
      const one = await readPosts({ cursor: null, numItems: 2 });
      const two = await readPosts({ cursor: one.continueCursor, numItems: 2 });
      const pages = [
        { page: { cursor: null, numItems: 2, endCursor: one.continueCursor } },
        { page: { cursor: one.continueCursor, numItems: 2, endCursor: two.continueCursor } },
        { page: { cursor: two.continueCursor, numItems: 2 } },
      ];
      const postsGroup = (args: unknown) =>
        hub
          .status()
          .liveQueries.find((q) => q.name === 'posts')
          ?.groupList.find((group) => group.tenantId === tenantId && JSON.stringify(group.args) === JSON.stringify(args));
      const titles = (result: { page: Array<{ title: string }> }) => result.page.map((row) => row.title);
      const streams = await Promise.all(pages.map((args) => openEventStream(`${url}/live/posts?args=${encodeURIComponent(JSON.stringify(args))}`, { headers })));
      try {
        expect((await Promise.all(streams.map((stream) => stream.next()))).map((event) => titles(event.json.result))).toEqual([
          ['m30', 'm25'],
          ['m20', 'm15'],
          ['m10', 'm5'],
        ]);
        // The cursors carry the rows' text forms: the instants of page boundaries, compared as instants,
        // each bound the cursor's OR — past its instant, or on it past its id — kept branch by branch.
        const [m25, m15] = [one.page[1].id as string, two.page[1].id as string];
        const t25 = 'at = "2026-11-27T10:25:00.123+00"';
        const t15 = 'at = "2026-11-27T10:15:00.123+00"';
        expect(pages.map((args) => postsGroup(args)?.readSet)).toEqual([
          { posts: ['at >= "2026-11-27T10:25:00.123+00" and at > "2026-11-27T10:25:00.123+00"', `at >= "2026-11-27T10:25:00.123+00" and ${t25} and id >= "${m25}"`] },
          {
            posts: [
              'at <= "2026-11-27T10:25:00.123+00" and at >= "2026-11-27T10:15:00.123+00" and at < "2026-11-27T10:25:00.123+00" and at > "2026-11-27T10:15:00.123+00"',
              `at <= "2026-11-27T10:25:00.123+00" and at >= "2026-11-27T10:15:00.123+00" and at < "2026-11-27T10:25:00.123+00" and ${t15} and id >= "${m15}"`,
              `at <= "2026-11-27T10:25:00.123+00" and at >= "2026-11-27T10:15:00.123+00" and ${t25} and id < "${m25}" and at > "2026-11-27T10:15:00.123+00"`,
              `at <= "2026-11-27T10:25:00.123+00" and at >= "2026-11-27T10:15:00.123+00" and ${t25} and id < "${m25}" and ${t15} and id >= "${m15}"`,
            ],
          },
          { posts: ['at <= "2026-11-27T10:15:00.123+00" and at < "2026-11-27T10:15:00.123+00"', `at <= "2026-11-27T10:15:00.123+00" and ${t15} and id < "${m15}"`] },
        ]);
        await caughtUp();
        const runs = pages.map((args) => postsGroup(args)!.runs);
        await call('addPost', { at: at(17), title: 'm17' }, headers);
        expect(titles((await streams[1]!.next()).json.result)).toEqual(['m20', 'm17', 'm15']);
        await caughtUp();
        expect(pages.map((args, i) => postsGroup(args)!.runs - runs[i]!)).toEqual([0, 1, 0]);
      } finally {
        for (const stream of streams) stream.close();
      }
    });

    it('a row moving from one page to the next reaches a stream holding both pages in one piece', async () => {
      const { headers } = member();
      for (let rank = 1; rank <= 6; rank++) await call('addItem', { list: 5, rank: rank * 10, title: `r${rank * 10}` }, headers);
      const one = (await read({ list: 5, page: { cursor: null, numItems: 3 } }, headers)).body.result;
      const subscriptions = [
        { key: 'p1', name: 'items', args: { list: 5, page: { cursor: null, numItems: 3, endCursor: one.continueCursor } } },
        { key: 'p2', name: 'items', args: { list: 5, page: { cursor: one.continueCursor, numItems: 3 } } },
      ];
      // The raw stream, a chunk per read: what a client gets in one piece it applies in one go.
      const controller = new AbortController();
      const response = await fetch(`${url}/live`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ subscriptions }), signal: controller.signal });
      expect(response.status).toBe(200);
      const chunks: string[] = [];
      const reading = (async () => {
        const decoder = new TextDecoder();
        for await (const chunk of response.body!) chunks.push(decoder.decode(chunk as Uint8Array, { stream: true }));
      })().catch(() => undefined);
      const snapshotsOf = (text: string) =>
        text
          .split('\n\n')
          .filter((event) => /^event: snapshot$/m.test(event))
          .map((event) => /"key":"(p[12])"/.exec(event)?.[1])
          .filter((key) => key !== undefined);
      try {
        await until(async () => snapshotsOf(chunks.join('')).length >= 2, 'the first snapshots of both pages');
        await caughtUp();
        const before = chunks.length;
        await call('moveItem', { from: 40, to: 35 }, headers);
        await until(async () => new Set(snapshotsOf(chunks.slice(before).join(''))).size === 2, 'both pages after the move');
        // Page one lost its last row and page two gained it: both frames in the same piece, so no render
        // shows the row in neither page.
        const pieces = chunks.slice(before).map(snapshotsOf).filter((keys) => keys.length > 0);
        expect(pieces[0]?.sort()).toEqual(['p1', 'p2']);
      } finally {
        controller.abort();
        await reading;
      }
    });

    it('each page reads a range: a write in page 3 reruns page 3 only', async () => {
      const { tenantId, headers } = member();
      for (let rank = 1; rank <= 9; rank++) await call('addItem', { list: 4, rank: rank * 10, title: `r${rank * 10}` }, headers);
      const page = (options: PaginationOptions) => read({ list: 4, page: options }, headers).then((answer) => answer.body.result);
      const one = await page({ cursor: null, numItems: 3 });
      const two = await page({ cursor: one.continueCursor, numItems: 3 });
      const argsOf = (options: PaginationOptions) => ({ list: 4, page: options });
      const pages = [
        argsOf({ cursor: null, numItems: 3, endCursor: one.continueCursor }),
        argsOf({ cursor: one.continueCursor, numItems: 3, endCursor: two.continueCursor }),
        argsOf({ cursor: two.continueCursor, numItems: 3 }),
      ];
      const streams = await Promise.all(pages.map((args) => live(args, headers)));
      try {
        const firsts = await Promise.all(streams.map((stream) => stream.next()));
        expect(firsts.map((event) => ranks(event.json.result))).toEqual([
          [90, 80, 70],
          [60, 50, 40],
          [30, 20, 10],
        ]);
        // Each bound is the cursor's OR — past its rank, or on its rank past its title — kept branch by branch.
        expect(groupOf(tenantId, pages[0])?.readSet).toEqual({ items: ['list = "4" and rank in 70.. and rank in 71..', 'list = "4" and rank in 70.. and rank = "70" and title >= "r70"'] });
        expect(groupOf(tenantId, pages[1])?.readSet).toEqual({
          items: [
            'list = "4" and rank in ..70 and rank in 40.. and rank in ..69 and rank in 41..',
            'list = "4" and rank in ..70 and rank in 40.. and rank in ..69 and rank = "40" and title >= "r40"',
            'list = "4" and rank in ..70 and rank in 40.. and rank = "70" and title < "r70" and rank in 41..',
            'list = "4" and rank in ..70 and rank in 40.. and rank = "70" and title < "r70" and rank = "40" and title >= "r40"',
          ],
        });
        expect(groupOf(tenantId, pages[2])?.readSet).toEqual({ items: ['list = "4" and rank in ..40 and rank in ..39', 'list = "4" and rank in ..40 and rank = "40" and title < "r40"'] });
        await caughtUp();
        const runs = pages.map((args) => groupOf(tenantId, args)!.runs);

        await call('renameItem', { rank: 20, title: 'twenty' }, headers);
        expect((await streams[2]!.next()).json.result.page.map((row: { title: string }) => row.title)).toEqual(['r30', 'twenty', 'r10']);
        await call('addItem', { list: 4, rank: 25, title: 'r25' }, headers);
        expect(ranks((await streams[2]!.next()).json.result)).toEqual([30, 25, 20]);
        await caughtUp();
        // Pages one and two never ran again: both writes fell outside their ranges.
        expect(pages.map((args, i) => groupOf(tenantId, args)!.runs - runs[i]!)).toEqual([0, 0, 2]);
      } finally {
        for (const stream of streams) stream.close();
      }
    });
  });
}
