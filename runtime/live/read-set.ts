/**
 * Read sets: which rows a liveQuery run could have read, per table, as a disjunction of accesses, each a
 * conjunction of conditions on plain columns (`=`, `IN`, `IS NULL`, integer ranges). A write reruns the
 * group only when a changed row — its old or its new image — can satisfy one of them
 * (`readSetMatches`). See docs/live.md ("Which writes rerun a live query").
 *
 * Soundness is the rule: every condition kept must hold for every row of that table that can influence
 * the result. A condition fw cannot prove that of is dropped, which only widens the access; a table with
 * nothing left is read whole. What is kept:
 * - the AND-ed conditions of a SELECT's WHERE and of its inner joins' ON clauses, for the tables of its
 *   own FROM (a subquery's conditions for the subquery's tables — whatever surrounds it, NOT EXISTS
 *   included, a row outside its conditions never enters its result);
 * - for a LEFT JOIN's joined table, only the ON clause's conditions (its WHERE conditions may be the
 *   `IS NULL` of an anti-join); a RIGHT or FULL join makes the whole SELECT unconstrained;
 * - `a = 1 OR a = 2` on one column, as `a IN (1, 2)`; every other OR, NOT, function, raw fragment or
 *   comparison with a non-constant is dropped;
 * - values of columns fw captures (uuid, text, enum, integer, bigint, boolean), in the text form
 *   PostgreSQL's `to_jsonb(row) ->> column` gives them; a value that cannot be put in that form for sure
 *   drops its condition.
 *
 * @example
 *   const reads = createReadSetBuilder(schema);
 *   reads.addStatement(node);          // every statement of the run (the read recorder does it)
 *   const readSet = reads.build();     // Map { 'notes' => [{ conditions: [{ column: 'author_id', … }] }] }
 *   readSetMatches(readSet.get('notes'), { author_id: ['7f…'] }); // true
 */
import type { OperationNode } from 'kysely';
import type { ColumnKind, Schema } from '../core/schema.ts';
import { CAPTURED_KINDS } from '../db/live-capture.ts';

/** A value in its canonical text form (`to_jsonb(row) ->> column`); null is SQL NULL. */
export type CapturedValue = string | null;

export type Condition =
  /** `column = v`, `column IN (…)`, `column IS NULL` (null among the values). */
  | { readonly column: string; readonly kind: 'in'; readonly values: ReadonlySet<CapturedValue> }
  /** An integer column within inclusive bounds (either may be open). */
  | { readonly column: string; readonly kind: 'range'; readonly min?: bigint; readonly max?: bigint };

/** One read of a table: the rows satisfying every condition (none = every row). */
export interface Access {
  readonly conditions: readonly Condition[];
}

/** table → the accesses of one run (OR-ed). A table read whole has exactly one access without conditions. */
export type ReadSet = ReadonlyMap<string, readonly Access[]>;

/**
 * What one log row says changed in its table and tenant: column → the distinct values of the old and
 * new images. A column that is missing or null (too many values, a long value, not captured), or a
 * null object (TRUNCATE, `recordInvalidations`, an older log row), means "any value".
 */
export type ChangedValues = Readonly<Record<string, readonly CapturedValue[] | null>> | null;

/** Distinct values kept per condition or per captured column before it becomes "any value". */
export const MAX_VALUES = 32;
/** Accesses kept per table before the table counts as read whole (bounds matching work per group). */
const MAX_ACCESSES = 16;

/** Whether a change (old or new images of one table × tenant) can touch a row of one of the accesses. */
export function readSetMatches(accesses: readonly Access[] | undefined, changes: ChangedValues): boolean {
  if (!accesses) return false;
  return accesses.some((access) => accessMatches(access, changes));
}

export function accessMatches(access: Access, changes: ChangedValues): boolean {
  if (changes === null) return true;
  return access.conditions.every((condition) => conditionMatches(condition, changes[condition.column]));
}

