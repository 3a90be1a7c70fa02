import { inSpan } from '../telemetry/tracing.ts';
import type { AiRuntime } from '../ai/ai-runtime.ts';
import { createAutocommitKysely } from '../db/autocommit.ts';
import type { FwDatabase } from '../db/database.ts';
import type { ActionContext, Auth, EntryDefinition } from '../core/entries.ts';
import { isFwError } from '../core/errors.ts';
import { validateArgs } from '../core/validate-args.ts';
import { resolveTraceId } from '../core/trace.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { insertStartRows, planEventStarts } from '../workflows/start.ts';
import type { OutboxRow } from './store.ts';

export interface ActionBinding {
  name: string;
  entry: EntryDefinition<'action'>;
}

/** The app's actions by the event they listen `on`, each list in name order. */
export function actionsByEvent(app: AppDefinition): Map<string, ActionBinding[]> {
  const byEvent = new Map<string, ActionBinding[]>();
  const names = [...app.entries.keys()].sort();
  for (const name of names) {
    const entry = app.entries.get(name)!;
    const on = entry.options.on;
    if (entry.kind !== 'action' || typeof on !== 'string') continue;
    const list = byEvent.get(on) ?? [];
    list.push({ name, entry: entry as EntryDefinition<'action'> });
    byEvent.set(on, list);
  }
  return byEvent;
}

/** What running one row's actions came to; `permanent` failures are not worth retrying. */
export type DeliveryResult = { ok: true; note?: string } | { ok: false; permanent: boolean; message: string; action: string; error: unknown };

/** The longest `last_error` kept: a message, never a stack. */
export const MAX_ERROR_LENGTH = 1000;

/** What listens for one event: actions to run, and workflows to start (by name). */
export interface EventListeners {
  actions: readonly ActionBinding[];
  workflows: readonly string[];
}

/**
 * Starts the workflows listening for the row's event (once per event, however often it is delivered),
 * then runs every action listening for it, one after the other, as the event's user and tenant (auth
 * kind `system`), with the payload validated against each action's args first. The first action that
 * throws ends the attempt: the event is retried as a whole, so each action must be idempotent
 * (`ctx.event.idempotencyKey`).
 */
export async function deliverRow(
  row: OutboxRow,
  listeners: EventListeners,
  services: { app: AppDefinition; db: FwDatabase; ai: AiRuntime },
): Promise<DeliveryResult> {
  const { actions, workflows } = listeners;
  if (actions.length === 0 && workflows.length === 0) {
    return { ok: true, note: `No action or workflow listens for "${row.event}"; delivered without running anything.` };
  }
  if (workflows.length > 0) {
    const names = workflows.join(', ');
    let starts;
    try {
      starts = await planEventStarts(services.app, row, workflows);
    } catch (error) {
      return { ok: false, permanent: true, action: names, error, message: errorMessage(names, error) };
    }
    await insertStartRows(services.db.admin, starts, row);
  }
  const auth: Auth = { kind: 'system', userId: row.userId, tenantId: row.tenantId, role: null };
  const traceId = row.traceId || resolveTraceId(undefined);

  const argsByAction: unknown[] = [];
  for (const { name, entry } of actions) {
    try {
      // An event emitted without a payload is stored as null; it stands for no args, like an absent HTTP body.
      argsByAction.push(await validateArgs(entry.args, row.payload ?? {}));
    } catch (error) {
      return { ok: false, permanent: true, action: name, error, message: errorMessage(name, error) };
    }
  }

  for (const [index, { name, entry }] of actions.entries()) {
    const ctx: ActionContext = {
      db: createAutocommitKysely(services.db, { auth, traceId, label: `action ${name}` }),
      auth,
      traceId,
      event: { name: row.event, payload: row.payload, id: row.id, idempotencyKey: row.idempotencyKey, attempt: row.attempts },
      ...services.ai.context({ auth, traceId }),
    };
    try {
      await inSpan(`fw.action ${name}`, { attributes: { 'fw.entry': name, 'fw.entry.kind': 'action', 'fw.event': row.event } }, async () => entry.handler(ctx, argsByAction[index]));
    } catch (error) {
      return { ok: false, permanent: false, action: name, error, message: errorMessage(name, error) };
    }
  }
  return { ok: true };
}

function errorMessage(action: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = isFwError(error) ? ` (${error.code})` : '';
  return `${action}${code}: ${message.trim()}`.slice(0, MAX_ERROR_LENGTH);
}
