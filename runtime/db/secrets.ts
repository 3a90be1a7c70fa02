/**
 * Secrets that every fw process on one database must share (the request-identity key, the login
 * password of the request role, keys that make values opaque to clients), kept in the database itself
 * so that nothing but `DATABASE_URL` has to be configured. The table is readable by the owner only:
 * the request role, and so any SQL a handler runs, can neither read nor replace a secret.
 *
 * A secret is made once, on first use, by whichever process gets there first; the others read it.
 *
 * @example
 *   const key = await databaseSecret(db.admin, 'live.revision');   // 32 random bytes, stable per database
 */
import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';

/**
 * fw's private schema: what request identities rest on lives outside `public`, so an app's own
 * schema work (even `drop schema public cascade`) leaves it alone. The request role may use the
 * schema's functions, never its tables.
 */
export const FW_SCHEMA = '_fw';
export const SECRETS_TABLE = 'secrets';

/**
 * Creates the secrets table if it is missing. Run by `createDatabase` under its setup lock, so it
 * exists before anything asks for a secret (also for `fw start` without `--migrate`).
 */
export const secretsTableSql: readonly string[] = [
  `create schema if not exists "${FW_SCHEMA}"`,
  `revoke all on schema "${FW_SCHEMA}" from public`,
  `create table if not exists "${FW_SCHEMA}"."${SECRETS_TABLE}" (
    name text primary key,
    value bytea not null,
    created_at timestamptz not null default now()
  )`,
  `revoke all on "${FW_SCHEMA}"."${SECRETS_TABLE}" from public`,
];

/**
 * The key that signs the live log rows the capture trigger sends in its notifications (db/ddl.ts,
 * `_fw_live_record`): two 64-byte keys, inner then outer.
 */
export const LIVE_NOTICE_SECRET = 'live.notice';
export const LIVE_NOTICE_SECRET_BYTES = 128;

/** The secret called `name` (`bytes` random bytes, 32 unless said), made on first use. Runs as the owner (`db.admin`). */
export async function databaseSecret(admin: Kysely<any>, name: string, bytes = 32): Promise<Buffer> {
  // A second attempt covers the race where another process inserted the secret after this
  // statement's snapshot was taken: its insert then does nothing and its select sees nothing.
  for (let attempt = 0; attempt < 3; attempt++) {
    const value = await readOrMake(admin, name, bytes);
    if (value) return Buffer.from(value);
  }
  throw new Error(`fw: the database secret ${name} could not be read.`);
}

async function readOrMake(admin: Kysely<any>, name: string, bytes: number): Promise<Uint8Array | undefined> {
  const row = await sql<{ value: Uint8Array }>`
    with made as (
      insert into "_fw"."secrets" (name, value) values (${name}, ${randomBytes(bytes)})
      on conflict (name) do nothing
      returning value
    )
    select value from made
    union all
    select value from "_fw"."secrets" where name = ${name}
    limit 1`.execute(admin);
  return row.rows[0]?.value;
}
