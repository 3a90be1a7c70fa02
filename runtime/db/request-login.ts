/**
 * The login role request connections use on PostgreSQL (PostgREST's "authenticator" pattern): a
 * NOINHERIT login with no privilege of its own whose only power is `SET ROLE fw_app`. SQL running in a
 * request can `reset role` or `set session authorization` all it likes and lands on a role that can
 * read nothing; it can never become the owner, because the session never was the owner.
 *
 * The role is made by the owner from nothing but `DATABASE_URL`: one per database (roles are
 * cluster-wide, two fw databases on one server must not share a password), with a random password kept
 * in `_fw.secrets` so that every process of the database logs in the same way. The password reaches the
 * server as a SCRAM verifier, never as text a server log could record.
 *
 * @example
 *   const login = await ensureRequestLogin(admin);          // as the owner, under the setup lock
 *   const pool = new pg.Pool({ connectionString: requestLoginUrl(url, login) });
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { FwFailure } from '../core/failure.ts';
import { APP_ROLE } from './app-role.ts';
import { databaseSecret } from './secrets.ts';

export interface RequestLogin {
  role: string;
  password: string;
}

/** The login role of a database: `fw_login_` and a hash of its name (fits PostgreSQL's 63 bytes). */
export function requestLoginRole(database: string): string {
  return `fw_login_${createHash('sha256').update(database).digest('hex').slice(0, 12)}`;
}

/** Creates or updates the login role of the current database. Runs as the owner, in the setup transaction. */
export async function ensureRequestLogin(admin: Kysely<any>): Promise<RequestLogin> {
  const database = (await sql<{ name: string; owner: string }>`select current_database() as name, current_user as owner`.execute(admin)).rows[0]!;
  const role = requestLoginRole(database.name);
  const password = (await databaseSecret(admin, 'request.login')).toString('hex');
  const exists = (await sql`select 1 from pg_roles where rolname = ${role}`.execute(admin)).rows.length > 0;
  // A new role has no other attribute (no superuser, createrole, bypassrls…); ALTER names only what a
  // CREATEROLE owner may change.
  const attributes = `login noinherit password '${scramVerifier(password)}'`;
  // Under createDatabase's setup lock: no other process of this database is here at the same time.
  try {
    await sql.raw(`${exists ? 'alter' : 'create'} role "${role}" ${attributes}`).execute(admin);
  } catch (error) {
    throw loginFailure(database.owner, role, error);
  }
  try {
    await sql.raw(`grant "${APP_ROLE}" to "${role}"`).execute(admin);
  } catch (error) {
    throw loginFailure(database.owner, role, error);
  }
  // Best effort: a superuser owner does not need it, and the start-up self-test names what is missing.
  await bestEffort(admin, `grant connect on database "${database.name.replaceAll('"', '""')}" to "${role}"`);
  return { role, password };
}

/** Runs `statement` in a savepoint: its failure must not abort the setup transaction around it. */
async function bestEffort(trx: Kysely<any>, statement: string): Promise<void> {
  await sql.raw('savepoint fw_best_effort').execute(trx);
  try {
    await sql.raw(statement).execute(trx);
    await sql.raw('release savepoint fw_best_effort').execute(trx);
  } catch {
    await sql.raw('rollback to savepoint fw_best_effort').execute(trx);
  }
}

/** `url` with the login role's user and password. */
export function requestLoginUrl(url: string, login: RequestLogin): string {
  const parsed = new URL(url);
  if (parsed.host) {
    parsed.username = encodeURIComponent(login.role);
    parsed.password = encodeURIComponent(login.password);
  } else {
    // A socket URL (postgres:///db?host=/run/postgresql): pg reads user and password from the query.
    parsed.searchParams.set('user', login.role);
    parsed.searchParams.set('password', login.password);
  }
  return parsed.toString();
}

/** PostgreSQL's SCRAM-SHA-256 verifier (RFC 5802/7677) for `password` (ASCII, so SASLprep is the identity). */
function scramVerifier(password: string): string {
  const salt = randomBytes(16);
  const iterations = 4096;
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const storedKey = createHash('sha256').update(createHmac('sha256', salted).update('Client Key').digest()).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

function loginFailure(owner: string, role: string, cause: unknown): FwFailure {
  return new FwFailure(
    'database_role',
    `${owner} could not set up the request login role ${role}: ${(cause as Error).message}. Requests would otherwise run on the owner's session, where SQL in a handler could leave row-level security.`,
    {
      suggestions: [
        `Connect as a role with CREATEROLE (or a superuser), or as a superuser run: CREATE ROLE "${role}" LOGIN NOINHERIT; GRANT "${APP_ROLE}" TO "${role}"; GRANT "${role}" TO "${owner}";`,
      ],
    },
  );
}
