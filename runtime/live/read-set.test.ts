import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql, type OperationNode } from 'kysely';
import { describe, expect, it } from 'vitest';
import { defineSchema, t, table } from '../core/schema.ts';
import { createReadIndex } from './read-index.ts';
import { canonicalValue, createReadSetBuilder, describeReadSet, readSetMatches, type ReadSet } from './read-set.ts';
import { textSemanticsOf, type TextSemantics } from './text-semantics.ts';
import { compareValues, orderedConstant } from './value-order.ts';

const schema = defineSchema({
  notes: table({
    id: t.uuid().primaryKey().defaultRandom(),
    author_id: t.uuid().nullable(),
    grp: t.integer(),
    n: t.bigint(),
    title: t.text(),
    done: t.boolean(),
    stage: t.enum(['draft', 'open', 'review', 'closed']),
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
  return readSetUnder(undefined, ...queries);
}

/** A database of collation C and character classes C (PGlite's order; ASCII case folding for every string). */
const C_DATABASE: TextSemantics = { ...textSemanticsOf('c', 'C', 'C', undefined), ownCollation: new Set() };

function readSetUnder(text: TextSemantics | undefined, ...queries: Array<{ toOperationNode(): OperationNode }>): Record<string, string[]> {
  const builder = createReadSetBuilder(schema, text);
  for (const query of queries) builder.addStatement(query.toOperationNode());
  return describeReadSet(builder.build());
}

describe('read sets from query shapes', () => {
  const cases: Array<[string, () => Array<{ toOperationNode(): OperationNode }>, Record<string, string[]>]> = [
    ['equality', () => [db.selectFrom('notes').selectAll().where('grp', '=', 3)], { notes: ['grp = "3"'] }],
    ['equality with the constant first', () => [db.selectFrom('notes').selectAll().where(sql.val(3) as any, '=', sql.ref('grp'))], { notes: ['all'] }],
    ['IN, IS NULL, a range, AND-ed', () => [db.selectFrom('notes').selectAll().where('grp', 'in', [1, 2]).where('author_id', 'is', null).where('n', '>=', 10).where('n', '<', 20)], { notes: ['grp in ("1", "2") and author_id = null and n in 10.. and n in ..19'] }],
    ['OR of equalities on one column becomes IN', () => [db.selectFrom('notes').selectAll().where((eb) => eb.or([eb('grp', '=', 1), eb('grp', '=', 2)]))], { notes: ['grp in ("1", "2")'] }],
    ['OR across columns: one access per branch', () => [db.selectFrom('notes').selectAll().where((eb) => eb.or([eb('grp', '=', 1), eb('title', '=', 'x')]))], { notes: ['grp = "1"', 'title = "x"'] }],
    [
      'OR of ANDs beside other conditions: each branch AND the rest; what a branch cannot keep is dropped from it',
      () => [db.selectFrom('notes').selectAll().where('done', '=', true).where((eb) => eb.or([eb.and([eb('grp', '=', 1), eb('title', '=', 'a'), sql<boolean>`true`]), eb('n', '>', 5)]))],
      { notes: ['done = "true" and grp = "1" and title = "a"', 'done = "true" and n in 6..'] },
    ],
    ['OR with a branch fw cannot keep: dropped', () => [db.selectFrom('notes').selectAll().where((eb) => eb.or([eb('grp', '=', 1), sql<boolean>`true`]))], { notes: ['all'] }],
    [
      'OR across the tables of a join: a branch on the other table lets any row through',
      () => [db.selectFrom('notes').innerJoin('tags', 'tags.note_id', 'notes.id').selectAll().where((eb) => eb.or([eb('notes.grp', '=', 1), eb('tags.label', '=', 'x')]))],
      { notes: ['all'], tags: ['all'] },
    ],
    [
      'a condition on the far side of an equi-join holds for the joined column too',
      () => [db.selectFrom('tags').innerJoin('notes', 'notes.id', 'tags.note_id').select('tags.label').where('notes.id', '=', A).where('notes.grp', '=', 2)],
      { notes: [`id = "${A}" and grp = "2"`], tags: [`note_id = "${A}"`] },
    ],
    ['an equi-join between columns of different kinds carries nothing', () => [db.selectFrom('tags').innerJoin('notes', 'notes.title', 'tags.note_id' as any).select('tags.label').where('notes.title', '=', 'x')], { notes: ['title = "x"'], tags: ['all'] }],
    [
      'a correlated EXISTS: the outer table\'s conditions on the correlated column hold in the subquery',
      () => [db.selectFrom('notes').selectAll().where('id', '=', A).where((eb) => eb.exists(eb.selectFrom('tags').select('tags.id').whereRef('tags.note_id', '=', 'notes.id').where('tags.label', '=', 'x')))],
      { notes: [`id = "${A}"`], tags: [`label = "x" and note_id = "${A}"`] },
    ],
    [
      'an anti-join by NOT EXISTS: the same',
      () => [db.selectFrom('notes').selectAll().where('id', 'in', [A]).where((eb) => eb.not(eb.exists(eb.selectFrom('tags').select('tags.id').whereRef('notes.id', '=', 'tags.note_id'))))],
      { notes: [`id = "${A}"`], tags: [`note_id = "${A}"`] },
    ],
    [
      'an anti-join by LEFT JOIN … IS NULL: the ON equality carries the preserved table\'s conditions',
      () => [db.selectFrom('notes').leftJoin('tags', 'tags.note_id', 'notes.id').selectAll('notes').where('notes.id', '=', A).where('tags.id', 'is', null)],
      { notes: [`id = "${A}"`], tags: [`note_id = "${A}"`] },
    ],
    [
      'a WHERE equality does not bound a LEFT-joined table',
      () => [db.selectFrom('notes').leftJoin('tags', (j) => j.on('tags.label', '=', 'x')).selectAll('notes').where('notes.id', '=', A).whereRef('tags.note_id', '=', 'notes.id')],
      { notes: [`id = "${A}"`], tags: ['label = "x"'] },
    ],
    [
      'a subquery\'s conditions do not bound the query around it',
      () => [db.selectFrom('notes').selectAll().where((eb) => eb.exists(eb.selectFrom('tags').select('tags.id').whereRef('tags.note_id', '=', 'notes.id').where('tags.note_id', '=', A)))],
      { notes: ['all'], tags: [`note_id = "${A}"`] },
    ],
    ['NOT of an equality: <>', () => [db.selectFrom('notes').selectAll().where((eb) => eb.not(eb('grp', '=', 1)))], { notes: ['grp <> "1"'] }],
    ['NOT of a range: dropped', () => [db.selectFrom('notes').selectAll().where((eb) => eb.not(eb('grp', '<', 1)))], { notes: ['all'] }],
    ['<> and IS NOT NULL', () => [db.selectFrom('notes').selectAll().where('grp', '<>', 1).where('author_id', 'is not', null)], { notes: ['grp <> "1" and author_id is not null'] }],
    ['NOT IN', () => [db.selectFrom('notes').selectAll().where('grp', 'not in', [1, 2])], { notes: ['grp not in ("1", "2")'] }],
    ['NOT IN with a NULL is never true: dropped', () => [db.selectFrom('notes').selectAll().where('grp', 'not in', [1, null as any])], { notes: ['all'] }],
    ['a function of a column, where the database says nothing of case: dropped', () => [db.selectFrom('notes').selectAll().where((eb) => eb(eb.fn('lower', ['title']), '=', 'x'))], { notes: ['all'] }],
    ['integer arithmetic on a column', () => [db.selectFrom('notes').selectAll().where((eb) => eb(eb('grp', '+', 1), '=', 5)).where((eb) => eb(eb(eb.val(10), '-', eb.ref('n')), '>', 3))], { notes: ['grp + 1 = "5" and 10 - n > "3"'] }],
    ['abs() of an integer', () => [db.selectFrom('notes').selectAll().where((eb) => eb(eb.fn('abs', ['grp']), 'in', [1, 2]))], { notes: ['abs(grp) in ("1", "2")'] }],
    ['= any(array)', () => [db.selectFrom('notes').selectAll().where((eb) => eb('grp', '=', eb.fn('any', [eb.val([1, 2, null])])))], { notes: ['grp in ("1", "2")'] }],
    ['BETWEEN on integers', () => [db.selectFrom('notes').selectAll().where((eb) => eb.between('grp', 1, 4))], { notes: ['grp in 1..4'] }],
    ['a bare boolean column, NOT of one, IS NOT TRUE', () => [db.selectFrom('notes').selectAll().where((eb) => eb.ref('done')), db.selectFrom('notes').selectAll().where((eb) => eb.not(eb.ref('done'))), db.selectFrom('notes').selectAll().where('done', 'is not', true)], { notes: ['done = "true"', 'done = "false"', 'done in ("false", null)'] }],
    ['numeric equality and ranges: by value', () => [db.selectFrom('notes').selectAll().where('score', '=', '1.50').where('score', '<', 3)], { notes: ['score = "1.50" and score < "3"'] }],
    ['timestamptz: a Date or ISO text with an offset', () => [db.selectFrom('notes').selectAll().where('created_at', '>=', new Date('2026-01-01T00:00:00Z')).where('created_at', '<', '2026-02-01T00:00:00+01:00')], { notes: ['created_at >= "2026-01-01T00:00:00.000000+00:00" and created_at < "2026-02-01T00:00:00+01:00"'] }],
    ['timestamptz text without an offset (the session\'s time zone decides): dropped', () => [db.selectFrom('notes').selectAll().where('created_at', '>', '2026-01-01')], { notes: ['all'] }],
    ['uuid ranges', () => [db.selectFrom('notes').selectAll().where('id', '>', A.toUpperCase())], { notes: [`id > "${A}"`] }],
    ['LIKE: a pattern', () => [db.selectFrom('notes').selectAll().where('title', 'like', 'ab%')], { notes: ['title like "ab%"'] }],
    ['LIKE ending in the escape (PostgreSQL refuses it): dropped', () => [db.selectFrom('notes').selectAll().where('title', 'like', 'ab\\')], { notes: ['all'] }],
    ['ILIKE where the database says nothing of case: dropped', () => [db.selectFrom('notes').selectAll().where('title', 'ilike', 'ab%')], { notes: ['all'] }],
    ['a raw fragment: dropped, the rest kept', () => [db.selectFrom('notes').selectAll().where(sql<boolean>`true`).where('grp', '=', 1)], { notes: ['grp = "1"'] }],
    ['a range on text where the collation is unknown: dropped', () => [db.selectFrom('notes').selectAll().where('title', '>', 'm')], { notes: ['all'] }],
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
    ['an enum range: the schema\'s labels outside it', () => [db.selectFrom('notes').selectAll().where('stage', '>', 'open')], { notes: ['stage not in ("draft", "open")'] }],
    ['an enum BETWEEN, and a range that starts at the first label', () => [db.selectFrom('notes').selectAll().where((eb) => eb.between('stage', 'open', 'review')), db.selectFrom('notes').selectAll().where('stage', '>=', 'draft')], { notes: ['stage not in ("draft", "closed")', 'stage is not null'] }],
    ['an enum range whose bound the schema does not list: dropped', () => [db.selectFrom('notes').selectAll().where('stage', '<', 'archived')], { notes: ['all'] }],
    ['a table of another schema is not a captured table', () => [db.selectFrom('auth.users').selectAll().where('id', '=', 1)], {}],
  ];

  it.each(cases)('%s', (_name, queries, expected) => {
    expect(readSetOf(...queries())).toEqual(expected);
  });

  it('IN keeps up to 1000 values; more drop the condition', () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => i);
    expect(readSetOf(db.selectFrom('notes').selectAll().where('grp', 'in', list(1000)))).toEqual({ notes: [`grp in (${list(1000).map((i) => `"${i}"`).join(', ')})`] });
    expect(readSetOf(db.selectFrom('notes').selectAll().where('grp', 'in', list(1001)))).toEqual({ notes: ['all'] });
  });

  it('under collation C: text ranges, ILIKE, lower() and upper() are kept', () => {
    expect(
      readSetUnder(
        C_DATABASE,
        db.selectFrom('notes').selectAll().where('title', '>=', 'm').where('title', 'ilike', 'AB%'),
        db.selectFrom('notes').selectAll().where((eb) => eb(eb.fn('lower', ['title']), '=', 'x')).where((eb) => eb(eb.fn('upper', ['title']), 'like', 'X%')),
      ),
    ).toEqual({ notes: ['title >= "m" and title ilike "ab%"', 'lower(title) = "x" and upper(title) like "X%"'] });
  });

  it('a column with a collation of its own keeps only equality', () => {
    const own: TextSemantics = { ...C_DATABASE, ownCollation: new Set(['notes.title']) };
    expect(readSetUnder(own, db.selectFrom('notes').selectAll().where('title', '>=', 'm').where('title', 'like', 'a%').where('title', '=', 'x'))).toEqual({ notes: ['title = "x"'] });
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

describe('comparing captured values as PostgreSQL does', () => {
  it.each([
    ['numeric', '1.50', '1.5', 0],
    ['numeric', '-0.001', '0', -1],
    ['numeric', '12345678901234567890.000000000000000001', '12345678901234567890', 1],
    ['numeric', 'NaN', 'Infinity', 1],
    ['numeric', '-Infinity', '-99999999999999999999', -1],
    ['numeric', '1e3', '999.9999', 1],
    ['timestamptz', '2026-11-25T10:00:00.123+00:00', '2026-11-25T15:30:00.123+05:30', 0],
    ['timestamptz', '2026-11-25T10:00:00.000001+00:00', '2026-11-25T10:00:00+00:00', 1],
    ['timestamptz', '0044-03-15T12:00:00+00:00 BC', '0001-01-01T00:00:00+00:00', -1],
    ['timestamptz', 'infinity', '294276-12-31T23:59:59.999999+00:00', 1],
    ['timestamptz', '1969-12-31T23:59:59.999999-00:00:15', '1970-01-01T00:00:00+00:00', 1],
    // As to_jsonb prints them in a session of time zone Asia/Kolkata (local mean time before 1900), BC included.
    ['timestamptz', '0044-03-15T17:53:28+05:53:28 BC', '0044-03-15T12:00:00+00:00 BC', 0],
    ['timestamptz', '10000-01-01T05:30:00+05:30', '9999-12-31T23:59:59+00:00', 1],
    ['date', '0044-03-15 BC', '0001-01-01', -1],
    ['numeric', '0.00000000000000000001', '0.0', 1],
    ['numeric', '1500000000000000000000000000000', '1.5e30', 0],
    ['date', '2024-02-29', '2024-03-01', -1],
    ['date', '10000-01-01', '9999-12-31', 1],
    ['date', '-infinity', '0001-01-01 BC', -1],
    ['uuid', '0a000000-0000-4000-8000-000000000000', 'f0000000-0000-4000-8000-000000000000', -1],
    ['boolean', 'false', 'true', -1],
  ] as const)('%s: %s vs %s → %d', (kind, a, b, expected) => {
    expect(Math.sign(compareValues(kind, a, b, 'none')!)).toBe(expected);
    expect(Math.sign(compareValues(kind, b, a, 'none')!) || 0).toBe(-expected || 0);
  });

  it('text: by code point (UTF-8 bytes) under C; ASCII only under C.UTF-8; never under other collations', () => {
    // U+FF5E sorts below U+1F600 by code point, above it by UTF-16 unit.
    expect(compareValues('text', '\uff5e', '\u{1f600}', 'bytes')).toBeLessThan(0);
    expect(compareValues('text', 'B', 'a', 'bytes')).toBeLessThan(0);
    expect(compareValues('text', 'B', 'a', 'ascii')).toBeLessThan(0);
    expect(compareValues('text', 'é', 'a', 'ascii')).toBeUndefined();
    expect(compareValues('text', 'B', 'a', 'none')).toBeUndefined();
    expect(compareValues('enum', 'open', 'done', 'bytes')).toBeUndefined();
  });

  it('constants: only the forms with one meaning whatever the session says', () => {
    expect(orderedConstant('timestamptz', new Date('2026-01-01T00:00:00.123Z'))).toBe('2026-01-01T00:00:00.123000+00:00');
    expect(orderedConstant('timestamptz', '2026-01-01 10:00')).toBeUndefined();
    expect(orderedConstant('date', '2026-02-30')).toBeUndefined();
    expect(orderedConstant('date', new Date())).toBeUndefined();
    expect(orderedConstant('numeric', 0.1)).toBe('0.1');
    expect(orderedConstant('numeric', 'NaN')).toBeUndefined();
    expect(orderedConstant('integer', 2 ** 31)).toBeUndefined();
  });

  const matches = (text: TextSemantics | undefined, query: { toOperationNode(): OperationNode }, column: string, values: Array<string | null>) => {
    const builder = createReadSetBuilder(schema, text);
    builder.addStatement(query.toOperationNode());
    return readSetMatches(builder.build().get('notes'), { [column]: values });
  };
  const notes = () => db.selectFrom('notes').selectAll();

  it('ranges and equality on numeric, timestamptz and date match by value, bounds included or not', () => {
    expect(matches(undefined, notes().where('score', '=', '1.5'), 'score', ['1.50'])).toBe(true);
    expect(matches(undefined, notes().where('score', '>', '1.5'), 'score', ['1.50', '-3'])).toBe(false);
    expect(matches(undefined, notes().where('score', '>=', '1.5'), 'score', ['1.50'])).toBe(true);
    expect(matches(undefined, notes().where('score', '>', '1.5'), 'score', ['NaN'])).toBe(true);
    expect(matches(undefined, notes().where('score', '<>', 2), 'score', ['2.000', null])).toBe(false);
    expect(matches(undefined, notes().where('created_at', '<', new Date('2026-01-01T00:00:00Z')), 'created_at', ['2026-01-01T01:00:00+01:00'])).toBe(false);
    expect(matches(undefined, notes().where('created_at', '<=', new Date('2026-01-01T00:00:00Z')), 'created_at', ['2026-01-01T01:00:00+01:00'])).toBe(true);
  });

  it('LIKE, ILIKE and lower() evaluate the pattern exactly; a non-ASCII value under C.UTF-8 cannot be ruled out', () => {
    const cUtf8: TextSemantics = { ...textSemanticsOf('c', 'C.UTF-8', 'C.UTF-8', undefined), ownCollation: new Set() };
    expect(matches(undefined, notes().where('title', 'like', 'a\\%_'), 'title', ['a%x'])).toBe(true);
    expect(matches(undefined, notes().where('title', 'like', 'a\\%_'), 'title', ['abx', 'a%', 'a%xy'])).toBe(false);
    expect(matches(undefined, notes().where('title', 'like', 'a_'), 'title', ['a\u{1f600}'])).toBe(true);
    expect(matches(cUtf8, notes().where('title', 'ilike', 'AB%'), 'title', ['aBc'])).toBe(true);
    expect(matches(cUtf8, notes().where('title', 'ilike', 'AB%'), 'title', ['xab'])).toBe(false);
    expect(matches(cUtf8, notes().where('title', 'ilike', 'AB%'), 'title', ['ÀB'])).toBe(true);
    expect(matches(C_DATABASE, notes().where('title', 'ilike', 'AB%'), 'title', ['ÀB'])).toBe(false);
    expect(matches(cUtf8, notes().where((eb) => eb(eb.fn('lower', ['title']), '=', 'ab')), 'title', ['AB', 'x'])).toBe(true);
    expect(matches(cUtf8, notes().where((eb) => eb(eb.fn('lower', ['title']), '=', 'ab')), 'title', ['ABC', 'x'])).toBe(false);
  });

  it('integer arithmetic: exact, and an overflow (which fails the statement) matches', () => {
    expect(matches(undefined, notes().where((eb) => eb(eb('grp', '+', 1), '=', 5)), 'grp', ['4'])).toBe(true);
    expect(matches(undefined, notes().where((eb) => eb(eb('grp', '+', 1), '=', 5)), 'grp', ['5', '3'])).toBe(false);
    expect(matches(undefined, notes().where((eb) => eb(eb('grp', '+', 1), '=', 5)), 'grp', ['2147483647'])).toBe(true);
    expect(matches(undefined, notes().where((eb) => eb(eb.fn('abs', ['grp']), '<', 2)), 'grp', ['-1'])).toBe(true);
    expect(matches(undefined, notes().where((eb) => eb(eb.fn('abs', ['grp']), '<', 2)), 'grp', ['-2', '2'])).toBe(false);
  });
});
