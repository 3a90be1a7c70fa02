/**
 * Counts as JavaScript numbers in `ctx.db`. PostgreSQL's `count` is an `int8`, which `pg` (and PGlite,
 * set to match it) returns as a string, so `eb.fn.countAll<number>()` used to be a string at run time
 * whatever its type said. Drizzle's `count()` maps its result with `Number`; this plugin does the same
 * for Kysely's count aggregates — and only for them: a `bigint` column, a `sum` of integers or a count
 * inside raw `sql` keep coming back as strings, exactly, since an int8 can exceed 2^53.
 *
 * A column is a count when the statement's select list gives it, under its alias, by
 * - `eb.fn.countAll()` or `eb.fn.count(expr)` (also with `.distinct()`, `.filterWhere()`, `.over()`),
 *   or `eb.fn('count', [...])` / `eb.fn.agg('count', [...])`;
 * - a scalar subquery whose one column is such a count (`eb.selectFrom('tags').select((e) => e.fn.countAll().as('n')).whereRef(…).as('tag_count')`);
 * and, in a UNION / INTERSECT / EXCEPT, when every branch's column at that position is one.
 * The SQL sent is unchanged: the conversion happens on the rows (a count never exceeds 2^53 rows).
 */
import {
  AggregateFunctionNode,
  AliasNode,
  FunctionNode,
  IdentifierNode,
  type KyselyPlugin,
  type OperationNode,
  ParensNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryId,
  type QueryResult,
  type RootOperationNode,
  SelectQueryNode,
  type SelectionNode,
  type UnknownRow,
} from 'kysely';

export class CountsAsNumbersPlugin implements KyselyPlugin {
  /** The count columns of each compiled statement, by its query id, until its rows come back. */
  readonly #columns = new WeakMap<QueryId, readonly string[]>();

  transformQuery({ node, queryId }: PluginTransformQueryArgs): RootOperationNode {
    const columns = countColumns(node);
    if (columns.length > 0) this.#columns.set(queryId, columns);
    return node;
  }

  async transformResult({ queryId, result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const columns = this.#columns.get(queryId);
    if (!columns) return result;
    for (const row of result.rows) {
      for (const column of columns) {
        const value = row[column];
        if (typeof value === 'string' || typeof value === 'bigint') row[column] = Number(value);
      }
    }
    return result;
  }
}

/** The output names of the count columns of a SELECT (none for any other statement). */
export function countColumns(node: OperationNode): string[] {
  const select = asSelect(node);
  if (!select || select.explain) return [];
  const columns: string[] = [];
  (select.selections ?? []).forEach((selection, index) => {
    const aliased = selection.selection;
    if (!AliasNode.is(aliased) || !IdentifierNode.is(aliased.alias) || !isCount(aliased.node)) return;
    // Set operations: the column's type is resolved over every branch, so each must count there too.
    const branches = (select.setOperations ?? []).map((operation) => asSelect(operation.expression));
    if (branches.every((branch) => branch && isCount(selected(branch.selections?.[index])))) columns.push(aliased.alias.name);
  });
  return columns;
}

function asSelect(node: OperationNode | undefined): SelectQueryNode | undefined {
  if (node && ParensNode.is(node)) return asSelect(node.node);
  return node && SelectQueryNode.is(node) ? node : undefined;
}

/** The expression a selection selects (under its alias, if any). */
function selected(selection: SelectionNode | undefined): OperationNode | undefined {
  if (!selection) return undefined;
  return AliasNode.is(selection.selection) ? selection.selection.node : selection.selection;
}

/** A count aggregate, or a scalar subquery whose one column is one (in every branch of a set operation). */
function isCount(node: OperationNode | undefined): boolean {
  if (!node) return false;
  if (AggregateFunctionNode.is(node) || FunctionNode.is(node)) return node.func.toLowerCase() === 'count';
  const select = asSelect(node);
  if (!select) return false;
  const branches = [select, ...(select.setOperations ?? []).map((operation) => asSelect(operation.expression))];
  return branches.every((branch) => branch?.selections?.length === 1 && isCount(selected(branch.selections[0])));
}
