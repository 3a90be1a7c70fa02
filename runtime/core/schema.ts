import type { ColumnType, Generated } from 'kysely';

/** What a column stores, as fw knows it. Every kind maps to one PostgreSQL type. */
export type ColumnKind =
  | 'uuid'
  | 'text'
  | 'integer'
  | 'bigint'
  | 'numeric'
  | 'boolean'
  | 'timestamptz'
  | 'date'
  | 'jsonb'
  | 'enum';

export type ColumnDefault =
  | { kind: 'random_uuid' }
  | { kind: 'now' }
  | { kind: 'value'; value: string | number | boolean | null | object };

export type ReferentialAction = 'cascade' | 'restrict' | 'set null' | 'no action';

/** The plain-data description of a column that migrations work from. */
export interface ColumnSpec {
  kind: ColumnKind;
  nullable: boolean;
  primaryKey: boolean;
  unique: boolean;
  default?: ColumnDefault;
  references?: { table: string; column: string; onDelete: ReferentialAction };
  /** For `enum` columns: the allowed values, in order. */
  values?: readonly string[];
}

/**
 * A column builder. Every method returns a new column; the type parameters track what a row holds
 * (`S`), whether it may be null (`N`), whether the database fills it in (`D`) and the kind (`K`).
 */
export class Column<S, N extends boolean = false, D extends boolean = false, K extends ColumnKind = ColumnKind> {
  declare readonly __select: S;
  declare readonly __nullable: N;
  declare readonly __hasDefault: D;
  declare readonly __kind: K;
  readonly spec: ColumnSpec;

  constructor(spec: ColumnSpec) {
    this.spec = spec;
  }

  /** The column may hold NULL (inserts may leave it out). */
  nullable(): Column<S, true, D, K> {
    return new Column({ ...this.spec, nullable: true });
  }

  /** The primary key (implies NOT NULL). */
  primaryKey(): Column<S, false, D, K> {
    return new Column({ ...this.spec, primaryKey: true, nullable: false });
  }

  unique(): Column<S, N, D, K> {
    return new Column({ ...this.spec, unique: true });
  }

  /** A constant default, so inserts may leave the column out. */
  default(value: S & (string | number | boolean | object)): Column<S, N, true, K> {
    return new Column({ ...this.spec, default: { kind: 'value', value } });
  }

  /** A foreign key to `table.column` (default column `id`). */
  references(table: string, column = 'id', options: { onDelete?: ReferentialAction } = {}): Column<S, N, D, K> {
    return new Column({ ...this.spec, references: { table, column, onDelete: options.onDelete ?? 'no action' } });
  }

  /** uuid columns: filled with `gen_random_uuid()` on insert. */
  defaultRandom(this: Column<S, N, D, 'uuid'>): Column<S, N, true, K> {
    if (this.spec.kind !== 'uuid') throw new TypeError(`fw: defaultRandom() is for t.uuid() columns, not ${this.spec.kind}.`);
    return new Column({ ...this.spec, default: { kind: 'random_uuid' } });
  }

  /** timestamptz columns: filled with the transaction's `now()` on insert. */
  defaultNow(this: Column<S, N, D, 'timestamptz'>): Column<S, N, true, K> {
    if (this.spec.kind !== 'timestamptz') throw new TypeError(`fw: defaultNow() is for t.timestamptz() columns, not ${this.spec.kind}.`);
    return new Column({ ...this.spec, default: { kind: 'now' } });
  }
}

const base = (kind: ColumnKind, extra: Partial<ColumnSpec> = {}): ColumnSpec => ({
  kind,
  nullable: false,
  primaryKey: false,
  unique: false,
  ...extra,
});

/**
 * Column constructors.
 *
 * @example
 *   t.uuid().primaryKey().defaultRandom()
 *   t.enum(['open', 'closed']).default('open')
 */
