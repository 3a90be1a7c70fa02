/**
 * Reads what a PostgreSQL schema (namespace) really contains from the catalog, in a shape the migration
 * planner can diff. The planner introspects the live `public` schema and a throwaway schema built from
 * the app's declaration with the same function, so both sides are rendered by PostgreSQL itself
 * (type names, default expressions, policy expressions) and compare as plain strings.
 */
import { sql, type Kysely } from 'kysely';
import { ident } from './ddl.ts';

export interface ColumnModel {
  name: string;
  /** `format_type` rendering, e.g. `text`, `timestamp with time zone`, `notes_status`. */
  type: string;
  /** The type's own name and whether it is an enum (for dropping fw's enum types with their column). */
  typeName: string;
  isEnum: boolean;
  notNull: boolean;
  /** `pg_get_expr` rendering of the default, or null. */
  default: string | null;
}

export interface ConstraintModel {
  name: string;
  type: 'p' | 'u' | 'f';
  columns: string[];
  refTable: string | null;
  refColumns: string[];
  /** `confdeltype`: a = no action, r = restrict, c = cascade, n = set null, d = set default. */
  onDelete: string;
}

export interface IndexModel {
  name: string;
  unique: boolean;
  columns: string[];
  /** A plain btree over columns: no expressions, predicate or INCLUDE columns. */
  plain: boolean;
  /** Created by fw (carries fw's marker comment). */
  ownedByFw: boolean;
}

export interface PolicyModel {
  name: string;
  /** Everything but the name, as one comparable string. */
  signature: string;
}

export interface TableModel {
  name: string;
  columns: Map<string, ColumnModel>;
  constraints: ConstraintModel[];
  /** Indexes that do not back a primary-key/unique/exclusion constraint. */
  indexes: Map<string, IndexModel>;
  rowSecurity: boolean;
  forceRowSecurity: boolean;
  policies: Map<string, PolicyModel>;
}

export interface DbModel {
  tables: Map<string, TableModel>;
  /** Enum types of the namespace and their labels in sort order. */
  enums: Map<string, string[]>;
}

/**
 * Introspects namespace `ns`, ignoring tables whose names start with `_fw_`. Must run inside a
 * transaction: it sets `search_path` to `ns` locally, so names of the namespace render unqualified.
 */
