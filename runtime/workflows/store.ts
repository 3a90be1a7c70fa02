/**
 * The workflow engine's statements on `_fw_workflow_runs` and `_fw_workflow_steps`, run as the owner
 * (`db.admin`): the app role has no privilege on either table.
 */
import { type Kysely, sql } from 'kysely';
import { WORKFLOW_RUNS_TABLE as RUNS, WORKFLOW_STEPS_TABLE as STEPS } from '../db/ddl.ts';
import { runOutboxKey, WORKFLOW_EVENT_PREFIX } from './start.ts';

export type RunStatus = 'pending' | 'running' | 'sleeping' | 'retrying' | 'completed' | 'failed' | 'cancelled';

/** What a sleeping run waits for (`fw workflows show`). */
export type WaitingFor =
  | { kind: 'sleep'; step: string; until: string }
  /** `until`: when the wait times out (null: never). */
  | { kind: 'event'; step: string; event: string; match: Record<string, unknown>; until: string | null };
const FINAL: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];

export function isFinal(status: RunStatus): boolean {
  return FINAL.includes(status);
}

export interface BeginRun {
  runId: string;
  workflow: string;
  outboxId: string;
  attempt: number;
  tenantId: string | null;
  userId: string | null;
  traceId: string | null;
}

/**
 * Marks a run `running` for this attempt (creating its row on the first), unless it completed or was
 * cancelled. A `failed` run runs again: its start row was made pending by hand to retry it.
 * Returns its status and whether a cancel was asked for — or `null` when a run of that id belongs to
 * another tenant: a row naming it is refused, and the run is left as it is.
 */
export async function beginRun(admin: Kysely<any>, run: BeginRun): Promise<{ status: RunStatus; cancelRequested: boolean } | null> {
  const result = await sql<{ status: RunStatus; cancel_requested_at: Date | null }>`
    insert into "public"."${sql.raw(RUNS)}" as r (id, workflow, status, tenant_id, user_id, trace_id, outbox_id, attempts)
    values (${run.runId}::uuid, ${run.workflow}, 'running', ${run.tenantId}::uuid, ${run.userId}, ${run.traceId}, ${run.outboxId}::bigint, ${run.attempt})
    on conflict (id) do update set
      status = case when r.status in ('completed', 'cancelled') then r.status else 'running' end,
      finished_at = case when r.status in ('completed', 'cancelled') then r.finished_at else null end,
      waiting_for = case when r.status in ('completed', 'cancelled') then r.waiting_for else null end,
      attempts = greatest(r.attempts, excluded.attempts),
      outbox_id = excluded.outbox_id,
      updated_at = now()
    where r.tenant_id is not distinct from excluded.tenant_id
    returning status, cancel_requested_at`.execute(admin);
  const row = result.rows[0];
  return row ? { status: row.status, cancelRequested: row.cancel_requested_at !== null } : null;
}

/** The outputs of the run's finished steps, by name. */
export async function finishedSteps(admin: Kysely<any>, runId: string): Promise<Map<string, unknown>> {
  const result = await sql<{ name: string; output: { value?: unknown } }>`
    select name, output from "public"."${sql.raw(STEPS)}" where run_id = ${runId}::uuid`.execute(admin);
  return new Map(result.rows.map((row) => [row.name, row.output.value]));
}

/**
 * Stores a finished step's output (JSON text of `{ value }`) and returns the stored value. When the
 * step is already stored — another worker ran it too, after this one's lease expired — the first
 * stored output wins and is returned, so every attempt continues from the same value.
 */
