import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import { createDatabase, type FwDatabase } from '../db/database.ts';
import { applyMigration, ensureSystemTables } from '../db/migrate.ts';
import { command, definePolicies, liveQuery, query } from '../core/entries.ts';
import { FwError } from '../core/errors.ts';
import { badRequest, conflict, forbidden, notFound, tooManyRequests } from '../core/refusals.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { z } from 'zod';
import { createRuntimeHandler, type RuntimeHandlerOptions } from './handler.ts';
import { resolveConfig } from '../config/resolve-config.ts';

// Dev-auth headers of a caller in a tenant of its own: every test owns the rows it writes and reads.
const member = (tenant: string = randomUUID()) => ({ 'x-fw-user-id': 'alice', 'x-fw-tenant-id': tenant, 'x-fw-role': 'member' });
const admin = (tenant: string = randomUUID()) => ({ 'x-fw-user-id': 'bob', 'x-fw-tenant-id': tenant, 'x-fw-role': 'admin' });
const alice = member();
const bob = admin();

const schema = defineSchema({
  notes: table({
    id: t.uuid().primaryKey().defaultRandom(),
    title: t.text(),
    created_at: t.timestamptz().defaultNow(),
  }),
});

function testApp(): AppDefinition {
  const entries = {
    createNote: command({
      args: { title: z.string().min(1).max(200), body: z.string().optional() },
      handler: (ctx, args) => ctx.db.insertInto('notes').values({ title: args.title }).returningAll().executeTakeFirstOrThrow(),
    }),
    listNotes: query({
      // No tenant filter on purpose: row-level security must do it.
      handler: (ctx) => ctx.db.selectFrom('notes').selectAll().orderBy('created_at', 'desc').execute(),
    }),
    liveNotes: liveQuery({ handler: (ctx) => ctx.db.selectFrom('notes').selectAll().execute() }),
    writeInQuery: query({ handler: (ctx) => ctx.db.insertInto('notes').values({ title: 'sneaky' }).execute() }),
    createThenFail: command({
      args: { title: z.string() },
      handler: async (ctx, args) => {
        await ctx.db.insertInto('notes').values({ title: args.title }).execute();
        throw new Error('boom after write: secret internals');
      },
    }),
    createThenConflict: command({
      args: { title: z.string() },
      handler: async (ctx, args) => {
        await ctx.db.insertInto('notes').values({ title: args.title }).execute();
        throw new FwError('conflict', 'Title taken');
      },
    }),
    adminOnly: command({ policy: 'admin', handler: () => ({ done: true }) }),
    publicPing: query({ policy: 'public', handler: (ctx) => ({ pong: true, kind: ctx.auth.kind }) }),
    publicCrash: query({
      policy: 'public',
      handler: () => {
        throw new Error('secret internals: password=hunter2');
      },
    }),
    systemTask: command({ policy: 'system', handler: () => 'never over HTTP' }),
    emitEvent: command({
      handler: async (ctx) => {
        ctx.emit('note.touched', { at: 1 });
        return 'ok';
      },
    }),
    nestedTransaction: command({ handler: (ctx) => ctx.db.transaction().execute(async () => 1) }),
    refuse: command({
      args: { as: z.enum(['notFound', 'conflict', 'forbidden', 'badRequest', 'tooManyRequests']), title: z.string() },
      handler: async (ctx, args) => {
        await ctx.db.insertInto('notes').values({ title: args.title }).execute();
        const waitAMinute = (message: string, options: { reason: string }) => tooManyRequests(message, { ...options, retryAfterSeconds: 60 });
        const refusal = { notFound, conflict, forbidden, badRequest, tooManyRequests: waitAMinute }[args.as];
        throw refusal(`Refused as ${args.as}.`, { reason: `refused_as_${args.as.toLowerCase()}` });
      },
    }),
    // Kysely's update result is { numUpdatedRows: bigint }: JSON has no BigInt.
    renameNotes: command({ args: { title: z.string() }, handler: (ctx, args) => ctx.db.updateTable('notes').set({ title: args.title }).executeTakeFirst() }),
    publicBigint: query({ policy: 'public', handler: () => ({ total: [{ count: 9007199254740993n }] }) }),
    publicMissing: query({ policy: 'public', handler: () => { throw notFound('No such note.', { reason: 'note_missing' }); } }),
  };
  return {
    entries: new Map(Object.entries(entries)),
    policies: definePolicies({ admin: ({ auth }) => auth.role === 'admin' }),
    schema,
  };
}

