/**
 * The request identity that row-level security reads, made unforgeable by SQL that runs as the request
 * role (an SQL-injection bug in a handler, say).
 *
 * The tenant, user and role travel as transaction-local settings (`fw.tenant_id`, `fw.user_id`,
 * `fw.role`): any SQL may change a setting, so a policy never trusts one on its own. fw also sets
 * `fw.identity`, an HMAC-SHA256 over the three values and the session it was made for (backend pid and
 * backend start time), keyed by a secret that only the owner can read (`_fw.secrets`). The policies call
 * `_fw.tenant_id()` (a SECURITY DEFINER function owned by the owner), which recomputes the HMAC and
 * refuses the statement when a value was changed. The proof is bound to its session, so one seen in
 * `pg_stat_activity` of another session is worthless, and a handler cannot mint one for another tenant.
 *
 * On PGlite there is one superuser session for everything, so nothing here can hold against handler SQL
 * (`reset role` gives it all); the functions exist with the same names and do not verify (docs/security.md).
 */
import { createHmac } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { createHash } from 'node:crypto';
import { APP_ROLE } from './app-role.ts';
import { FW_SCHEMA, SECRETS_TABLE } from './secrets.ts';

/** The secret the proofs are keyed with (`_fw.secrets`). */
export const IDENTITY_SECRET = 'request.identity';
const IPAD_SECRET = 'request.identity.ipad';
const OPAD_SECRET = 'request.identity.opad';

/** Where a request transaction runs: known once per pooled connection. */
export interface RequestSession {
  pid: string;
  /** `backend_start` in microseconds since the epoch: with the pid, unique per session for ever. */
  startedUs: string;
}

export interface Identity {
  tenantId: string | null;
  userId: string | null;
  role: string | null;
}

/** What a connection asks once, as the login role (which may read its own session's start time). */
export const requestSessionSql = `select pg_backend_pid()::text as pid,
  (extract(epoch from backend_start) * 1000000)::bigint::text as "startedUs"
  from pg_stat_get_activity(pg_backend_pid())`;

/** The `fw.identity` value for `identity` in `session`: the same HMAC the SQL side computes. */
export function identityProof(key: Buffer, session: RequestSession, identity: Identity): string {
  return createHmac('sha256', key).update(identityMessage([session.pid, session.startedUs, identity.tenantId ?? '', identity.userId ?? '', identity.role ?? ''])).digest('hex');
}

/** Fields hex-encoded and joined: no value can contain the separator, so no two identities share a message. */
function identityMessage(fields: readonly string[]): string {
  return fields.map((field) => Buffer.from(field, 'utf8').toString('hex')).join('|');
}

/**
 * Stores HMAC's inner and outer padded keys beside the key, so SQL computes HMAC-SHA256 with the
 * built-in `sha256()` alone (no pgcrypto): HMAC(k, m) = H((k ⊕ opad) ‖ H((k ⊕ ipad) ‖ m)).
 */
export async function storeIdentityPads(admin: Kysely<any>, key: Buffer): Promise<void> {
  const block = Buffer.alloc(64);
  key.copy(block);
  const ipad = Buffer.from(block.map((byte) => byte ^ 0x36));
  const opad = Buffer.from(block.map((byte) => byte ^ 0x5c));
  await sql`insert into ${sql.table(`${FW_SCHEMA}.${SECRETS_TABLE}`)} as s (name, value) values (${IPAD_SECRET}, ${ipad}), (${OPAD_SECRET}, ${opad})
    on conflict (name) do update set value = excluded.value where s.value <> excluded.value`.execute(admin);
}

const hex = (expression: string) => `encode(convert_to(${expression}, 'UTF8'), 'hex')`;
const setting = (name: string) => `coalesce(current_setting('${name}', true), '')`;

/**
 * Verifies `fw.identity` against the settings and this session (PostgreSQL). Reading the session's start
 * time is the costly part (~20 µs), so a verified identity is remembered for the rest of its
 * transaction in `fw.identity_verified`: a tag over the settings, the proof, the pid and the
 * transaction's start, keyed with the secret. A handler can overwrite the tag but cannot make a valid
 * one, and a tag from another transaction never matches.
 */
