/**
 * The request identity that row-level security reads, made unforgeable by SQL that runs as the request
 * role (an SQL-injection bug in a handler, say) — in this transaction, a later one, or another session.
 *
 * **The claim.** fw opens every request transaction with `_fw.claim(kind, tenant, user, role, proof)`,
 * whose arguments travel as bound parameters (never in statement text, so `pg_stat_activity` and the
 * server log's statement lines never show them). `proof` is an HMAC-SHA256, computed in Node with a key
 * only the owner can read (`_fw.secrets`), over the identity and **the transaction it is for**: the
 * server session (backend pid and start time) and the session's local transaction number (the `lxid`
 * of its virtual transaction id, which PostgreSQL never reuses within a session). The claim is a
 * SECURITY DEFINER function: it recomputes the HMAC for the transaction it runs in, refuses a mismatch,
 * and records the verified identity as transaction-local settings plus a tag (an HMAC over them, the
 * backend and the transaction's start) that only it can make. A proof seen anywhere — another session,
 * a log with bound parameters, an earlier transaction of the same session — names a transaction that
 * is over: it is worthless in any other.
 *
 * Node knows the next transaction's number without asking: each claim answers its own, and fw counts
 * the transactions it starts on its connection (request-transaction.ts). Behind a transaction pooler the
 * session is unknown until the transaction has begun, so fw asks first (`_fw.request_session()`) and
 * proves in the next round trip.
 *
 * **The checks.** `_fw.tenant_id()`, `_fw.user_id()`, `_fw.role()` and `_fw.verified()` — what the
 * policies call — recompute the tag: settings changed inside the transaction are refused (42501), and
 * a transaction without a claim has no identity at all (NULL: a tenant table shows nothing; writes to
 * app and fw tables are refused, see db/ddl.ts).
 *
 * On PGlite there is one superuser session for everything, so nothing here can hold against handler SQL
 * (`reset role` gives it all); the functions exist with the same names, set the identity without a
 * proof, and check nothing but its presence (docs/security.md).
 */
import { createHash, createHmac } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { APP_ROLE } from './app-role.ts';
import { FW_SCHEMA, SECRETS_TABLE } from './secrets.ts';

/** The secret the proofs are keyed with (`_fw.secrets`). */
export const IDENTITY_SECRET = 'request.identity';
const PADS_SECRET = 'request.identity.pads';

/** The server session a request connection talks to. */
export interface RequestSession {
  pid: number;
  /** `backend_start` in microseconds since the epoch: with the pid, unique per session for ever. */
  startedUs: string;
}

/** The transaction a proof is made for: its session and the session's local transaction number. */
export interface ProofTarget extends RequestSession {
  lxid: bigint;
}

export interface Identity {
  kind: 'anonymous' | 'user' | 'system';
  tenantId: string | null;
  userId: string | null;
  role: string | null;
}

/** SQLSTATE of a claim whose proof was made for another transaction; DETAIL is `pid/startedUs/lxid` of this one. */
export const PROOF_MISMATCH = 'FW001';
/** SQLSTATE of a second claim in one transaction. */
export const ALREADY_CLAIMED = 'FW002';

/** The `proof` argument of `_fw.claim` for `identity` in transaction `target`: the HMAC the SQL side recomputes. */
export function identityProof(key: Buffer, target: ProofTarget, identity: Identity): string {
  const fields = [String(target.pid), target.startedUs, target.lxid.toString(), ...claimFields(identity)];
  return createHmac('sha256', key).update(hexJoined(fields)).digest('hex');
}

/** The claim's identity fields, in the order both sides hash them. */
export function claimFields(identity: Identity): [string, string, string, string] {
  return [identity.kind, identity.tenantId ?? '', identity.userId ?? '', identity.role ?? ''];
}

/** Fields hex-encoded and joined: no value can contain the separator, so no two field lists share a message. */
function hexJoined(fields: readonly string[]): string {
  return fields.map((field) => Buffer.from(field, 'utf8').toString('hex')).join('|');
}

/** Parses the DETAIL of a {@link PROOF_MISMATCH} error: the transaction the claim ran in. */
export function mismatchTarget(detail: unknown): ProofTarget | undefined {
  const match = typeof detail === 'string' ? /^(\d+)\/(\d+)\/(\d+)$/.exec(detail) : null;
  return match ? { pid: Number(match[1]), startedUs: match[2]!, lxid: BigInt(match[3]!) } : undefined;
}

/**
 * Stores HMAC's inner and outer padded keys (one row, 128 bytes), so SQL computes HMAC-SHA256 with the
 * built-in `sha256()` alone (no pgcrypto): HMAC(k, m) = H((k ⊕ opad) ‖ H((k ⊕ ipad) ‖ m)).
 */
export async function storeIdentityPads(admin: Kysely<any>, key: Buffer): Promise<void> {
  const block = Buffer.alloc(64);
  key.copy(block);
  const pads = Buffer.concat([Buffer.from(block.map((byte) => byte ^ 0x36)), Buffer.from(block.map((byte) => byte ^ 0x5c))]);
  await sql`insert into ${sql.table(`${FW_SCHEMA}.${SECRETS_TABLE}`)} as s (name, value) values (${PADS_SECRET}, ${pads})
    on conflict (name) do update set value = excluded.value where s.value <> excluded.value`.execute(admin);
}

