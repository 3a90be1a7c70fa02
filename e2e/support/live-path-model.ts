/**
 * The model of runtime/live/live-path.property.test.ts: a seeded generator of random cases (a schema, its
 * liveQueries, subscribers and writers) as plain JSON, and what turns a case into an app, a query and a
 * write. The test and the fw processes it starts (live-path-process.ts) build the same app from the same
 * JSON, so nothing but data crosses the process boundary.
 */
import { sql, type ExpressionBuilder, type Expression, type Kysely, type SqlBool } from 'kysely';
import { z } from 'zod';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import { command, definePolicies, liveQuery } from '../../runtime/core/entries.ts';
import type { EntryDefinition } from '../../runtime/core/entry-types.ts';
import { defineSchema, t, table, type Column, type ColumnKind, type Table } from '../../runtime/core/schema.ts';

// ---- a small deterministic PRNG (mulberry32) ----

export class Random {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let x = this.#state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(0, items.length - 1)]!;
  }
  subset<T>(items: readonly T[], min: number, max: number): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    return copy.slice(0, Math.min(copy.length, this.int(min, max)));
  }
  uuid(): string {
    let hex = '';
    for (let i = 0; i < 32; i++) hex += this.int(0, 15).toString(16);
    hex = `${hex.slice(0, 12)}4${hex.slice(13, 16)}${'89ab'[this.int(0, 3)]}${hex.slice(17)}`;
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}

// ---- the schema ----

type Kind = 'integer' | 'text' | 'timestamptz' | 'date' | 'numeric' | 'jsonb' | 'enum' | 'uuid' | 'boolean';
export interface ColumnSpec {
  name: string;
  kind: Kind;
  nullable: boolean;
  references?: { table: string; onDelete: 'cascade' | 'set null' };
}
export interface TableSpec {
  name: string;
  tenantScoped: boolean;
  columns: ColumnSpec[];
}

/**
 * Three tables: `ta` (every kind of column, and `up`, a tree over itself), `tb` (children of `ta` through
 * `parent_id`) and `tg` (tenant-scoped or shared). Which columns may be null, whether `tg` is shared and
 * how `tb` rows go when their parent does are drawn.
 */
function randomTables(rng: Random): TableSpec[] {
  const nullable = () => rng.chance(0.35);
  const ta: TableSpec = {
    name: 'ta',
    tenantScoped: true,
    columns: [
      { name: 'k', kind: 'integer', nullable: nullable() },
      { name: 's', kind: 'text', nullable: nullable() },
      { name: 'ts', kind: 'timestamptz', nullable: nullable() },
      { name: 'd', kind: 'date', nullable: nullable() },
      { name: 'amt', kind: 'numeric', nullable: nullable() },
      { name: 'meta', kind: 'jsonb', nullable: nullable() },
      { name: 'st', kind: 'enum', nullable: nullable() },
      { name: 'u', kind: 'uuid', nullable: nullable() },
      { name: 'flag', kind: 'boolean', nullable: nullable() },
      { name: 'up', kind: 'uuid', nullable: true, references: { table: 'ta', onDelete: 'set null' } },
    ],
  };
  const tb: TableSpec = {
    name: 'tb',
    tenantScoped: true,
    columns: [
      { name: 'k', kind: 'integer', nullable: nullable() },
      { name: 's', kind: 'text', nullable: nullable() },
      { name: 'st', kind: 'enum', nullable: nullable() },
      { name: 'amt', kind: 'numeric', nullable: nullable() },
      { name: 'ts', kind: 'timestamptz', nullable: nullable() },
      { name: 'flag', kind: 'boolean', nullable: nullable() },
      { name: 'parent_id', kind: 'uuid', nullable: true, references: { table: 'ta', onDelete: rng.pick(['cascade', 'set null'] as const) } },
    ],
  };
  const tg: TableSpec = {
    name: 'tg',
    tenantScoped: rng.chance(0.3),
    columns: [
      { name: 'k', kind: 'integer', nullable: false },
      { name: 's', kind: 'text', nullable: nullable() },
      { name: 'st', kind: 'enum', nullable: nullable() },
    ],
  };
  return [ta, tb, tg];
}

export const STATUSES = ['open', 'done', 'later'] as const;

export function buildSchema(tables: readonly TableSpec[]) {
  const declared: Record<string, Table> = {};
  for (const spec of tables) {
    const columns: Record<string, Column<any, boolean, boolean, ColumnKind>> = { id: t.uuid().primaryKey() };
    for (const column of spec.columns) {
      let built: Column<any, boolean, boolean, ColumnKind> = column.kind === 'enum' ? t.enum(STATUSES) : t[column.kind]();
      if (column.nullable) built = built.nullable();
      if (column.references) built = built.references(column.references.table, 'id', { onDelete: column.references.onDelete });
      columns[column.name] = built;
    }
    declared[spec.name] = spec.tenantScoped ? table(columns) : table(columns, { tenantScoped: false });
  }
  return defineSchema(declared);
}

