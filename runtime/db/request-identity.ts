/**
 * The request identity that row-level security reads, made unforgeable by SQL that runs as the request
 * role (an SQL-injection bug in a handler, say) — in this transaction, a later one, or another session.
 *
 * **The claim.** fw opens every request transaction with `_fw.claim(kind, tenant, user, role, proof)`,
 * whose arguments travel as bound parameters (never in statement text, so `pg_stat_activity` and the
 * server log's statement lines never show them). `proof` is an HMAC-SHA256, computed in Node with a key
 * only the owner can read (`_fw.secrets`), over the identity and **the transaction it is for**: the
 * session's claim counter and the value the counter gives this transaction. The claim is a SECURITY
 * DEFINER function: it recomputes the HMAC for the value the counter is at, refuses a mismatch, draws
 * the value (so it is never accepted again), and records the verified identity as transaction-local
 * settings plus a tag (an HMAC over them, the backend and the transaction's start) that only it can
 * make. A proof seen anywhere — another session, a log with bound parameters, an earlier transaction
 * of the same session — names a counter value that is spent: it is worthless in any other transaction.
 *
 * **The counter** is a temporary sequence, `pg_temp.fw_claims`, that `_fw.open_session()` makes once
 * per server session, owned by the owner: SQL of the request roles can neither draw from it, set it nor
 * alter it (no privilege), and one made in its place would not be the owner's. Its start — the clock in
 * microseconds when it was made, above anything an earlier counter of the session gave — and the backend
 * pid identify it, so a proof for one counter means nothing to another. `nextval` on a temporary
 * sequence is allowed in a read-only transaction and survives a rollback, so reads spend their value
 * too. Node knows the next value without asking (each claim answers its own; only claims draw), so the
 * proof travels with BEGIN in one round trip; behind a transaction pooler, where the next transaction's
 * session is unknown, fw asks first (`_fw.request_session()`). (The session's local transaction number
 * would do the same, but PostgreSQL shows it only through `pg_locks`, whose read scans the whole lock
 * table and costs far more than the request under load.)
 *
 * **The checks.** `_fw.tenant_id()`, `_fw.user_id()`, `_fw.role()`, `_fw.kind()` and `_fw.verified()` —
 * what the policies call — recompute the tag: settings changed inside the transaction are refused
 * (42501), and a transaction without a claim has no identity at all (NULL: a tenant table shows nothing;
 * writes to app and fw tables are refused, see db/ddl.ts).
 *
 * On PGlite there is one superuser session for everything, so nothing here can hold against handler SQL
 * (`reset role` gives it all); the functions exist with the same names, set the identity without a
 * proof, and check nothing but its presence (docs/security.md).
 */
import { createHash, createHmac, type KeyObject } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { APP_ROLE } from './app-role.ts';
import { FW_SCHEMA, SECRETS_TABLE } from './secrets.ts';

/** The secret the proofs are keyed with (`_fw.secrets`). */
export const IDENTITY_SECRET = 'request.identity';
const PADS_SECRET = 'request.identity.pads';

/** A server session's claim counter: the backend and the counter's start value. */
export interface RequestSession {
  pid: number;
  /** `pg_temp.fw_claims`'s start: with the pid, it names this counter for ever. */
  counter: string;
}

/** The transaction a proof is made for: its session's counter and the value the counter gives it. */
export interface ProofTarget extends RequestSession {
  claim: bigint;
}

export interface Identity {
  kind: 'anonymous' | 'user' | 'system';
  tenantId: string | null;
  userId: string | null;
  role: string | null;
}

/** SQLSTATE of a claim whose proof was made for another transaction; DETAIL is `pid/counter/claim` of this one. */
export const PROOF_MISMATCH = 'FW001';
/** SQLSTATE of a second claim in one transaction. */
export const ALREADY_CLAIMED = 'FW002';
/** SQLSTATE of a claim in a session without its counter (never opened, or dropped by `discard temp`). */
export const NO_COUNTER = 'FW003';

/**
 * The `proof` argument of `_fw.claim` for `identity` in transaction `target`: the HMAC the SQL side
 * recomputes. Pass the key as a KeyObject (`createSecretKey`) on a hot path: a Buffer is imported anew
 * on every call, which costs several times the HMAC itself.
 */
