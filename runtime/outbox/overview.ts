import { type Kysely, sql } from 'kysely';

export interface OutboxOverview {
  /** `pending` counts every row still to deliver: `due` now, or `scheduled` for later (scheduled calls, cron ticks, sleeping workflow runs). */
  counts: { pending: number; due: number; scheduled: number; delivered: number; dead: number; cancelled: number };
  /** Pending rows a worker holds a live lease on (being delivered now). */
  leased: number;
  /** The due row that has waited longest since it fell due, or null (rows scheduled for later are not late). */
  oldestPending: { id: string; event: string; attempts: number; createdAt: string; availableAt: string; lastError: string | null } | null;
  /** The most recent dead rows (newest first). */
  dead: Array<{ id: string; event: string; attempts: number; lastError: string | null; deadAt: string | null; traceId: string | null; tenantId: string | null }>;
}

/** The outbox at a glance (`GET /_fw/outbox`): counts by status, the longest-waiting due row, the latest dead ones. */
export async function outboxOverview(admin: Kysely<any>, options: { deadLimit?: number } = {}): Promise<OutboxOverview> {
  const counts = await sql<{ status: string; n: number; leased: number; due: number }>`
    select status, count(*)::int as n, (count(*) filter (where lease_until > now()))::int as leased, (count(*) filter (where available_at <= now()))::int as due
    from "public"."_fw_outbox" group by status`.execute(admin);
  const byStatus = new Map(counts.rows.map((row) => [row.status, row]));
  const oldest = await sql<{ id: string; event: string; attempts: number; created_at: Date | string; available_at: Date | string; last_error: string | null }>`
    select id, event, attempts, created_at, available_at, last_error from "public"."_fw_outbox"
    where status = 'pending' and available_at <= now() order by available_at, id limit 1`.execute(admin);
  const dead = await sql<{ id: string; event: string; attempts: number; last_error: string | null; dead_at: Date | string | null; trace_id: string | null; tenant_id: string | null }>`
    select id, event, attempts, last_error, dead_at, trace_id, tenant_id from "public"."_fw_outbox"
    where status = 'dead' order by id desc limit ${options.deadLimit ?? 50}`.execute(admin);
  const first = oldest.rows[0];
  return {
    counts: {
      pending: byStatus.get('pending')?.n ?? 0,
      due: byStatus.get('pending')?.due ?? 0,
      scheduled: (byStatus.get('pending')?.n ?? 0) - (byStatus.get('pending')?.due ?? 0),
      delivered: byStatus.get('delivered')?.n ?? 0,
      dead: byStatus.get('dead')?.n ?? 0,
      cancelled: byStatus.get('cancelled')?.n ?? 0,
    },
    leased: byStatus.get('pending')?.leased ?? 0,
    oldestPending: first
      ? { id: String(first.id), event: first.event, attempts: first.attempts, createdAt: iso(first.created_at)!, availableAt: iso(first.available_at)!, lastError: first.last_error }
      : null,
    dead: dead.rows.map((row) => ({
      id: String(row.id),
      event: row.event,
      attempts: row.attempts,
      lastError: row.last_error,
      deadAt: iso(row.dead_at),
      traceId: row.trace_id,
      tenantId: row.tenant_id,
    })),
  };
}

function iso(value: Date | string | null): string | null {
  return value === null ? null : new Date(value).toISOString();
}
