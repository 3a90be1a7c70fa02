/**
 * The diff of one existing table: added, dropped and changed columns, and their constraints.
 * Part of the planner (plan.ts).
 */
import type { Diagnostic } from '../core/errors.ts';
import type { ColumnSpec, Schema, Table } from '../core/schema.ts';
import {
  CURRENT_TENANT,
  PUBLIC,
  TENANT_COLUMN,
  addColumnSql,
  addForeignKeySql,
  defaultSql,
  ident,
  isTenantReference,
  qualified,
  tenantKeyConstraint,
  tenantKeyName,
  uniqueConstraint,
} from './ddl.ts';
import type { ColumnModel, ConstraintModel, TableModel } from './introspect.ts';
import type { AddChange, DiffInput, PlannedChange } from './plan-types.ts';

/** Adds the foreign key of `table.column` within the tenant: planned last (plan.ts), once the key it references is in place. */
export function addForeignKeyChange(schema: Schema, table: string, column: string, spec: ColumnSpec): Omit<PlannedChange, 'destructive'> {
  return {
    kind: 'add_foreign_key',
    table,
    column,
    description: `add the foreign key of ${table}.${column} → ${spec.references!.table}.${spec.references!.column}, within the tenant (tenant_id, ${column})`,
    sql: [addForeignKeySql(PUBLIC, schema, table, column, spec)],
  };
}

export const dataLossHint = 'run the migration with --accept-data-loss (acceptDataLoss: true)';