export async function saveStep(admin: Kysely<any>, step: { runId: string; name: string; json: string; attempt: number; durationMs: number }): Promise<unknown> {
  const result = await sql<{ output: { value?: unknown } }>`
    with inserted as (
      insert into "public"."${sql.raw(STEPS)}" (run_id, name, output, attempt, duration_ms)
      values (${step.runId}::uuid, ${step.name}, ${step.json}::jsonb, ${step.attempt}, ${step.durationMs})
      on conflict (run_id, name) do nothing
      returning output)
    select output from inserted
    union all
    select output from "public"."${sql.raw(STEPS)}" where run_id = ${step.runId}::uuid and name = ${step.name}
    limit 1`.execute(admin);
  return result.rows[0]?.output.value;
}

export async function cancelRequested(admin: Kysely<any>, runId: string): Promise<boolean> {
  const result = await sql<{ requested: boolean }>`
    select cancel_requested_at is not null as requested from "public"."${sql.raw(RUNS)}" where id = ${runId}::uuid`.execute(admin);
  return result.rows[0]?.requested ?? false;
}

/** A run that gave its worker back until something happens (a time): `sleeping`, and what it waits for. */
export async function waitRun(admin: Kysely<any>, runId: string, waitingFor: WaitingFor): Promise<void> {
  await sql`
    update "public"."${sql.raw(RUNS)}" set status = 'sleeping', waiting_for = ${JSON.stringify(waitingFor)}::jsonb, updated_at = now()
    where id = ${runId}::uuid and status not in ('completed', 'failed', 'cancelled')`.execute(admin);
}

/** Records what a running run is about to wait for (before it looks whether it came), so signals find it. */
export async function announceWait(admin: Kysely<any>, runId: string, waitingFor: WaitingFor): Promise<void> {
  await sql`
    update "public"."${sql.raw(RUNS)}" set waiting_for = ${JSON.stringify(waitingFor)}::jsonb, updated_at = now()
    where id = ${runId}::uuid and status not in ('completed', 'failed', 'cancelled')`.execute(admin);
}

/** One stored step's value, or undefined when it is not stored. */
export async function readStep(admin: Kysely<any>, runId: string, name: string): Promise<unknown> {
  const result = await sql<{ output: { value?: unknown } }>`
    select output from "public"."${sql.raw(STEPS)}" where run_id = ${runId}::uuid and name = ${name}`.execute(admin);
  return result.rows[0] ? (result.rows[0].output.value ?? null) : undefined;
}

/**
 * Delivers a signal: every run of `tenantId` waiting for `event` whose `match` the payload contains
 * gets the payload stored as its wait's outcome (the first outcome stored wins: a timeout that came
 * first stays), and its start row is made due now. Returns the runs it woke, and those it could not
 * wake yet because an attempt of theirs holds the row (the signal is retried for them).
 */
export async function signalRuns(admin: Kysely<any>, signal: { event: string; payload: unknown; tenantId: string | null }): Promise<{ woken: string[]; busy: string[] }> {
  const payload = signal.payload !== null && typeof signal.payload === 'object' && !Array.isArray(signal.payload) ? signal.payload : {};
  const waiting = await sql<{ id: string; step: string; outbox_id: string | null }>`
    select id, waiting_for->>'step' as step, outbox_id from "public"."${sql.raw(RUNS)}"
    where status in ('running', 'sleeping') and waiting_for->>'kind' = 'event' and waiting_for->>'event' = ${signal.event}
      and tenant_id is not distinct from ${signal.tenantId}::uuid
      and coalesce(waiting_for->'match', '{}'::jsonb) <@ ${JSON.stringify(payload)}::jsonb
      and not exists (select 1 from "public"."${sql.raw(STEPS)}" s where s.run_id = id and s.name = waiting_for->>'step')`.execute(admin);
  const woken: string[] = [];
  const busy: string[] = [];
  for (const run of waiting.rows) {
    await saveStep(admin, { runId: run.id, name: run.step, json: JSON.stringify({ value: { payload: signal.payload ?? null } }), attempt: 0, durationMs: 0 });
    const due = await sql`
      update "public"."_fw_outbox" set available_at = now()
      where id = ${run.outbox_id}::bigint and status = 'pending' and (lease_until is null or lease_until < now())
      returning id`.execute(admin);
    (due.rows.length > 0 ? woken : busy).push(String(run.id));
  }
  return { woken, busy };
}