export function identityProof(key: KeyObject | Buffer, target: ProofTarget, identity: Identity): string {
  const fields = [String(target.pid), target.counter, target.claim.toString(), ...claimFields(identity)];
  return createHmac('sha256', key).update(hexJoined(fields)).digest('hex');
}

/**
 * The proof that one of fw's own statements in a request transaction — adding outbox rows, settling
 * or cancelling a scheduled call — was asked for by fw, for `message` (what the statement does) in
 * transaction `target`: the HMAC `_fw.check_proof(purpose, message, proof)` recomputes. Handler SQL
 * in the same transaction cannot make one (it has no key) and never sees fw's (a bound parameter), and
 * one seen later is worthless: its claim value is spent. The first field keeps proofs of different
 * purposes apart, and apart from claims (whose first field is a pid).
 */
export function transactionProof(key: KeyObject | Buffer, target: ProofTarget, purpose: string, message: string): string {
  const fields = [`proof:${purpose}`, String(target.pid), target.counter, target.claim.toString(), message];
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

/** Parses the DETAIL of a {@link PROOF_MISMATCH} error: the counter the claim found, and its next value. */
export function mismatchTarget(detail: unknown): ProofTarget | undefined {
  const match = typeof detail === 'string' ? /^(\d+)\/(\d+)\/(\d+)$/.exec(detail) : null;
  return match ? { pid: Number(match[1]), counter: match[2]!, claim: BigInt(match[3]!) } : undefined;
}

/** Reads a row of `_fw.open_session()` / `_fw.request_session()`: the counter, or undefined when there is none. */
export function sessionRow(row: unknown): ProofTarget | undefined {
  const { pid, counter, next } = (row ?? {}) as { pid?: number; counter?: string | null; next?: string | null };
  return pid !== undefined && counter != null && next != null ? { pid, counter: String(counter), claim: BigInt(next) } : undefined;
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

/** The session's claim counter, if it is the owner's (SECURITY DEFINER: `current_user` is the owner). */
const COUNTER = 'fw_claims';
const findCounter = `v_counter := pg_catalog.to_regclass('pg_temp.${COUNTER}');
  if v_counter is not null and not exists (select from pg_catalog.pg_class c
      where c.oid = v_counter and c.relkind = 'S' and c.relowner = current_user::pg_catalog.regrole) then
    v_counter := null;
  end if`;
/** Its start and the value the next draw gives (the start before the first draw). */
const counterState = `select s.seqstart, coalesce(pg_catalog.pg_sequence_last_value(v_counter) + 1, s.seqstart)
    into v_start, v_next from pg_catalog.pg_sequence s where s.seqrelid = v_counter`;

const claimPostgres = `create or replace function "${FW_SCHEMA}"."claim"(p_kind text, p_tenant text, p_user text, p_role text, p_proof text)
  returns bigint language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $fw$
declare
  v_pads bytea;
  v_counter regclass;
  v_start bigint;
  v_next bigint;
begin
  ${readPads};
  if v_pads is null or octet_length(v_pads) <> 128 then
    raise exception 'fw: the request identity key is missing' using errcode = '42501';
  end if;
  if ${setting('fw.identity_verified')} <> '' and ${tag} = ${setting('fw.identity_verified')} then
    raise exception 'fw: this transaction already has a request identity' using errcode = '${ALREADY_CLAIMED}';
  end if;
  ${findCounter};
  if v_counter is null then
    raise exception 'fw: this session has no claim counter' using errcode = '${NO_COUNTER}', hint = 'fw opens it with _fw.open_session().';
  end if;
  ${counterState};
  if p_proof is null or ${hmac(`concat_ws('|', ${hex('pg_catalog.pg_backend_pid()::text')}, ${hex('v_start::text')}, ${hex('v_next::text')}, ${['p_kind', 'p_tenant', 'p_user', 'p_role'].map((p) => hex(`coalesce(${p}, '')`)).join(', ')})`)} <> p_proof then
    raise exception 'fw: the request identity proof was not made for this transaction' using errcode = '${PROOF_MISMATCH}',
      detail = concat_ws('/', pg_catalog.pg_backend_pid(), v_start, v_next);
  end if;
  -- Spent: no later claim accepts this proof.
  if pg_catalog.nextval(v_counter) <> v_next then
    raise exception 'fw: the claim counter moved during the claim' using errcode = '${PROOF_MISMATCH}';
  end if;
  perform pg_catalog.set_config('fw.kind', coalesce(p_kind, ''), true), pg_catalog.set_config('fw.tenant_id', coalesce(p_tenant, ''), true),
    pg_catalog.set_config('fw.user_id', coalesce(p_user, ''), true), pg_catalog.set_config('fw.role', coalesce(p_role, ''), true);
  perform pg_catalog.set_config('fw.identity_verified', ${tag}, true);
  -- What an earlier request's SQL left that even a rollback keeps: session locks, prepared statements.
  perform pg_catalog.pg_advisory_unlock_all();
  if exists (select from pg_catalog.pg_prepared_statements) then
    execute 'deallocate all';
  end if;
  return v_next;
end
$fw$`;

/**
 * Makes the session's claim counter when it has none (dropping anything of that name that is not the
 * owner's) and answers its state. Run in a transaction that commits: made in a read's transaction, the
 * counter would go with its rollback. With \`p_renew\` it first empties the temp schema (\`discard
 * temp\`: what a write's SQL made there) and makes the counter again. A new counter starts at the clock
 * in microseconds, and above the last value of the one it replaces.
 */
const openSessionFunction = `create or replace function "${FW_SCHEMA}"."open_session"(p_renew boolean default false, out pid integer, out counter bigint, out next bigint)
  language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $fw$
declare
  v_counter regclass;
  v_start bigint;
  v_next bigint;
  v_after bigint := 0;
begin
  ${findCounter};
  if p_renew then
    if v_counter is not null then
      v_after := coalesce(pg_catalog.pg_sequence_last_value(v_counter), 0);
    end if;
    execute 'discard temp';
    v_counter := null;
  end if;
  if v_counter is null then
    if pg_catalog.to_regclass('pg_temp.${COUNTER}') is not null then
      execute 'discard temp';
    end if;
    execute pg_catalog.format('create temporary sequence ${COUNTER} start with %s no cycle',
      greatest((extract(epoch from pg_catalog.clock_timestamp()) * 1000000)::bigint, v_after + 1));
    execute 'revoke all on sequence pg_temp.${COUNTER} from public';
    ${findCounter.replace(/\n/g, '\n    ')};
  end if;
  ${counterState};
  pid := pg_catalog.pg_backend_pid();
  counter := v_start;
  next := v_next;
end
$fw$`;

/** The session's counter and its next value, or NULLs when it has none (behind a pooler, asked inside the transaction). */
const requestSessionFunction = `create or replace function "${FW_SCHEMA}"."request_session"(out pid integer, out counter bigint, out next bigint)
  language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $fw$
declare
  v_counter regclass;
  v_start bigint;
  v_next bigint;
begin
  ${findCounter};
  pid := pg_catalog.pg_backend_pid();
  if v_counter is not null then
    ${counterState};
    counter := v_start;
    next := v_next;
  end if;
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

/**
 * `_fw.check_proof(purpose, message, proof)`: raises 42501 unless this transaction has a verified
 * identity and `proof` is fw's for `message` in it (see {@link transactionProof}): the transaction is
 * named by its session's counter and the value its claim drew — the counter's last value, since only
 * claims draw and one claim is allowed per transaction. Called by fw's SECURITY DEFINER functions that
 * write durable work (db/ddl.ts, `_fw.enqueue`), never by the request roles themselves.
 */
const checkProofPostgres = `create or replace function "${FW_SCHEMA}"."check_proof"(p_purpose text, p_message text, p_proof text)
  returns void language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $fw$
declare
  v_pads bytea;
  v_counter regclass;
  v_start bigint;
  v_claim bigint;
begin
  if not coalesce("${FW_SCHEMA}"."verified"(), false) then
    raise exception 'fw: % needs a verified request identity', p_purpose using errcode = '42501';
  end if;
  ${readPads};
  ${findCounter};
  if v_counter is not null then
    select s.seqstart, pg_catalog.pg_sequence_last_value(v_counter) into v_start, v_claim from pg_catalog.pg_sequence s where s.seqrelid = v_counter;
  end if;
  if v_pads is null or v_claim is null or p_proof is null
      or ${hmac(`concat_ws('|', ${hex(`'proof:' || p_purpose`)}, ${hex('pg_catalog.pg_backend_pid()::text')}, ${hex('v_start::text')}, ${hex('v_claim::text')}, ${hex("coalesce(p_message, '')")})`)} <> p_proof then
    raise exception 'fw: % was not asked for by fw in this transaction', p_purpose using errcode = '42501',
      hint = 'Outbox rows, scheduled calls and workflow starts are written by fw (ctx.emit, ctx.scheduler, ctx.startWorkflow, ctx.signal), never by SQL.';
  end if;
end
$fw$`;

/** PGlite: one superuser session, nothing to prove against; an identity is still required. */
const checkProofPglite = `create or replace function "${FW_SCHEMA}"."check_proof"(p_purpose text, p_message text, p_proof text)
  returns void language plpgsql volatile as $fw$
begin
  if not coalesce("${FW_SCHEMA}"."verified"(), false) then
    raise exception 'fw: % needs a verified request identity', p_purpose using errcode = '42501';
  end if;
end
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
 * Resets what a write's SQL may have left in its session — settings, the role, cursors, temp objects
 * (a temp table would shadow an app table for the next caller), sequence values, LISTENs, session locks
 * and prepared statements — in the transaction, before its COMMIT: behind a transaction pooler nothing
 * after the COMMIT is sure to reach the same session. A read needs none of it: its ROLLBACK undoes
 * everything but session locks and prepared statements, which the next claim drops. SECURITY INVOKER
 * with no SET clause and every name qualified, so that whatever the session's settings, it resets them.
 *
 * The temp schema is emptied only when it holds anything but the claim counter; the counter is then
 * made again, above its last value, and its new start answered (NULL: unchanged), so fw proves the next
 * transaction for it.
 */
const endRequestPostgres = `create or replace function "${FW_SCHEMA}"."end_request"() returns bigint
  language plpgsql volatile as $fw$
declare
  v_counter regclass := pg_catalog.to_regclass('pg_temp.${COUNTER}');
begin
  execute 'reset all';
  execute 'reset session authorization';
  execute 'close all';
  execute 'discard sequences';
  execute 'unlisten *';
  execute 'deallocate all';
  perform pg_catalog.pg_advisory_unlock_all();
  -- Every object of the temp schema depends on it (pg_depend's index answers; the catalogs would be scanned).
  if v_counter is null or exists (select from pg_catalog.pg_depend d
      where d.refclassid operator(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
        and d.refobjid operator(pg_catalog.=) pg_catalog.pg_my_temp_schema() and d.objid operator(pg_catalog.<>) v_counter::pg_catalog.oid) then
    return (select o.counter from "${FW_SCHEMA}"."open_session"(true) o);
  end if;
  return null;
end
$fw$`;

/** PGlite: its one session is everyone's (the owner's work, LISTEN): nothing to reset, and nothing may be. */
const endRequestPglite = `create or replace function "${FW_SCHEMA}"."end_request"() returns bigint
  language sql volatile as $fw$ select null::bigint $fw$`;

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
    `drop function if exists "${FW_SCHEMA}"."end_request"()`,
    `drop function if exists "${FW_SCHEMA}"."request_session"()`,
    `drop function if exists "${FW_SCHEMA}"."open_session"(boolean)`,
    dialect === 'postgres' ? claimPostgres : claimPglite,
    ...(dialect === 'postgres' ? [openSessionFunction, requestSessionFunction] : []),
    dialect === 'postgres' ? endRequestPostgres : endRequestPglite,
    ...reads,
    dialect === 'postgres' ? checkProofPostgres : checkProofPglite,
    // Only fw's own SECURITY DEFINER functions call it (as the owner).
    `revoke all on function "${FW_SCHEMA}".check_proof(text, text, text) from public`,
    `grant usage on schema "${FW_SCHEMA}" to ${callers}`,
    ...['claim(text, text, text, text, text)', 'end_request()', ...(dialect === 'postgres' ? ['open_session(boolean)', 'request_session()'] : [])].flatMap((signature) => [
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