/** A function the liveQueries of shape `fn` call: it reads `tb`, which their query tree never names (they declare `reads`). */
export const SETUP_SQL = [
  `create or replace function tb_count(p uuid) returns integer language sql stable as $$ select count(*)::integer from tb where parent_id = p $$`,
];

// ---- values (small domains, so that writes and conditions meet) ----

const TEXTS = ['a', 'ab', 'b', 'ba', 'c', 'A'];
/** Far from now (2001 and 2090): a comparison with now() gives the same answer for the whole test. */
const TIMESTAMPS = ['2001-01-01T00:00:00.000Z', '2001-01-02T12:00:00.000Z', '2001-03-01T00:00:00.000Z', '2090-01-01T00:00:00.000Z', '2090-06-01T08:30:00.000Z'];
const DATES = ['2001-01-01', '2001-01-02', '2001-02-01', '2090-01-01'];
const NUMERICS = ['1.5', '2', '2.50', '10', '-3.25'];
const METAS = [{ t: 'x' }, { t: 'y', n: 1 }, { n: 2 }, { t: 'x', n: 3 }];
const UUIDS = ['0a0a0a0a-0000-4000-8000-000000000001', '0b0b0b0b-0000-4000-8000-000000000002', '0c0c0c0c-0000-4000-8000-00000000000c'];

type Value = string | number | boolean | null | Record<string, unknown>;

function value(rng: Random, kind: Kind): Value {
  switch (kind) {
    case 'integer':
      return rng.int(0, 9);
    case 'text':
      return rng.pick(TEXTS);
    case 'timestamptz':
      return rng.pick(TIMESTAMPS);
    case 'date':
      return rng.pick(DATES);
    case 'numeric':
      return rng.pick(NUMERICS);
    case 'jsonb':
      return rng.pick(METAS);
    case 'enum':
      return rng.pick(STATUSES);
    case 'uuid':
      return rng.pick(UUIDS);
    case 'boolean':
      return rng.chance(0.5);
  }
}

// ---- conditions and queries (data; `buildQuery` makes them Kysely queries) ----

/** A condition on the columns of one source (`alias`), or a subquery condition on `ta` rows. */
export type Cond =
  | { c: 'cmp'; col: string; op: '=' | '<>' | '<' | '<=' | '>' | '>='; value: Value | { arg: true } }
  | { c: 'in'; col: string; values: Value[] }
  | { c: 'like'; col: string; pattern: string; ilike: boolean }
  | { c: 'null'; col: string; not: boolean }
  | { c: 'or'; left: Cond; right: Cond }
  | { c: 'not'; cond: Cond }
  | { c: 'coalesce'; col: string; fallback: Value; value: Value }
  | { c: 'json'; key: string; value: string }
  | { c: 'clock'; col: 'ts'; op: '<=' | '>' }
  | { c: 'lower'; col: 's'; value: string }
  /** On `ta`: exists / not exists / in (select parent_id from tb where …). */
  | { c: 'child'; how: 'exists' | 'not exists' | 'in'; where: Cond[] }
  /** On `ta`: the custom function tb_count(id) (reads tb; the liveQuery declares reads). */
  | { c: 'fn'; min: number };

export type QuerySpec =
  | { shape: 'plain'; table: 'ta' | 'tb' | 'tg'; where: Cond[]; cols: string[]; page?: Page; distinct?: boolean }
  | { shape: 'join'; join: 'innerJoin' | 'leftJoin'; whereA: Cond[]; onB: Cond[]; whereB: Cond[]; page?: Page }
  | { shape: 'agg'; table: 'ta' | 'tb'; where: Cond[]; groupBy: string }
  | { shape: 'window'; table: 'ta' | 'tb'; where: Cond[]; partition: string; top: number }
  | { shape: 'recursive'; root: Cond[]; where: Cond[] }
  | { shape: 'union'; left: Cond[]; right: Cond[] }
  | { shape: 'derived'; where: Cond[]; outer: Cond[]; page?: Page }
  | { shape: 'count'; tables: Array<{ table: 'ta' | 'tb' | 'tg'; where: Cond[] }> };

export interface Page {
  col: string;
  dir: 'asc' | 'desc';
  limit: number;
  offset: number;
}

export interface LiveQuerySpec {
  name: string;
  query: QuerySpec;
  /** Declared reads (shape `fn` conditions need them); clock reads declare refreshMs. */
  reads?: string[];
  refreshMs?: number;
  /** Each result row carries `repeat(s, pad)` (big frames, so that a paused reader fills its socket). */
  pad: number;
}

