/**
 * One statement for many live groups of one query shape (Hasura multiplexes live queries that differ
 * only in variables the same way). Groups of one identity rerun in one transaction (hub.ts
 * `runBatch`); when several of them last ran exactly one SELECT with the same SQL text, those
 * statements are sent as ONE: a UNION ALL of the groups' own statements, each keeping its own
 * parameters (so each branch is typed and planned as it would be alone), tagged with the group and
 * the row's position within its statement (`withRowPosition`). Each group's handler then runs as usual on a Kysely that answers a statement
 * identical to a prefetched one — same SQL, same parameters — from the prefetched rows, and sends
 * anything else to the database. A handler whose statement changed (other parameters, other SQL)
 * simply runs it: prefetching can cost a wasted read, never a wrong answer.
 *
 * @example
 *   const prefetched = await prefetchStatements(trx, [nodeA, nodeB]);   // one round trip
 *   const db = prefetchingKysely(trx, prefetched[0]!);                  // handler A's ctx.db
 */
import {
  AggregateFunctionNode,
  AliasNode,
  ColumnNode,
  CompiledQuery,
  IdentifierNode,
  type Kysely,
  type OperationNode,
  OrderByItemNode,
  OverNode,
  PostgresQueryCompiler,
  type QueryResult,
  RawNode,
  ReferenceNode,
  type RootOperationNode,
  SelectionNode,
  SelectQueryNode,
  ValueNode,
  createQueryId,
} from 'kysely';
import { insideTransactionKysely } from '../db/postgres-kysely.ts';
import { FwError } from '../core/errors.ts';

/** Prefetched results of one group, by statement key; each is used at most once. */
export type Prefetched = Map<string, QueryResult<unknown>>;

const GROUP_COLUMN = '__fw_group';
const ROW_COLUMN = '__fw_row';

/** A PostgreSQL compiler whose parameters start after `offset` (the branches of one statement). */
class OffsetCompiler extends PostgresQueryCompiler {
  readonly #offset: number;
  constructor(offset: number) {
    super();
    this.#offset = offset;
  }
  protected override getCurrentParameterPlaceholder(): string {
    return `$${this.numParameters + this.#offset}`;
  }
}

/** The SQL text a statement compiles to alone (what groups are matched by). */
export function compiledText(node: RootOperationNode): string {
  return new PostgresQueryCompiler().compileQuery(node, createQueryId()).sql;
}

/** Identifies a statement by its SQL and its parameters (with their JS types: a Date is not its ISO string). */
export function statementKey(query: { sql: string; parameters: readonly unknown[] }): string {
  return JSON.stringify([query.sql, query.parameters.map(parameterKey)]);
}

function parameterKey(value: unknown): unknown {
  if (value instanceof Date) return ['date', value.toISOString()];
  if (typeof value === 'bigint') return ['bigint', value.toString()];
  if (Buffer.isBuffer(value)) return ['bytes', value.toString('base64')];
  return [typeof value, value];
}

/**
 * The statement with its rows' position as one more column, `__fw_row`: `row_number()` over a window
 * ordered exactly as the statement's own ORDER BY. PostgreSQL promises the order of a statement's
 * output only to its own top-level ORDER BY — not of a subquery's output to the query around it — so
 * the position is computed inside, from the ordering itself. Undefined (the statement is not
 * multiplexed) where that column would change the answer or the ordering cannot be restated in a
 * window: DISTINCT (the column would make every row distinct), UNION and friends, a modifier such
 * as FOR UPDATE, a positional or bare raw ORDER BY item, an output name that more than one
 * selection gives, or one whose expression holds a window function.
 */
export function withRowPosition(node: RootOperationNode): SelectQueryNode | undefined {
  if (!SelectQueryNode.is(node)) return undefined;
  if (node.setOperations?.length || node.endModifiers?.length || node.frontModifiers?.length || node.top || node.explain) return undefined;
  const items: OrderByItemNode[] = [];
  for (const item of node.orderBy?.items ?? []) {
    const expression = windowExpression(item.orderBy, node.selections ?? []);
    if (!expression) return undefined;
    items.push(OrderByItemNode.cloneWith(OrderByItemNode.create(expression), { direction: item.direction, nulls: item.nulls, collation: item.collation }));
  }
  const over = items.length === 0 ? OverNode.create() : OverNode.cloneWithOrderByItems(OverNode.create(), items);
  const position = AggregateFunctionNode.cloneWithOver(AggregateFunctionNode.create('row_number'), over);
  return SelectQueryNode.cloneWithSelections(node, [SelectionNode.create(AliasNode.create(position, IdentifierNode.create(ROW_COLUMN)))]);
}

