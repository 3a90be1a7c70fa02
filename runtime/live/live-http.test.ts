import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import { until } from '../../e2e/support/until.ts';
import { APP_ROLE, createDatabase, type FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { command, definePolicies, liveQuery } from '../core/entries.ts';
import { createRuntimeHandler } from '../http/handler.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { createLiveHub, type LiveHub } from './hub.ts';
import { logBounds, pruneInvalidations } from './log.ts';
import { databaseSecret } from '../db/secrets.ts';
import { createRevisionCodec } from './revision-codec.ts';
import { type EventStream, type LiveTestRuntime, openEventStream, serveLiveRuntime } from '../../e2e/support/live-server.ts';

/**
 * A member of a tenant of its own. Every test makes its own, so it owns every row its liveQueries see
 * and every subscription counted against its tenant: tests pass alone and in any order.
 */
function member(userId: string) {
  const tenantId = randomUUID();
  return { tenantId, headers: { 'x-fw-user-id': userId, 'x-fw-tenant-id': tenantId, 'x-fw-role': 'member' } };
}

/** The log revision behind a tenant's revision token (clients get tokens: revision-codec.ts). */
async function logRevision(db: FwDatabase, token: number, tenantId: string): Promise<number> {
  return createRevisionCodec(await databaseSecret(db.admin, 'live.revision')).decode(token, tenantId)!;
}

const schema = defineSchema({
  notes: table({
    id: t.uuid().primaryKey().defaultRandom(),
    title: t.text(),
    created_at: t.timestamptz().defaultNow(),
  }),
  announcements: table({ id: t.uuid().primaryKey().defaultRandom(), text: t.text() }, { tenantScoped: false }),
});

function testApp(): AppDefinition {
  const entries = {
    createNote: command({
      args: { title: z.string().min(1) },
      handler: (ctx, args) => ctx.db.insertInto('notes').values({ title: args.title }).returningAll().executeTakeFirstOrThrow(),
    }),
    announce: command({
      args: { text: z.string() },
      handler: (ctx, args) => ctx.db.insertInto('announcements').values({ text: args.text }).execute().then(() => 'ok'),
    }),
    // No tenant filter on purpose: row-level security must scope it.
    liveNotes: liveQuery({
      handler: (ctx) => ctx.db.selectFrom('notes').select(['title']).orderBy('title').execute(),
    }),
    liveSearch: liveQuery({
      args: { prefix: z.string().max(20) },
      handler: (ctx, args) => ctx.db.selectFrom('notes').select(['title']).where('title', 'like', `${args.prefix}%`).orderBy('title').execute(),
    }),
    liveAnnouncements: liveQuery({ handler: (ctx) => ctx.db.selectFrom('announcements').select(['text']).orderBy('text').execute() }),
    liveRaw: liveQuery({ handler: async (ctx) => (await sql<{ n: number }>`select count(*)::int as n from notes`.execute(ctx.db)).rows[0] }),
    liveRawDeclared: liveQuery({
      reads: ['notes'],
      handler: async (ctx) => (await sql<{ n: number }>`select count(*)::int as n from notes`.execute(ctx.db)).rows[0],
    }),
    liveAdmin: liveQuery({ policy: 'admin', handler: () => 'secret' }),
    // A view: no trigger logs writes to it.
    // JSON has no BigInt: an app that hands one over is told where.
    liveBigint: liveQuery({ handler: async (ctx) => [{ n: BigInt((await ctx.db.selectFrom('notes').select(['id']).execute()).length) }] }),
    liveView: liveQuery({ handler: (ctx) => ctx.db.selectFrom('note_titles').select(['title']).orderBy('title').execute() }),
    liveViewDeclared: liveQuery({ reads: ['notes'], handler: (ctx) => ctx.db.selectFrom('note_titles').select(['title']).orderBy('title').execute() }),
    // A function that reads another table: its read is hidden from the query tree.
    liveFunction: liveQuery({
      handler: (ctx) => ctx.db.selectFrom('notes').select((eb) => [eb.fn.countAll<number>().as('notes'), eb.fn<number>('announcement_count', []).as('announcements')]).executeTakeFirst(),
    }),
    liveFunctionDeclared: liveQuery({
      reads: ['notes', 'announcements'],
      handler: (ctx) => ctx.db.selectFrom('notes').select((eb) => [eb.fn.countAll<number>().as('notes'), eb.fn<number>('announcement_count', []).as('announcements')]).executeTakeFirst(),
    }),
    // PostgreSQL's own functions read no table: still precise, nothing to declare.
    liveBuiltins: liveQuery({
      handler: (ctx) => ctx.db.selectFrom('notes').select((eb) => [eb.fn<string>('lower', ['title']).as('title'), eb.fn<string>('date_trunc', [sql.lit('day'), 'created_at']).as('day')]).orderBy('title').execute(),
    }),
    // The clock: an answer that changes as time passes, with no write.
    liveClock: liveQuery({ handler: (ctx) => ctx.db.selectFrom('notes').select(['title']).where(sql<boolean>`created_at <= now()`).orderBy('title').execute() }),
    liveDue: liveQuery({
      refreshMs: 1000,
      handler: (ctx) => ctx.db.selectFrom('notes').select(['title']).where(sql<boolean>`created_at <= now()`).orderBy('title').execute(),
    }),
    // Fails while an announcement says so; its answer is the same before and after.
    liveFlaky: liveQuery({
      handler: async (ctx) => {
        const failing = await ctx.db.selectFrom('announcements').select('text').where('text', 'like', 'flaky-fail-%').execute();
        if (failing.length > 0) throw new Error(`failing on ${failing[0]!.text}`);
        return 'fine';
      },
    }),
    // A CTE's name is the statement's own: the table it reads is notes.
    liveCte: liveQuery({
      handler: (ctx) =>
        ctx.db
          .with('recent', (db) => db.selectFrom('notes').select(['title']))
          .selectFrom('recent')
          .select(['title'])
          .orderBy('title')
          .execute(),
    }),
  };
  return {
    entries: new Map(Object.entries(entries)),
    policies: definePolicies({ admin: ({ auth }) => auth.role === 'admin' }),
    schema,
  };
}


/**
 * A resume where nothing reached the subscriber's tenant is exactly `up-to-date`, on PGlite and on
 * PostgreSQL alike: the tenant is the test's own and wrote nothing before the resume, so the log holds no
 * row that concerns it — not even one of a transaction that ran beside the snapshot (that case, where a
 * transaction elsewhere in the cluster holds the horizon back and fw re-sends the data, is held in
 * log.test.ts). The revision never goes back.
 */
async function expectUpToDate(db: FwDatabase, event: { event?: string; id?: string; json: any }, snapshot: { json: any }, tenantId: string): Promise<void> {
  expect(event.event).toBe('up-to-date');
  expect(event.json).not.toHaveProperty('result');
  expect(event.id).toBe(String(event.json.revision));
  expect(await logRevision(db, event.json.revision, tenantId)).toBeGreaterThanOrEqual(await logRevision(db, snapshot.json.revision, tenantId));
}

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`live queries over HTTP (${target.name})`, () => {
    let db: FwDatabase;
    let hub: LiveHub;
    let runtime: LiveTestRuntime;
    let url: string;
    let drop = async () => {};

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      const app = testApp();
      await applyMigration(db, app.schema);
      // security_invoker: the view reads notes as the caller, under its row-level security.
      await sql.raw(`create view note_titles with (security_invoker = true) as select title from notes; grant select on note_titles to ${APP_ROLE}`).execute(db.admin);
      await sql.raw(`create function announcement_count() returns int language sql stable as 'select count(*)::int from announcements'; grant execute on function announcement_count() to ${APP_ROLE}`).execute(db.admin);
      runtime = await serveLiveRuntime(app, db, { pollIntervalMs: 200, maxSubscriptionsPerTenant: 20 });
      ({ hub, url } = runtime);
    });

    afterAll(async () => {
      await runtime?.close();
      await db?.close();
      await drop();
    });

    const run = (name: string, args: unknown, headers: Record<string, string>) =>
      fetch(`${url}/commands/${name}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ args }) }).then(
        async (response) => ({ status: response.status, body: await response.json() }),
      );
    const write = async (title: string, headers: Record<string, string>) => expect((await run('createNote', { title }, headers)).status).toBe(200);
    const live = (name: string, headers: Record<string, string>, query = '') => openEventStream(`${url}/live/${name}${query}`, { headers });
    /**
     * Closes a stream and waits until the hub has dropped its subscription (it notices the disconnect
     * later): until then its group lives on, and a resume would join it — with data that may predate a
     * write its reader has not delivered yet.
     */
    const closeAndForget = async (stream: EventStream, subscriptionId: string) => {
      stream.close();
      await until(async () => hub.debug(subscriptionId) === undefined, `the hub to drop ${subscriptionId}`, { intervalMs: 10 });
    };

    it('sends the initial snapshot first, then a new snapshot after a command, with revisions as ids', async () => {
      const alice = member('alice');
      const stream = await live('liveNotes', alice.headers);
      try {
        expect(stream.status).toBe(200);
        expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
        expect(stream.headers.get('cache-control')).toBe('no-cache, no-transform');
        expect(stream.headers.get('x-accel-buffering')).toBe('no');
        expect(stream.headers.get('x-fw-trace-id')).toBeTruthy();
        const first = await stream.next();
        expect(first.event).toBe('snapshot');
        expect(first.json.result).toEqual([]);
        expect(first.id).toBe(String(first.json.revision));
        expect(first.json.subscriptionId).toMatch(/^sub_/);

        await write('alpha', alice.headers);
        const second = await stream.next();
        expect(second.event).toBe('snapshot');
        expect(second.json.result).toEqual([{ title: 'alpha' }]);
        expect(second.id).toBe(String(second.json.revision));
        expect(await logRevision(db, second.json.revision, alice.tenantId)).toBeGreaterThan(await logRevision(db, first.json.revision, alice.tenantId));
      } finally {
        stream.close();
      }
    });

    it("never pushes to another tenant: bob's group does not even re-run for alice's write", async () => {
      const alice = member('alice');
      const bob = member('bob');
      const aliceStream = await live('liveNotes', alice.headers);
      const bobStream = await live('liveNotes', bob.headers);
      try {
        expect((await aliceStream.next()).json.result).toEqual([]);
        const bobFirst = await bobStream.next();
        expect(bobFirst.json.result).toEqual([]);
        const bobGroup = () => hub.debug(bobFirst.json.subscriptionId)!.group;
        const bobRuns = bobGroup().runs;

        await write('beta', alice.headers);
        expect((await aliceStream.next()).json.result).toEqual([{ title: 'beta' }]);
        // Alice's group ran for the reader batch that carried her write; a group of bob's scheduled for
        // the same batch would be running now or have run (it is scheduled in the same call).
        expect(bobGroup()).toMatchObject({ runs: bobRuns, running: false });

        // Bob's own write: exactly one run, and his next frame is his own note only.
        await write('bob-1', bob.headers);
        expect((await bobStream.next()).json.result).toEqual([{ title: 'bob-1' }]);
        expect(bobGroup().runs).toBe(bobRuns + 1);
      } finally {
        aliceStream.close();
        bobStream.close();
      }
    });

    it('a write to a table that is not tenant-scoped reaches every tenant', async () => {
      const alice = member('alice');
      const bob = member('bob');
      const text = `maintenance at noon ${randomUUID()}`;
      const aliceStream = await live('liveAnnouncements', alice.headers);
      const bobStream = await live('liveAnnouncements', bob.headers);
      try {
        // Announcements belong to every tenant; only this test writes them.
        const before = (await aliceStream.next()).json.result;
        expect((await bobStream.next()).json.result).toEqual(before);
        const expected = [...before, { text }].sort((a: { text: string }, b: { text: string }) => (a.text < b.text ? -1 : 1));
        expect((await run('announce', { text }, alice.headers)).status).toBe(200);
        expect((await aliceStream.next()).json.result).toEqual(expected);
        expect((await bobStream.next()).json.result).toEqual(expected);
      } finally {
        aliceStream.close();
        bobStream.close();
      }
    });

    it('identical subscriptions share one group; a run that changes nothing sends nothing', async () => {
      const alice = member('alice');
      const search = `?args=${encodeURIComponent('{"prefix":"zz"}')}`;
      const one = await live('liveSearch', alice.headers, search);
      const two = await live('liveSearch', alice.headers, search);
      try {
        const a = await one.next();
        const b = await two.next();
        expect([a.json.result, b.json.result]).toEqual([[], []]);
        const group = () => hub.debug(a.json.subscriptionId)!.group;
        expect(group().subscribers).toBe(2);
        expect(hub.debug(b.json.subscriptionId)!.group).toEqual(group());
        const { runs, unchangedRuns } = group();

        // A note of the "zz" prefix written and deleted in one transaction: its log row concerns the group
        // (it re-runs once), and the result is unchanged. (A note of another prefix would not re-run it:
        // the LIKE is part of its read set.)
        await db.admin.transaction().execute(async (trx) => {
          await sql`insert into notes (tenant_id, title) values (${alice.tenantId}, 'zz-gone')`.execute(trx);
          await sql`delete from notes where tenant_id = ${alice.tenantId} and title = 'zz-gone'`.execute(trx);
        });
        await until(async () => group().runs === runs + 1 && !group().running, 'the re-run for the unrelated note', { intervalMs: 10 });
        expect(group().unchangedRuns).toBe(unchangedRuns + 1);

        // The next write that matters is the next frame on both streams: the unchanged run sent none.
        await write('zz-top', alice.headers);
        expect((await one.next()).json.result).toEqual([{ title: 'zz-top' }]);
        expect((await two.next()).json.result).toEqual([{ title: 'zz-top' }]);
        // One run per write for the whole group, never one per subscriber.
        expect(group()).toMatchObject({ runs: runs + 2, unchangedRuns: unchangedRuns + 1 });
      } finally {
        one.close();
        two.close();
      }
    });

    it('resumes with Last-Event-ID: up-to-date when nothing changed, a snapshot after a write made while away', async () => {
      const bob = member('bob');
      const first = await live('liveNotes', bob.headers);
      const snapshot = await first.next();
      expect(snapshot.json.result).toEqual([]);
      await closeAndForget(first, snapshot.json.subscriptionId);

      const quiet = await live('liveNotes', { ...bob.headers, 'last-event-id': snapshot.id! });
      const upToDate = await quiet.next();
      await closeAndForget(quiet, upToDate.json.subscriptionId);
      await expectUpToDate(db, upToDate, snapshot, bob.tenantId);

      await write('while-away', bob.headers);
      const resumed = await live('liveNotes', { ...bob.headers, 'last-event-id': snapshot.id! });
      try {
        const fresh = await resumed.next();
        expect(fresh.event).toBe('snapshot');
        expect(fresh.json.result).toEqual([{ title: 'while-away' }]);
        // Labelled with the reader's revision before the run, which may not have read the write yet.
        expect(await logRevision(db, fresh.json.revision, bob.tenantId)).toBeGreaterThanOrEqual(await logRevision(db, snapshot.json.revision, bob.tenantId));
      } finally {
        resumed.close();
      }
    });

    it('a process where the liveQuery never ran resumes up-to-date, then follows the next write', async () => {
      const bob = member('bob');
      // A second hub on the same database stands for another runtime process (or a restarted one).
      const other = createLiveHub(db, { dev: true, pollIntervalMs: 200, pruneIntervalMs: 0 });
      other.setApp(testApp());
      await other.start();
      const otherServer = createServer(createRuntimeHandler({ app: testApp(), db, dev: true, live: other }));
      await new Promise<void>((resolve) => otherServer.listen(0, '127.0.0.1', resolve));
      const otherUrl = `http://127.0.0.1:${(otherServer.address() as AddressInfo).port}`;
      try {
        const first = await live('liveNotes', bob.headers);
        const snapshot = await first.next();
        first.close();
        const resumed = await openEventStream(`${otherUrl}/live/liveNotes`, { headers: { ...bob.headers, 'last-event-id': snapshot.id! } });
        try {
          await expectUpToDate(db, await resumed.next(), snapshot, bob.tenantId);
          await write('after-resume-elsewhere', bob.headers);
          const fresh = await resumed.next();
          expect(fresh.event).toBe('snapshot');
          expect(fresh.json.result).toEqual([{ title: 'after-resume-elsewhere' }]);
        } finally {
          resumed.close();
        }
      } finally {
        await other.close();
        otherServer.closeAllConnections();
        await new Promise((resolve) => otherServer.close(resolve));
      }
    });

    it('resumes with ?lastRevision= too, and a write by another tenant does not count as a change', async () => {
      const alice = member('alice');
      const bob = member('bob');
      const first = await live('liveNotes', bob.headers);
      const snapshot = await first.next();
      await closeAndForget(first, snapshot.json.subscriptionId);
      await write('alice-only', alice.headers);
      const resumed = await live('liveNotes', bob.headers, `?lastRevision=${snapshot.json.revision}`);
      const event = await resumed.next();
      await closeAndForget(resumed, event.json.subscriptionId);
      await expectUpToDate(db, event, snapshot, bob.tenantId);

      await write('bob-while-away', bob.headers);
      const again = await live('liveNotes', bob.headers, `?lastRevision=${snapshot.json.revision}`);
      try {
        const changed = await again.next();
        expect(changed.event).toBe('snapshot');
        expect(changed.json.result).toEqual([{ title: 'bob-while-away' }]);
      } finally {
        again.close();
      }
    });

    it('a revision older than the retained log gets an explicit reset, then the snapshot', async () => {
      const alice = member('alice');
      const first = await live('liveNotes', alice.headers);
      const snapshot = await first.next();
      await closeAndForget(first, snapshot.json.subscriptionId);
      await write('gamma', alice.headers);
      await write('delta', alice.headers);
      const { prunedThrough } = await pruneInvalidations(db.admin, { olderThanMs: 0 });
      // The tests after this one label snapshots with this process's reader revision: once it has read
      // past the floor, their resumes are inside the window again.
      await until(async () => hub.status().revision >= prunedThrough, "the hub's reader to pass the pruned floor", { intervalMs: 10 });
      const resumed = await live('liveNotes', alice.headers, `?lastRevision=${snapshot.json.revision}`);
      try {
        const reset = await resumed.next();
        expect(reset.event).toBe('reset');
        expect(reset.json).toMatchObject({ reason: 'revision_expired', oldestRevision: expect.any(Number) });
        expect(await logRevision(db, reset.json.oldestRevision, alice.tenantId)).toBe(prunedThrough);
        const fresh = await resumed.next();
        expect(fresh.event).toBe('snapshot');
        expect(fresh.json.result).toEqual([{ title: 'delta' }, { title: 'gamma' }]);
      } finally {
        resumed.close();
      }
    });

    it('answers problems before the stream starts with JSON errors and honest statuses', async () => {
      const alice = member('alice');
      const get = (path: string, headers: Record<string, string> = alice.headers) =>
        fetch(`${url}${path}`, { headers }).then(async (r) => ({ status: r.status, body: await r.json() }));
      const badJson = await get('/live/liveSearch?args=%7Bnope');
      expect([badJson.status, badJson.body.error.code]).toEqual([400, 'bad_json']);
      const invalid = await get(`/live/liveSearch?args=${encodeURIComponent('{"prefix":42}')}`);
      expect([invalid.status, invalid.body.error.code]).toEqual([400, 'validation_failed']);
      expect(invalid.body.error.diagnostics[0].path).toBe('args.prefix');
      expect((await get('/live/liveAdmin')).status).toBe(403);
      expect((await get('/live/liveNotes', {})).status).toBe(401);
      const unknown = await get('/live/nope');
      expect([unknown.status, unknown.body.error.code]).toEqual([404, 'not_found']);
      expect((await get('/live/createNote')).status).toBe(404);
      const badRevision = await get('/live/liveNotes?lastRevision=abc');
      expect([badRevision.status, badRevision.body.error.diagnostics[0].path]).toEqual([400, 'query.lastRevision']);
      const post = await fetch(`${url}/live/liveNotes`, { method: 'POST', headers: alice.headers });
      expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET']);
    });

    it('raw SQL must declare its tables; declared reads are followed', async () => {
      const alice = member('alice');
      const raw = await fetch(`${url}/live/liveRaw`, { headers: alice.headers });
      const body = await raw.json();
      expect(raw.status).toBe(500);
      expect(body.error.message).toMatch(/Declare them: liveQuery\(\{ reads/);

      const stream = await live('liveRawDeclared', alice.headers);
      try {
        expect((await stream.next()).json.result).toEqual({ n: 0 });
        await write('counted', alice.headers);
        expect((await stream.next()).json.result).toEqual({ n: 1 });
      } finally {
        stream.close();
      }
    });

    it('says where a liveQuery\'s result holds a BigInt, which JSON cannot carry', async () => {
      const refused = await fetch(`${url}/live/liveBigint`, { headers: member('alice').headers });
      const body = await refused.json();
      expect(refused.status).toBe(500);
      expect(body.error.message).toBe('liveQuery "liveBigint" answered a BigInt at result.0.n, which JSON cannot carry.');
      expect(body.error.diagnostics).toEqual([{ path: 'result.0.n', code: 'not_json', message: expect.stringContaining('Return Number(value)') }]);
    });

    it('refuses a liveQuery that reads a view it does not declare; declared, it updates; a CTE is not a view', async () => {
      const alice = member('alice');
      const refused = await fetch(`${url}/live/liveView`, { headers: alice.headers });
      const body = await refused.json();
      expect(refused.status).toBe(500);
      expect(body.error.message).toMatch(/^liveQuery "liveView" reads "note_titles", which fw does not capture writes to .*Declare the tables it depends on: liveQuery\(\{ reads/);
      expect(body.error.diagnostics).toEqual([{ path: 'liveQuery.liveView', code: 'unmanaged_read', message: '"note_titles" is not a table fw captures writes to.' }]);

      for (const name of ['liveViewDeclared', 'liveCte']) {
        const stream = await live(name, alice.headers);
        try {
          const before = (await stream.next()).json.result.length as number;
          await write(`${name}-title`, alice.headers);
          const after = await stream.nextWhere((event) => event.json.result?.length === before + 1);
          expect(after.json.result.map((r: { title: string }) => r.title)).toContain(`${name}-title`);
        } finally {
          stream.close();
        }
      }
    });

    it('refuses a liveQuery calling a function fw cannot prove reads no table; declared, writes to what it reads rerun it', async () => {
      const alice = member('alice');
      const refused = await fetch(`${url}/live/liveFunction`, { headers: alice.headers });
      const body = await refused.json();
      expect(refused.status).toBe(500);
      expect(body.error.diagnostics).toEqual([{ path: 'liveQuery.liveFunction', code: 'unmanaged_read', message: '"announcement_count()" is a function fw cannot prove reads no table.' }]);

      const stream = await live('liveFunctionDeclared', alice.headers);
      try {
        const first = (await stream.next()).json.result;
        await run('announce', { text: `fn-${randomUUID()}` }, alice.headers);
        const after = await stream.nextWhere((event) => event.json.result?.announcements === first.announcements + 1);
        expect(after.json.result.notes).toBe(first.notes);
      } finally {
        stream.close();
      }

      const builtins = await live('liveBuiltins', alice.headers);
      try {
        const before = (await builtins.next()).json.result.length as number;
        await write('Builtin-Title', alice.headers);
        const after = await builtins.nextWhere((event) => event.json.result?.length === before + 1);
        expect(after.json.result.map((r: { title: string }) => r.title)).toContain('builtin-title');
      } finally {
        builtins.close();
      }
    });

    it('refuses a liveQuery that reads the clock without refreshMs; with it, a row that becomes due appears with no write', async () => {
      const alice = member('alice');
      const refused = await fetch(`${url}/live/liveClock`, { headers: alice.headers });
      const body = await refused.json();
      expect(refused.status).toBe(500);
      expect(body.error.diagnostics).toEqual([{ path: 'liveQuery.liveClock', code: 'clock_read', message: 'reads the clock (now()) without refreshMs.' }]);

      const stream = await live('liveDue', alice.headers);
      try {
        expect((await stream.next()).json.result).toEqual([]);
        // Written now, due a moment later: the write's own rerun does not show it yet.
        await sql`insert into notes (title, tenant_id, created_at) values ('due soon', ${alice.tenantId}, now() + interval '1500 milliseconds')`.execute(db.admin);
        const due = await stream.nextWhere((event) => event.json.result?.length === 1, 15_000);
        expect(due.json.result).toEqual([{ title: 'due soon' }]);
      } finally {
        stream.close();
      }
    });

    it('after an error frame, the next good run sends the snapshot again even when it equals the last one', async () => {
      const alice = member('alice');
      const stream = await live('liveFlaky', alice.headers);
      const marker = `flaky-fail-${randomUUID()}`;
      try {
        expect((await stream.next()).json.result).toBe('fine');
        await run('announce', { text: marker }, alice.headers);
        const failed = await stream.next();
        expect([failed.event, failed.json.error.code]).toEqual(['error', 'internal']);
        await sql`delete from announcements where text = ${marker}`.execute(db.admin);
        // The answer is 'fine' again, as before the error: without this frame the page would show the error for good.
        const recovered = await stream.next();
        expect([recovered.event, recovered.json.result]).toEqual(['snapshot', 'fine']);
      } finally {
        stream.close();
        await sql`delete from announcements where text = ${marker}`.execute(db.admin);
      }
    });

    it('enforces the per-tenant limit with 429 too_many_subscriptions', async () => {
      const bob = member('bob');
      const streams = await Promise.all(Array.from({ length: 20 }, () => live('liveNotes', bob.headers)));
      let ids: string[];
      try {
        ids = (await Promise.all(streams.map((s) => s.next()))).map((event) => event.json.subscriptionId);
        const refused = await fetch(`${url}/live/liveNotes`, { headers: bob.headers });
        const body = await refused.json();
        expect([refused.status, body.error.code]).toEqual([429, 'too_many_subscriptions']);
        expect(body.error.message).toMatch(/This tenant holds 20 live subscriptions in this process; the limit is 20/);
      } finally {
        for (const s of streams) s.close();
      }
      // Closing releases the slots (the server notices each disconnect): the tenant may subscribe again.
      await until(async () => ids.every((id) => hub.debug(id) === undefined), 'the hub to drop the closed subscriptions', { intervalMs: 10 });
      const again = await live('liveNotes', bob.headers);
      try {
        expect(again.status).toBe(200);
        expect((await again.next()).event).toBe('snapshot');
      } finally {
        again.close();
      }
    });

    it('POST /live carries several subscriptions; a bad one gets a fatal error event, the others go on', async () => {
      const alice = member('alice');
      const stream = await openEventStream(`${url}/live`, {
        method: 'POST',
        headers: { ...alice.headers, 'content-type': 'application/json' },
        body: JSON.stringify({
          subscriptions: [
            { key: 'notes', name: 'liveNotes' },
            { key: 'search', name: 'liveSearch', args: { prefix: 'mux' } },
            { key: 'bad', name: 'liveSearch', args: { prefix: 7 } },
            { key: 'missing', name: 'nope' },
          ],
        }),
      });
      try {
        const events = [await stream.next(), await stream.next(), await stream.next(), await stream.next()];
        const byKey = Object.fromEntries(events.map((e) => [e.json.key, e]));
        expect(Object.keys(byKey).sort()).toEqual(['bad', 'missing', 'notes', 'search']);
        expect([byKey.notes!.event, byKey.notes!.json.result]).toEqual(['snapshot', []]);
        expect([byKey.search!.event, byKey.search!.json.result]).toEqual(['snapshot', []]);
        expect(byKey.bad!.event).toBe('error');
        expect(byKey.bad!.json).toMatchObject({ fatal: true, error: { code: 'validation_failed' } });
        expect(byKey.missing!.event).toBe('error');
        expect(byKey.missing!.json).toMatchObject({ fatal: true, error: { code: 'not_found' } });

        await write('mux-1', alice.headers);
        const updates = [await stream.next(), await stream.next()];
        expect(updates.map((e) => [e.json.key, e.event, e.json.result]).sort()).toEqual([
          ['notes', 'snapshot', [{ title: 'mux-1' }]],
          ['search', 'snapshot', [{ title: 'mux-1' }]],
        ]);
      } finally {
        stream.close();
      }
    });

    it('POST /live refuses a malformed body before streaming', async () => {
      const alice = member('alice');
      const post = (body: string) =>
        fetch(`${url}/live`, { method: 'POST', headers: { ...alice.headers, 'content-type': 'application/json' }, body }).then(async (r) => ({
          status: r.status,
          body: await r.json(),
        }));
      const badJson = await post('{');
      expect([badJson.status, badJson.body.error.code]).toEqual([400, 'bad_json']);
      const invalid = await post(JSON.stringify({ subscriptions: [{ key: 'a' }] }));
      expect([invalid.status, invalid.body.error.diagnostics[0].path]).toEqual([400, 'subscriptions.0.name']);
      const duplicate = await post(JSON.stringify({ subscriptions: [{ key: 'a', name: 'liveNotes' }, { key: 'a', name: 'liveNotes' }] }));
      expect([duplicate.status, duplicate.body.error.diagnostics[0].code]).toEqual([400, 'duplicate_key']);
      const many = await post(JSON.stringify({ subscriptions: Array.from({ length: 65 }, (_, i) => ({ key: `k${i}`, name: 'liveNotes' })) }));
      expect([many.status, many.body.error.code]).toEqual([429, 'too_many_subscriptions']);
      // A form post (text/plain) is not a subscription request.
      const form = await fetch(`${url}/live`, { method: 'POST', headers: { ...alice.headers, 'content-type': 'text/plain' }, body: '{"subscriptions":[]}' });
      expect([form.status, (await form.json()).error.code]).toEqual([415, 'unsupported_media_type']);
    });

    it('the admin routes show status, invalidations and one subscription (dev mode)', async () => {
      const alice = member('alice');
      const stream = await live('liveNotes', alice.headers);
      try {
        const first = await stream.next();
        await write('for-admin', alice.headers);
        expect((await stream.next()).json.result).toEqual([{ title: 'for-admin' }]);
        const status = await (await fetch(`${url}/_fw/live/status`)).json();
        // This stream at least; others of earlier tests may still be closing.
        expect(status.subscriptions).toBeGreaterThanOrEqual(1);
        expect(status.liveQueries.find((q: { name: string }) => q.name === 'liveNotes').reads).toEqual(['notes']);
        const list = await (await fetch(`${url}/_fw/live/invalidations?table=notes&tenant=${alice.tenantId}&limit=10`)).json();
        expect(list.invalidations).toHaveLength(1);
        expect(list.invalidations[0]).toMatchObject({ table: 'notes', tenantId: alice.tenantId });
        const debug = await (await fetch(`${url}/_fw/live/subscriptions/${first.json.subscriptionId}`)).json();
        expect(debug).toMatchObject({ liveQuery: 'liveNotes', auth: { tenantId: alice.tenantId }, group: { reads: ['notes'], subscribers: 1 } });
      } finally {
        stream.close();
      }
    });
  });
}

describe('admin routes outside dev mode', () => {
  it('are closed without the admin token and open with it', async () => {
    const db = await createDatabase();
    const app = testApp();
    await applyMigration(db, app.schema);
    const hub = createLiveHub(db, { pruneIntervalMs: 0 });
    hub.setApp(app);
    await hub.start();
    const closed = createServer(createRuntimeHandler({ app, db, dev: false, live: hub }));
    const open = createServer(createRuntimeHandler({ app, db, dev: false, live: hub, adminToken: 'correct horse battery staple' }));
    try {
      for (const server of [closed, open]) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const at = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/_fw/live/status`;
      expect((await fetch(at(closed))).status).toBe(403);
      expect((await fetch(at(closed), { headers: { 'x-fw-admin-token': 'correct horse battery staple' } })).status).toBe(403);
      expect((await fetch(at(open))).status).toBe(401);
      expect((await fetch(at(open), { headers: { 'x-fw-admin-token': 'wrong' } })).status).toBe(403);
      expect((await fetch(at(open), { headers: { 'x-fw-admin-token': 'correct horse battery staple' } })).status).toBe(200);
    } finally {
      await hub.close();
      for (const server of [closed, open]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
      await db.close();
    }
  });
});

describe('retention on a schedule', () => {
  it('prunes aged rows by itself; resumes inside the window stay exact, older ones are reset', async () => {
    const db = await createDatabase();
    const app = testApp();
    await applyMigration(db, app.schema);
    // A window of an hour, which no test run outlasts: resumes inside it are exact however slow the
    // machine. Ageing is done by hand (created_at moved back), and the pruner, every 100 ms, must act on it by itself.
    const hub = createLiveHub(db, { dev: true, retentionMs: 3_600_000, pruneIntervalMs: 100 });
    hub.setApp(app);
    await hub.start();
    const server = createServer(createRuntimeHandler({ app, db, dev: true, live: hub }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const alice = member('alice');
    const resume = async (revision: number) => {
      const stream = await openEventStream(`${url}/live/liveNotes?lastRevision=${revision}`, { headers: alice.headers });
      try {
        const event = await stream.next();
        return { event: event.event, json: event.json };
      } finally {
        stream.close();
      }
    };
    try {
      const stream = await openEventStream(`${url}/live/liveNotes`, { headers: alice.headers });
      const first = (await stream.next()).json.revision as number;
      const created = await fetch(`${url}/commands/createNote`, { method: 'POST', headers: { ...alice.headers, 'content-type': 'application/json' }, body: '{"args":{"title":"aging"}}' });
      expect(created.status).toBe(200);
      const second = (await stream.next()).json.revision as number;
      stream.close();
      const secondInLog = await logRevision(db, second, alice.tenantId);
      expect(secondInLog).toBeGreaterThan(await logRevision(db, first, alice.tenantId));
      // Inside the window (the pruner runs meanwhile): exact.
      expect(await resume(first)).toMatchObject({ event: 'snapshot', json: { result: [{ title: 'aging' }] } });
      expect(await resume(second)).toMatchObject({ event: 'up-to-date', json: { revision: second } });
      expect((await logBounds(db.admin)).prunedThrough).toBe(0);

      // Once the write has aged out of the window, the pruner removes what it can and raises the floor.
      await sql`update _fw_live_invalidations set created_at = now() - interval '2 hours'`.execute(db.admin);
      await until(async () => (await logBounds(db.admin)).prunedThrough === secondInLog, 'the pruner to raise the floor to the aged write');
      const reset = await openEventStream(`${url}/live/liveNotes?lastRevision=${first}`, { headers: alice.headers });
      try {
        expect((await reset.next()).json).toMatchObject({ reason: 'revision_expired', oldestRevision: second });
        expect((await reset.next()).json.result).toEqual([{ title: 'aging' }]);
      } finally {
        reset.close();
      }
      expect(await resume(second)).toMatchObject({ event: 'up-to-date', json: { revision: second } });
    } finally {
      await hub.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await db.close();
    }
  });
});

describe('a reader that fell behind the pruned log', () => {
  it('re-runs every group: the rows it never read may have concerned any of them', async () => {
    const db = await createDatabase();
    const app = testApp();
    await applyMigration(db, app.schema);
    const runtime = await serveLiveRuntime(app, db, { pollIntervalMs: 200 });
    const alice = member('alice');
    const stream = await openEventStream(`${runtime.url}/live/liveNotes`, { headers: alice.headers });
    try {
      const first = await stream.next();
      expect(first.json.result).toEqual([]);
      const group = () => runtime.hub.debug(first.json.subscriptionId)!.group;
      const runs = group().runs;
      // What this process's reader finds after being cut off for longer than the retention window: a
      // note was written, its log row pruned meanwhile, and a later row (another table's) is the floor —
      // the newest row a prune saw is never deleted. One transaction, so the reader cannot read between.
      // Cut off, it would not have heard the write's notification either: without the notice key the
      // trigger sends a bare wakeup instead of the signed row (so no early run, notice.ts).
      await db.admin.transaction().execute(async (trx) => {
        await sql`create temporary table notice_key on commit drop as select name, value from _fw.secrets where name = 'live.notice'`.execute(trx);
        await sql`delete from _fw.secrets where name = 'live.notice'`.execute(trx);
        await sql`insert into notes (title, tenant_id) values ('unseen', ${alice.tenantId})`.execute(trx);
        await sql`insert into _fw.secrets (name, value) select name, value from notice_key`.execute(trx);
        await sql`delete from _fw_live_invalidations where table_name = 'notes'`.execute(trx);
        await sql`select _fw_live_record('elsewhere', null)`.execute(trx);
        await sql`update _fw_live_state set pruned_through = (select max(revision) from _fw_live_invalidations)`.execute(trx);
      });
      expect((await stream.next()).json.result).toEqual([{ title: 'unseen' }]);
      expect(group().runs).toBe(runs + 1);
      expect(runtime.hub.status().noticeWakeups).toBe(0);
    } finally {
      stream.close();
      await runtime.close();
      await db.close();
    }
  });
});
