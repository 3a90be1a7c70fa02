import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { createReadRecorder } from './read-recorder.ts';

const schema = defineSchema({
  notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text(), author_id: t.uuid().nullable() }),
  authors: table({ id: t.uuid().primaryKey().defaultRandom(), name: t.text() }),
  tags: table({ id: t.uuid().primaryKey().defaultRandom(), note_id: t.uuid(), label: t.text() }),
});

const auth = { kind: 'user' as const, userId: 'u', tenantId: '00000000-0000-4000-8000-000000000001', role: 'member' };

describe('the live read recorder', () => {
  let db: FwDatabase;
  beforeAll(async () => {
    db = await createDatabase();
    await applyMigration(db, schema);
  });
  afterAll(() => db.close());

  async function record(fn: (trx: any) => Promise<unknown>) {
    const recorder = createReadRecorder();
    await db.transaction({ readOnly: true, auth, plugins: [recorder] }, fn);
    return { tables: [...recorder.tables].sort(), raw: recorder.rawStatements, cteNames: [...recorder.cteNames], otherSchemaTables: [...recorder.otherSchemaTables] };
  }

  it('finds tables in joins, aliases and subqueries', async () => {
    const result = await record((trx) =>
      trx
        .selectFrom('notes as n')
        .leftJoin('authors', 'authors.id', 'n.author_id')
        .select((eb: any) => ['n.title', eb.selectFrom('tags').select(eb.fn.countAll().as('c')).whereRef('tags.note_id', '=', 'n.id').as('tag_count')])
        .execute(),
    );
    expect(result).toEqual({ tables: ['authors', 'notes', 'tags'], raw: 0, cteNames: [], otherSchemaTables: [] });
  });

  it('finds tables in where-exists subqueries and CTEs', async () => {
    const result = await record((trx) =>
      trx
        .with('recent', (qb: any) => qb.selectFrom('notes').select('id'))
        .selectFrom('recent')
        .where((eb: any) => eb.exists(eb.selectFrom('tags').select('id').whereRef('tags.note_id', '=', 'recent.id')))
        .selectAll()
        .execute(),
    );
    // `recent` is read as a FROM too; the CTE names tell the hub it is not a relation of its own.
    expect(result).toEqual({ tables: ['notes', 'recent', 'tags'], raw: 0, cteNames: ['recent'], otherSchemaTables: [] });
  });

  it('counts raw statements, whose tables it cannot see', async () => {
    const result = await record((trx) => sql`select count(*) from notes`.execute(trx));
    expect(result).toEqual({ tables: [], raw: 1, cteNames: [], otherSchemaTables: [] });
  });

  it('keeps tables of another schema apart: fw captures writes to public tables only', async () => {
    const result = await record((trx) => trx.selectFrom('information_schema.tables').select('table_name').limit(1).execute());
    expect(result).toEqual({ tables: [], raw: 0, cteNames: [], otherSchemaTables: ['information_schema.tables'] });
  });
});