const COLUMNS: Record<string, Array<{ name: string; kind: Kind }>> = {
  ta: [
    { name: 'k', kind: 'integer' },
    { name: 's', kind: 'text' },
    { name: 'ts', kind: 'timestamptz' },
    { name: 'd', kind: 'date' },
    { name: 'amt', kind: 'numeric' },
    { name: 'meta', kind: 'jsonb' },
    { name: 'st', kind: 'enum' },
    { name: 'u', kind: 'uuid' },
    { name: 'flag', kind: 'boolean' },
  ],
  tb: [
    { name: 'k', kind: 'integer' },
    { name: 's', kind: 'text' },
    { name: 'st', kind: 'enum' },
    { name: 'amt', kind: 'numeric' },
    { name: 'ts', kind: 'timestamptz' },
    { name: 'flag', kind: 'boolean' },
  ],
  tg: [
    { name: 'k', kind: 'integer' },
    { name: 's', kind: 'text' },
    { name: 'st', kind: 'enum' },
  ],
};
const ORDERABLE: ReadonlySet<Kind> = new Set(['integer', 'text', 'timestamptz', 'date', 'numeric', 'enum', 'uuid', 'boolean']);

/** Kinds whose values the capture trigger records: conditions on them can keep a read set precise. */
const CAPTURED: ReadonlySet<Kind> = new Set(['integer', 'text', 'uuid', 'enum', 'boolean']);

function randomCond(rng: Random, table: string, depth = 0, useArg = false): Cond {
  const columns = COLUMNS[table]!;
  // Half the time a condition fw keeps (= or IN on a captured column, a range on an integer), so that
  // read sets are precise often enough for a missed match to show.
  if (!useArg && rng.chance(0.5)) {
    const column = rng.pick(columns.filter((c) => CAPTURED.has(c.kind)));
    if (column.kind === 'integer' && rng.chance(0.5)) return { c: 'cmp', col: column.name, op: rng.pick(['<', '<=', '>', '>='] as const), value: rng.int(0, 9) };
    if (rng.chance(0.4)) return { c: 'in', col: column.name, values: Array.from({ length: rng.int(1, 3) }, () => value(rng, column.kind)) };
    return { c: 'cmp', col: column.name, op: '=', value: value(rng, column.kind) };
  }
  const column = rng.pick(columns);
  const kinds: Array<Cond['c']> = ['cmp', 'cmp', 'cmp', 'in', 'null'];
  if (depth < 2) kinds.push('or', 'not');
  if (column.kind === 'text') kinds.push('like', 'lower');
  if (column.kind !== 'jsonb' && column.kind !== 'boolean') kinds.push('coalesce');
  if (table === 'ta') kinds.push('json');
  if (table === 'ta' || table === 'tb') kinds.push('clock');
  if (table === 'ta' && depth < 2) kinds.push('child', 'child');
  if (table === 'ta') kinds.push('fn');
  const kind = useArg ? 'cmp' : rng.pick(kinds);
  switch (kind) {
    case 'cmp': {
      if (useArg) return { c: 'cmp', col: 'k', op: rng.pick(['=', '>=', '<', '<='] as const), value: { arg: true } };
      const ordered = column.kind !== 'jsonb' && ORDERABLE.has(column.kind);
      const op = column.kind === 'jsonb' ? '=' : ordered && rng.chance(0.5) ? rng.pick(['<', '<=', '>', '>='] as const) : rng.pick(['=', '=', '<>'] as const);
      return { c: 'cmp', col: column.name, op, value: value(rng, column.kind) };
    }
    case 'in': {
      const usable = columns.filter((c) => c.kind !== 'jsonb');
      const col = rng.pick(usable);
      return { c: 'in', col: col.name, values: Array.from({ length: rng.int(1, 3) }, () => value(rng, col.kind)) };
    }
    case 'null':
      return { c: 'null', col: column.name, not: rng.chance(0.5) };
    case 'or':
      return { c: 'or', left: randomCond(rng, table, depth + 1), right: randomCond(rng, table, depth + 1) };
    case 'not':
      return { c: 'not', cond: randomCond(rng, table, depth + 1) };
    case 'like':
      return { c: 'like', col: column.name, pattern: rng.pick(['a%', '%b', '_', 'b%', '%a%']), ilike: rng.chance(0.3) };
    case 'lower':
      return { c: 'lower', col: 's', value: rng.pick(['a', 'ab']) };
    case 'coalesce':
      return { c: 'coalesce', col: column.name, fallback: value(rng, column.kind), value: value(rng, column.kind) };
    case 'json':
      return { c: 'json', key: 't', value: rng.pick(['x', 'y']) };
    case 'clock':
      return { c: 'clock', col: 'ts', op: rng.pick(['<=', '>'] as const) };
    case 'child':
      return { c: 'child', how: rng.pick(['exists', 'not exists', 'in'] as const), where: conds(rng, 'tb', 0, 2, depth + 1) };
    case 'fn':
      return { c: 'fn', min: rng.int(0, 2) };
  }
  throw new Error(`no condition ${kind}`);
}

