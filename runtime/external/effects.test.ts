import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import { until } from '../../e2e/support/until.ts';
import type { FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { action, liveQuery, query } from '../core/entries.ts';
import { createOutboxWorker } from '../app/outbox-worker.ts';
import { createRuntimeHandler } from '../http/handler.ts';
import { type LiveTestRuntime, openEventStream, serveLiveRuntime } from '../../e2e/support/live-server.ts';
import { type AppDefinition } from '../core/app-definition.ts';
import { checkApp } from '../app/check-app.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { effectProblems, effectTables, invalidatedTables } from './effects.ts';
import type { Manifest } from '../core/external-manifest.ts';

// Every test writes and watches in a tenant of its own.
let TENANT: string;
let alice: Record<string, string>;
beforeEach(() => {
  TENANT = randomUUID();
  alice = { 'x-fw-user-id': 'alice', 'x-fw-tenant-id': TENANT, 'x-fw-role': 'member' };
});

const schema = defineSchema({
  notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text() }),
  announcements: table({ id: t.uuid().primaryKey().defaultRandom(), text: t.text() }, { tenantScoped: false }),
});

function manifest(baseUrl: string): Manifest {
  return {
    fwProtocol: '1.0',
    service: { name: 'sync', transport: 'http', baseUrl },
    entries: [
      // Names a liveQuery that declares its reads: its tables are invalidated.
      { name: 'importCount', kind: 'command', needsApproval: false, effects: ['notes.imported', { name: 'notes.counted', liveQueries: ['liveCount'] }] },
      // Names a liveQuery whose tables fw learns only when it runs: every table is invalidated.
      { name: 'importNotes', kind: 'command', needsApproval: false, effects: [{ name: 'notes.synced', liveQueries: ['liveNotes'] }] },
      { name: 'announce', kind: 'command', needsApproval: false, effects: [{ name: 'announced', tables: ['announcements'] }] },
    ],
  };
}

/** What the argless action below received, by trace id: the effect event's payload, as it is. */
const imported = new Map<string, unknown[]>();

function testApp(baseUrl: string): AppDefinition {
  const entries = {
    // Declares no args: it takes the event's payload ({service, entry, external}) as it is.
    onImported: action({
      on: 'notes.imported',
      handler: (ctx, payload) => void imported.set(ctx.traceId, [...(imported.get(ctx.traceId) ?? []), payload]),
    }),
    liveNotes: liveQuery({ handler: (ctx) => ctx.db.selectFrom('notes').select(['title']).orderBy('title').execute() }),
    liveCount: liveQuery({ reads: ['notes'], handler: async (ctx) => (await sql<{ n: number }>`select count(*)::int as n from notes`.execute(ctx.db)).rows[0] }),
    listNotes: query({ handler: (ctx) => ctx.db.selectFrom('notes').select(['title']).execute() }),
  };
  return { entries: new Map(Object.entries(entries)), policies: {}, schema, external: [{ manifest: manifest(baseUrl), source: 'fw.manifest.json', cwd: process.cwd() }] };
}