/** A condition matches when some changed value satisfies it (per column: sound for a conjunction). */
function conditionMatches(condition: Condition, values: readonly CapturedValue[] | null | undefined): boolean {
  if (values === null || values === undefined) return true;
  if (condition.kind === 'in') return values.some((value) => condition.values.has(value));
  return values.some((value) => {
    if (value === null) return false;
    let n: bigint;
    try {
      n = BigInt(value);
    } catch {
      return true; // not an integer after all: cannot rule it out
    }
    return (condition.min === undefined || n >= condition.min) && (condition.max === undefined || n <= condition.max);
  });
}

/** A stable, readable form: `notes: author_id = '7f…' and n in 1..9 | all`. For status output and tests. */
export function describeReadSet(readSet: ReadSet): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [table, accesses] of [...readSet].sort(([a], [b]) => a.localeCompare(b))) {
    out[table] = accesses.map(describeAccess);
  }
  return out;
}

export function describeAccess(access: Access): string {
  if (access.conditions.length === 0) return 'all';
  return access.conditions
    .map((condition) => {
      if (condition.kind === 'range') return `${condition.column} in ${condition.min ?? ''}..${condition.max ?? ''}`;
      const values = [...condition.values].map((value) => (value === null ? 'null' : JSON.stringify(value)));
      return values.length === 1 ? `${condition.column} = ${values[0]}` : `${condition.column} in (${values.join(', ')})`;
    })
    .join(' and ');
}

// ---- building a read set from the statements of a run ----

export interface ReadSetBuilder {
  /** Adds one statement's operation tree. */
  addStatement(node: OperationNode): void;
  /** Reads `table` whole (declared reads, raw SQL). */
  addWholeTable(table: string): void;
  build(): Map<string, Access[]>;
}

export function createReadSetBuilder(schema: Schema | undefined): ReadSetBuilder {
  const tables = new Map<string, Map<string, Access>>();
  const add = (table: string, access: Access) => {
    let accesses = tables.get(table);
    if (!accesses) tables.set(table, (accesses = new Map()));
    if (accesses.has('all')) return;
    if (access.conditions.length === 0 || accesses.size >= MAX_ACCESSES) {
      tables.set(table, new Map([['all', { conditions: [] }]]));
      return;
    }
    accesses.set(accessKey(access), access);
  };
  return {
    addStatement(node) {
      for (const [table, access] of analyseStatement(node, schema)) add(table, access);
    },
    addWholeTable(table) {
      add(table, { conditions: [] });
    },
    build() {
      return new Map([...tables].map(([table, accesses]) => [table, [...accesses.values()]]));
    },
  };
}

function accessKey(access: Access): string {
  return JSON.stringify(
    access.conditions.map((c) => (c.kind === 'in' ? [c.column, 'in', [...c.values].sort()] : [c.column, 'range', String(c.min), String(c.max)])).sort(),
  );
}

/**
 * Every table a statement names, each with the access fw can prove. Tables are found by a generic walk
 * (every member that is a node or a list of nodes, so node kinds Kysely adds later are still searched);
 * a table in the FROM or JOIN of a SELECT gets that SELECT's conditions, any other (a CTE body is a
 * SELECT of its own; a table in an unknown position) is read whole.
 */
export function analyseStatement(root: OperationNode, schema: Schema | undefined): Array<[string, Access]> {
  const out: Array<[string, Access]> = [];
  const handled = new WeakSet<object>();
  const walk = (node: OperationNode): void => {
    if (node.kind === 'ReferenceNode' || node.kind === 'CommonTableExpressionNameNode') return;
    if (node.kind === 'SelectQueryNode') {
      for (const [table, access, tableNode] of analyseSelect(node as SelectNode, schema)) {
        out.push([table, access]);
        handled.add(tableNode);
      }
    } else if (node.kind === 'TableNode' && !handled.has(node)) {
      const name = tableName(node as TableNodeShape);
      if (name !== undefined) out.push([name, { conditions: [] }]);
    }
    for (const value of Object.values(node)) {
      if (Array.isArray(value)) {
        for (const item of value) if (isNode(item)) walk(item);
      } else if (isNode(value)) walk(value);
    }
  };
  walk(root);
  return out;
}