const hex = (expression: string) => `pg_catalog.encode(pg_catalog.convert_to(${expression}, 'UTF8'), 'hex')`;
const setting = (name: string) => `coalesce(pg_catalog.current_setting('${name}', true), '')`;
const IDENTITY_SETTINGS = ['fw.kind', 'fw.tenant_id', 'fw.user_id', 'fw.role'] as const;
/** The four identity settings, hex-joined: what the tag covers. */
const settingsClaim = `concat_ws('|', ${IDENTITY_SETTINGS.map((name) => hex(setting(name))).join(', ')})`;
const readPads = `select value into v_pads from "${FW_SCHEMA}"."${SECRETS_TABLE}" where name = '${PADS_SECRET}'`;
const hmac = (message: string) =>
  `pg_catalog.encode(pg_catalog.sha256(pg_catalog.substr(v_pads, 65, 64) || pg_catalog.sha256(pg_catalog.substr(v_pads, 1, 64) || pg_catalog.convert_to(${message}, 'UTF8'))), 'hex')`;
/**
 * The tag: an HMAC over the settings, the backend and the transaction's start, which no other
 * transaction has. Only the claim can make one (it needs the key); the checks recompute it.
 */
const tag = hmac(`concat_ws('|', 'tag', pg_catalog.pg_backend_pid()::text, (extract(epoch from pg_catalog.transaction_timestamp()) * 1000000)::bigint::text, ${settingsClaim})`);

/** This transaction: pid, backend start (µs) and local transaction number, as the proof covers them. */
const sessionSql = `select a.pid, (extract(epoch from a.backend_start) * 1000000)::bigint::text,
      pg_catalog.split_part(l.virtualtransaction, '/', 2)::bigint
    from pg_catalog.pg_stat_get_activity(pg_catalog.pg_backend_pid()) a,
      pg_catalog.pg_locks l
    where l.locktype = 'virtualxid' and l.pid = a.pid and l.virtualxid = l.virtualtransaction and l.granted`;

const claimPostgres = `create or replace function "${FW_SCHEMA}"."claim"(p_kind text, p_tenant text, p_user text, p_role text, p_proof text)
  returns bigint language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $fw$
declare
  v_pads bytea;
  v_pid integer;
  v_started text;
  v_lxid bigint;
begin
  ${readPads};
  if v_pads is null or octet_length(v_pads) <> 128 then
    raise exception 'fw: the request identity key is missing' using errcode = '42501';
  end if;
  if ${setting('fw.identity_verified')} <> '' and ${tag} = ${setting('fw.identity_verified')} then
    raise exception 'fw: this transaction already has a request identity' using errcode = '${ALREADY_CLAIMED}';
  end if;
  ${sessionSql.replace(/\n {4}from /, '\n    into v_pid, v_started, v_lxid\n    from ')};
  if v_lxid is null or p_proof is null or ${hmac(`concat_ws('|', ${hex('v_pid::text')}, ${hex('v_started')}, ${hex('v_lxid::text')}, ${['p_kind', 'p_tenant', 'p_user', 'p_role'].map((p) => hex(`coalesce(${p}, '')`)).join(', ')})`)} <> p_proof then
    raise exception 'fw: the request identity proof was not made for this transaction' using errcode = '${PROOF_MISMATCH}',
      detail = concat_ws('/', v_pid, v_started, v_lxid);
  end if;
  perform pg_catalog.set_config('fw.kind', coalesce(p_kind, ''), true), pg_catalog.set_config('fw.tenant_id', coalesce(p_tenant, ''), true),
    pg_catalog.set_config('fw.user_id', coalesce(p_user, ''), true), pg_catalog.set_config('fw.role', coalesce(p_role, ''), true);
  perform pg_catalog.set_config('fw.identity_verified', ${tag}, true);
  -- What an earlier request's SQL left that even a rollback keeps: session locks, prepared statements.
  perform pg_catalog.pg_advisory_unlock_all();
  execute 'deallocate all';
  return v_lxid;
end
$fw$`;

/** PGlite: one superuser session, nothing to prove against (see the module comment). */
const claimPglite = `create or replace function "${FW_SCHEMA}"."claim"(p_kind text, p_tenant text, p_user text, p_role text, p_proof text)
  returns bigint language plpgsql volatile as $fw$
begin
  if ${setting('fw.identity_verified')} <> '' then
    raise exception 'fw: this transaction already has a request identity' using errcode = '${ALREADY_CLAIMED}';
  end if;
  perform pg_catalog.set_config('fw.kind', coalesce(p_kind, ''), true), pg_catalog.set_config('fw.tenant_id', coalesce(p_tenant, ''), true),
    pg_catalog.set_config('fw.user_id', coalesce(p_user, ''), true), pg_catalog.set_config('fw.role', coalesce(p_role, ''), true),
    pg_catalog.set_config('fw.identity_verified', 'pglite', true);
  return 0;
end
$fw$`;