async function serve(options: RuntimeHandlerOptions): Promise<{ url: string; server: Server }> {
  const server = createServer(createRuntimeHandler(options));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function call(url: string, path: string, init: RequestInit & { args?: unknown } = {}) {
  const { args, ...rest } = init;
  const response = await fetch(url + path, {
    method: 'POST',
    ...rest,
    headers: { 'content-type': 'application/json', ...(rest.headers as Record<string, string>) },
    ...(args !== undefined ? { body: JSON.stringify({ args }) } : {}),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`HTTP runtime on ${target.name}`, () => {
    let db: FwDatabase;
    let url: string;
    let server: Server;
    let dropDatabase: (() => Promise<void>) | undefined;
    const errors: Array<{ message: string; traceId: string }> = [];

    beforeAll(async () => {
      ({ db, drop: dropDatabase } = await openTestDatabase(target));
      await ensureSystemTables(db);
      const app = testApp();
      const migration = await applyMigration(db, app.schema);
      expect(migration.blocked).toEqual([]);
      ({ url, server } = await serve({ app, db, dev: true, onError: (e, traceId) => errors.push({ message: e.message, traceId }) }));
    });

    afterAll(async () => {
      server?.close();
      await db?.close();
      await dropDatabase?.();
    });

    it('says where an answer holds a BigInt and what to do, and the write it came with is rolled back', async () => {
      const tenant = randomUUID();
      await call(url, '/commands/createNote', { args: { title: 'before' }, headers: member(tenant) });
      const before = errors.length;
      const r = await call(url, '/commands/renameNotes', { args: { title: 'after' }, headers: member(tenant) });
      expect(r.status).toBe(500);
      expect(r.body.error).toMatchObject({
        code: 'internal',
        message: 'command renameNotes answered a BigInt at result.numUpdatedRows, which JSON cannot carry.',
        diagnostics: [{ path: 'result.numUpdatedRows', code: 'not_json', message: expect.stringContaining('Return Number(value)') }],
      });
      expect(errors.slice(before).map((e) => [e.message, e.traceId])).toEqual([[r.body.error.message, r.body.traceId]]);
      const notes = await call(url, '/queries/listNotes', { args: {}, headers: member(tenant) });
      expect(notes.body.result.map((note: { title: string }) => note.title)).toEqual(['before']);
      // A query's answer is checked as it is sent: the route says which.
      const query = await call(url, '/queries/publicBigint', {});
      expect(query.body.error).toMatchObject({ code: 'internal', message: 'POST /queries/publicBigint answered a BigInt at result.total.0.count, which JSON cannot carry.', diagnostics: [{ path: 'result.total.0.count', code: 'not_json' }] });
      await stillServes();
    });

    const stillServes = async () => {
      const health = await fetch(`${url}/health`);
      expect(health.status).toBe(200);
    };

    it('runs a command and a query with the success envelope and a trace id', async () => {
      const tenant = randomUUID();
      const created = await call(url, '/commands/createNote', { args: { title: 'First' }, headers: member(tenant) });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ ok: true, result: { title: 'First', tenant_id: tenant } });
      expect(created.body.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(created.headers.get('x-fw-trace-id')).toBe(created.body.traceId);

      const listed = await call(url, '/queries/listNotes', { headers: member(tenant) });
      expect(listed.status).toBe(200);
      expect(listed.body.result).toEqual([created.body.result]);
    });

    it('keeps a well-formed inbound trace id and replaces a malformed one', async () => {
      const kept = await call(url, '/queries/publicPing', { headers: { 'x-fw-trace-id': 'trace-1234567890' } });
      expect(kept.headers.get('x-fw-trace-id')).toBe('trace-1234567890');
      expect(kept.body.traceId).toBe('trace-1234567890');
      const replaced = await call(url, '/queries/publicPing', { headers: { 'x-fw-trace-id': 'bad id\twith tab' } });
      expect(replaced.headers.get('x-fw-trace-id')).toMatch(/^[0-9a-f]{32}$/);
    });

    it('treats an absent body as empty args', async () => {
      const response = await fetch(`${url}/queries/publicPing`, { method: 'POST' });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ ok: true, result: { pong: true, kind: 'anonymous' } });
    });

    it('400 bad_json for malformed JSON', async () => {
      const r = await call(url, '/commands/createNote', { body: '{"args": {"title": ', headers: alice });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ ok: false, error: { code: 'bad_json' } });
      expect(r.body.traceId).toMatch(/^[0-9a-f]{32}$/);
      await stillServes();
    });

    it('400 validation_failed with one diagnostic per problem', async () => {
      const r = await call(url, '/commands/createNote', { args: { title: '', body: 5, extra: true }, headers: alice });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('validation_failed');
      const paths = r.body.error.diagnostics.map((d: { path: string }) => d.path).sort();
      expect(paths).toEqual(['args', 'args.body', 'args.title']);
      for (const d of r.body.error.diagnostics) expect(d).toMatchObject({ message: expect.any(String), code: expect.any(String) });
      await stillServes();
    });

    it('400 when args is not an object or the envelope has unknown members', async () => {
      const notObject = await call(url, '/commands/createNote', { body: JSON.stringify({ args: 'x' }), headers: alice });
      expect(notObject.status).toBe(400);
      expect(notObject.body.error.code).toBe('validation_failed');
      const stray = await call(url, '/commands/createNote', { body: JSON.stringify({ title: 'x' }), headers: alice });
      expect(stray.status).toBe(400);
      expect(stray.body.error.diagnostics[0].path).toBe('body.title');
    });

    it('413 payload_too_large over 1 MiB', async () => {
      const r = await call(url, '/commands/createNote', { args: { title: 'x'.repeat(1024 * 1024 + 10) }, headers: alice });
      expect(r.status).toBe(413);
      expect(r.body.error.code).toBe('payload_too_large');
      await stillServes();
    });

    it('415 for a non-JSON content type', async () => {
      const r = await call(url, '/commands/createNote', { body: 'title=x', headers: { ...alice, 'content-type': 'application/x-www-form-urlencoded' } });
      expect(r.status).toBe(415);
      expect(r.body.error.code).toBe('unsupported_media_type');
      await stillServes();
    });

    it('404 for an unknown entry and for a query called as a command', async () => {
      const unknown = await call(url, '/commands/nope', { args: {}, headers: alice });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('not_found');
      const wrongKind = await call(url, '/commands/listNotes', { args: {}, headers: alice });
      expect(wrongKind.status).toBe(404);
      await stillServes();
    });

    it('405 with Allow for a wrong method', async () => {
      const r = await fetch(`${url}/commands/createNote`, { method: 'GET', headers: alice });
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toBe('POST');
      expect(((await r.json()) as any).error.code).toBe('method_not_allowed');
      const health = await fetch(`${url}/health`, { method: 'DELETE' });
      expect(health.status).toBe(405);
      expect(health.headers.get('allow')).toBe('GET, HEAD');
      await stillServes();
    });

    it('401 without auth, and for malformed dev headers', async () => {
      const anonymous = await call(url, '/commands/createNote', { args: { title: 'x' } });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.error.code).toBe('unauthenticated');
      const badTenant = await call(url, '/commands/createNote', { args: { title: 'x' }, headers: { ...alice, 'x-fw-tenant-id': 'not-a-uuid' } });
      expect(badTenant.status).toBe(401);
      expect(badTenant.body.error.diagnostics[0].path).toBe('headers.x-fw-tenant-id');
      await stillServes();
    });

    it('403 when a named policy denies, 200 when it allows; system entries are never callable', async () => {
      const denied = await call(url, '/commands/adminOnly', { args: {}, headers: alice });
      expect(denied.status).toBe(403);
      expect(denied.body.error.code).toBe('forbidden');
      const allowed = await call(url, '/commands/adminOnly', { args: {}, headers: bob });
      expect(allowed.status).toBe(200);
      const system = await call(url, '/commands/systemTask', { args: {}, headers: bob });
      expect(system.status).toBe(403);
      await stillServes();
    });

    // A refused or failed write leaves the caller's tenant exactly as it was: empty.
    const notesOf = async (tenant: string) => (await db.admin.selectFrom('notes').select('title').where('tenant_id', '=', tenant).execute()).map((n) => n.title);

    it('500 internal with the trace id; stack only in dev; rolls back the write', async () => {
      const tenant = randomUUID();
      const r = await call(url, '/commands/createThenFail', { args: { title: 'ghost' }, headers: member(tenant) });
      expect(r.status).toBe(500);
      expect(r.body.error.code).toBe('internal');
      expect(r.body.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(r.body.error.stack).toContain('boom after write');
      expect(errors.filter((e) => e.traceId === r.body.traceId).map((e) => e.message)).toEqual([expect.stringContaining('boom after write')]);
      expect(await notesOf(tenant)).toEqual([]);
      expect((await call(url, '/queries/listNotes', { headers: member(tenant) })).body.result).toEqual([]);
      await stillServes();
    });

    it('an FwError thrown after a write keeps its status and still rolls back', async () => {
      const tenant = randomUUID();
      const r = await call(url, '/commands/createThenConflict', { args: { title: 'conflicted' }, headers: member(tenant) });
      expect(r.status).toBe(409);
      expect(r.body.error).toMatchObject({ code: 'conflict', message: 'Title taken' });
      expect(await notesOf(tenant)).toEqual([]);
    });

    it('notFound, conflict, forbidden, badRequest and tooManyRequests answer 404, 409, 403, 400 and 429 with the reason, and roll back', async () => {
      const tenant = randomUUID();
      const answers = [];
      for (const as of ['notFound', 'conflict', 'forbidden', 'badRequest', 'tooManyRequests']) {
        const r = await call(url, '/commands/refuse', { args: { as, title: as }, headers: member(tenant) });
        answers.push([r.status, r.body.error, r.headers.get('retry-after')]);
      }
      expect(answers).toEqual([
        [404, { code: 'not_found', reason: 'refused_as_notfound', message: 'Refused as notFound.', diagnostics: [] }, null],
        [409, { code: 'conflict', reason: 'refused_as_conflict', message: 'Refused as conflict.', diagnostics: [] }, null],
        [403, { code: 'forbidden', reason: 'refused_as_forbidden', message: 'Refused as forbidden.', diagnostics: [] }, null],
        [400, { code: 'bad_request', reason: 'refused_as_badrequest', message: 'Refused as badRequest.', diagnostics: [] }, null],
        [429, { code: 'too_many_requests', reason: 'refused_as_toomanyrequests', message: 'Refused as tooManyRequests.', diagnostics: [] }, '60'],
      ]);
      expect(await notesOf(tenant)).toEqual([]);
      expect(() => notFound('x', { reason: 'Ticket Closed' })).toThrow(/lower snake_case/);
      expect(() => tooManyRequests('x', { retryAfterSeconds: 1.5 })).toThrow(/whole number/);
    });

    it('refuses a write inside a query (read-only transaction)', async () => {
      const tenant = randomUUID();
      const r = await call(url, '/queries/writeInQuery', { headers: member(tenant) });
      expect(r.status).toBe(500);
      expect(r.body.error.message).toMatch(/read-only/);
      expect(await notesOf(tenant)).toEqual([]);
    });

    it('refuses ctx.db.transaction() inside an entry', async () => {
      const r = await call(url, '/commands/nestedTransaction', { headers: alice });
      expect(r.status).toBe(500);
      expect(r.body.error.message).toMatch(/already runs in its own transaction/);
    });

    it('isolates tenants through row-level security, even for a query without a where', async () => {
      const [tenantA, tenantB] = [randomUUID(), randomUUID()];
      expect((await call(url, '/commands/createNote', { args: { title: 'alice-only' }, headers: member(tenantA) })).status).toBe(200);
      expect((await call(url, '/commands/createNote', { args: { title: 'bob-only' }, headers: admin(tenantB) })).status).toBe(200);
      const forAlice = await call(url, '/queries/listNotes', { headers: member(tenantA) });
      const forBob = await call(url, '/queries/listNotes', { headers: admin(tenantB) });
      expect(forAlice.body.result.map((n: { title: string; tenant_id: string }) => [n.title, n.tenant_id])).toEqual([['alice-only', tenantA]]);
      expect(forBob.body.result.map((n: { title: string; tenant_id: string }) => [n.title, n.tenant_id])).toEqual([['bob-only', tenantB]]);
    });

    it('handles 50 concurrent commands: all succeed and all are listed', async () => {
      const tenant = member();
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => call(url, '/commands/createNote', { args: { title: `c${i}` }, headers: tenant })),
      );
      expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
      const listed = await call(url, '/queries/listNotes', { headers: tenant });
      expect(listed.body.result.map((n: { title: string }) => n.title).sort()).toEqual(
        Array.from({ length: 50 }, (_, i) => `c${i}`).sort(),
      );
    });

    it('records ctx.emit events in the outbox inside the command transaction', async () => {
      const tenant = randomUUID();
      const r = await call(url, '/commands/emitEvent', { headers: member(tenant) });
      expect(r.status).toBe(200);
      const rows = await db.admin.selectFrom('_fw_outbox').selectAll().where('tenant_id', '=', tenant).execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ event: 'note.touched', tenant_id: tenant, user_id: 'alice', payload: { at: 1 }, trace_id: r.body.traceId });
    });

    it('lists entries and reports health', async () => {
      const entries = await fetch(`${url}/entries`);
      const body = (await entries.json()) as any;
      expect(body.entries.find((e: { name: string }) => e.name === 'createNote')).toMatchObject({
        kind: 'command',
        policy: 'user',
        route: 'POST /commands/createNote',
      });
      const health = (await (await fetch(`${url}/health`)).json()) as any;
      expect(health).toMatchObject({ status: 'ok', database: target.name });
    });
  });
}

