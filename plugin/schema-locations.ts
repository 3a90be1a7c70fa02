import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseSync } from 'oxc-parser';
import type { Diagnostic } from '../runtime/core/errors.ts';

/** A diagnostic with the place in the app's files it concerns (relative file, 1-based line and column). */
export type LocatedDiagnostic = Diagnostic & { file?: string; line?: number; column?: number };

const SCHEMA_FILES = ['src/fw/schema.ts', 'src/fw/schema.js'];

/**
 * Gives the migration planner's diagnostics (paths like `schema.tickets.requester`) the line of the
 * schema file they concern, so a terminal, an editor or Vite's overlay can open it there. The planner
 * works on the schema as data and cannot know lines; this reads the file with oxc. A column that is no
 * longer declared (a drop) points at its table; a table no longer declared, at `defineSchema(`.
 * Diagnostics whose place is not found are returned as they are.
 */
export function locateSchemaDiagnostics<D extends Diagnostic>(root: string, diagnostics: readonly D[]): Array<D & LocatedDiagnostic> {
  const file = SCHEMA_FILES.find((candidate) => existsSync(path.join(root, candidate)));
  if (!file || diagnostics.length === 0) return [...diagnostics];
  let places: SchemaPlaces;
  try {
    places = schemaPlaces(readFileSync(path.join(root, file), 'utf8'), file);
  } catch {
    return [...diagnostics];
  }
  return diagnostics.map((d) => {
    const place = placeOf(places, d.path);
    return place ? { ...d, file, ...place } : d;
  });
}

interface Place {
  line: number;
  column: number;
}

interface SchemaPlaces {
  /** `defineSchema(` itself. */
  schema?: Place;
  tables: Map<string, TablePlaces>;
}

interface TablePlaces {
  at: Place;
  columns: Map<string, Place>;
  indexes?: Place;
}

function placeOf(places: SchemaPlaces, diagnosticPath: string): Place | undefined {
  const [head, table, part] = diagnosticPath.split('.');
  if (head !== 'schema') return undefined;
  const found = table ? places.tables.get(table) : undefined;
  if (!found) return places.schema;
  if (part === 'indexes') return found.indexes ?? found.at;
  return (part && found.columns.get(part)) || found.at;
}

/** The places of `defineSchema({ table: table({ column: … }, { indexes }) })` in a schema file's source. */
export function schemaPlaces(source: string, fileName: string): SchemaPlaces {
  const { program } = parseSync(fileName, source);
  const lineStarts = [0];
  for (let i = 0; i < source.length; i++) if (source[i] === '\n') lineStarts.push(i + 1);
  const at = (offset: number): Place => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (lineStarts[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: offset - lineStarts[low]! + 1 };
  };
  const places: SchemaPlaces = { tables: new Map() };
  walk(program, (node) => {
    if (node.type !== 'CallExpression' || calleeName(node) !== 'defineSchema') return;
    places.schema ??= at(node.start as number);
    const tables = (node.arguments as Node[] | undefined)?.[0];
    if (tables?.type !== 'ObjectExpression') return;
    for (const property of tables.properties as Node[]) {
      const name = propertyName(property);
      if (!name) continue;
      const entry: TablePlaces = { at: at(property.start as number), columns: new Map() };
      const value = property.value as Node | undefined;
      const [columns, options] = value?.type === 'CallExpression' ? (value.arguments as Node[]) : [];
      for (const column of columns?.type === 'ObjectExpression' ? (columns.properties as Node[]) : []) {
        const columnName = propertyName(column);
        if (columnName) entry.columns.set(columnName, at(column.start as number));
      }
      for (const option of options?.type === 'ObjectExpression' ? (options.properties as Node[]) : []) {
        if (propertyName(option) === 'indexes') entry.indexes = at(option.start as number);
      }
      places.tables.set(name, entry);
    }
  });
  return places;
}

type Node = { type: string; start?: number; [key: string]: unknown };

function walk(node: unknown, visit: (node: Node) => void): void {
  if (Array.isArray(node)) {
    for (const child of node) walk(child, visit);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const n = node as Node;
  if (typeof n.type === 'string') visit(n);
  for (const key of Object.keys(n)) {
    if (key !== 'parent') walk(n[key], visit);
  }
}

function calleeName(call: Node): string | undefined {
  const callee = call.callee as Node | undefined;
  if (callee?.type === 'Identifier') return callee.name as string;
  if (callee?.type === 'MemberExpression' || callee?.type === 'StaticMemberExpression') return ((callee.property as Node | undefined)?.name as string | undefined) ?? undefined;
  return undefined;
}

function propertyName(property: Node): string | undefined {
  if (property.type !== 'Property' && property.type !== 'ObjectProperty') return undefined;
  const key = property.key as Node | undefined;
  if (key?.type === 'Identifier') return key.name as string;
  if (key?.type === 'Literal' || key?.type === 'StringLiteral') return String(key.value);
  return undefined;
}
