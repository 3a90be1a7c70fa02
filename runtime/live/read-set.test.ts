import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql, type OperationNode } from 'kysely';
import { describe, expect, it } from 'vitest';
import { defineSchema, t, table } from '../core/schema.ts';
import { createReadIndex } from './read-index.ts';
import { canonicalValue, createReadSetBuilder, describeReadSet, readSetMatches, type ReadSet } from './read-set.ts';

const schema = defineSchema({
  notes: table({
    id: t.uuid().primaryKey().defaultRandom(),
    author_id: t.uuid().nullable(),
    grp: t.integer(),
    n: t.bigint(),
    title: t.text(),
    done: t.boolean(),
    score: t.numeric(),
    created_at: t.timestamptz(),
  }),
  tags: table({ id: t.uuid().primaryKey().defaultRandom(), note_id: t.uuid(), label: t.text() }),
  authors: table({ id: t.uuid().primaryKey().defaultRandom(), name: t.text() }),
});

const db = new Kysely<any>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

const A = '7f3c1e2a-0000-4000-8000-000000000001';

function readSetOf(...queries: Array<{ toOperationNode(): OperationNode }>): Record<string, string[]> {
  const builder = createReadSetBuilder(schema);
  for (const query of queries) builder.addStatement(query.toOperationNode());
  return describeReadSet(builder.build());
}

