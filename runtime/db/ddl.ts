/**
 * The SQL fw writes for an app schema. Every statement names its schema explicitly (`ns`), so the same
 * functions build the real tables in `public` and the throwaway copy the planner introspects.
 */
import { createHash } from 'node:crypto';
import type { ColumnKind, ColumnSpec, Schema, Table } from '../core/schema.ts';
import { APP_ROLE } from './database.ts';
import { FW_SCHEMA, LIVE_NOTICE_SECRET, LIVE_NOTICE_SECRET_BYTES, SECRETS_TABLE } from './secrets.ts';

/** The PostgreSQL schema (namespace) that holds the app's tables. */
export const PUBLIC = 'public';
export const TENANT_COLUMN = 'tenant_id';
export const TENANT_POLICY = 'fw_tenant_isolation';
/**
 * The request's tenant as a column default, as set by `FwDatabase.transaction` (NULL when there is
 * none). Unverified on purpose (a default cannot hold a subquery, and a function call per inserted row
 * would cost): the policy's WITH CHECK verifies every row against `VERIFIED_TENANT`.
 */
export const CURRENT_TENANT = "nullif(current_setting('fw.tenant_id', true), '')::uuid";
/**
 * The request's tenant as row-level security reads it: `_fw.tenant_id()` refuses a tenant that SQL in
 * the transaction changed (db/request-identity.ts). A subquery, so PostgreSQL evaluates it once per
 * statement (an InitPlan) rather than once per row.
 */
export const VERIFIED_TENANT = '(select "_fw"."tenant_id"())';
/** Whether the statement runs under a verified request identity (any kind): an InitPlan, once per statement. */
export const VERIFIED_IDENTITY = '(select "_fw"."verified"())';
/** The policy of tables that are not tenant-scoped: every tenant may use them, nobody without an identity. */
export const IDENTITY_POLICY = 'fw_verified_identity';
/** The comment fw puts on the indexes it creates, so it only ever drops its own. */
export const INDEX_MARKER = 'fw:index';

const columnTypes: Record<Exclude<ColumnKind, 'enum'>, string> = {
  uuid: 'uuid',
  text: 'text',
  integer: 'integer',
  bigint: 'bigint',
  numeric: 'numeric',
  boolean: 'boolean',
  timestamptz: 'timestamptz',
  date: 'date',
  jsonb: 'jsonb',
};

/** A quoted identifier. */
export function ident(name: string): string {
  if (name.includes('\0')) throw new Error(`fw: identifiers must not contain NUL characters (${JSON.stringify(name)}).`);
  return `"${name.replaceAll('"', '""')}"`;
}

/** A SQL string literal (standard_conforming_strings, on since PostgreSQL 9.1: only `'` is doubled). */
export function literal(value: string): string {
  if (value.includes('\0')) throw new Error('fw: string literals must not contain NUL characters.');
  return `'${value.replaceAll("'", "''")}'`;
}

export const MAX_IDENTIFIER_BYTES = 63;

/** PostgreSQL's identifier truncation: at most 63 bytes, never splitting a character. */
export function truncateIdentifier(name: string): string {
  if (Buffer.byteLength(name) <= MAX_IDENTIFIER_BYTES) return name;
  let out = '';
  for (const char of name) {
    if (Buffer.byteLength(out + char) > MAX_IDENTIFIER_BYTES) break;
    out += char;
  }
  return out;
}

export function qualified(ns: string, name: string): string {
  return `${ident(ns)}.${ident(name)}`;
}

/** The native enum type of an `enum` column. */
export function enumTypeName(table: string, column: string): string {
  return `${table}_${column}`;
}

export interface DesiredIndex {
  name: string;
  table: string;
  columns: string[];
  unique: boolean;
}

/**
 * The indexes fw maintains on a table: the declared ones, plus `tenant_id` for tenant-scoped tables. A
 * unique index of a tenant-scoped table is unique within the tenant: `(tenant_id, …)` (see
 * {@link uniqueColumns}); its name stays the declared columns'.
 */
export function desiredIndexes(tableName: string, table: Table): DesiredIndex[] {
  const indexes: DesiredIndex[] = [];
  if (table.tenantScoped) indexes.push(indexSpec(tableName, [TENANT_COLUMN], false));
  for (const index of table.indexes) {
    const unique = index.unique === true;
    indexes.push(indexSpec(tableName, [...index.columns], unique, unique && table.tenantScoped ? [TENANT_COLUMN, ...index.columns] : [...index.columns]));
  }
  return indexes;
}

function indexSpec(table: string, named: string[], unique: boolean, columns = named): DesiredIndex {
  return { name: `${table}_${named.join('_')}_${unique ? 'key' : 'idx'}`, table, columns, unique };
}

/**
 * What a unique column is unique across. In a tenant-scoped table, the tenant: `(tenant_id, column)`,
 * so two tenants may hold the same value — and, the reason it is not a matter of taste, a write never
 * learns from a unique violation that another tenant holds a value (a global constraint answers
 * "exists" for rows row-level security hides). Only a column a table shared by all tenants references
 * stays `(column)`: that foreign key names the column alone, and needs it unique on exactly that
 * (docs/migrations.md).
 */
export function uniqueColumns(schema: Schema, tableName: string, column: string): string[] {
  if (!schema.tables[tableName]?.tenantScoped) return [column];
  const referencedFromShared = Object.values(schema.tables).some(
    (other) => !other.tenantScoped && Object.values(other.columns).some(({ spec }) => spec.references?.table === tableName && spec.references.column === column),
  );
  return referencedFromShared ? [column] : [TENANT_COLUMN, column];
}

/**
 * Whether the foreign key of `table`'s column `spec` stays within the tenant: both tables are
 * tenant-scoped, so the key is `(tenant_id, column) → (tenant_id, referenced)`. PostgreSQL checks
 * and cascades foreign keys as the owner, past row-level security: a key on the column alone would let
 * a row point at another tenant's row (and learn from the error that it exists), keep that tenant from
 * deleting it (`no action`), or be deleted or changed by that tenant's delete (`cascade`, `set null`).
 */
