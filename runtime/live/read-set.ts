/**
 * Read sets: which rows a liveQuery run could have read, per table, as a disjunction of accesses, each a
 * conjunction of conditions on columns: values (`=`, `IN`, `= any`, `IS NULL`: hashed), integer ranges,
 * and tests PostgreSQL's semantics decide (value-order.ts: ranges on every ordered kind, `<>`, `NOT IN`,
 * equality by value on numeric, timestamptz and date, LIKE/ILIKE, and those of lower()/upper()/abs() and
 * integer arithmetic). A write reruns the group only when a changed row — its old or its new image — can
 * satisfy one of them (`readSetMatches`). See docs/live.md ("Which writes rerun a live query").
 *
 * Soundness is the rule: every condition kept must hold for every row of that table that can influence
 * the result. A condition fw cannot prove that of is dropped, which only widens the access; a table with
 * nothing left is read whole. A test fw cannot decide for a value (text outside what the database's
 * collation lets fw order, an overflow) counts that value as matching. What is kept:
 * - the AND-ed conditions of a SELECT's WHERE and of its inner joins' ON clauses, for the tables of its
 *   own FROM (a subquery's conditions for the subquery's tables — whatever surrounds it, NOT EXISTS
 *   included, a row outside its conditions never enters its result);
 * - for a LEFT JOIN's joined table, only the ON clause's conditions (its WHERE conditions may be the
 *   `IS NULL` of an anti-join); a RIGHT or FULL join makes the whole SELECT unconstrained;
 * - `a = 1 OR a = 2` on one column, as `a IN (1, 2)`; an OR across columns as one access per branch,
 *   for a table every branch says something of; NOT of `=`, `IN`, `IS NULL`;
 * - an equality of two columns of one kind (a join's, or a correlated subquery's with its enclosing
 *   query) carries each side's conditions on its column to the other;
 * - enum ranges, as the schema's labels outside them;
 * - every other OR, NOT, function, raw fragment or comparison with a non-constant is dropped;
 * - values of columns fw captures (every kind but jsonb), compared with constants spelled the way
 *   PostgreSQL reads them (`canonicalValue`, `orderedConstant`); a constant whose meaning depends on the
 *   session (a time zone) drops its condition. Ordering and case folding of text follow what the database
 *   allows (text-semantics.ts; without it, text is compared for equality and LIKE only).
 *
 * @example
 *   const reads = createReadSetBuilder(schema, textSemantics);
 *   reads.addStatement(node);          // every statement of the run (the read recorder does it)
 *   const readSet = reads.build();     // Map { 'notes' => [{ conditions: [{ column: 'author_id', … }] }] }
 *   readSetMatches(readSet.get('notes'), { author_id: ['7f…'] }); // true
 */
import type { OperationNode } from 'kysely';
import type { ColumnKind, Schema } from '../core/schema.ts';
import { CAPTURED_KINDS, MAX_CAPTURED_VALUES } from '../db/live-capture.ts';
import { UNKNOWN_TEXT_SEMANTICS, type TextSemantics } from './text-semantics.ts';
import { compareValues, equalValues, orderedConstant, type TextOrder } from './value-order.ts';

/** A value in its canonical text form (`to_jsonb(row) ->> column`); null is SQL NULL. */
export type CapturedValue = string | null;

export type Condition =
  /** `column = v`, `column IN (…)`, `column IS NULL` (null among the values). */
  | { readonly column: string; readonly kind: 'in'; readonly values: ReadonlySet<CapturedValue> }
  /** An integer column within inclusive bounds (either may be open). */
  | { readonly column: string; readonly kind: 'range'; readonly min?: bigint; readonly max?: bigint }
  /**
   * A test of the column's value — or of an expression of it (`of`) — that PostgreSQL's semantics for
   * its kind decide (value-order.ts): a NULL value never passes one.
   */
  | { readonly column: string; readonly kind: 'test'; readonly type: ColumnKind; readonly text: TextOrder; readonly of?: ColumnExpression; readonly test: ValueTest };

/** What a `test` condition asks of a (non-null) value. Constants are in `orderedConstant`'s text form. */
export type ValueTest =
  /** Within bounds (either may be open): `<`, `<=`, `>`, `>=`, BETWEEN, and `=` on numeric, timestamptz, date. */
  | { readonly op: 'between'; readonly lower?: Bound; readonly upper?: Bound }
  /** Equal to one of the values (`IN` on kinds compared by value, or on an expression). */
  | { readonly op: 'one-of'; readonly values: readonly string[] }
  /** Equal to none of the values: `<>`, `NOT IN`, `IS NOT NULL` (no values). */
  | { readonly op: 'none-of'; readonly values: readonly string[] }
  /** LIKE (and ILIKE: `insensitive`) with PostgreSQL's default escape `\`. */
  | { readonly op: 'like'; readonly pattern: string; readonly insensitive: boolean; readonly ctype?: 'all' | 'ascii' };

export interface Bound {
  readonly value: string;
  readonly inclusive: boolean;
}