export async function diffTable(
  input: DiffInput,
  name: string,
  table: Table,
  want: TableModel,
  have: TableModel,
  add: AddChange,
  blocked: Diagnostic[],
): Promise<{ scopeMismatch: boolean; dropped: ColumnModel[]; dropChanges: Map<string, PlannedChange> }> {
  const scopeMismatch = table.tenantScoped !== have.columns.has(TENANT_COLUMN);
  if (scopeMismatch) {
    blocked.push({
      path: `schema.${name}`,
      code: 'tenant_scope_change',
      message: table.tenantScoped
        ? `Table "${name}" is declared tenant-scoped, but the database table is not (it has no tenant_id column): fw cannot know which tenant its existing rows belong to.`
        : `Table "${name}" is declared with tenantScoped: false, but the database table is tenant-scoped (tenant_id and row-level security): switching would share every tenant's rows with all tenants.`,
      hint: `Restore tenantScoped: ${!table.tenantScoped} on "${name}". To switch, declare a new table with the scoping you want, copy the rows into it (choosing each row's tenant), then remove "${name}" and ${dataLossHint}.`,
    });
  }
  const skip = (column: string): boolean => scopeMismatch && column === TENANT_COLUMN;
  const added = [...want.columns.keys()].filter((c) => !have.columns.has(c) && !skip(c));
  const dropped = [...have.columns.values()].filter((c) => !want.columns.has(c.name) && !skip(c.name));
  const dropChanges = new Map<string, PlannedChange>();

  let rows: number | undefined;
  const rowCount = async (): Promise<number> => (rows ??= await input.rowCount(name));

  for (const column of added) {
    const spec = table.columns[column]!.spec;
    const path = `schema.${name}.${column}`;
    const fallback = defaultSql(PUBLIC, name, column, spec);
    if (spec.primaryKey) {
      blocked.push({
        path,
        code: 'primary_key_change',
        message: `New column ${name}.${column} is declared as primary key, but table "${name}" already exists: fw does not change the primary key of an existing table.`,
        hint: `Drop .primaryKey() from ${name}.${column} (use .unique() if it must be unique), or create a new table with the primary key you want and copy the rows.`,
      });
      continue;
    }
    if (!spec.nullable && fallback === null && (await rowCount()) > 0) {
      blocked.push({
        path,
        code: 'not_null_without_default',
        message: `New column ${name}.${column} is NOT NULL without a default, but table "${name}" has rows, which would have no value for it.`,
        hint: `Give ${name}.${column} a default (.default(…)${spec.kind === 'uuid' ? ' or .defaultRandom()' : spec.kind === 'timestamptz' ? ' or .defaultNow()' : ''}) so existing rows get that value, or make it .nullable().`,
      });
      continue;
    }
    if (spec.unique && fallback !== null && spec.default?.kind !== 'random_uuid' && (await rowCount()) > 1) {
      blocked.push({
        path,
        code: 'unique_column_with_shared_default',
        message: `New unique column ${name}.${column} would give all existing rows of "${name}" the same default value, which violates its uniqueness.`,
        hint: `Add ${name}.${column} without .unique() first, fill it with distinct values, then declare a unique index on it (indexes: [{ columns: ['${column}'], unique: true }]), which fw adds to existing tables.`,
      });
      continue;
    }
    const nullability = spec.nullable ? 'nullable' : 'not null';
    // A key within the tenant comes last (plan.ts): the key it references may change in this plan too.
    const laterKey = Boolean(spec.references) && isTenantReference(input.schema, name, spec);
    add({
      kind: 'add_column',
      table: name,
      column,
      description: `add column ${name}.${column} (${spec.kind}, ${nullability}${fallback !== null ? `, default ${fallback}` : ''})`,
      sql: [addColumnSql(PUBLIC, name, column, spec, input.schema, !laterKey)],
    });
    if (laterKey) add(addForeignKeyChange(input.schema, name, column, spec));
  }

  for (const column of dropped) {
    const path = `schema.${name}.${column.name}`;
    if (input.acceptDataLoss) {
      const change: PlannedChange = {
        kind: 'drop_column',
        table: name,
        column: column.name,
        description: `drop column ${name}.${column.name} and its data`,
        sql: [`alter table ${qualified(PUBLIC, name)} drop column ${ident(column.name)}`],
        destructive: true,
      };
      add(change);
      dropChanges.set(column.name, change);
      continue;
    }
    const rename = added.length > 0;
    blocked.push({
      path,
      code: rename ? 'possible_rename' : 'drop_column',
      message:
        `Column ${name}.${column.name} exists in the database but is no longer declared; dropping it would delete its data.` +
        (rename ? ` New column${added.length > 1 ? 's' : ''} ${added.map((c) => `${name}.${c}`).join(', ')} appeared at the same time: this may be a rename, and fw does not guess renames.` : ''),
      hint: rename
        ? `To rename, keep "${column.name}" declared next to the new column, copy the data (update "${name}" set "${added[0]}" = "${column.name}"), then remove "${column.name}" and ${dataLossHint}. To really delete it, ${dataLossHint}.`
        : `Declare ${name}.${column.name} again to keep it, or ${dataLossHint} to delete the column and its data.`,
    });
  }

  const droppedNames = new Set(dropped.map((c) => c.name));
  for (const [column, w] of want.columns) {
    const h = have.columns.get(column);
    if (!h || skip(column)) continue;
    const spec: ColumnSpec | undefined = table.columns[column]?.spec;
    const path = `schema.${name}.${column}`;
    if (w.type !== h.type) {
      blocked.push({
        path,
        code: 'column_type_change',
        message: `Column ${name}.${column} is ${h.type} in the database but declared as ${w.type}; fw does not change column types.`,
        hint: `Keep ${name}.${column} as ${h.type}. To change it, add a new column of the new type, copy the data (update "${name}" set "new_column" = "${column}"::${w.type}), switch your code over, then remove "${column}" and ${dataLossHint}.`,
      });
      continue;
    }
    if (h.notNull && !w.notNull) {
      add({ kind: 'drop_not_null', table: name, column, description: `make ${name}.${column} nullable`, sql: [`alter table ${qualified(PUBLIC, name)} alter column ${ident(column)} drop not null`] });
    } else if (!h.notNull && w.notNull) {
      blocked.push({
        path,
        code: 'column_set_not_null',
        message: `Column ${name}.${column} is nullable in the database but declared NOT NULL; rows may hold NULL, so fw does not tighten it.`,
        hint: `Keep .nullable() on ${name}.${column}. To make it required, add a new NOT NULL column with a default, copy the values (update "${name}" set "new_column" = coalesce("${column}", …)), then remove "${column}" and ${dataLossHint}.`,
      });
    }
    if (w.default !== h.default) {
      const expression = column === TENANT_COLUMN ? CURRENT_TENANT : spec ? defaultSql(PUBLIC, name, column, spec) : null;
      if (expression === null) {
        add({ kind: 'drop_default', table: name, column, description: `drop the default of ${name}.${column}`, sql: [`alter table ${qualified(PUBLIC, name)} alter column ${ident(column)} drop default`] });
      } else {
        add({ kind: 'set_default', table: name, column, description: `set the default of ${name}.${column} to ${expression}`, sql: [`alter table ${qualified(PUBLIC, name)} alter column ${ident(column)} set default ${expression}`] });
      }
    }
    // Unique and foreign-key constraints on this column.
    const wantUnique = uniqueOf(want.constraints, name, column);
    const haveUnique = uniqueOf(have.constraints, name, column);
    // The (tenant_id, column) key that foreign keys within the tenant reference: adding it only admits what the column's own key does.
    const keyName = tenantKeyName(name, column);
    if (want.constraints.some((c) => c.type === 'u' && c.name === keyName) && !have.constraints.some((c) => c.type === 'u' && c.name === keyName)) {
      add({
        kind: 'add_tenant_key',
        table: name,
        column,
        description: `add the key (tenant_id, ${column}) of ${name}, which foreign keys within the tenant reference`,
        sql: [`alter table ${qualified(PUBLIC, name)} add ${tenantKeyConstraint(name, column)}`],
      });
    }
    if (wantUnique && haveUnique && wantUnique.columns.join(',') !== haveUnique.columns.join(',')) {
      const withinTenant = wantUnique.columns.length === 2;
      if (withinTenant) {
        // Unique across all tenants → within each: it only admits more rows, so it always applies.
        add({
          kind: 'scope_unique',
          table: name,
          column,
          description: `make ${name}.${column} unique within each tenant (tenant_id, ${column}), not across tenants`,
          sql: [`alter table ${qualified(PUBLIC, name)} drop constraint ${ident(haveUnique.name)}, add ${uniqueConstraint(input.schema, name, column)}`],
        });
      } else {
        blocked.push({
          path,
          code: 'unique_scope_change',
          message: `Column ${name}.${column} is unique within each tenant in the database, and a foreign key now references it, which needs it unique across all tenants; two tenants may already hold the same value.`,
          hint: `Reference the primary key of "${name}" instead, or make the values unique across tenants first and replace the constraint by hand (alter table "${name}" drop constraint "${haveUnique.name}", add constraint "${name}_${column}_key" unique ("${column}")).`,
        });
      }
    } else if (Boolean(wantUnique) !== Boolean(haveUnique)) {
      blocked.push({
        path,
        code: 'unique_change',
        message: `Column ${name}.${column} is ${haveUnique ? 'unique' : 'not unique'} in the database but declared ${wantUnique ? 'unique' : 'not unique'}; fw does not add or drop constraints of existing columns.`,
        hint: wantUnique
          ? `Remove .unique() from ${name}.${column}, or declare a unique index instead (indexes: [{ columns: ['${column}'], unique: true }]), which fw can add.`
          : `Put .unique() back on ${name}.${column}; to drop the constraint, add a new column without it, copy the data, then remove "${column}" and ${dataLossHint}.`,
      });
    }
    const wantRef = foreignKeyOf(want.constraints, column);
    const haveRef = foreignKeyOf(have.constraints, column);
    if (describeForeignKey(wantRef) !== describeForeignKey(haveRef)) {
      const spec = table.columns[column]?.spec;
      // An older fw's key on the column alone, now within the tenant: the same reference, checked per tenant.
      const movesWithinTenant =
        spec?.references && wantRef && haveRef && wantRef.columns.length === 2 && haveRef.columns.length === 1 &&
        wantRef.refTable === haveRef.refTable && wantRef.refColumns.at(-1) === haveRef.refColumns[0] && wantRef.onDelete === haveRef.onDelete;
      const crossing = movesWithinTenant ? await input.crossTenantReferences(name, column, spec.references!.table, spec.references!.column) : 0;
      if (movesWithinTenant && crossing === 0) {
        add({
          kind: 'drop_foreign_key',
          table: name,
          column,
          description: `drop the foreign key ${haveRef.name} of ${name}.${column} on the column alone (it is added again within the tenant)`,
          sql: [`alter table ${qualified(PUBLIC, name)} drop constraint ${ident(haveRef.name)}`],
        });
        add(addForeignKeyChange(input.schema, name, column, spec));
      } else if (movesWithinTenant) {
        const ref = spec.references!;
        blocked.push({
          path,
          code: 'cross_tenant_reference',
          message: `Rows of ${name} reference rows of ${ref.table} that belong to another tenant through ${name}.${column}; fw now keeps foreign keys between tenant tables within the tenant, and these rows would break it.`,
          hint: `Find them as the owner (select t.* from "${name}" t join "${ref.table}" r on r."${ref.column}" = t."${column}" where r.tenant_id <> t.tenant_id), then point them at a row of their own tenant or clear ${name}.${column}, and migrate again.`,
        });
      } else {
        blocked.push({
          path,
          code: 'foreign_key_change',
          message: `The foreign key of ${name}.${column} is ${describeForeignKey(haveRef) || 'absent'} in the database but declared ${describeForeignKey(wantRef) || 'absent'}; fw does not change constraints of existing columns.`,
          hint: `Restore the previous .references(…) on ${name}.${column}. To change it, add a new column with the reference you want, copy the data, then remove "${column}" and ${dataLossHint}.`,
        });
      }
    }
  }

  const wantKey = primaryKey(want.constraints);
  const haveKey = primaryKey(have.constraints);
  const addedKey = wantKey.some((c) => added.includes(c));
  const droppedWithColumns = wantKey.length === 0 && haveKey.length > 0 && haveKey.every((c) => droppedNames.has(c));
  if (wantKey.join(',') !== haveKey.join(',') && !addedKey && !droppedWithColumns) {
    blocked.push({
      path: `schema.${name}`,
      code: 'primary_key_change',
      message: `The primary key of "${name}" is (${haveKey.join(', ') || 'none'}) in the database but declared as (${wantKey.join(', ') || 'none'}); fw does not change the primary key of an existing table.`,
      hint: `Restore .primaryKey() on ${haveKey.length > 0 ? haveKey.map((c) => `${name}.${c}`).join(', ') : 'no column'}. To change it, create a new table with the key you want and copy the rows.`,
    });
  }
  return { scopeMismatch, dropped, dropChanges };
}