export function isTenantReference(schema: Schema, table: string, spec: ColumnSpec): boolean {
  const target = spec.references?.table;
  return Boolean(target && schema.tables[table]?.tenantScoped && schema.tables[target]?.tenantScoped);
}

/** The name of the `(tenant_id, column)` unique constraint a key column gets when tenant tables reference it. */
export function tenantKeyName(table: string, column: string): string {
  return truncateIdentifier(`${table}_${column}_tenant_key`);
}

/**
 * Whether `table.column` needs a unique constraint on `(tenant_id, column)` besides its own key, for the
 * foreign keys of tenant tables that reference it: a primary key, or a unique column that a shared
 * table references too (so its own constraint stays on the column alone).
 */
export function needsTenantKey(schema: Schema, table: string, column: string): boolean {
  const spec = schema.tables[table]?.columns[column]?.spec;
  if (!spec || !schema.tables[table]!.tenantScoped) return false;
  const referenced = Object.entries(schema.tables).some(([name, other]) =>
    Object.values(other.columns).some(({ spec: s }) => s.references?.table === table && s.references.column === column && isTenantReference(schema, name, s)),
  );
  if (!referenced) return false;
  const singleKey = primaryKeyColumns(schema.tables[table]!).join(',') === column;
  return singleKey || (spec.unique === true && uniqueColumns(schema, table, column).length === 1);
}

/** The `(tenant_id, column)` unique constraint of {@link needsTenantKey}. */
export function tenantKeyConstraint(table: string, column: string): string {
  return `constraint ${ident(tenantKeyName(table, column))} unique (${ident(TENANT_COLUMN)}, ${ident(column)})`;
}

/** The default expression of a column, or null when it has none. */
export function defaultSql(ns: string, table: string, column: string, spec: ColumnSpec): string | null {
  const fallback = spec.default;
  if (!fallback) return null;
  if (fallback.kind === 'random_uuid') return 'gen_random_uuid()';
  if (fallback.kind === 'now') return 'now()';
  const value = fallback.value;
  if (value === null || value === undefined) return null;
  const type = columnType(ns, table, column, spec);
  if (spec.kind === 'jsonb') return `${literal(JSON.stringify(value))}::jsonb`;
  if (typeof value === 'boolean') return `${value}::${type}`;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`fw: the default of ${table}.${column} is not a finite number.`);
    return `${literal(String(value))}::${type}`;
  }
  if (value instanceof Date) {
    const iso = value.toISOString();
    return `${literal(spec.kind === 'date' ? iso.slice(0, 10) : iso)}::${type}`;
  }
  if (typeof value === 'string') return `${literal(value)}::${type}`;
  throw new Error(`fw: the default of ${table}.${column} (${spec.kind}) must be a string, number, boolean or Date.`);
}

export function columnType(ns: string, table: string, column: string, spec: ColumnSpec): string {
  return spec.kind === 'enum' ? qualified(ns, enumTypeName(table, column)) : columnTypes[spec.kind];
}

/** `"name" type [not null] [default …]`: constraints are separate (see `columnConstraints`). */
export function columnDefinition(ns: string, table: string, column: string, spec: ColumnSpec): string {
  const parts = [ident(column), columnType(ns, table, column, spec)];
  if (!spec.nullable || spec.primaryKey) parts.push('not null');
  const fallback = defaultSql(ns, table, column, spec);
  if (fallback !== null) parts.push(`default ${fallback}`);
  return parts.join(' ');
}

export function primaryKeyConstraint(table: string, columns: string[]): string {
  return `constraint ${ident(`${table}_pkey`)} primary key (${columns.map(ident).join(', ')})`;
}

/** The unique constraint of `table.column`, over {@link uniqueColumns}; named after the column alone. */
export function uniqueConstraint(schema: Schema, table: string, column: string): string {
  return `constraint ${ident(`${table}_${column}_key`)} unique (${uniqueColumns(schema, table, column).map(ident).join(', ')})`;
}

/** The foreign key of `table.column`: within the tenant when both tables are tenant-scoped ({@link isTenantReference}). */
export function foreignKeyConstraint(ns: string, schema: Schema, table: string, column: string, spec: ColumnSpec): string {
  const ref = spec.references!;
  const withinTenant = isTenantReference(schema, table, spec);
  const columns = withinTenant ? [TENANT_COLUMN, column] : [column];
  const referenced = withinTenant ? [TENANT_COLUMN, ref.column] : [ref.column];
  // SET NULL clears the referencing column only: tenant_id is the row's own tenant, and NOT NULL.
  const onDelete = withinTenant && ref.onDelete === 'set null' ? `set null (${ident(column)})` : ref.onDelete;
  return (
    `constraint ${ident(`${table}_${column}_fkey`)} foreign key (${columns.map(ident).join(', ')}) ` +
    `references ${qualified(ns, ref.table)} (${referenced.map(ident).join(', ')}) on delete ${onDelete}`
  );
}

export function primaryKeyColumns(table: Table): string[] {
  return Object.entries(table.columns)
    .filter(([, column]) => column.spec.primaryKey)
    .map(([name]) => name);
}

/**
 * `create table` with its columns, primary key, unique and foreign-key constraints, plus the grants
 * to the app role. Foreign keys on the columns in `deferForeignKeys` are left out (the caller adds them
 * with `addForeignKeySql` once the referenced table exists).
 */
export function createTableSql(ns: string, name: string, table: Table, deferForeignKeys: ReadonlySet<string>, schema: Schema): string[] {
  const lines: string[] = [];
  for (const [column, { spec }] of Object.entries(table.columns)) lines.push(columnDefinition(ns, name, column, spec));
  if (table.tenantScoped) lines.push(`${ident(TENANT_COLUMN)} uuid not null default ${CURRENT_TENANT}`);
  const primaryKey = primaryKeyColumns(table);
  if (primaryKey.length > 0) lines.push(primaryKeyConstraint(name, primaryKey));
  for (const [column, { spec }] of Object.entries(table.columns)) {
    if (spec.unique && !(spec.primaryKey && primaryKey.length === 1)) lines.push(uniqueConstraint(schema, name, column));
    if (needsTenantKey(schema, name, column)) lines.push(tenantKeyConstraint(name, column));
  }
  for (const [column, { spec }] of Object.entries(table.columns)) {
    if (spec.references && !deferForeignKeys.has(column)) lines.push(foreignKeyConstraint(ns, schema, name, column, spec));
  }
  return [`create table ${qualified(ns, name)} (\n  ${lines.join(',\n  ')}\n)`, grantSql(ns, name)];
}