/**
 * An expression of one column fw evaluates exactly as PostgreSQL does, or not at all (undefined: the
 * row counts as matching): lower()/upper() of text under the database's character classes, and
 * integer arithmetic with a constant (an overflow, which fails the statement, counts as matching).
 */
export type ColumnExpression =
  | { readonly fn: 'lower' | 'upper'; readonly ctype: 'all' | 'ascii' }
  | { readonly fn: 'abs'; readonly bits: 32 | 64 }
  | { readonly fn: '+' | '-'; readonly operand: bigint; readonly constantFirst: boolean; readonly bits: 32 | 64 };

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

/** Distinct values kept per condition (IN, `= any`, NOT IN); the capture keeps as many per column. */
export const MAX_VALUES = MAX_CAPTURED_VALUES;
/** Accesses kept per table before the table counts as read whole (bounds matching work per group). */
const MAX_ACCESSES = 16;

/** Whether a change (old or new images of one table × tenant) can touch a row of one of the accesses. */
export function readSetMatches(accesses: readonly Access[] | undefined, changes: ChangedValues): boolean {
  if (!accesses) return false;
  return accesses.some((access) => accessMatches(access, changes));
}

export function accessMatches(access: Access, changes: ChangedValues): boolean {
  if (changes === null) return true;
  // Own properties only: a column named `constructor` must not find Object's.
  return access.conditions.every((condition) => conditionMatches(condition, Object.hasOwn(changes, condition.column) ? changes[condition.column] : undefined));
}

/** A condition matches when some changed value satisfies it (per column: sound for a conjunction). */
function conditionMatches(condition: Condition, values: readonly CapturedValue[] | null | undefined): boolean {
  if (values === null || values === undefined) return true;
  if (condition.kind === 'in') return values.some((value) => condition.values.has(value));
  if (condition.kind === 'test') return values.some((value) => value !== null && testValue(condition, value) !== false);
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
  return access.conditions.map(describeCondition).join(' and ');
}

function describeCondition(condition: Condition): string {
  if (condition.kind === 'range') return `${condition.column} in ${condition.min ?? ''}..${condition.max ?? ''}`;
  const list = (values: Iterable<CapturedValue>) => [...values].map((value) => (value === null ? 'null' : JSON.stringify(value)));
  if (condition.kind === 'in') {
    const values = list(condition.values);
    return values.length === 1 ? `${condition.column} = ${values[0]}` : `${condition.column} in (${values.join(', ')})`;
  }
  const subject = describeSubject(condition);
  const { test } = condition;
  switch (test.op) {
    case 'between': {
      if (test.lower && test.upper && test.lower.inclusive && test.upper.inclusive && test.lower.value === test.upper.value) return `${subject} = ${JSON.stringify(test.lower.value)}`;
      const parts: string[] = [];
      if (test.lower) parts.push(`${subject} ${test.lower.inclusive ? '>=' : '>'} ${JSON.stringify(test.lower.value)}`);
      if (test.upper) parts.push(`${subject} ${test.upper.inclusive ? '<=' : '<'} ${JSON.stringify(test.upper.value)}`);
      return parts.join(' and ');
    }
    case 'one-of':
      return test.values.length === 1 ? `${subject} = ${list(test.values)[0]}` : `${subject} in (${list(test.values).join(', ')})`;
    case 'none-of':
      return test.values.length === 0 ? `${subject} is not null` : test.values.length === 1 ? `${subject} <> ${list(test.values)[0]}` : `${subject} not in (${list(test.values).join(', ')})`;
    case 'like':
      return `${subject} ${test.insensitive ? 'ilike' : 'like'} ${JSON.stringify(test.pattern)}`;
  }
}

function describeSubject(condition: Extract<Condition, { kind: 'test' }>): string {
  const { of, column } = condition;
  if (!of) return column;
  if (of.fn === '+' || of.fn === '-') return of.constantFirst ? `${of.operand} ${of.fn} ${column}` : `${column} ${of.fn} ${of.operand}`;
  return `${of.fn}(${column})`;
}

// ---- evaluating a test on a captured value ----

/** true, false, or undefined when fw cannot tell exactly (the caller counts it as a match). */
export function testValue(condition: Extract<Condition, { kind: 'test' }>, captured: string): boolean | undefined {
  const value = condition.of ? evaluate(condition.of, captured) : captured;
  if (value === undefined) return undefined;
  const { test, type, text } = condition;
  switch (test.op) {
    case 'between': {
      if (test.lower) {
        const order = compareValues(type, value, test.lower.value, text);
        if (order === undefined) return undefined;
        if (order < 0 || (order === 0 && !test.lower.inclusive)) return false;
      }
      if (test.upper) {
        const order = compareValues(type, value, test.upper.value, text);
        if (order === undefined) return undefined;
        if (order > 0 || (order === 0 && !test.upper.inclusive)) return false;
      }
      return true;
    }
    case 'one-of': {
      const exact = exactValues(type, test);
      if (exact) return exact.has(value);
      let unsure = false;
      for (const candidate of test.values) {
        const equal = equalValues(type, value, candidate, text);
        if (equal === true) return true;
        if (equal === undefined) unsure = true;
      }
      return unsure ? undefined : false;
    }
    case 'none-of': {
      const exact = exactValues(type, test);
      if (exact) return !exact.has(value);
      let unsure = false;
      for (const candidate of test.values) {
        const equal = equalValues(type, value, candidate, text);
        if (equal === true) return false;
        if (equal === undefined) unsure = true;
      }
      return unsure ? undefined : true;
    }
    case 'like': {
      const subject = test.insensitive ? lowerText(value, test.ctype ?? 'ascii') : value;
      if (subject === undefined) return undefined;
      const pattern = likePattern(test.pattern);
      return pattern === undefined ? undefined : pattern.test(subject);
    }
  }
}

