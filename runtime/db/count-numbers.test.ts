/**
 * Kysely's count aggregates in `ctx.db` come back as numbers (count-numbers.ts), on PGlite and on
 * PostgreSQL, through every kind of transaction a handler gets: a query's, a liveQuery's, a command's.
 * Everything else int8 keeps coming back exactly, as a string: a bigint column, a count in raw `sql`.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import { openEventStream, serveLiveRuntime, type LiveTestRuntime } from '../../e2e/support/live-server.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { command, definePolicies, liveQuery, query } from '../core/entries.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import type { FwDatabase } from './database.ts';
import { applyMigration } from './migrate.ts';

const schema = defineSchema({
  items: table({ id: t.uuid().primaryKey().defaultRandom(), kind: t.text(), label: t.text().nullable(), big: t.bigint() }),
});

/** Every way to count the caller's items, and a bigint column beside them. */
const tally = async (db: any) => ({
  counts: await db
    .selectFrom('items')
    .select((eb: any) => [
      eb.fn.countAll().as('all'),
      eb.fn.count('label').as('labelled'),
      eb.fn.count('kind').distinct().as('kinds'),
      eb.fn.countAll().filterWhere('kind', '=', 'a').as('a'),
      eb.selectFrom('items as inner').select((e: any) => e.fn.countAll().as('n')).where('inner.kind', '=', 'b').as('b'),
      sql<string>`count(*)`.as('raw'),
      eb.fn.max('big').as('max_big'),
    ])
    .executeTakeFirstOrThrow(),
  byKind: await db.selectFrom('items').select((eb: any) => ['kind', eb.fn.countAll().over().as('total'), eb.fn.countAll().as('n')]).groupBy('kind').orderBy('kind').execute(),
  bigs: (await db.selectFrom('items').select('big').orderBy('big').execute()).map((row: any) => row.big),
  // Counts by name (eb.fn, eb.fn.agg); a union of counts, and one of a count with a bigint column; a count read back through a CTE.
  named: await db.selectFrom('items').select((eb: any) => [eb.fn('count', [eb.ref('label')]).as('fn'), eb.fn.agg('count', [eb.ref('kind')]).as('agg')]).executeTakeFirstOrThrow(),
  unions: (
    await db
      .selectFrom('items')
      .select((eb: any) => eb.fn.countAll().as('n'))
      .where('kind', '=', 'a')
      .unionAll(db.selectFrom('items').select((eb: any) => eb.fn.countAll().as('n')).where('kind', '=', 'b'))
      .execute()
  )
    .map((row: any) => row.n)
    .sort(),
  mixed: (await db.selectFrom('items').select((eb: any) => eb.fn.countAll().as('n')).unionAll(db.selectFrom('items').select('big as n').where('kind', '=', 'b')).execute()).map((row: any) => row.n).sort(),
  viaCte: (await db.with('c', (w: any) => w.selectFrom('items').select((eb: any) => eb.fn.countAll().as('n'))).selectFrom('c').select('n').executeTakeFirstOrThrow()).n,
});

function testApp(): AppDefinition {
  const entries = {
    add: command({
      args: { kind: z.string(), label: z.string().nullable(), big: z.string() },
      handler: async (ctx, a) => {
        await ctx.db.insertInto('items').values(a).execute();
        return ctx.db.selectFrom('items').select((eb) => eb.fn.countAll<number>().as('now')).executeTakeFirstOrThrow();
      },
    }),
    tally: query({ handler: (ctx) => tally(ctx.db) }),
    liveTally: liveQuery({ handler: (ctx) => tally(ctx.db) }),
  };
  return { entries: new Map(Object.entries(entries)), policies: definePolicies({}), schema };
}

const expectedTally = {
  counts: { all: 3, labelled: 2, kinds: 2, a: 2, b: 1, raw: '3', max_big: '9007199254740993' },
  byKind: [
    { kind: 'a', total: 2, n: 2 },
    { kind: 'b', total: 2, n: 1 },
  ],
  bigs: ['-5', '7', '9007199254740993'],
  named: { fn: 2, agg: 3 },
  unions: [1, 2],
  mixed: ['3', '7'],
  viaCte: '3',
};

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`count aggregates in ctx.db are numbers (${target.name})`, () => {
    let db: FwDatabase;
    let runtime: LiveTestRuntime;
    let drop = async () => {};

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      await applyMigration(db, testApp().schema);
      runtime = await serveLiveRuntime(testApp(), db, { pollIntervalMs: 100 });
    });
    afterAll(async () => {
      await runtime?.close();
      await db?.close();
      await drop();
    });

    /** A tenant of its own holding three items, and the headers of a user in it. */
    async function tenantWithItems(): Promise<Record<string, string>> {
      const headers = { 'x-fw-user-id': 'u1', 'x-fw-tenant-id': randomUUID(), 'content-type': 'application/json' };
      const nows: unknown[] = [];
      for (const args of [
        { kind: 'a', label: 'first', big: '9007199254740993' },
        { kind: 'a', label: null, big: '-5' },
        { kind: 'b', label: 'third', big: '7' },
      ]) {
        const response = await fetch(`${runtime.url}/commands/add`, { method: 'POST', headers, body: JSON.stringify({ args }) });
        expect(response.status).toBe(200);
        nows.push(((await response.json()) as any).result.now);
      }
      // A command's count, read in its own transaction after its insert.
      expect(nows).toEqual([1, 2, 3]);
      return headers;
    }

    it('a query answers its counts as numbers; a bigint column and a count in raw sql stay exact strings', async () => {
      const headers = await tenantWithItems();
      const response = await fetch(`${runtime.url}/queries/tally`, { method: 'POST', headers, body: JSON.stringify({ args: {} }) });
      expect(response.status).toBe(200);
      expect(((await response.json()) as any).result).toEqual(expectedTally);
    });

    it('a liveQuery answers its counts as numbers, first run and rerun', async () => {
      const headers = await tenantWithItems();
      const stream = await openEventStream(`${runtime.url}/live/liveTally?args=${encodeURIComponent('{}')}`, { headers });
      try {
        expect((await stream.next()).json.result).toEqual(expectedTally);
        const added = await fetch(`${runtime.url}/commands/add`, { method: 'POST', headers, body: JSON.stringify({ args: { kind: 'c', label: null, big: '0' } }) });
        expect(added.status).toBe(200);
        const rerun = await stream.nextWhere((event) => event.json?.result?.counts?.all !== 3);
        expect(rerun.json.result.counts).toEqual({ all: 4, labelled: 2, kinds: 3, a: 2, b: 1, raw: '4', max_big: '9007199254740993' });
        expect(rerun.json.result.byKind).toEqual([
          { kind: 'a', total: 3, n: 2 },
          { kind: 'b', total: 3, n: 1 },
          { kind: 'c', total: 3, n: 1 },
        ]);
      } finally {
        stream.close();
      }
    });
  });
}