/** What every app table grants the request role. (fw's column kinds create no sequences.) */
export function grantSql(ns: string, table: string): string {
  return `grant select, insert, update, delete on ${qualified(ns, table)} to ${ident(APP_ROLE)}`;
}

export function addForeignKeySql(ns: string, schema: Schema, table: string, column: string, spec: ColumnSpec): string {
  return `alter table ${qualified(ns, table)} add ${foreignKeyConstraint(ns, schema, table, column, spec)}`;
}

/**
 * Adds one column with its unique constraint (and its foreign key unless `withForeignKey` is false: the
 * planner adds a key within the tenant last, once the referenced key exists).
 */
export function addColumnSql(ns: string, table: string, column: string, spec: ColumnSpec, schema: Schema, withForeignKey = true): string {
  const parts = [`add column ${columnDefinition(ns, table, column, spec)}`];
  if (spec.unique) parts.push(`add ${uniqueConstraint(schema, table, column)}`);
  if (spec.references && withForeignKey) parts.push(`add ${foreignKeyConstraint(ns, schema, table, column, spec)}`);
  return `alter table ${qualified(ns, table)} ${parts.join(', ')}`;
}

export function createEnumSql(ns: string, name: string, values: readonly string[]): string {
  return `create type ${qualified(ns, name)} as enum (${values.map(literal).join(', ')})`;
}

export function addEnumValueSql(ns: string, name: string, value: string, position: { after: string } | { before: string } | null): string {
  const where = !position ? '' : 'after' in position ? ` after ${literal(position.after)}` : ` before ${literal(position.before)}`;
  return `alter type ${qualified(ns, name)} add value ${literal(value)}${where}`;
}

export function createIndexSql(ns: string, index: DesiredIndex): string[] {
  return [
    `create ${index.unique ? 'unique ' : ''}index ${ident(index.name)} on ${qualified(ns, index.table)} using btree (${index.columns.map(ident).join(', ')})`,
    `comment on index ${qualified(ns, index.name)} is ${literal(INDEX_MARKER)}`,
  ];
}

export function dropIndexSql(ns: string, name: string): string {
  return `drop index ${qualified(ns, name)}`;
}

/** Row-level security that confines every statement to the request's tenant (also for the owner). */
export function tenantPolicySql(ns: string, table: string): string[] {
  const target = qualified(ns, table);
  const check = `(${ident(TENANT_COLUMN)} = ${VERIFIED_TENANT})`;
  return [
    `alter table ${target} enable row level security`,
    `alter table ${target} force row level security`,
    `drop policy if exists ${ident(TENANT_POLICY)} on ${target}`,
    `create policy ${ident(TENANT_POLICY)} on ${target} using ${check} with check ${check}`,
  ];
}

/**
 * Row-level security for a table every tenant shares: a statement without a verified request identity
 * (SQL left outside fw's transaction, or one whose identity was changed) can neither read nor write it.
 * Not forced, so the owner (migrations, fw's bookkeeping) is not subject to it.
 */
export function identityPolicySql(ns: string, table: string): string[] {
  const target = qualified(ns, table);
  return [
    `alter table ${target} enable row level security`,
    `alter table ${target} no force row level security`,
    `drop policy if exists ${ident(IDENTITY_POLICY)} on ${target}`,
    `create policy ${ident(IDENTITY_POLICY)} on ${target} using (${VERIFIED_IDENTITY}) with check (${VERIFIED_IDENTITY})`,
  ];
}

/**
 * All statements that create `schema` from nothing in `ns`, tables ordered so that referenced tables
 * come first (foreign keys of a cycle are added after both tables exist).
 */
export function createSchemaSql(ns: string, schema: Schema): Array<{ table: string; sql: string[] }> {
  const out: Array<{ table: string; sql: string[] }> = [];
  for (const [table, spec] of Object.entries(schema.tables)) {
    for (const [column, { spec: columnSpec }] of Object.entries(spec.columns)) {
      if (columnSpec.kind === 'enum') out.push({ table, sql: [createEnumSql(ns, enumTypeName(table, column), columnSpec.values ?? [])] });
    }
  }
  const tables = new Map(Object.entries(schema.tables));
  for (const step of creationOrder(tables, new Set(tables.keys()))) {
    const table = tables.get(step.table)!;
    const sql = createTableSql(ns, step.table, table, step.deferred, schema);
    for (const late of step.lateForeignKeys) sql.push(addForeignKeySql(ns, schema, late.table, late.column, tables.get(late.table)!.columns[late.column]!.spec));
    out.push({ table: step.table, sql });
  }
  for (const [table, spec] of tables) {
    const sql = desiredIndexes(table, spec).flatMap((index) => createIndexSql(ns, index));
    sql.push(...(spec.tenantScoped ? tenantPolicySql(ns, table) : identityPolicySql(ns, table)));
    if (sql.length > 0) out.push({ table, sql });
  }
  return out;
}

export interface CreationStep {
  table: string;
  /** Foreign-key columns of this table whose referenced table is created later. */
  deferred: Set<string>;
  /** Foreign keys of earlier tables that point at this one, to add right after creating it. */
  lateForeignKeys: Array<{ table: string; column: string }>;
}

/**
 * The order in which to create the `creating` tables: depth first, referenced tables before the tables
 * that reference them. A foreign key that closes a cycle is deferred to the referenced table's step.
 */
