/**
 * The migration planner's pure part: diffs the live database model against the desired one (both
 * introspected, see introspect.ts) into planned changes and refusals. Existing tables are diffed
 * column by column in diff-table.ts.
 */
import type { Diagnostic } from '../core/errors.ts';
import type { Schema, Table } from '../core/schema.ts';
import {
  PUBLIC,
  TENANT_COLUMN,
  TENANT_POLICY,
  IDENTITY_POLICY,
  addEnumValueSql,
  addForeignKeySql,
  createEnumSql,
  createIndexSql,
  createTableSql,
  creationOrder,
  desiredIndexes,
  dropIndexSql,
  enumTypeName,
  qualified,
  tenantPolicySql,
  identityPolicySql,
  isTenantReference,
  truncateIdentifier,
} from './ddl.ts';
import { addForeignKeyChange, dataLossHint, diffTable } from './diff-table.ts';
import type { AddChange, ChangeKind, DiffInput, PlannedChange } from './plan-types.ts';

export type { AddChange, ChangeKind, DiffInput, PlannedChange } from './plan-types.ts';
import type { ColumnModel, DbModel, TableModel } from './introspect.ts';


export interface MigrationPlan {
  /** Changes in the order they are applied. */
  changes: PlannedChange[];
  /** Refused changes. While any is present, nothing is applied. */
  blocked: Diagnostic[];
}

export interface ComputedPlan extends MigrationPlan {
  /**
   * A default in this plan uses an enum value this plan adds. PostgreSQL refuses to use a new enum
   * value in the transaction that added it, so the values must be committed first.
   */
  usesNewEnumValues: boolean;
}

/** The order changes are applied in: types, tables, columns, column tweaks, security, indexes, drops. */
const applyOrder: ChangeKind[] = [
  'create_enum',
  'add_enum_value',
  'create_table',
  'add_column',
  'drop_not_null',
  'set_default',
  'drop_default',
  'enable_tenant_policy',
  'enable_identity_policy',
  'drop_index',
  'create_index',
  // Tables before columns: a dropped column may still be referenced by a dropped table's foreign key.
  'drop_table',
  'drop_column',
  // A foreign key that moves within the tenant: the old one goes before the key it references changes.
  'drop_foreign_key',
  // After the drops: a foreign key that referenced the column (and kept its constraint global) may go with them.
  'scope_unique',
  'add_tenant_key',
  // Last: every key a foreign key within the tenant references is in place.
  'add_foreign_key',
];