/** Ends a run: `completed` with its result (JSON text), or `cancelled`. */
export async function endRun(admin: Kysely<any>, runId: string, end: { status: 'completed'; json: string } | { status: 'cancelled' }): Promise<void> {
  await sql`
    update "public"."${sql.raw(RUNS)}" set
      status = ${end.status},
      waiting_for = null,
      result = ${end.status === 'completed' ? end.json : null}::jsonb,
      finished_at = now(), updated_at = now()
    where id = ${runId}::uuid and status not in ('completed', 'failed', 'cancelled')`.execute(admin);
}

/**
 * Records how a failed attempt was settled by the outbox: `retrying` (another attempt is due) or
 * `failed` (dead). Creates the row when the run never began (a start row that died before it ran).
 */
export async function settleFailedRun(
  admin: Kysely<any>,
  run: { runId: string; workflow: string; outboxId: string; attempt: number; tenantId: string | null; userId: string | null; traceId: string | null },
  outcome: { status: 'retrying' | 'failed'; error: string },
): Promise<void> {
  await sql`
    insert into "public"."${sql.raw(RUNS)}" as r (id, workflow, status, tenant_id, user_id, trace_id, outbox_id, attempts, last_error, finished_at)
    values (${run.runId}::uuid, ${run.workflow}, ${outcome.status}, ${run.tenantId}::uuid, ${run.userId}, ${run.traceId}, ${run.outboxId}::bigint, ${run.attempt}, ${outcome.error},
      ${outcome.status === 'failed' ? sql`now()` : sql`null`})
    on conflict (id) do update set
      status = excluded.status, last_error = excluded.last_error, finished_at = excluded.finished_at, updated_at = now()
    where r.status not in ('completed', 'failed', 'cancelled') and r.tenant_id is not distinct from excluded.tenant_id`.execute(admin);
}

/** What a cancel request came to. */
export interface CancelResult {
  runId: string;
  workflow: string;
  /** `cancelled` at once when no attempt is running; `running` stops before its next step. */
  status: RunStatus;
  cancelRequested: boolean;
}

/**
 * Asks a run to stop. A run between attempts (waiting to start, or to retry) is cancelled at once;
 * a running one stops before its next step (the step running now finishes). A run that already ended
 * is left as it is. `null` when no run has that id. The start row is made due now, so the worker
 * settles it soon instead of after its backoff.
 */
export async function cancelRun(admin: Kysely<any>, runId: string): Promise<CancelResult | null> {
  return admin.transaction().execute(async (trx) => {
    const start = await sql<{ event: string; tenant_id: string | null; user_id: string | null; trace_id: string | null; id: string; leased: boolean; status: string }>`
      select id, event, tenant_id, user_id, trace_id, status, coalesce(lease_until > now(), false) as leased
      from "public"."_fw_outbox" where idempotency_key = ${runOutboxKey(runId)} for update`.execute(trx);
    const row = start.rows[0];
    const existing = await sql<{ workflow: string; status: RunStatus }>`
      select workflow, status from "public"."${sql.raw(RUNS)}" where id = ${runId}::uuid for update`.execute(trx);
    const run = existing.rows[0];
    if (!row && !run) return null;
    const workflow = run?.workflow ?? row!.event.slice(WORKFLOW_EVENT_PREFIX.length);
    if (run && isFinal(run.status)) return { runId, workflow, status: run.status, cancelRequested: false };
    const runningNow = row?.leased === true && row.status === 'pending';
    const status: RunStatus = runningNow ? 'running' : 'cancelled';
    await sql`
      insert into "public"."${sql.raw(RUNS)}" as r (id, workflow, status, tenant_id, user_id, trace_id, outbox_id, cancel_requested_at, finished_at)
      values (${runId}::uuid, ${workflow}, ${status}, ${row?.tenant_id ?? null}::uuid, ${row?.user_id ?? null}, ${row?.trace_id ?? null}, ${row?.id ?? null}::bigint, now(),
        ${status === 'cancelled' ? sql`now()` : sql`null`})
      on conflict (id) do update set
        status = excluded.status, cancel_requested_at = coalesce(r.cancel_requested_at, now()), finished_at = excluded.finished_at, updated_at = now()`.execute(trx);
    if (row && row.status === 'pending' && !runningNow) {
      await sql`update "public"."_fw_outbox" set available_at = now() where id = ${row.id}::bigint`.execute(trx);
    }
    return { runId, workflow, status, cancelRequested: true };
  });
}

