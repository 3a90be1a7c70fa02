import { mkdir } from 'node:fs/promises';
import { Kysely, type KyselyPlugin, PostgresDialect, sql } from 'kysely';
import type { Auth } from '../entries.ts';
import { FwError } from '../errors.ts';
import { FwFailure } from '../failure.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { createPglitePool } from './pglite-pool.ts';
import type { PGlite } from '@electric-sql/pglite';

/** The non-superuser role every request transaction switches to, so row-level security applies. */
export const APP_ROLE = 'fw_app';

export interface DatabaseOptions {
  /** A PostgreSQL URL. Without it fw uses embedded PGlite persisted in `dataDir`. */
  url?: string;
  /** PGlite data directory; `memory://` keeps it in memory. */
  dataDir?: string;
  /** Connections in the PostgreSQL pool (default 10). */
  poolSize?: number;
  /** `statement_timeout` for request transactions, in ms (default 30 000). */
  statementTimeoutMs?: number;
}

export interface RequestTransactionOptions {
  readOnly: boolean;
  auth: Auth;
  /** Recorded with the transaction's live invalidations (`fw.trace_id`), for debugging. */
  traceId?: string;
  /** Kysely plugins for this transaction's `trx` (e.g. the live read recorder). */
  plugins?: readonly KyselyPlugin[];
}

/** The driver underneath, for fw's own infrastructure that needs more than Kysely (e.g. LISTEN). */
export type DatabaseDriver = { kind: 'pglite'; pglite: PGlite } | { kind: 'postgres'; url: string };

export interface FwDatabase {
  readonly dialect: 'pglite' | 'postgres';
  readonly driver: DatabaseDriver;
  /** Kysely as the connecting (owner) user: for migrations and fw's own bookkeeping only. */
  readonly admin: Kysely<any>;
  /**
   * Runs `fn` in a fresh transaction on a connection of its own, as the app role, with the caller's
   * tenant set. Commits when `fn` resolves, rolls back when it throws.
   */
  transaction<R>(options: RequestTransactionOptions, fn: (trx: Kysely<any>) => Promise<R>): Promise<R>;
  close(): Promise<void>;
}

export async function createDatabase(options: DatabaseOptions = {}): Promise<FwDatabase> {
  const statementTimeoutMs = options.statementTimeoutMs ?? 30_000;
  if (!Number.isInteger(statementTimeoutMs) || statementTimeoutMs < 0) {
    throw new TypeError(`fw: statementTimeoutMs must be a whole number of milliseconds ≥ 0, got ${statementTimeoutMs}.`);
  }
  let dialect: FwDatabase['dialect'];
  let admin: Kysely<any>;
  let closeDriver: () => Promise<void>;
  let driver: DatabaseDriver;

  if (options.url) {
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 10 });
    // An idle client that loses its server must not crash the process.
    pool.on('error', (error) => console.error(`fw: idle PostgreSQL connection error: ${error.message}`));
    dialect = 'postgres';
    driver = { kind: 'postgres', url: options.url };
    admin = new Kysely({ dialect: new PostgresDialect({ pool }) });
    closeDriver = async () => {}; // Kysely's destroy() ends the pool.
  } else {
    const { PGlite } = await import('@electric-sql/pglite');
    const dataDir = options.dataDir ?? 'memory://';
    let unlock = () => {};
    if (!dataDir.includes('://')) {
      await mkdir(dataDir, { recursive: true });
      unlock = lockDataDir(dataDir);
    }
    let pglite: PGlite;
    try {
      // 64-bit integers and numerics as strings, exactly as `pg` returns them, so both databases agree.
      pglite = await PGlite.create(dataDir, { parsers: { 20: String, 1700: String } });
    } catch (error) {
      unlock();
      throw error;
    }
    dialect = 'pglite';
    driver = { kind: 'pglite', pglite };
    admin = new Kysely({ dialect: new PostgresDialect({ pool: createPglitePool(pglite) }) });
    closeDriver = async () => {
      await pglite.close();
      unlock();
    };
  }

  try {
    await ensureAppRole(admin);
  } catch (error) {
    await admin.destroy();
    await closeDriver();
    throw error;
  }

  return {
    dialect,
    driver,
    admin,
    transaction: (txOptions, fn) =>
      admin.connection().execute(async (connection) => {
        let result: Awaited<ReturnType<typeof fn>>;
        try {
          // Inside the try: a prelude that fails after BEGIN must not leave the pooled connection in
          // an aborted transaction for the next request.
          await sql.raw(transactionPrelude(txOptions, statementTimeoutMs)).execute(connection);
          const trx = txOptions.plugins?.length ? txOptions.plugins.reduce<Kysely<any>>((k, p) => k.withPlugin(p), connection) : connection;
          result = await fn(guardTransaction(trx));
        } catch (error) {
          await sql.raw('rollback').execute(connection).catch(() => undefined);
          throw error;
        }
        const commit = await sql.raw<{ command?: string }>('commit').execute(connection);
        // PostgreSQL answers COMMIT with ROLLBACK when a statement failed and the handler swallowed it.
        if (commit.rows[0]?.command === 'ROLLBACK') {
          throw new FwError('internal', 'The transaction was rolled back because a statement in it failed.');
        }
        return result;
      }),
    async close() {
      await admin.destroy();
      await closeDriver();
    },
  };
}