describe('HTTP runtime outside dev mode', () => {
  let db: FwDatabase;
  let url: string;
  let server: Server;

  beforeAll(async () => {
    db = await createDatabase({ dataDir: 'memory://' });
    await ensureSystemTables(db);
    const app = testApp();
    await applyMigration(db, app.schema);
    ({ url, server } = await serve({ app, db, dev: false, onError: () => {}, cors: { origins: ['https://app.example.com'], credentials: true } }));
  });
  afterAll(async () => {
    server?.close();
    await db?.close();
  });

  it('hides internal messages and stacks, keeps the trace id', async () => {
    const r = await call(url, '/queries/publicCrash', {});
    expect(r.status).toBe(500);
    expect(r.body.error.code).toBe('internal');
    expect(r.body.error.stack).toBeUndefined();
    expect(JSON.stringify(r.body)).not.toContain('hunter2');
    expect(r.body.error.message).toContain(r.body.traceId);
    // Anonymous callers are refused before anything runs.
    expect((await call(url, '/queries/writeInQuery', {})).status).toBe(401);
  });

  it('says only internal and the trace id when an answer holds a BigInt', async () => {
    const r = await call(url, '/queries/publicBigint', {});
    expect(r.status).toBe(500);
    expect(r.body.error).toEqual({ code: 'internal', message: `Internal error. Quote trace id ${r.body.traceId} when reporting it.`, diagnostics: [] });
  });

  it('shows a refusal a handler threw as it is: code, reason and message', async () => {
    const r = await call(url, '/queries/publicMissing', {});
    expect(r.status).toBe(404);
    expect(r.body.error).toEqual({ code: 'not_found', reason: 'note_missing', message: 'No such note.', diagnostics: [] });
  });

  it('refuses dev headers: they identify nobody outside dev mode', async () => {
    const r = await call(url, '/commands/createNote', { args: { title: 'x' }, headers: alice });
    expect(r.status).toBe(401);
  });

  it('does not list entries anonymously', async () => {
    expect((await fetch(`${url}/entries`)).status).toBe(401);
  });

  it('answers CORS only for allow-listed origins, never with a wildcard', async () => {
    const allowed = await fetch(`${url}/queries/publicPing`, { method: 'POST', headers: { origin: 'https://app.example.com' } });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    const other = await fetch(`${url}/queries/publicPing`, { method: 'POST', headers: { origin: 'https://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await fetch(`${url}/commands/createNote`, { method: 'OPTIONS', headers: { origin: 'https://app.example.com' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('x-fw-trace-id');
  });

  it('refuses a wildcard CORS configuration and dev headers in production', () => {
    expect(() => createRuntimeHandler({ app: testApp(), db, dev: false, cors: { origins: ['*'] } })).toThrow(/not allowed/);
    expect(() => createRuntimeHandler({ app: testApp(), db, dev: false, auth: 'dev-headers' })).toThrow(/development only/);
    // FW_CORS_ORIGINS is an exact allow-list: a wildcard or a path is refused, naming the variable.
    for (const value of ['*', 'https://app.example.com/path']) {
      expect(() => createRuntimeHandler({ app: testApp(), db, dev: false, config: resolveConfig({ FW_CORS_ORIGINS: value }) })).toThrow(expect.objectContaining({ kind: 'bad_config', message: expect.stringMatching(/^FW_CORS_ORIGINS: /) }));
    }
  });

  it('has no CORS headers when CORS is not configured', async () => {
    const plain = await serve({ app: testApp(), db, dev: true });
    const r = await fetch(`${plain.url}/queries/publicPing`, { method: 'POST', headers: { origin: 'https://app.example.com' } });
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    plain.server.close();
  });
});
