import { createSecretKey, randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { Kysely, type KyselyPlugin, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import { FwError } from '../core/errors.ts';
import { FwFailure } from '../core/failure.ts';
import { APP_ROLE } from './app-role.ts';
import { connectionFailure } from './connection-failure.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { createPglitePool } from './pglite-pool.ts';
import { openPgliteFrom } from './pglite-template.ts';
import { IDENTITY_SECRET, identityFunctionsMarker, identityFunctionsSql, storeIdentityPads } from './request-identity.ts';
import { type RequestLogin, ensureRequestLogin, requestLoginUrl } from './request-login.ts';
import { createRequestPool } from './request-pool.ts';
import { requestKysely } from './request-kysely.ts';
import { type RequestConnection, RequestTransaction, type RequestTransactionOptions, type TransactionSettings } from './request-transaction.ts';
import { pgliteWire } from './pglite-wire.ts';
import { privateTablesSql } from './private-tables.ts';
import { logStatementSpan } from '../telemetry/database-spans.ts';
import { databaseSecret, FW_SCHEMA, SECRETS_TABLE, secretsTableSql } from './secrets.ts';
import type { PGlite } from '@electric-sql/pglite';

export { APP_ROLE } from './app-role.ts';
export type { RequestTransactionOptions } from './request-transaction.ts';

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
  /**
   * A fresh PGlite starts from this snapshot of a database fw set up and migrated before, when fw's
   * cache keeps it (memory-database.ts names and saves them). Its secrets are replaced before use.
   */
  snapshot?: string;
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
   * Runs `fn` in a fresh transaction on a connection of its own, as the app role, under the caller's
   * identity (request-transaction.ts). A write commits when `fn` resolves; a read, which changed
   * nothing, ends with a rollback; both roll back when it throws.
   */
  transaction<R>(options: RequestTransactionOptions, fn: (trx: Kysely<any>) => Promise<R>): Promise<R>;
  /** Connections of the PostgreSQL pools by state (for metrics); none for PGlite's single session. */
  pools(): PoolUsage[];
  /** True when this PGlite started from `options.snapshot`. */
  readonly fromSnapshot?: boolean;
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
  let pglitePool: ReturnType<typeof createPglitePool> | undefined;
  let fromSnapshot = false;

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
    const dataDir = options.dataDir ?? 'memory://';
    let unlock = () => {};
    if (!dataDir.includes('://')) {
      await mkdir(dataDir, { recursive: true });
      unlock = lockDataDir(dataDir);
    }
    let pglite: PGlite;
    try {
      // 64-bit integers and numerics as strings, exactly as `pg` returns them, so both databases agree.
      ({ pglite, fromSnapshot } = await openPgliteFrom(dataDir, { parsers: { 20: String, 1700: String } }, options.snapshot));
      // A snapshot's secrets are another database's (and sit in a file): this one makes its own below.
      if (fromSnapshot) await pglite.exec(`delete from "${FW_SCHEMA}"."${SECRETS_TABLE}"`);
    } catch (error) {
      unlock();
      throw error;
    }
    dialect = 'pglite';
    driver = { kind: 'pglite', pglite };
    pglitePool = createPglitePool(pglite);
    admin = new Kysely({ dialect: new PostgresDialect({ pool: pglitePool }), log: logStatementSpan('pglite') });
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
    // The owner's first connection: a refused sign-in or no server says so, with the variable to fix.
    throw (options.url && connectionFailure(error, { variable: options.directUrl ? 'FW_DIRECT_DATABASE_URL' : 'DATABASE_URL', url: options.directUrl ?? options.url, direct: Boolean(options.directUrl) })) || error;
  }

  if (!pgModule || !setup.login) {
    // PGlite: one session, which is the owner's (see docs/security.md for what that cannot enforce).
    // A request transaction holds it from its first statement to its end, like any other user of it.
    const pglite = (driver as { pglite: PGlite }).pglite;
    // The admin's pool: its one client is PGlite's one session, which the transaction holds throughout.
    const pool = pglitePool!;
    const settings: TransactionSettings = { statementTimeoutMs, key: null, pooled: false, readEnd: 'await' };
    const state: RequestConnection = { wire: pgliteWire(pglite), session: null, nextClaim: null, tail: [], broken: false };
    const holder = { current: undefined as RequestTransaction | undefined };
    const kysely = requestKysely(holder, 'pglite');
    return {
      dialect,
      driver,
      admin,
      fromSnapshot,
      transaction: async (txOptions, fn) => {
        const client = await pool.connect();
        try {
          return await runTransaction((holder.current = new RequestTransaction(state, txOptions, settings)), kysely, txOptions, fn);
        } finally {
          holder.current = undefined;
          client.release();
        }
      },
      pools: () => [],
      async close() {
        await admin.destroy();
        await closeDriver();
      },
    };
  }

  const requests = createRequestPool(pgModule, requestLoginUrl(options.url!, setup.login), poolSize);
  // Through a transaction pooler (a direct URL beside it says so), which session a transaction gets is
  // unknown until it has begun; directly, each connection keeps its session.
  const settings: TransactionSettings = { statementTimeoutMs, key: createSecretKey(setup.key), pooled: Boolean(options.directUrl), readEnd: options.directUrl ? 'send' : 'defer' };
  const database: FwDatabase = {
    dialect,
    driver,
    admin,
    transaction: (txOptions, fn) =>
      requests.run((connection) => runTransaction((connection.current = new RequestTransaction(connection.state, txOptions, settings)), connection.kysely, txOptions, fn)),
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
    // The request login's first connection, through DATABASE_URL (the pooler, when there is one).
    throw connectionFailure((error as Error).cause ?? error, { variable: 'DATABASE_URL', url: options.url!, requestLogin: setup.login.role, direct: Boolean(options.directUrl) }) ?? error;
  }
  return database;
}

