/**
 * Signals: `ctx.signal(name, payload)` in a command writes an `_fw_outbox` row `fw.signal:<name>` (in
 * the command's transaction, like `ctx.emit`); its delivery wakes the workflow runs of the command's
 * tenant that wait for it (`ctx.waitForEvent(step, name, { match })`) and whose `match` the payload
 * contains. A signal reaches runs that were waiting when it was delivered, not runs that start waiting
 * later — as Inngest's waitForEvent, and unlike Temporal's buffered signals: a wait means "from now
 * on", and no signal lingers unbounded for a wait that may never come. One that wakes nothing is not
 * dropped in silence: its outbox row keeps the note, and a warning line says it (the terminal, and
 * the dashboard's Logs view in fw dev), since it is most often a signal sent before the run got to
 * its wait, or with a payload its match does not contain.
 */
import { type DeliveryResult, failedDelivery, type OutboxRow } from '../db/outbox.ts';
import type { EntryServices } from '../entry/pipeline.ts';
import { printable } from '../core/printable.ts';
import { signalRuns } from './store.ts';

export const SIGNAL_EVENT_PREFIX = 'fw.signal:';

export function isSignalEvent(event: string): boolean {
  return event.startsWith(SIGNAL_EVENT_PREFIX);
}

export function signalOfEvent(event: string): string {
  return event.slice(SIGNAL_EVENT_PREFIX.length);
}

/** Wakes the runs waiting for the row's signal; retried while one of them is in an attempt (its row leased). */
export async function deliverSignal(services: EntryServices, row: OutboxRow): Promise<DeliveryResult> {
  const name = signalOfEvent(row.event);
  const { woken, busy } = await signalRuns(services.db.admin, { event: name, payload: row.payload, tenantId: row.tenantId });
  if (busy.length > 0) {
    return failedDelivery(`signal ${name}`, new Error(`workflow run(s) ${busy.join(', ')} got the signal during an attempt; it is delivered again to wake them once the attempt ends.`), false);
  }
  if (woken.length > 0) return { ok: true };
  const note = `No workflow run of this tenant waited for signal "${name}" with a matching payload.`;
  console.warn(
    `fw: signal "${printable(name)}" woke no workflow run (outbox #${row.id}, trace ${row.traceId ?? '–'}): ${note} A run gets the signals sent while it waits (ctx.waitForEvent), not one sent before it got there.`,
  );
  return { ok: true, note };
}
