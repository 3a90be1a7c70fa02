import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { resolveConfig } from '../config/resolve-config.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import type { EntryDefinition } from '../core/entry-types.ts';
import { command } from '../core/entries.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { createDatabase, type FwDatabase } from '../db/database.ts';
import { applyMigration, ensureSystemTables } from '../db/migrate.ts';
import { createRuntimeHandler, type RuntimeHandlerOptions } from './handler.ts';

const TOKEN = 'dashboard-admin-token-0123456789abcdef';
const TENANT_A = '00000000-0000-4000-8000-00000000000a';
const TENANT_B = '00000000-0000-4000-8000-00000000000b';

const schema = defineSchema({ notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text() }) });
const app: AppDefinition = {
  schema,
  policies: {},
  entries: new Map<string, EntryDefinition>([
    ['createNote', command({ args: { title: z.string().min(1) }, handler: (ctx, args) => ctx.db.insertInto('notes').values({ title: args.title }).returningAll().executeTakeFirstOrThrow() })],
    ['boom', command({ handler: () => { throw new Error('boom'); } })],
  ]),
  sources: { root: '.', files: new Map([['createNote', 'src/commands/createNote.ts']]) },
  crons: new Map([['daily', { cron: '0 7 * * *', timezone: 'Europe/Berlin', call: 'createNote', args: { title: 'daily' } }]]),
};

