import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import { until } from '../../e2e/support/until.ts';
import { openEventStream, serveLiveRuntime, type LiveTestRuntime } from '../../e2e/support/live-server.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { liveQuery } from '../core/entries.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import type { FwDatabase } from '../db/database.ts';
import { uncapturedTables } from '../db/live-capture.ts';
import { applyMigration } from '../db/migrate.ts';

/**
 * Writes the capture triggers do not see: made under `session_replication_role = replica` (logical
 * replication's apply, sync tools) or while the triggers are disabled (`pg_restore --disable-triggers`,
 * `ALTER TABLE … DISABLE TRIGGER ALL`). Neither may leave a subscriber with stale data for good.
 * Each test owns its database: disabling a table's triggers would reach every other test's writes.
 */
const schema = defineSchema({
  notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text() }),
});

const app: AppDefinition = {
  entries: new Map(Object.entries({ liveNotes: liveQuery({ handler: (ctx) => ctx.db.selectFrom('notes').select(['title']).orderBy('title').execute() }) })),
  policies: {},
  schema,
};

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`writes the capture triggers do not see (${target.name})`, () => {
    let db: FwDatabase;
    let runtime: LiveTestRuntime;
    let drop = async () => {};

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      await applyMigration(db, schema);
      runtime = await serveLiveRuntime(app, db, { pollIntervalMs: 100, safetyPollIntervalMs: 200 });
    });

    afterAll(async () => {
      await runtime?.close();
      await db?.close();
      await drop();
    });

    const subscribe = (tenantId: string) =>
      openEventStream(`${runtime.url}/live/liveNotes`, { headers: { 'x-fw-user-id': 'u', 'x-fw-tenant-id': tenantId, 'x-fw-role': 'member' } });

    it('fw enables its capture triggers ALWAYS: a write under session_replication_role = replica is logged', async () => {
      const tenantId = randomUUID();
      const stream = await subscribe(tenantId);
      try {
        expect((await stream.next()).json.result).toEqual([]);
        await db.admin.transaction().execute(async (trx) => {
          await sql`set local session_replication_role = replica`.execute(trx);
          await sql`insert into notes (title, tenant_id) values ('replicated', ${tenantId})`.execute(trx);
        });
        const next = await stream.nextWhere((event) => event.json.result?.length === 1, 15_000);
        expect(next.json.result).toEqual([{ title: 'replicated' }]);
      } finally {
        stream.close();
      }
    });

    it('a write made while the triggers were disabled reaches the subscriber at the next safety poll; fw db migrate enables them again', async () => {
      const tenantId = randomUUID();
      const stream = await subscribe(tenantId);
      try {
        expect((await stream.next()).json.result).toEqual([]);
        // What `pg_restore --disable-triggers` does around its data.
        await sql.raw('alter table notes disable trigger all').execute(db.admin);
        await sql`insert into notes (title, tenant_id) values ('restored', ${tenantId})`.execute(db.admin);
        await sql.raw('alter table notes enable trigger all').execute(db.admin);
        // Re-enabled the default way, the triggers would skip replica-mode writes: still not captured.
        expect(await uncapturedTables(db.admin, ['notes'])).toEqual(['notes']);
        const next = await stream.nextWhere((event) => event.json.result?.length === 1, 15_000);
        expect(next.json.result).toEqual([{ title: 'restored' }]);
        expect(runtime.hub.status().reader.uncapturedTables).toEqual(['notes']);

        await applyMigration(db, schema);
        expect(await uncapturedTables(db.admin, ['notes'])).toEqual([]);
        // Once a check has seen them enabled, nothing reruns for the table on polls any more.
        await until(async () => runtime.hub.status().reader.uncapturedTables.length === 0, 'a capture check that finds the triggers enabled', { intervalMs: 20 });
      } finally {
        stream.close();
      }
    });
  });
}

