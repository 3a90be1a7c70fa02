import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDatabase, type FwDatabase } from '../db/database.ts';
import { applyMigration, ensureSystemTables } from '../db/migrate.ts';
import { definePolicies, endpoint, query, respond } from '../core/entries.ts';
import { type AppDefinition } from '../core/app-definition.ts';
import { checkApp } from '../app/check-app.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { createRuntimeHandler, listEntries } from './handler.ts';

// Dev-auth headers of a caller in a tenant of its own: every test owns the rows it writes and reads.
const member = (tenant: string = randomUUID()) => ({ 'x-fw-user-id': 'alice', 'x-fw-tenant-id': tenant, 'x-fw-role': 'member' });
const admin = (tenant: string = randomUUID()) => ({ 'x-fw-user-id': 'bob', 'x-fw-tenant-id': tenant, 'x-fw-role': 'admin' });
const alice = member();
const bob = admin();

const schema = defineSchema({
  notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text() }),
});

function testApp(): AppDefinition {
  const entries = {
    getTicket: endpoint({
      method: 'GET',
      path: '/api/tickets/:id',
      handler: (ctx) => ({ id: ctx.params.id, query: ctx.query, user: ctx.auth.userId, sawAuthorization: 'authorization' in ctx.headers, hasAi: typeof ctx.ai.generateText, from: ctx.clientAddress }),
    }),
    newTicketForm: endpoint({ method: 'GET', path: '/api/tickets/new', handler: () => 'the static route wins' }),
    deleteTicket: endpoint({ method: 'DELETE', path: '/api/tickets/:id', handler: () => respond(204) }),
    createNote: endpoint({
      method: 'POST',
      path: '/api/notes',
      args: { title: z.string().min(1) },
      handler: async (ctx, args) => respond(201, await ctx.db.insertInto('notes').values({ title: args.title }).returningAll().executeTakeFirstOrThrow(), { location: '/api/notes' }),
    }),
    listNotes: endpoint({ method: 'GET', path: '/api/notes', handler: (ctx) => ctx.db.selectFrom('notes').select('title').execute() }),
    adminReport: endpoint({ method: 'GET', path: '/api/admin/report', policy: 'admin', handler: () => ({ secret: 42 }) }),
    crash: endpoint({
      method: 'POST',
      path: '/hooks/crash',
      policy: 'public',
      handler: () => {
        throw new Error('secret internals: password=hunter2');
      },
    }),
    notesQuery: query({ handler: (ctx) => ctx.db.selectFrom('notes').select('title').execute() }),
  };
  return { entries: new Map(Object.entries(entries)), policies: definePolicies({ admin: ({ auth }) => auth.role === 'admin' }), schema };
}