const exactSets = new WeakMap<object, ReadonlySet<string>>();

/**
 * The values of a `one-of`/`none-of` as a set, for kinds whose captured text is one per value (equal
 * exactly when the text is): a hash lookup per changed value instead of a comparison with each value.
 */
function exactValues(type: ColumnKind, test: { readonly values: readonly string[] }): ReadonlySet<string> | undefined {
  if (!HASHED_KINDS.has(type)) return undefined;
  let set = exactSets.get(test);
  if (!set) exactSets.set(test, (set = new Set(test.values)));
  return set;
}

const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** lower() under character classes `all` (A–Z only, for every string) or `ascii` (exact for ASCII strings only). */
function lowerText(value: string, ctype: 'all' | 'ascii'): string | undefined {
  if (ctype === 'ascii' && !ASCII_ONLY.test(value)) return undefined;
  return value.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

function upperText(value: string, ctype: 'all' | 'ascii'): string | undefined {
  if (ctype === 'ascii' && !ASCII_ONLY.test(value)) return undefined;
  return value.replace(/[a-z]+/g, (letters) => letters.toUpperCase());
}

/** The value of the expression for one captured value, or undefined (cannot tell, or PostgreSQL would fail). */
function evaluate(of: ColumnExpression, value: string): string | undefined {
  switch (of.fn) {
    case 'lower':
      return lowerText(value, of.ctype);
    case 'upper':
      return upperText(value, of.ctype);
    case 'abs':
      return integerResult(value, (n) => (n < 0n ? -n : n), of.bits);
    default: {
      const { operand, constantFirst } = of;
      return integerResult(value, (n) => (of.fn === '+' ? n + operand : constantFirst ? operand - n : n - operand), of.bits);
    }
  }
}

function integerResult(value: string, compute: (n: bigint) => bigint, bits: 32 | 64): string | undefined {
  if (!/^-?\d{1,20}$/.test(value)) return undefined;
  const result = compute(BigInt(value));
  const limit = 2n ** BigInt(bits - 1);
  // Out of the type's range: PostgreSQL raises "integer out of range", and the run fails.
  return result >= -limit && result < limit ? result.toString() : undefined;
}

const likeCache = new Map<string, RegExp | null>();

/**
 * A LIKE pattern as a regular expression over characters (code points), with PostgreSQL's default escape
 * `\`: `%` any run, `_` one character. undefined when PostgreSQL would refuse it (a trailing escape).
 */
function likePattern(pattern: string): RegExp | undefined {
  let compiled = likeCache.get(pattern);
  if (compiled === undefined) {
    compiled = compileLike(pattern) ?? null;
    if (likeCache.size > 10_000) likeCache.clear();
    likeCache.set(pattern, compiled);
  }
  return compiled ?? undefined;
}

function compileLike(pattern: string): RegExp | undefined {
  const chars = [...pattern];
  let source = '^';
  for (let i = 0; i < chars.length; i++) {
    let char = chars[i]!;
    if (char === '\\') {
      if (i + 1 >= chars.length) return undefined;
      char = chars[++i]!;
      source += char.replace(/[\^$\\.*+?()[\]{}|/]/g, '\\$&');
    } else if (char === '%') source += '[^]*';
    else if (char === '_') source += '[^]';
    else source += char.replace(/[\^$\\.*+?()[\]{}|/]/g, '\\$&');
  }
  return new RegExp(`${source}$`, 'u');
}

// ---- building a read set from the statements of a run ----

export interface ReadSetBuilder {
  /** Adds one statement's operation tree. */
  addStatement(node: OperationNode): void;
  /** Reads `table` whole (declared reads, raw SQL). */
  addWholeTable(table: string): void;
  build(): Map<string, Access[]>;
}

export function createReadSetBuilder(schema: Schema | undefined, text: TextSemantics = UNKNOWN_TEXT_SEMANTICS): ReadSetBuilder {
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
      for (const [table, access] of analyseStatement(node, schema, text)) add(table, access);
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
    access.conditions
      .map((c) => (c.kind === 'in' ? [c.column, 'in', [...c.values].sort()] : c.kind === 'range' ? [c.column, 'range', String(c.min), String(c.max)] : [c.column, 'test', c.type, c.text, describeCondition(c)]))
      .sort(),
  );
}