export function creationOrder(tables: ReadonlyMap<string, Table>, creating: ReadonlySet<string>): CreationStep[] {
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string): void => {
    if (state.has(name)) return;
    state.set(name, 'visiting');
    for (const column of Object.values(tables.get(name)!.columns)) {
      const target = column.spec.references?.table;
      if (target && target !== name && creating.has(target) && tables.has(target)) visit(target);
    }
    state.set(name, 'done');
    order.push(name);
  };
  for (const name of [...creating].sort()) visit(name);

  const position = new Map(order.map((name, index) => [name, index]));
  const steps = new Map<string, CreationStep>(order.map((name) => [name, { table: name, deferred: new Set(), lateForeignKeys: [] }]));
  for (const name of order) {
    for (const [column, { spec }] of Object.entries(tables.get(name)!.columns)) {
      const target = spec.references?.table;
      if (!target || target === name || !position.has(target)) continue;
      if (position.get(target)! > position.get(name)!) {
        steps.get(name)!.deferred.add(column);
        steps.get(target)!.lateForeignKeys.push({ table: name, column });
      }
    }
  }
  return order.map((name) => steps.get(name)!);
}


// ---- fw's own bookkeeping ----

/** One of fw's own tables: the statements that create it (with its indexes), run only while it is missing. */
export interface SystemTable {
  name: string;
  create: readonly string[];
}

/** AI runs and model calls, for `fw ai trace` (see runtime/ai/traces.ts). */
export const AI_RUNS_TABLE = '_fw_ai_runs';
export const WORKFLOW_RUNS_TABLE = '_fw_workflow_runs';
export const WORKFLOW_STEPS_TABLE = '_fw_workflow_steps';
/** The live invalidation log (see runtime/live/log.ts and docs/live.md). */
export const LIVE_LOG_TABLE = '_fw_live_invalidations';
/** The one-row state of the log: `pruned_through`. */
export const LIVE_STATE_TABLE = '_fw_live_state';
/** The sequence behind `_fw_live_invalidations.revision`. */
export const LIVE_REVISION_SEQUENCE = '_fw_live_invalidations_revision_seq';
/** The name of fw's capture triggers start with this (one per event and table). */
export const LIVE_TRIGGER_PREFIX = '_fw_live_';
/** The uuid that stands for "no tenant" (every tenant) in the log's dedupe index. */
export const NO_TENANT_UUID = '00000000-0000-0000-0000-000000000000';

const app = ident(APP_ROLE);

/**
 * fw's own tables. `ensureSystemTables` creates each one that is missing, in one transaction under
 * the migration lock, so two processes never race half-way.
 *
 * `_fw_live_invalidations` gets one row per transaction x table x tenant (`tenant_id` null = every
 * tenant). `created_at` is `clock_timestamp()`, not `now()`: pruning relies on it being no earlier
 * than the snapshot `horizon` was taken from (see `pruneInvalidations`). The sequence must keep
 * `cache 1` (the default): the gap-safe reader relies on revisions being handed out in time order.
 * The app role gets no privilege on the log: it writes through the SECURITY DEFINER functions below.
 */
export const systemTables: readonly SystemTable[] = [
  {
    name: '_fw_migrations',
    create: [
      `create table if not exists "public"."_fw_migrations" (
    id serial primary key,
    applied_at timestamptz not null default now(),
    checksum text not null,
    fw_version text not null,
    changes jsonb not null
  )`,
    ],
  },
  {
    name: '_fw_outbox',
    create: [
      `create table if not exists "public"."_fw_outbox" (
    id bigserial primary key,
    event text not null,
    payload jsonb,
    tenant_id uuid,
    user_id text,
    trace_id text,
    status text not null default 'pending',
    attempts integer not null default 0,
    available_at timestamptz not null default now(),
    created_at timestamptz not null default now()
  )`,
    ],
  },
  {
    name: LIVE_LOG_TABLE,
    create: [
      `create table if not exists "public"."${LIVE_LOG_TABLE}" (
    revision bigserial primary key,
    xid xid8 not null default pg_current_xact_id(),
    horizon xid8 not null default pg_snapshot_xmin(pg_current_snapshot()),
    table_name text not null,
    tenant_id uuid,
    trace_id text default nullif(current_setting('fw.trace_id', true), ''),
    created_at timestamptz not null default clock_timestamp(),
    changes jsonb
  )`,
      // One row per transaction x table x tenant; also serves lookups by xid (pending transactions,
      // resume checks, pruning).
      `create unique index if not exists "_fw_live_invalidations_dedupe" on "public"."${LIVE_LOG_TABLE}"
    (xid, table_name, coalesce(tenant_id, '${NO_TENANT_UUID}'::uuid))`,
      `create index if not exists "_fw_live_invalidations_created_at" on "public"."${LIVE_LOG_TABLE}" using brin (created_at)`,
      `revoke all on "public"."${LIVE_LOG_TABLE}" from public, ${app}`,
      `revoke all on sequence "public"."${LIVE_REVISION_SEQUENCE}" from public, ${app}`,
    ],
  },
  {
    name: LIVE_STATE_TABLE,
    create: [
      `create table if not exists "public"."${LIVE_STATE_TABLE}" (
    id boolean primary key default true check (id),
    pruned_through bigint not null default 0
  )`,
      `insert into "public"."${LIVE_STATE_TABLE}" (id) values (true) on conflict do nothing`,
      `revoke all on "public"."${LIVE_STATE_TABLE}" from public, ${app}`,
    ],
  },
  {
    // AI telemetry (runtime/ai/traces.ts): one row per agent run or model call. Counts and timings
    // only; `content` stays null unless the app opts in to recording prompts and outputs.
    name: AI_RUNS_TABLE,
    create: [
      `create table if not exists "public"."${AI_RUNS_TABLE}" (
    id bigserial primary key,
    trace_id text not null,
    kind text not null,
    agent text,
    provider text not null,
    model text not null,
    status text not null,
    error_code text,
    tenant_id uuid,
    user_id text,
    steps jsonb not null,
    approvals jsonb not null,
    input_tokens integer not null,
    output_tokens integer not null,
    latency_ms double precision not null,
    cost_usd numeric,
    content jsonb,
    created_at timestamptz not null default now()
  )`,
      `create index if not exists "_fw_ai_runs_trace_id" on "public"."${AI_RUNS_TABLE}" (trace_id)`,
      `revoke all on "public"."${AI_RUNS_TABLE}" from public, ${app}`,
    ],
  },
  {
    // Workflow runs (runtime/workflows/): one row per run, written by the outbox worker as the owner.
    // A run is started by an outbox row `fw.workflow:<name>` whose idempotency key is `workflow:<id>`.
    // Statuses: running → completed | failed | cancelled (retrying between failed attempts).
    name: WORKFLOW_RUNS_TABLE,
    create: [
      `create table if not exists "public"."${WORKFLOW_RUNS_TABLE}" (
    id uuid primary key,
    workflow text not null,
    status text not null,
    tenant_id uuid,
    user_id text,
    trace_id text,
    outbox_id bigint,
    attempts integer not null default 0,
    result jsonb,
    last_error text,
    cancel_requested_at timestamptz,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    finished_at timestamptz
  )`,
      `create index if not exists "_fw_workflow_runs_created_at" on "public"."${WORKFLOW_RUNS_TABLE}" (created_at desc)`,
      `revoke all on "public"."${WORKFLOW_RUNS_TABLE}" from public, ${app}`,
    ],
  },
  {
    // One row per finished step of a run: its output, so a resumed run does not run the step again.
    name: WORKFLOW_STEPS_TABLE,
    create: [
      `create table if not exists "public"."${WORKFLOW_STEPS_TABLE}" (
    run_id uuid not null references "public"."${WORKFLOW_RUNS_TABLE}" (id) on delete cascade,
    name text not null,
    output jsonb not null,
    attempt integer not null,
    duration_ms double precision not null,
    finished_at timestamptz not null default now(),
    primary key (run_id, name)
  )`,
      `revoke all on "public"."${WORKFLOW_STEPS_TABLE}" from public, ${app}`,
    ],
  },
];

