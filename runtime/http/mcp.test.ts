/**
 * The MCP endpoint through the official SDK client (`@modelcontextprotocol/client`) against the
 * runtime's real HTTP server: tools are the caller's entries, calls run as the caller (policies,
 * row-level security, tenants), errors carry fw's code and trace id (redacted outside dev), commands
 * wait for a human's approval given on another channel and used once, and every call is audited —
 * on PGlite and, with FW_TEST_DATABASE_URL, on PostgreSQL, where handler SQL cannot forge an audit row.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import { startTestIssuer, type TestIssuer } from '../../e2e/support/test-issuer.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { command, definePolicies, liveQuery, query } from '../core/entries.ts';
import { FwError } from '../core/errors.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import type { FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { createRuntimeHandler, type RuntimeHandlerOptions } from './handler.ts';

const schema = defineSchema({ notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text() }) });

function testApp(): AppDefinition {
  const entries = {
    createNote: command({ description: 'Adds a note.', args: { title: z.string().min(1) }, handler: (ctx, args) => ctx.db.insertInto('notes').values({ title: args.title }).returning(['title', 'tenant_id']).executeTakeFirstOrThrow() }),
    // No tenant filter on purpose: row-level security scopes it to the caller's tenant.
    listNotes: query({ handler: (ctx) => ctx.db.selectFrom('notes').select(['title', 'tenant_id']).orderBy('title').execute() }),
    adminOnly: query({ policy: 'admin', handler: () => 'secret' }),
    liveNotes: liveQuery({ description: 'The notes, live.', handler: (ctx) => ctx.db.selectFrom('notes').select(['title', 'tenant_id']).orderBy('title').execute() }),
    notesTitled: liveQuery({ args: { title: z.string().min(1) }, handler: (ctx, args) => ctx.db.selectFrom('notes').select('title').where('title', '=', args.title).execute() }),
    internalJob: command({ policy: 'system', handler: () => 'ran' }),
    hidden: query({ tool: false, handler: () => 'hidden' }),
    signNote: command({ tool: { needsApproval: true }, args: { title: z.string().min(1) }, handler: (ctx, args) => ctx.db.insertInto('notes').values({ title: args.title }).returning('title').executeTakeFirstOrThrow() }),
    bigCount: query({ handler: () => ({ n: 1n }) }),
    boom: query({ handler: () => Promise.reject(new Error('connection to db://owner:hunter2@db failed')) }),
    conflict: query({ handler: () => Promise.reject(new FwError('conflict', 'The note is locked.', { reason: 'note_locked' })) }),
    // An injection that tries to write the audit itself, both ways.
    forgeAudit: command({
      args: { how: z.enum(['insert', 'function']) },
      handler: async (ctx, args) => {
        if (args.how === 'insert') await sql`insert into "_fw"."mcp_audit" (entry, kind, args_digest, outcome) values ('x', 'command', 'x', 'ok')`.execute(ctx.db);
        else await sql`select "_fw"."mcp_audit"(${JSON.stringify({ entry: 'x', kind: 'command', args_digest: 'x', outcome: 'ok' })}, ${'0'.repeat(64)})`.execute(ctx.db);
        return 'forged';
      },
    }),
  };
  return { entries: new Map(Object.entries(entries)), policies: definePolicies({ admin: ({ auth }) => auth.role === 'admin' }), schema };
}

const dev = (userId: string, tenantId: string, role = 'member') => ({ 'x-fw-user-id': userId, 'x-fw-tenant-id': tenantId, 'x-fw-role': role });

async function connect(url: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'fw-mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return client;
}

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: any; _meta?: Record<string, unknown> };
const callTool = (client: Client, name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args }) as Promise<ToolResult>;

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`MCP on ${target.name}`, () => {
    let db: FwDatabase;
    let drop: () => Promise<void>;
    let idp: TestIssuer;
    const servers: Server[] = [];
    const clients: Client[] = [];
    let devUrl: string;
    let prodUrl: string;
    let prodOffUrl: string;
    let smallUrl: string;
    let limitedUrl: string;

    async function serve(options: Omit<RuntimeHandlerOptions, 'app' | 'db'>): Promise<string> {
      const server = createServer(createRuntimeHandler({ app: testApp(), db, onError: () => {}, ...options }));
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    }
    const open = async (url: string, headers: Record<string, string>) => {
      const client = await connect(url, headers);
      clients.push(client);
      return client;
    };

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      expect((await applyMigration(db, schema)).blocked).toEqual([]);
      idp = await startTestIssuer('RS256');
      const jwt = { kind: 'jwt' as const, issuer: idp.issuer, audience: idp.audience, jwksUrl: idp.jwksUrl };
      devUrl = await serve({ dev: true });
      smallUrl = await serve({ dev: true, bodyLimit: 2048 });
      // A clock that stays at 30 s into a minute: the limit's window cannot roll over mid-test.
      limitedUrl = await serve({ dev: true, mcp: { rateLimitPerMinute: 3 }, clock: { now: () => Date.parse('2026-12-08T10:00:30Z'), at: () => () => {} } });
      prodUrl = await serve({ dev: false, auth: jwt, mcp: true });
      prodOffUrl = await serve({ dev: false, auth: jwt });
    });
    afterAll(async () => {
      for (const client of clients) await client.close().catch(() => {});
      for (const server of servers) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
      await idp?.close();
      await db?.close();
      await drop?.();
    });

    const auditOf = async (traceId: string) =>
      (await sql<{ user_id: string | null; tenant_id: string | null; role: string | null; auth_kind: string | null; entry: string; kind: string; outcome: string; approval_id: string | null; args_digest: string }>`
        select user_id, tenant_id::text, role, auth_kind, entry, kind, outcome, approval_id, args_digest from "_fw"."mcp_audit" where trace_id = ${traceId} order by id`.execute(db.admin)).rows;
    const traceOf = (result: ToolResult) => result._meta?.['fw/traceId'] as string;

    it("lists exactly the tools the caller's policies allow, with JSON Schema 2020-12 inputs and read/write hints", async () => {
      const tenant = randomUUID();
      const member = await open(devUrl, dev('alice', tenant));
      const { tools } = await member.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['bigCount', 'boom', 'conflict', 'createNote', 'forgeAudit', 'listNotes', 'liveNotes', 'notesTitled', 'signNote']);
      const createNote = tools.find((tool) => tool.name === 'createNote')!;
      expect(createNote.description).toBe('Adds a note.');
      expect(createNote.inputSchema).toEqual({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { title: { type: 'string', minLength: 1 } },
        required: ['title'],
        additionalProperties: false,
      });
      expect(createNote.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false });
      expect(tools.find((tool) => tool.name === 'listNotes')!.annotations).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
      // Dev mode: commands run without approval unless they ask for one.
      expect(createNote._meta).toEqual({ 'fw/kind': 'command', 'fw/needsApproval': false });
      expect(tools.find((tool) => tool.name === 'signNote')!._meta).toEqual({ 'fw/kind': 'command', 'fw/needsApproval': true });

      const admin = await open(devUrl, dev('root', tenant, 'admin'));
      expect((await admin.listTools()).tools.map((tool) => tool.name)).toEqual(['adminOnly', 'bigCount', 'boom', 'conflict', 'createNote', 'forgeAudit', 'listNotes', 'liveNotes', 'notesTitled', 'signNote']);
    });

    it('runs calls as the caller: its tenant under row-level security, audited with who, what and the outcome', async () => {
      const [tenantA, tenantB] = [randomUUID(), randomUUID()];
      const alice = await open(devUrl, dev('alice', tenantA));
      const bob = await open(devUrl, dev('bob', tenantB));
      const created = await callTool(alice, 'createNote', { title: 'alice-note' });
      expect(created.isError).toBeUndefined();
      expect(created.structuredContent).toEqual({ title: 'alice-note', tenant_id: tenantA });
      expect(JSON.parse(created.content[0]!.text!)).toEqual({ title: 'alice-note', tenant_id: tenantA });
      expect(await auditOf(traceOf(created))).toEqual([
        { user_id: 'alice', tenant_id: tenantA, role: 'member', auth_kind: 'user', entry: 'createNote', kind: 'command', outcome: 'ok', approval_id: null, args_digest: expect.stringMatching(/^[0-9a-f]{64}$/) },
      ]);

      const asAlice = await callTool(alice, 'listNotes');
      expect(JSON.parse(asAlice.content[0]!.text!)).toEqual([{ title: 'alice-note', tenant_id: tenantA }]);
      const asBob = await callTool(bob, 'listNotes');
      expect(JSON.parse(asBob.content[0]!.text!)).toEqual([]);
      expect((await auditOf(traceOf(asBob))).map((row) => [row.user_id, row.tenant_id, row.entry, row.kind, row.outcome])).toEqual([['bob', tenantB, 'listNotes', 'query', 'ok']]);
    });

    it("refuses what the caller may not call as an unknown tool, and tells a failure as fw's code and trace id", async () => {
      const tenant = randomUUID();
      const member = await open(devUrl, dev('carol', tenant));
      for (const name of ['adminOnly', 'internalJob', 'hidden', 'noSuchTool']) {
        await expect(callTool(member, name)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining(`Unknown tool: ${name}`) });
      }
      const invalid = await callTool(member, 'createNote', { title: '' });
      expect(invalid.isError).toBe(true);
      expect(invalid.structuredContent).toMatchObject({ ok: false, error: { code: 'validation_failed' }, traceId: traceOf(invalid) });
      expect(invalid.structuredContent.error.diagnostics[0]).toMatchObject({ path: 'args.title' });
      const conflict = await callTool(member, 'conflict');
      expect(conflict.structuredContent).toEqual({ ok: false, error: { code: 'conflict', reason: 'note_locked', message: 'The note is locked.', diagnostics: [] }, traceId: traceOf(conflict) });
      expect(conflict.content[0]!.text).toBe(`conflict: The note is locked. (trace id ${traceOf(conflict)})`);
      // In dev the failure says what happened.
      const boom = await callTool(member, 'boom');
      expect(boom.structuredContent.error.code).toBe('internal');
      expect(boom.content[0]!.text).toContain('hunter2');
      expect((await auditOf(traceOf(invalid))).map((row) => row.outcome)).toEqual(['validation_failed']);
      expect((await auditOf(traceOf(boom))).map((row) => row.outcome)).toEqual(['internal']);
      // JSON has no BigInt: the tool error says where it is, and the audit says it failed.
      const big = await callTool(member, 'bigCount');
      expect(big.structuredContent.error).toMatchObject({ code: 'internal', message: 'tool bigCount answered a BigInt at result.n, which JSON cannot carry.', diagnostics: [{ path: 'result.n', code: 'not_json' }] });
      expect((await auditOf(traceOf(big))).map((row) => row.outcome)).toEqual(['internal']);
    });

    it('runs a command that needs approval only after a human approved it on the admin channel, once, for the caller who asked', async () => {
      const tenant = randomUUID();
      const alice = await open(devUrl, dev('alice', tenant));
      const carol = await open(devUrl, dev('carol', tenant));
      const notes = async () => (await sql<{ title: string }>`select title from notes where tenant_id = ${tenant}::uuid order by title`.execute(db.admin)).rows.map((row) => row.title);

      const asked = await callTool(alice, 'signNote', { title: 'signed' });
      expect(asked.isError).toBe(true);
      const { approvalId } = asked.structuredContent.error;
      expect(asked.structuredContent.error).toMatchObject({ code: 'forbidden', reason: 'approval_required', approvalId: expect.stringMatching(/^mcp_/) });
      expect(asked.content[0]!.text).toContain('You cannot approve it yourself');
      expect(await notes()).toEqual([]);
      // Asking again while it waits is the same request, not a second one.
      expect((await callTool(alice, 'signNote', { title: 'signed' })).structuredContent.error.approvalId).toBe(approvalId);
      // The agent has no tool to approve with.
      await expect(callTool(alice, 'approve', { approvalId })).rejects.toMatchObject({ code: -32602 });

      const pending = await (await fetch(`${devUrl}/_fw/mcp/approvals?pending=1`)).json();
      expect(pending.approvals.filter((a: { approvalId: string }) => a.approvalId === approvalId)).toEqual([
        expect.objectContaining({ approvalId, userId: 'alice', tenantId: tenant, tool: 'signNote', input: { title: 'signed' }, state: 'pending' }),
      ]);
      const decided = await fetch(`${devUrl}/_fw/mcp/approvals/${approvalId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ approved: true }) });
      expect(decided.status).toBe(200);
      // A second decision is refused: a decision is made once.
      const again = await fetch(`${devUrl}/_fw/mcp/approvals/${approvalId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ approved: true }) });
      expect(again.status).toBe(403);
      expect((await again.json()).error.diagnostics[0].code).toBe('approval_used');

      // Another caller of the same tenant with the same args does not use alice's approval; other args do not either.
      expect((await callTool(carol, 'signNote', { title: 'signed' })).structuredContent.error.reason).toBe('approval_required');
      expect((await callTool(alice, 'signNote', { title: 'other' })).structuredContent.error.reason).toBe('approval_required');
      expect(await notes()).toEqual([]);

      const ran = await callTool(alice, 'signNote', { title: 'signed' });
      expect(ran.isError).toBeUndefined();
      expect(ran.structuredContent).toEqual({ title: 'signed' });
      expect(await notes()).toEqual(['signed']);
      expect((await auditOf(traceOf(ran))).map((row) => [row.user_id, row.outcome, row.approval_id])).toEqual([['alice', 'ok', approvalId]]);
      // Used once: the same call asks again.
      const third = await callTool(alice, 'signNote', { title: 'signed' });
      expect(third.structuredContent.error.reason).toBe('approval_required');
      expect(third.structuredContent.error.approvalId).not.toBe(approvalId);
      expect(await notes()).toEqual(['signed']);

      // A refusal is told once, and nothing runs; the next call asks again.
      const decline = await fetch(`${devUrl}/_fw/mcp/approvals/${third.structuredContent.error.approvalId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ approved: false }) });
      expect(decline.status).toBe(200);
      const refused = await callTool(alice, 'signNote', { title: 'signed' });
      expect(refused.structuredContent.error).toMatchObject({ code: 'forbidden', reason: 'approval_refused', approvalId: third.structuredContent.error.approvalId });
      expect((await auditOf(traceOf(refused))).map((row) => row.outcome)).toEqual(['approval_refused']);
      expect((await callTool(alice, 'signNote', { title: 'signed' })).structuredContent.error.reason).toBe('approval_required');
      expect(await notes()).toEqual(['signed']);
    });

    it('answers 401 with WWW-Authenticate and protected-resource metadata naming the issuer; refuses a foreign Origin and a large body', async () => {
      const anonymous = await fetch(`${prodUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${prodUrl}/.well-known/oauth-protected-resource/mcp"`);
      const badToken = await fetch(`${prodUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer not-a-jwt' }, body: '{}' });
      expect(badToken.status).toBe(401);
      expect(badToken.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${prodUrl}/.well-known/oauth-protected-resource/mcp"`);
      const metadata = await fetch(`${prodUrl}/.well-known/oauth-protected-resource/mcp`);
      expect(await metadata.json()).toEqual({ resource: `${prodUrl}/mcp`, authorization_servers: [idp.issuer], bearer_methods_supported: ['header'], resource_name: 'fw app' });
      // Off outside dev unless enabled.
      expect((await fetch(`${prodOffUrl}/mcp`, { method: 'POST', body: '{}' })).status).toBe(404);

      const tenant = randomUUID();
      const rebound = await fetch(`${devUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', origin: 'http://evil.example.com', ...dev('alice', tenant) }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
      expect(rebound.status).toBe(403);
      expect((await rebound.json()).error.reason).toBe('origin_not_allowed');
      const local = await fetch(`${devUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', origin: 'http://localhost:5173', ...dev('alice', tenant) }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
      expect(local.status).toBe(200);
      expect(await local.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
      const large = await fetch(`${smallUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...dev('alice', tenant) }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'createNote', arguments: { title: 'x'.repeat(4096) } } }) });
      expect(large.status).toBe(413);
    });

    it("serves liveQueries as resources (a template when they take args), read as the caller in its tenant", async () => {
      const [tenantA, tenantB] = [randomUUID(), randomUUID()];
      const alice = await open(devUrl, dev('alice', tenantA));
      const bob = await open(devUrl, dev('bob', tenantB));
      expect((await alice.listResources()).resources).toEqual([{ uri: 'fw://live/liveNotes', name: 'liveNotes', description: 'The notes, live.', mimeType: 'application/json' }]);
      expect((await alice.listResourceTemplates()).resourceTemplates).toEqual([
        { uriTemplate: 'fw://live/notesTitled{?args}', name: 'notesTitled', description: "Reads notesTitled (notes titled). (args: the query's args as JSON)", mimeType: 'application/json' },
      ]);
      await callTool(alice, 'createNote', { title: 'resource-note' });
      const read = await alice.readResource({ uri: 'fw://live/liveNotes' });
      expect(read.contents).toEqual([{ uri: 'fw://live/liveNotes', mimeType: 'application/json', text: JSON.stringify([{ title: 'resource-note', tenant_id: tenantA }]) }]);
      expect((await bob.readResource({ uri: 'fw://live/liveNotes' })).contents[0]).toMatchObject({ text: '[]' });
      const uri = `fw://live/notesTitled?args=${encodeURIComponent(JSON.stringify({ title: 'resource-note' }))}`;
      expect((await alice.readResource({ uri })).contents[0]).toMatchObject({ uri, text: JSON.stringify([{ title: 'resource-note' }]) });
      // Refused looks like absent.
      for (const missing of ['fw://live/adminOnly', 'fw://live/nothing', 'https://example.com/liveNotes']) {
        await expect(alice.readResource({ uri: missing })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining(`Resource not found: ${missing}`) });
      }
      await expect(alice.readResource({ uri: 'fw://live/notesTitled?args=%7B%7D' })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('validation_failed') });
      const traceId = read._meta?.['fw/traceId'] as string;
      expect((await auditOf(traceId)).map((row) => [row.user_id, row.entry, row.kind, row.outcome])).toEqual([['alice', 'liveNotes', 'liveQuery', 'ok']]);
    });

    it('audits every one of many concurrent calls (their owner rows are written together, several to an insert)', async () => {
      const tenant = randomUUID();
      const alice = await open(devUrl, dev('alice', tenant));
      const results = await Promise.all(Array.from({ length: 12 }, () => callTool(alice, 'listNotes')));
      const rows = await Promise.all(results.map(async (result) => (await auditOf(traceOf(result))).map((row) => [row.user_id, row.entry, row.outcome])));
      expect(rows).toEqual(Array.from({ length: 12 }, () => [['alice', 'listNotes', 'ok']]));
    });

    it('limits each caller to its requests per minute, others unaffected', async () => {
      const tenant = randomUUID();
      const ping = (user: string) =>
        fetch(`${limitedUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...dev(user, tenant) }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
      expect([(await ping('dave')).status, (await ping('dave')).status, (await ping('dave')).status]).toEqual([200, 200, 200]);
      const refused = await ping('dave');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('30');
      expect((await refused.json()).error.code).toBe('too_many_requests');
      expect((await ping('erin')).status).toBe(200);
    });

    it('in production: a token for another tenant sees none of its rows, commands need approval by default, and failures are redacted', async () => {
      const [tenantA, tenantB] = [randomUUID(), randomUUID()];
      const token = (sub: string, tenant: string, role = 'member') => idp.sign({ sub, tenant_id: tenant, role });
      const alice = await open(prodUrl, { authorization: `Bearer ${await token('alice', tenantA)}` });
      const mallory = await open(prodUrl, { authorization: `Bearer ${await token('mallory', tenantB)}` });
      expect((await alice.listTools()).tools.find((tool) => tool.name === 'createNote')!._meta).toEqual({ 'fw/kind': 'command', 'fw/needsApproval': true });

      const asked = await callTool(alice, 'createNote', { title: 'prod-note' });
      expect(asked.structuredContent.error.reason).toBe('approval_required');
      const approve = await fetch(`${prodUrl}/_fw/mcp/approvals/${asked.structuredContent.error.approvalId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"approved":true}' });
      // No admin token on this runtime: production's admin channel is closed, and a user's token does not open it.
      expect(approve.status).toBe(403);
      await sql`update "_fw"."ai_approvals" set decided_at = now(), approved = true where approval_id = ${asked.structuredContent.error.approvalId}`.execute(db.admin);
      const created = await callTool(alice, 'createNote', { title: 'prod-note' });
      expect(created.structuredContent).toEqual({ title: 'prod-note', tenant_id: tenantA });

      expect(JSON.parse((await callTool(mallory, 'listNotes')).content[0]!.text!)).toEqual([]);
      expect(JSON.parse((await callTool(alice, 'listNotes')).content[0]!.text!)).toEqual([{ title: 'prod-note', tenant_id: tenantA }]);

      const boom = await callTool(alice, 'boom');
      const traceId = traceOf(boom);
      expect(boom.structuredContent).toEqual({ ok: false, error: { code: 'internal', message: `Internal error. Quote trace id ${traceId} when reporting it.`, diagnostics: [] }, traceId });
      expect(JSON.stringify(boom)).not.toContain('hunter2');
    });

    // PGlite is one superuser session (docs/security.md): it proves nothing against handler SQL, so
    // the case is not registered there (a skipped test would fail CI's FW_TEST_REQUIRE_ALL).
    const postgresIt = target.name === 'postgres' ? it : () => undefined;
    postgresIt('handler SQL cannot write the audit: no privilege on the table, and the function wants fw’s proof', async () => {
      const tenant = randomUUID();
      const alice = await open(devUrl, dev('alice', tenant));
      const before = (await sql<{ n: string }>`select count(*) as n from "_fw"."mcp_audit" where entry = 'x'`.execute(db.admin)).rows[0]!.n;
      for (const how of ['insert', 'function']) {
        const forged = await callTool(alice, 'forgeAudit', { how });
        expect(forged.isError).toBe(true);
        expect(forged.structuredContent.error.code).toBe('forbidden');
        expect((await auditOf(traceOf(forged))).map((row) => [row.entry, row.outcome])).toEqual([['forgeAudit', forged.structuredContent.error.code]]);
      }
      expect((await sql<{ n: string }>`select count(*) as n from "_fw"."mcp_audit" where entry = 'x'`.execute(db.admin)).rows[0]!.n).toBe(before);
    });
  });
}
