/**
 * The outbox worker's statements, run as the owner (`db.admin`): the app role may only insert into
 * `_fw_outbox`. Every statement that ends a delivery is fenced by `lease_owner`, so a worker whose
 * lease expired and was taken over by another cannot overwrite that worker's outcome.
 */
import { type Kysely, sql } from 'kysely';
import type { OutboxRow } from '../db/outbox.ts';

interface RawRow {
  id: string | number;
  event: string;
  payload: unknown;
  tenant_id: string | null;
  user_id: string | null;
  trace_id: string | null;
  caller_kind: string | null;
  caller_role: string | null;
  attempts: number;
  idempotency_key: string;
}

const interval = (ms: number) => sql`(${ms}::double precision * interval '1 millisecond')`;

/**
 * Claims up to `limit` due rows for `owner` for `leaseMs`, oldest first, in one statement. A row is
 * due when it is pending, its `available_at` has come (by the database's time, which every process
 * shares, or by an injected clock's `now` that tests move; leases always keep the database's time), and nobody holds a live lease on it — so a row
 * whose worker died mid-delivery comes back once its lease expires. `SKIP LOCKED` lets concurrent
 * claimers pass each other's rows instead of waiting or taking them twice. The claim counts as an
 * attempt (a delivery that crashes its worker every time still ends as dead).
 */
export async function claimRows(admin: Kysely<any>, owner: string, limit: number, leaseMs: number, now: Date | null): Promise<OutboxRow[]> {
  const result = await sql<RawRow>`
    update "public"."_fw_outbox" as o set
      lease_owner = ${owner},
      lease_until = now() + ${interval(leaseMs)},
      attempts = o.attempts + 1,
      last_error = case when o.lease_owner is null then o.last_error
        else left('The lease of ' || o.lease_owner || ' expired before attempt ' || o.attempts || ' finished.', 1000) end
    where o.id in (
      select id from "public"."_fw_outbox"
      where status = 'pending' and available_at <= ${now === null ? sql`now()` : sql`${now.toISOString()}::timestamptz`} and (lease_until is null or lease_until < now())
      order by id
      limit ${limit}
      for update skip locked)
    returning o.id, o.event, o.payload, o.tenant_id, o.user_id, o.trace_id, o.caller_kind, o.caller_role, o.attempts, o.idempotency_key`.execute(admin);
  return result.rows
    .map((row) => ({
      id: String(row.id),
      event: row.event,
      payload: row.payload,
      tenantId: row.tenant_id,
      userId: row.user_id,
      traceId: row.trace_id,
      callerKind: row.caller_kind,
      callerRole: row.caller_role,
      leaseOwner: owner,
      attempts: Number(row.attempts),
      idempotencyKey: row.idempotency_key,
    }))
    .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
}

/** Extends the leases `owner` still holds on `ids` (rows whose delivery is still running). */
export async function renewLeases(admin: Kysely<any>, owner: string, ids: readonly string[], leaseMs: number): Promise<void> {
  if (ids.length === 0) return;
  await sql`
    update "public"."_fw_outbox" set lease_until = now() + ${interval(leaseMs)}
    where id = any(${ids}::bigint[]) and lease_owner = ${owner} and status = 'pending'`.execute(admin);
}

/** Gives rows back at once (a worker stopping), for any worker to claim again. */
export async function releaseLeases(admin: Kysely<any>, owner: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`
    update "public"."_fw_outbox" set lease_owner = null, lease_until = null
    where id = any(${ids}::bigint[]) and lease_owner = ${owner} and status = 'pending'`.execute(admin);
}

/** How a delivery ended, as written to its row. */
export type DeliveryOutcome =
  | { kind: 'delivered'; note?: string }
  | { kind: 'retry'; error: string; delayMs: number; availableAt: Date | null }
  | { kind: 'wait'; availableAt: Date }
  | { kind: 'dead'; error: string };

/**
 * Writes the outcome of `owner`'s delivery of row `id`. Returns false when `owner` no longer holds
 * the row (its lease expired and another worker claimed it): the outcome is then dropped.
 */
export async function finishDelivery(admin: Kysely<any>, owner: string, id: string, outcome: DeliveryOutcome): Promise<boolean> {
  const set =
    outcome.kind === 'delivered'
      ? sql`status = 'delivered', delivered_at = now(), last_error = ${outcome.note ?? null}`
      : outcome.kind === 'retry'
        ? sql`available_at = ${outcome.availableAt ? sql`${outcome.availableAt.toISOString()}::timestamptz` : sql`now() + ${interval(outcome.delayMs)}`}, last_error = ${outcome.error}`
        : outcome.kind === 'wait'
          ? // Waiting is not a failed attempt: the claim's count is given back.
            sql`available_at = ${outcome.availableAt.toISOString()}::timestamptz, attempts = greatest(attempts - 1, 0), last_error = null`
          : sql`status = 'dead', dead_at = now(), last_error = ${outcome.error}`;
  const result = await sql`
    update "public"."_fw_outbox" set ${set}, lease_owner = null, lease_until = null
    where id = ${id}::bigint and lease_owner = ${owner} and status = 'pending'
    returning id`.execute(admin);
  return result.rows.length > 0;
}