/**
 * Everything a request transaction needs before the handler runs, as one simple-protocol round trip:
 * BEGIN (read-only for queries), the app role, a statement timeout, and the caller's identity.
 * `SET TRANSACTION READ ONLY` must precede other statements, hence `BEGIN READ ONLY`.
 */
export function transactionPrelude({ readOnly, auth, traceId }: RequestTransactionOptions, statementTimeoutMs: number): string {
  // One SELECT of set_config(…, true) calls is cheaper for the server than three SET statements;
  // set_config('role', …) is SET LOCAL ROLE.
  return (
    `${readOnly ? 'begin read only' : 'begin'}; ` +
    `select set_config('role', '${APP_ROLE}', true),` +
    ` set_config('statement_timeout', '${statementTimeoutMs}', true),` +
    ` set_config('fw.tenant_id', ${literal(auth.tenantId ?? '')}, true),` +
    ` set_config('fw.user_id', ${literal(auth.userId ?? '')}, true),` +
    ` set_config('fw.role', ${literal(auth.role ?? '')}, true),` +
    ` set_config('fw.trace_id', ${literal(traceId ?? '')}, true)`
  );
}

/** A SQL string literal. With standard_conforming_strings (on since PostgreSQL 9.1) only `'` needs doubling. */
function literal(value: string): string {
  if (value.includes('\0')) throw new FwError('bad_request', 'Identity values must not contain NUL characters.');
  return `'${value.replaceAll("'", "''")}'`;
}

const forbiddenInTransaction = new Set(['transaction', 'startTransaction', 'connection', 'destroy']);

/** The handler's `ctx.db`: already inside the request transaction, so opening another is a mistake. */
function guardTransaction(connection: Kysely<any>): Kysely<any> {
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(connection, {
    get(target, property, receiver) {
      if (typeof property === 'string' && forbiddenInTransaction.has(property)) {
        return () => {
          throw new FwError(
            'internal',
            `ctx.db.${property}() is not available: every entry already runs in its own transaction. Use ctx.db directly.`,
          );
        };
      }
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      // Kysely keeps its state in #private fields, which only the real instance may touch.
      let method = bound.get(property);
      if (!method) bound.set(property, (method = value.bind(target)));
      return method;
    },
  });
}

/**
 * Creates the app role once per cluster. Roles are cluster-wide, so two databases (or two processes)
 * may race to create it: the duplicate is harmless.
 */
async function ensureAppRole(admin: Kysely<any>): Promise<void> {
  const exists = await sql`select 1 from pg_roles where rolname = ${APP_ROLE}`.execute(admin);
  if (exists.rows.length === 0) {
    try {
      await sql.raw(`create role ${APP_ROLE} nologin`).execute(admin);
    } catch (error) {
      if ((error as { code?: string }).code !== '42710' && (error as { code?: string }).code !== '23505') throw error;
    }
  }
  // The connecting user must be able to switch to the role (a superuser always can). Granting may be
  // refused to a non-superuser; what matters is membership, checked below.
  await sql.raw(`grant ${APP_ROLE} to current_user`).execute(admin).catch(() => undefined);
  const member = await sql<{ member: boolean; user: string }>`
    select pg_has_role(current_user, ${APP_ROLE}, 'MEMBER') as member, current_user as user`.execute(admin);
  if (!member.rows[0]?.member) {
    const user = member.rows[0]?.user ?? 'the connecting user';
    throw new FwFailure('database_role', `${user} cannot switch to the role ${APP_ROLE}, so requests could not run under row-level security.`, {
      suggestions: [`As a superuser: GRANT ${APP_ROLE} TO "${user}";`],
    });
  }
  await sql.raw(`grant usage on schema public to ${APP_ROLE}`).execute(admin);
}
