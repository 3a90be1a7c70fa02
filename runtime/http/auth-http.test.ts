import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { FwError as ClientFwError } from '../../client/errors.ts';
import { createLiveConnection, type LiveStatus } from '../../client/live.ts';
import { requestHeaders } from '../../client/request-headers.ts';
import { startTestIssuer, type TestIssuer } from '../../e2e/support/test-issuer.ts';
import { until } from '../../e2e/support/until.ts';
import type { Clock } from '../core/clock.ts';
import { createDatabase, type FwDatabase } from '../db/database.ts';
import { applyMigration, ensureSystemTables } from '../db/migrate.ts';
import { command, definePolicies, liveQuery, query } from '../core/entries.ts';
import { createLiveHub, type LiveHub } from '../live/hub.ts';
import { openEventStream } from '../../e2e/support/live-server.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { createRuntimeHandler, type RuntimeHandlerOptions } from './handler.ts';

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789abcdef';

const schema = defineSchema({
  notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text(), created_at: t.timestamptz().defaultNow() }),
});

/**
 * The runtime's clock in these tests: it moves only when a test moves it, so a token expires when the
 * test says so, however slow the machine (createRuntimeHandler({ clock })).
 */
function testClock(start: number): Clock & { advance(ms: number): void } {
  let time = start;
  const timers = new Set<{ at: number; fn: () => void }>();
  const fire = () => {
    for (const timer of [...timers]) {
      if (timer.at > time) continue;
      timers.delete(timer);
      timer.fn();
    }
  };
  return {
    now: () => time,
    at(at, fn) {
      const timer = { at, fn };
      timers.add(timer);
      if (at <= time) queueMicrotask(fire);
      return () => void timers.delete(timer);
    },
    advance(ms) {
      time += ms;
      fire();
    },
  };
}

function testApp(): AppDefinition {
  const entries = {
    createNote: command({
      args: { title: z.string().min(1) },
      handler: (ctx, args) => ctx.db.insertInto('notes').values({ title: args.title }).returningAll().executeTakeFirstOrThrow(),
    }),
    // No tenant filter on purpose: row-level security scopes it to the token's tenant.
    listNotes: query({ handler: (ctx) => ctx.db.selectFrom('notes').select(['title', 'tenant_id']).orderBy('title').execute() }),
    whoAmI: query({ handler: (ctx) => ctx.auth }),
    adminOnly: query({ policy: 'admin', handler: () => 'secret' }),
    publicPing: query({ policy: 'public', handler: () => 'pong' }),
    liveNotes: liveQuery({ handler: (ctx) => ctx.db.selectFrom('notes').select(['title']).orderBy('title').execute() }),
  };
  return { entries: new Map(Object.entries(entries)), policies: definePolicies({ admin: ({ auth }) => auth.role === 'admin' }), schema };
}

