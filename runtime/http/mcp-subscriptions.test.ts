/**
 * MCP sessions and resource subscriptions through the official SDK client against the runtime's real
 * HTTP server and live hub: `notifications/resources/updated` follows exactly the writes that change
 * the subscribed result (not a write that leaves it as it was, not another tenant's), unsubscribe
 * stops them, and a session id is its caller's alone — on PGlite and, with FW_TEST_DATABASE_URL,
 * on PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { serveLiveRuntime, type LiveTestRuntime } from '../../e2e/support/live-server.ts';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import { until } from '../../e2e/support/until.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { command, definePolicies, liveQuery } from '../core/entries.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import type { FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';

const schema = defineSchema({ notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text() }) });

function testApp(): AppDefinition {
  const entries = {
    createNote: command({ args: { title: z.string().min(1) }, handler: (ctx, args) => ctx.db.insertInto('notes').values({ title: args.title }).returning('title').executeTakeFirstOrThrow() }),
    // A write to every row of the tenant that changes no value: it reruns liveNotes, whose result stays the same.
    touchNotes: command({ handler: async (ctx) => void (await ctx.db.updateTable('notes').set((eb) => ({ title: eb.ref('title') })).execute()) }),
    liveNotes: liveQuery({ handler: (ctx) => ctx.db.selectFrom('notes').select('title').orderBy('title').execute() }),
    notesTitled: liveQuery({ args: { title: z.string().min(1) }, handler: (ctx, args) => ctx.db.selectFrom('notes').select('title').where('title', '=', args.title).execute() }),
    adminNotes: liveQuery({ policy: 'admin', handler: (ctx) => ctx.db.selectFrom('notes').select('title').execute() }),
  };
  return { entries: new Map(Object.entries(entries)), policies: definePolicies({ admin: ({ auth }) => auth.role === 'admin' }), schema };
}

const dev = (userId: string, tenantId: string) => ({ 'x-fw-user-id': userId, 'x-fw-tenant-id': tenantId });

/** A connected client and the resource URIs it was told changed, in the order told. */
interface Watcher {
  client: Client;
  transport: StreamableHTTPClientTransport;
  updated: string[];
}

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`MCP subscriptions on ${target.name}`, () => {
    let db: FwDatabase;
    let drop: () => Promise<void>;
    let runtime: LiveTestRuntime;
    const clients: Client[] = [];

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      expect((await applyMigration(db, schema)).blocked).toEqual([]);
      runtime = await serveLiveRuntime(testApp(), db, { pollIntervalMs: 100 });
    });
    afterAll(async () => {
      for (const client of clients) await client.close().catch(() => {});
      await runtime?.close();
      await db?.close();
      await drop?.();
    });

    async function watch(headers: Record<string, string>): Promise<Watcher> {
      const client = new Client({ name: 'fw-mcp-subscriptions-test', version: '1.0.0' });
      const updated: string[] = [];
      client.setNotificationHandler('notifications/resources/updated', (notification) => void updated.push(notification.params.uri));
      const transport = new StreamableHTTPClientTransport(new URL(`${runtime.url}/mcp`), { requestInit: { headers } });
      await client.connect(transport);
      clients.push(client);
      return { client, transport, updated };
    }
    const run = async (name: string, headers: Record<string, string>, args: Record<string, unknown> = {}) => {
      const response = await fetch(`${runtime.url}/commands/${name}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ args }) });
      expect(response.status).toBe(200);
    };
    const titled = (title: string, spacing = '') => `fw://live/notesTitled?args=${encodeURIComponent(`{${spacing}"title":${spacing}${JSON.stringify(title)}}`)}`;
    /** How many unchanged reruns the hub made of `name` for `tenant`. */
    const unchangedRuns = (name: string, tenant: string) =>
      runtime.hub.status().liveQueries.find((query) => query.name === name)?.groupList.filter((group) => group.tenantId === tenant).reduce((sum, group) => sum + group.unchangedRuns, 0) ?? 0;

    it('notifies exactly the writes that change the result: not one that leaves it the same, not another tenant’s', async () => {
      const [tenantA, tenantB] = [randomUUID(), randomUUID()];
      const alice = await watch(dev('alice', tenantA));
      const bob = await watch(dev('bob', tenantB));
      expect((await alice.client.getServerVersion()) && alice.client.getServerCapabilities()?.resources).toEqual({ subscribe: true, listChanged: false });
      await alice.client.subscribeResource({ uri: 'fw://live/liveNotes' });
      await bob.client.subscribeResource({ uri: 'fw://live/liveNotes' });

      await run('createNote', dev('alice', tenantA), { title: 'a1' });
      await until(async () => alice.updated.length >= 1, "alice's first notification");

      // Reruns liveNotes (every row written) and leaves its result as it was: the hub counts an unchanged run.
      await run('touchNotes', dev('alice', tenantA));
      await until(async () => unchangedRuns('liveNotes', tenantA) >= 1, 'the unchanged rerun');
      await run('createNote', dev('bob', tenantB), { title: 'b1' });
      await until(async () => bob.updated.length === 1, "bob's notification");
      // The positive signal: the same live group under another URI (args {} spelled out), subscribed
      // last, so the hub tells it after the first URI of every run — and alice's stream carries them in
      // that order. Once it is told, whatever the writes above caused on alice's stream has arrived.
      const sentinel = 'fw://live/liveNotes?args=%7B%7D';
      await alice.client.subscribeResource({ uri: sentinel });
      await run('createNote', dev('alice', tenantA), { title: 'a2' });
      await until(async () => alice.updated.includes(sentinel), 'the notification of the sentinel URI');

      expect(alice.updated).toEqual(['fw://live/liveNotes', 'fw://live/liveNotes', sentinel]);
      expect(bob.updated).toEqual(['fw://live/liveNotes']);
      const read = await alice.client.readResource({ uri: 'fw://live/liveNotes' });
      expect(JSON.parse((read.contents[0] as { text: string }).text)).toEqual([{ title: 'a1' }, { title: 'a2' }]);
      // Subscribing is a call: audited as the caller.
      const audit = await sql<{ user_id: string; entry: string; outcome: string }>`select user_id, entry, outcome from "_fw"."mcp_audit" where tenant_id = ${tenantB}::uuid order by id`.execute(db.admin);
      expect(audit.rows).toEqual([{ user_id: 'bob', entry: 'liveNotes', outcome: 'ok' }]);
    });

    it('stops notifying a URI once unsubscribed', async () => {
      const tenant = randomUUID();
      const alice = await watch(dev('alice', tenant));
      // Two URIs of one live group (the same args, spelled apart): one write changes both, and the hub
      // tells its subscribers in the order they came — the unsubscribed one would come first.
      await alice.client.subscribeResource({ uri: titled('x') });
      await alice.client.subscribeResource({ uri: titled('x', ' ') });
      await alice.client.unsubscribeResource({ uri: titled('x') });
      await run('createNote', dev('alice', tenant), { title: 'x' });
      await until(async () => alice.updated.length >= 1, 'the notification of the URI still subscribed');
      expect(alice.updated).toEqual([titled('x', ' ')]);
    });

    it('refuses what the caller may not read, and a subscription without a session', async () => {
      const alice = await watch(dev('alice', randomUUID()));
      await expect(alice.client.subscribeResource({ uri: 'fw://live/adminNotes' })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Resource not found: fw://live/adminNotes') });
      await expect(alice.client.subscribeResource({ uri: 'fw://live/nothing' })).rejects.toMatchObject({ code: -32602 });
      await expect(alice.client.subscribeResource({ uri: 'fw://live/notesTitled?args=%7B%7D' })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/^.*validation_failed: /) });

      // Statelessly (no initialize, so no session), there is nothing to hold a subscription.
      const stateless = await fetch(`${runtime.url}/mcp`, {
        method: 'POST',
        headers: { ...dev('alice', randomUUID()), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'fw://live/liveNotes' } }),
      });
      expect(await stateless.json()).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32601 } });
    });

    it("binds a session to its caller: another caller presenting its id finds no session", async () => {
      const tenant = randomUUID();
      const alice = await watch(dev('alice', tenant));
      const sessionId = alice.transport.sessionId!;
      expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
      const ping = (headers: Record<string, string>) =>
        fetch(`${runtime.url}/mcp`, {
          method: 'POST',
          headers: { ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' }),
        });
      const own = await ping(dev('alice', tenant));
      expect([own.status, await own.json()]).toEqual([200, { jsonrpc: '2.0', id: 7, result: {} }]);
      for (const other of [dev('mallory', tenant), dev('alice', randomUUID())]) {
        const refused = await ping(other);
        expect([refused.status, await refused.json()]).toEqual([404, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found: it ended, or it is not yours. Initialize a new one.' } }]);
      }
      // Its subscriptions are another caller's neither: mallory cannot end alice's session.
      const ended = await fetch(`${runtime.url}/mcp`, { method: 'DELETE', headers: { ...dev('mallory', tenant), 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' } });
      expect(ended.status).toBe(404);
      expect((await ping(dev('alice', tenant))).status).toBe(200);
    });
  });
}
