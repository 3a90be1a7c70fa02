import { sql } from 'kysely';
import type { ActionEvent } from '../core/entries.ts';
import { isFwError } from '../core/errors.ts';
import { resolveTraceId } from '../core/trace.ts';
import { type DeliveryResult, failedDelivery, type OutboxRow, rowAuth } from '../db/outbox.ts';
import { type EntryServices, invokeEntry } from '../entry/pipeline.ts';
import { proofOf } from '../db/proof-request.ts';
import { entryOfCallEvent, findCallable, type ScheduledCallPayload } from './plan.ts';

/** Failures a retry cannot fix: the call is dead at once. */
const PERMANENT = new Set(['validation_failed', 'forbidden', 'unauthenticated', 'not_found', 'bad_request']);

/**
 * Runs a scheduled call (its outbox row) through the entry pipeline as the caller who scheduled it:
 * their tenant, user, auth kind and role, so the target's policy and row-level security apply as they
 * would have to them. A row written by fw itself (a cron) has no kind and runs as `system`.
 *
 * A command settles its own row inside its transaction (`_fw.settle_call`, proven by fw): its writes and the row's
 * `delivered` commit together, so a worker that dies after the commit cannot run it again — exactly
 * once. An action is at-least-once, as actions are for events (`ctx.event.idempotencyKey`).
 */
export async function runScheduledCall(services: EntryServices, row: OutboxRow): Promise<DeliveryResult> {
  const name = entryOfCallEvent(row.event);
  let entry;
  try {
    entry = findCallable(services.app, name, `Scheduled call #${row.id}`);
  } catch (error) {
    return failedDelivery(name, error, true);
  }
  const auth = rowAuth(row, entry.options.runAs);
  const traceId = row.traceId || resolveTraceId(undefined);
  const args = (row.payload as Partial<ScheduledCallPayload> | null)?.args ?? {};
  const event: ActionEvent = { name: row.event, payload: row.payload, id: row.id, idempotencyKey: row.idempotencyKey, attempt: row.attempts };
  try {
    await invokeEntry(services, entry, {
      name,
      auth,
      traceId,
      external: false,
      args,
      ...(entry.kind === 'action' ? { context: { event } } : {}),
      ...(entry.kind === 'command'
        ? { beforeCommit: async (trx) => void (await sql`select "_fw"."settle_call"(${row.id}::bigint, ${row.leaseOwner}, ${proofOf('settle_call', `${row.id}|${row.leaseOwner}`)})`.execute(trx)) }
        : {}),
    });
  } catch (error) {
    return failedDelivery(name, error, isFwError(error) && PERMANENT.has(error.code));
  }
  return entry.kind === 'command' ? { ok: true, settled: true } : { ok: true };
}
