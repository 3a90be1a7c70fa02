import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type LiveTestRuntime, openEventStream, serveLiveRuntime } from '../../e2e/support/live-server.ts';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import { until } from '../../e2e/support/until.ts';
import type { FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { liveQuery } from '../core/entries.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { logBounds } from './log.ts';

/**
 * Shapes that span columns or tables, kept precisely (docs/live.md, "Which writes rerun a live query"):
 * an OR across columns, a condition on the far side of an equi-join, correlated EXISTS and NOT EXISTS,
 * and the LEFT JOIN … IS NULL anti-join. For each, on PGlite and PostgreSQL: writes it cannot see rerun
 * nothing (the group's run count is unchanged once the hub has read past them), and every write it can
 * see sends the frame a fresh run returns.
 */
const schema = defineSchema({
  projects: table({ id: t.uuid().primaryKey().defaultRandom(), code: t.integer(), label: t.text(), state: t.text() }),
  tasks: table({ id: t.uuid().primaryKey().defaultRandom(), project_code: t.integer(), label: t.text(), prio: t.integer(), state: t.text() }),
});

type Db = Kysely<any>;
/** A write in one tenant: SQL over the owner connection (as a migration, a script or another service would). */
type Write = (db: Db, tenantId: string) => Promise<unknown>;

const task = (label: string, projectCode: number, prio: number, state: string): Write => (db, tenantId) =>
  sql`insert into tasks (tenant_id, label, project_code, prio, state) values (${tenantId}, ${label}, ${projectCode}, ${prio}, ${state})`.execute(db);
const project = (label: string, code: number, state = 'active'): Write => (db, tenantId) =>
  sql`insert into projects (tenant_id, label, code, state) values (${tenantId}, ${label}, ${code}, ${state})`.execute(db);
const update = (table: 'tasks' | 'projects', label: string, column: string, value: unknown): Write => (db, tenantId) =>
  sql`update ${sql.table(table)} set ${sql.ref(column)} = ${value} where tenant_id = ${tenantId} and label = ${label}`.execute(db);
const remove = (table: 'tasks' | 'projects', label: string): Write => (db, tenantId) => sql`delete from ${sql.table(table)} where tenant_id = ${tenantId} and label = ${label}`.execute(db);

interface Shape {
  query: (db: Db) => Promise<Array<{ label: string }>>;
  readSet: Record<string, string[]>;
  /** Rows there before the subscription, and the labels it answers first. */
  setup: Write[];
  initial: string[];
  /** Writes no row of which the query can read: none reruns it. */
  outside: Write[];
  /** Writes it reads, each with the labels it must answer after it. */
  inside: Array<[Write, string[]]>;
}

const SHAPES: Record<string, Shape> = {
  orAcrossColumns: {
    query: (db) => db.selectFrom('tasks').select('label').where('project_code', '=', 1).where((eb) => eb.or([eb('prio', '=', 1), eb('state', '=', 'urgent')])).execute(),
    readSet: { tasks: ['project_code = "1" and prio = "1"', 'project_code = "1" and state = "urgent"'] },
    setup: [],
    initial: [],
    outside: [task('o1', 1, 2, 'calm'), task('o2', 2, 1, 'urgent'), update('tasks', 'o1', 'prio', 3)],
    inside: [
      [task('i1', 1, 1, 'calm'), ['i1']],
      [task('i2', 1, 3, 'urgent'), ['i1', 'i2']],
      [update('tasks', 'o1', 'state', 'urgent'), ['i1', 'i2', 'o1']],
      [update('tasks', 'i1', 'prio', 2), ['i2', 'o1']],
    ],
  },
  farSideOfJoin: {
    query: (db) =>
      db.selectFrom('tasks').innerJoin('projects', 'projects.code', 'tasks.project_code').select('tasks.label').where('projects.code', '=', 1).where('projects.state', '=', 'active').execute(),
    readSet: { projects: ['code = "1" and state = "active"'], tasks: ['project_code = "1"'] },
    setup: [project('p1', 1), project('p2', 2)],
    initial: [],
    outside: [task('o1', 2, 1, 'open'), project('p3', 3), update('tasks', 'o1', 'prio', 2)],
    inside: [
      [task('i1', 1, 1, 'open'), ['i1']],
      [update('tasks', 'o1', 'project_code', 1), ['i1', 'o1']],
      [update('projects', 'p1', 'state', 'closed'), []],
    ],
  },
  correlatedExists: {
    query: (db) =>
      db
        .selectFrom('projects')
        .select('label')
        .where('code', '=', 1)
        .where((eb) => eb.exists(eb.selectFrom('tasks').select('tasks.id').whereRef('tasks.project_code', '=', 'projects.code').where('tasks.state', '=', 'open')))
        .execute(),
    readSet: { projects: ['code = "1"'], tasks: ['state = "open" and project_code = "1"'] },
    setup: [project('p1', 1), project('p2', 2)],
    initial: [],
    outside: [task('o1', 2, 1, 'open'), task('o2', 1, 1, 'done'), update('tasks', 'o1', 'prio', 3)],
    inside: [
      [task('i1', 1, 1, 'open'), ['p1']],
      [remove('tasks', 'i1'), []],
      [update('tasks', 'o2', 'state', 'open'), ['p1']],
    ],
  },
  antiJoinNotExists: {
    query: (db) =>
      db
        .selectFrom('projects')
        .select('label')
        .where('code', '=', 1)
        .where((eb) => eb.not(eb.exists(eb.selectFrom('tasks').select('tasks.id').whereRef('tasks.project_code', '=', 'projects.code').where('tasks.state', '=', 'open'))))
        .execute(),
    readSet: { projects: ['code = "1"'], tasks: ['state = "open" and project_code = "1"'] },
    setup: [project('p1', 1), project('p2', 2)],
    initial: ['p1'],
    outside: [task('o1', 2, 1, 'open'), task('o2', 1, 1, 'done')],
    inside: [
      [task('i1', 1, 1, 'open'), []],
      [update('tasks', 'i1', 'project_code', 2), ['p1']],
    ],
  },
  antiJoinLeftJoin: {
    query: (db) =>
      db.selectFrom('projects').leftJoin('tasks', 'tasks.project_code', 'projects.code').select('projects.label').where('projects.code', '=', 1).where('tasks.id', 'is', null).execute(),
    readSet: { projects: ['code = "1"'], tasks: ['project_code = "1"'] },
    setup: [project('p1', 1), project('p2', 2)],
    initial: ['p1'],
    outside: [task('o1', 2, 1, 'open'), update('tasks', 'o1', 'state', 'done')],
    inside: [
      [task('i1', 1, 1, 'open'), []],
      [remove('tasks', 'i1'), ['p1']],
    ],
  },
};

function testApp(): AppDefinition {
  const entries = {
    shape: liveQuery({
      args: { shape: z.string() },
      handler: async (ctx, args) => (await SHAPES[args.shape]!.query(ctx.db as Db)).map((row) => row.label).sort(),
    }),
  };
  return { entries: new Map(Object.entries(entries)), policies: {}, schema };
}

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`live queries across columns and tables, kept precisely (${target.name})`, () => {
    let db: FwDatabase;
    let runtime: LiveTestRuntime;
    let drop = async () => {};

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      await applyMigration(db, schema);
      runtime = await serveLiveRuntime(testApp(), db, { pollIntervalMs: 100, safetyPollIntervalMs: 600_000 });
    });

    afterAll(async () => {
      await runtime?.close();
      await db?.close();
      await drop();
    });

    const groupOf = (tenantId: string, shape: string) =>
      runtime.hub
        .status()
        .liveQueries.find((q) => q.name === 'shape')
        ?.groupList.find((group) => group.tenantId === tenantId && JSON.stringify(group.args) === JSON.stringify({ shape }));
    /** The hub has read every log row written so far: a rerun those rows caused has begun. */
    const caughtUp = async () => {
      const { latestRevision } = await logBounds(db.admin);
      await until(async () => runtime.hub.status().revision >= latestRevision, `the live reader to read revision ${latestRevision}`);
    };

    for (const [name, shape] of Object.entries(SHAPES)) {
      it(`${name}: writes it cannot see rerun nothing; each write it can see sends the new answer`, async () => {
        // A tenant of its own: the test owns every row and group it sees.
        const tenantId = randomUUID();
        const headers = { 'x-fw-user-id': `u-${randomUUID()}`, 'x-fw-tenant-id': tenantId, 'x-fw-role': 'member' };
        for (const write of shape.setup) await write(db.admin, tenantId);
        const stream = await openEventStream(`${runtime.url}/live/shape?args=${encodeURIComponent(JSON.stringify({ shape: name }))}`, { headers });
        try {
          const first = await stream.next();
          const idle = () => until(async () => runtime.hub.debug(first.json.subscriptionId)?.group.running === false, 'the group to be idle');
          expect(first.json.result).toEqual(shape.initial);
          expect(groupOf(tenantId, name)?.readSet).toEqual(shape.readSet);
          await idle();
          const before = groupOf(tenantId, name)!.runs;
          for (const write of shape.outside) await write(db.admin, tenantId);
          await caughtUp();
          await idle();
          expect(groupOf(tenantId, name)!.runs).toBe(before);
          for (const [i, [write, expected]] of shape.inside.entries()) {
            await write(db.admin, tenantId);
            const frame = await stream.next();
            expect(frame.json.result, `after inside write ${i}`).toEqual(expected);
          }
          await caughtUp();
          await idle();
          // One run per write it can see, none for the others.
          expect(groupOf(tenantId, name)!.runs).toBe(before + shape.inside.length);
        } finally {
          stream.close();
        }
      });
    }
  });
}