// ---- one SELECT ----

interface TableNodeShape extends OperationNode {
  table: { schema?: { name: string }; identifier: { name: string } };
}
interface SelectNode extends OperationNode {
  from?: { froms: OperationNode[] };
  joins?: Array<{ joinType: string; table: OperationNode; on?: { on: OperationNode } }>;
  where?: { where: OperationNode };
}
interface ScopeEntry {
  /** The table, or undefined for a subquery, function or CTE-less unknown in FROM. */
  table: string | undefined;
  node: OperationNode | undefined;
  /** LEFT-joined: WHERE conditions do not restrict which of its rows matter. */
  nullable: boolean;
  conditions: Condition[];
}

function analyseSelect(select: SelectNode, schema: Schema | undefined): Array<[string, Access, OperationNode]> {
  const scope = new Map<string, ScopeEntry>();
  const entries: ScopeEntry[] = [];
  const enter = (item: OperationNode, nullable: boolean): ScopeEntry => {
    let alias: string | undefined;
    let target = item;
    if (item.kind === 'AliasNode') {
      const aliased = item as unknown as { node: OperationNode; alias: { name?: string } };
      target = aliased.node;
      alias = aliased.alias.name;
    }
    const table = target.kind === 'TableNode' ? tableName(target as TableNodeShape) : undefined;
    const entry: ScopeEntry = { table, node: table === undefined ? undefined : target, nullable, conditions: [] };
    const name = alias ?? (target.kind === 'TableNode' ? (target as TableNodeShape).table.identifier.name : undefined);
    if (name !== undefined) scope.set(name, entry);
    entries.push(entry);
    return entry;
  };
  for (const item of select.from?.froms ?? []) enter(item, false);
  const where: OperationNode[] = [];
  let unconstrained = false;
  const joined: Array<{ entry: ScopeEntry; on: OperationNode[] }> = [];
  for (const join of select.joins ?? []) {
    const type = join.joinType;
    const left = LEFT_JOINS.has(type);
    const entry = enter(join.table, left);
    // RIGHT and FULL joins null-extend the tables before them; an unknown join type is not trusted.
    if (!left && !INNER_JOINS.has(type)) unconstrained = true;
    const on = join.on ? operands(join.on.on, 'AndNode') : [];
    if (left) joined.push({ entry, on });
    else where.push(...on);
  }
  if (select.where) where.push(...operands(select.where.where, 'AndNode'));

  if (!unconstrained) {
    const resolve = (reference: OperationNode): { entry: ScopeEntry; column: string } | undefined => resolveColumn(reference, scope, entries, schema);
    for (const conjunct of where) {
      const found = condition(conjunct, resolve, schema);
      if (found && !found.entry.nullable) found.entry.conditions.push(found.condition);
    }
    // A LEFT JOIN's ON clause says which of the joined table's rows join at all.
    for (const { entry, on } of joined) {
      for (const conjunct of on) {
        const found = condition(conjunct, resolve, schema);
        if (found && found.entry === entry) entry.conditions.push(found.condition);
      }
    }
  }
  const out: Array<[string, Access, OperationNode]> = [];
  for (const entry of entries) {
    if (entry.table === undefined || entry.node === undefined) continue;
    out.push([entry.table, { conditions: unconstrained ? [] : entry.conditions }, entry.node]);
  }
  return out;
}

const INNER_JOINS = new Set(['InnerJoin', 'CrossJoin', 'LateralInnerJoin', 'LateralCrossJoin', 'CrossApply']);
const LEFT_JOINS = new Set(['LeftJoin', 'LateralLeftJoin', 'OuterApply']);

function tableName(node: TableNodeShape): string | undefined {
  const { schema, identifier } = node.table;
  // Another schema's table is not captured (the hub refuses such reads unless declared).
  return !schema || schema.name === 'public' ? identifier.name : undefined;
}