export const t = {
  uuid: () => new Column<string, false, false, 'uuid'>(base('uuid')),
  text: () => new Column<string, false, false, 'text'>(base('text')),
  integer: () => new Column<number, false, false, 'integer'>(base('integer')),
  /** 64-bit integers arrive as strings (JavaScript numbers cannot hold them exactly). */
  bigint: () => new Column<string, false, false, 'bigint'>(base('bigint')),
  /** Exact decimals arrive as strings. */
  numeric: () => new Column<string, false, false, 'numeric'>(base('numeric')),
  boolean: () => new Column<boolean, false, false, 'boolean'>(base('boolean')),
  timestamptz: () => new Column<Date, false, false, 'timestamptz'>(base('timestamptz')),
  date: () => new Column<Date, false, false, 'date'>(base('date')),
  jsonb: <T = unknown>() => new Column<T, false, false, 'jsonb'>(base('jsonb')),
  enum: <const V extends readonly [string, ...string[]]>(values: V) =>
    new Column<V[number], false, false, 'enum'>(base('enum', { values })),
};

export interface IndexSpec<C extends string = string> {
  columns: readonly C[];
  unique?: boolean;
}

export interface TableOptions<C extends string> {
  /**
   * Tenant-scoped tables (the default) get a `tenant_id` column filled from the request's tenant and a
   * row-level-security policy, so a request can only ever see and write its own tenant's rows.
   * Say `false` for data shared by all tenants.
   */
  tenantScoped?: boolean;
  indexes?: readonly IndexSpec<C>[];
}

export type Columns = Record<string, Column<any, boolean, boolean, ColumnKind>>;

export interface Table<C extends Columns = Columns, T extends boolean = boolean> {
  readonly columns: C;
  readonly tenantScoped: T;
  readonly indexes: readonly IndexSpec<string>[];
}

/**
 * Declares a table.
 *
 * @example
 *   notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text() })
 */
export function table<C extends Columns, const O extends TableOptions<keyof C & string> = {}>(
  columns: C,
  options?: O,
): Table<C, O extends { tenantScoped: false } ? false : true> {
  if ('tenant_id' in columns) {
    throw new Error('fw: `tenant_id` is reserved: tenant-scoped tables get it automatically. Rename the column.');
  }
  return {
    columns,
    tenantScoped: (options?.tenantScoped ?? true) as never,
    indexes: options?.indexes ?? [],
  };
}

export interface Schema<T extends Record<string, Table> = Record<string, Table>> {
  readonly tables: T;
}

/**
 * Declares the app's tables. Export it as the default export of `src/fw/schema.ts` and register its
 * type so `ctx.db` is typed:
 *
 * @example
 *   export default defineSchema({ notes: table({ … }) });
 *   declare module 'fwjs' { interface Register { schema: typeof schema } }
 */
export function defineSchema<T extends Record<string, Table>>(tables: T): Schema<T> {
  for (const name of Object.keys(tables)) {
    if (name.startsWith('_fw_')) throw new Error(`fw: table names starting with _fw_ are reserved (${name}).`);
  }
  return { tables };
}

// ---- Kysely types derived from a schema ----

type Writable<S> = S extends Date ? Date | string : S;
type OrNull<S, N> = N extends true ? S | null : S;

// Select type, insert type (optional when the database fills it in or it may be null), update type.
type KyselyColumn<C> =
  C extends Column<infer S, infer N, infer D, any>
    ? ColumnType<
        OrNull<S, N>,
        D extends true ? OrNull<Writable<S>, N> | undefined : N extends true ? Writable<S> | null | undefined : Writable<S>,
        OrNull<Writable<S>, N>
      >
    : never;

type KyselyTable<T> =
  T extends Table<infer C, infer TS>
    ? { [K in keyof C]: KyselyColumn<C[K]> } & (TS extends true ? { tenant_id: Generated<string> } : {})
    : never;

/** The Kysely database type of a schema. */
export type Database<S> = S extends Schema<infer T> ? { [K in keyof T]: KyselyTable<T[K]> } : never;