/** The outbox of domain events (`ctx.emit`), delivered to actions by the worker (runtime/outbox/). */
export const OUTBOX_TABLE = '_fw_outbox';

/**
 * The outbox worker's columns (docs/events.md), added to every `_fw_outbox`, old or new: a table
 * created by an earlier fw gets them the same way as a fresh one. `ensureSystemTables` runs these when
 * one of `OUTBOX_WORKER_COLUMNS` is missing — not on every start, since ALTER TABLE takes an ACCESS
 * EXCLUSIVE lock even when there is nothing to add, and would queue every command's insert behind a
 * long-running transaction. Each statement is idempotent on its own.
 *
 * `idempotency_key` gets a fresh value per existing row (a volatile default is evaluated row by row).
 * Statuses: `pending` → `delivered` | `dead`.
 */
export const OUTBOX_WORKER_COLUMNS = ['lease_owner', 'lease_until', 'last_error', 'idempotency_key', 'delivered_at', 'dead_at', 'caller_kind', 'caller_role'] as const;
export const outboxWorkerSql: readonly string[] = [
  // `caller_kind` and `caller_role` complete the caller (tenant_id, user_id): a scheduled call
  // (runtime/schedule/) runs as all four. Rows already there, and the worker's own, get NULL.
  `alter table "public"."${OUTBOX_TABLE}"
    add column if not exists lease_owner text,
    add column if not exists lease_until timestamptz,
    add column if not exists last_error text,
    add column if not exists idempotency_key text not null default gen_random_uuid()::text,
    add column if not exists delivered_at timestamptz,
    add column if not exists dead_at timestamptz,
    add column if not exists caller_kind text default nullif(current_setting('fw.kind', true), ''),
    add column if not exists caller_role text default nullif(current_setting('fw.role', true), '')`,
  `create unique index if not exists "_fw_outbox_idempotency_key" on "public"."${OUTBOX_TABLE}" (idempotency_key)`,
  // What the worker's claim scans: pending rows by availability, oldest first.
  `create index if not exists "_fw_outbox_pending" on "public"."${OUTBOX_TABLE}" (available_at, id) where status = 'pending'`,
];

/**
 * Grants that run on every `ensureSystemTables` (idempotent). The app role has no privilege on the
 * outbox at all: it may not read it (every tenant's events), change it, or add to it — rows are the
 * worker's orders, so only fw's own code writes them: the owner directly (the worker, crons), a request
 * through `_fw.enqueue` with fw's proof ({@link intentFunctionsSql}).
 */
export const systemGrantsSql: readonly string[] = [
  `revoke all on "public"."${OUTBOX_TABLE}" from ${app}`,
  `revoke all on sequence "public"."_fw_outbox_id_seq" from ${app}`,
];

/**
 * Row-level security on the outbox with no policy for the app role: should a grant ever give it a
 * privilege, it still reaches no row. Replaces the policies of earlier fw versions, which let a request
 * insert rows of its own identity (`ensureSystemTables` runs this while one of them is there).
 */
export const OLD_OUTBOX_POLICIES = ['fw_outbox_caller', 'fw_outbox_verified_caller', 'fw_outbox_verified_caller_2'] as const;
export const outboxPolicySql: readonly string[] = [
  `alter table "public"."${OUTBOX_TABLE}" enable row level security`,
  ...OLD_OUTBOX_POLICIES.map((name) => `drop policy if exists "${name}" on "public"."${OUTBOX_TABLE}"`),
];

/**
 * Durable work a request leaves for later — outbox rows (`ctx.emit`, `ctx.startWorkflow`, `ctx.signal`,
 * `ctx.scheduler.runAfter`), cancelling a scheduled call, a scheduled command settling its own row — goes
 * through these SECURITY DEFINER functions, each of which first asks `_fw.check_proof` (request-identity.ts)
 * for fw's proof that fw made this statement in this transaction. Handler SQL — an injection — can call
 * them but cannot prove anything, so it can neither order work nor stop it.
 *
 * - `_fw.enqueue(rows, proof)`: adds outbox rows (a JSON array of `{event, payload, key, trace_id,
 *   available_at}`) as the verified caller: tenant, user, auth kind and role come from the claim, never from
 *   the rows. Rows whose key is there already are skipped.
 * - `_fw.cancel_call(key, scope, proof)`: `ctx.scheduler.cancel(id)` — a pending `call:` row of the
 *   caller's tenant not being run now becomes `cancelled`; scope `own` only when the caller scheduled it
 *   (same user), `tenant` any of the tenant's calls (fw's code chose it). Cron ticks are never requests'.
 * - `_fw.settle_call(id, owner, proof)`: a scheduled command marks its own row delivered inside its own
 *   transaction, so its writes and the `delivered` commit together (exactly once); it raises when `owner`
 *   no longer holds the row's lease (another worker took it over), which rolls the command back.
 * - `_fw.mcp_audit(row, proof)`: the audit row of an MCP tool call that ran a command, in the command's
 *   own transaction (so the write and its record commit together): user, tenant, role and auth kind
 *   come from the claim, the rest (client, entry, kind, args digest, outcome, trace id, approval) from
 *   the row fw wrote (db/mcp-audit.ts).
 */
