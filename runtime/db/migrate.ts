/**
 * fw's migration engine. The truth is the database catalog, not a stored snapshot: the planner
 * introspects `public`, builds the declared schema in a throwaway schema inside the same transaction,
 * introspects that with the same function, diffs the two models and rolls the throwaway schema back.
 * Additive changes apply automatically; anything that could lose data or needs a decision is refused
 * with a diagnostic, and then nothing at all is applied.
 *
 * @example
 *   const plan = await planMigration(db, schema);          // what would change
 *   const result = await applyMigration(db, schema);       // apply it (all or nothing)
 *   if (result.blocked.length) console.error(result.blocked);
 */
import { createHash, randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Diagnostic } from '../core/errors.ts';
import { FwError } from '../core/errors.ts';
import type { Schema } from '../core/schema.ts';
import { canonicalJson } from '../core/canonical-json.ts';
import { fwVersion } from '../core/version.ts';
import type { FwDatabase } from './database.ts';
import { ensureLiveCapture } from './live-capture.ts';
import {
  INDEX_MARKER,
  LIVE_FUNCTIONS_MARKER,
  createSchemaSql,
  ident,
  liveFunctionsCommentSql,
  liveFunctionsSql,
  OUTBOX_WORKER_COLUMNS,
  outboxWorkerSql,
  qualified,
  TENANT_COLUMN,
  systemGrantsSql,
  OLD_OUTBOX_POLICIES,
  outboxPolicySql,
  addedSystemColumns,
  INTENT_FUNCTIONS_MARKER,
  intentFunctionsSql,
  systemTables,
} from './ddl.ts';
import { databaseSecret, LIVE_NOTICE_SECRET, LIVE_NOTICE_SECRET_BYTES } from './secrets.ts';
import { introspect } from './introspect.ts';
import { diffSchema, type ComputedPlan, type MigrationPlan, type PlannedChange } from './plan.ts';
import { validateSchema } from './validate.ts';

export type { ChangeKind, MigrationPlan, PlannedChange } from './plan.ts';

export interface MigrateOptions {
  /** Also drop tables and columns that are no longer declared (destructive changes). */
  acceptDataLoss?: boolean;
}

export interface MigrationResult {
  applied: PlannedChange[];
  blocked: Diagnostic[];
  /** The `_fw_migrations` row written, or null when nothing was applied. */
  migrationId: number | null;
}

export interface AppliedMigration {
  id: number;
  appliedAt: string;
  checksum: string;
  fwVersion: string;
  changes: Array<{ kind: string; description: string }>;
}

/**
 * Serialises fw's schema changes across processes (`pg_advisory_xact_lock`): a second migrator waits
 * and then plans against the committed result of the first. The constant is "fw-migr" in ASCII.
 */
export const MIGRATION_LOCK_KEY = '0x66772d6d696772';
const lockSql = `select pg_advisory_xact_lock(${BigInt(MIGRATION_LOCK_KEY).toString()})`;

/**
 * Creates fw's own tables (`_fw_migrations`, `_fw_outbox`, the live invalidation log and its state)
 * when missing, the outbox worker's columns when missing (also on an outbox made by an earlier fw),
 * and the live log's functions when missing or from another fw version. Idempotent and safe to race
 * (serialised by the migration lock).
 */