function conds(rng: Random, table: string, min: number, max: number, depth = 0): Cond[] {
  return Array.from({ length: rng.int(min, max) }, () => randomCond(rng, table, depth));
}

/** Conditions with the liveQuery's argument (`k` compared with args.k) first, sometimes. */
function argConds(rng: Random, table: string, min: number, max: number): Cond[] {
  const list = conds(rng, table, min, max);
  if (rng.chance(0.6)) list.unshift(randomCond(rng, table, 0, true));
  return list;
}

function page(rng: Random, table: string): Page | undefined {
  if (!rng.chance(0.45)) return undefined;
  const col = rng.pick(COLUMNS[table]!.filter((c) => ORDERABLE.has(c.kind)));
  return { col: col.name, dir: rng.pick(['asc', 'desc'] as const), limit: rng.int(1, 6), offset: rng.chance(0.4) ? rng.int(1, 3) : 0 };
}

function randomQuerySpec(rng: Random): QuerySpec {
  const shape = rng.pick(['plain', 'plain', 'plain', 'join', 'join', 'agg', 'window', 'recursive', 'union', 'derived', 'count'] as const);
  const tableOf = () => rng.pick(['ta', 'ta', 'tb', 'tg'] as const);
  switch (shape) {
    case 'plain': {
      const table = tableOf();
      const cols = rng.subset(COLUMNS[table]!.map((c) => c.name), 1, 4);
      return { shape, table, where: argConds(rng, table, 0, 3), cols, ...optional('page', page(rng, table)), ...(rng.chance(0.15) ? { distinct: true } : {}) };
    }
    case 'join':
      return { shape, join: rng.pick(['innerJoin', 'leftJoin'] as const), whereA: argConds(rng, 'ta', 0, 2), onB: conds(rng, 'tb', 0, 2), whereB: conds(rng, 'tb', 0, 1), ...optional('page', page(rng, 'ta')) };
    case 'agg': {
      const table = rng.pick(['ta', 'tb'] as const);
      return { shape, table, where: argConds(rng, table, 0, 2), groupBy: rng.pick(['st', 'flag', 's']) };
    }
    case 'window': {
      const table = rng.pick(['ta', 'tb'] as const);
      return { shape, table, where: argConds(rng, table, 0, 2), partition: rng.pick(['st', 'flag']), top: rng.int(1, 3) };
    }
    case 'recursive':
      return { shape, root: argConds(rng, 'ta', 1, 2), where: conds(rng, 'ta', 0, 1) };
    case 'union':
      return { shape, left: argConds(rng, 'ta', 1, 2), right: conds(rng, 'tb', 1, 2) };
    case 'derived':
      return { shape, where: argConds(rng, 'ta', 0, 2), outer: conds(rng, 'ta', 0, 1), ...optional('page', page(rng, 'ta')) };
    case 'count':
      return { shape, tables: rng.subset(['ta', 'tb', 'tg'] as const, 1, 3).map((table) => ({ table, where: argConds(rng, table, 0, 2) })) };
  }
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** Every condition of a query, nested ones included. */
export function condsOf(query: QuerySpec): Cond[] {
  const all: Cond[] = [];
  const walk = (list: readonly Cond[]) => {
    for (const cond of list) {
      all.push(cond);
      if (cond.c === 'or') walk([cond.left, cond.right]);
      if (cond.c === 'not') walk([cond.cond]);
      if (cond.c === 'child') walk(cond.where);
    }
  };
  switch (query.shape) {
    case 'plain':
    case 'agg':
    case 'window':
      walk(query.where);
      break;
    case 'join':
      walk([...query.whereA, ...query.onB, ...query.whereB]);
      break;
    case 'recursive':
      walk([...query.root, ...query.where]);
      break;
    case 'union':
      walk([...query.left, ...query.right]);
      break;
    case 'derived':
      walk([...query.where, ...query.outer]);
      break;
    case 'count':
      walk(query.tables.flatMap((t) => t.where));
      break;
  }
  return all;
}

function randomLiveQuery(rng: Random, name: string): LiveQuerySpec {
  const query = randomQuerySpec(rng);
  const used = condsOf(query);
  const spec: LiveQuerySpec = { name, query, pad: rng.chance(0.3) ? rng.pick([2_000, 50_000]) : 0 };
  if (used.some((c) => c.c === 'fn')) spec.reads = ['ta', 'tb'];
  if (used.some((c) => c.c === 'clock')) spec.refreshMs = 3_600_000;
  return spec;
}

// ---- building queries ----

type Eb = ExpressionBuilder<any, any>;

function condition(eb: Eb, alias: string, cond: Cond, arg: number): Expression<SqlBool> {
  const col = (name: string) => eb.ref(`${alias}.${name}`);
  switch (cond.c) {
    case 'cmp': {
      const v = typeof cond.value === 'object' && cond.value !== null && 'arg' in cond.value ? arg : cond.value;
      return eb(col(cond.col), cond.op, jsonValue(v));
    }
    case 'in':
      return eb(col(cond.col), 'in', cond.values.map(jsonValue) as any[]);
    case 'like':
      return eb(col(cond.col), cond.ilike ? 'ilike' : 'like', cond.pattern);
    case 'null':
      return eb(col(cond.col), cond.not ? 'is not' : 'is', null);
    case 'or':
      return eb.or([condition(eb, alias, cond.left, arg), condition(eb, alias, cond.right, arg)]);
    case 'not':
      return eb.not(condition(eb, alias, cond.cond, arg));
    case 'coalesce':
      return eb(eb.fn.coalesce(col(cond.col), eb.val(jsonValue(cond.fallback))), '=', jsonValue(cond.value));
    case 'json':
      return eb(eb.ref(`${alias}.meta`, '->>').key(cond.key as never), '=', cond.value);
    case 'clock':
      return eb(col(cond.col), cond.op, eb.fn('now', []));
    case 'lower':
      return eb(eb.fn('lower', [col(cond.col)]), '=', cond.value);
    case 'child': {
      const sub = eb
        .selectFrom('tb as cb')
        .select('cb.parent_id')
        .where((inner: Eb) => inner.and(cond.where.map((c) => condition(inner, 'cb', c, arg))));
      if (cond.how === 'in') return eb(col('id'), 'in', sub);
      const correlated = sub.whereRef('cb.parent_id', '=', `${alias}.id` as any);
      return cond.how === 'exists' ? eb.exists(correlated) : eb.not(eb.exists(correlated));
    }
    case 'fn':
      return eb(eb.fn('tb_count', [col('id')]), '>=', cond.min);
  }
}

function jsonValue(value: Value): unknown {
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : value;
}

function where(alias: string, list: readonly Cond[], arg: number) {
  return (eb: Eb) => eb.and(list.map((cond) => condition(eb, alias, cond, arg)));
}

function padded(eb: Eb, alias: string, pad: number) {
  return sql<string>`repeat(coalesce(${eb.ref(`${alias}.s`)}, '-'), ${sql.lit(pad)})`.as('pad');
}

function ordered(query: any, alias: string, p: Page | undefined): any {
  if (!p) return query;
  let q = query.orderBy(`${alias}.${p.col}`, (ob: any) => ob[p.dir]().nullsFirst()).orderBy(`${alias}.id`).limit(p.limit);
  if (p.offset > 0) q = q.offset(p.offset);
  return q;
}

/** Rows in a canonical order (a result whose order the SQL does not fix compares as a set). */
function canonicalRows(rows: readonly unknown[]): unknown[] {
  return rows
    .map((row) => JSON.parse(JSON.stringify(row)) as unknown)
    .map((row) => [JSON.stringify(row), row] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([, row]) => row);
}

/** Runs one liveQuery's statements on `db` (the handler's ctx.db, or a test's own transaction). */
export async function runLiveQuery(db: Kysely<any>, spec: LiveQuerySpec, arg: number): Promise<unknown> {
  const q = spec.query;
  const pad = spec.pad;
  switch (q.shape) {
    case 'plain': {
      let query = db
        .selectFrom(`${q.table} as x`)
        .select(['x.id', ...q.cols.map((c) => `x.${c}`)] as any)
        .where(where('x', q.where, arg));
      if (q.distinct) query = db.selectFrom(`${q.table} as x`).select(q.cols.map((c) => `x.${c}`) as any).distinct().where(where('x', q.where, arg));
      else if (pad > 0 && q.table !== 'tg') query = query.select((eb: Eb) => padded(eb, 'x', pad));
      const rows = await (q.distinct ? query : ordered(query, 'x', q.page)).execute();
      return q.page && !q.distinct ? rows : canonicalRows(rows);
    }
    case 'join': {
      let query = (db.selectFrom('ta as a') as any)[q.join]('tb as b', (join: any) =>
        join.onRef('b.parent_id', '=', 'a.id').on((eb: Eb) => eb.and(q.onB.map((c) => condition(eb, 'b', c, arg)))),
      );
      query = query.select(['a.id', 'a.k', 'a.s', 'b.id as bid', 'b.k as bk', 'b.st as bst']).where(where('a', q.whereA, arg));
      if (q.whereB.length > 0) query = query.where(where('b', q.whereB, arg));
      if (pad > 0) query = query.select((eb: Eb) => padded(eb, 'a', pad));
      if (q.page) query = query.orderBy(`a.${q.page.col}`, (ob: any) => ob[q.page!.dir]().nullsFirst()).orderBy('a.id').orderBy('b.id', (ob: any) => ob.asc().nullsFirst()).limit(q.page.limit).offset(q.page.offset);
      const rows = await query.execute();
      return q.page ? rows : canonicalRows(rows);
    }
    case 'agg': {
      const rows = await db
        .selectFrom(`${q.table} as x`)
        .select((eb: Eb) => [
          eb.ref(`x.${q.groupBy}`).as('g'),
          eb.fn.countAll<number>().as('n'),
          eb.fn.sum<number>('x.k').as('sum_k'),
          eb.fn.max('x.ts').as('max_ts'),
          sql<string>`string_agg(${eb.ref('x.s')}, ',' order by ${eb.ref('x.s')}, ${eb.ref('x.id')})`.as('ss'),
        ])
        .where(where('x', q.where, arg))
        .groupBy(`x.${q.groupBy}`)
        .execute();
      return canonicalRows(rows);
    }
    case 'window': {
      const inner = db
        .selectFrom(`${q.table} as x`)
        .select((eb: Eb) => ['x.id', 'x.k', 'x.st', sql<number>`row_number() over (partition by ${eb.ref(`x.${q.partition}`)} order by ${eb.ref('x.k')} desc nulls last, ${eb.ref('x.id')})`.as('rn')])
        .where(where('x', q.where, arg));
      const rows = await db.selectFrom(inner.as('w')).selectAll('w').where('w.rn', '<=', q.top).execute();
      return canonicalRows(rows);
    }
    case 'recursive': {
      const rows = await db
        .withRecursive('tree(id, up, depth)', (qb: any) =>
          qb
            .selectFrom('ta as r')
            .select(['r.id', 'r.up', sql<number>`0`.as('depth')])
            .where(where('r', q.root, arg))
            .unionAll((sub: any) => sub.selectFrom('ta as c').innerJoin('tree', 'tree.id', 'c.up').select(['c.id', 'c.up', sql<number>`tree.depth + 1`.as('depth')]).where('tree.depth', '<', 4)),
        )
        .selectFrom('tree')
        .innerJoin('ta as t', 't.id', 'tree.id')
        .select(['t.id', 't.k', 'tree.depth'])
        .where(where('t', q.where, arg))
        .execute();
      return canonicalRows(rows);
    }
    case 'union': {
      const rows = await db
        .selectFrom('ta as a')
        .select(['a.id', 'a.k'])
        .where(where('a', q.left, arg))
        .union(db.selectFrom('tb as b').select(['b.id', 'b.k']).where(where('b', q.right, arg)))
        .execute();
      return canonicalRows(rows);
    }
    case 'derived': {
      const inner = db.selectFrom('ta as x').selectAll('x').where(where('x', q.where, arg));
      let query: any = db.selectFrom(inner.as('y')).select(['y.id', 'y.k', 'y.st']).where(where('y', q.outer, arg));
      query = ordered(query, 'y', q.page);
      const rows = await query.execute();
      return q.page ? rows : canonicalRows(rows);
    }
    case 'count': {
      const out: Record<string, unknown> = {};
      for (const [i, part] of q.tables.entries()) {
        const row = await db
          .selectFrom(`${part.table} as x`)
          .select((eb: Eb) => [eb.fn.countAll<number>().as('n'), eb.fn.coalesce(eb.fn.sum<number>('x.k'), sql<number>`0`).as('sum_k')])
          .where(where('x', part.where, arg))
          .executeTakeFirstOrThrow();
        out[`${i}:${part.table}`] = JSON.parse(JSON.stringify(row));
      }
      return out;
    }
  }
}

// ---- writes (data; `applyOps` runs them) ----

export type WriteOp =
  | { op: 'insert'; table: string; rows: Array<Record<string, unknown>> }
  | { op: 'update'; table: string; set: Record<string, unknown>; where: { col: string; op: '=' | 'in' | '<=' | '>='; value: unknown } }
  | { op: 'delete'; table: string; where: { col: string; op: '=' | 'in' | '<=' | '>='; value: unknown } }
  /** The owner only: the log then says "anything" for the table (and, with cascade, the tables referencing it). */
  | { op: 'truncate'; table: string };

export async function applyOps(db: Kysely<any>, ops: readonly WriteOp[]): Promise<void> {
  for (const op of ops) {
    if (op.op === 'insert') await db.insertInto(op.table).values(op.rows.map(encodeRow)).execute();
    else if (op.op === 'update') await db.updateTable(op.table).set(encodeRow(op.set)).where(op.where.col, op.where.op, op.where.value as any).execute();
    else if (op.op === 'delete') await db.deleteFrom(op.table).where(op.where.col, op.where.op, op.where.value as any).execute();
    else await sql`truncate ${sql.table(op.table)} cascade`.execute(db);
  }
}

function encodeRow(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'object' && v !== null ? JSON.stringify(v) : v]));
}