export const INTENT_FUNCTIONS_MARKER = 'fw intent functions v2';
export const intentFunctionsSql: readonly string[] = [
  `drop function if exists "public"."_fw_cancel_call"(text)`,
  `drop function if exists "public"."_fw_settle_call"(bigint, text)`,
  `create or replace function "_fw"."enqueue"(p_rows text, p_proof text) returns void
  language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $fw$
begin
  perform "_fw"."check_proof"('enqueue', p_rows, p_proof);
  insert into "public"."${OUTBOX_TABLE}" (event, payload, tenant_id, user_id, caller_kind, caller_role, trace_id, idempotency_key, available_at)
  select r.event, r.payload, "_fw"."tenant_id"(), "_fw"."user_id"(), "_fw"."kind"(), "_fw"."role"(), r.trace_id, r.key, coalesce(r.available_at, now())
  from jsonb_to_recordset(p_rows::jsonb) as r(event text, payload jsonb, key text, trace_id text, available_at timestamptz)
  on conflict do nothing;
end
$fw$`,
  `create or replace function "_fw"."cancel_call"(p_key text, p_scope text, p_proof text) returns boolean
  language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $fw$
declare
  v_found integer;
begin
  perform "_fw"."check_proof"('cancel_call', concat_ws('|', p_key, p_scope), p_proof);
  update "public"."${OUTBOX_TABLE}" set status = 'cancelled', dead_at = now(), last_error = 'Cancelled by ctx.scheduler.cancel.'
  where idempotency_key = p_key and p_key like 'call:%' and event like 'fw.call:%' and status = 'pending'
    and (lease_until is null or lease_until < now())
    and tenant_id is not distinct from "_fw"."tenant_id"()
    and (p_scope = 'tenant' or user_id is not distinct from "_fw"."user_id"());
  get diagnostics v_found = row_count;
  return v_found > 0;
end
$fw$`,
  `create or replace function "_fw"."settle_call"(p_id bigint, p_owner text, p_proof text) returns void
  language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $fw$
declare
  v_found integer;
begin
  perform "_fw"."check_proof"('settle_call', concat_ws('|', p_id, p_owner), p_proof);
  update "public"."${OUTBOX_TABLE}" set status = 'delivered', delivered_at = now(), lease_owner = null, lease_until = null
  where id = p_id and event like 'fw.call:%' and status = 'pending' and lease_owner = p_owner
    and tenant_id is not distinct from "_fw"."tenant_id"();
  get diagnostics v_found = row_count;
  if v_found = 0 then
    raise exception 'fw: scheduled call #% is no longer held by this worker (its lease expired and another worker took it)', p_id using errcode = '40001';
  end if;
end
$fw$`,
  `create or replace function "_fw"."mcp_audit"(p_row text, p_proof text) returns void
  language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $fw$
begin
  perform "_fw"."check_proof"('mcp_audit', p_row, p_proof);
  insert into "_fw"."mcp_audit" (user_id, tenant_id, role, auth_kind, client, entry, kind, args_digest, outcome, trace_id, approval_id)
  select "_fw"."user_id"(), "_fw"."tenant_id"(), "_fw"."role"(), "_fw"."kind"(), r.client, r.entry, r.kind, r.args_digest, r.outcome, r.trace_id, r.approval_id
  from jsonb_to_record(p_row::jsonb) as r(client text, entry text, kind text, args_digest text, outcome text, trace_id text, approval_id text);
end
$fw$`,
  ...['enqueue(text, text)', 'cancel_call(text, text, text)', 'settle_call(bigint, text, text)', 'mcp_audit(text, text)'].flatMap((signature) => [
    `revoke all on function "_fw".${signature} from public`,
    `grant execute on function "_fw".${signature} to ${app}`,
  ]),
  `comment on function "_fw"."enqueue"(text, text) is '${INTENT_FUNCTIONS_MARKER}'`,
];

/**
 * Columns added to system tables after their first release, created when missing (a table made by an
 * earlier fw gets them): `[table, column, type]`.
 */
export const addedSystemColumns: ReadonlyArray<readonly [string, string, string]> = [
  // What a sleeping or waiting workflow run waits for (`{ kind: 'sleep', step, until }`).
  ['_fw_workflow_runs', 'waiting_for', 'jsonb'],
];

/**
 * Distinct values per captured column that one log row (transaction × table × tenant) records before it
 * says "any value" for the column; read sets keep IN lists up to the same size (live/read-set.ts).
 */
export const MAX_CAPTURED_VALUES = 1000;
/** A captured value longer than this (in characters) makes its column "any value". */
export const MAX_CAPTURED_VALUE_LENGTH = 200;