export async function ensureSystemTables(db: FwDatabase): Promise<void> {
  await inTransaction(db, async (conn) => {
    await sql.raw(lockSql).execute(conn);
    const names = systemTables.map((table) => table.name);
    const present = await sql<{ name: string }>`
      select name from unnest(${names}::text[]) as name where to_regclass('public.' || quote_ident(name)) is not null`.execute(conn);
    const existing = new Set(present.rows.map((row) => row.name));
    for (const table of systemTables) {
      if (existing.has(table.name)) continue;
      for (const statement of table.create) await sql.raw(statement).execute(conn);
    }
    const outboxColumns = await sql<{ missing: number }>`
      select count(*)::int as missing from unnest(${[...OUTBOX_WORKER_COLUMNS]}::text[]) as name
      where not exists (select 1 from pg_attribute where attrelid = 'public._fw_outbox'::regclass and attname = name and not attisdropped)`.execute(conn);
    if ((outboxColumns.rows[0]?.missing ?? 0) > 0) {
      for (const statement of outboxWorkerSql) await sql.raw(statement).execute(conn);
    }
    for (const statement of systemGrantsSql) await sql.raw(statement).execute(conn);
    // Policy DDL locks the table: only while an old policy is there or row-level security is off.
    const outboxPolicy = await sql<{ current: boolean }>`
      select c.relrowsecurity and not exists (select 1 from pg_policy p where p.polrelid = c.oid and p.polname = any(${[...OLD_OUTBOX_POLICIES]}::text[])) as current
      from pg_class c where c.oid = 'public._fw_outbox'::regclass`.execute(conn);
    if (!outboxPolicy.rows[0]?.current) {
      for (const statement of outboxPolicySql) await sql.raw(statement).execute(conn);
    }
    const intentFunctions = await sql<{ current: boolean }>`
      select coalesce(obj_description(to_regprocedure('_fw.enqueue(text, text)'), 'pg_proc') = ${INTENT_FUNCTIONS_MARKER}, false) as current`.execute(conn);
    if (!intentFunctions.rows[0]?.current) {
      for (const statement of intentFunctionsSql) await sql.raw(statement).execute(conn);
    }
    for (const [table, column, type] of addedSystemColumns) {
      const present = await sql`select 1 from pg_attribute where attrelid = ${`public.${table}`}::regclass and attname = ${column} and not attisdropped`.execute(conn);
      if (present.rows.length === 0) await sql.raw(`alter table "public"."${table}" add column if not exists "${column}" ${type}`).execute(conn);
    }
    const functions = await sql<{ current: boolean }>`
      select coalesce(obj_description(to_regprocedure('public._fw_live_record(text, uuid)'), 'pg_proc') = ${LIVE_FUNCTIONS_MARKER}
        and obj_description(to_regprocedure('public._fw_live_capture()'), 'pg_proc') = ${LIVE_FUNCTIONS_MARKER}, false) as current`.execute(conn);
    if (!functions.rows[0]?.current) {
      for (const statement of [...liveFunctionsSql, ...liveFunctionsCommentSql]) await sql.raw(statement).execute(conn);
    }
    // The key `_fw_live_record` signs its notifications with (made here so the first write has it).
    await databaseSecret(conn, LIVE_NOTICE_SECRET, LIVE_NOTICE_SECRET_BYTES);
    return 'commit';
  });
}

/** What `applyMigration` would do now, without changing anything. */
export async function planMigration(db: FwDatabase, schema: Schema, options: MigrateOptions = {}): Promise<MigrationPlan> {
  const plan = await inTransaction(db, async (conn) => ({ outcome: 'rollback' as const, value: await computePlan(conn, schema, options) }));
  return { changes: plan.changes, blocked: plan.blocked };
}

/**
 * Brings the database to `schema`: every planned change, in one transaction together with its
 * `_fw_migrations` row, or nothing at all when any change is refused.
 *
 * One exception to the single transaction: PostgreSQL cannot use an enum value in the transaction
 * that added it, so when a default uses a value added by this migration the new values are committed
 * first (as their own `_fw_migrations` row) and the rest follows in a second transaction.
 *
 * Every successful run (also one with nothing to change) makes sure each declared table has fw's
 * live-capture triggers (`ensureLiveCapture`); they never show up as planned changes.
 */
export async function applyMigration(db: FwDatabase, schema: Schema, options: MigrateOptions = {}): Promise<MigrationResult> {
  await ensureSystemTables(db);
  const first = await applyOnce(db, schema, options);
  if (!first.more) return first.result;
  const second = await applyOnce(db, schema, options);
  return {
    applied: [...first.result.applied, ...second.result.applied],
    blocked: second.result.blocked,
    migrationId: second.result.migrationId ?? first.result.migrationId,
  };
}