export async function introspect(db: Kysely<any>, ns: string, indexMarker: string): Promise<DbModel> {
  await sql`select set_config('search_path', ${ident(ns)}, true)`.execute(db);
  const tables = new Map<string, TableModel>();

  const tableRows = await sql<{ name: string; rls: boolean; force_rls: boolean }>`
    select c.relname as name, c.relrowsecurity as rls, c.relforcerowsecurity as force_rls
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${ns} and c.relkind in ('r', 'p') and left(c.relname, 4) <> '_fw_'
    order by c.relname`.execute(db);
  for (const row of tableRows.rows) {
    tables.set(row.name, {
      name: row.name,
      columns: new Map(),
      constraints: [],
      indexes: new Map(),
      rowSecurity: row.rls,
      forceRowSecurity: row.force_rls,
      policies: new Map(),
    });
  }

  const columnRows = await sql<{ table: string; name: string; type: string; type_name: string; is_enum: boolean; not_null: boolean; default: string | null }>`
    select c.relname as table, a.attname as name, format_type(a.atttypid, a.atttypmod) as type,
      t.typname::text as type_name, t.typtype = 'e' as is_enum, a.attnotnull as not_null,
      pg_get_expr(d.adbin, d.adrelid) as default
    from pg_attribute a
      join pg_class c on c.oid = a.attrelid
      join pg_namespace n on n.oid = c.relnamespace
      join pg_type t on t.oid = a.atttypid
      left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where n.nspname = ${ns} and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped
    order by c.relname, a.attnum`.execute(db);
  for (const row of columnRows.rows) {
    tables.get(row.table)?.columns.set(row.name, {
      name: row.name,
      type: row.type,
      typeName: row.type_name,
      isEnum: row.is_enum,
      notNull: row.not_null,
      default: row.default,
    });
  }

  const constraintRows = await sql<{ table: string; name: string; type: 'p' | 'u' | 'f'; columns: string[]; ref_table: string | null; ref_columns: string[] | null; on_delete: string }>`
    select rel.relname as table, con.conname as name, con.contype::text as type,
      coalesce((select json_agg(a.attname::text order by k.i) from unnest(con.conkey) with ordinality k(n, i)
        join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.n), '[]'::json) as columns,
      frel.relname::text as ref_table,
      (select json_agg(a.attname::text order by k.i) from unnest(con.confkey) with ordinality k(n, i)
        join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.n) as ref_columns,
      con.confdeltype::text as on_delete
    from pg_constraint con
      join pg_class rel on rel.oid = con.conrelid
      join pg_namespace n on n.oid = rel.relnamespace
      left join pg_class frel on frel.oid = con.confrelid
    where n.nspname = ${ns} and con.contype in ('p', 'u', 'f')
    order by rel.relname, con.conname`.execute(db);
  for (const row of constraintRows.rows) {
    tables.get(row.table)?.constraints.push({
      name: row.name,
      type: row.type,
      columns: row.columns,
      refTable: row.ref_table,
      refColumns: row.ref_columns ?? [],
      onDelete: row.type === 'f' ? row.on_delete : '',
    });
  }

  const indexRows = await sql<{ table: string; name: string; unique: boolean; columns: string[] | null; plain: boolean; comment: string | null }>`
    select tbl.relname as table, idx.relname as name, i.indisunique as unique,
      (select json_agg(a.attname::text order by k.i) from unnest(i.indkey::int2[]) with ordinality k(n, i)
        join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.n) as columns,
      (am.amname = 'btree' and i.indexprs is null and i.indpred is null and i.indnatts = i.indnkeyatts
        and not (0 = any(i.indkey::int2[]))) as plain,
      obj_description(idx.oid, 'pg_class') as comment
    from pg_index i
      join pg_class idx on idx.oid = i.indexrelid
      join pg_class tbl on tbl.oid = i.indrelid
      join pg_namespace n on n.oid = tbl.relnamespace
      join pg_am am on am.oid = idx.relam
    where n.nspname = ${ns}
      and not exists (select 1 from pg_constraint con where con.conindid = i.indexrelid and con.contype in ('p', 'u', 'x'))
    order by idx.relname`.execute(db);
  for (const row of indexRows.rows) {
    tables.get(row.table)?.indexes.set(row.name, {
      name: row.name,
      unique: row.unique,
      columns: row.columns ?? [],
      plain: row.plain,
      ownedByFw: row.comment === indexMarker,
    });
  }

  const policyRows = await sql<{ table: string; name: string; signature: string }>`
    select c.relname as table, p.polname as name,
      concat_ws(' | ', p.polcmd::text, p.polpermissive::text,
        (select string_agg(r::text, ',' order by r) from unnest(p.polroles) r),
        coalesce(pg_get_expr(p.polqual, p.polrelid), '-'), coalesce(pg_get_expr(p.polwithcheck, p.polrelid), '-')) as signature
    from pg_policy p
      join pg_class c on c.oid = p.polrelid
      join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${ns}`.execute(db);
  for (const row of policyRows.rows) tables.get(row.table)?.policies.set(row.name, { name: row.name, signature: row.signature });

  const enums = new Map<string, string[]>();
  const enumRows = await sql<{ name: string; label: string }>`
    select t.typname::text as name, e.enumlabel::text as label
    from pg_type t
      join pg_namespace n on n.oid = t.typnamespace
      join pg_enum e on e.enumtypid = t.oid
    where n.nspname = ${ns}
    order by t.typname, e.enumsortorder`.execute(db);
  for (const row of enumRows.rows) {
    const labels = enums.get(row.name) ?? [];
    labels.push(row.label);
    enums.set(row.name, labels);
  }

  return { tables, enums };
}