describe('read sets from query shapes', () => {
  const cases: Array<[string, () => Array<{ toOperationNode(): OperationNode }>, Record<string, string[]>]> = [
    ['equality', () => [db.selectFrom('notes').selectAll().where('grp', '=', 3)], { notes: ['grp = "3"'] }],
    ['equality with the constant first', () => [db.selectFrom('notes').selectAll().where(sql.val(3) as any, '=', sql.ref('grp'))], { notes: ['all'] }],
    ['IN, IS NULL, a range, AND-ed', () => [db.selectFrom('notes').selectAll().where('grp', 'in', [1, 2]).where('author_id', 'is', null).where('n', '>=', 10).where('n', '<', 20)], { notes: ['grp in ("1", "2") and author_id = null and n in 10.. and n in ..19'] }],
    ['OR of equalities on one column becomes IN', () => [db.selectFrom('notes').selectAll().where((eb) => eb.or([eb('grp', '=', 1), eb('grp', '=', 2)]))], { notes: ['grp in ("1", "2")'] }],
    ['OR across columns: dropped', () => [db.selectFrom('notes').selectAll().where((eb) => eb.or([eb('grp', '=', 1), eb('title', '=', 'x')]))], { notes: ['all'] }],
    ['NOT: dropped', () => [db.selectFrom('notes').selectAll().where((eb) => eb.not(eb('grp', '=', 1)))], { notes: ['all'] }],
    ['<> and IS NOT NULL: dropped', () => [db.selectFrom('notes').selectAll().where('grp', '<>', 1).where('author_id', 'is not', null)], { notes: ['all'] }],
    ['a function of a column: dropped', () => [db.selectFrom('notes').selectAll().where((eb) => eb(eb.fn('lower', ['title']), '=', 'x'))], { notes: ['all'] }],
    ['a raw fragment: dropped, the rest kept', () => [db.selectFrom('notes').selectAll().where(sql<boolean>`true`).where('grp', '=', 1)], { notes: ['grp = "1"'] }],
    ['uncaptured kinds (numeric, timestamptz): dropped', () => [db.selectFrom('notes').selectAll().where('score', '=', '1.5').where('created_at', '>', '2026-01-01')], { notes: ['all'] }],
    ['a range on text: dropped', () => [db.selectFrom('notes').selectAll().where('title', '>', 'm')], { notes: ['all'] }],
    ['= null is never true: dropped', () => [db.selectFrom('notes').selectAll().where('author_id', '=', null as any)], { notes: ['all'] }],
    ['uuid, text and boolean values in their canonical form', () => [db.selectFrom('notes').selectAll().where('author_id', '=', A.toUpperCase()).where('title', '=', 'Ab').where('done', '=', true)], { notes: [`author_id = "${A}" and title = "Ab" and done = "true"`] }],
    [
      'inner join: each table gets its own conditions (ON and WHERE), an alias resolves',
      () => [db.selectFrom('notes as n').innerJoin('tags', (j) => j.onRef('tags.note_id', '=', 'n.id').on('tags.label', '=', 'urgent')).select('n.id').where('n.grp', '=', 2)],
      { notes: ['grp = "2"'], tags: ['label = "urgent"'] },
    ],
    [
      'left join: the joined table keeps only its ON conditions (a WHERE IS NULL may be an anti-join)',
      () => [db.selectFrom('notes').leftJoin('tags', (j) => j.onRef('tags.note_id', '=', 'notes.id').on('tags.label', '=', 'x')).selectAll('notes').where('notes.grp', '=', 1).where('tags.id', 'is', null)],
      { notes: ['grp = "1"'], tags: ['label = "x"'] },
    ],
    ['left join ON conditions on the preserved table: dropped', () => [db.selectFrom('notes').leftJoin('tags', (j) => j.onRef('tags.note_id', '=', 'notes.id').on('notes.grp', '=', 1)).selectAll('notes')], { notes: ['all'], tags: ['all'] }],
    ['right and full joins: every table of the SELECT read whole', () => [db.selectFrom('notes').rightJoin('tags', 'tags.note_id', 'notes.id').selectAll().where('notes.grp', '=', 1).where('tags.label', '=', 'x')], { notes: ['all'], tags: ['all'] }],
    [
      'a correlated NOT EXISTS: the subquery keeps its own conditions, not the outer table\'s',
      () => [db.selectFrom('notes').selectAll().where('grp', '=', 4).where((eb) => eb.not(eb.exists(eb.selectFrom('tags').select('tags.id').whereRef('tags.note_id', '=', 'notes.id').where('tags.label', '=', 'done').where('notes.title', '=', 'z'))))],
      { notes: ['grp = "4"'], tags: ['label = "done"'] },
    ],
    ['IN (subquery)', () => [db.selectFrom('notes').selectAll().where('id', 'in', db.selectFrom('tags').select('note_id').where('label', '=', 'a'))], { notes: ['all'], tags: ['label = "a"'] }],
    ['unqualified column of a join: resolved by the schema when only one table has it', () => [db.selectFrom('notes').innerJoin('tags', 'tags.note_id', 'notes.id').selectAll().where('label', '=', 'a').where('id', '=', A)], { notes: ['all'], tags: ['label = "a"'] }],
    ['a subquery in FROM: its table keeps its conditions, columns of the derived table are dropped', () => [db.selectFrom(db.selectFrom('notes').selectAll().where('grp', '=', 1).as('s')).selectAll().where('s.title', '=', 'x')], { notes: ['grp = "1"'] }],
    ['a CTE body is a SELECT of its own', () => [db.with('recent', (q) => q.selectFrom('notes').selectAll().where('grp', '=', 7)).selectFrom('recent').selectAll()], { notes: ['grp = "7"'], recent: ['all'] }],
    ['aggregates and ORDER BY … LIMIT keep the WHERE', () => [db.selectFrom('notes').select((eb) => eb.fn.countAll().as('c')).where('grp', '=', 1).groupBy('title').having((eb) => eb.fn.countAll(), '>', 1).orderBy('title').limit(3)], { notes: ['grp = "1"'] }],
    ['UNION: each branch by itself', () => [db.selectFrom('notes').select('id').where('grp', '=', 1).union(db.selectFrom('notes').select('id').where('grp', '=', 2))], { notes: ['grp = "1"', 'grp = "2"'] }],
    ['two statements of one run: OR-ed accesses', () => [db.selectFrom('notes').selectAll().where('grp', '=', 1), db.selectFrom('authors').selectAll().where('id', '=', A)], { notes: ['grp = "1"'], authors: [`id = "${A}"`] }],
    ['one whole read absorbs the others', () => [db.selectFrom('notes').selectAll().where('grp', '=', 1), db.selectFrom('notes').selectAll()], { notes: ['all'] }],
    ['a table of another schema is not a captured table', () => [db.selectFrom('auth.users').selectAll().where('id', '=', 1)], {}],
  ];

  it.each(cases)('%s', (_name, queries, expected) => {
    expect(readSetOf(...queries())).toEqual(expected);
  });

  it('many values of IN drop the condition', () => {
    expect(readSetOf(db.selectFrom('notes').selectAll().where('grp', 'in', Array.from({ length: 40 }, (_, i) => i)))).toEqual({ notes: ['all'] });
  });
});