// ---- a case ----

export const TENANTS = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222'] as const;
export const USERS = ['u1', 'u2'] as const;

export interface SubscriberSpec {
  no: number;
  /** Which fw process it connects to first (0 or 1). */
  process: number;
  /** `get`: GET /live/:name read here; `client`: the fw client's multiplexed POST /live connection. */
  transport: 'get' | 'client';
  query: string;
  arg: number;
  tenant: string;
  user: string;
  /** Stops reading its socket while the writers run. */
  slow: boolean;
  /** Writer steps after which it drops its stream and resumes from its revision (on the other process, sometimes). */
  resumes: number[];
}

/** Who writes: the owner (a direct SQL session, any tenant), a direct session as the app role of a tenant, or an fw command over HTTP. */
export type Writer = { via: 'owner' } | { via: 'app'; tenant: string } | { via: 'http'; tenant: string; process: number };

export interface WriteStep {
  writer: number;
  ops: WriteOp[];
  /** Owner: autocommit (each op commits on its own) instead of one transaction. */
  autocommit?: boolean;
}

export interface CaseSpec {
  seed: number;
  caseNo: number;
  tables: TableSpec[];
  queries: LiveQuerySpec[];
  /** Rows written by the owner before anyone subscribes. */
  initial: WriteOp[];
  subscribers: SubscriberSpec[];
  writers: Writer[];
  /** Per writer, its steps in order (writers run concurrently). */
  steps: WriteStep[][];
}

