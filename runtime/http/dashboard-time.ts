import type { IncomingMessage } from 'node:http';
import type { AppDefinition } from '../core/app-definition.ts';
import { FwError } from '../core/errors.ts';
import type { FwDatabase } from '../db/database.ts';
import { triggerCron } from '../schedule/cron-ticks.ts';
import { runCallNow } from '../schedule/store.ts';
import { readRun, rerunFailedRun, signalRuns, skipSleep } from '../workflows/store.ts';
import { parseJsonBody, readBody } from './body.ts';

/**
 * The dashboard's controls for time, in dev only: run a scheduled call now, trigger a cron's tick, skip
 * a workflow's sleep, send the signal a run waits for, run a failed run again. They are operator actions
 * on the owner's connection (`db.admin`), as the worker's own writes are — so they exist only where the
 * developer owns the database (`fw dev`), never with the admin token in production, and no request role
 * reaches them (they are under the dashboard's admin route). Each is logged with its trace.
 */
export interface TimeControlContext {
  app: AppDefinition;
  db: FwDatabase;
  dev: boolean;
  bodyLimit: number;
  traceId: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const TIME_CONTROL = /^(?:schedule\/([^/]{1,100})\/run-now|crons\/([^/]{1,100})\/trigger|workflows\/([^/]{1,100})\/(skip-sleep|signal|rerun))$/;

function uuid(id: string, noun: string): string {
  if (!UUID.test(id)) throw new FwError('validation_failed', `A ${noun}'s id is a UUID, got "${id.slice(0, 40)}".`, { diagnostics: [{ path: 'url', code: 'invalid_id', message: 'The Outbox view lists them.' }] });
  return id;
}

export async function serveTimeControl(req: IncomingMessage, match: RegExpExecArray, context: TimeControlContext): Promise<unknown> {
  if (!context.dev) throw new FwError('forbidden', 'The dashboard’s controls for time (run now, trigger, skip a sleep, signal, rerun) are for dev mode only.');
  const [, callId, cronName, runId, action] = match;
  const trace = `[trace ${context.traceId}]`;
  if (callId !== undefined) {
    const id = uuid(decodeURIComponent(callId), 'scheduled call');
    const result = await runCallNow(context.db.admin, id);
    if (!result) throw new FwError('not_found', `No scheduled call ${id}.`, { diagnostics: [{ path: 'url', code: 'unknown_call', message: 'The Outbox view lists the calls.' }] });
    if (!result.due) throw new FwError('conflict', `Scheduled call ${id} is ${result.status}: only a waiting call can run now.`, { diagnostics: [{ path: 'url', code: 'call_not_pending', message: 'Reload the outbox view.' }] });
    console.info(`fw dashboard: ran scheduled call ${id} now ${trace}`);
    return result;
  }
  if (cronName !== undefined) {
    const name = decodeURIComponent(cronName);
    const key = await triggerCron(context.app, context.db.admin, name, context.traceId, Date.now());
    if (!key) throw new FwError('not_found', `No cron "${name.slice(0, 60)}" in src/crons.ts.`, { diagnostics: [{ path: 'url', code: 'unknown_cron', message: 'The Outbox view lists the crons.' }] });
    console.info(`fw dashboard: triggered cron ${name} now ${trace}`);
    return { cron: name, triggered: true };
  }
  const id = uuid(decodeURIComponent(runId!), 'workflow run');
  const run = await readRun(context.db.admin, id);
  if (!run) throw new FwError('not_found', `No workflow run ${id}.`, { diagnostics: [{ path: 'url', code: 'unknown_run', message: 'The Outbox view lists the runs.' }] });
  if (action === 'skip-sleep') {
    const outcome = await skipSleep(context.db.admin, id, new Date());
    if (outcome !== 'woken') {
      throw new FwError('conflict', outcome === 'busy' ? `Workflow run ${id} is being run by a worker right now.` : `Workflow run ${id} is not sleeping (${run.status}).`, { diagnostics: [{ path: 'url', code: 'run_not_sleeping', message: 'Reload the outbox view.' }] });
    }
    console.info(`fw dashboard: skipped the sleep of workflow run ${run.workflow} ${id} ${trace}`);
    return { runId: id, woken: true };
  }
  if (action === 'signal') {
    const wait = run.waitingFor;
    if (run.status !== 'sleeping' || wait?.kind !== 'event') {
      throw new FwError('conflict', `Workflow run ${id} waits for no signal (${run.status}).`, { diagnostics: [{ path: 'url', code: 'run_not_waiting', message: 'Reload the outbox view.' }] });
    }
    const body = parseJsonBody(await readBody(req, context.bodyLimit), req.headers['content-type']) as { payload?: unknown } | null;
    const payload = body?.payload ?? {};
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
      throw new FwError('validation_failed', 'The signal’s payload is a JSON object.', { diagnostics: [{ path: 'body.payload', code: 'invalid_payload', message: 'e.g. { "orderId": "…" }' }] });
    }
    // As ctx.signal delivers it: every run of the tenant waiting for it whose match the payload contains.
    const { woken, busy } = await signalRuns(context.db.admin, { event: wait.event, payload, tenantId: run.tenantId });
    if (!woken.includes(id) && !busy.includes(id)) {
      throw new FwError('conflict', `The payload does not match what run ${id} waits for (${JSON.stringify(wait.match)}).`, { diagnostics: [{ path: 'body.payload', code: 'signal_not_matched', message: 'Send a payload that contains the match.' }] });
    }
    console.info(`fw dashboard: sent signal ${wait.event} to workflow run ${run.workflow} ${id} (woke ${woken.length}) ${trace}`);
    return { event: wait.event, woken, busy };
  }
  if (!(await rerunFailedRun(context.db.admin, id))) {
    throw new FwError('conflict', `Workflow run ${id} is ${run.status}: only a failed run runs again.`, { diagnostics: [{ path: 'url', code: 'run_not_failed', message: 'Reload the outbox view.' }] });
  }
  console.info(`fw dashboard: reran failed workflow run ${run.workflow} ${id} ${trace}`);
  return { runId: id, rerun: true };
}
