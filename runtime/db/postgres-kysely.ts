import { type DatabaseConnection, type Driver, Kysely, type LogEvent, type Logger, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import { FwError } from '../core/errors.ts';
import { CountsAsNumbersPlugin } from './count-numbers.ts';
import { markStatementFailure, StatementSitePlugin } from './statement-site.ts';

/**
 * A Kysely that compiles for PostgreSQL and runs its statements through `driver`: for fw's own
 * drivers that route statements somewhere other than a pool (request transactions, autocommit
 * transactions for actions, prefetched rows for multiplexed live reruns) — each a handler's `ctx.db`,
 * so Kysely's count aggregates come back as numbers (count-numbers.ts), and a statement that fails
 * says where the handler wrote it (statement-site.ts: Kysely's logger is told of every failed
 * statement, with its query id).
 */
export function postgresKysely(driver: Driver, log?: Logger): Kysely<any> {
  return new Kysely<any>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    plugins: [new CountsAsNumbersPlugin(), new StatementSitePlugin()],
    log: (event: LogEvent) => {
      if (event.level === 'error') markStatementFailure(event.error, event.query.queryId);
      return log?.(event);
    },
  });
}

/**
 * A Kysely whose statements go to `execute`, inside a transaction fw opened and will end: it cannot
 * open one of its own, nor stream. `inside` names that transaction and `why` says why, in the errors
 * a handler gets for trying (`a live query`, `a live query already runs in a transaction`).
 */
export function insideTransactionKysely(execute: DatabaseConnection['executeQuery'], refusal: { inside: string; why: string }, log?: Logger): Kysely<any> {
  const connection: DatabaseConnection = {
    executeQuery: execute,
    // eslint-disable-next-line require-yield
    async *streamQuery() {
      throw new FwError('internal', `Streaming queries are not available in ${refusal.inside}.`);
    },
  };
  const refuse = async () => {
    throw new FwError('internal', `ctx.db.transaction() is not available: ${refusal.why}.`);
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
  return postgresKysely(driver, log);
}