const requestSessionFunction = `create or replace function "${FW_SCHEMA}"."request_session"(out pid integer, out started_us text, out lxid bigint)
  language sql volatile security definer set search_path = pg_catalog, pg_temp as $fw$
  ${sessionSql}
$fw$`;

/**
 * `_fw.verified()` and the verified identity values. A transaction with a verified identity answers
 * `value`; one without any identity answers `none` (NULL: nothing of a tenant is visible, nothing can
 * be written); settings changed after the claim are refused.
 */
function identityFunction(dialect: 'postgres' | 'pglite', name: string, returns: string, value: string, none = 'null'): string {
  const postgres = dialect === 'postgres';
  return `create or replace function "${FW_SCHEMA}"."${name}"() returns ${returns}
  language plpgsql stable ${postgres ? 'security definer ' : ''}set search_path = pg_catalog, pg_temp as $fw$
declare
  v_pads bytea;
begin
  if ${setting('fw.identity_verified')} <> '' then
    ${postgres ? `${readPads};\n    if ${tag} = ${setting('fw.identity_verified')} then` : `if ${setting('fw.identity_verified')} = 'pglite' then`}
      return ${value};
    end if;
  elsif ${IDENTITY_SETTINGS.map((setting_) => `${setting(setting_)} = ''`).join(' and ')} then
    return ${none};
  end if;
  raise exception 'fw: the request identity was changed inside the transaction'
    using errcode = '42501',
      hint = 'fw.kind, fw.tenant_id, fw.user_id and fw.role are set by fw for each request; SQL in a handler cannot change them.';
end
$fw$`;
}

/**
 * Resets what a write's SQL may have left in its session — settings, the role, cursors, temp tables
 * (which would shadow app tables for the next caller), sequence values, LISTENs, session locks and
 * prepared statements — in the transaction, before its COMMIT: behind a transaction pooler nothing
 * after the COMMIT is sure to reach the same session. A read needs none of it: its ROLLBACK undoes
 * everything but session locks and prepared statements, which the next claim drops. SECURITY INVOKER
 * with no SET clause and every name qualified, so that whatever the session's settings, it resets them.
 */
const endRequestPostgres = `create or replace function "${FW_SCHEMA}"."end_request"() returns void
  language plpgsql volatile as $fw$
begin
  execute 'reset all';
  execute 'reset session authorization';
  execute 'close all';
  execute 'discard temp';
  execute 'discard sequences';
  execute 'unlisten *';
  execute 'deallocate all';
  perform pg_catalog.pg_advisory_unlock_all();
end
$fw$`;

/** PGlite: its one session is everyone's (the owner's work, LISTEN): nothing to reset, and nothing may be. */
const endRequestPglite = `create or replace function "${FW_SCHEMA}"."end_request"() returns void
  language sql volatile as $fw$ select $fw$`;

/** The SQL functions claims, policies and apps use. */
export function identityFunctionsSql(dialect: 'postgres' | 'pglite', loginRole?: string): string[] {
  const app = `"${APP_ROLE}"`;
  const callers = [app, ...(loginRole ? [`"${loginRole}"`] : [])].join(', ');
  const reads = [
    identityFunction(dialect, 'verified', 'boolean', 'true', 'false'),
    identityFunction(dialect, 'tenant_id', 'uuid', `nullif(${setting('fw.tenant_id')}, '')::uuid`),
    identityFunction(dialect, 'user_id', 'text', `nullif(${setting('fw.user_id')}, '')`),
    identityFunction(dialect, 'role', 'text', `nullif(${setting('fw.role')}, '')`),
    identityFunction(dialect, 'kind', 'text', `nullif(${setting('fw.kind')}, '')`),
  ];
  return [
    `drop function if exists "${FW_SCHEMA}"."identity_verified"()`,
    `drop function if exists "${FW_SCHEMA}"."end_request"(boolean)`,
    dialect === 'postgres' ? claimPostgres : claimPglite,
    ...(dialect === 'postgres' ? [requestSessionFunction] : []),
    dialect === 'postgres' ? endRequestPostgres : endRequestPglite,
    ...reads,
    `grant usage on schema "${FW_SCHEMA}" to ${callers}`,
    ...['claim(text, text, text, text, text)', 'end_request()', ...(dialect === 'postgres' ? ['request_session()'] : [])].flatMap((signature) => [
      `revoke all on function "${FW_SCHEMA}".${signature} from public`,
      `grant execute on function "${FW_SCHEMA}".${signature} to ${callers}`,
    ]),
    ...['verified', 'tenant_id', 'user_id', 'role', 'kind'].flatMap((name) => [
      `revoke all on function "${FW_SCHEMA}"."${name}"() from public`,
      `grant execute on function "${FW_SCHEMA}"."${name}"() to ${app}`,
    ]),
  ];
}

/** The version of the functions, kept as `_fw.claim`'s comment: replaced only when it differs. */
export function identityFunctionsMarker(dialect: 'postgres' | 'pglite', loginRole?: string): string {
  return `fw:identity:${createHash('sha256').update(identityFunctionsSql(dialect, loginRole).join('\n')).digest('hex').slice(0, 16)}`;
}