/**
 * The column's unique constraint: on `(column)`, or within the tenant on `(tenant_id, column)` (ddl.ts's
 * uniqueColumns); not the tenant key foreign keys reference (ddl.ts's needsTenantKey).
 */
function uniqueOf(constraints: ConstraintModel[], table: string, column: string): ConstraintModel | undefined {
  const tenantKey = tenantKeyName(table, column);
  return constraints.find((c) => c.type === 'u' && c.name !== tenantKey && onColumn(c, column));
}

/** A constraint on `(column)`, or within the tenant on `(tenant_id, column)`. */
function onColumn(c: ConstraintModel, column: string): boolean {
  return (c.columns.length === 1 && c.columns[0] === column) || (c.columns.length === 2 && c.columns[0] === TENANT_COLUMN && c.columns[1] === column);
}

const onDeleteNames: Record<string, string> = { a: 'no action', r: 'restrict', c: 'cascade', n: 'set null', d: 'set default' };

/** The column's foreign key: on `(column)`, or within the tenant on `(tenant_id, column)`. */
function foreignKeyOf(constraints: ConstraintModel[], column: string): ConstraintModel | undefined {
  return constraints.find((c) => c.type === 'f' && onColumn(c, column));
}

function describeForeignKey(c: ConstraintModel | undefined): string {
  if (!c) return '';
  return `(${c.columns.join(', ')}) references ${c.refTable}(${c.refColumns.join(', ')}) on delete ${onDeleteNames[c.onDelete] ?? c.onDelete}`;
}

function primaryKey(constraints: ConstraintModel[]): string[] {
  return constraints.find((c) => c.type === 'p')?.columns ?? [];
}