/** The AND-ed (`AndNode`) or OR-ed (`OrNode`) parts of a boolean expression, parentheses looked through. */
function operands(node: OperationNode, kind: 'AndNode' | 'OrNode'): OperationNode[] {
  if (node.kind === 'ParensNode') return operands((node as unknown as { node: OperationNode }).node, kind);
  if (node.kind === kind) {
    const { left, right } = node as unknown as { left: OperationNode; right: OperationNode };
    return [...operands(left, kind), ...operands(right, kind)];
  }
  return [node];
}

type Resolve = (reference: OperationNode) => { entry: ScopeEntry; column: string } | undefined;

/** A column of this SELECT's own tables, or undefined (an outer query's column, a subquery's, unknown). */
function resolveColumn(reference: OperationNode, scope: Map<string, ScopeEntry>, entries: ScopeEntry[], schema: Schema | undefined) {
  if (reference.kind !== 'ReferenceNode') return undefined;
  const ref = reference as unknown as { table?: TableNodeShape; column: { kind: string; column?: { name: string } } };
  if (ref.column.kind !== 'ColumnNode' || !ref.column.column) return undefined;
  const column = ref.column.column.name;
  if (ref.table) {
    if (ref.table.table.schema && ref.table.table.schema.name !== 'public') return undefined;
    const entry = scope.get(ref.table.table.identifier.name);
    return entry ? { entry, column } : undefined;
  }
  // Unqualified: the one table of this FROM that has the column. PostgreSQL refuses an ambiguous name,
  // so a statement that ran has exactly one; if fw's schema cannot say which, the condition is dropped.
  if (!schema) return undefined;
  const owners = entries.filter((entry) => entry.table !== undefined && Object.hasOwn(schema.tables[entry.table]?.columns ?? {}, column));
  const unknown = entries.some((entry) => entry.table === undefined || !schema.tables[entry.table]);
  return owners.length === 1 && !unknown ? { entry: owners[0]!, column } : undefined;
}

/** A kept condition for one conjunct, or undefined when it cannot be kept. */
function condition(node: OperationNode, resolve: Resolve, schema: Schema | undefined): { entry: ScopeEntry; condition: Condition } | undefined {
  const parts = operands(node, 'OrNode');
  if (parts.length > 1) {
    // `a = 1 OR a IN (2, 3)` on the same column: one IN. Anything else is dropped.
    let merged: { entry: ScopeEntry; column: string; values: Set<CapturedValue> } | undefined;
    for (const part of parts) {
      const found = condition(part, resolve, schema);
      if (!found || found.condition.kind !== 'in') return undefined;
      if (merged && (merged.entry !== found.entry || merged.column !== found.condition.column)) return undefined;
      merged ??= { entry: found.entry, column: found.condition.column, values: new Set() };
      for (const value of found.condition.values) merged.values.add(value);
    }
    if (!merged || merged.values.size > MAX_VALUES) return undefined;
    return { entry: merged.entry, condition: { column: merged.column, kind: 'in', values: merged.values } };
  }
  if (node.kind !== 'BinaryOperationNode') return undefined;
  const binary = node as unknown as { leftOperand: OperationNode; operator: { operator?: string }; rightOperand: OperationNode };
  let operator = binary.operator.operator;
  let left = binary.leftOperand;
  let right = binary.rightOperand;
  if (left.kind !== 'ReferenceNode' && right.kind === 'ReferenceNode') {
    [left, right] = [right, left];
    operator = flipped[operator ?? ''];
  }
  if (operator === undefined) return undefined;
  const column = resolve(left);
  if (!column || column.entry.table === undefined || column.column === 'tenant_id') return undefined;
  const kind = schema?.tables[column.entry.table]?.columns[column.column]?.spec.kind;
  if (kind === undefined || !CAPTURED_KINDS.has(kind)) return undefined;
  const found = (condition: Condition) => ({ entry: column.entry, condition });

  if (operator === 'is' && right.kind === 'ValueNode' && (right as unknown as { value: unknown }).value === null) {
    return found({ column: column.column, kind: 'in', values: new Set([null]) });
  }
  if (operator === '=') {
    const value = constant(right);
    if (value === undefined || value === null) return undefined;
    const canonical = canonicalValue(kind, value);
    return canonical === undefined ? undefined : found({ column: column.column, kind: 'in', values: new Set([canonical]) });
  }
  if (operator === 'in') {
    const values = constantList(right);
    if (!values || values.length > MAX_VALUES) return undefined;
    const set = new Set<CapturedValue>();
    for (const value of values) {
      if (value === null) continue; // `x IN (NULL)` is never true
      const canonical = canonicalValue(kind, value);
      if (canonical === undefined) return undefined;
      set.add(canonical);
    }
    return found({ column: column.column, kind: 'in', values: set });
  }
  if ((kind === 'integer' || kind === 'bigint') && (operator === '<' || operator === '<=' || operator === '>' || operator === '>=')) {
    const value = constant(right);
    const bound = value === undefined || value === null ? undefined : canonicalValue(kind, value);
    if (bound === undefined || bound === null) return undefined;
    const n = BigInt(bound);
    if (operator === '<') return found({ column: column.column, kind: 'range', max: n - 1n });
    if (operator === '<=') return found({ column: column.column, kind: 'range', max: n });
    if (operator === '>') return found({ column: column.column, kind: 'range', min: n + 1n });
    return found({ column: column.column, kind: 'range', min: n });
  }
  return undefined;
}

