import type { AppDefinition } from '../core/app-definition.ts';
import type { ActionEvent } from '../core/entries.ts';
import type { EntryDefinition } from '../core/entry-types.ts';
import { resolveTraceId } from '../core/trace.ts';
import { type DeliveryResult, failedDelivery, type OutboxRow, rowAuth } from '../db/outbox.ts';
import { admitEntry, type EntryServices, invokeEntry } from '../entry/pipeline.ts';

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

/** What listens for one event: actions to run, and workflows to start (by name). */
export interface EventListeners {
  actions: readonly ActionBinding[];
  workflows: readonly string[];
}

/**
 * Starts the workflows listening for the row's event (once per event, however often it is delivered:
 * `startWorkflows` is given by whoever assembled the worker), then runs every action listening for it,
 * one after the other, through the entry pipeline as the event's emitter (its tenant, user, auth kind and
 * role; the system for an action that declares `runAs: 'system'`),
 * every action's args validated against the payload before the first one runs. The first action that
 * throws ends the attempt: the event is retried as a whole, so each action must be idempotent
 * (`ctx.event.idempotencyKey`).
 */
export async function deliverRow(
  services: EntryServices,
  row: OutboxRow,
  listeners: EventListeners,
  startWorkflows: (row: OutboxRow, names: readonly string[]) => Promise<void>,
): Promise<DeliveryResult> {
  const { actions, workflows } = listeners;
  if (actions.length === 0 && workflows.length === 0) {
    return { ok: true, note: `No action or workflow listens for "${row.event}"; delivered without running anything.` };
  }
  if (workflows.length > 0) {
    try {
      await startWorkflows(row, workflows);
    } catch (error) {
      return failedDelivery(workflows.join(', '), error, true);
    }
  }
  const traceId = row.traceId || resolveTraceId(undefined);
  const event: ActionEvent = { name: row.event, payload: row.payload, id: row.id, idempotencyKey: row.idempotencyKey, attempt: row.attempts };
  // An event emitted without a payload is stored as null; it stands for no args, like an absent HTTP body.
  const call = (name: string, entry: EntryDefinition<'action'>) => ({ name, auth: rowAuth(row, entry.options.runAs), traceId, external: false, args: row.payload ?? {}, context: { event } });

  // Every action's args first: a payload one of them refuses is a permanent failure, before any has run.
  const argsByAction: unknown[] = [];
  for (const { name, entry } of actions) {
    try {
      argsByAction.push(await admitEntry(services, entry, call(name, entry)));
    } catch (error) {
      return failedDelivery(name, error, true);
    }
  }
  for (const [index, { name, entry }] of actions.entries()) {
    try {
      await invokeEntry(services, entry, { ...call(name, entry), args: argsByAction[index], admitted: true });
    } catch (error) {
      return failedDelivery(name, error, false);
    }
  }
  return { ok: true };
}