async function serve(app: AppDefinition, db: FwDatabase, dev: boolean): Promise<{ url: string; server: Server }> {
  const server = createServer(createRuntimeHandler({ app, db, dev, onError: () => {} }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function request(url: string, method: string, headers: Record<string, string> = {}, body?: unknown) {
  const response = await fetch(url, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

describe('endpoints', () => {
  let db: FwDatabase;
  let dev: { url: string; server: Server };
  let prod: { url: string; server: Server };

  beforeAll(async () => {
    db = await createDatabase({ dataDir: 'memory://' });
    await ensureSystemTables(db);
    const app = testApp();
    expect(checkApp(app)).toEqual([]);
    await applyMigration(db, app.schema);
    dev = await serve(app, db, true);
    prod = await serve(app, db, false);
  });
  afterAll(async () => {
    dev?.server.close();
    prod?.server.close();
    await db?.close();
  });

  it('serves GET with a path param and the query string, with fw envelope, no credentials in ctx.headers and the peer in ctx.clientAddress', async () => {
    // A client's own X-Forwarded-For is not its address (FW_TRUST_PROXY is 0).
    const r = await request(`${dev.url}/api/tickets/t%201?status=open&status=closed&page=2`, 'GET', { ...alice, authorization: 'Bearer x', 'x-forwarded-for': '6.6.6.6' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ok: true,
      result: { id: 't 1', query: { status: 'open', page: '2' }, user: 'alice', sawAuthorization: false, hasAi: 'function', from: '127.0.0.1' },
      traceId: expect.any(String),
    });
    expect((await request(`${dev.url}/api/tickets/new`, 'GET', alice)).body.result).toBe('the static route wins');
  });

  it('validates a POST body against args (400) and answers respond(201, …) as given', async () => {
    const tenant = randomUUID();
    const bad = await request(`${dev.url}/api/notes`, 'POST', member(tenant), { title: '' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_failed');
    expect(bad.body.error.diagnostics[0].path).toBe('args.title');
    expect((await request(`${dev.url}/api/notes`, 'GET', member(tenant))).body.result).toEqual([]);
    const created = await request(`${dev.url}/api/notes`, 'POST', member(tenant), { title: 'From A' });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/api/notes');
    expect(created.body).toEqual({ id: expect.any(String), title: 'From A', tenant_id: tenant });
    const gone = await fetch(`${dev.url}/api/tickets/1`, { method: 'DELETE', headers: alice });
    expect(gone.status).toBe(204);
    expect(await gone.text()).toBe('');
  });

  it('writes through ctx.db as the caller: tenant-isolated, and visible to queries', async () => {
    const [tenantA, tenantB] = [randomUUID(), randomUUID()];
    expect((await request(`${dev.url}/api/notes`, 'POST', member(tenantA), { title: 'From A' })).status).toBe(201);
    expect((await request(`${dev.url}/api/notes`, 'POST', admin(tenantB), { title: 'From B' })).status).toBe(201);
    const a = await request(`${dev.url}/api/notes`, 'GET', member(tenantA));
    const b = await request(`${dev.url}/api/notes`, 'GET', admin(tenantB));
    expect(a.body.result).toEqual([{ title: 'From A' }]);
    expect(b.body.result).toEqual([{ title: 'From B' }]);
    const viaQuery = await request(`${dev.url}/queries/notesQuery`, 'POST', admin(tenantB), {});
    expect(viaQuery.body.result).toEqual([{ title: 'From B' }]);
  });

  it('enforces the policy: anonymous 401, a failing named policy 403', async () => {
    expect((await request(`${dev.url}/api/tickets/1`, 'GET')).status).toBe(401);
    const denied = await request(`${dev.url}/api/admin/report`, 'GET', alice);
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('forbidden');
    expect((await request(`${dev.url}/api/admin/report`, 'GET', bob)).body.result).toEqual({ secret: 42 });
  });

  it('answers 405 with Allow on a known path and 404 elsewhere', async () => {
    const r = await request(`${dev.url}/api/tickets/1`, 'PUT', alice, {});
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET, DELETE');
    expect(r.body.error.code).toBe('method_not_allowed');
    expect((await request(`${dev.url}/api/nothing`, 'GET', alice)).status).toBe(404);
  });

  it('redacts a handler error in production and keeps the envelope', async () => {
    const r = await request(`${prod.url}/hooks/crash`, 'POST', {}, {});
    expect(r.status).toBe(500);
    expect(r.body.ok).toBe(false);
    expect(r.body.error.code).toBe('internal');
    expect(JSON.stringify(r.body)).not.toContain('hunter2');
    expect(r.body.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect((await request(`${dev.url}/hooks/crash`, 'POST', {}, {})).body.error.message).toContain('hunter2');
  });

  it('lists endpoints with their route', () => {
    const listed = listEntries(testApp());
    expect(listed.find((e) => e.name === 'getTicket')).toMatchObject({ kind: 'endpoint', route: 'GET /api/tickets/:id' });
  });
});

describe('endpoint definitions', () => {
  it('refuses paths that collide with fw routes, bad methods and bad segments', () => {
    expect(() => endpoint({ method: 'POST', path: '/commands/x', handler: () => 1 })).toThrow(/collides with fw's own routes.*'\/api\/commands\/x'/);
    expect(() => endpoint({ method: 'GET', path: '/_fw/status', handler: () => 1 })).toThrow(TypeError);
    expect(() => endpoint({ method: 'get' as 'GET', path: '/api/x', handler: () => 1 })).toThrow(/method/);
    expect(() => endpoint({ method: 'GET', path: '/api/x/', handler: () => 1 })).toThrow(/invalid segment/);
    expect(() => endpoint({ method: 'GET', path: '/api/:a/:a', handler: () => 1 })).toThrow(/repeats a param/);
  });

  it('checkApp refuses two endpoints with the same method and path', () => {
    const app: AppDefinition = {
      entries: new Map([
        ['one', endpoint({ method: 'GET', path: '/api/t/:id', handler: () => 1 })],
        ['two', endpoint({ method: 'GET', path: '/api/t/:key', handler: () => 2 })],
        ['three', endpoint({ method: 'POST', path: '/api/t/:id', handler: () => 3 })],
      ]),
      policies: {},
      schema: defineSchema({}),
    };
    expect(checkApp(app).map((p) => p.message)).toEqual([expect.stringContaining('"one" and "two" both serve GET /api/t/:key')]);
  });
});