const flipped: Record<string, string | undefined> = { '=': '=', '<': '>', '<=': '>=', '>': '<', '>=': '<=' };

function constant(node: OperationNode): unknown {
  if (node.kind !== 'ValueNode') return undefined;
  return (node as unknown as { value: unknown }).value;
}

function constantList(node: OperationNode): unknown[] | undefined {
  if (node.kind === 'PrimitiveValueListNode') return [...(node as unknown as { values: unknown[] }).values];
  if (node.kind === 'ValueListNode') {
    const values: unknown[] = [];
    for (const item of (node as unknown as { values: OperationNode[] }).values) {
      const value = constant(item);
      if (value === undefined) return undefined;
      values.push(value);
    }
    return values;
  }
  if (node.kind === 'ParensNode') return constantList((node as unknown as { node: OperationNode }).node);
  return undefined;
}

/**
 * A parameter value in the text form the trigger records for a column of this kind, or undefined when
 * fw cannot be sure PostgreSQL would compare it the same way (then the condition is dropped).
 */
export function canonicalValue(kind: ColumnKind, value: unknown): CapturedValue | undefined {
  switch (kind) {
    case 'integer':
    case 'bigint': {
      if (typeof value === 'number') return Number.isSafeInteger(value) ? String(value) : undefined;
      if (typeof value === 'bigint') return value.toString();
      if (typeof value === 'string' && /^\s*[+-]?\d{1,30}\s*$/.test(value)) return BigInt(value.trim()).toString();
      return undefined;
    }
    case 'uuid': {
      if (typeof value !== 'string') return undefined;
      // PostgreSQL accepts braces, upper case and hyphens after any group of four digits; it prints one form.
      let hex = value.trim();
      if (hex.startsWith('{') && hex.endsWith('}')) hex = hex.slice(1, -1);
      hex = hex.replaceAll('-', '').toLowerCase();
      if (!/^[0-9a-f]{32}$/.test(hex)) return undefined;
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    }
    case 'text':
    case 'enum':
      return typeof value === 'string' ? value : undefined;
    case 'boolean':
      return typeof value === 'boolean' ? String(value) : undefined;
    default:
      return undefined;
  }
}

function isNode(value: unknown): value is OperationNode {
  return typeof value === 'object' && value !== null && typeof (value as { kind?: unknown }).kind === 'string';
}
