import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type FwDatabase } from '../runtime/db/database.ts';
import { applyMigration, ensureSystemTables } from '../runtime/db/migrate.ts';
import { command, definePolicies, liveQuery, query } from '../runtime/core/entries.ts';
import { FwError as ServerFwError } from '../runtime/core/errors.ts';
import { notFound, tooManyRequests } from '../runtime/core/refusals.ts';
import { createRuntimeHandler } from '../runtime/http/handler.ts';
import type { AppDefinition } from '../runtime/core/app-definition.ts';
import { defineSchema, t, table } from '../runtime/core/schema.ts';
import type { ExternalService } from '../runtime/core/app-definition.ts';
import type { EntryRef, ExternalRef } from './api-types.ts';
import { createClient, FwError } from './index.ts';

const TENANT = '00000000-0000-4000-8000-0000000000c1';
const member = { userId: 'alice', tenantId: TENANT, role: 'member' };

const schema = defineSchema({
  notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text().unique(), created_at: t.timestamptz().defaultNow() }),
});

const entries = {
  findNote: query({ handler: () => { throw notFound('No such note.', { reason: 'note_missing' }); } }),
  slowDown: query({ handler: () => { throw tooManyRequests('Slow down.', { reason: 'slow_down', retryAfterSeconds: 30 }); } }),
  createNote: command({
    args: { title: z.string().min(1).max(200) },
    handler: (ctx, args) => ctx.db.insertInto('notes').values({ title: args.title }).returningAll().executeTakeFirstOrThrow(),
  }),
  listNotes: query({ handler: (ctx) => ctx.db.selectFrom('notes').selectAll().orderBy('title').execute() }),
  liveNotes: liveQuery({ handler: (ctx) => ctx.db.selectFrom('notes').select('title').orderBy('title').execute() }),
  whoAmI: query({ policy: 'public', handler: (ctx) => ctx.auth }),
  adminOnly: command({ policy: 'admin', handler: () => ({ done: true }) }),
  crash: query({
    handler: () => {
      throw new Error('kaboom');
    },
  }),
  refuse: command({
    handler: () => {
      throw new ServerFwError('conflict', 'Already done', { diagnostics: [{ path: 'args', code: 'duplicate', message: 'Done before.' }] });
    },
  }),
  slow: query({ policy: 'public', handler: () => sleep(500).then(() => 'late') }),
};

// Written by hand in the generator's shape (src/fw/_generated/api.ts).
const api = {
  commands: {
    createNote: { kind: 'command', name: 'createNote', reads: [], writes: ['notes'] } as EntryRef<'command', typeof entries.createNote>,
    adminOnly: { kind: 'command', name: 'adminOnly', reads: [], writes: [] } as EntryRef<'command', typeof entries.adminOnly>,
    refuse: { kind: 'command', name: 'refuse', reads: [], writes: [] } as EntryRef<'command', typeof entries.refuse>,
  },
  queries: {
    listNotes: { kind: 'query', name: 'listNotes', reads: ['notes'], writes: [] } as EntryRef<'query', typeof entries.listNotes>,
    findNote: { kind: 'query', name: 'findNote', reads: [], writes: [] } as EntryRef<'query', typeof entries.findNote>,
    slowDown: { kind: 'query', name: 'slowDown', reads: [], writes: [] } as EntryRef<'query', typeof entries.slowDown>,
    whoAmI: { kind: 'query', name: 'whoAmI', reads: [], writes: [] } as EntryRef<'query', typeof entries.whoAmI>,
    crash: { kind: 'query', name: 'crash', reads: [], writes: [] } as EntryRef<'query', typeof entries.crash>,
    slow: { kind: 'query', name: 'slow', reads: [], writes: [] } as EntryRef<'query', typeof entries.slow>,
  },
  liveQueries: {
    liveNotes: { kind: 'liveQuery', name: 'liveNotes', reads: ['notes'], writes: [] } as EntryRef<'liveQuery', typeof entries.liveNotes>,
  },
  external: {
    tickets: {
      commands: {
        createTicket: { kind: 'command', service: 'tickets', name: 'createTicket', qualifiedName: 'tickets.createTicket' } as ExternalRef<
          'command',
          { subject: string; priority?: 'low' | 'high' },
          unknown
        >,
      },
      queries: {
        failing: { kind: 'query', service: 'tickets', name: 'failing', qualifiedName: 'tickets.failing' } as ExternalRef<'query', Record<string, unknown>, unknown>,
        listTickets: { kind: 'query', service: 'tickets', name: 'listTickets', qualifiedName: 'tickets.listTickets' } as ExternalRef<'query', Record<string, unknown>, unknown>,
      },
    },
  },
} as const;

