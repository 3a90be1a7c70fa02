import { type Kysely, sql } from 'kysely';
import type { Schema } from '../core/schema.ts';
import { FwError } from '../core/errors.ts';
import type { FwDatabase } from '../db/database.ts';

/** The dashboard's Data view: the app's tables, their rows per tenant, and a page of rows. */

export interface TableSummary {
  name: string;
  tenantScoped: boolean;
  columns: Array<{ name: string; kind: string; nullable: boolean; primaryKey: boolean; references?: string }>;
  /** All rows, as the owner sees them. */
  rows: number;
  /** Rows per tenant (tenant-scoped tables only), most first. */
  tenants: Array<{ tenantId: string; rows: number }>;
}

export async function listTables(db: FwDatabase, schema: Schema): Promise<TableSummary[]> {
  const tables: TableSummary[] = [];
  for (const [name, table] of Object.entries(schema.tables).sort(([a], [b]) => a.localeCompare(b))) {
    const columns = Object.entries(table.columns).map(([column, spec]) => {
      const s = spec.spec;
      return { name: column, kind: s.kind, nullable: s.nullable, primaryKey: s.primaryKey, ...(s.references ? { references: `${s.references.table}.${s.references.column}` } : {}) };
    });
    if (table.tenantScoped) columns.push({ name: 'tenant_id', kind: 'uuid', nullable: false, primaryKey: false });
    // A table the database does not have yet (a pending migration) is listed with no rows rather than failing the view.
    const counts = await sql<{ tenant_id: string | null; n: number }>`
      select ${table.tenantScoped ? sql`tenant_id::text` : sql`null`} as tenant_id, count(*)::int as n
      from ${sql.table(name)} group by 1 order by 2 desc`
      .execute(db.admin)
      .catch(() => ({ rows: [] as { tenant_id: string | null; n: number }[] }));
    tables.push({
      name,
      tenantScoped: table.tenantScoped,
      columns,
      rows: counts.rows.reduce((sum, row) => sum + row.n, 0),
      tenants: table.tenantScoped ? counts.rows.map((row) => ({ tenantId: row.tenant_id ?? '', rows: row.n })) : [],
    });
  }
  return tables;
}

export interface RowsQuery {
  table: string;
  /** Read as this tenant under row-level security (a request transaction), or as the owner when absent. */
  asTenant?: string;
  /** Owner view only: rows of this tenant. */
  tenant?: string;
  /** `column` contains `value` (compared as text, case-insensitive). */
  filter?: { column: string; value: string };
  /** Sorted by this column (the key breaks ties, so pages stay stable); by default newest first. */
  sort?: { column: string; descending: boolean };
  limit: number;
  offset: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One page of a table's rows and how many match in all. Identifiers are checked against the app's schema, never taken as sent. */
export async function readRows(db: FwDatabase, schema: Schema, query: RowsQuery): Promise<{ rows: unknown[]; total: number; as: 'owner' | 'tenant' }> {
  const table = schema.tables[query.table];
  if (!table || !Object.hasOwn(schema.tables, query.table)) {
    throw new FwError('not_found', `No table "${query.table.slice(0, 60)}" in the app's schema.`, {
      diagnostics: [{ path: 'query.table', code: 'unknown_table', message: `Known: ${Object.keys(schema.tables).sort().join(', ') || '(none)'}` }],
    });
  }
  const columns = [...Object.keys(table.columns), ...(table.tenantScoped ? ['tenant_id'] : [])];
  for (const [field, value] of [['asTenant', query.asTenant], ['tenant', query.tenant]] as const) {
    if (value !== undefined && !UUID.test(value)) {
      throw new FwError('validation_failed', `${field} must be a tenant id (a UUID).`, { diagnostics: [{ path: `query.${field}`, code: 'invalid_tenant', message: `Got "${value.slice(0, 40)}".` }] });
    }
  }
  if (query.filter && !columns.includes(query.filter.column)) {
    throw new FwError('validation_failed', `No column "${query.filter.column.slice(0, 60)}" in ${query.table}.`, {
      diagnostics: [{ path: 'query.column', code: 'unknown_column', message: `Known: ${columns.join(', ')}` }],
    });
  }
  if (query.sort && !columns.includes(query.sort.column)) {
    throw new FwError('validation_failed', `No column "${query.sort.column.slice(0, 60)}" in ${query.table}.`, {
      diagnostics: [{ path: 'query.sort', code: 'unknown_column', message: `Known: ${columns.join(', ')}` }],
    });
  }
  const key = Object.entries(table.columns).find(([, c]) => c.spec.primaryKey)?.[0] ?? columns[0]!;
  // As asked, else newest first when the table says when a row was made; the key keeps pages stable.
  const order = query.sort
    ? sql`${sql.ref(query.sort.column)} ${sql.raw(query.sort.descending ? 'desc nulls last' : 'asc nulls first')}, ${sql.ref(key)}`
    : columns.includes('created_at') && key !== 'created_at'
      ? sql`${sql.ref('created_at')} desc, ${sql.ref(key)}`
      : sql`${sql.ref(key)}`;
  const conditions = [
    ...(query.tenant && table.tenantScoped && !query.asTenant ? [sql`tenant_id = ${query.tenant}::uuid`] : []),
    ...(query.filter ? [sql`${sql.ref(query.filter.column)}::text ilike ${`%${query.filter.value.replace(/[\\%_]/g, '\\$&')}%`}`] : []),
  ];
  const where = conditions.length > 0 ? sql`where ${sql.join(conditions, sql` and `)}` : sql``;
  const read = async (k: Kysely<any>) => {
    const total = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(query.table)} ${where}`.execute(k);
    const rows = await sql`select * from ${sql.table(query.table)} ${where} order by ${order} limit ${query.limit} offset ${query.offset}`.execute(k);
    return { rows: rows.rows, total: total.rows[0]?.n ?? 0 };
  };
  if (query.asTenant === undefined) return { ...(await read(db.admin)), as: 'owner' };
  // As the tenant: a read-only request transaction, so row-level security decides what is visible.
  const auth = { kind: 'user' as const, userId: 'fw-dashboard', tenantId: query.asTenant, role: null };
  return { ...(await db.transaction({ readOnly: true, auth, label: `dashboard rows ${query.table}` }, read)), as: 'tenant' };
}