/**
 * An ORDER BY item restated for a window's ORDER BY, which sees only input columns: a simple name
 * there means an output column first (SQL92's rule), so a name some selection gives is replaced by
 * that selection's expression. Any other expression is read from input columns in both places.
 */
function windowExpression(orderBy: OperationNode, selections: readonly SelectionNode[]): OperationNode | undefined {
  if (ValueNode.is(orderBy)) return undefined; // `order by 1` is a position; in a window, a constant
  if (RawNode.is(orderBy)) return orderBy.parameters.length === 0 && BARE_NAME.test(orderBy.sqlFragments.join('')) ? undefined : orderBy;
  const name = ReferenceNode.is(orderBy) && !orderBy.table && ColumnNode.is(orderBy.column) ? orderBy.column.column.name : ColumnNode.is(orderBy) ? orderBy.column.name : undefined;
  if (name === undefined) return orderBy;
  const named = selections.filter((selection) => outputName(selection.selection) === name);
  if (named.length > 1) return undefined;
  if (named.length === 0) return orderBy;
  const expression = AliasNode.is(named[0]!.selection) ? named[0]!.selection.node : named[0]!.selection;
  return WINDOW.test(JSON.stringify(expression)) ? undefined : expression;
}

/** The name a selection gives its output column, when it says (`select *` does not). */
function outputName(selection: SelectionNode['selection']): string | undefined {
  if (AliasNode.is(selection)) return IdentifierNode.is(selection.alias) ? selection.alias.name : undefined;
  if (ReferenceNode.is(selection)) return ColumnNode.is(selection.column) ? selection.column.column.name : undefined;
  if (ColumnNode.is(selection)) return selection.column.name;
  return undefined;
}

/** A window function in an expression's tree: Kysely's node, or `over (` in raw SQL (a window's ORDER BY cannot hold one). */
const WINDOW = /"OverNode"|\bover\s*\(/i;

/** A raw ORDER BY item that is only a name or a number (with a direction): resolved as an output column. */
const BARE_NAME = /^\s*("[^"]*"|[\w$]+)(\s+(asc|desc))?(\s+nulls\s+(first|last))?\s*$/i;

/**
 * Runs the SELECTs as one statement in `trx` and returns, per statement, its result keyed as the
 * statement compiles alone. Rows keep their order within each statement (their position, computed
 * inside each statement from its ORDER BY: `withRowPosition`) and their columns and types. Every
 * node must pass `withRowPosition`.
 */
export async function prefetchStatements(trx: Kysely<any>, nodes: readonly RootOperationNode[]): Promise<Prefetched[]> {
  const parameters: unknown[] = [];
  const branches: string[] = [];
  const keys: string[] = [];
  nodes.forEach((node, index) => {
    const positioned = withRowPosition(node);
    if (!positioned) throw new FwError('internal', 'fw: this statement cannot be multiplexed (withRowPosition).');
    const alone = new PostgresQueryCompiler().compileQuery(node, createQueryId());
    keys.push(statementKey(alone));
    const branch = new OffsetCompiler(parameters.length).compileQuery(positioned, createQueryId());
    parameters.push(...branch.parameters);
    branches.push(`select ${index} as "${GROUP_COLUMN}", q.* from (${branch.sql}) as q`);
  });
  const sql = `${branches.map((branch) => `(${branch})`).join(' union all ')} order by "${GROUP_COLUMN}", "${ROW_COLUMN}"`;
  const result = await trx.executeQuery(CompiledQuery.raw(sql, parameters));
  const rows: unknown[][] = nodes.map(() => []);
  for (const row of result.rows as Array<Record<string, unknown>>) {
    const { [GROUP_COLUMN]: group, [ROW_COLUMN]: _position, ...rest } = row;
    rows[Number(group)]!.push(rest);
  }
  return keys.map((key, index) => new Map([[key, { rows: rows[index]! }]]));
}

/**
 * A Kysely for one handler inside `trx`: a statement equal to a prefetched one is answered from it
 * (once), any other goes to `trx`. It cannot open transactions (a live handler runs in the hub's).
 */
export function prefetchingKysely(trx: Kysely<any>, prefetched: Prefetched): Kysely<any> {
  return insideTransactionKysely(
    async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
      const key = statementKey(query);
      const hit = prefetched.get(key);
      if (hit) {
        prefetched.delete(key);
        return hit as QueryResult<R>;
      }
      return trx.executeQuery<R>(query);
    },
    { inside: 'a live query', why: 'a live query already runs in a transaction' },
  );
}