/**
 * Every table a statement names, each with the access fw can prove. Tables are found by a generic walk
 * (every member that is a node or a list of nodes, so node kinds Kysely adds later are still searched);
 * a table in the FROM or JOIN of a SELECT gets that SELECT's conditions, any other (a CTE body is a
 * SELECT of its own; a table in an unknown position) is read whole.
 */
export function analyseStatement(root: OperationNode, schema: Schema | undefined, text: TextSemantics = UNKNOWN_TEXT_SEMANTICS): Array<[string, Access]> {
  const out: Array<[string, Access]> = [];
  const handled = new WeakSet<object>();
  const walk = (node: OperationNode, outer: readonly Scope[]): void => {
    if (node.kind === 'ReferenceNode' || node.kind === 'CommonTableExpressionNameNode') return;
    let inner = outer;
    if (node.kind === 'SelectQueryNode') {
      const analysed = analyseSelect(node as SelectNode, schema, text, outer);
      for (const [table, access, tableNode] of analysed.accesses) {
        out.push([table, access]);
        handled.add(tableNode);
      }
      inner = [analysed.scope, ...outer];
    } else if (node.kind === 'TableNode' && !handled.has(node)) {
      const name = tableName(node as TableNodeShape);
      if (name !== undefined) out.push([name, { conditions: [] }]);
    }
    for (const [key, value] of Object.entries(node)) {
      // A CTE body and a UNION's other branches cannot see this SELECT's FROM: only what encloses it.
      const scopes = key === 'with' || key === 'setOperations' ? outer : inner;
      if (Array.isArray(value)) {
        for (const item of value) if (isNode(item)) walk(item, scopes);
      } else if (isNode(value)) walk(value, scopes);
    }
  };
  walk(root, []);
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
  /** What every row of it that can matter satisfies (AND-ed). */
  conditions: Condition[];
  /** AND-ed ORs: each holds one of its branches (a conjunction, never empty). */
  alternatives: Condition[][][];
}

/** One SELECT's FROM, by alias: what a correlated subquery inside it can name. */
type Scope = ReadonlyMap<string, ScopeEntry>;

function analyseSelect(select: SelectNode, schema: Schema | undefined, text: TextSemantics, outer: readonly Scope[]): { accesses: Array<[string, Access, OperationNode]>; scope: Scope } {
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
    const entry: ScopeEntry = { table, node: table === undefined ? undefined : target, nullable, conditions: [], alternatives: [] };
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
    const equalities: Equality[] = [];
    const keep = (conjunct: OperationNode, target: (entry: ScopeEntry) => boolean) => {
      const found = condition(conjunct, resolve, schema, text);
      if (found) {
        if (target(found.entry)) found.entry.conditions.push(found.condition);
        return;
      }
      const equality = columnEquality(conjunct, resolve, outer, schema, text);
      if (equality) equalities.push({ ...equality, target });
      else keepAlternatives(conjunct, entries, target, resolve, schema, text);
    };
    for (const conjunct of where) keep(conjunct, (entry) => !entry.nullable);
    // A LEFT JOIN's ON clause says which of the joined table's rows join at all.
    for (const { entry, on } of joined) for (const conjunct of on) keep(conjunct, (found) => found === entry);
    propagate(equalities, new Set(entries));
  }
  const out: Array<[string, Access, OperationNode]> = [];
  for (const entry of entries) {
    if (entry.table === undefined || entry.node === undefined) continue;
    if (unconstrained) out.push([entry.table, { conditions: [] }, entry.node]);
    else for (const conditions of expand(entry)) out.push([entry.table, { conditions }, entry.node]);
  }
  return { accesses: out, scope };
}

// ---- OR of conditions ----

/**
 * An OR whose every branch keeps a condition on an entry restricts that entry's rows to the union of
 * the branches: `a = 1 or b = 2` keeps both as alternatives of the table's access. A branch is an AND of
 * conjuncts; those fw cannot keep are dropped (which widens the branch). An entry some branch says
 * nothing about gets nothing: that branch lets any of its rows through.
 */
function keepAlternatives(node: OperationNode, entries: readonly ScopeEntry[], target: (entry: ScopeEntry) => boolean, resolve: Resolve, schema: Schema | undefined, text: TextSemantics): void {
  const branches = operands(node, 'OrNode');
  if (branches.length < 2) return;
  const kept = branches.map((branch) => operands(branch, 'AndNode').map((conjunct) => condition(conjunct, resolve, schema, text)));
  for (const entry of entries) {
    if (entry.table === undefined || !target(entry)) continue;
    const alternatives = kept.map((branch) => branch.filter((found) => found?.entry === entry).map((found) => found!.condition));
    if (alternatives.every((branch) => branch.length > 0)) entry.alternatives.push(alternatives);
  }
}

/**
 * The accesses of an entry: its conditions AND one branch of each of its ORs. An OR that would make
 * more than MAX_ACCESSES of them is dropped (which only widens).
 */
