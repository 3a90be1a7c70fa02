/**
 * A function is judged by what it is, not by its name (#47 finding 1): an app's `area(integer)` that
 * reads `boards` is what PostgreSQL runs for `area(0)`, though pg_catalog has a geometric `area` too. Such
 * a liveQuery is refused with `unmanaged_read` unless it declares its reads — then `update boards`
 * reruns it — and a function created while subscribers are live (`scale(integer)` beside pg_catalog's
 * `scale(numeric)`) reruns their groups, which are then refused. On both databases.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import { openEventStream, serveLiveRuntime, type LiveTestRuntime } from '../../e2e/support/live-server.ts';
import { APP_ROLE, type FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { definePolicies, liveQuery } from '../core/entries.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { defineSchema, t, table } from '../core/schema.ts';

const schema = defineSchema({ boards: table({ id: t.uuid().primaryKey().defaultRandom(), size: t.integer() }) });

function testApp(): AppDefinition {
  // sql.lit: an integer literal, so PostgreSQL picks area(integer) / scale(numeric) as it would for an app's `area(0)`.
  const area = liveQuery({ handler: (ctx) => ctx.db.selectNoFrom((eb) => eb.fn<number>('area', [sql.lit(0)]).as('n')).executeTakeFirst() });
  const entries = {
    liveArea: area,
    liveAreaDeclared: liveQuery({ reads: ['boards'], handler: area.handler }),
    liveAreaBuiltin: liveQuery({ handler: (ctx) => ctx.db.selectNoFrom(() => sql<number>`pg_catalog.area(box '((0,0),(2,3))')`.as('n')).executeTakeFirst() }),
    liveScale: liveQuery({ handler: (ctx) => ctx.db.selectNoFrom((eb) => eb.fn<number>('scale', [sql.lit(2)]).as('n')).executeTakeFirst() }),
  };
  return { entries: new Map(Object.entries(entries)), policies: definePolicies({}), schema };
}

function member() {
  const tenantId = randomUUID();
  return { tenantId, headers: { 'x-fw-user-id': 'alice', 'x-fw-tenant-id': tenantId, 'x-fw-role': 'member' } };
}

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`functions by identity (${target.name})`, () => {
    let db: FwDatabase;
    let runtime: LiveTestRuntime;
    let drop = async () => {};

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      await applyMigration(db, schema);
      await sql.raw(`create function area(n integer) returns integer language sql stable as 'select count(*)::int from boards where size >= n'; grant execute on function area(integer) to ${APP_ROLE}`).execute(db.admin);
      // A short safety poll: the function catalog is read again at its pace.
      runtime = await serveLiveRuntime(testApp(), db, { pollIntervalMs: 200, safetyPollIntervalMs: 200 });
    });

    afterAll(async () => {
      await runtime?.close();
      await db?.close();
      await drop();
    });

    it('refuses an app function named like a built-in (area(integer) reading boards); declared, update boards reruns it', async () => {
      const alice = member();
      const refused = await fetch(`${runtime.url}/live/liveArea`, { headers: alice.headers });
      // Before the body: an accepted subscription's body is a stream that never ends.
      expect(refused.status).toBe(500);
      const body = await refused.json();
      expect(body.error.diagnostics).toEqual([{ path: 'liveQuery.liveArea', code: 'unmanaged_read', message: '"area()" is a function fw cannot prove reads no table.' }]);

      // pg_catalog's own area, called by its schema, is still proven.
      const builtin = await openEventStream(`${runtime.url}/live/liveAreaBuiltin`, { headers: alice.headers });
      try {
        expect((await builtin.next()).json.result).toEqual({ n: 6 });
      } finally {
        builtin.close();
      }

      const board = randomUUID();
      await sql`insert into boards (id, tenant_id, size) values (${board}, ${alice.tenantId}, -1)`.execute(db.admin);
      const stream = await openEventStream(`${runtime.url}/live/liveAreaDeclared`, { headers: alice.headers });
      try {
        expect((await stream.next()).json.result).toEqual({ n: 0 });
        await sql`update boards set size = 5 where id = ${board}`.execute(db.admin);
        expect((await stream.next()).json.result).toEqual({ n: 1 });
      } finally {
        stream.close();
      }
    });

    it('a function created while a group is live that a call may now resolve to reruns the group, which is then refused', async () => {
      const alice = member();
      const stream = await openEventStream(`${runtime.url}/live/liveScale`, { headers: alice.headers });
      try {
        // scale(numeric): the number of fractional digits of 2.
        expect((await stream.next()).json.result).toEqual({ n: 0 });
        await sql.raw(`create function scale(n integer) returns integer language sql stable as 'select count(*)::int from boards'; grant execute on function scale(integer) to ${APP_ROLE}`).execute(db.admin);
        const refused = await stream.nextWhere((event) => event.event === 'error', 15_000);
        expect(refused.json.fatal).toBe(false);
        expect(refused.json.error.diagnostics).toEqual([{ path: 'liveQuery.liveScale', code: 'unmanaged_read', message: '"scale()" is a function fw cannot prove reads no table.' }]);
      } finally {
        stream.close();
      }
    });
  });
}
