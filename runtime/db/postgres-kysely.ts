import { type Driver, Kysely, type LogConfig, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import { CountsAsNumbersPlugin } from './count-numbers.ts';

/**
 * A Kysely that compiles for PostgreSQL and runs its statements through `driver`: for fw's own
 * drivers that route statements somewhere other than a pool (request transactions, autocommit
 * transactions for actions, prefetched rows for multiplexed live reruns) — each a handler's `ctx.db`,
 * so Kysely's count aggregates come back as numbers (count-numbers.ts).
 */
export function postgresKysely(driver: Driver, log?: LogConfig): Kysely<any> {
  return new Kysely<any>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    plugins: [new CountsAsNumbersPlugin()],
    ...(log ? { log } : {}),
  });
}