export interface RunSummary {
  runId: string;
  workflow: string;
  status: RunStatus;
  attempts: number;
  tenantId: string | null;
  traceId: string | null;
  lastError: string | null;
  cancelRequested: boolean;
  /** A sleeping run: what it waits for. */
  waitingFor: WaitingFor | null;
  createdAt: string;
  finishedAt: string | null;
}

interface RawRun {
  id: string;
  workflow: string;
  status: RunStatus;
  attempts: number;
  tenant_id: string | null;
  trace_id: string | null;
  last_error: string | null;
  cancel_requested_at: Date | string | null;
  waiting_for: WaitingFor | null;
  created_at: Date | string;
  finished_at: Date | string | null;
}

// Runs with a row, and runs whose start row waits unclaimed (`pending`).
const allRuns = sql`
  select id, workflow, status, attempts, tenant_id, trace_id, last_error, cancel_requested_at, waiting_for, created_at, finished_at
  from "public"."${sql.raw(RUNS)}"
  union all
  select (o.payload->>'runId')::uuid, substr(o.event, ${WORKFLOW_EVENT_PREFIX.length + 1}), 'pending', o.attempts, o.tenant_id, o.trace_id, o.last_error, null, null::jsonb, o.created_at, null
  from "public"."_fw_outbox" o
  where o.event like ${`${WORKFLOW_EVENT_PREFIX}%`} and o.status = 'pending'
    and not exists (select 1 from "public"."${sql.raw(RUNS)}" r where r.id = (o.payload->>'runId')::uuid)`;

/** Recent runs, newest first (`GET /_fw/workflows`). */
export async function listRuns(admin: Kysely<any>, options: { limit?: number; status?: string; workflow?: string } = {}): Promise<RunSummary[]> {
  const result = await sql<RawRun>`
    select * from (${allRuns}) runs
    where (${options.status ?? null}::text is null or status = ${options.status ?? null})
      and (${options.workflow ?? null}::text is null or workflow = ${options.workflow ?? null})
    order by created_at desc, id limit ${options.limit ?? 50}`.execute(admin);
  return result.rows.map(summary);
}

/** One run with its finished steps (names, attempts, durations — not their outputs, which are app data). */
export async function readRun(admin: Kysely<any>, runId: string): Promise<(RunSummary & { steps: Array<{ name: string; attempt: number; durationMs: number; finishedAt: string }> }) | null> {
  const result = await sql<RawRun>`select * from (${allRuns}) runs where id = ${runId}::uuid`.execute(admin);
  const run = result.rows[0];
  if (!run) return null;
  const steps = await sql<{ name: string; attempt: number; duration_ms: number; finished_at: Date | string }>`
    select name, attempt, duration_ms, finished_at from "public"."${sql.raw(STEPS)}" where run_id = ${runId}::uuid order by finished_at, name`.execute(admin);
  return {
    ...summary(run),
    steps: steps.rows.map((s) => ({ name: s.name, attempt: s.attempt, durationMs: Math.round(Number(s.duration_ms) * 10) / 10, finishedAt: new Date(s.finished_at).toISOString() })),
  };
}