function expand(entry: ScopeEntry): Condition[][] {
  let accesses: Condition[][] = [entry.conditions];
  for (const alternatives of entry.alternatives) {
    if (accesses.length * alternatives.length > MAX_ACCESSES) continue;
    accesses = accesses.flatMap((access) => alternatives.map((branch) => [...access, ...branch]));
  }
  return accesses;
}

// ---- equal columns: conditions carried across a join or into a correlated subquery ----

/**
 * `t.c = s.c'` between two columns of one kind, where a row of t matters only together with a row of s
 * (the same SELECT's FROM, or an enclosing SELECT's for a correlated subquery): the row of t holds the
 * value of a row of s that can matter, so s's conditions on c' hold for t's c too. `target` says
 * whether t may take conditions from this conjunct (not a LEFT-joined table from WHERE).
 */
interface Equality {
  sides: ReadonlyArray<{ entry: ScopeEntry; column: string }>;
  target: (entry: ScopeEntry) => boolean;
}

function columnEquality(node: OperationNode, resolve: Resolve, outer: readonly Scope[], schema: Schema | undefined, text: TextSemantics): Omit<Equality, 'target'> | undefined {
  if (node.kind === 'ParensNode') return columnEquality((node as unknown as { node: OperationNode }).node, resolve, outer, schema, text);
  if (node.kind !== 'BinaryOperationNode') return undefined;
  const binary = node as unknown as { leftOperand: OperationNode; operator: { operator?: string }; rightOperand: OperationNode };
  if (binary.operator.operator !== '=') return undefined;
  const side = (operand: OperationNode) => {
    const found = resolve(operand) ?? resolveOuter(operand, outer);
    if (!found || found.entry.table === undefined || found.column === 'tenant_id') return undefined;
    if (text.ownCollation.has(`${found.entry.table}.${found.column}`)) return undefined;
    const kind = schema?.tables[found.entry.table]?.columns[found.column]?.spec.kind;
    return kind !== undefined && CAPTURED_KINDS.has(kind) ? { ...found, kind } : undefined;
  };
  const [left, right] = [side(binary.leftOperand), side(binary.rightOperand)];
  if (!left || !right || left.kind !== right.kind || left.entry === right.entry) return undefined;
  return { sides: [left, right] };
}

/** A qualified column of an enclosing SELECT (the nearest that has the alias), as PostgreSQL resolves it. */
function resolveOuter(reference: OperationNode, outer: readonly Scope[]): { entry: ScopeEntry; column: string } | undefined {
  if (reference.kind !== 'ReferenceNode') return undefined;
  const ref = reference as unknown as { table?: TableNodeShape; column: { kind: string; column?: { name: string } } };
  if (!ref.table || ref.column.kind !== 'ColumnNode' || !ref.column.column) return undefined;
  if (ref.table.table.schema && ref.table.table.schema.name !== 'public') return undefined;
  const alias = ref.table.table.identifier.name;
  for (const scope of outer) {
    const entry = scope.get(alias);
    if (entry) return { entry, column: ref.column.column.name };
  }
  return undefined;
}

