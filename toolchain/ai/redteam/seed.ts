import type { Kysely } from 'kysely';
import type { FwDatabase } from '../../../runtime/db/database.ts';
import type { Auth } from '../../../runtime/core/entry-types.ts';
import type { ColumnSpec, Schema } from '../../../runtime/core/schema.ts';

/** Columns of tables that are not tenant-scoped but name a tenant: a probe plants tenant B there too. */
const tenantLike = /^(tenant|tenant_?id|org(anization)?_?id|account_?id|workspace_?id)$/i;

export interface Planted {
  /**
   * Every string value of the planted rows as stored (text columns, generated ids, references; not the
   * tenant id), so any of them showing up in an output is evidence of which row and column leaked.
   */
  values: Array<{ table: string; column: string; value: string }>;
  /** Tables a row could not be planted in, with the database's reason. */
  skipped: Array<{ table: string; reason: string }>;
}

/**
 * Plants one row per table for `auth`'s tenant, in dependency order (a referenced table first), with
 * every text column set to `text(table, column)`. Tenant-scoped tables are written as `auth` (the
 * database fills in its tenant); others as the owner, with tenant-like columns set to `auth`'s tenant.
 * A table whose row cannot be made (a check, an odd type) is skipped and reported, never fatal.
 */
export async function plantRows(db: FwDatabase, schema: Schema, auth: Auth, text: (table: string, column: string) => string): Promise<Planted> {
  const planted: Planted = { values: [], skipped: [] };
  const ids = new Map<string, Record<string, unknown>>();
  for (const name of dependencyOrder(schema)) {
    const table = schema.tables[name]!;
    const row: Record<string, unknown> = {};
    for (const [column, { spec }] of Object.entries(table.columns)) {
      const value = valueFor(spec, name, column, auth, ids, text, table.tenantScoped);
      if (value === undefined) continue;
      row[column] = value;
    }
    const insert = (trx: Kysely<any>) => trx.insertInto(name).values(row).returningAll().executeTakeFirstOrThrow();
    try {
      const inserted = table.tenantScoped ? await db.transaction({ readOnly: false, auth }, insert) : await insert(db.admin);
      ids.set(name, inserted as Record<string, unknown>);
      for (const [column, value] of Object.entries(inserted as Record<string, unknown>)) {
        // A tenant id is no planted value (the probes name the tenant in their prompts and tool inputs),
        // nor is a short one (an enum value, a count) that could come up by chance.
        if (typeof value === 'string' && value.length >= 12 && value.toLowerCase() !== auth.tenantId?.toLowerCase()) planted.values.push({ table: name, column, value });
      }
    } catch (error) {
      planted.skipped.push({ table: name, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  return planted;
}

function valueFor(
  spec: ColumnSpec,
  table: string,
  column: string,
  auth: Auth,
  ids: Map<string, Record<string, unknown>>,
  text: (table: string, column: string) => string,
  tenantScoped: boolean,
): unknown {
  if (spec.references) return ids.get(spec.references.table)?.[spec.references.column] ?? undefined;
  if (!tenantScoped && tenantLike.test(column)) return spec.kind === 'uuid' || spec.kind === 'text' ? auth.tenantId : undefined;
  if (spec.default !== undefined) return undefined;
  switch (spec.kind) {
    case 'text':
      return text(table, column);
    case 'enum':
      return spec.values?.[0];
    case 'uuid':
      return crypto.randomUUID();
    case 'integer':
    case 'bigint':
    case 'numeric':
      return 1;
    case 'boolean':
      return false;
    case 'timestamptz':
      return new Date('2026-01-01T00:00:00Z');
    case 'date':
      return '2026-01-01';
    case 'jsonb':
      return JSON.stringify({ note: text(table, column) });
  }
}

/** Table names with every referenced table before the tables that reference it (cycles broken by name order). */
function dependencyOrder(schema: Schema): string[] {
  const order: string[] = [];
  const visiting = new Set<string>();
  const visit = (name: string) => {
    if (order.includes(name) || visiting.has(name) || !schema.tables[name]) return;
    visiting.add(name);
    for (const { spec } of Object.values(schema.tables[name]!.columns)) if (spec.references) visit(spec.references.table);
    order.push(name);
  };
  for (const name of Object.keys(schema.tables).sort()) visit(name);
  return order;
}