describe('effect tables', () => {
  const app = testApp('http://127.0.0.1:1');
  it('takes named tables, the declared reads of named liveQueries, or every table when a liveQuery declares none', () => {
    expect(effectTables(app, { name: 'a', tables: ['announcements'], liveQueries: [] })).toEqual({ tables: ['announcements'], conservative: false });
    expect(effectTables(app, { name: 'b', tables: [], liveQueries: ['liveCount'] })).toEqual({ tables: ['notes'], conservative: false });
    expect(effectTables(app, { name: 'c', tables: [], liveQueries: ['liveNotes'] })).toEqual({ tables: ['announcements', 'notes'], conservative: true });
    const [importCount, importNotes, announce] = app.external![0]!.manifest.entries;
    expect([importCount, importNotes, announce].map((e) => invalidatedTables(app, e!))).toEqual([['notes'], ['announcements', 'notes'], ['announcements']]);
  });

  it('refuses to load an app whose effects name unknown tables or liveQueries, naming service, effect and fix', () => {
    expect(checkApp(app)).toEqual([]);
    const broken = testApp('http://127.0.0.1:1');
    broken.external![0]!.manifest.entries[0]!.effects = [{ name: 'notes.counted', tables: ['nots'], liveQueries: ['listNotes', 'liveTickets'] }];
    const problems = checkApp(broken);
    expect(problems.map((p) => p.file)).toEqual(['fw.manifest.json', 'fw.manifest.json', 'fw.manifest.json']);
    expect(problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/^external command "sync\.importCount": effect "notes\.counted" names table "nots", which src\/fw\/schema\.ts does not declare \(tables: announcements, notes\)\. Fix the name/),
      expect.stringContaining('names liveQuery "listNotes", which is a query, not a liveQuery (liveQueries: liveCount, liveNotes). Fix the name'),
      expect.stringContaining('names liveQuery "liveTickets", which the app does not define'),
    ]);
    expect(effectProblems(broken, broken.external![0]!)).toHaveLength(3);
  });
});

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`external effects reach live subscribers (${target.name})`, () => {
    let db: FwDatabase;
    let app: AppDefinition;
    let runtime: LiveTestRuntime;
    let service: Server;
    let url: string;
    let drop = async () => {};
    const calls: string[] = [];

    beforeAll(async () => {
      // The external service: answers every command, and counts the calls it got.
      service = createServer((req, res) => {
        calls.push(req.url ?? '');
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ ok: true, result: { done: true } }));
      });
      await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
      app = testApp(`http://127.0.0.1:${(service.address() as AddressInfo).port}`);
      ({ db, drop } = await openTestDatabase(target));
      await applyMigration(db, app.schema);
      runtime = await serveLiveRuntime(app, db, { pollIntervalMs: 200 });
      url = runtime.url;
    });

    afterAll(async () => {
      await runtime?.close();
      await new Promise((resolve) => service?.close(resolve));
      await db?.close();
      await drop();
    });

    const callCommand = async (name: string) => {
      const response = await fetch(`${url}/external/sync/commands/${name}`, { method: 'POST', headers: { ...alice, 'content-type': 'application/json' }, body: JSON.stringify({ args: {} }) });
      return { status: response.status, body: (await response.json()) as any };
    };

    /**
     * A row written the way an external service's own write reaches the database: fw's capture
     * triggers do not see it (they are off for this transaction), so only a declared effect can
     * tell live subscribers.
     */
    const writeUnseen = (title: string) =>
      db.admin.transaction().execute(async (trx) => {
        await sql`set local session_replication_role = replica`.execute(trx);
        await sql`insert into notes (title, tenant_id) values (${title}, ${TENANT}::uuid)`.execute(trx);
      });

    it('re-runs a liveQuery named by an effect (declared reads) and writes one outbox row per effect', async () => {
      const stream = await openEventStream(`${url}/live/liveCount`, { headers: alice });
      try {
        expect((await stream.next()).json.result).toEqual({ n: 0 });
        await writeUnseen('written by the service');
        const called = await callCommand('importCount');
        expect(called.status, JSON.stringify(called.body)).toBe(200);
        expect((await stream.nextWhere((e) => e.event === 'snapshot' && e.json.result.n === 1)).json.result).toEqual({ n: 1 });
        const outbox = await db.admin.selectFrom('_fw_outbox').select(['event', 'payload', 'tenant_id', 'user_id']).where('trace_id', '=', called.body.traceId).orderBy('id').execute();
        expect(outbox).toEqual([
          { event: 'notes.imported', payload: { service: 'sync', entry: 'importCount', external: true }, tenant_id: TENANT, user_id: 'alice' },
          { event: 'notes.counted', payload: { service: 'sync', entry: 'importCount', external: true }, tenant_id: TENANT, user_id: 'alice' },
        ]);
      } finally {
        stream.close();
      }
    });

    it('delivers an external effect event to an action that declares no args, with the payload as it is', async () => {
      const called = await callCommand('importCount');
      expect(called.status, JSON.stringify(called.body)).toBe(200);
      const failures: unknown[] = [];
      const worker = createOutboxWorker({ app, db, pollMs: 50, onError: (error) => failures.push(error) });
      const settled = () => db.admin.selectFrom('_fw_outbox').select(['event', 'status']).where('trace_id', '=', called.body.traceId).orderBy('event').execute();
      // Final state: neither of the command's two events is pending any more (delivered, or dead).
      const rows = await until(async () => (await worker.runOnce(), (await settled()).every((r) => r.status !== 'pending') && settled()), 'both events to settle');
      expect(imported.get(called.body.traceId)).toEqual([{ service: 'sync', entry: 'importCount', external: true }]);
      expect(rows).toEqual([
        { event: 'notes.counted', status: 'delivered' },
        { event: 'notes.imported', status: 'delivered' },
      ]);
      expect(failures).toEqual([]);
    });

    it('re-runs a liveQuery without declared reads (every table is invalidated)', async () => {
      const stream = await openEventStream(`${url}/live/liveNotes`, { headers: alice });
      try {
        const first = (await stream.next()).json.result as Array<{ title: string }>;
        await writeUnseen('synced quietly');
        expect((await callCommand('importNotes')).status).toBe(200);
        const next = await stream.nextWhere((e) => e.event === 'snapshot' && e.json.result.length > first.length);
        expect(next.json.result.map((n: { title: string }) => n.title)).toContain('synced quietly');
      } finally {
        stream.close();
      }
    });

    it('never calls the service when an effect names something unknown', async () => {
      const app = testApp(`http://127.0.0.1:${(service.address() as AddressInfo).port}`);
      app.external![0]!.manifest.entries[2]!.effects = [{ name: 'announced', tables: ['announcement'] }];
      runtime.hub.setApp(app);
      const local = createServer(createRuntimeHandler({ app, db, dev: true, live: runtime.hub }));
      await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
      try {
        const before = calls.length;
        const response = await fetch(`http://127.0.0.1:${(local.address() as AddressInfo).port}/external/sync/commands/announce`, {
          method: 'POST',
          headers: { ...alice, 'content-type': 'application/json' },
          body: JSON.stringify({ args: {} }),
        });
        const body = (await response.json()) as any;
        expect([response.status, body.error.diagnostics[0].code]).toEqual([500, 'unknown_effect_target']);
        expect(calls.length).toBe(before);
      } finally {
        local.closeAllConnections();
        await new Promise((resolve) => local.close(resolve));
      }
    });
  });
}
