import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { Kysely, type KyselyPlugin, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import type { Auth } from '../entry-types.ts';
import { FwError } from '../errors.ts';
import { FwFailure } from '../failure.ts';
import { APP_ROLE } from './app-role.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { createPglitePool } from './pglite-pool.ts';
import { IDENTITY_SECRET, type Identity, type RequestSession, identityFunctionsMarker, identityFunctionsSql, identityProof, requestSessionSql, storeIdentityPads } from './request-identity.ts';
import { type RequestLogin, ensureRequestLogin, requestLoginUrl } from './request-login.ts';
import { privateTablesSql } from './private-tables.ts';
import { dollarQuoted } from './dollar-quoted.ts';
import { logStatementSpan } from '../telemetry/database-spans.ts';
import { databaseSecret, secretsTableSql } from './secrets.ts';
import type { PGlite } from '@electric-sql/pglite';

export { APP_ROLE } from './app-role.ts';

export interface DatabaseOptions {
  /** A PostgreSQL URL. Without it fw uses embedded PGlite persisted in `dataDir`. */
  url?: string;
  /**
   * A direct PostgreSQL URL to the same database, for what needs a session of its own when `url` goes
   * through a transaction pooler (PgBouncer's `pool_mode = transaction`, a managed host's pooler):
   * `LISTEN` for live wakeups and the owner's work (migrations, fw's bookkeeping). Request transactions
   * still go through `url`. Prisma calls it `directUrl`; the env var is `FW_DIRECT_DATABASE_URL`.
   */
  directUrl?: string;
  /** PGlite data directory; `memory://` keeps it in memory. */
  dataDir?: string;
  /** Connections in the PostgreSQL request pool (default 10; the owner's pool gets half as many). */
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

/**
 * The driver underneath, for fw's own infrastructure that needs more than Kysely (e.g. LISTEN). `url`
 * is where a session of fw's own connects: the direct URL when there is one.
 */
export type DatabaseDriver = { kind: 'pglite'; pglite: PGlite } | { kind: 'postgres'; url: string };

export interface FwDatabase {
  readonly dialect: 'pglite' | 'postgres';
  readonly driver: DatabaseDriver;
  /**
   * Kysely as the connecting (owner) user: for migrations and fw's own bookkeeping only. On PostgreSQL,
   * request transactions never use it: they run on connections of the request login (request-login.ts).
   */
  readonly admin: Kysely<any>;
  /**
   * Runs `fn` in a fresh transaction on a connection of its own, as the app role, with the caller's
   * tenant set. Commits when `fn` resolves, rolls back when it throws.
   */
  transaction<R>(options: RequestTransactionOptions, fn: (trx: Kysely<any>) => Promise<R>): Promise<R>;
  /** Connections of the PostgreSQL pools by state (for metrics); none for PGlite's single session. */
  pools(): PoolUsage[];
  close(): Promise<void>;
}

export interface PoolUsage {
  pool: 'owner' | 'requests';
  used: number;
  idle: number;
  waiting: number;
}

function usageOf(pool: 'owner' | 'requests', counts: { totalCount: number; idleCount: number; waitingCount: number }): PoolUsage {
  return { pool, used: counts.totalCount - counts.idleCount, idle: counts.idleCount, waiting: counts.waitingCount };
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
  let ownerPool: pg.Pool | undefined;
  const poolSize = options.poolSize ?? 10;
  let pgModule: typeof pg | undefined;

  if (options.directUrl && !options.url) {
    throw new FwFailure('bad_config', 'A direct database URL was given without the pooled one (DATABASE_URL) it stands beside.', {
      suggestions: ['Set DATABASE_URL to the pooler and FW_DIRECT_DATABASE_URL to PostgreSQL itself, or leave FW_DIRECT_DATABASE_URL out.'],
    });
  }
  if (options.url) {
    pgModule = (await import('pg')).default;
    // The owner's sessions (migrations, fw's bookkeeping) and LISTEN go around a pooler when told how.
    const ownerUrl = options.directUrl ?? options.url;
    const pool = (ownerPool = new pgModule.Pool({ connectionString: ownerUrl, max: Math.max(2, Math.ceil(poolSize / 2)) }));
    // An idle client that loses its server must not crash the process.
    pool.on('error', (error) => console.error(`fw: idle PostgreSQL connection error: ${error.message}`));
    dialect = 'postgres';
    driver = { kind: 'postgres', url: ownerUrl };
    admin = new Kysely({ dialect: new PostgresDialect({ pool }), log: logStatementSpan('postgres') });
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
    admin = new Kysely({ dialect: new PostgresDialect({ pool: createPglitePool(pglite) }), log: logStatementSpan('pglite') });
    closeDriver = async () => {
      await pglite.close();
      unlock();
    };
  }

  let setup: { key: Buffer; login: RequestLogin | null };
  try {
    await ensureAppRole(admin);
    setup = await setUpRequestIdentity(admin, dialect);
  } catch (error) {
    await admin.destroy();
    await closeDriver();
    throw error;
  }

  if (!pgModule || !setup.login) {
    // PGlite: one session, which is the owner's (see docs/security.md for what that cannot enforce).
    return {
      dialect,
      driver,
      admin,
      transaction: (txOptions, fn) =>
        admin.connection().execute((connection) =>
          runRequestTransaction(connection, () => sql.raw(transactionPrelude(txOptions, statementTimeoutMs)).execute(connection), txOptions, fn),
        ),
      pools: () => [],
      async close() {
        await admin.destroy();
        await closeDriver();
      },
    };
  }

  const requests = createRequestPool(pgModule, requestLoginUrl(options.url!, setup.login), poolSize);
  const key = setup.key;
  const database: FwDatabase = {
    dialect,
    driver,
    admin,
    transaction: (txOptions, fn) =>
      requests.run((kysely, connection) => runRequestTransaction(kysely, () => beginRequestTransaction(connection, txOptions, statementTimeoutMs, key), txOptions, fn)),
    pools: () => [usageOf('owner', ownerPool!), usageOf('requests', requests.counts())],
    async close() {
      await requests.end();
      await admin.destroy();
      await closeDriver();
    },
  };
  try {
    await selfTest(database);
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

/** BEGIN (`begin` runs the prelude) … handler … COMMIT on one connection, which is left outside any transaction either way. */
async function runRequestTransaction<R>(connection: Kysely<any>, begin: () => Promise<unknown>, txOptions: RequestTransactionOptions, fn: (trx: Kysely<any>) => Promise<R>): Promise<R> {
  let result: R;
  try {
    // Inside the try: a prelude that fails after BEGIN must not leave the pooled connection in
    // an aborted transaction for the next request.
    await begin();
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
}

export interface RequestPool {
  /**
   * Runs `fn` on a connection of the request login (the next request's prelude resets its session):
   * `kysely` is bound to that one connection for the whole call.
   */
  run<R>(fn: (kysely: Kysely<any>, connection: RequestConnection) => Promise<R>): Promise<R>;
  /** The pool's connections: all, idle, and callers waiting for one. */
  counts(): { totalCount: number; idleCount: number; waitingCount: number };
  end(): Promise<void>;
}

/** A pooled connection of the request login. */
export interface RequestConnection {
  /**
   * The server session this connection's last transaction ran in. Direct, that is the connection's own
   * session for ever; behind a transaction pooler each transaction may run in another one.
   */
  session: RequestSession;
  /** Sends `text` as one simple-protocol query (several statements allowed); the rows of the last one. */
  simpleQuery(text: string): Promise<Record<string, unknown>[]>;
}

/**
 * The pool of request connections (PostgreSQL), logged in as the request login role. Each connection
 * learns its session once (for the identity proof) and gets a Kysely of its own. Whatever session state
 * a request's SQL left behind is reset by the next request's prelude (`SESSION_RESET`).
 */
export function createRequestPool(pgModule: typeof pg, url: string, max: number): RequestPool {
  const pool = new pgModule.Pool({ connectionString: url, max });
  pool.on('error', (error) => console.error(`fw: idle PostgreSQL connection error: ${error.message}`));
  type Prepared = RequestConnection & { kysely: Kysely<any> };
  const connections = new WeakMap<pg.PoolClient, Prepared>();

  const prepare = async (client: pg.PoolClient): Promise<Prepared> => {
    const known = connections.get(client);
    if (known) return known;
    const row = (await client.query<RequestSession>(requestSessionSql)).rows[0];
    if (!row?.startedUs) throw new FwError('internal', 'fw: a request connection could not read its own session (pg_stat_get_activity).');
    const kysely = new Kysely<any>({ dialect: new PostgresDialect({ pool: { connect: async () => client, end: async () => {} } as never }), log: logStatementSpan('postgres') });
    const made: Prepared = {
      kysely,
      session: row,
      async simpleQuery(text) {
        const results = (await client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[];
        return (Array.isArray(results) ? results.at(-1)?.rows : results.rows) ?? [];
      },
    };
    connections.set(client, made);
    return made;
  };

  return {
    async run(fn) {
      const client = await pool.connect();
      const release = client.release.bind(client);
      // Kysely's driver calls client.release() after each use; the release that counts is ours, below.
      client.release = () => {};
      let failed: Error | undefined;
      try {
        const connection = await prepare(client);
        return await connection.kysely.connection().execute((kysely) => fn(kysely, connection));
      } catch (error) {
        // A connection whose session broke (terminated, protocol error) must not be pooled again.
        if (isBrokenConnection(error)) failed = error as Error;
        throw error;
      } finally {
        release(failed);
      }
    },
    counts: () => ({ totalCount: pool.totalCount, idleCount: pool.idleCount, waitingCount: pool.waitingCount }),
    end: () => pool.end(),
  };
}

/** SQLSTATE class 08 (connection exception), the shutdown/termination codes, or pg's own connection errors. */
function isBrokenConnection(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03';
  return /Connection terminated|not queryable|ECONNRESET|EPIPE/.test(String((error as Error | null)?.message ?? ''));
}

/**
 * Resets what SQL of an earlier request may have left in a pooled session, first thing in every
 * request's prelude (so it costs no round trip of its own): session-level SETs, temp tables (which
 * would shadow app tables for the next caller), cached sequence values (`currval`), prepared statements,
 * cursors, advisory locks, LISTENs. It is `DISCARD ALL` without `DISCARD PLANS` (which would make
 * every session re-plan `_fw.tenant_id()`); `DISCARD ALL` itself cannot run in a multi-statement string.
 * Runs in the request's transaction: should it roll back, the next prelude resets again.
 */
const SESSION_RESET = 'reset all; discard temp; discard sequences; deallocate all; close all; select pg_advisory_unlock_all(); unlisten *; ';

/**
 * Proves at start-up that a request transaction can prove its identity to the policies (the owner
 * must be able to read the login's session start: a superuser, a member of the login, or
 * pg_read_all_stats), so a misconfigured server fails here and not on every request.
 */
async function selfTest(database: FwDatabase): Promise<void> {
  const tenantId = randomUUID();
  try {
    const row = await database.transaction({ readOnly: true, auth: { kind: 'user', userId: 'fw-self-test', tenantId, role: null } }, async (trx) =>
      (await sql<{ tenant: string | null }>`select "_fw"."tenant_id"()::text as tenant`.execute(trx)).rows[0],
    );
    if (row?.tenant !== tenantId) throw new Error(`_fw.tenant_id() answered ${row?.tenant ?? 'null'}`);
  } catch (error) {
    const owner = (await sql<{ owner: string }>`select current_user as owner`.execute(database.admin)).rows[0]?.owner ?? 'the owner';
    throw new FwFailure('database_role', `Request transactions cannot prove their identity to row-level security: ${(error as Error).message}.`, {
      cause: error,
      suggestions: [`As a superuser: GRANT pg_read_all_stats TO "${owner}"; (the owner must read the request login's session start time)`],
    });
  }
}

/**
 * Creates, under a lock, what request identities need: the secrets table, the identity key and its
 * HMAC pads, the `_fw.tenant_id()` family of functions and, on PostgreSQL, the request login role.
 */
async function setUpRequestIdentity(admin: Kysely<any>, dialect: FwDatabase['dialect']): Promise<{ key: Buffer; login: RequestLogin | null }> {
  return admin.transaction().execute(async (trx) => {
    await sql.raw(`select pg_advisory_xact_lock(${SETUP_LOCK_KEY.toString()})`).execute(trx);
    for (const statement of [...secretsTableSql, ...privateTablesSql]) await sql.raw(statement).execute(trx);
    const key = await databaseSecret(trx, IDENTITY_SECRET);
    await storeIdentityPads(trx, key);
    const marker = identityFunctionsMarker(dialect);
    const current = await sql<{ current: boolean }>`
      select coalesce(obj_description(to_regprocedure('_fw.tenant_id()'), 'pg_proc') = ${marker}, false) as current`.execute(trx);
    if (!current.rows[0]?.current) {
      for (const statement of identityFunctionsSql(dialect)) await sql.raw(statement).execute(trx);
      await sql.raw(`comment on function "_fw"."tenant_id"() is '${marker}'`).execute(trx);
    }
    const login = dialect === 'postgres' ? await ensureRequestLogin(trx) : null;
    return { key, login };
  });
}

/** The advisory lock of `setUpRequestIdentity` (distinct from the migration lock). */
const SETUP_LOCK_KEY = 7_306_843_227_108_254_001n;

/**
 * Everything a request transaction needs before the handler runs, as one simple-protocol round trip:
 * BEGIN (read-only for queries), the app role, a statement timeout, the caller's identity and, on
 * PostgreSQL, the proof that fw set that identity for this session (request-identity.ts), after the
 * reset of whatever an earlier request left in the session (`SESSION_RESET`).
 * `SET TRANSACTION READ ONLY` must precede other statements, hence `BEGIN READ ONLY`.
 */
export function transactionPrelude(
  { readOnly, auth, traceId }: RequestTransactionOptions,
  statementTimeoutMs: number,
  proof?: { key: Buffer; session: RequestSession },
): string {
  // One SELECT of set_config(…, true) calls is cheaper for the server than several SET statements;
  // set_config('role', …) is SET LOCAL ROLE. With a proof it also answers the session it ran in.
  const identity = identityOf(auth);
  return (
    (proof ? SESSION_RESET : '') +
    `${readOnly ? 'begin read only' : 'begin'}; ` +
    `select set_config('role', '${APP_ROLE}', true),` +
    ` set_config('statement_timeout', '${statementTimeoutMs}', true),` +
    ` set_config('fw.tenant_id', ${literal(identity.tenantId ?? '')}, true),` +
    ` set_config('fw.user_id', ${literal(identity.userId ?? '')}, true),` +
    ` set_config('fw.role', ${literal(identity.role ?? '')}, true),` +
    ` set_config('fw.identity', '${proof ? identityProof(proof.key, proof.session, identity) : ''}', true),` +
    ` set_config('fw.trace_id', ${literal(traceId ?? '')}, true)` +
    (proof ? ', pg_backend_pid()::text as backend' : '')
  );
}

function identityOf(auth: Auth): Identity {
  return { tenantId: auth.tenantId ?? null, userId: auth.userId ?? null, role: auth.role ?? null };
}

/**
 * Begins a request transaction on PostgreSQL: the prelude, whose identity proof is made for the session
 * the connection ran in last time — one round trip. Behind a transaction pooler (PgBouncer's
 * `pool_mode = transaction`) the transaction may land in another server session, which the prelude's
 * answer shows; the identity is then proven again for that session, in two more round trips (only the
 * login role may read its session's start time, so `fw_app` is left for that one statement).
 */
export async function beginRequestTransaction(connection: RequestConnection, txOptions: RequestTransactionOptions, statementTimeoutMs: number, key: Buffer): Promise<void> {
  const answer = await connection.simpleQuery(transactionPrelude(txOptions, statementTimeoutMs, { key, session: connection.session }));
  if (answer[0]?.backend === connection.session.pid) return;
  const session = (await connection.simpleQuery(`select set_config('role', 'none', true); ${requestSessionSql}`))[0] as RequestSession | undefined;
  if (!session?.startedUs) throw new FwError('internal', 'fw: a request transaction could not read its own session (pg_stat_get_activity).');
  connection.session = session;
  await connection.simpleQuery(`select set_config('role', '${APP_ROLE}', true), set_config('fw.identity', '${identityProof(key, session, identityOf(txOptions.auth))}', true)`);
}
/**
 * A SQL string literal, dollar-quoted: the prelude is lexed before its reset runs, so under settings an
 * injection bug in an earlier request left in the session (`standard_conforming_strings = off`), a
 * quoted string could end early at a backslash; a dollar-quoted one ends only at its tag.
 */
function literal(value: string): string {
  if (value.includes('\0')) throw new FwError('bad_request', 'Identity values must not contain NUL characters.');
  return dollarQuoted(value);
}

const forbiddenInTransaction = new Set(['transaction', 'startTransaction', 'connection', 'destroy']);

/**
 * A request transaction's `trx` with more Kysely plugins, still refusing nested transactions: for
 * several handlers run in one transaction, each with plugins of its own (batched live reruns).
 */
export function withTransactionPlugins(trx: Kysely<any>, plugins: readonly KyselyPlugin[]): Kysely<any> {
  return plugins.length === 0 ? trx : guardTransaction(plugins.reduce<Kysely<any>>((k, p) => k.withPlugin(p), trx));
}

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
