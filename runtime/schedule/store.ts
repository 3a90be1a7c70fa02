/**
 * Scheduled calls as operators see them (`fw schedule`, `GET /_fw/schedule`): `fw.call:` rows of the
 * outbox and the ticks of crons that run in every tenant (`fw.tenants:`), read and cancelled as the
 * owner (`db.admin`).
 */
import { type Kysely, sql } from 'kysely';
import { CRON_KEY_PREFIX, CRON_NOW_KEY_PREFIX } from './cron-ticks.ts';
import { CALL_EVENT_PREFIX, callKey } from './plan.ts';
import { CRON_TENANT_KEY_PREFIX, TENANTS_EVENT_PREFIX } from './tenant-fan-out.ts';

export type CallStatus = 'pending' | 'running' | 'delivered' | 'dead' | 'cancelled';

export interface CallSummary {
  id: string;
  /** The command or action it calls. */
  entry: string;
  /** The cron (src/crons.ts) whose tick (or whose call in one tenant) this is; null for a call a handler scheduled. */
  cron: string | null;
  status: CallStatus;
  runAt: string;
  attempts: number;
  tenantId: string | null;
  userId: string | null;
  traceId: string | null;
  lastError: string | null;
  createdAt: string;
  /** The args it is called with (app data: asked for by the dashboard, not by `fw schedule list`). */
  args?: unknown;
}

interface RawCall {
  idempotency_key: string;
  event: string;
  /** What a fan-out tick calls (its payload's `call`). */
  calls: string | null;
  status: string;
  running: boolean;
  available_at: Date | string;
  attempts: number;
  tenant_id: string | null;
  user_id: string | null;
  trace_id: string | null;
  last_error: string | null;
  created_at: Date | string;
  args?: unknown;
}

const columns = sql`idempotency_key, event, payload->>'call' as calls, status, coalesce(lease_until > now(), false) as running, available_at, attempts, tenant_id, user_id, trace_id, last_error, created_at`;

/** Scheduled calls, soonest first; by default those still to run. */
export async function listCalls(admin: Kysely<any>, options: { status?: string; limit?: number; withArgs?: boolean } = {}): Promise<CallSummary[]> {
  const status = options.status ?? null;
  const result = await sql<RawCall>`
    select ${columns}${options.withArgs ? sql`, payload->'args' as args` : sql``} from "public"."_fw_outbox"
    where (event like ${`${CALL_EVENT_PREFIX}%`} or event like ${`${TENANTS_EVENT_PREFIX}%`})
      and (case when ${status}::text is null then status = 'pending'
                when ${status}::text = 'running' then status = 'pending' and lease_until > now()
                else status = ${status} end)
    order by available_at, id limit ${options.limit ?? 50}`.execute(admin);
  return result.rows.map(summary);
}

/**
 * Cancels a call that has not run: `cancelled` (pending, not running now), or what it is when it ran,
 * is running or was cancelled already. `null` when there is no such call.
 */
export async function cancelCall(admin: Kysely<any>, id: string): Promise<{ id: string; cancelled: boolean; status: CallStatus } | null> {
  const updated = await sql<RawCall>`
    update "public"."_fw_outbox" set status = 'cancelled', dead_at = now(), last_error = 'Cancelled by an operator (fw schedule cancel).'
    where idempotency_key = ${callKey(id)} and event like ${`${CALL_EVENT_PREFIX}%`} and status = 'pending' and (lease_until is null or lease_until < now())
    returning ${columns}`.execute(admin);
  if (updated.rows[0]) return { id, cancelled: true, status: 'cancelled' };
  const found = await sql<RawCall>`select ${columns} from "public"."_fw_outbox" where idempotency_key = ${callKey(id)} and event like ${`${CALL_EVENT_PREFIX}%`}`.execute(admin);
  const row = found.rows[0];
  return row ? { id, cancelled: false, status: summary(row).status } : null;
}

function cronOfKey(key: string): string | null {
  for (const prefix of [CRON_KEY_PREFIX, CRON_TENANT_KEY_PREFIX, CRON_NOW_KEY_PREFIX]) if (key.startsWith(prefix)) return key.slice(prefix.length).split(':')[0]!;
  return null;
}

function summary(row: RawCall): CallSummary {
  return {
    id: row.idempotency_key.slice('call:'.length),
    entry: row.event.startsWith(TENANTS_EVENT_PREFIX) ? (row.calls ?? '') : row.event.slice(CALL_EVENT_PREFIX.length),
    cron: cronOfKey(row.idempotency_key),
    status: row.status === 'pending' && row.running ? 'running' : (row.status as CallStatus),
    runAt: new Date(row.available_at).toISOString(),
    attempts: Number(row.attempts),
    tenantId: row.tenant_id,
    userId: row.user_id,
    traceId: row.trace_id,
    lastError: row.last_error,
    createdAt: new Date(row.created_at).toISOString(),
    ...('args' in row ? { args: row.args ?? null } : {}),
  };
}

/**
 * Makes a waiting call due now (an operator's "run now", fw dev): it runs at the next look of a worker,
 * as the caller who scheduled it. A cron's tick is not moved (that would use up the tick): the dashboard
 * triggers the cron instead. Resolves to `ran` or what the call is when it cannot.
 */
export async function runCallNow(admin: Kysely<any>, id: string): Promise<{ id: string; due: boolean; status: CallStatus } | null> {
  const updated = await sql<RawCall>`
    update "public"."_fw_outbox" set available_at = now()
    where idempotency_key = ${callKey(id)} and event like ${`${CALL_EVENT_PREFIX}%`} and status = 'pending' and (lease_until is null or lease_until < now())
    returning ${columns}`.execute(admin);
  if (updated.rows[0]) return { id, due: true, status: 'pending' };
  const found = await sql<RawCall>`select ${columns} from "public"."_fw_outbox" where idempotency_key = ${callKey(id)} and event like ${`${CALL_EVENT_PREFIX}%`}`.execute(admin);
  const row = found.rows[0];
  return row ? { id, due: false, status: summary(row).status } : null;
}
