import { randomUUID } from 'node:crypto';
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import type { FwDatabase } from '../db/database.ts';
import { prefetchStatements, statementKey, withRowPosition } from './multiplex.ts';

/**
 * Multiplexed statements answer exactly what each statement answers alone, rows in the same order:
 * the position of a row is computed inside its statement from that statement's own ORDER BY
 * (`withRowPosition`), never taken from the order a subquery happens to hand its rows on in.
 */
for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`multiplexed statements (${target.name})`, () => {
    let db: FwDatabase;
    let drop = async () => {};
    let k: Kysely<any>;
    const table = `mx_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      k = db.admin;
      await sql.raw(`create table ${table} (id int primary key, title text, body text, board int, score numeric)`).execute(k);
      await sql.raw(`insert into ${table} select i, 'title ' || (i % 7), 'body ' || (100 - i), i % 3, case when i % 5 = 0 then null else (i * 37) % 11 end from generate_series(1, 60) as i`).execute(k);
    });

    afterAll(async () => {
      await db?.close();
      await drop();
    });

    /** The statements sent as one, against each run alone. */
    async function expectSameAsAlone(...queries: Array<{ toOperationNode(): any; compile(): CompiledQuery }>) {
      const nodes = queries.map((query) => query.toOperationNode());
      const prefetched = await prefetchStatements(k, nodes);
      for (const [i, query] of queries.entries()) {
        const alone = await k.executeQuery(query.compile());
        const key = statementKey(query.compile());
        expect(prefetched[i]!.get(key)!.rows).toEqual(alone.rows);
      }
    }

    it('keeps each statement’s ORDER BY: directions, NULLS LAST, expressions, LIMIT and OFFSET, distinct parameters', async () => {
      const byScore = (board: number) =>
        k.selectFrom(table).select(['id', 'score']).where('board', '=', board).orderBy('score', (o) => o.desc().nullsLast()).orderBy('id').limit(7).offset(2);
      await expectSameAsAlone(byScore(0), byScore(1), byScore(2));
      const byExpression = (board: number) => k.selectFrom(table).select(['id']).where('board', '=', board).orderBy(sql`length(body) * -1`).orderBy('id', 'desc');
      await expectSameAsAlone(byExpression(0), byExpression(2));
    });

    it('an ORDER BY name that is an output alias is ordered by the aliased expression, as PostgreSQL orders the statement', async () => {
      // `title` in ORDER BY is the output column (the input's body); in a window it would be the input's title.
      const swapped = (board: number) => k.selectFrom(table).select(['id', 'title as body', 'body as title']).where('board', '=', board).orderBy('title').orderBy('id');
      await expectSameAsAlone(swapped(0), swapped(1));
      const counted = (min: number) =>
        k.selectFrom(table).select(['board', (eb) => eb.fn.countAll<string>().as('n')]).where('id', '>', min).groupBy('board').orderBy('n', 'desc').orderBy('board');
      await expectSameAsAlone(counted(0), counted(40));
    });

    it('refuses what a position column would change or what a window cannot restate; nothing refused fails', async () => {
      expect(withRowPosition(k.selectFrom(table).select(['board']).distinct().toOperationNode())).toBeUndefined();
      expect(withRowPosition(k.selectFrom(table).select(['id']).union(k.selectFrom(table).select(['id'])).toOperationNode())).toBeUndefined();
      expect(withRowPosition(k.selectFrom(table).select(['id']).orderBy(sql`1`).toOperationNode())).toBeUndefined();
      expect(withRowPosition(k.selectFrom(table).select(['id', (eb) => sql<number>`rank() over (order by ${eb.ref('score')})`.as('r')]).orderBy('r').toOperationNode())).toBeUndefined();
      expect(withRowPosition(k.selectFrom(table).select(['id']).forUpdate().toOperationNode())).toBeUndefined();
      // No ORDER BY: any order is the statement's answer; the rows are the same.
      const unordered = (board: number) => k.selectFrom(table).select(['id']).where('board', '=', board);
      const [first] = await prefetchStatements(k, [unordered(1).toOperationNode(), unordered(2).toOperationNode()]);
      const alone = await unordered(1).execute();
      expect([...first!.values()][0]!.rows.map((row: any) => row.id).sort()).toEqual(alone.map((row) => row.id).sort());
    });
  });
}
