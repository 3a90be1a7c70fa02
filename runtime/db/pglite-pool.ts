import type { PGlite, Results } from '@electric-sql/pglite';
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';

/**
 * A `pg.Pool`-shaped view of one PGlite instance, for Kysely's `PostgresDialect`.
 *
 * PGlite has a single connection, so the pool hands out that one client to one holder at a time:
 * `connect()` waits until the previous holder released it. A request transaction therefore owns the
 * database from BEGIN to COMMIT and two requests never interleave statements in one transaction.
 * (No maintained Kysely dialect supports PGlite 0.5; see REFERENCE.md.)
 */
export function createPglitePool(pglite: PGlite): PostgresPool & { waiting(): number } {
  let held = false;
  const queue: Array<() => void> = [];

  const release = (): void => {
    const next = queue.shift();
    if (next) next();
    else held = false;
  };

  const client = {
    async query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
      // Without parameters use the simple protocol, which (like pg) accepts several statements in
      // one round trip; the request prelude relies on that.
      const result: Results<R> =
        parameters.length === 0
          ? lastResult(await pglite.exec(sql)) as Results<R>
          : await pglite.query<R>(sql, parameters as unknown[]);
      return {
        command: (result.command?.toUpperCase() ?? 'SELECT') as PostgresQueryResult<R>['command'],
        rowCount: result.rowCount ?? result.affectedRows ?? 0,
        rows: result.rows,
      };
    },
    release,
  } as PostgresPoolClient;

  return {
    options: {},
    connect(): Promise<PostgresPoolClient> {
      if (!held) {
        held = true;
        return Promise.resolve(client);
      }
      return new Promise((resolve) => queue.push(() => resolve(client)));
    },
    async end(): Promise<void> {
      // Closing is the owner's job (it may still run migrations after Kysely is destroyed).
    },
    waiting: () => queue.length,
  };
}

function lastResult(results: Results[]): Results {
  return results[results.length - 1] ?? { rows: [], fields: [] };
}