export interface CaseSize {
  queries: number;
  subscribers: number;
  writers: number;
  steps: number;
  /** Two fw processes (PostgreSQL), or one (PGlite). */
  processes: number;
}

export function randomCase(seed: number, caseNo: number, size: CaseSize): CaseSpec {
  const rng = new Random((seed ^ Math.imul(caseNo + 1, 0x9e3779b1)) >>> 0);
  const tables = randomTables(rng);
  const tg = tables.find((t) => t.name === 'tg')!;
  const ids: Record<string, Array<{ id: string; tenant: string | null }>> = { ta: [], tb: [], tg: [] };
  const newRow = (table: TableSpec, tenant: string | null, withTenant: boolean): Record<string, unknown> => {
    const row: Record<string, unknown> = { id: rng.uuid() };
    if (table.tenantScoped && withTenant) row.tenant_id = tenant;
    for (const column of table.columns) {
      if (column.references) {
        const parents = ids[column.references.table]!.filter((p) => p.tenant === tenant);
        row[column.name] = parents.length > 0 && rng.chance(0.7) ? rng.pick(parents).id : null;
      } else row[column.name] = column.nullable && rng.chance(0.2) ? null : value(rng, column.kind);
    }
    ids[table.name]!.push({ id: row.id as string, tenant: table.tenantScoped ? tenant : null });
    return row;
  };
  const initial: WriteOp[] = [];
  for (const table of tables) {
    const rows: Array<Record<string, unknown>> = [];
    const count = rng.int(4, 10);
    for (let i = 0; i < count; i++) rows.push(newRow(table, table.tenantScoped ? rng.pick(TENANTS) : null, true));
    initial.push({ op: 'insert', table: table.name, rows });
  }
  const queries = Array.from({ length: size.queries }, (_, i) => randomLiveQuery(rng, `q${i}`));
  // One liveQuery with big frames (rows of 300 000 characters or more), which slow readers mostly take:
  // a few of its snapshots fill a paused reader's socket, and the server's backpressure applies.
  const bigTable = rng.pick(['ta', 'tb'] as const);
  const big: LiveQuerySpec = {
    name: `q${queries.length}`,
    query: { shape: 'plain', table: bigTable, where: rng.chance(0.7) ? [] : conds(rng, bigTable, 1, 1), cols: rng.subset(COLUMNS[bigTable]!.map((c) => c.name), 1, 3) },
    pad: 300_000,
  };
  if (condsOf(big.query).some((c) => c.c === 'clock')) big.refreshMs = 3_600_000;
  if (condsOf(big.query).some((c) => c.c === 'fn')) big.reads = ['ta', 'tb'];
  queries.push(big);
  const subscribers: SubscriberSpec[] = [];
  for (let no = 0; no < size.subscribers; no++) {
    const tenant = rng.pick(TENANTS);
    const slow = rng.chance(0.25);
    subscribers.push({
      no,
      process: rng.int(0, size.processes - 1),
      transport: rng.chance(0.5) ? 'get' : 'client',
      query: (slow && rng.chance(0.7) ? big : rng.pick(queries)).name,
      arg: rng.int(0, 9),
      tenant,
      // Few users and args: groups with several subscribers, and groups of one identity batched and multiplexed.
      user: rng.pick(USERS),
      slow,
      resumes: rng.chance(0.35) ? [...new Set(Array.from({ length: rng.int(1, 2) }, () => rng.int(0, size.steps - 1)))] : [],
    });
  }
  const writers: Writer[] = Array.from({ length: size.writers }, (_, i): Writer => {
    const via = i === 0 ? 'owner' : rng.pick(['owner', 'app', 'http', 'http'] as const);
    if (via === 'owner') return { via };
    if (via === 'app') return { via, tenant: rng.pick(TENANTS) };
    return { via, tenant: rng.pick(TENANTS), process: rng.int(0, size.processes - 1) };
  });
  const steps: WriteStep[][] = writers.map(() => []);
  for (let i = 0; i < size.steps; i++) {
    const w = rng.int(0, writers.length - 1);
    const writer = writers[w]!;
    const tenantOf = () => (writer.via === 'owner' ? rng.pick(TENANTS) : writer.tenant);
    const ops: WriteOp[] = [];
    // Now and then the owner writes in bulk (more than the 32 values a log row lists per column: "any
    // value") or truncates a table ("anything").
    if (writer.via === 'owner' && rng.chance(0.06)) {
      const table = rng.pick(tables);
      const tenant = table.tenantScoped ? rng.pick(TENANTS) : null;
      ops.push({ op: 'insert', table: table.name, rows: Array.from({ length: rng.int(33, 40) }, () => newRow(table, tenant, true)) });
    } else if (writer.via === 'owner' && rng.chance(0.02)) {
      ops.push({ op: 'truncate', table: rng.pick(['tb', 'tg']) });
    }
    const count = rng.int(ops.length > 0 ? 0 : 1, 3);
    for (let j = 0; j < count; j++) {
      const table = rng.pick(writer.via === 'owner' || tg.tenantScoped ? tables : tables.filter((t) => t.name !== 'tg' || rng.chance(0.5)));
      const tenant = table.tenantScoped ? tenantOf() : null;
      const kind = rng.pick(['insert', 'insert', 'update', 'update', 'update', 'delete'] as const);
      const known = ids[table.name]!.filter((r) => r.tenant === tenant);
      if (kind === 'insert' || known.length === 0) {
        ops.push({ op: 'insert', table: table.name, rows: Array.from({ length: rng.int(1, 3) }, () => newRow(table, tenant, writer.via === 'owner')) });
      } else {
        const target = rng.chance(0.7)
          ? { col: 'id', op: 'in' as const, value: rng.subset(known, 1, 2).map((r) => r.id) }
          : { col: 'k', op: rng.pick(['=', '<=', '>='] as const), value: rng.int(0, 9) };
        if (kind === 'delete') ops.push({ op: 'delete', table: table.name, where: target });
        else {
          const set: Record<string, unknown> = {};
          for (const column of rng.subset(table.columns.filter((c) => !c.references || c.name === 'up'), 1, 3)) {
            if (column.references) {
              const parents = known.filter((p) => p.id !== (target.value as string[])[0]);
              set[column.name] = parents.length > 0 && rng.chance(0.6) ? rng.pick(parents).id : null;
            } else set[column.name] = column.nullable && rng.chance(0.15) ? null : value(rng, column.kind);
          }
          ops.push({ op: 'update', table: table.name, set, where: target });
        }
      }
    }
    steps[w]!.push({ writer: w, ops, ...(writer.via === 'owner' && rng.chance(0.3) ? { autocommit: true } : {}) });
  }
  return { seed, caseNo, tables, queries, initial, subscribers, writers, steps };
}

// ---- the app ----

export function buildApp(spec: Pick<CaseSpec, 'tables' | 'queries'>): AppDefinition {
  const entries = new Map<string, EntryDefinition>();
  for (const query of spec.queries) {
    entries.set(
      query.name,
      liveQuery({
        args: { k: z.number().int() },
        ...(query.reads ? { reads: query.reads } : {}),
        ...(query.refreshMs ? { refreshMs: query.refreshMs } : {}),
        handler: (ctx, args) => runLiveQuery(ctx.db as Kysely<any>, query, args.k),
      }) as EntryDefinition,
    );
  }
  entries.set(
    'write',
    command({
      args: { ops: z.array(z.any()) },
      handler: async (ctx, args) => {
        await applyOps(ctx.db as Kysely<any>, args.ops as WriteOp[]);
        return 'ok';
      },
    }) as EntryDefinition,
  );
  return { entries, policies: definePolicies({}), schema: buildSchema(spec.tables) };
}