/**
 * The functions that write the live log, SECURITY DEFINER (they run as the migrating user, who owns the
 * log) with a pinned search_path, and the log's `changes` column (added here, so a log made by an older
 * fw gets it when the functions are upgraded).
 *
 * - `_fw_live_record(table, tenant, changes)` records one invalidation for the current transaction,
 *   deduplicated (one row per transaction x table x tenant; a second statement merges its changes into
 *   the row), and sends `NOTIFY fw_live` (delivered at commit): the first record of a transaction,
 *   table and tenant sends the row itself (revision, table, tenant, changes), signed with the owner-only
 *   secret `live.notice` (`sha256(k2 || sha256(k1 || row))`), which lets a listener rerun groups before
 *   it reads the log (hub.ts, "early runs"); a merge, a row too long for a notification or a missing
 *   key sends an empty payload, folded by PostgreSQL within a transaction. It assigns the transaction
 *   id *before* the revision is drawn from the sequence: the gap-safe reader relies on that order.
 *   `changes` is `{column: [values…] | null}` (null: any value);
 *   a null `changes` means anything may have changed. The two-argument form records that (the owner's);
 *   the three-argument form is the triggers' own. `_fw_live_record_request(table, tenant)` is the one
 *   the app role may call (through `recordInvalidations`): under a verified identity, for its own
 *   tenant or none.
 * - `_fw_live_values(images, columns)` is what the triggers record of a statement's rows: per captured
 *   column the distinct values (as `to_jsonb(row) ->> column` prints them) of the old and new images, or
 *   null for a column with more than `MAX_CAPTURED_VALUES` (1000) distinct values or a value longer than
 *   `MAX_CAPTURED_VALUE_LENGTH` (200) characters. The log row is then at most ~1000 × 200 characters a
 *   column; a notice that would pass 7800 bytes is a plain wakeup (the row is read from the log).
 * - `_fw_live_merge(a, b)` merges two of those per column; null (any) absorbs.
 *   Both are PL/pgSQL on generic plans, not SQL functions: a SQL function with a SET clause is never
 *   inlined, and is parsed and planned again for every statement that calls it — that was half of the
 *   capture trigger's cost (bench/live README, "After the cost pass").
 * - `_fw_live_capture(scope, columns…)` is the statement-level trigger on every app table. From the
 *   transition tables it records, per tenant the statement touched (INSERT: new rows, DELETE: old
 *   rows, UPDATE: both, so a row moved between tenants invalidates both, each with its own image), the
 *   values of the captured columns; tables that are not tenant-scoped (`global`) and TRUNCATE record
 *   null (every tenant). A statement that touched no row records nothing.
 */
export const liveFunctionsSql: readonly string[] = [
  `alter table "public"."${LIVE_LOG_TABLE}" add column if not exists changes jsonb`,
  `create or replace function "public"."_fw_live_merge"(a jsonb, b jsonb) returns jsonb
  language plpgsql immutable set search_path = pg_catalog set plan_cache_mode = force_generic_plan as $fw$
begin
  return (select case when a is null or b is null then null else (
    select coalesce(jsonb_object_agg(k.key, case
      when jsonb_typeof(a -> k.key) is distinct from 'array' or jsonb_typeof(b -> k.key) is distinct from 'array' then 'null'::jsonb
      else (select case when count(*) > ${MAX_CAPTURED_VALUES} then 'null'::jsonb else jsonb_agg(u.v) end
            from (select jsonb_array_elements(a -> k.key) as v union select jsonb_array_elements(b -> k.key)) u) end), '{}'::jsonb)
    from (select jsonb_object_keys(a) as key union select jsonb_object_keys(b)) k) end);
end
$fw$`,
  `create or replace function "public"."_fw_live_values"(p_images jsonb, p_columns text[]) returns jsonb
  language plpgsql immutable set search_path = pg_catalog set plan_cache_mode = force_generic_plan as $fw$
begin
  -- One row, as most statements write: its values as they are, without the distinct aggregation.
  if jsonb_array_length(p_images) = 1 then
    return (select coalesce(jsonb_object_agg(c.col, case when length(p_images -> 0 ->> c.col) > ${MAX_CAPTURED_VALUE_LENGTH} then 'null'::jsonb
      else jsonb_build_array(p_images -> 0 ->> c.col) end), '{}'::jsonb) from unnest(p_columns) as c(col));
  end if;
  return (select coalesce(jsonb_object_agg(c.col, c.vals), '{}'::jsonb) from (
    select x.col, case when count(distinct x.v) > ${MAX_CAPTURED_VALUES} or coalesce(max(length(x.v)), 0) > ${MAX_CAPTURED_VALUE_LENGTH} then 'null'::jsonb
      else jsonb_agg(distinct x.v) end as vals
    from (select col, img ->> col as v from unnest(p_columns) as col, jsonb_array_elements(p_images) as img) x
    group by x.col) c);
end
$fw$`,
  `create or replace function "public"."_fw_live_record"(p_table text, p_tenant uuid, p_changes jsonb) returns void
  language plpgsql security definer set search_path = pg_catalog, public as $fw$
declare
  v_xid xid8 := pg_current_xact_id(); -- assigns the transaction id before nextval() below
  v_revision bigint;
  v_key bytea;
  v_notice text;
begin
  if p_table is null then
    raise exception 'fw: _fw_live_record needs a table name';
  end if;
  update "public"."${LIVE_LOG_TABLE}" l set changes = "public"."_fw_live_merge"(l.changes, p_changes)
  where l.xid = v_xid and l.table_name = p_table
    and coalesce(l.tenant_id, '${NO_TENANT_UUID}'::uuid) = coalesce(p_tenant, '${NO_TENANT_UUID}'::uuid);
  if found then
    perform pg_notify('fw_live', '');
    return;
  end if;
  insert into "public"."${LIVE_LOG_TABLE}" (xid, table_name, tenant_id, changes) values (v_xid, p_table, p_tenant, p_changes)
  returning revision into v_revision;
  -- The transaction's revisions so far, for a command whose caller asked for them (optimistic updates
  -- in the client: a UI hint, never trusted). Transaction-local; the SET clause restores search_path only.
  perform set_config('fw.live_revisions', concat_ws(',', nullif(current_setting('fw.live_revisions', true), ''), v_revision::text), true);
  -- The row itself, signed (the app role can send any NOTIFY, never this MAC): a listener may act on
  -- it before reading the log. Too long for a notification, or no key yet: a plain wakeup.
  select value into v_key from "${FW_SCHEMA}"."${SECRETS_TABLE}" where name = '${LIVE_NOTICE_SECRET}';
  v_notice := json_build_object('r', v_revision::text, 't', p_table, 'n', p_tenant, 'w', (extract(epoch from now()) * 1000)::bigint::text, 'c', p_changes)::text;
  if v_key is null or octet_length(v_key) <> ${LIVE_NOTICE_SECRET_BYTES} or octet_length(v_notice) > 7800 then
    perform pg_notify('fw_live', '');
  else
    perform pg_notify('fw_live', encode(sha256(substring(v_key from ${LIVE_NOTICE_SECRET_BYTES / 2 + 1}) || sha256(substring(v_key for ${LIVE_NOTICE_SECRET_BYTES / 2}) || convert_to(v_notice, 'UTF8'))), 'hex') || v_notice);
  end if;
end
$fw$`,
  `create or replace function "public"."_fw_live_record"(p_table text, p_tenant uuid) returns void
  language sql security definer set search_path = pg_catalog, public as $fw$
  select "public"."_fw_live_record"(p_table, p_tenant, null::jsonb)
$fw$`,
  `create or replace function "public"."_fw_live_record_request"(p_table text, p_tenant uuid) returns void
  language plpgsql security definer set search_path = pg_catalog, public as $fw$
begin
  if not coalesce("_fw"."verified"(), false) then
    raise exception 'fw: recording a live invalidation needs a verified request identity' using errcode = '42501';
  end if;
  if p_tenant is not null and p_tenant is distinct from "_fw"."tenant_id"() then
    raise exception 'fw: a request records live invalidations of its own tenant only' using errcode = '42501';
  end if;
  perform "public"."_fw_live_record"(p_table, p_tenant, null::jsonb);
end
$fw$`,
  `create or replace function "public"."_fw_live_capture"() returns trigger
  language plpgsql security definer set search_path = pg_catalog, public as $fw$
declare
  v_scoped boolean := TG_ARGV[0] = 'tenant';
  v_columns text[] := coalesce(TG_ARGV[1:TG_NARGS - 1], '{}');
  v_tenant uuid;
  v_changes jsonb;
begin
  if TG_OP = 'TRUNCATE' then
    perform "public"."_fw_live_record"(TG_TABLE_NAME::text, null, null);
  elsif TG_OP = 'INSERT' then
    for v_tenant, v_changes in
      select case when v_scoped then (i.j ->> 'tenant_id')::uuid end, "public"."_fw_live_values"(jsonb_agg(i.j), v_columns)
      from (select to_jsonb(n.*) as j from fw_new n) i group by 1
    loop
      perform "public"."_fw_live_record"(TG_TABLE_NAME::text, v_tenant, v_changes);
    end loop;
  elsif TG_OP = 'DELETE' then
    for v_tenant, v_changes in
      select case when v_scoped then (i.j ->> 'tenant_id')::uuid end, "public"."_fw_live_values"(jsonb_agg(i.j), v_columns)
      from (select to_jsonb(o.*) as j from fw_old o) i group by 1
    loop
      perform "public"."_fw_live_record"(TG_TABLE_NAME::text, v_tenant, v_changes);
    end loop;
  else
    for v_tenant, v_changes in
      select case when v_scoped then (i.j ->> 'tenant_id')::uuid end, "public"."_fw_live_values"(jsonb_agg(i.j), v_columns)
      from (select to_jsonb(o.*) as j from fw_old o union all select to_jsonb(n.*) from fw_new n) i group by 1
    loop
      perform "public"."_fw_live_record"(TG_TABLE_NAME::text, v_tenant, v_changes);
    end loop;
  end if;
  return null;
end
$fw$`,
  `revoke all on function "public"."_fw_live_record"(text, uuid) from public`,
  `revoke all on function "public"."_fw_live_record"(text, uuid, jsonb) from public`,
  `revoke all on function "public"."_fw_live_record_request"(text, uuid) from public`,
  `revoke all on function "public"."_fw_live_record"(text, uuid) from ${app}`,
  `grant execute on function "public"."_fw_live_record_request"(text, uuid) to ${app}`,
  `revoke all on function "public"."_fw_live_capture"() from public`,
  `revoke all on function "public"."_fw_live_values"(jsonb, text[]) from public`,
  `revoke all on function "public"."_fw_live_merge"(jsonb, jsonb) from public`,
];

