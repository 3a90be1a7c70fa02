import { type Kysely, sql } from 'kysely';

/** Which outbox rows to list: waiting ones, waiting ones that failed at least once, or dead-lettered ones. */
export type OutboxFilter = 'pending' | 'failed' | 'dead';

export interface OutboxRowSummary {
  id: string;
  event: string;
  status: string;
  attempts: number;
  lastError: string | null;
  createdAt: string;
  availableAt: string;
  deadAt: string | null;
  /** A worker holds a live lease on it (being delivered now): retry and discard leave it alone. */
  leased: boolean;
  traceId: string | null;
  tenantId: string | null;
}

/** The outbox rows of one filter, newest first (the dashboard's Outbox view). Payloads stay out: they are the app's data. */
export async function listOutboxRows(admin: Kysely<any>, filter: OutboxFilter, limit: number): Promise<OutboxRowSummary[]> {
  const where =
    filter === 'dead' ? sql`status = 'dead'` : filter === 'failed' ? sql`status = 'pending' and last_error is not null` : sql`status = 'pending'`;
  const result = await sql<{
    id: string;
    event: string;
    status: string;
    attempts: number;
    last_error: string | null;
    created_at: Date | string;
    available_at: Date | string;
    dead_at: Date | string | null;
    leased: boolean;
    trace_id: string | null;
    tenant_id: string | null;
  }>`select id, event, status, attempts, last_error, created_at, available_at, dead_at,
       coalesce(lease_until > now(), false) as leased, trace_id, tenant_id
     from "public"."_fw_outbox" where ${where} order by id desc limit ${limit}`.execute(admin);
  return result.rows.map((row) => ({
    id: String(row.id),
    event: row.event,
    status: row.status,
    attempts: row.attempts,
    lastError: row.last_error,
    createdAt: new Date(row.created_at).toISOString(),
    availableAt: new Date(row.available_at).toISOString(),
    deadAt: row.dead_at === null ? null : new Date(row.dead_at).toISOString(),
    leased: row.leased,
    traceId: row.trace_id,
    tenantId: row.tenant_id,
  }));
}

/**
 * Makes a pending or dead row deliverable now. A dead row starts over with no attempts (it had used
 * them all); a waiting one keeps its count and only skips its backoff. A leased row is left to its
 * worker. Resolves to whether a row changed.
 */
export async function retryOutboxRow(admin: Kysely<any>, id: string): Promise<boolean> {
  const result = await sql`
    update "public"."_fw_outbox"
    set status = 'pending', available_at = now(), dead_at = null,
        attempts = case when status = 'dead' then 0 else attempts end
    where id = ${id}::bigint and status in ('pending', 'dead') and (lease_until is null or lease_until <= now())
    returning id`.execute(admin);
  return result.rows.length > 0;
}

/** Deletes a pending or dead row that no worker holds, so it is never delivered. Resolves to whether a row went. */
export async function discardOutboxRow(admin: Kysely<any>, id: string): Promise<boolean> {
  const result = await sql`
    delete from "public"."_fw_outbox"
    where id = ${id}::bigint and status in ('pending', 'dead') and (lease_until is null or lease_until <= now())
    returning id`.execute(admin);
  return result.rows.length > 0;
}
