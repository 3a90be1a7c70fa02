import type { FwError } from './errors.ts';

/** The diagnostic a dev runtime adds to an entry's server-side failure: its place in the app's source. */
const ENTRY_FAILED = 'entry_failed';

/**
 * One console line for a server-side failure that says where it happened — a dev runtime's answer
 * (`fw dev`), whose `entry_failed` diagnostic names the failing statement's `file:line` — so a failing
 * liveQuery or command shows in the browser's console even when the page renders nothing of it (a
 * list that stays empty). A production answer carries a code and a trace id alone and logs nothing
 * here; refusals (4xx) are the app's to show.
 *
 * @example
 *   // fw: internal: liveQuery liveNotes: column "stauts" does not exist
 *   //     at src/queries/liveNotes.ts:6:108 [trace 4bf9…]
 */
export function logServerFailure(error: FwError): void {
  if (error.status < 500) return;
  const place = error.diagnostics.find((d) => d.code === ENTRY_FAILED);
  if (!place) return;
  console.error(`fw: ${error.code}: ${error.message}\n    at ${place.path}${error.traceId ? ` [trace ${error.traceId}]` : ''}`);
}