/** The migrations applied so far (oldest first) and what is pending or refused now. */
export async function migrationStatus(
  db: FwDatabase,
  schema: Schema,
): Promise<{ applied: AppliedMigration[]; pending: PlannedChange[]; blocked: Diagnostic[] }> {
  const exists = await sql<{ ok: boolean }>`select to_regclass('public._fw_migrations') is not null as ok`.execute(db.admin);
  const applied: AppliedMigration[] = [];
  if (exists.rows[0]?.ok) {
    const rows = await sql<{ id: number; applied_at: Date | string; checksum: string; fw_version: string; changes: PlannedChange[] | string }>`
      select id, applied_at, checksum, fw_version, changes from "public"."_fw_migrations" order by id`.execute(db.admin);
    for (const row of rows.rows) {
      const changes = typeof row.changes === 'string' ? (JSON.parse(row.changes) as PlannedChange[]) : row.changes;
      applied.push({
        id: Number(row.id),
        appliedAt: new Date(row.applied_at).toISOString(),
        checksum: row.checksum,
        fwVersion: row.fw_version,
        changes: changes.map((change) => ({ kind: change.kind, description: change.description })),
      });
    }
  }
  const plan = await planMigration(db, schema);
  return { applied, pending: plan.changes, blocked: plan.blocked };
}

/** sha256 of the schema declaration in a canonical form (stable key order). */
export function schemaChecksum(schema: Schema): string {
  const canonical = Object.keys(schema.tables)
    .sort()
    .map((name) => {
      const table = schema.tables[name]!;
      return [name, table.tenantScoped, Object.entries(table.columns).map(([column, { spec }]) => [column, spec]), table.indexes];
    });
  return createHash('sha256').update(canonicalJson(canonical)).digest('hex');
}

// ---- internals ----

async function applyOnce(db: FwDatabase, schema: Schema, options: MigrateOptions): Promise<{ result: MigrationResult; more: boolean }> {
  return inTransaction<{ result: MigrationResult; more: boolean }>(db, async (conn) => {
    await sql.raw(lockSql).execute(conn);
    const plan = await computePlan(conn, schema, options);
    if (plan.blocked.length > 0) {
      return { outcome: 'rollback', value: { result: { applied: [], blocked: plan.blocked, migrationId: null }, more: false } };
    }
    if (plan.changes.length === 0) {
      // Nothing to change, but a database from before live queries (or one whose triggers were
      // dropped) still gets its capture triggers. They are not schema changes the user sees.
      const created = await ensureLiveCapture(conn, schema);
      return { outcome: created.length > 0 ? 'commit' : 'rollback', value: { result: { applied: [], blocked: [], migrationId: null }, more: false } };
    }
    const changes = plan.usesNewEnumValues ? plan.changes.filter((change) => change.kind === 'add_enum_value') : plan.changes;
    for (const change of changes) {
      for (const statement of change.sql) {
        try {
          await sql.raw(statement).execute(conn);
        } catch (error) {
          throw new FwError('internal', `Migration failed at "${change.description}": ${(error as Error).message}\n  ${statement}`, { cause: error });
        }
      }
    }
    await ensureLiveCapture(conn, schema);
    // Numbered one past the last row, under the migration lock, not by the column's sequence: a
    // sequence never gives back what it handed out (a rolled-back insert, and up to 32 values after a
    // crash or an embedded database killed mid-run), and migration ids are read as a history (1, 2, 3).
    // The sequence is set to it, so that an older fw inserting by default takes the next id too.
    const inserted = await sql<{ id: number }>`
      insert into "public"."_fw_migrations" (id, checksum, fw_version, changes)
      select coalesce(max(id), 0) + 1, ${schemaChecksum(schema)}, ${fwVersion}, ${JSON.stringify(changes)}::jsonb from "public"."_fw_migrations"
      returning id`.execute(conn);
    const migrationId = Number(inserted.rows[0]!.id);
    await sql`select setval(pg_get_serial_sequence('public._fw_migrations', 'id'), ${migrationId})`.execute(conn);
    return { outcome: 'commit', value: { result: { applied: changes, blocked: [], migrationId }, more: plan.usesNewEnumValues } };
  });
}

/**
 * Plans inside the caller's transaction. Everything it creates (the throwaway schema) lives in a
 * savepoint that is rolled back before returning.
 */