function summary(row: RawRun): RunSummary {
  return {
    runId: String(row.id),
    workflow: row.workflow,
    status: row.status,
    attempts: Number(row.attempts),
    tenantId: row.tenant_id,
    traceId: row.trace_id,
    lastError: row.last_error,
    cancelRequested: row.cancel_requested_at !== null,
    waitingFor: row.waiting_for ?? null,
    createdAt: new Date(row.created_at).toISOString(),
    finishedAt: row.finished_at === null ? null : new Date(row.finished_at).toISOString(),
  };
}

/** What a run was given and gave back, and what its steps returned: app data, for the dashboard's run detail. */
export interface RunData {
  args: unknown;
  result: unknown;
  /** Each finished step's stored output, by name (a sleep's is its wake-up time, a wait's its outcome). */
  outputs: Record<string, unknown>;
}

export async function readRunData(admin: Kysely<any>, runId: string): Promise<RunData> {
  const start = await sql<{ args: unknown }>`
    select payload->'args' as args from "public"."_fw_outbox" where idempotency_key = ${runOutboxKey(runId)}`.execute(admin);
  const run = await sql<{ result: unknown }>`select result from "public"."${sql.raw(RUNS)}" where id = ${runId}::uuid`.execute(admin);
  const steps = await sql<{ name: string; output: { value?: unknown } }>`
    select name, output from "public"."${sql.raw(STEPS)}" where run_id = ${runId}::uuid order by finished_at, name`.execute(admin);
  return {
    args: start.rows[0]?.args ?? null,
    result: run.rows[0]?.result ?? null,
    outputs: Object.fromEntries(steps.rows.map((row) => [row.name, row.output.value ?? null])),
  };
}

/**
 * Ends a run's `ctx.sleep` now (an operator's "skip the sleep", fw dev): its stored wake-up time becomes
 * now and its start row falls due, so the next attempt goes on past the sleep. Resolves to what the run
 * was doing when it is not sleeping (nothing changed), or `woken`.
 */
export async function skipSleep(admin: Kysely<any>, runId: string, now: Date): Promise<'woken' | 'not_sleeping' | 'busy'> {
  return admin.transaction().execute(async (trx) => {
    const found = await sql<{ step: string | null; kind: string | null; status: RunStatus }>`
      select waiting_for->>'step' as step, waiting_for->>'kind' as kind, status from "public"."${sql.raw(RUNS)}" where id = ${runId}::uuid for update`.execute(trx);
    const run = found.rows[0];
    if (!run || run.status !== 'sleeping' || run.kind !== 'sleep' || !run.step) return 'not_sleeping';
    const due = await sql`
      update "public"."_fw_outbox" set available_at = now()
      where idempotency_key = ${runOutboxKey(runId)} and status = 'pending' and (lease_until is null or lease_until < now())
      returning id`.execute(trx);
    if (due.rows.length === 0) return 'busy';
    await sql`
      update "public"."${sql.raw(STEPS)}" set output = ${JSON.stringify({ value: { until: now.toISOString() } })}::jsonb
      where run_id = ${runId}::uuid and name = ${run.step}`.execute(trx);
    return 'woken';
  });
}

/**
 * Runs a failed run again (an operator's "rerun", as `fw workflows` would by retrying its start row):
 * its dead start row is made pending with its attempts reset; the run resumes after its last finished
 * step. Resolves to whether it was failed and could be.
 */
export async function rerunFailedRun(admin: Kysely<any>, runId: string): Promise<boolean> {
  const result = await sql`
    update "public"."_fw_outbox" o set status = 'pending', available_at = now(), dead_at = null, attempts = 0
    where o.idempotency_key = ${runOutboxKey(runId)} and o.status = 'dead'
      and exists (select 1 from "public"."${sql.raw(RUNS)}" r where r.id = ${runId}::uuid and r.status = 'failed')
    returning o.id`.execute(admin);
  return result.rows.length > 0;
}
