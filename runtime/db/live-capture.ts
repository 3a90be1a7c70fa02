/**
 * How writes reach the live invalidation log: the capture triggers on every app table (their SQL is
 * `liveTriggers` in ddl.ts), the columns whose values they record, and the invalidations a request
 * records for writes that are not table writes (an external service's declared effects). live/ reads
 * what lands here; see docs/live.md ("How a write reaches a subscriber").
 */
import { sql, type Kysely } from 'kysely';
import type { ColumnKind, Schema } from '../core/schema.ts';
import { LIVE_TRIGGER_PREFIX, liveTriggers, PUBLIC } from './ddl.ts';

export { MAX_CAPTURED_VALUES, MAX_CAPTURED_VALUE_LENGTH } from './ddl.ts';

/** The NOTIFY channel the capture signals on (payload empty: it only says "read the log"). */
export const LIVE_CHANNEL = 'fw_live';

/**
 * The column kinds whose values the capture triggers record, and conditions may name: every kind but
 * jsonb. Each is recorded as `to_jsonb(row) ->> column` prints it — canonical for uuid, integers,
 * boolean, text and enum (compared as text); numeric (`12.340`), timestamptz (ISO with the session's
 * offset) and date (ISO) are compared by value (live/value-order.ts), never as text.
 */
export const CAPTURED_KINDS: ReadonlySet<ColumnKind> = new Set<ColumnKind>(['uuid', 'text', 'enum', 'integer', 'bigint', 'boolean', 'numeric', 'timestamptz', 'date']);

/** The columns of `table` whose changes the capture triggers record (db/ddl.ts `liveTriggers`). */
export function capturedColumns(schema: Schema, table: string): string[] {
  const columns = schema.tables[table]?.columns ?? {};
  return Object.entries(columns)
    .filter(([, column]) => CAPTURED_KINDS.has(column.spec.kind))
    .map(([name]) => name)
    .sort();
}

/**
 * Creates the capture triggers that are missing on the declared tables (4 per table: insert, update,
 * delete, truncate; see `liveTriggers` in db/ddl.ts). Idempotent; a trigger whose arguments no longer
 * match the table (tenant-scoped or not, the columns whose values it records) is replaced. Tables that do not exist are skipped.
 * Needs the functions `ensureSystemTables` creates; `applyMigration` calls this in its transaction.
 *
 * @returns the triggers created, replaced or enabled again, as `table.trigger`
 */
export async function ensureLiveCapture(conn: Kysely<any>, schema: Schema): Promise<string[]> {
  const declared = Object.keys(schema.tables);
  if (declared.length === 0) return [];
  const tables = await sql<{ name: string }>`
    select c.relname::text as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${PUBLIC} and c.relkind = 'r' and c.relname = any(${declared}::text[])`.execute(conn);
  const triggers = await sql<{ table: string; name: string; args: string; enabled: string }>`
    select c.relname::text as table, t.tgname::text as name, encode(t.tgargs, 'hex') as args, t.tgenabled::text as enabled
    from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${PUBLIC} and not t.tgisinternal and starts_with(t.tgname::text, ${LIVE_TRIGGER_PREFIX})
      and c.relname = any(${declared}::text[])`.execute(conn);
  const existing = new Map(triggers.rows.map((row) => [`${row.table}.${row.name}`, row]));
  const created: string[] = [];
  for (const { name: table } of tables.rows) {
    const qualified = `"${PUBLIC}"."${table.replaceAll('"', '""')}"`;
    for (const trigger of liveTriggers(PUBLIC, table, schema.tables[table]!.tenantScoped, capturedColumns(schema, table))) {
      const key = `${table}.${trigger.name}`;
      const found = existing.get(key);
      if (found?.args === Buffer.from(trigger.args).toString('hex')) {
        // Disabled by hand (`pg_restore --disable-triggers`), or re-enabled without ALWAYS: fire again, in every mode.
        if (found.enabled !== ALWAYS) {
          await sql.raw(`alter table ${qualified} enable always trigger "${trigger.name}"`).execute(conn);
          created.push(key);
        }
        continue;
      }
      if (found !== undefined) await sql.raw(`drop trigger "${trigger.name}" on ${qualified}`).execute(conn);
      await sql.raw(trigger.sql).execute(conn);
      // ALWAYS: a trigger enabled the default way does not fire under `session_replication_role = replica`
      // (logical replication's apply, some restore and sync tools), and those writes would never be logged.
      await sql.raw(`alter table ${qualified} enable always trigger "${trigger.name}"`).execute(conn);
      created.push(key);
    }
  }
  return created;
}

/** `pg_trigger.tgenabled` of a trigger that fires whatever `session_replication_role` says. */
const ALWAYS = 'A';
/** Capture triggers per table (insert, update, delete, truncate). */
const TRIGGERS_PER_TABLE = 4;

/**
 * The app tables among `tables` whose writes the capture triggers may not all be logging right now: a
 * capture trigger is missing, disabled (`ALTER TABLE … DISABLE TRIGGER`, `pg_restore
 * --disable-triggers`), or enabled without ALWAYS (it then skips writes made under
 * `session_replication_role = replica`). The live reader checks this on every safety poll and reruns
 * the groups that read such a table (docs/live.md, "Writes the log cannot see"). Tables that do not
 * exist are not listed.
 */
export async function uncapturedTables(conn: Kysely<any>, tables: readonly string[]): Promise<string[]> {
  if (tables.length === 0) return [];
  const result = await sql<{ table: string }>`
    select c.relname::text as table
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
      left join pg_trigger t on t.tgrelid = c.oid and not t.tgisinternal and starts_with(t.tgname::text, ${LIVE_TRIGGER_PREFIX})
        and t.tgenabled::text = ${ALWAYS}
    where n.nspname = ${PUBLIC} and c.relkind = 'r' and c.relname = any(${tables}::text[])
    group by c.relname
    having count(t.oid) < ${TRIGGERS_PER_TABLE}`.execute(conn);
  return result.rows.map((row) => row.table).sort();
}

/**
 * Records invalidations for writes that are not table writes (e.g. an external service with declared
 * effects), exactly like the triggers do: deduplicated per transaction x table x tenant, with a
 * `NOTIFY fw_live` at commit. Call it inside the writing transaction of a request (it goes through the
 * SECURITY DEFINER function `_fw_live_record_request`: a verified identity, its own tenant or none); it
 * cannot run in a read-only one.
 *
 * @example
 *   await recordInvalidations(ctx.db, [{ table: 'tickets', tenantId: ctx.auth.tenantId }]);
 */
export async function recordInvalidations(conn: Kysely<any>, rows: ReadonlyArray<{ table: string; tenantId: string | null }>): Promise<void> {
  if (rows.length === 0) return;
  for (const row of rows) {
    if (typeof row.table !== 'string' || row.table === '') throw new TypeError('fw: recordInvalidations needs a table name for every row.');
  }
  const payload = JSON.stringify(rows.map((row) => ({ t: row.table, n: row.tenantId ?? null })));
  await sql`
    select "public"."_fw_live_record_request"(r.t, r.n)
    from json_to_recordset(${payload}::json) as r(t text, n uuid)`.execute(conn);
}