/** What the tickets service (an external http service) received: path, fw's headers and the bridge envelope. */
interface ServiceCall {
  path: string;
  headers: IncomingHttpHeaders;
  body: { args: Record<string, unknown>; auth: Record<string, unknown>; fw: Record<string, unknown> };
}

function ticketsManifest(baseUrl: string): ExternalService['manifest'] {
  return {
    fwProtocol: '1.0',
    // The test service checks that the caller's token reaches it, which a manifest must ask for.
    service: { name: 'tickets', transport: 'http', baseUrl, forwardAuthorization: true },
    entries: [
      { name: 'createTicket', kind: 'command' },
      { name: 'listTickets', kind: 'query' },
      { name: 'failing', kind: 'query' },
    ],
  };
}

const app: AppDefinition = {
  entries: new Map(Object.entries(entries)),
  policies: definePolicies({ admin: ({ auth }) => auth.role === 'admin' }),
  schema,
};

describe('fw/client against a running runtime', () => {
  let db: FwDatabase;
  let server: Server;
  let url: string;
  // What the server received, so header tests check the wire rather than the client's intentions.
  const received: IncomingHttpHeaders[] = [];
  const receivedPaths: string[] = [];
  let tickets: Server;
  const serviceCalls: ServiceCall[] = [];

  beforeAll(async () => {
    tickets = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk) => (text += chunk));
      req.on('end', () => {
        const body = JSON.parse(text) as ServiceCall['body'];
        serviceCalls.push({ path: req.url ?? '', headers: req.headers, body });
        const reply = (status: number, value: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
        if (req.url === '/commands/createTicket') return reply(200, { ok: true, result: { id: 't-1', subject: body.args.subject } });
        if (req.url === '/queries/listTickets') return reply(200, [{ id: 't-1' }]);
        reply(409, {
          ok: false,
          error: { code: 'ticket_closed', message: 'Ticket t-1 is closed.' },
          diagnostics: [{ path: 'args.id', code: 'closed', message: 'Closed tickets cannot change.' }],
        });
      });
    });
    await new Promise<void>((resolve) => tickets.listen(0, '127.0.0.1', resolve));
    const ticketsUrl = `http://127.0.0.1:${(tickets.address() as AddressInfo).port}`;
    app.external = [{ manifest: ticketsManifest(ticketsUrl), source: 'fw.manifest.json', cwd: process.cwd() }];

    db = await createDatabase({ dataDir: 'memory://' });
    await ensureSystemTables(db);
    expect((await applyMigration(db, schema)).blocked).toEqual([]);
    const handler = createRuntimeHandler({ app, db, dev: true, onError: () => {} });
    server = createServer((req, res) => {
      received.push(req.headers);
      receivedPaths.push(req.url ?? '');
      if (req.url?.startsWith('/proxy/')) {
        res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad gateway</html>');
        return;
      }
      handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server?.close();
    tickets?.close();
    await db?.close();
  });

  const client = () => createClient({ apiUrl: url, api, devAuth: member });

  async function failure(promise: Promise<unknown>): Promise<FwError> {
    const error = await promise.then(
      () => expect.unreachable('the call should fail'),
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(FwError);
    return error as FwError;
  }

  it('runs a command by name and a query by ref, with JSON-serialized results', async () => {
    const note = await client().command('createNote', { title: 'First' });
    expect(note).toMatchObject({ title: 'First', tenant_id: TENANT });
    expect(typeof note.created_at).toBe('string');
    expect(Number.isNaN(Date.parse(note.created_at))).toBe(false);

    const notes = await client().query(api.queries.listNotes, {});
    expect(notes.map((n) => n.title)).toContain('First');
  });

  it('reads a liveQuery once through /queries/:name', async () => {
    await client().command(api.commands.createNote, { title: 'Live once' });
    const notes = await client().query('liveNotes', {});
    expect(notes).toContainEqual({ title: 'Live once' });
  });

  it('sends devAuth as x-fw-* headers and the token of getToken as a bearer', async () => {
    expect(await client().query('whoAmI', {})).toEqual({ kind: 'user', userId: 'alice', tenantId: TENANT, role: 'member' });
    expect(received.at(-1)).toMatchObject({ 'x-fw-user-id': 'alice', 'x-fw-tenant-id': TENANT, 'x-fw-role': 'member' });

    let calls = 0;
    const withToken = createClient({ apiUrl: url, api, getToken: async () => `token-${++calls}`, headers: { 'x-app': 'notes' } });
    await withToken.query('whoAmI', {});
    await withToken.query('whoAmI', {});
    expect(received.at(-1)).toMatchObject({ authorization: 'Bearer token-2', 'x-app': 'notes', 'content-type': 'application/json' });
    expect(received.at(-1)).not.toHaveProperty('x-fw-user-id');

    const anonymous = createClient({ apiUrl: url, api, getToken: () => null });
    expect(await anonymous.query('whoAmI', {})).toMatchObject({ kind: 'anonymous' });
    expect(received.at(-1)).not.toHaveProperty('authorization');
  });

  it('validation_failed (400) carries one diagnostic per problem and the trace id', async () => {
    const error = await failure(client().command('createNote', { title: '' }));
    expect(error).toMatchObject({ code: 'validation_failed', status: 400, name: 'FwError' });
    expect(error.diagnostics.map((d) => d.path)).toEqual(['args.title']);
    expect(error.diagnostics[0]).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    expect(error.traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('not_found (404) for an entry the runtime does not have', async () => {
    const stale = { kind: 'command', name: 'removedLastWeek', reads: [], writes: [] } as const;
    const error = await failure(client().command(stale, {} as never));
    expect(error).toMatchObject({ code: 'not_found', status: 404 });
    expect(error.diagnostics[0]?.message).toContain('createNote');
  });

  it('unauthenticated (401) without an identity', async () => {
    const error = await failure(createClient({ apiUrl: url, api }).command('createNote', { title: 'x' }));
    expect(error).toMatchObject({ code: 'unauthenticated', status: 401 });
    expect(error.traceId).toBeTruthy();
  });

  it('forbidden (403) when a named policy refuses', async () => {
    const error = await failure(client().command('adminOnly', {}));
    expect(error).toMatchObject({ code: 'forbidden', status: 403 });
    const admin = createClient({ apiUrl: url, api, devAuth: { ...member, role: 'admin' } });
    expect(await admin.command('adminOnly', {})).toEqual({ done: true });
  });

  it('conflict (409) from a unique violation and from a thrown FwError, with its diagnostics', async () => {
    await client().command('createNote', { title: 'Unique' });
    const duplicate = await failure(client().command('createNote', { title: 'Unique' }));
    expect(duplicate).toMatchObject({ code: 'conflict', status: 409 });

    const refused = await failure(client().command('refuse', {}));
    expect(refused).toMatchObject({ code: 'conflict', status: 409, message: 'Already done' });
    expect(refused.diagnostics).toEqual([{ path: 'args', code: 'duplicate', message: 'Done before.' }]);
  });

  it("a handler's notFound(msg, { reason }) rejects with status 404, code not_found and the reason", async () => {
    const missing = await failure(client().query('findNote', {}));
    expect(missing).toMatchObject({ code: 'not_found', status: 404, reason: 'note_missing', message: 'No such note.' });
    const other = await failure(client().command('refuse', {}));
    expect(other.reason).toBeUndefined();
    expect(missing.retryAfterSeconds).toBeUndefined();
  });

  it("a handler's tooManyRequests(msg, { retryAfterSeconds }) rejects with status 429 and the seconds to wait", async () => {
    const slow = await failure(client().query('slowDown', {}));
    expect(slow).toMatchObject({ code: 'too_many_requests', status: 429, reason: 'slow_down', message: 'Slow down.', retryAfterSeconds: 30 });
  });

  it('internal (500) with the trace id', async () => {
    const error = await failure(client().query('crash', {}));
    expect(error).toMatchObject({ code: 'internal', status: 500 });
    expect(error.traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('network_error (status 0) when nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await failure(createClient({ apiUrl: `http://127.0.0.1:${port}`, api }).query('whoAmI', {}));
    expect(error).toMatchObject({ code: 'network_error', status: 0, traceId: undefined });
    expect(error.message).toContain(`127.0.0.1:${port}/queries/whoAmI`);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('bad_response with the HTTP status when the answer is not fw JSON', async () => {
    const error = await failure(createClient({ apiUrl: `${url}/proxy`, api }).query('whoAmI', {}));
    expect(error).toMatchObject({ code: 'bad_response', status: 502 });
    expect(error.message).toContain('Bad gateway');
  });

  it('aborted when the call signal fires, before or during the request', async () => {
    const before = await failure(client().query('slow', {}, { signal: AbortSignal.abort() }));
    expect(before).toMatchObject({ code: 'aborted', status: 0 });

    const controller = new AbortController();
    const pending = client().query('slow', {}, { signal: controller.signal });
    controller.abort(new Error('user left'));
    const during = await failure(pending);
    expect(during).toMatchObject({ code: 'aborted', status: 0 });
    expect(during.cause).toEqual(new Error('user left'));
  });

  it('client_error keeps what getToken threw as the cause', async () => {
    const cause = new Error('session expired');
    const error = await failure(createClient({ apiUrl: url, api, getToken: () => Promise.reject(cause) }).query('whoAmI', {}));
    expect(error).toMatchObject({ code: 'client_error', status: 0, message: 'session expired' });
    expect(error.cause).toBe(cause);
  });

  it('resolves a relative apiUrl against the page origin, as a browser fetch does', async () => {
    // Node's fetch has no page: this one resolves like a browser on the runtime's origin.
    const pageFetch: typeof fetch = (input, init) => fetch(new URL(String(input), `${url}/app/page`), init);
    for (const apiUrl of ['', '/']) {
      const sameOrigin = createClient({ apiUrl, api, fetch: pageFetch });
      expect(await sameOrigin.query('whoAmI', {})).toMatchObject({ kind: 'anonymous' });
    }
  });

  it('throws at the call site for a name the api object does not have', () => {
    expect(() => client().query('nope' as never, {} as never)).toThrow(/no query named "nope" \(known: crash, findNote, listNotes, liveNotes, slow, slowDown, whoAmI\)/);
    expect(() => client().command(api.queries.listNotes as never, {} as never)).toThrow(/cannot be called as a command/);
  });

  it('runs an external command by qualified name and an external query by ref, with the caller forwarded', async () => {
    const ticket = await client().externalCommand('tickets.createTicket', { subject: 'Printer on fire', priority: 'high' });
    expect(ticket).toEqual({ id: 't-1', subject: 'Printer on fire' });
    expect(receivedPaths.at(-1)).toBe('/external/tickets/commands/createTicket');
    expect(received.at(-1)).toMatchObject({ 'x-fw-user-id': 'alice', 'x-fw-tenant-id': TENANT, 'x-fw-role': 'member', 'content-type': 'application/json' });
    expect(serviceCalls.at(-1)).toMatchObject({
      path: '/commands/createTicket',
      body: {
        args: { subject: 'Printer on fire', priority: 'high' },
        auth: { kind: 'user', userId: 'alice', tenantId: TENANT, role: 'member' },
        fw: { service: 'tickets', entry: 'createTicket', kind: 'command' },
      },
    });

    const withToken = createClient({ apiUrl: url, api, devAuth: member, getToken: () => 'secret', headers: { 'x-app': 'notes' } });
    expect(await withToken.externalQuery(api.external.tickets.queries.listTickets, {})).toEqual([{ id: 't-1' }]);
    expect(receivedPaths.at(-1)).toBe('/external/tickets/queries/listTickets');
    expect(received.at(-1)).toMatchObject({ authorization: 'Bearer secret', 'x-app': 'notes', 'x-fw-user-id': 'alice' });
    expect(serviceCalls.at(-1)).toMatchObject({ path: '/queries/listTickets', body: { args: {} }, headers: { authorization: 'Bearer secret' } });
  });

  it("an external service's error envelope becomes an FwError with its diagnostics and the call's trace id", async () => {
    const error = await failure(client().externalQuery('tickets.failing', { id: 't-1' }));
    expect(error).toMatchObject({ code: 'validation_failed', status: 400, message: 'tickets.failing: Ticket t-1 is closed.' });
    expect(error.diagnostics).toEqual([
      { path: 'external', code: 'ticket_closed', message: 'Ticket t-1 is closed.', hint: 'Reported by the service (status 409).' },
      { path: 'args.id', code: 'closed', message: 'Closed tickets cannot change.' },
    ]);
    expect(error.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(serviceCalls.at(-1)?.headers['x-fw-trace-id']).toBe(error.traceId);
  });

  it('external calls fail like entry calls: unauthenticated, not_found for a stale ref, aborted', async () => {
    const anonymous = await failure(createClient({ apiUrl: url, api }).externalCommand('tickets.createTicket', { subject: 'x' }));
    expect(anonymous).toMatchObject({ code: 'unauthenticated', status: 401 });

    const stale = { kind: 'command', service: 'tickets', name: 'closeTicket', qualifiedName: 'tickets.closeTicket' } as const;
    const missing = await failure(client().externalCommand(stale, {}));
    expect(missing).toMatchObject({ code: 'not_found', status: 404 });
    expect(missing.diagnostics[0]).toMatchObject({ code: 'unknown_external_entry', message: 'Known: tickets.createTicket' });

    const aborted = await failure(client().externalQuery(api.external.tickets.queries.listTickets, {}, { signal: AbortSignal.abort() }));
    expect(aborted).toMatchObject({ code: 'aborted', status: 0 });
  });

  it('throws at the call site for an external name the api does not have, a malformed one, or a ref of the wrong kind', () => {
    expect(() => client().externalCommand('tickets.deleteTicket' as never, {} as never)).toThrow(
      /no external command named "tickets.deleteTicket" \(known: tickets.createTicket\)/,
    );
    expect(() => client().externalQuery('tickets.createTicket' as never, {} as never)).toThrow(/known: tickets.failing, tickets.listTickets/);
    for (const name of ['tickets', 'tickets.', '.createTicket', 'tickets.a/b', '../x.y', 'tickets.create Ticket', 'tickets.%2e']) {
      expect(() => client().externalCommand(name as never, {} as never), name).toThrow(/not a qualified external name/);
    }
    const sneaky = { kind: 'query', service: '..', name: 'listTickets', qualifiedName: '...listTickets' } as const;
    expect(() => client().externalQuery(sneaky, {})).toThrow(/not a qualified external name/);
    expect(() => client().externalQuery(api.external.tickets.commands.createTicket as never, {} as never)).toThrow(/cannot be called as an external query/);
    const withoutExternal = createClient({ apiUrl: url, api: { commands: {}, queries: {}, liveQueries: {} } });
    expect(() => withoutExternal.externalCommand('tickets.createTicket' as never, {} as never)).toThrow(/known: none\)\. Check the name, or import/);
  });
});
