/**
 * Live subscriptions under a hostile or greedy caller: one user cannot use up the tenant's budget,
 * anonymous callers are counted by address, distinct args cannot multiply a caller's groups, revisions
 * do not reveal other tenants' write volume, and production does not list liveQuery names.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestDatabase, databaseTargets } from '../../e2e/support/postgres.ts';
import type { FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { databaseSecret } from '../db/secrets.ts';
import { command, liveQuery } from '../core/entries.ts';
import { createRuntimeHandler } from '../http/handler.ts';
import { resolveConfig } from '../config/resolve-config.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { createLiveHub, type LiveHub } from './hub.ts';
import { logBounds } from './log.ts';
import { createRevisionCodec } from './revision-codec.ts';
import { type EventStream, openEventStream } from '../../e2e/support/live-server.ts';
import { until } from '../../e2e/support/until.ts';

const TENANT_A = '00000000-0000-4000-8000-0000000000a1';
const TENANT_B = '00000000-0000-4000-8000-0000000000b2';
const user = (id: string, tenant = TENANT_A) => ({ 'x-fw-user-id': id, 'x-fw-tenant-id': tenant });

function testApp(): AppDefinition {
  const schema = defineSchema({ notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text() }) });
  const entries = {
    createNote: command({ args: { title: z.string() }, handler: (ctx, args) => ctx.db.insertInto('notes').values({ title: args.title }).execute().then(() => 'ok') }),
    liveNotes: liveQuery({ handler: (ctx) => ctx.db.selectFrom('notes').select('title').orderBy('title').execute() }),
    liveSearch: liveQuery({ args: { prefix: z.string() }, handler: (ctx, args) => ctx.db.selectFrom('notes').select('title').where('title', 'like', `${args.prefix}%`).execute() }),
    publicCount: liveQuery({ policy: 'public', reads: ['notes'], handler: () => ({ up: true }) }),
    liveBroken: liveQuery({
      policy: 'public',
      reads: ['notes'],
      handler: () => {
        throw new Error('could not reach postgres://svc:hunter2@db.internal:5432/app');
      },
    }),
  };
  return { entries: new Map(Object.entries(entries)), policies: {}, schema };
}

/** A GET whose status is all we need, from a chosen local address (127.0.0.x are all loopback). */
function statusFrom(url: string, localAddress: string, headers: Record<string, string> = {}): Promise<{ status: number; close(): void; body: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress, headers }, (res) => {
      let body = '';
      const done = new Promise<string>((r) => res.on('end', () => r(body)));
      res.on('data', (d) => (body += d));
      resolve({ status: res.statusCode ?? 0, close: () => req.destroy(), body: done });
    });
    req.on('error', reject);
    req.end();
  });
}

const target = databaseTargets.find((t) => t.name === 'postgres' && t.enabled) ?? databaseTargets[0];