/** Copies each side's conditions on its column to the other side's column, until nothing changes. */
function propagate(equalities: readonly Equality[], own: ReadonlySet<ScopeEntry>): void {
  for (let changed = equalities.length > 0, rounds = 0; changed && rounds < 8; rounds++) {
    changed = false;
    for (const { sides, target } of equalities) {
      for (const [to, from] of [[sides[0]!, sides[1]!], [sides[1]!, sides[0]!]] as const) {
        // An enclosing SELECT's table is only a source: a subquery's conditions do not bound the rows around it.
        if (!own.has(to.entry) || !target(to.entry)) continue;
        for (const carried of from.entry.conditions) {
          if (carried.column !== from.column) continue;
          const copy = { ...carried, column: to.column } as Condition;
          const key = accessKey({ conditions: [copy] });
          if (to.entry.conditions.some((c) => accessKey({ conditions: [c] }) === key)) continue;
          to.entry.conditions.push(copy);
          changed = true;
        }
      }
    }
  }
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

/** What a condition is about: a column of this SELECT's own tables, or an expression of one. */
interface Subject {
  entry: ScopeEntry;
  column: string;
  /** The column's kind. */
  kind: ColumnKind;
  /** The expression's result kind (the column's when there is none). */
  type: ColumnKind;
  of?: ColumnExpression;
}

/** Kinds whose captured text is one per value: `=` and IN keep the values themselves (hashed). */
const HASHED_KINDS: ReadonlySet<ColumnKind> = new Set<ColumnKind>(['uuid', 'text', 'enum', 'integer', 'bigint', 'boolean']);
/** Kinds fw orders exactly (text: only as text-semantics.ts allows). */
const ORDERED_KINDS: ReadonlySet<ColumnKind> = new Set<ColumnKind>(['integer', 'bigint', 'numeric', 'timestamptz', 'date', 'uuid', 'boolean', 'text']);

function subjectOf(node: OperationNode, resolve: Resolve, schema: Schema | undefined, text: TextSemantics, depth = 0): Subject | undefined {
  if (node.kind === 'ParensNode') return subjectOf((node as unknown as { node: OperationNode }).node, resolve, schema, text, depth);
  if (node.kind === 'ReferenceNode') {
    const column = resolve(node);
    if (!column || column.entry.table === undefined || column.column === 'tenant_id') return undefined;
    const kind = schema?.tables[column.entry.table]?.columns[column.column]?.spec.kind;
    if (kind === undefined || !CAPTURED_KINDS.has(kind)) return undefined;
    return { entry: column.entry, column: column.column, kind, type: kind };
  }
  if (depth > 0) return undefined; // one expression deep
  if (node.kind === 'FunctionNode') {
    const fn = node as unknown as { func: string; arguments: readonly OperationNode[] };
    const name = fn.func.toLowerCase();
    if (fn.arguments.length !== 1) return undefined;
    const inner = subjectOf(fn.arguments[0]!, resolve, schema, text, depth + 1);
    if (!inner) return undefined;
    if ((name === 'lower' || name === 'upper') && inner.kind === 'text' && text.lower !== 'none' && !ownCollation(inner, text)) {
      return { ...inner, type: 'text', of: { fn: name, ctype: text.lower } };
    }
    if (name === 'abs' && (inner.kind === 'integer' || inner.kind === 'bigint')) return { ...inner, of: { fn: 'abs', bits: inner.kind === 'integer' ? 32 : 64 } };
    return undefined;
  }
  if (node.kind === 'BinaryOperationNode') {
    const binary = node as unknown as { leftOperand: OperationNode; operator: { operator?: string }; rightOperand: OperationNode };
    const op = binary.operator.operator;
    if (op !== '+' && op !== '-') return undefined;
    const constantFirst = binary.rightOperand.kind !== 'ValueNode';
    const inner = subjectOf(constantFirst ? binary.rightOperand : binary.leftOperand, resolve, schema, text, depth + 1);
    if (!inner || (inner.kind !== 'integer' && inner.kind !== 'bigint')) return undefined;
    const value = constant(constantFirst ? binary.leftOperand : binary.rightOperand);
    // `integer + $1` types $1 as integer (a value outside it fails the statement: nothing to keep).
    const operand = value === undefined || value === null ? undefined : orderedConstant(inner.kind, value);
    if (operand === undefined) return undefined;
    return { ...inner, of: { fn: op, operand: BigInt(operand), constantFirst, bits: inner.kind === 'integer' ? 32 : 64 } };
  }
  return undefined;
}

function ownCollation(subject: Pick<Subject, 'entry' | 'column'>, text: TextSemantics): boolean {
  return text.ownCollation.has(`${subject.entry.table}.${subject.column}`);
}

type Found = { entry: ScopeEntry; condition: Condition } | undefined;

/** A kept condition for one conjunct, or undefined when it cannot be kept. */
function condition(node: OperationNode, resolve: Resolve, schema: Schema | undefined, text: TextSemantics): Found {
  const parts = operands(node, 'OrNode');
  if (parts.length > 1) return disjunction(parts, resolve, schema, text);
  if (node.kind === 'ParensNode') return condition((node as unknown as { node: OperationNode }).node, resolve, schema, text);
  if (node.kind === 'UnaryOperationNode') {
    const unary = node as unknown as { operator: { operator?: string }; operand: OperationNode };
    if (unary.operator.operator !== 'not') return undefined;
    const bare = subjectOf(unary.operand, resolve, schema, text);
    if (bare && bare.kind === 'boolean' && !bare.of) return { entry: bare.entry, condition: { column: bare.column, kind: 'in', values: new Set(['false']) } };
    return negation(condition(unary.operand, resolve, schema, text), schema);
  }
  if (node.kind === 'ReferenceNode') {
    // `where(ref('done'))`: a boolean column, true.
    const bare = subjectOf(node, resolve, schema, text);
    return bare && bare.kind === 'boolean' ? { entry: bare.entry, condition: { column: bare.column, kind: 'in', values: new Set(['true']) } } : undefined;
  }
  if (node.kind !== 'BinaryOperationNode') return undefined;
  const binary = node as unknown as { leftOperand: OperationNode; operator: { operator?: string }; rightOperand: OperationNode };
  let operator = binary.operator.operator;
  let left = binary.leftOperand;
  let right = binary.rightOperand;
  if (isConstant(left) && !isConstant(right)) {
    [left, right] = [right, left];
    operator = flipped[operator ?? ''];
  }
  if (operator === undefined) return undefined;
  const subject = subjectOf(left, resolve, schema, text);
  if (!subject) return undefined;
  const found = (condition: Condition): Found => ({ entry: subject.entry, condition });
  const { column, kind, type } = subject;
  const hashed = subject.of === undefined && HASHED_KINDS.has(kind);
  const test = (test: ValueTest): Found =>
    found({ column, kind: 'test', type, text: type === 'text' && !ownCollation(subject, text) ? text.order : 'none', ...(subject.of ? { of: subject.of } : {}), test });
  const constantOf = (value: unknown) => (value === undefined || value === null ? undefined : orderedConstant(type, value));

  if ((operator === 'is' || operator === 'is not distinct from') && isConstant(right)) {
    const value = constant(right);
    if (value === null) return subject.of ? undefined : found({ column, kind: 'in', values: new Set([null]) });
    if (operator === 'is' && typeof value === 'boolean' && kind === 'boolean' && !subject.of) return found({ column, kind: 'in', values: new Set([String(value)]) });
    if (operator === 'is not distinct from') return equality([value]);
    return undefined;
  }
  if (operator === 'is not' && isConstant(right)) {
    const value = constant(right);
    if (value === null) return subject.of ? undefined : test({ op: 'none-of', values: [] });
    // `done is not true`: false or null.
    if (typeof value === 'boolean' && kind === 'boolean' && !subject.of) return found({ column, kind: 'in', values: new Set([String(!value), null]) });
    return undefined;
  }
  if (operator === '=') {
    const any = anyArray(right);
    if (any) return any.length > MAX_VALUES ? undefined : equality(any.filter((value) => value !== null));
    const value = constant(right);
    return value === undefined || value === null ? undefined : equality([value]);
  }
  if (operator === 'in') {
    const values = constantList(right);
    // `x IN (NULL)` is never true: NULLs add nothing.
    return !values || values.length > MAX_VALUES ? undefined : equality(values.filter((value) => value !== null));
  }
  if (operator === '<>' || operator === '!=' || operator === 'not in') {
    const values = operator === 'not in' ? constantList(right) : isConstant(right) ? [constant(right)] : undefined;
    // `x NOT IN (1, NULL)` is never true, `x <> NULL` neither: nothing to keep (dropping only widens).
    if (!values || values.length > MAX_VALUES || values.some((value) => value === null || value === undefined)) return undefined;
    const constants = values.map(constantOf);
    if (constants.some((value) => value === undefined)) return undefined;
    return test({ op: 'none-of', values: [...new Set(constants as string[])] });
  }
  if (kind === 'enum' && !subject.of && (operator === '<' || operator === '<=' || operator === '>' || operator === '>=' || operator === 'between')) {
    const labels = subject.entry.table === undefined ? undefined : schema?.tables[subject.entry.table]?.columns[column]?.spec.values;
    const range = right as unknown as { left: OperationNode; right: OperationNode };
    const bounds = operator !== 'between' ? [constant(right)] : right.kind === 'AndNode' ? [constant(range.left), constant(range.right)] : [undefined];
    const excluded = labels && enumOutside(labels, operator, bounds);
    return excluded ? test({ op: 'none-of', values: excluded }) : undefined;
  }
  if (operator === '<' || operator === '<=' || operator === '>' || operator === '>=') {
    if (!ORDERED_KINDS.has(type) || (type === 'text' && (text.order === 'none' || ownCollation(subject, text)))) return undefined;
    const bound = constantOf(constant(right));
    if (bound === undefined) return undefined;
    if (!subject.of && (kind === 'integer' || kind === 'bigint')) {
      const n = BigInt(bound);
      if (operator === '<') return found({ column, kind: 'range', max: n - 1n });
      if (operator === '<=') return found({ column, kind: 'range', max: n });
      if (operator === '>') return found({ column, kind: 'range', min: n + 1n });
      return found({ column, kind: 'range', min: n });
    }
    const edge = { value: bound, inclusive: operator === '<=' || operator === '>=' };
    return test(operator === '<' || operator === '<=' ? { op: 'between', upper: edge } : { op: 'between', lower: edge });
  }
  if (operator === 'between' && right.kind === 'AndNode') {
    if (!ORDERED_KINDS.has(type) || (type === 'text' && (text.order === 'none' || ownCollation(subject, text)))) return undefined;
    const range = right as unknown as { left: OperationNode; right: OperationNode };
    const [low, high] = [constantOf(constant(range.left)), constantOf(constant(range.right))];
    if (low === undefined || high === undefined) return undefined;
    if (!subject.of && (kind === 'integer' || kind === 'bigint')) return found({ column, kind: 'range', min: BigInt(low), max: BigInt(high) });
    return test({ op: 'between', lower: { value: low, inclusive: true }, upper: { value: high, inclusive: true } });
  }
  if ((operator === 'like' || operator === 'ilike') && type === 'text' && !ownCollation(subject, text)) {
    const value = constant(right);
    if (typeof value !== 'string' || likePattern(value) === undefined) return undefined;
    if (operator === 'like') return test({ op: 'like', pattern: value, insensitive: false });
    // ILIKE is lower(value) LIKE lower(pattern) under the database's character classes.
    if (text.lower === 'none') return undefined;
    const pattern = lowerText(value, text.lower);
    return pattern === undefined ? undefined : test({ op: 'like', pattern, insensitive: true, ctype: text.lower });
  }
  return undefined;

  function equality(values: unknown[]): Found {
    if (hashed) {
      const set = new Set<CapturedValue>();
      for (const value of values) {
        const canonical = canonicalValue(kind, value);
        if (canonical === undefined) return undefined;
        set.add(canonical);
      }
      return found({ column, kind: 'in', values: set });
    }
    const constants = values.map(constantOf);
    if (constants.some((value) => value === undefined)) return undefined;
    return test({ op: 'one-of', values: [...new Set(constants as string[])] });
  }
}

/**
 * An enum range as the schema's labels it excludes: `status > 'open'` is `status not in ('open', …the
 * labels before it)`. The schema's labels are in the type's order (fw's migrations add a value in its
 * place and refuse a reorder, and PostgreSQL cannot move one); a label the schema does not list (added
 * by hand) is never excluded, so it counts as matching. undefined when a bound is not a schema label.
 */
function enumOutside(labels: readonly string[], operator: string, bounds: unknown[]): string[] | undefined {
  const at = bounds.map((bound) => (typeof bound === 'string' ? labels.indexOf(bound) : -1));
  if (at.some((i) => i < 0)) return undefined;
  const [low, high] = [at[0]!, at[1] ?? at[0]!];
  const passes = (i: number) => (operator === '<' ? i < low : operator === '<=' ? i <= low : operator === '>' ? i > low : operator === '>=' ? i >= low : i >= low && i <= high);
  return labels.filter((_, i) => !passes(i));
}

/** `a = 1 OR a IN (2, 3) OR a IS NULL` on the same column: one IN (or one `one-of`). Anything else is dropped. */
function disjunction(parts: OperationNode[], resolve: Resolve, schema: Schema | undefined, text: TextSemantics): Found {
  let merged: { entry: ScopeEntry; column: string; values: Set<CapturedValue> } | undefined;
  let typed: { entry: ScopeEntry; condition: Extract<Condition, { kind: 'test' }>; values: Set<string> } | undefined;
  for (const part of parts) {
    const found = condition(part, resolve, schema, text);
    if (!found) return undefined;
    const c = found.condition;
    if (c.kind === 'in') {
      if (typed || (merged && (merged.entry !== found.entry || merged.column !== c.column))) return undefined;
      merged ??= { entry: found.entry, column: c.column, values: new Set() };
      for (const value of c.values) merged.values.add(value);
    } else if (c.kind === 'test' && c.test.op === 'one-of') {
      if (merged || (typed && (typed.entry !== found.entry || sameSubjectKey(typed.condition) !== sameSubjectKey(c)))) return undefined;
      typed ??= { entry: found.entry, condition: c, values: new Set() };
      for (const value of c.test.values) typed.values.add(value);
    } else return undefined;
  }
  if (merged) return merged.values.size > MAX_VALUES ? undefined : { entry: merged.entry, condition: { column: merged.column, kind: 'in', values: merged.values } };
  if (typed) return typed.values.size > MAX_VALUES ? undefined : { entry: typed.entry, condition: { ...typed.condition, test: { op: 'one-of', values: [...typed.values] } } };
  return undefined;
}

const sameSubjectKey = (c: Extract<Condition, { kind: 'test' }>) => JSON.stringify([c.column, c.type, c.text, c.of === undefined ? null : describeSubject(c)]);

/** NOT of a kept condition, when it is one fw can state exactly (NULL stays out on both sides). */
function negation(found: Found, schema: Schema | undefined): Found {
  if (!found) return undefined;
  const c = found.condition;
  if (c.kind === 'in') {
    const type = schema?.tables[found.entry.table ?? '']?.columns[c.column]?.spec.kind;
    if (type === undefined) return undefined;
    // NOT (x IS NULL): any value. NOT (x IN (…)): none of them — unless NULL was among them (then never true).
    if (c.values.size === 1 && c.values.has(null)) return { entry: found.entry, condition: { column: c.column, kind: 'test', type, text: 'none', test: { op: 'none-of', values: [] } } };
    if (c.values.has(null)) return undefined;
    return { entry: found.entry, condition: { column: c.column, kind: 'test', type, text: 'none', test: { op: 'none-of', values: [...c.values] as string[] } } };
  }
  if (c.kind === 'test' && c.test.op === 'one-of') return { entry: found.entry, condition: { ...c, test: { op: 'none-of', values: c.test.values } } };
  if (c.kind === 'test' && c.test.op === 'none-of' && c.test.values.length > 0) return { entry: found.entry, condition: { ...c, test: { op: 'one-of', values: c.test.values } } };
  return undefined;
}

const flipped: Record<string, string | undefined> = { '=': '=', '<': '>', '<=': '>=', '>': '<', '>=': '<=', '<>': '<>', '!=': '!=' };

function isConstant(node: OperationNode): boolean {
  return node.kind === 'ValueNode';
}

/** `= any($1)` with an array parameter: its elements. */
function anyArray(node: OperationNode): unknown[] | undefined {
  if (node.kind !== 'FunctionNode') return undefined;
  const fn = node as unknown as { func: string; arguments: readonly OperationNode[] };
  if (fn.func.toLowerCase() !== 'any' || fn.arguments.length !== 1) return undefined;
  const value = constant(fn.arguments[0]!);
  return Array.isArray(value) && value.every((item) => item === null || typeof item !== 'object' || item instanceof Date) ? [...value] : undefined;
}

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
