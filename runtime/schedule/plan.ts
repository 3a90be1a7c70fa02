/**
 * How a scheduled call is written: one `_fw_outbox` row, event `fw.call:<entry>`, payload `{ args }`,
 * idempotency key `call:<id>`, `available_at` the time it is due — in the scheduling command's
 * transaction, so the call exists exactly when the command's writes do. The row carries the command's
 * caller (tenant, user, kind, role; the outbox's policy checks them against the verified identity), and
 * the worker runs the call as that caller. Scheduled calls are outbox rows so that they get the outbox's
 * claim, leases, backoff and dead letters, and the same workers — not a second job system.
 */
import { randomUUID } from 'node:crypto';
import type { AppDefinition } from '../core/app-definition.ts';
import type { EntryDefinition } from '../core/entry-types.ts';
import { FwError, isFwError } from '../core/errors.ts';
import { validateArgs } from '../core/validate-args.ts';
import type { OutboxEntry } from '../db/outbox.ts';

export const CALL_EVENT_PREFIX = 'fw.call:';

export function isCallEvent(event: string): boolean {
  return event.startsWith(CALL_EVENT_PREFIX);
}

export function entryOfCallEvent(event: string): string {
  return event.slice(CALL_EVENT_PREFIX.length);
}

/** The outbox key of the scheduled call `id` (what `cancel` finds it by). */
export function callKey(id: string): string {
  return `call:${id}`;
}

/** The kinds a schedule may call: commands (in a transaction of their own) and actions. */
const CALLABLE = new Set(['command', 'action']);

/** What a call row carries. */
export interface ScheduledCallPayload {
  /** The args as given; validated again (with transforms) when the call runs. */
  args: unknown;
}

export interface ScheduledCall extends OutboxEntry {
  payload: ScheduledCallPayload;
  idempotencyKey: string;
  availableAt: Date;
  /** The id `ctx.scheduler.cancel` takes. */
  id: string;
}

/** The command or action named `name`, or an error naming the ones there are. */
export function findCallable(app: AppDefinition, name: string, where: string): EntryDefinition {
  const entry = app.entries.get(name);
  if (entry && CALLABLE.has(entry.kind)) return entry;
  const known = [...app.entries].filter(([, e]) => CALLABLE.has(e.kind)).map(([n]) => n).sort();
  const what = entry ? `"${name}" is a ${entry.kind}; only commands and actions can be scheduled.` : `No command or action named "${name}".`;
  throw new FwError('internal', `${where}: ${what} ${known.length ? `Commands and actions: ${known.join(', ')}.` : 'Add one in src/commands/ or src/actions/.'}`);
}

/**
 * Plans a call of `name` with `args` at `at`: the target exists and is a command or an action, and the
 * args pass its schema now (the command that schedules fails at once, not the call later). Args it
 * refuses are the scheduling command's bug, not its caller's: `internal`, naming the call.
 */
export async function planScheduledCall(app: AppDefinition, name: unknown, args: unknown, at: Date, where: string): Promise<ScheduledCall> {
  if (typeof name !== 'string' || name.length === 0) throw new TypeError(`${where}: name must be a command's or action's name, e.g. 'sendReminder'.`);
  if (!(at instanceof Date) || Number.isNaN(at.getTime())) throw new TypeError(`${where}: the time is not a valid date.`);
  const entry = findCallable(app, name, where);
  const given = args ?? {};
  try {
    await validateArgs(entry.args, given);
  } catch (error) {
    if (!isFwError(error) || error.code !== 'validation_failed') throw error;
    throw new FwError('internal', `${where}: ${error.message}`, { cause: error });
  }
  const id = randomUUID();
  return { event: `${CALL_EVENT_PREFIX}${name}`, payload: { args: given }, idempotencyKey: callKey(id), availableAt: at, id };
}