describe(`live limits and revisions (${target.name})`, () => {
  let db: FwDatabase;
  let drop: () => Promise<void>;
  let hub: LiveHub;
  let server: Server;
  let url: string;
  const open: EventStream[] = [];

  beforeAll(async () => {
    ({ db, drop } = await openTestDatabase(target));
    const app = testApp();
    await applyMigration(db, app.schema);
    hub = createLiveHub(db, { dev: true, pruneIntervalMs: 0, pollIntervalMs: 200, maxSubscriptionsPerTenant: 8, maxSubscriptionsPerCaller: 3, maxGroupsPerCaller: 2 });
    hub.setApp(app);
    await hub.start();
    server = createServer(createRuntimeHandler({ app, db, dev: true, live: hub }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const stream of open) stream.close();
    await hub?.close();
    server?.closeAllConnections();
    server?.close();
    await db?.close();
    await drop?.();
  });

  const subscribe = async (path: string, headers: Record<string, string>) => {
    const stream = await openEventStream(`${url}${path}`, { headers });
    open.push(stream);
    return stream;
  };
  const json = async (path: string, headers: Record<string, string>) => {
    const response = await fetch(`${url}${path}`, { headers });
    return { status: response.status, body: (await response.json()) as any };
  };

  it('stops one user at the per-caller limit; another user of the same tenant can still subscribe', async () => {
    for (let i = 0; i < 3; i++) expect((await subscribe('/live/liveNotes', user('greedy'))).status).toBe(200);
    const fourth = await json('/live/liveNotes', user('greedy'));
    expect(fourth.status).toBe(429);
    expect(fourth.body.error).toMatchObject({ code: 'too_many_subscriptions', diagnostics: [{ code: 'limit_caller', hint: expect.stringContaining('maxSubscriptionsPerCaller') }] });
    const colleague = await subscribe('/live/liveNotes', user('colleague'));
    expect(colleague.status).toBe(200);
    expect((await colleague.next()).event).toBe('snapshot');
  });

  it('caps the distinct groups (liveQuery × args) one caller keeps open', async () => {
    expect((await subscribe(`/live/liveSearch?args=${encodeURIComponent('{"prefix":"a"}')}`, user('searcher'))).status).toBe(200);
    expect((await subscribe(`/live/liveSearch?args=${encodeURIComponent('{"prefix":"b"}')}`, user('searcher'))).status).toBe(200);
    const third = await json(`/live/liveSearch?args=${encodeURIComponent('{"prefix":"c"}')}`, user('searcher'));
    expect(third.status).toBe(429);
    expect(third.body.error.diagnostics[0]).toMatchObject({ code: 'limit_groups' });
    // The same args again join a group the caller already holds.
    expect((await subscribe(`/live/liveSearch?args=${encodeURIComponent('{"prefix":"a"}')}`, user('searcher'))).status).toBe(200);
  });

  it('counts anonymous callers by client address, not in one shared bucket', async () => {
    const held = [];
    for (let i = 0; i < 3; i++) {
      const response = await statusFrom(`${url}/live/publicCount`, '127.0.0.2');
      expect(response.status).toBe(200);
      held.push(response);
    }
    const fourth = await statusFrom(`${url}/live/publicCount`, '127.0.0.2');
    expect(fourth.status).toBe(429);
    expect(JSON.parse(await fourth.body).error.diagnostics[0]).toMatchObject({ code: 'limit_caller' });
    const other = await statusFrom(`${url}/live/publicCount`, '127.0.0.3');
    expect(other.status).toBe(200);
    for (const response of [...held, other]) response.close();
  });

  it('behind FW_TRUST_PROXY proxies, counts each client the proxy saw; without it, the header is ignored', async () => {
    // A hub of its own (3 per caller, no tenant budget shared with the other tests), served twice: behind
    // one load balancer (FW_TRUST_PROXY=1), and as the default (0).
    const app = testApp();
    const own = createLiveHub(db, { dev: true, pruneIntervalMs: 0, pollIntervalMs: 200, maxSubscriptionsPerCaller: 3 });
    own.setApp(app);
    await own.start();
    const serve = async (trustProxy: string) => {
      const server = createServer(createRuntimeHandler({ app, db, dev: true, live: own, config: resolveConfig({ FW_TRUST_PROXY: trustProxy }) }));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/live/publicCount` };
    };
    const behind = await serve('1');
    const direct = await serve('0');
    const held: Array<{ close(): void }> = [];
    const hold = async (target: string, from: string, forwardedFor: string) => {
      const response = await statusFrom(target, from, { 'x-forwarded-for': forwardedFor });
      held.push(response);
      return response;
    };
    try {
      // The proxy (127.0.0.4) appends the client it saw; what the client wrote left of it is not read.
      for (const spoof of ['1.1.1.1', '2.2.2.2', '3.3.3.3']) expect((await hold(behind.url, '127.0.0.4', `${spoof}, 198.51.100.1`)).status).toBe(200);
      const fourth = await hold(behind.url, '127.0.0.4', '4.4.4.4, 198.51.100.1');
      expect(fourth.status).toBe(429);
      expect(JSON.parse(await (fourth as { body: Promise<string> }).body).error.diagnostics[0]).toMatchObject({ code: 'limit_caller' });
      // Another client behind the same proxy has its own budget.
      expect((await hold(behind.url, '127.0.0.4', '198.51.100.2')).status).toBe(200);

      // The default: the socket's peer (127.0.0.5), whatever the header says.
      for (const client of ['198.51.100.3', '198.51.100.4', '198.51.100.5']) expect((await hold(direct.url, '127.0.0.5', client)).status).toBe(200);
      expect((await hold(direct.url, '127.0.0.5', '198.51.100.6')).status).toBe(429);
    } finally {
      for (const response of held) response.close();
      for (const { server } of [behind, direct]) {
        server.closeAllConnections();
        server.close();
      }
      await own.close();
    }
  });

  it('gives each tenant opaque revisions: not the log’s, and useless in another tenant, while resume still works', async () => {
    // Another tenant writes: the global log moves on.
    for (const title of ['a1', 'a2', 'a3']) {
      const created = await fetch(`${url}/commands/createNote`, { method: 'POST', headers: { ...user('writer'), 'content-type': 'application/json' }, body: JSON.stringify({ args: { title } }) });
      expect(created.status).toBe(200);
    }
    const latest = (await logBounds(db.admin)).latestRevision;
    expect(latest).toBeGreaterThanOrEqual(3);
    // A snapshot is labelled with what the reader has read: wait until it has read those writes.
    await until(async () => hub.status().revision >= latest, 'the reader to read the writes');
    const stream = await subscribe('/live/liveNotes', user('reader', TENANT_B));
    const first = await stream.next();
    expect(first.json.revision).not.toBe(latest);
    const codec = createRevisionCodec(await databaseSecret(db.admin, 'live.revision'));
    expect(codec.decode(first.json.revision, TENANT_B)).toBeGreaterThanOrEqual(latest);
    expect(codec.encode(codec.decode(first.json.revision, TENANT_B)!, TENANT_A)).not.toBe(first.json.revision);
    stream.close();
    // Tenant B resumes from its own token: nothing of its changed.
    const resumed = await subscribe('/live/liveNotes', { ...user('reader', TENANT_B), 'last-event-id': first.id! });
    expect((await resumed.next()).event).toMatch(/^(up-to-date|snapshot)$/);
    resumed.close();
    // A garbage token is no resume: the caller gets data, never an error.
    const garbage = await subscribe('/live/liveNotes', { ...user('reader', TENANT_B), 'last-event-id': '4503599627370495' });
    expect(garbage.status).toBe(200);
    expect((await garbage.nextWhere((e) => e.event === 'snapshot')).json.result).toEqual([]);
    garbage.close();
  });
});

describe('live outside dev mode', () => {
  let db: FwDatabase;
  let hub: LiveHub;
  let server: Server;
  let url: string;
  const logged: Array<{ message: string; traceId: string }> = [];

  beforeAll(async () => {
    ({ db } = await openTestDatabase(databaseTargets[0]));
    const app = testApp();
    await applyMigration(db, app.schema);
    hub = createLiveHub(db, { dev: false, pruneIntervalMs: 0, onError: (error, traceId) => logged.push({ message: error.message, traceId }) });
    hub.setApp(app);
    await hub.start();
    server = createServer(createRuntimeHandler({ app, db, dev: false, live: hub, auth: 'none', onError: (error, traceId) => logged.push({ message: error.message, traceId }) }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await hub?.close();
    server?.closeAllConnections();
    server?.close();
    await db?.close();
  });

  it('answers a liveQuery that fails with its code and trace id on both live routes, and logs its message', async () => {
    // GET /live/:name: the first run fails before the stream opens, so the answer is JSON.
    const single = await fetch(`${url}/live/liveBroken`, { headers: { 'x-fw-trace-id': 'trace-live-get-1' } });
    const body = (await single.json()) as any;
    expect(single.status).toBe(500);
    expect(body.error).toEqual({ code: 'internal', message: 'Internal error. Quote trace id trace-live-get-1 when reporting it.', diagnostics: [] });

    // POST /live: the stream is open, so the failing subscription gets an error event; the other one goes on.
    const response = await fetch(`${url}/live`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-fw-trace-id': 'trace-live-post-1' },
      body: JSON.stringify({ subscriptions: [{ key: 'broken', name: 'liveBroken' }, { key: 'count', name: 'publicCount' }] }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let text = '';
    while (!(text.includes('event: error') && text.includes('event: snapshot'))) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    await reader.cancel();
    const frame = /event: error\ndata: (.*)\n/.exec(text)?.[1];
    expect(JSON.parse(frame!)).toEqual({
      subscriptionId: null,
      key: 'broken',
      fatal: true,
      error: { code: 'internal', message: 'Internal error. Quote trace id trace-live-post-1 when reporting it.', diagnostics: [] },
      traceId: 'trace-live-post-1',
    });
    expect(text).not.toContain('hunter2');
    // Each failure is in the server log once, with its message, under its trace id.
    expect(logged.filter((entry) => entry.message.includes('postgres://svc:hunter2@')).map((entry) => entry.traceId).sort()).toEqual(['trace-live-get-1', 'trace-live-post-1']);
  });

  it('answers an unknown liveQuery with a generic 404 that lists no names', async () => {
    const response = await fetch(`${url}/live/nope`);
    const body = (await response.json()) as any;
    expect(response.status).toBe(404);
    expect(body.error).toEqual({ code: 'not_found', message: 'No such liveQuery.', diagnostics: [{ path: 'name', code: 'unknown_entry', message: 'No such liveQuery.' }] });
    expect(JSON.stringify(body)).not.toMatch(/liveNotes|liveSearch|publicCount/);
  });
});
