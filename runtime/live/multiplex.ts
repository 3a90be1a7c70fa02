/**
 * One statement for many live groups of one query shape (Hasura multiplexes live queries that differ
 * only in variables the same way). Groups of one identity rerun in one transaction (hub.ts
 * `runBatch`); when several of them last ran exactly one SELECT with the same SQL text, those
 * statements are sent as ONE: a UNION ALL of the groups' own statements, each keeping its own
 * parameters (so each branch is typed and planned as it would be alone), tagged with the group and
 * the row's position. Each group's handler then runs as usual on a Kysely that answers a statement
 * identical to a prefetched one — same SQL, same parameters — from the prefetched rows, and sends
 * anything else to the database. A handler whose statement changed (other parameters, other SQL)
 * simply runs it: prefetching can cost a wasted read, never a wrong answer.
 *
 * @example
 *   const prefetched = await prefetchStatements(trx, [nodeA, nodeB]);   // one round trip
 *   const db = prefetchingKysely(trx, prefetched[0]!);                  // handler A's ctx.db
 */
import { CompiledQuery, type DatabaseConnection, type Driver, type Kysely, PostgresQueryCompiler, type QueryResult, type RootOperationNode, createQueryId } from 'kysely';
import { postgresKysely } from '../db/postgres-kysely.ts';
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
 * Runs the SELECTs as one statement in `trx` and returns, per statement, its result keyed as the
 * statement compiles alone. Rows keep their order within each statement (`row_number()` over the
 * statement's own output, which is in its ORDER BY's order) and their columns and types.
 */
export async function prefetchStatements(trx: Kysely<any>, nodes: readonly RootOperationNode[]): Promise<Prefetched[]> {
  const parameters: unknown[] = [];
  const branches: string[] = [];
  const keys: string[] = [];
  nodes.forEach((node, index) => {
    if (node.kind !== 'SelectQueryNode') throw new FwError('internal', 'fw: only SELECT statements can be multiplexed.');
    const alone = new PostgresQueryCompiler().compileQuery(node, createQueryId());
    keys.push(statementKey(alone));
    const branch = new OffsetCompiler(parameters.length).compileQuery(node, createQueryId());
    parameters.push(...branch.parameters);
    branches.push(`select ${index} as "${GROUP_COLUMN}", row_number() over () as "${ROW_COLUMN}", q.* from (${branch.sql}) as q`);
  });
  const sql = `${branches.map((branch) => `(${branch})`).join(' union all ')} order by 1, 2`;
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
  const connection: DatabaseConnection = {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      const key = statementKey(query);
      const hit = prefetched.get(key);
      if (hit) {
        prefetched.delete(key);
        return hit as QueryResult<R>;
      }
      return trx.executeQuery<R>(query);
    },
    // eslint-disable-next-line require-yield
    async *streamQuery() {
      throw new FwError('internal', 'Streaming queries are not available in a live query.');
    },
  };
  const refuse = async () => {
    throw new FwError('internal', 'ctx.db.transaction() is not available: a live query already runs in a transaction.');
  };
  const driver: Driver = {
    init: async () => undefined,
    acquireConnection: async () => connection,
    beginTransaction: refuse,
    commitTransaction: refuse,
    rollbackTransaction: refuse,
    releaseConnection: async () => undefined,
    destroy: async () => undefined,
  };
  return postgresKysely(driver);
}