export async function diffSchema(input: DiffInput): Promise<ComputedPlan> {
  const { schema, actual, desired } = input;
  const changes: PlannedChange[] = [];
  const blocked: Diagnostic[] = [];
  const tables = new Map(Object.entries(schema.tables));
  const add = (change: Omit<PlannedChange, 'destructive'> & { destructive?: boolean }): void => {
    changes.push({ destructive: false, ...change });
  };

  // Enum types: created, or extended without disturbing the existing values.
  const newEnumValues = new Map<string, Set<string>>();
  for (const [tableName, table] of tables) {
    for (const [column, { spec }] of Object.entries(table.columns)) {
      if (spec.kind !== 'enum') continue;
      const type = enumTypeName(tableName, column);
      const want = [...(spec.values ?? [])];
      const have = actual.enums.get(type);
      const path = `schema.${tableName}.${column}`;
      if (!have) {
        add({ kind: 'create_enum', table: tableName, column, description: `create enum type ${type} (${want.join(', ')})`, sql: [createEnumSql(PUBLIC, type, want)] });
        continue;
      }
      const removed = have.filter((value) => !want.includes(value));
      if (removed.length > 0) {
        blocked.push({
          path,
          code: 'enum_value_removed',
          message: `Enum ${tableName}.${column} no longer lists ${removed.map((v) => JSON.stringify(v)).join(', ')}, which the database type ${type} has: rows may still hold ${removed.length === 1 ? 'it' : 'them'}, and fw never removes enum values.`,
          hint: `Put ${removed.map((v) => JSON.stringify(v)).join(', ')} back into the enum's values (existing values keep their order; append new ones). To retire a value, stop writing it in your code and migrate the rows that hold it.`,
        });
        continue;
      }
      const positions = have.map((value) => want.indexOf(value));
      if (positions.some((position, index) => index > 0 && position < positions[index - 1]!)) {
        blocked.push({
          path,
          code: 'enum_values_reordered',
          message: `Enum ${tableName}.${column} lists its existing values in a different order than the database type ${type} (${have.join(', ')}); PostgreSQL cannot reorder enum values, and the order decides sorting and comparisons.`,
          hint: `Keep the existing values in the order ${have.map((v) => JSON.stringify(v)).join(', ')}; new values may go anywhere between them.`,
        });
        continue;
      }
      const added = new Set<string>();
      want.forEach((value, index) => {
        if (have.includes(value)) return;
        const position = index > 0 ? { after: want[index - 1]! } : have[0] !== undefined ? { before: have[0] } : null;
        add({ kind: 'add_enum_value', table: tableName, column, description: `add value ${JSON.stringify(value)} to enum type ${type}`, sql: [addEnumValueSql(PUBLIC, type, value, position)] });
        added.add(value);
      });
      if (added.size > 0) newEnumValues.set(type, added);
    }
  }

  // New tables, referenced tables first.
  const newTables = new Set([...tables.keys()].filter((name) => !actual.tables.has(name)));
  for (const step of creationOrder(tables, newTables)) {
    const table = tables.get(step.table)!;
    // A key within the tenant to an existing table waits for the end: that table may not have its tenant key yet.
    const toExisting = Object.entries(table.columns)
      .filter(([, { spec }]) => spec.references && !newTables.has(spec.references.table) && isTenantReference(schema, step.table, spec))
      .map(([column]) => column);
    const sql = createTableSql(PUBLIC, step.table, table, new Set([...step.deferred, ...toExisting]), schema);
    for (const late of step.lateForeignKeys) {
      sql.push(addForeignKeySql(PUBLIC, schema, late.table, late.column, tables.get(late.table)!.columns[late.column]!.spec));
    }
    for (const column of toExisting) {
      add(addForeignKeyChange(schema, step.table, column, table.columns[column]!.spec));
    }
    const columns = Object.keys(table.columns).concat(table.tenantScoped ? [TENANT_COLUMN] : []);
    add({ kind: 'create_table', table: step.table, description: `create table ${step.table} (${columns.join(', ')})${table.tenantScoped ? ', tenant-scoped' : ''}`, sql });
  }

  // Existing tables: columns and constraints; then indexes and tenant security for every declared table.
  const droppedColumns: Array<{ table: string; column: ColumnModel; change: PlannedChange | null }> = [];
  for (const [name, table] of tables) {
    const want = desired.tables.get(name)!;
    const have = actual.tables.get(name);
    let scopeMismatch = false;
    if (have) {
      const result = await diffTable(input, name, table, want, have, add, blocked);
      scopeMismatch = result.scopeMismatch;
      for (const column of result.dropped) droppedColumns.push({ table: name, column, change: result.dropChanges.get(column.name) ?? null });
    }
    diffIndexes(name, table, have, scopeMismatch, add, blocked);
    if (table.tenantScoped && !scopeMismatch) {
      const wanted = want.policies.get(TENANT_POLICY)?.signature;
      const current = have?.policies.get(TENANT_POLICY)?.signature;
      if (!have || !have.rowSecurity || !have.forceRowSecurity || wanted !== current) {
        add({ kind: 'enable_tenant_policy', table: name, description: `enable row-level security on ${name} with policy ${TENANT_POLICY}`, sql: tenantPolicySql(PUBLIC, name) });
      }
    } else if (!table.tenantScoped && !scopeMismatch) {
      const wanted = want.policies.get(IDENTITY_POLICY)?.signature;
      const current = have?.policies.get(IDENTITY_POLICY)?.signature;
      if (!have || !have.rowSecurity || have.forceRowSecurity || wanted !== current) {
        add({ kind: 'enable_identity_policy', table: name, description: `enable row-level security on ${name} with policy ${IDENTITY_POLICY} (a verified request identity)`, sql: identityPolicySql(PUBLIC, name) });
      }
    }
  }

  // Tables that are no longer declared, referencing tables first.
  const droppedTables = [...actual.tables.keys()].filter((name) => !tables.has(name));
  for (const name of dropOrder(actual, droppedTables)) {
    const have = actual.tables.get(name)!;
    if (input.acceptDataLoss) {
      const change: PlannedChange = { kind: 'drop_table', table: name, description: `drop table ${name} and all its rows`, sql: [`drop table ${qualified(PUBLIC, name)}`], destructive: true };
      changes.push(change);
      for (const column of have.columns.values()) droppedColumns.push({ table: name, column, change });
      continue;
    }
    const candidates = [...newTables];
    blocked.push({
      path: `schema.${name}`,
      code: candidates.length > 0 ? 'possible_rename' : 'drop_table',
      message:
        `Table "${name}" exists in the database but is no longer declared; dropping it would delete its rows.` +
        (candidates.length > 0 ? ` New table${candidates.length > 1 ? 's' : ''} ${candidates.map((c) => `"${c}"`).join(', ')} appeared at the same time: if this is a rename, note that fw does not guess renames.` : ''),
      hint:
        candidates.length > 0
          ? `To rename, keep "${name}" declared, create the new table, copy the rows (insert into … select … from "${name}"), then remove "${name}" and ${dataLossHint}. To really delete it, ${dataLossHint}.`
          : `Declare "${name}" again to keep it, or ${dataLossHint} to delete the table and its rows.`,
    });
  }

  // Enum types fw created for dropped columns go with them, once nothing else uses them.
  const droppedSet = new Set(droppedColumns.map((d) => `${d.table}.${d.column.name}`));
  const wantedEnums = new Set(desired.enums.keys());
  const dropTypes = new Set<string>();
  for (const { table, column, change } of droppedColumns) {
    const type = column.typeName;
    if (!change || !column.isEnum || type !== enumTypeName(table, column.name) || wantedEnums.has(type) || dropTypes.has(type)) continue;
    const stillUsed = [...actual.tables.values()].some((t) =>
      [...t.columns.values()].some((c) => c.typeName === type && !droppedSet.has(`${t.name}.${c.name}`)),
    );
    if (stillUsed) continue;
    dropTypes.add(type);
    change.sql.push(`drop type ${qualified(PUBLIC, type)}`);
  }

  // A default that uses an enum value added by this very plan needs the value committed first.
  let usesNewEnumValues = false;
  for (const [tableName, table] of tables) {
    for (const [column, { spec }] of Object.entries(table.columns)) {
      const value = spec.kind === 'enum' && spec.default?.kind === 'value' ? spec.default.value : undefined;
      if (typeof value !== 'string' || !newEnumValues.get(enumTypeName(tableName, column))?.has(value)) continue;
      usesNewEnumValues ||= changes.some(
        (change) =>
          change.table === tableName &&
          (change.kind === 'create_table' || ((change.kind === 'add_column' || change.kind === 'set_default') && change.column === column)),
      );
    }
  }

  changes.sort((a, b) => applyOrder.indexOf(a.kind) - applyOrder.indexOf(b.kind));
  return { changes, blocked, usesNewEnumValues };
}

