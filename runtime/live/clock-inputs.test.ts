/**
 * The clock through an input (#47 finding 2): `'now'`, `'today'`, `'tomorrow'`, `'yesterday'` parsed as a
 * date or time, and one-argument `age(ts)`, read the clock wherever they reach SQL — a client's argument
 * included. Refused with `clock_read` without `refreshMs`; with it, a row that becomes due appears with
 * no write. On both databases, through the real HTTP runtime.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import { openEventStream, serveLiveRuntime, type LiveTestRuntime } from '../../e2e/support/live-server.ts';
import { createDatabase, type FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { definePolicies, liveQuery } from '../core/entries.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { clockInputs, isClockInput, rawClockInputs } from './clock-inputs.ts';

const schema = defineSchema({ tasks: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text(), due: t.timestamptz() }) });

type Db = Kysely<{ tasks: { id: string; title: string; due: string; tenant_id: string } }>;
const dueBefore = (db: Db, before: string) => db.selectFrom('tasks').select(['title']).where('due', '<', before).orderBy('title').execute();

function testApp(): AppDefinition {
  const entries = {
    liveDue: liveQuery({ args: { before: z.string() }, handler: (ctx, args) => dueBefore(ctx.db as unknown as Db, args.before) }),
    liveDueRefreshed: liveQuery({ args: { before: z.string() }, refreshMs: 1000, handler: (ctx, args) => dueBefore(ctx.db as unknown as Db, args.before) }),
    liveTitled: liveQuery({ args: { title: z.string() }, handler: (ctx, args) => (ctx.db as unknown as Db).selectFrom('tasks').select(['title']).where('title', '=', args.title).execute() }),
    liveToday: liveQuery({ handler: (ctx) => (ctx.db as unknown as Db).selectFrom('tasks').select(['title']).where(sql<boolean>`due::date >= 'today'::date`).execute() }),
    liveAge: liveQuery({ handler: (ctx) => (ctx.db as unknown as Db).selectFrom('tasks').select(['title']).where((eb) => eb(eb.fn('age', ['due']), '<', sql`interval '1 day'`)).execute() }),
  };
  return { entries: new Map(Object.entries(entries)), policies: definePolicies({}), schema };
}

describe('clock inputs', () => {
  it('knows the special date/time inputs that read the clock, and not the constants', () => {
    for (const value of ['now', ' NOW ', 'today', 'Tomorrow', 'yesterday', 'today 10:00', 'Today, 10:00', 'yesterday UTC']) expect(isClockInput(value), value).toBe(true);
    for (const value of ['epoch', 'infinity', '-infinity', '2090-01-01', 'known', 'nowhere', 'todays', 'x'.repeat(70) + ' now', 7, null]) expect(isClockInput(value), String(value)).toBe(false);
    expect(rawClockInputs(`due < 'now'::timestamptz and d >= date 'today' and age(due) > age(due, created) and title = 'nowhere''s'`)).toEqual(["'now'", "'today'", 'age(…)']);
  });

  it('finds them in parameters, except where a column that holds no date or time is compared', async () => {
    const db = (await createDatabase({ dataDir: 'memory://' })) as unknown as { admin: Db; close(): Promise<void> };
    try {
      const node = (query: { toOperationNode(): unknown }) => query.toOperationNode() as never;
      const q = db.admin.selectFrom('tasks').select('title');
      expect(clockInputs(node(q.where('due', '<', 'now')), schema)).toEqual(["'now'"]);
      expect(clockInputs(node(q.where('title', '=', 'today').where('title', 'in', ['now', 'x'])), schema)).toEqual([]);
      expect(clockInputs(node(q.where('due', 'in', ['2090-01-01', 'tomorrow'])), schema)).toEqual(["'tomorrow'"]);
      // Not compared with a known column: what PostgreSQL makes of it is unknown, so it counts.
      expect(clockInputs(node(q.where(sql<boolean>`${'yesterday'} < due`)), schema)).toEqual(["'yesterday'"]);
      expect(clockInputs(node(q.where((eb) => eb(eb.fn('age', ['due']), '>', sql`interval '1 day'`))), schema)).toEqual(['age(…)']);
      expect(clockInputs(node(q.where((eb) => eb(eb.fn('age', ['due', sql`'2001-01-01'`]), '>', sql`interval '1 day'`))), schema)).toEqual([]);
    } finally {
      await db.close();
    }
  });
});

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`clock inputs over HTTP (${target.name})`, () => {
    let db: FwDatabase;
    let runtime: LiveTestRuntime;
    let drop = async () => {};

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      await applyMigration(db, schema);
      runtime = await serveLiveRuntime(testApp(), db, { pollIntervalMs: 200 });
    });

    afterAll(async () => {
      await runtime?.close();
      await db?.close();
      await drop();
    });

    const member = () => {
      const tenantId = randomUUID();
      return { tenantId, headers: { 'x-fw-user-id': 'alice', 'x-fw-tenant-id': tenantId, 'x-fw-role': 'member' } };
    };
    const subscribe = (name: string, args: unknown, headers: Record<string, string>) => fetch(`${runtime.url}/live/${name}?args=${encodeURIComponent(JSON.stringify(args))}`, { headers });

    it("refuses a client's 'now', a literal 'today' and age(ts) without refreshMs; a fixed instant and a title 'today' are no clock", async () => {
      const alice = member();
      for (const [name, args, shown] of [
        ['liveDue', { before: 'now' }, "'now'"],
        ['liveDue', { before: 'tomorrow 09:00' }, "'tomorrow 09:00'"],
        ['liveToday', {}, "'today'"],
        ['liveAge', {}, 'age(…)'],
      ] as const) {
        const refused = await subscribe(name, args, alice.headers);
        // Before the body: an accepted subscription's body is a stream that never ends.
        expect(refused.status, `${name} ${JSON.stringify(args)}`).toBe(500);
        expect((await refused.json()).error.diagnostics).toEqual([{ path: `liveQuery.${name}`, code: 'clock_read', message: `reads the clock (${shown}) without refreshMs.` }]);
      }
      for (const [name, args] of [
        ['liveDue', { before: '2090-01-01T00:00:00Z' }],
        ['liveDue', { before: 'epoch' }],
        ['liveTitled', { title: 'today' }],
      ] as const) {
        const stream = await openEventStream(`${runtime.url}/live/${name}?args=${encodeURIComponent(JSON.stringify(args))}`, { headers: alice.headers });
        try {
          expect([stream.status, (await stream.next()).json.result]).toEqual([200, []]);
        } finally {
          stream.close();
        }
      }
    });

    it("with refreshMs, a task that becomes due before 'now' appears with no write", async () => {
      const alice = member();
      const stream = await openEventStream(`${runtime.url}/live/liveDueRefreshed?args=${encodeURIComponent(JSON.stringify({ before: 'now' }))}`, { headers: alice.headers });
      try {
        expect((await stream.next()).json.result).toEqual([]);
        // Written now, due a moment later: the write's own rerun does not show it yet.
        await sql`insert into tasks (title, tenant_id, due) values ('due soon', ${alice.tenantId}, now() + interval '1500 milliseconds')`.execute(db.admin);
        const due = await stream.nextWhere((event) => event.json.result?.length === 1, 15_000);
        expect(due.json.result).toEqual([{ title: 'due soon' }]);
      } finally {
        stream.close();
      }
    });
  });
}