const verifiedPostgres = `create or replace function "${FW_SCHEMA}"."identity_verified"() returns boolean
  language plpgsql stable security definer set search_path = pg_catalog, pg_temp as $fw$
declare
  v_ipad bytea;
  v_opad bytea;
  v_claim text := concat_ws('|', ${hex(setting('fw.tenant_id'))}, ${hex(setting('fw.user_id'))}, ${hex(setting('fw.role'))});
  v_tag text;
  v_message text;
begin
  select i.value, o.value into v_ipad, v_opad from "${FW_SCHEMA}"."${SECRETS_TABLE}" i, "${FW_SCHEMA}"."${SECRETS_TABLE}" o
    where i.name = '${IPAD_SECRET}' and o.name = '${OPAD_SECRET}';
  if v_ipad is null then
    return false;
  end if;
  v_tag := encode(sha256(v_opad || convert_to(concat_ws('|', 'verified', pg_backend_pid()::text,
    (extract(epoch from transaction_timestamp()) * 1000000)::bigint::text, v_claim, ${setting('fw.identity')}), 'UTF8')), 'hex');
  if v_tag = ${setting('fw.identity_verified')} then
    return true;
  end if;
  select concat_ws('|', ${hex('pg_backend_pid()::text')},
      ${hex(`coalesce((extract(epoch from a.backend_start) * 1000000)::bigint::text, '')`)}, v_claim)
    into v_message from pg_stat_get_activity(pg_backend_pid()) a;
  if v_message is null or encode(sha256(v_opad || sha256(v_ipad || convert_to(v_message, 'UTF8'))), 'hex') <> ${setting('fw.identity')} then
    return false;
  end if;
  perform set_config('fw.identity_verified', v_tag, true);
  return true;
end
$fw$`;

/** PGlite: one superuser session, nothing to verify against (see the module comment). */
const verifiedPglite = `create or replace function "${FW_SCHEMA}"."identity_verified"() returns boolean
  language sql stable as $fw$ select true $fw$`;

/** A verified identity value, or NULL when the transaction has no identity at all (the owner's own work). */
function identityFunction(name: string, returns: string, settingName: string, cast: string): string {
  return `create or replace function "${FW_SCHEMA}"."${name}"() returns ${returns}
  language plpgsql stable security definer set search_path = pg_catalog, pg_temp as $fw$
begin
  if ${setting('fw.tenant_id')} = '' and ${setting('fw.user_id')} = '' and ${setting('fw.role')} = '' then
    return null;
  end if;
  if not "${FW_SCHEMA}"."identity_verified"() then
    raise exception 'fw: the request identity was changed inside the transaction'
      using errcode = '42501',
        hint = 'fw.tenant_id, fw.user_id and fw.role are set by fw for each request; SQL in a handler cannot change them.';
  end if;
  return nullif(${setting(settingName)}, '')${cast};
end
$fw$`;
}

/** The SQL functions policies and apps use: `_fw.tenant_id()`, `_fw.user_id()`, `_fw.role()`. */
export function identityFunctionsSql(dialect: 'postgres' | 'pglite'): string[] {
  const app = `"${APP_ROLE}"`;
  return [
    dialect === 'postgres' ? verifiedPostgres : verifiedPglite,
    identityFunction('tenant_id', 'uuid', 'fw.tenant_id', '::uuid'),
    identityFunction('user_id', 'text', 'fw.user_id', ''),
    identityFunction('role', 'text', 'fw.role', ''),
    `grant usage on schema "${FW_SCHEMA}" to ${app}`,
    `revoke all on function "${FW_SCHEMA}"."identity_verified"() from public`,
    ...['tenant_id', 'user_id', 'role'].flatMap((name) => [
      `revoke all on function "${FW_SCHEMA}"."${name}"() from public`,
      `grant execute on function "${FW_SCHEMA}"."${name}"() to ${app}`,
    ]),
  ];
}

/** The version of the functions, kept as `_fw.tenant_id()`'s comment: replaced only when it differs. */
export function identityFunctionsMarker(dialect: 'postgres' | 'pglite'): string {
  return `fw:identity:${createHash('sha256').update(identityFunctionsSql(dialect).join('\n')).digest('hex').slice(0, 16)}`;
}
