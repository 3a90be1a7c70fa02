/** Checks an app's schema declaration before fw touches the database. */
import type { Diagnostic } from '../core/errors.ts';
import type { Schema, Table } from '../core/schema.ts';
import { MAX_IDENTIFIER_BYTES, PUBLIC, TENANT_COLUMN, defaultSql, desiredIndexes, enumTypeName, truncateIdentifier } from './ddl.ts';

/** Problems in the declaration itself, found before touching the database. */
export function validateSchema(schema: Schema): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const tables = new Map(Object.entries(schema.tables));
  const typeNames = new Map<string, string>();
  const tooLong = (name: string): boolean => name.length === 0 || Buffer.byteLength(name) > MAX_IDENTIFIER_BYTES;
  for (const [tableName, table] of tables) {
    const tablePath = `schema.${tableName}`;
    if (tooLong(tableName)) diagnostics.push({ path: tablePath, code: 'invalid_name', message: `Table name "${tableName}" must be 1 to ${MAX_IDENTIFIER_BYTES} bytes long.`, hint: 'Choose a shorter table name.' });
    if (tableName.startsWith('_fw_')) diagnostics.push({ path: tablePath, code: 'invalid_name', message: `Table names starting with _fw_ are reserved for fw ("${tableName}").`, hint: 'Rename the table.' });
    typeNames.set(tableName, `table "${tableName}"`);
    for (const [column, { spec }] of Object.entries(table.columns)) {
      const path = `${tablePath}.${column}`;
      if (tooLong(column)) diagnostics.push({ path, code: 'invalid_name', message: `Column name "${column}" must be 1 to ${MAX_IDENTIFIER_BYTES} bytes long.`, hint: 'Choose a shorter column name.' });
      if (column === TENANT_COLUMN) diagnostics.push({ path, code: 'invalid_name', message: '`tenant_id` is reserved: tenant-scoped tables get it automatically.', hint: 'Rename the column.' });
      if (spec.kind === 'enum') {
        const values = spec.values ?? [];
        const type = enumTypeName(tableName, column);
        if (values.length === 0 || new Set(values).size !== values.length || values.some((v) => v.length === 0 || Buffer.byteLength(v) > MAX_IDENTIFIER_BYTES)) {
          diagnostics.push({ path, code: 'invalid_enum', message: `Enum ${tableName}.${column} needs at least one value, all distinct and 1 to ${MAX_IDENTIFIER_BYTES} bytes long.`, hint: 'Fix the values passed to t.enum([...]).' });
        }
        if (tooLong(type)) diagnostics.push({ path, code: 'invalid_name', message: `The enum type name "${type}" (table_column) is longer than ${MAX_IDENTIFIER_BYTES} bytes.`, hint: 'Shorten the table or column name.' });
        const clash = typeNames.get(type);
        if (clash) diagnostics.push({ path, code: 'invalid_name', message: `The enum type "${type}" of ${tableName}.${column} has the same name as ${clash}.`, hint: 'Rename the table or the column.' });
        typeNames.set(type, `the enum type of ${tableName}.${column}`);
      }
      try {
        defaultSql(PUBLIC, tableName, column, spec);
      } catch (error) {
        diagnostics.push({ path, code: 'invalid_default', message: (error as Error).message.replace(/^fw: /, ''), hint: 'Use a default of the column\'s own type.' });
      }
      const ref = spec.references;
      if (ref) {
        const target = tables.get(ref.table)?.columns[ref.column]?.spec;
        const targetKey = tables.get(ref.table) ? Object.values(tables.get(ref.table)!.columns).filter((c) => c.spec.primaryKey).length : 0;
        if (!tables.has(ref.table)) {
          diagnostics.push({ path, code: 'invalid_reference', message: `${tableName}.${column} references table "${ref.table}", which the schema does not declare.`, hint: `Declare "${ref.table}" or fix the .references(…) call.` });
        } else if (!target) {
          diagnostics.push({ path, code: 'invalid_reference', message: `${tableName}.${column} references ${ref.table}.${ref.column}, which does not exist.`, hint: `Reference an existing column of "${ref.table}".` });
        } else if (!target.unique && !(target.primaryKey && targetKey === 1)) {
          diagnostics.push({ path, code: 'invalid_reference', message: `${tableName}.${column} references ${ref.table}.${ref.column}, which is neither the primary key nor unique.`, hint: `Reference the primary key of "${ref.table}", or mark ${ref.table}.${ref.column} .unique().` });
        } else if (target.kind !== spec.kind || target.kind === 'enum') {
          diagnostics.push({ path, code: 'invalid_reference', message: `${tableName}.${column} (${spec.kind}) references ${ref.table}.${ref.column} (${target.kind}); a foreign key needs the same type on both sides.`, hint: `Declare ${tableName}.${column} as t.${target.kind}().` });
        }
      }
    }
    table.indexes.forEach((index, i) => {
      const path = `${tablePath}.indexes[${i}]`;
      const unknown = index.columns.filter((c) => !(c in table.columns) && !(table.tenantScoped && c === TENANT_COLUMN));
      if (index.columns.length === 0 || unknown.length > 0) {
        diagnostics.push({ path, code: 'invalid_index', message: index.columns.length === 0 ? `Index ${i} of "${tableName}" lists no columns.` : `Index ${i} of "${tableName}" lists unknown column${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}.`, hint: `List columns of "${tableName}".` });
      }
    });
  }
  diagnostics.push(...relationNameClashes(tables));
  return diagnostics;
}

/** Tables, and the indexes behind keys, unique columns and declared indexes, share one namespace. */
function relationNameClashes(tables: Map<string, Table>): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const claimed = new Map<string, string>();
  const claim = (name: string, what: string, path: string): void => {
    const stored = truncateIdentifier(name);
    const prior = claimed.get(stored);
    if (prior === undefined) claimed.set(stored, what);
    else diagnostics.push({ path, code: 'name_clash', message: `${what} would be named "${stored}" in the database, like ${prior}.`, hint: 'Rename a table or column, or remove the duplicate declaration (a unique column already has a unique index).' });
  };
  for (const name of tables.keys()) claim(name, `table "${name}"`, `schema.${name}`);
  for (const [name, table] of tables) {
    const key = Object.entries(table.columns).filter(([, c]) => c.spec.primaryKey);
    if (key.length > 0) claim(`${name}_pkey`, `the primary key of "${name}"`, `schema.${name}`);
    for (const [column, { spec }] of Object.entries(table.columns)) {
      if (spec.unique && !(spec.primaryKey && key.length === 1)) claim(`${name}_${column}_key`, `the unique constraint of ${name}.${column}`, `schema.${name}.${column}`);
    }
    const declared = desiredIndexes(name, table);
    const offset = declared.length - table.indexes.length; // the tenant_id index comes first
    declared.forEach((index, i) => claim(index.name, i < offset ? `the tenant_id index of "${name}"` : `index ${i - offset} of "${name}"`, i < offset ? `schema.${name}` : `schema.${name}.indexes[${i - offset}]`));
  }
  return diagnostics;
}