/** `fn` with the transaction's Kysely (plugins added, nested transactions refused), then its end. */
async function runTransaction<R>(transaction: RequestTransaction, kysely: Kysely<any>, txOptions: RequestTransactionOptions, fn: (trx: Kysely<any>) => Promise<R>): Promise<R> {
  let result: R;
  try {
    result = await fn(withTransactionPlugins(kysely, txOptions.plugins ?? [], true));
  } catch (error) {
    await transaction.rollback();
    throw error;
  }
  await transaction.commit();
  return result;
}

/**
 * Proves at start-up that a request transaction can prove its identity to the policies (the claim
 * opens the session's counter as the owner, a temporary sequence, so the owner needs TEMPORARY on the
 * database), so a misconfigured server fails here and not on every request.
 */
async function selfTest(database: FwDatabase): Promise<void> {
  const tenantId = randomUUID();
  try {
    const row = await database.transaction({ readOnly: true, auth: { kind: 'user', userId: 'fw-self-test', tenantId, role: null } }, async (trx) =>
      (await sql<{ tenant: string | null }>`select "_fw"."tenant_id"()::text as tenant`.execute(trx)).rows[0],
    );
    if (row?.tenant !== tenantId) throw new Error(`_fw.tenant_id() answered ${row?.tenant ?? 'null'}`);
  } catch (error) {
    const names = (await sql<{ owner: string; name: string }>`select current_user as owner, current_database() as name`.execute(database.admin)).rows[0];
    const [owner, name] = [names?.owner ?? 'the owner', names?.name ?? 'the database'];
    throw new FwFailure('database_role', `Request transactions cannot prove their identity to row-level security: ${(error as Error).message}.`, {
      cause: error,
      suggestions: [`As a superuser: GRANT TEMPORARY ON DATABASE "${name}" TO "${owner}"; (the claim keeps its counter in the session's temporary schema)`],
    });
  }
}

/**
 * Creates, under a lock, what request identities need: the secrets table, the identity key and its
 * HMAC pads, on PostgreSQL the request login role, and the `_fw.claim` / `_fw.tenant_id()` family of
 * functions (granted to the login role, so it comes first).
 */
async function setUpRequestIdentity(admin: Kysely<any>, dialect: FwDatabase['dialect']): Promise<{ key: Buffer; login: RequestLogin | null }> {
  return admin.transaction().execute(async (trx) => {
    await sql.raw(`select pg_advisory_xact_lock(${SETUP_LOCK_KEY.toString()})`).execute(trx);
    for (const statement of [...secretsTableSql, ...privateTablesSql]) await sql.raw(statement).execute(trx);
    const key = await databaseSecret(trx, IDENTITY_SECRET);
    await storeIdentityPads(trx, key);
    const login = dialect === 'postgres' ? await ensureRequestLogin(trx) : null;
    const marker = identityFunctionsMarker(dialect, login?.role);
    const current = await sql<{ current: boolean }>`
      select coalesce(obj_description(to_regprocedure('_fw.claim(text, text, text, text, text)'), 'pg_proc') = ${marker}, false) as current`.execute(trx);
    if (!current.rows[0]?.current) {
      for (const statement of identityFunctionsSql(dialect, login?.role)) await sql.raw(statement).execute(trx);
      await sql.raw(`comment on function "_fw"."claim"(text, text, text, text, text) is '${marker}'`).execute(trx);
    }
    return { key, login };
  });
}

/** The advisory lock of `setUpRequestIdentity` (distinct from the migration lock). */
const SETUP_LOCK_KEY = 7_306_843_227_108_254_001n;

const forbiddenInTransaction = new Set(['transaction', 'startTransaction', 'connection', 'destroy']);

/**
 * A request transaction's `trx` with more Kysely plugins, still refusing nested transactions: for
 * several handlers run in one transaction, each with plugins of its own (batched live reruns).
 */
export function withTransactionPlugins(trx: Kysely<any>, plugins: readonly KyselyPlugin[], guard = false): Kysely<any> {
  return plugins.length === 0 && !guard ? trx : guardTransaction(plugins.reduce<Kysely<any>>((k, p) => k.withPlugin(p), trx));
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