function diffIndexes(name: string, table: Table, have: TableModel | undefined, scopeMismatch: boolean, add: AddChange, blocked: Diagnostic[]): void {
  const wanted = desiredIndexes(name, table).filter((index) => !(scopeMismatch && index.columns.includes(TENANT_COLUMN)));
  const wantedNames = new Set<string>();
  for (const index of wanted) {
    const stored = truncateIdentifier(index.name);
    wantedNames.add(stored);
    const existing = have?.indexes.get(stored);
    const label = `${index.unique ? 'unique ' : ''}index ${stored} on ${name} (${index.columns.join(', ')})`;
    if (existing && existing.plain && existing.unique === index.unique && existing.columns.join(',') === index.columns.join(',')) continue;
    if (existing && !existing.ownedByFw) {
      blocked.push({
        path: `schema.${name}.indexes`,
        code: 'index_name_conflict',
        message: `An index named ${stored} already exists on "${name}" with a different definition, and fw did not create it.`,
        hint: `Rename or drop that index by hand (drop index "${stored}"), then migrate again.`,
      });
      continue;
    }
    if (existing) add({ kind: 'drop_index', table: name, description: `drop index ${stored} (its definition changed)`, sql: [dropIndexSql(PUBLIC, stored)] });
    add({ kind: 'create_index', table: name, description: `create ${label}`, sql: createIndexSql(PUBLIC, index) });
  }
  for (const existing of have?.indexes.values() ?? []) {
    if (existing.ownedByFw && !wantedNames.has(existing.name)) {
      add({ kind: 'drop_index', table: name, description: `drop index ${existing.name} (no longer declared)`, sql: [dropIndexSql(PUBLIC, existing.name)] });
    }
  }
}

/** Dropped tables, each before the dropped tables it references. */
function dropOrder(actual: DbModel, dropping: string[]): string[] {
  const set = new Set(dropping);
  const order: string[] = [];
  const seen = new Set<string>();
  const visit = (name: string): void => {
    if (seen.has(name)) return;
    seen.add(name);
    // Tables referencing `name` go first.
    for (const other of [...set].sort()) {
      if (other !== name && actual.tables.get(other)!.constraints.some((c) => c.type === 'f' && c.refTable === name)) visit(other);
    }
    order.push(name);
  };
  for (const name of [...set].sort()) visit(name);
  return order;
}