async function computePlan(conn: Kysely<any>, schema: Schema, options: MigrateOptions): Promise<ComputedPlan> {
  const invalid = validateSchema(schema);
  if (invalid.length > 0) return { changes: [], blocked: invalid, usesNewEnumValues: false };
  await sql.raw('savepoint fw_plan').execute(conn);
  try {
    const actual = await introspect(conn, 'public', INDEX_MARKER);
    const ns = `fw_plan_${randomBytes(6).toString('hex')}`;
    await sql.raw(`create schema ${ident(ns)}`).execute(conn);
    for (const step of createSchemaSql(ns, schema)) {
      for (const statement of step.sql) {
        try {
          await sql.raw(statement).execute(conn);
        } catch (error) {
          const message = (error as Error).message.replaceAll(`"${ns}".`, '').replaceAll(`${ns}.`, '');
          return {
            changes: [],
            blocked: [{ path: `schema.${step.table}`, code: 'invalid_schema', message: `PostgreSQL rejects the declaration of table "${step.table}": ${message}`, hint: `Fix "${step.table}" in the schema.` }],
            usesNewEnumValues: false,
          };
        }
      }
    }
    const desired = await introspect(conn, ns, INDEX_MARKER);
    return await diffSchema({
      schema,
      actual,
      desired,
      acceptDataLoss: options.acceptDataLoss === true,
      rowCount: (table) => countRows(conn, table),
      crossTenantReferences: (table, column, refTable, refColumn) => countCrossTenantReferences(conn, table, column, refTable, refColumn),
    });
  } finally {
    await sql.raw('rollback to savepoint fw_plan').execute(conn);
    await sql.raw('release savepoint fw_plan').execute(conn);
  }
}

/** Rows in a live table, up to 2, whatever row-level security says (see {@link ownerCount}). */
function countRows(conn: Kysely<any>, table: string): Promise<number> {
  return ownerCount(conn, [table], `select count(*)::int as n from (select 1 from ${qualified('public', table)} limit 2) as sample`);
}

/** Rows of `table` whose `column` names a row of `refTable` in another tenant, up to 2. */
function countCrossTenantReferences(conn: Kysely<any>, table: string, column: string, refTable: string, refColumn: string): Promise<number> {
  return ownerCount(
    conn,
    [table, refTable],
    `select count(*)::int as n from (select 1 from ${qualified('public', table)} t join ${qualified('public', refTable)} r ` +
      `on r.${ident(refColumn)} = t.${ident(column)} where r.${ident(TENANT_COLUMN)} <> t.${ident(TENANT_COLUMN)} limit 2) as sample`,
  );
}

/**
 * Runs a `count(*) as n` query over live tables whatever row-level security says: a superuser (or
 * BYPASSRLS role) reads with `row_security = off`; a plain owner lifts FORCE ROW LEVEL SECURITY on
 * `tables` for a moment in a savepoint that is rolled back.
 */
async function ownerCount(conn: Kysely<any>, tables: readonly string[], count: string): Promise<number> {
  await sql.raw('savepoint fw_count; set local row_security = off').execute(conn);
  try {
    const result = await sql.raw<{ n: number }>(count).execute(conn);
    return Number(result.rows[0]?.n ?? 0);
  } catch (error) {
    if ((error as { code?: string }).code !== '42501') throw error;
    await sql.raw('rollback to savepoint fw_count').execute(conn);
    for (const table of new Set(tables)) await sql.raw(`alter table ${qualified('public', table)} no force row level security`).execute(conn);
    const result = await sql.raw<{ n: number }>(count).execute(conn);
    return Number(result.rows[0]?.n ?? 0);
  } finally {
    await sql.raw('rollback to savepoint fw_count; release savepoint fw_count').execute(conn);
  }
}

type TransactionBody<R> = (conn: Kysely<any>) => Promise<{ outcome: 'commit' | 'rollback'; value: R } | 'commit'>;

/** Runs `fn` in a transaction on one connection of its own; commits or rolls back as `fn` says. */
async function inTransaction<R>(db: FwDatabase, fn: TransactionBody<R>): Promise<R> {
  return db.admin.connection().execute(async (conn) => {
    await sql.raw('begin').execute(conn);
    let result: Awaited<ReturnType<TransactionBody<R>>>;
    try {
      result = await fn(conn);
    } catch (error) {
      await sql.raw('rollback').execute(conn).catch(() => undefined);
      throw error;
    }
    const outcome = result === 'commit' ? 'commit' : result.outcome;
    await sql.raw(outcome).execute(conn);
    return (result === 'commit' ? undefined : result.value) as R;
  });
}