describe('production auth over HTTP (JWT, admin plane)', () => {
  let idp: TestIssuer;
  let db: FwDatabase;
  let hub: LiveHub;
  const servers: Server[] = [];
  let url: string;
  let closedAdminUrl: string;
  let noAuthUrl: string;
  const clock = testClock(Date.parse('2026-11-25T10:00:00Z'));

  async function serve(options: Omit<RuntimeHandlerOptions, 'app' | 'db'>): Promise<string> {
    const server = createServer(createRuntimeHandler({ app: testApp(), db, onError: () => {}, ...options }));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  beforeAll(async () => {
    idp = await startTestIssuer('RS256');
    db = await createDatabase({ dataDir: 'memory://' });
    await ensureSystemTables(db);
    const app = testApp();
    expect((await applyMigration(db, app.schema)).blocked).toEqual([]);
    hub = createLiveHub(db, { pollIntervalMs: 200, pruneIntervalMs: 0 });
    hub.setApp(app);
    await hub.start();
    // Clock tolerance 0: a token stops being accepted exactly at its `exp` on the test clock.
    const jwt = { kind: 'jwt' as const, issuer: idp.issuer, audience: idp.audience, jwksUrl: idp.jwksUrl, clockToleranceSeconds: 0 };
    url = await serve({ dev: false, auth: jwt, live: hub, adminToken: ADMIN_TOKEN, clock });
    closedAdminUrl = await serve({ dev: false, auth: jwt, live: hub, clock });
    noAuthUrl = await serve({ dev: false, live: hub, clock });
  });

  afterAll(async () => {
    await hub?.close();
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await db?.close();
    await idp?.close();
  });

  // Tokens are signed at the runtime's (test) clock; lifetimes are in seconds of that clock.
  const token = (claims: Record<string, unknown>, expiresIn = 60) => idp.sign(claims, { expiresIn, now: clock.now() });
  // Every test has its own tenants, so it sees only its own notes, alone or in any order.
  const alice = (tenant: string) => token({ sub: 'alice', tenant_id: tenant, role: 'member' });
  const bob = (tenant = randomUUID()) => token({ sub: 'bob', tenant_id: tenant, role: 'admin' });

  async function call(base: string, path: string, headers: Record<string, string>, args: unknown = {}) {
    const response = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ args }) });
    return { status: response.status, body: await response.json() };
  }
  const bearer = (value: string) => ({ authorization: `Bearer ${value}` });

  it('runs a command with a valid token, in the tenant of the token (row-level security)', async () => {
    const [tenantA, tenantB] = [randomUUID(), randomUUID()];
    const created = await call(url, '/commands/createNote', bearer(await alice(tenantA)), { title: 'alice-note' });
    expect(created.status).toBe(200);
    expect(created.body.result).toMatchObject({ title: 'alice-note', tenant_id: tenantA });

    const asAlice = await call(url, '/queries/listNotes', bearer(await alice(tenantA)));
    expect(asAlice.body.result).toEqual([{ title: 'alice-note', tenant_id: tenantA }]);
    const asBob = await call(url, '/queries/listNotes', bearer(await bob(tenantB)));
    expect(asBob.body.result).toEqual([]);

    expect((await call(url, '/queries/whoAmI', bearer(await bob(tenantB)))).body.result).toEqual({ kind: 'user', userId: 'bob', tenantId: tenantB, role: 'admin' });
    expect((await call(url, '/queries/adminOnly', bearer(await alice(tenantA)))).status).toBe(403);
    expect((await call(url, '/queries/adminOnly', bearer(await bob(tenantB)))).status).toBe(200);
  });

  it('answers 401 with a diagnostic code for bad tokens, and never echoes the token', async () => {
    const cases: Array<[string, string]> = [
      [await token({ sub: 'alice' }, -60), 'token_expired'],
      [await idp.sign({}, { issuer: 'https://evil.example' }), 'issuer_mismatch'],
      [await idp.sign({}, { audience: 'other-api' }), 'audience_mismatch'],
      [await idp.sign({}, { key: await idp.generateKey() }), 'unknown_key'],
      [await token({ tenant_id: 'acme' }), 'claim_invalid'],
      ['garbage', 'token_invalid'],
    ];
    for (const [bad, code] of cases) {
      const r = await call(url, '/commands/createNote', bearer(bad), { title: 'never' });
      expect(r.status, code).toBe(401);
      expect(r.body.error.code).toBe('unauthenticated');
      expect(r.body.error.diagnostics[0].code).toBe(code);
      expect(JSON.stringify(r.body)).not.toContain(bad);
    }
    // No token at all: anonymous, refused by the entry's policy; public entries still answer.
    expect((await call(url, '/queries/listNotes', {})).status).toBe(401);
    expect((await call(url, '/queries/publicPing', {})).body.result).toBe('pong');
  });

  it('refuses dev headers in production with 401 dev_headers_in_production', async () => {
    const tenant = randomUUID();
    const devHeaders = { 'x-fw-user-id': 'alice', 'x-fw-tenant-id': tenant, 'x-fw-role': 'admin' };
    for (const [base, hint] of [[url, /Authorization: Bearer/], [noAuthUrl, /FW_AUTH=jwt/]] as const) {
      const r = await call(base, '/queries/publicPing', devHeaders);
      expect(r.status).toBe(401);
      expect(r.body.error.diagnostics[0]).toMatchObject({ code: 'dev_headers_in_production', path: 'headers.x-fw-user-id' });
      expect(r.body.error.message).toMatch(/development only/);
      expect(r.body.error.message).toMatch(hint);
    }
    // Even next to a valid token: a client built with devAuth must fail loudly.
    expect((await call(url, '/queries/listNotes', { ...bearer(await alice(tenant)), 'x-fw-role': 'admin' })).status).toBe(401);
    const live = await fetch(`${url}/live/liveNotes`, { headers: { 'x-fw-user-id': 'alice' } });
    expect(live.status).toBe(401);
    expect((await live.json()).error.diagnostics[0].code).toBe('dev_headers_in_production');
  });

  it('lists entries only to signed-in callers, and keeps /health to status, version and database', async () => {
    // An unknown name does not list the known ones outside dev; a bad token is a 401 whatever it asks for.
    for (const path of ['/commands/nope', '/queries/nope', '/external/svc/commands/nope']) {
      const unknown = await call(url, path, {});
      expect(unknown.status, path).toBe(404);
      expect(JSON.stringify(unknown.body), path).not.toMatch(/createNote|listNotes|Known/);
      expect((await call(url, path, bearer('garbage'))).status, path).toBe(401);
    }
    expect((await fetch(`${url}/entries`)).status).toBe(401);
    // A caller sees what its policies let it call; the admin token sees everything.
    const listed = async (headers: Record<string, string>) => ((await (await fetch(`${url}/entries`, { headers })).json()) as { entries: Array<{ name: string }> }).entries.map((e) => e.name);
    const everything = ['adminOnly', 'createNote', 'listNotes', 'liveNotes', 'publicPing', 'whoAmI'];
    expect((await listed(bearer(await alice(randomUUID())))).sort()).toEqual(everything.filter((name) => name !== 'adminOnly'));
    expect((await listed(bearer(await bob()))).sort()).toEqual(everything);
    expect((await listed({ 'x-fw-admin-token': ADMIN_TOKEN })).sort()).toEqual(everything);
    const health = await (await fetch(`${url}/health`)).json();
    expect(Object.keys(health).sort()).toEqual(['database', 'status', 'version']);
  });

  it('ends live streams when the token expires, with a token_expired error event first', async () => {
    const tenant = randomUUID();
    const expiring = await token({ sub: 'alice', tenant_id: tenant }, 60);
    const perName = await openEventStream(`${url}/live/liveNotes`, { headers: bearer(expiring) });
    const multiplexed = await openEventStream(`${url}/live`, {
      method: 'POST',
      headers: { ...bearer(expiring), 'content-type': 'application/json' },
      body: JSON.stringify({ subscriptions: [{ key: 'k1', name: 'liveNotes' }] }),
    });
    try {
      for (const stream of [perName, multiplexed]) {
        expect(stream.status).toBe(200);
        expect((await stream.next()).event).toBe('snapshot');
      }
      // Still accepted one second before `exp`: the streams stay open (a write still reaches them).
      clock.advance(59_000);
      expect((await call(url, '/commands/createNote', bearer(expiring), { title: 'before-expiry' })).status).toBe(200);
      for (const stream of [perName, multiplexed]) {
        const update = await stream.nextWhere((event) => event.event === 'snapshot' && event.json.result.length > 0);
        expect(update.json.result).toEqual([{ title: 'before-expiry' }]);
      }
      // The token's `exp` passes on the runtime's clock: both streams get the error event, then end.
      // (A conservative re-send of unchanged data may come first, see EventStream.nextWhere.)
      clock.advance(2_000);
      const isError = (event: { event?: string }) => event.event !== 'snapshot';
      const [perNameError, multiplexedError] = await Promise.all([perName.nextWhere(isError), multiplexed.nextWhere(isError)]);
      for (const event of [perNameError, multiplexedError]) {
        expect(event.event).toBe('error');
        expect(event.json).toMatchObject({ fatal: false, error: { code: 'unauthenticated', diagnostics: [{ code: 'token_expired' }] } });
      }
      expect(multiplexedError.json.key).toBe('k1');
      await Promise.all([perName.ended, multiplexed.ended]);
      for (const stream of [perName, multiplexed]) {
        expect(stream.buffered).toBe(0);
        await expect(stream.next()).rejects.toThrow(/the stream ended/);
      }
      // Once expired, the token opens nothing.
      const again = await fetch(`${url}/live/liveNotes`, { headers: bearer(expiring) });
      expect(again.status).toBe(401);
      expect((await again.json()).error.diagnostics[0].code).toBe('token_expired');
    } finally {
      perName.close();
      multiplexed.close();
    }
  });

  it('the client reconnects after token_expired, asking getToken for a fresh token, and stays subscribed', async () => {
    const tenant = randomUUID();
    const tokens: string[] = [];
    // Each token lives 60 s of the runtime's clock from when it is asked for.
    const getToken = async () => {
      const next = await token({ sub: 'carol', tenant_id: tenant }, 60);
      tokens.push(next);
      return next;
    };
    const connection = createLiveConnection({
      url: `${url}/live`,
      headers: () => requestHeaders({ getToken }, 'text/event-stream'),
      fetch: () => fetch,
    });
    const data: unknown[] = [];
    const statuses: LiveStatus[] = [];
    const errors: ClientFwError[] = [];
    const subscription = connection.subscribe('liveNotes', {}, {
      onData: (result) => data.push(result),
      onStatus: (status) => statuses.push(status),
      onError: (error) => errors.push(error),
    });
    try {
      await until(async () => data.length === 1, 'the first snapshot');
      expect(data).toEqual([[]]);
      expect(tokens).toHaveLength(1);
      // The first token's `exp` passes: the stream ends, and the client comes back with a fresh token.
      clock.advance(61_000);
      await until(async () => statuses.includes('reconnecting') && subscription.status === 'live', 'the reconnect');
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ code: 'unauthenticated', status: 401 });
      expect(errors[0]!.diagnostics[0]?.code).toBe('token_expired');
      expect(tokens).toHaveLength(2);
      // Still subscribed on the new stream: a write reaches it.
      await call(url, '/commands/createNote', bearer(await alice(tenant)), { title: 'after-reconnect' });
      await until(async () => JSON.stringify(data.at(-1)) === JSON.stringify([{ title: 'after-reconnect' }]), 'the update after reconnecting');
      expect(statuses).toEqual(['live', 'reconnecting', 'live']);
    } finally {
      subscription.close();
    }
  });

  describe('admin routes outside dev mode', () => {
    const adminPaths = ['/_fw/live/status', '/_fw/live/invalidations', '/_fw/ai/traces', '/_fw/ai/traces/x'];

    // The check comes before routing: every path under /_fw/ is closed, known or not.
    const closedPaths = [...adminPaths, '/_fw/live/subscriptions/sub_x', '/_fw/outbox', '/_fw/anything-else'];

    it('refuse anonymous callers, users with tokens and dev headers, and leak no data', async () => {
      const userToken = await bob();
      for (const path of closedPaths) {
        for (const headers of [{}, bearer(userToken), { 'x-fw-user-id': 'root', 'x-fw-role': 'admin' }] as Array<Record<string, string>>) {
          const r = await fetch(url + path, { headers });
          expect(r.status, path).toBe(401);
          const body = await r.json();
          expect(Object.keys(body).sort()).toEqual(['error', 'ok', 'traceId']);
          expect(body.error.code).toBe('unauthenticated');
        }
      }
    });

    it('refuse a wrong token with 403', async () => {
      for (const path of closedPaths) {
        const r = await fetch(url + path, { headers: { 'x-fw-admin-token': `${ADMIN_TOKEN}x` } });
        expect(r.status, path).toBe(403);
        expect(Object.keys(await r.json()).sort()).toEqual(['error', 'ok', 'traceId']);
      }
    });

    it('answer with the admin token', async () => {
      const headers = { 'x-fw-admin-token': ADMIN_TOKEN };
      const status = await (await fetch(`${url}/_fw/live/status`, { headers })).json();
      expect(status).toHaveProperty('revision');
      expect(status).toHaveProperty('log');
      expect(await (await fetch(`${url}/_fw/live/invalidations`, { headers })).json()).toHaveProperty('invalidations');
      expect(await (await fetch(`${url}/_fw/ai/traces`, { headers })).json()).toHaveProperty('traces');
      expect(await (await fetch(`${url}/_fw/ai/traces/x`, { headers })).json()).toEqual({ traceId: 'x', runs: [] });
      // Migrations over HTTP are fw dev's alone (it holds the embedded database); here even the admin token gets none.
      const migrate = await fetch(`${url}/_fw/db/migrate`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{"acceptDataLoss":true}' });
      expect(migrate.status).toBe(404);
      expect((await migrate.json()).error.diagnostics).toEqual([{ path: 'url', code: 'no_dev_migrate', message: 'Run fw db migrate with DATABASE_URL set to this database instead.' }]);
    });

    it('stay closed (403) when no admin token is configured, whatever is sent', async () => {
      for (const path of closedPaths) {
        for (const headers of [{}, { 'x-fw-admin-token': ADMIN_TOKEN }] as Array<Record<string, string>>) {
          const r = await fetch(closedAdminUrl + path, { headers });
          expect(r.status, path).toBe(403);
        }
      }
    });
  });
});