describe('the dashboard routes', () => {
  let db: FwDatabase;
  const servers: Server[] = [];
  async function serve(options: Omit<RuntimeHandlerOptions, 'app' | 'db'>): Promise<string> {
    const server = createServer(createRuntimeHandler({ app, db, onError: () => {}, ...options }));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers, redirect: 'manual' });
  const run = (url: string, body: unknown) => fetch(`${url}/_fw/dashboard/api/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  beforeAll(async () => {
    db = await createDatabase({ dataDir: 'memory://' });
    await ensureSystemTables(db);
    expect((await applyMigration(db, schema)).blocked).toEqual([]);
  }, 60_000);
  afterAll(async () => {
    for (const server of servers) server.close();
    await db?.close();
  });

  it('are closed in production without the admin token, whatever FW_DASHBOARD says', async () => {
    const paths = ['/_fw/dashboard/', '/_fw/dashboard/api/functions', '/_fw/dashboard/api/tables', '/_fw/dashboard/api/rows?table=notes'];
    // Not enabled: not registered; /_fw/… is the admin route, closed (403) with no token configured.
    const plain = await serve({ dev: false, auth: 'none', config: resolveConfig({}) });
    for (const path of paths) expect((await get(plain + path)).status, path).toBe(403);
    // Enabled but no token configured: still not registered.
    const noToken = await serve({ dev: false, auth: 'none', config: resolveConfig({ FW_DASHBOARD: '1' }) });
    for (const path of paths) expect((await get(noToken + path)).status, path).toBe(403);
    // A token configured, dashboard not enabled: the admin routes open with it, the dashboard does not exist.
    const closed = await serve({ dev: false, auth: 'none', adminToken: TOKEN, config: resolveConfig({}) });
    expect((await get(`${closed}/_fw/dashboard/api/functions`, { 'x-fw-admin-token': TOKEN })).status).toBe(404);
    expect((await get(`${closed}/_fw/dashboard/api/functions`)).status).toBe(401);
    // Enabled with a token: every read needs it, and running entries stays a dev-only thing.
    const open = await serve({ dev: false, auth: 'none', adminToken: TOKEN, config: resolveConfig({ FW_DASHBOARD: '1' }) });
    expect((await get(`${open}/_fw/dashboard/api/functions`)).status).toBe(401);
    expect((await get(`${open}/_fw/dashboard/api/functions`, { 'x-fw-admin-token': 'wrong' })).status).toBe(403);
    const listed = await get(`${open}/_fw/dashboard/api/functions`, { 'x-fw-admin-token': TOKEN });
    expect(listed.status).toBe(200);
    expect((await listed.json()).functions.map((f: { name: string }) => f.name)).toEqual(['boom', 'createNote']);
    const refused = await fetch(`${open}/_fw/dashboard/api/run`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-fw-admin-token': TOKEN }, body: JSON.stringify({ name: 'createNote', args: { title: 'x' }, identity: { userId: 'u' } }) });
    expect(refused.status).toBe(403);
    // The controls for time are operator writes on the owner's connection: dev only, even with the token.
    for (const path of ['schedule/5c51bd6e-0000-4000-8000-000000000000/run-now', 'crons/daily/trigger', 'workflows/5c51bd6e-0000-4000-8000-000000000000/skip-sleep', 'workflows/5c51bd6e-0000-4000-8000-000000000000/signal', 'workflows/5c51bd6e-0000-4000-8000-000000000000/rerun']) {
      const time = await fetch(`${open}/_fw/dashboard/api/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-fw-admin-token': TOKEN }, body: '{}' });
      expect(time.status, path).toBe(403);
      expect((await time.json()).error.message, path).toMatch(/for dev mode only/);
      expect((await fetch(`${open}/_fw/dashboard/api/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, path).toBe(401);
    }
  });

  it('offers the roles each policy lets in, found by asking the policy, and the tenants in the data', async () => {
    const withPolicies: AppDefinition = {
      ...app,
      policies: { agent: ({ auth }) => auth.role === 'agent' || auth.role === 'admin', admin: ({ auth }) => auth.role === 'admin', signedIn: ({ auth }) => auth.userId !== null },
    };
    const server = createServer(createRuntimeHandler({ app: withPolicies, db, onError: () => {}, dev: true, config: resolveConfig({}) }));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const identities = await (await get(`${url}/_fw/dashboard/api/identities`)).json();
    expect(identities).toMatchObject({
      roles: ['agent', 'admin'],
      policies: { agent: { roles: ['agent', 'admin'], anyRole: false }, admin: { roles: ['admin'], anyRole: false }, signedIn: { roles: [], anyRole: true } },
      dev: true,
    });
    expect(Array.isArray(identities.tenants)).toBe(true);
  });

  it('runs entries as the chosen identity through the pipeline and browses rows as the owner or a tenant', async () => {
    const url = await serve({ dev: true, config: resolveConfig({}) });
    expect((await get(`${url}/_fw/dashboard`)).headers.get('location')).toBe('/_fw/dashboard/');
    const functions = (await (await get(`${url}/_fw/dashboard/api/functions`)).json()).functions;
    expect(functions.find((f: { name: string }) => f.name === 'createNote')).toMatchObject({ kind: 'command', policy: 'user', file: 'src/commands/createNote.ts', runnable: true, args: { type: 'object', required: ['title'] } });

    const ok = await (await run(url, { name: 'createNote', args: { title: 'a1' }, identity: { userId: 'u1', tenantId: TENANT_A } })).json();
    expect(ok).toMatchObject({ ok: true, result: { title: 'a1', tenant_id: TENANT_A } });
    await run(url, { name: 'createNote', args: { title: 'b1' }, identity: { userId: 'u2', tenantId: TENANT_B } });
    await run(url, { name: 'createNote', args: { title: 'b2' }, identity: { userId: 'u2', tenantId: TENANT_B } });
    // The policy holds: anonymous callers cannot call a `user` entry.
    expect(await (await run(url, { name: 'createNote', args: { title: 'x' }, identity: {} })).json()).toMatchObject({ ok: false, error: { code: 'unauthenticated' } });
    expect(await (await run(url, { name: 'createNote', args: { title: '' }, identity: { userId: 'u1', tenantId: TENANT_A } })).json()).toMatchObject({ ok: false, error: { code: 'validation_failed', diagnostics: [{ path: 'args.title' }] } });
    expect(await (await run(url, { name: 'boom', identity: { userId: 'u1', tenantId: TENANT_A } })).json()).toMatchObject({ ok: false, error: { code: 'internal', message: 'command boom: boom' } });

    const tables = (await (await get(`${url}/_fw/dashboard/api/tables`)).json()).tables;
    expect(tables).toEqual([expect.objectContaining({ name: 'notes', tenantScoped: true, rows: 3, tenants: [{ tenantId: TENANT_B, rows: 2 }, { tenantId: TENANT_A, rows: 1 }] })]);
    const owner = await (await get(`${url}/_fw/dashboard/api/rows?table=notes&limit=2`)).json();
    expect(owner).toMatchObject({ total: 3, as: 'owner' });
    expect(owner.rows).toHaveLength(2);
    const asA = await (await get(`${url}/_fw/dashboard/api/rows?table=notes&asTenant=${TENANT_A}`)).json();
    expect(asA).toMatchObject({ total: 1, as: 'tenant', rows: [{ title: 'a1' }] });
    const filtered = await (await get(`${url}/_fw/dashboard/api/rows?table=notes&column=title&value=B`)).json();
    expect(filtered.rows.map((r: { title: string }) => r.title).sort()).toEqual(['b1', 'b2']);
    // Identifiers are checked against the schema, never used as sent.
    expect((await get(`${url}/_fw/dashboard/api/rows?table=_fw_outbox`)).status).toBe(404);
    expect((await get(`${url}/_fw/dashboard/api/rows?table=notes&column=${encodeURIComponent('title"; drop table notes; --')}&value=x`)).status).toBe(400);
  });

  it('retries and discards outbox rows, and needs a JSON POST to do so', async () => {
    const url = await serve({ dev: true, config: resolveConfig({}) });
    await db.admin.insertInto('_fw_outbox').values({ event: 'x.dead', status: 'dead', attempts: 8, last_error: 'nope' }).execute();
    const [dead] = (await (await get(`${url}/_fw/dashboard/api/outbox?status=dead`)).json()).rows;
    expect(dead).toMatchObject({ event: 'x.dead', status: 'dead', attempts: 8, lastError: 'nope' });
    expect((await fetch(`${url}/_fw/dashboard/api/outbox/${dead.id}/retry`, { method: 'POST' })).status).toBe(415);
    const post = (what: string) => fetch(`${url}/_fw/dashboard/api/outbox/${dead.id}/${what}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(await (await post('retry')).json()).toEqual({ id: dead.id, retried: true });
    expect((await (await get(`${url}/_fw/dashboard/api/outbox?status=pending`)).json()).rows).toEqual([expect.objectContaining({ id: dead.id, status: 'pending', attempts: 0 })]);
    expect(await (await post('discard')).json()).toEqual({ id: dead.id, discarded: true });
    expect((await post('discard')).status).toBe(409);
  });

  it('cancels scheduled calls and workflow runs with the admin routes\' functions, and lists the crons with their next run', async () => {
    const url = await serve({ dev: true, config: resolveConfig({}) });
    const post = (path: string) => fetch(`${url}/_fw/dashboard/api/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const callId = '00000000-0000-4000-8000-0000000000c1';
    await db.admin.insertInto('_fw_outbox').values({ event: 'fw.call:createNote', payload: JSON.stringify({ args: { title: 'later' } }), idempotency_key: `call:${callId}`, available_at: new Date(Date.now() + 3_600_000) }).execute();
    expect((await fetch(`${url}/_fw/dashboard/api/schedule/${callId}/cancel`)).status).toBe(405);
    expect((await fetch(`${url}/_fw/dashboard/api/schedule/${callId}/cancel`, { method: 'POST' })).status).toBe(415);
    expect((await post('schedule/not-a-uuid/cancel')).status).toBe(400);
    expect((await post('schedule/00000000-0000-4000-8000-0000000000ff/cancel')).status).toBe(404);
    expect(await (await post(`schedule/${callId}/cancel`)).json()).toEqual({ id: callId, cancelled: true, status: 'cancelled' });
    const again = await post(`schedule/${callId}/cancel`);
    expect(again.status).toBe(409);
    expect((await again.json()).error.message).toBe(`Scheduled call ${callId} is cancelled: only a call that has not started can be cancelled.`);
    expect((await post('workflows/00000000-0000-4000-8000-0000000000ff/cancel')).status).toBe(404);
    // A run whose start row waits (as a sleeping one's does) is cancelled at once; an ended one is a conflict.
    const runId = '00000000-0000-4000-8000-0000000000d1';
    await db.admin.insertInto('_fw_outbox').values({ event: 'fw.workflow:greet', payload: JSON.stringify({ runId, args: {} }), idempotency_key: `workflow:${runId}`, available_at: new Date(Date.now() + 3_600_000) }).execute();
    expect(await (await post(`workflows/${runId}/cancel`)).json()).toEqual({ runId, workflow: 'greet', status: 'cancelled', cancelRequested: true });
    expect((await post(`workflows/${runId}/cancel`)).status).toBe(409);

    const { crons } = await (await get(`${url}/_fw/dashboard/api/crons`)).json();
    expect(crons).toEqual([{ name: 'daily', call: 'createNote', forEachTenant: null, schedule: '0 7 * * * (Europe/Berlin)', tenant: null, nextRun: expect.stringMatching(/^\d{4}-\d\d-\d\dT0[56]:00:00\.000Z$/) }]);
    expect(Date.parse(crons[0].nextRun)).toBeGreaterThan(Date.now());
    expect(await (await get(`${url}/_fw/dashboard/api/ai/no-such-trace`)).json()).toEqual({ traceId: 'no-such-trace', runs: [], approvals: [] });
  });
});
