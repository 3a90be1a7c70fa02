import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import { createDatabase, type FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { command, definePolicies, liveQuery } from '../entries.ts';
import { createRuntimeHandler } from '../http/handler.ts';
import type { AppDefinition } from '../registry.ts';
import { defineSchema, t, table } from '../schema.ts';
import { createLiveHub, type LiveHub } from './hub.ts';
import { logBounds, pruneInvalidations } from './log.ts';
import { databaseSecret } from '../db/secrets.ts';
import { createRevisionCodec } from './revision-codec.ts';
import { type LiveTestRuntime, openEventStream, serveLiveRuntime } from './test-support.ts';

const TENANT_A = '00000000-0000-4000-8000-00000000000a';
const TENANT_B = '00000000-0000-4000-8000-00000000000b';
const alice = { 'x-fw-user-id': 'alice', 'x-fw-tenant-id': TENANT_A, 'x-fw-role': 'member' };
const bob = { 'x-fw-user-id': 'bob', 'x-fw-tenant-id': TENANT_B, 'x-fw-role': 'member' };

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
  };
  return {
    entries: new Map(Object.entries(entries)),
    policies: definePolicies({ admin: ({ auth }) => auth.role === 'admin' }),
    schema,
  };
}


/**
 * A resume where nothing reached the subscriber's tenant: `up-to-date` — unless a transaction elsewhere
 * in the PostgreSQL cluster held the visibility horizon back when the snapshot was taken (the horizon is
 * cluster-wide, and other test files run beside this one). fw then cannot prove nothing changed and
 * re-sends the same data; never another tenant's. The exact rule is held in log.test.ts.
 */