/**
 * The version of `liveFunctionsSql`, kept as the functions' comment: `ensureSystemTables` replaces
 * the functions only when it differs (an upgrade), not on every start.
 */
export const LIVE_FUNCTIONS_MARKER = `fw:live:${createHash('sha256').update(liveFunctionsSql.join('\n')).digest('hex').slice(0, 16)}`;

export const liveFunctionsCommentSql: readonly string[] = [
  `comment on function "public"."_fw_live_record"(text, uuid) is ${literal(LIVE_FUNCTIONS_MARKER)}`,
  `comment on function "public"."_fw_live_record"(text, uuid, jsonb) is ${literal(LIVE_FUNCTIONS_MARKER)}`,
  `comment on function "public"."_fw_live_capture"() is ${literal(LIVE_FUNCTIONS_MARKER)}`,
];

export type LiveTriggerEvent = 'insert' | 'update' | 'delete' | 'truncate';

export interface LiveTrigger {
  /** `_fw_live_insert`, `_fw_live_update`, … */
  name: string;
  event: LiveTriggerEvent;
  /** The trigger argument: `tenant` for tenant-scoped tables, `global` otherwise. */
  scope: 'tenant' | 'global';
  /** The trigger's arguments as `pg_trigger.tgargs` holds them (each ends with a NUL). */
  args: string;
  sql: string;
}

/**
 * The capture triggers of one app table. PostgreSQL allows transition tables only on triggers for a
 * single event, hence one trigger per event (TRUNCATE has no rows to look at). The arguments are the
 * scope and the columns whose values are recorded (`capturedColumns` in live/read-set.ts); `args`
 * is what `pg_trigger.tgargs` holds for them, to tell a trigger made for other columns.
 */
export function liveTriggers(ns: string, table: string, tenantScoped: boolean, columns: readonly string[] = []): LiveTrigger[] {
  const scope = tenantScoped ? 'tenant' : 'global';
  const referencing: Record<LiveTriggerEvent, string> = {
    insert: 'referencing new table as fw_new ',
    update: 'referencing old table as fw_old new table as fw_new ',
    delete: 'referencing old table as fw_old ',
    truncate: '',
  };
  const args = [scope, ...columns];
  return (['insert', 'update', 'delete', 'truncate'] as const).map((event) => {
    const name = `${LIVE_TRIGGER_PREFIX}${event}`;
    return {
      name,
      event,
      scope,
      args: args.map((arg) => `${arg}\0`).join(''),
      sql:
        `create trigger ${ident(name)} after ${event} on ${qualified(ns, table)} ${referencing[event]}` +
        `for each statement execute function "public"."_fw_live_capture"(${args.map(literal).join(', ')})`,
    };
  });
}