describe('canonical values', () => {
  it.each([
    ['integer', 7, '7'],
    ['integer', '007', '7'],
    ['bigint', 2n ** 62n, '4611686018427387904'],
    ['integer', 1.5, undefined],
    ['uuid', `{${A.replaceAll('-', '').toUpperCase()}}`, A],
    ['uuid', 'not-a-uuid', undefined],
    ['text', 'Ab ', 'Ab '],
    ['text', 3, undefined],
    ['boolean', false, 'false'],
    ['boolean', 'yes', undefined],
    ['timestamptz', '2026-01-01', undefined],
  ] as const)('%s %s → %s', (kind, value, expected) => {
    expect(canonicalValue(kind, value)).toBe(expected);
  });
});

describe('matching a change against a read set', () => {
  const grpOne: ReadSet = new Map([['notes', [{ conditions: [{ column: 'grp', kind: 'in', values: new Set(['1']) }] }]]]);
  it('by old or new values, any value, and no capture at all', () => {
    expect(readSetMatches(grpOne.get('notes'), { grp: ['2', '1'] })).toBe(true);
    expect(readSetMatches(grpOne.get('notes'), { grp: ['2'] })).toBe(false);
    expect(readSetMatches(grpOne.get('notes'), { grp: null })).toBe(true);
    expect(readSetMatches(grpOne.get('notes'), { title: ['x'] })).toBe(true);
    expect(readSetMatches(grpOne.get('notes'), null)).toBe(true);
    expect(readSetMatches(grpOne.get('tags'), null)).toBe(false);
  });

  it('ranges compare as integers; IS NULL matches a null image', () => {
    const range: ReadSet = new Map([['notes', [{ conditions: [{ column: 'n', kind: 'range', min: 10n, max: 19n }] }]]]);
    expect(readSetMatches(range.get('notes'), { n: ['9', '20'] })).toBe(false);
    expect(readSetMatches(range.get('notes'), { n: ['19'] })).toBe(true);
    expect(readSetMatches(range.get('notes'), { n: [null] })).toBe(false);
    const isNull: ReadSet = new Map([['notes', [{ conditions: [{ column: 'author_id', kind: 'in', values: new Set([null]) }] }]]]);
    expect(readSetMatches(isNull.get('notes'), { author_id: [A] })).toBe(false);
    expect(readSetMatches(isNull.get('notes'), { author_id: [A, null] })).toBe(true);
  });

  it('the index finds exactly the groups a change concerns, by tenant, value, whole table and range', () => {
    const index = createReadIndex<string>();
    const T1 = '00000000-0000-4000-8000-000000000001';
    const T2 = '00000000-0000-4000-8000-000000000002';
    for (let g = 0; g < 1000; g++) index.set(`g${g}`, T1, new Map([['notes', [{ conditions: [{ column: 'grp', kind: 'in', values: new Set([String(g)]) }] }]]]));
    index.set('other-tenant', T2, new Map([['notes', [{ conditions: [{ column: 'grp', kind: 'in', values: new Set(['5']) }] }]]]));
    index.set('whole', T1, new Map([['notes', [{ conditions: [] }]]]));
    index.set('range', T1, new Map([['notes', [{ conditions: [{ column: 'n', kind: 'range', min: 100n }] }]]]));
    const match = (tenantId: string | null, changes: Record<string, Array<string | null> | null> | null) => [...index.match({ table: 'notes', tenantId, changes })].sort();
    expect(match(T1, { grp: ['5'], n: ['1'] })).toEqual(['g5', 'whole']);
    expect(match(T1, { grp: ['5', '6'], n: ['100'] })).toEqual(['g5', 'g6', 'range', 'whole']);
    expect(match(T2, { grp: ['5'], n: ['1'] })).toEqual(['other-tenant']);
    expect(match(null, { grp: ['5'], n: ['1'] })).toEqual(['g5', 'other-tenant', 'whole']);
    expect(match(T1, { grp: null, n: ['1'] })).toHaveLength(1001);
    expect(match(T1, null)).toHaveLength(1002);
    expect([...index.match({ table: 'tags', tenantId: T1, changes: null })]).toEqual([]);
    index.delete('g5');
    expect(match(T1, { grp: ['5'], n: ['1'] })).toEqual(['whole']);
  });
});