function expectNothingNew(event: { event?: string; json: any }, snapshot: { json: any }): void {
  if (event.event === 'up-to-date') return;
  expect(event.event).toBe('snapshot');
  expect(event.json.result).toEqual(snapshot.json.result);
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
    const live = (name: string, headers: Record<string, string>, query = '') => openEventStream(`${url}/live/${name}${query}`, { headers });

    it('sends the initial snapshot first, then a new snapshot after a command, with revisions as ids', async () => {
      const stream = await live('liveNotes', alice);
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

        expect((await run('createNote', { title: 'alpha' }, alice)).status).toBe(200);
        const second = await stream.next();
        expect(second.event).toBe('snapshot');
        expect(second.json.result).toEqual([{ title: 'alpha' }]);
        expect(await logRevision(db, second.json.revision, TENANT_A)).toBeGreaterThan(await logRevision(db, first.json.revision, TENANT_A));
        expect(stream.buffered).toBe(0);
      } finally {
        stream.close();
      }
    });

    it("never pushes to another tenant: bob's group does not even re-run for alice's write", async () => {
      const aliceStream = await live('liveNotes', alice);
      const bobStream = await live('liveNotes', bob);
      try {
        await aliceStream.next();
        const bobFirst = await bobStream.next();
        expect(bobFirst.json.result).toEqual([]);
        const bobRuns = hub.debug(bobFirst.json.subscriptionId)!.group.runs;

        await run('createNote', { title: 'beta' }, alice);
        const aliceUpdate = await aliceStream.next();
        expect(aliceUpdate.json.result.map((n: { title: string }) => n.title)).toContain('beta');
        // The same reader batch that reached alice's group has been processed: bob's group was not run.
        expect(hub.debug(bobFirst.json.subscriptionId)!.group.runs).toBe(bobRuns);

        await run('createNote', { title: 'bob-1' }, bob);
        const bobUpdate = await bobStream.next();
        expect(bobUpdate.json.result).toEqual([{ title: 'bob-1' }]);
      } finally {
        aliceStream.close();
        bobStream.close();
      }
    });

    it('a write to a table that is not tenant-scoped reaches every tenant', async () => {
      const aliceStream = await live('liveAnnouncements', alice);
      const bobStream = await live('liveAnnouncements', bob);
      try {
        await aliceStream.next();
        await bobStream.next();
        await run('announce', { text: 'maintenance at noon' }, alice);
        expect((await aliceStream.next()).json.result).toEqual([{ text: 'maintenance at noon' }]);
        expect((await bobStream.next()).json.result).toEqual([{ text: 'maintenance at noon' }]);
      } finally {
        aliceStream.close();
        bobStream.close();
      }
    });

    it('identical subscriptions share one group; a run that changes nothing sends nothing', async () => {
      const one = await live('liveSearch', alice, `?args=${encodeURIComponent('{"prefix":"zz"}')}`);
      const two = await live('liveSearch', alice, `?args=${encodeURIComponent('{"prefix":"zz"}')}`);
      try {
        const a = await one.next();
        const b = await two.next();
        const debugA = hub.debug(a.json.subscriptionId)!;
        expect(debugA.group.subscribers).toBe(2);
        const runs = debugA.group.runs;
        // Touches notes (so the group re-runs) but not the "zz" prefix (so the result is unchanged).
        await run('createNote', { title: 'unrelated' }, alice);
        await run('createNote', { title: 'zz-top' }, alice);
        const next = await one.next();
        expect(next.json.result).toEqual([{ title: 'zz-top' }]);
        expect((await two.next()).json.result).toEqual([{ title: 'zz-top' }]);
        const after = hub.debug(b.json.subscriptionId)!;
        // One run per wakeup for the whole group, never one per subscriber.
        expect(after.group.runs - runs).toBeLessThanOrEqual(2);
        expect(one.buffered + two.buffered).toBe(0);
      } finally {
        one.close();
        two.close();
      }
    });

    it('resumes with Last-Event-ID: up-to-date when nothing changed, a snapshot after a write made while away', async () => {
      const first = await live('liveNotes', bob);
      const snapshot = await first.next();
      first.close();

      const quiet = await live('liveNotes', { ...bob, 'last-event-id': snapshot.id! });
      const upToDate = await quiet.next();
      quiet.close();
      expectNothingNew(upToDate, snapshot);
      expect(await logRevision(db, upToDate.json.revision, TENANT_B)).toBeGreaterThanOrEqual(await logRevision(db, snapshot.json.revision, TENANT_B));

      await run('createNote', { title: 'while-away' }, bob);
      const resumed = await live('liveNotes', { ...bob, 'last-event-id': snapshot.id! });
      const fresh = await resumed.next();
      resumed.close();
      expect(fresh.event).toBe('snapshot');
      expect(fresh.json.result.map((n: { title: string }) => n.title)).toContain('while-away');
    });

    it('a process where the liveQuery never ran resumes up-to-date, then follows the next write', async () => {
      // A second hub on the same database stands for another runtime process (or a restarted one).
      const other = createLiveHub(db, { dev: true, pollIntervalMs: 200, pruneIntervalMs: 0 });
      other.setApp(testApp());
      await other.start();
      const otherServer = createServer(createRuntimeHandler({ app: testApp(), db, dev: true, live: other }));
      await new Promise<void>((resolve) => otherServer.listen(0, '127.0.0.1', resolve));
      const otherUrl = `http://127.0.0.1:${(otherServer.address() as AddressInfo).port}`;
      try {
        const first = await live('liveNotes', bob);
        const snapshot = await first.next();
        first.close();
        const resumed = await openEventStream(`${otherUrl}/live/liveNotes`, { headers: { ...bob, 'last-event-id': snapshot.id! } });
        try {
          expectNothingNew(await resumed.next(), snapshot);
          await run('createNote', { title: 'after-resume-elsewhere' }, bob);
          const fresh = await resumed.nextWhere((e) => e.event !== 'snapshot' || e.json.result.some((n: { title: string }) => n.title === 'after-resume-elsewhere'));
          expect(fresh.event).toBe('snapshot');
          expect(fresh.json.result.map((n: { title: string }) => n.title)).toContain('after-resume-elsewhere');
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
      const first = await live('liveNotes', bob);
      const snapshot = await first.next();
      first.close();
      await run('createNote', { title: 'alice-only' }, alice);
      const resumed = await live('liveNotes', bob, `?lastRevision=${snapshot.json.revision}`);
      const event = await resumed.next();
      resumed.close();
      expectNothingNew(event, snapshot);

      await run('createNote', { title: 'bob-while-away' }, bob);
      const again = await live('liveNotes', bob, `?lastRevision=${snapshot.json.revision}`);
      const changed = await again.next();
      again.close();
      expect(changed.event).toBe('snapshot');
      expect(changed.json.result.map((n: { title: string }) => n.title)).toContain('bob-while-away');
    });

    it('a revision older than the retained log gets an explicit reset, then the snapshot', async () => {
      const first = await live('liveNotes', alice);
      const snapshot = await first.next();
      first.close();
      await run('createNote', { title: 'gamma' }, alice);
      await run('createNote', { title: 'delta' }, alice);
      await pruneInvalidations(db.admin, { olderThanMs: 0 });
      const resumed = await live('liveNotes', alice, `?lastRevision=${snapshot.json.revision}`);
      try {
        const reset = await resumed.next();
        expect(reset.event).toBe('reset');
        expect(reset.json.reason).toBe('revision_expired');
        const fresh = await resumed.next();
        expect(fresh.event).toBe('snapshot');
        expect(fresh.json.result.map((n: { title: string }) => n.title)).toEqual(expect.arrayContaining(['gamma', 'delta']));
      } finally {
        resumed.close();
      }
    });

    it('answers problems before the stream starts with JSON errors and honest statuses', async () => {
      const get = (path: string, headers: Record<string, string> = alice) =>
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
      const post = await fetch(`${url}/live/liveNotes`, { method: 'POST', headers: alice });
      expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET']);
    });

    it('raw SQL must declare its tables; declared reads are followed', async () => {
      const raw = await fetch(`${url}/live/liveRaw`, { headers: alice });
      const body = await raw.json();
      expect(raw.status).toBe(500);
      expect(body.error.message).toMatch(/Declare them: liveQuery\(\{ reads/);

      const stream = await live('liveRawDeclared', alice);
      try {
        const first = await stream.next();
        await run('createNote', { title: 'counted' }, alice);
        const second = await stream.next();
        expect(second.json.result.n).toBe(first.json.result.n + 1);
      } finally {
        stream.close();
      }
    });

    it('enforces the per-tenant limit with 429 too_many_subscriptions', async () => {
      const streams = await Promise.all(Array.from({ length: 20 }, () => live('liveNotes', bob)));
      try {
        await Promise.all(streams.map((s) => s.next()));
        const refused = await fetch(`${url}/live/liveNotes`, { headers: bob });
        const body = await refused.json();
        expect([refused.status, body.error.code]).toEqual([429, 'too_many_subscriptions']);
        expect(body.error.message).toMatch(/limit is 20/);
      } finally {
        for (const s of streams) s.close();
      }
      // Closing releases the slots (the server notices each disconnect).
      await expect.poll(() => hub.status().subscriptions, { timeout: 10_000 }).toBe(0);
    });

    it('POST /live carries several subscriptions; a bad one gets a fatal error event, the others go on', async () => {
      const stream = await openEventStream(`${url}/live`, {
        method: 'POST',
        headers: { ...alice, 'content-type': 'application/json' },
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
        expect(byKey.notes!.event).toBe('snapshot');
        expect(byKey.search!.json.result).toEqual([]);
        expect(byKey.bad!.event).toBe('error');
        expect(byKey.bad!.json).toMatchObject({ fatal: true, error: { code: 'validation_failed' } });
        expect(byKey.missing!.json.error.code).toBe('not_found');

        await run('createNote', { title: 'mux-1' }, alice);
        const updates = [await stream.next(), await stream.next()];
        expect(updates.map((e) => e.json.key).sort()).toEqual(['notes', 'search']);
        expect(updates.find((e) => e.json.key === 'search')!.json.result).toEqual([{ title: 'mux-1' }]);
      } finally {
        stream.close();
      }
    });

    it('POST /live refuses a malformed body before streaming', async () => {
      const post = (body: string) =>
        fetch(`${url}/live`, { method: 'POST', headers: { ...alice, 'content-type': 'application/json' }, body }).then(async (r) => ({
          status: r.status,
          body: await r.json(),
        }));
      expect((await post('{')).body.error.code).toBe('bad_json');
      const invalid = await post(JSON.stringify({ subscriptions: [{ key: 'a' }] }));
      expect([invalid.status, invalid.body.error.diagnostics[0].path]).toEqual([400, 'subscriptions.0.name']);
      const duplicate = await post(JSON.stringify({ subscriptions: [{ key: 'a', name: 'liveNotes' }, { key: 'a', name: 'liveNotes' }] }));
      expect(duplicate.body.error.diagnostics[0].code).toBe('duplicate_key');
      const many = await post(JSON.stringify({ subscriptions: Array.from({ length: 65 }, (_, i) => ({ key: `k${i}`, name: 'liveNotes' })) }));
      expect([many.status, many.body.error.code]).toEqual([429, 'too_many_subscriptions']);
      // A form post (text/plain) is not a subscription request.
      const form = await fetch(`${url}/live`, { method: 'POST', headers: { ...alice, 'content-type': 'text/plain' }, body: '{"subscriptions":[]}' });
      expect([form.status, (await form.json()).error.code]).toEqual([415, 'unsupported_media_type']);
    });

    it('the admin routes show status, invalidations and one subscription (dev mode)', async () => {
      const stream = await live('liveNotes', alice);
      try {
        const first = await stream.next();
        await run('createNote', { title: 'for-admin' }, alice);
        await stream.next();
        const status = await (await fetch(`${url}/_fw/live/status`)).json();
        expect(status.subscriptions).toBeGreaterThanOrEqual(1);
        expect(status.liveQueries.find((q: { name: string }) => q.name === 'liveNotes').reads).toEqual(['notes']);
        const list = await (await fetch(`${url}/_fw/live/invalidations?table=notes&tenant=${TENANT_A}&limit=1`)).json();
        expect(list.invalidations).toHaveLength(1);
        expect(list.invalidations[0]).toMatchObject({ table: 'notes', tenantId: TENANT_A });
        const debug = await (await fetch(`${url}/_fw/live/subscriptions/${first.json.subscriptionId}`)).json();
        expect(debug).toMatchObject({ liveQuery: 'liveNotes', auth: { tenantId: TENANT_A }, group: { reads: ['notes'] } });
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
    const hub = createLiveHub(db, { dev: true, retentionMs: 1500, pruneIntervalMs: 100 });
    hub.setApp(app);
    await hub.start();
    const server = createServer(createRuntimeHandler({ app, db, dev: true, live: hub }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const resume = async (revision: number) => {
      const stream = await openEventStream(`${url}/live/liveNotes?lastRevision=${revision}`, { headers: alice });
      try {
        return (await stream.next()).json;
      } finally {
        stream.close();
      }
    };
    try {
      const stream = await openEventStream(`${url}/live/liveNotes`, { headers: alice });
      const first = (await stream.next()).json.revision as number;
      await fetch(`${url}/commands/createNote`, { method: 'POST', headers: { ...alice, 'content-type': 'application/json' }, body: '{"args":{"title":"aging"}}' });
      const second = (await stream.next()).json.revision as number;
      stream.close();
      expect(await logRevision(db, second, TENANT_A)).toBeGreaterThan(await logRevision(db, first, TENANT_A));
      // Inside the window (the pruner runs every 100 ms meanwhile): exact.
      expect(await resume(first)).toMatchObject({ result: [{ title: 'aging' }] });
      expect(await resume(second)).not.toHaveProperty('result');

      // Once the write has aged out of the window, the pruner removes what it can and raises the floor.
      const secondInLog = await logRevision(db, second, TENANT_A);
      await expect.poll(async () => (await logBounds(db.admin)).prunedThrough, { timeout: 15_000, interval: 100 }).toBe(secondInLog);
      const reset = await openEventStream(`${url}/live/liveNotes?lastRevision=${first}`, { headers: alice });
      try {
        expect((await reset.next()).json).toMatchObject({ reason: 'revision_expired', oldestRevision: second });
        expect((await reset.next()).json.result).toEqual([{ title: 'aging' }]);
      } finally {
        reset.close();
      }
      expect(await resume(second)).not.toHaveProperty('result');
    } finally {
      await hub.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await db.close();
    }
  });
});
