import { performance } from 'node:perf_hooks';
import type { StepInfo } from '../core/entries.ts';
import { resolveTraceId } from '../core/trace.ts';
import { type DeliveryResult, failedDelivery, type OutboxRow, rowAuth } from '../db/outbox.ts';
import { admitEntry, type EntryServices, invokeEntry } from '../entry/pipeline.ts';
import { inSpan } from '../telemetry/tracing.ts';
import { type WorkflowStartPayload, workflowOfEvent } from './start.ts';
import { announceWait, beginRun, cancelRequested, endRun, finishedSteps, readStep, saveStep, settleFailedRun, waitRun, type WaitingFor } from './store.ts';
import { systemClock } from '../core/clock.ts';
import { parseDuration } from '../core/duration.ts';
import { Suspension } from '../core/suspension.ts';

/** Thrown by `ctx.step` when the run was cancelled: ends the attempt without a retry (and without failing). */
class RunCancelled extends Suspension {
  constructor() {
    super('cancelled', 'The workflow run was cancelled.');
  }
}

/** What `ctx.waitForEvent` resolves to: the event's payload, or that the wait timed out. */
type WaitResult = { ok: true; payload: unknown } | { ok: false; timedOut: true };

function waitResult(stored: unknown): WaitResult {
  const outcome = stored as { payload?: unknown; timedOut?: boolean };
  return outcome.timedOut ? { ok: false, timedOut: true } : { ok: true, payload: outcome.payload ?? null };
}

/** A wait without a timeout: its row is due only when an event wakes it (year 9999). */
const NEVER = Date.UTC(9999, 0, 1);

/** Thrown by `ctx.sleep` when the run must wait: ends the attempt, and the run's row sleeps until then (a wait, not a failure). */
class RunSleeping extends Suspension {
  constructor(message: string) {
    super('wait', message);
  }
}

/**
 * Runs one attempt of a workflow run (the outbox row that started it) through the entry pipeline.
 * Steps finished by an earlier attempt return their stored output without running; each new step is
 * stored as it finishes. The result tells the outbox worker how the attempt ended: delivered
 * (completed, cancelled, or nothing left to do), or failed — permanently when retrying cannot help
 * (unknown workflow, invalid args).
 */
export async function runWorkflowAttempt(services: EntryServices, row: OutboxRow): Promise<DeliveryResult> {
  const { app, db } = services;
  const name = workflowOfEvent(row.event);
  const { runId, args: given } = (row.payload ?? {}) as Partial<WorkflowStartPayload>;
  if (typeof runId !== 'string') return failedDelivery(name, new Error(`The start row of workflow "${name}" has no runId.`), true);
  const entry = app.entries.get(name);
  if (entry?.kind !== 'workflow') {
    return failedDelivery(name, new Error(`No workflow named "${name}" in this app (was it renamed or removed?). Restore it, or cancel the run: fw workflows cancel ${runId}.`), true);
  }

  const run = await beginRun(db.admin, { runId, workflow: name, outboxId: row.id, attempt: row.attempts, tenantId: row.tenantId, userId: row.userId, traceId: row.traceId });
  if (!run) {
    return failedDelivery(name, new Error(`The start row names workflow run ${runId}, which belongs to another tenant: refused, and that run was not touched.`), true);
  }
  if (run.status === 'completed' || run.status === 'cancelled') {
    return { ok: true, note: `Workflow run ${runId} had already ended (${run.status}); nothing ran.` };
  }
  if (run.cancelRequested) {
    await endRun(db.admin, runId, { status: 'cancelled' });
    return { ok: true, note: `Workflow run ${runId} was cancelled before attempt ${row.attempts}.` };
  }

  // As the one who started it (a command's caller, an event's emitter), unless it runs as the system.
  const auth = rowAuth(row, entry.options.runAs);
  const traceId = row.traceId || resolveTraceId(undefined);
  const call = { name, auth, traceId, external: false, args: given ?? {} };
  let args: unknown;
  try {
    args = await admitEntry(services, entry, call);
  } catch (error) {
    return failedDelivery(name, error, true);
  }

  const done = await finishedSteps(db.admin, runId);
  const started = new Set<string>();
  let cancelled = false;
  /** Set when `ctx.sleep` or `ctx.waitForEvent` ended the attempt (kept here: a handler that catches the throw still sleeps). */
  let sleeping: { waitingFor: WaitingFor; resumeAt: number } | undefined;
  const clock = services.clock ?? systemClock;
  const begin = (method: string, stepName: unknown) => {
    // A handler that caught a sleep's throw runs no further step in this attempt.
    if (sleeping) throw new RunSleeping(`Workflow run ${runId} is asleep: ctx.${method}() cannot run until it wakes.`);
    if (typeof stepName !== 'string' || stepName.length === 0 || stepName.length > 200) {
      throw new TypeError(`ctx.${method}(name, …) in workflow "${name}": name must be a string of 1 to 200 characters.`);
    }
    if (started.has(stepName)) {
      throw new TypeError(`ctx.${method}('${stepName}') ran twice in one run of workflow "${name}": give each step its own name (e.g. '${stepName}-2', or include the loop index).`);
    }
    started.add(stepName);
  };
  const stopIfCancelled = async () => {
    if (await cancelRequested(db.admin, runId)) {
      cancelled = true;
      throw new RunCancelled();
    }
  };
  const sleepUntil = async (method: string, stepName: string, until: () => number): Promise<void> => {
    begin(method, stepName);
    let wake: number;
    if (done.has(stepName)) wake = Date.parse((done.get(stepName) as { until: string }).until);
    else {
      await stopIfCancelled();
      // The wake-up time is a step of its own: stored once, so every later attempt waits for the same time.
      const json = JSON.stringify({ value: { until: new Date(until()).toISOString() } });
      const stored = (await saveStep(db.admin, { runId, name: stepName, json, attempt: row.attempts, durationMs: 0 })) as { until: string };
      wake = Date.parse(stored.until);
    }
    if (clock.now() >= wake) return;
    sleeping = { waitingFor: { kind: 'sleep', step: stepName, until: new Date(wake).toISOString() }, resumeAt: wake };
    throw new RunSleeping(`Workflow run ${runId} sleeps until ${new Date(wake).toISOString()} (ctx.${method}('${stepName}')).`);
  };
  const sleep = (stepName: string, duration: unknown) => {
    const ms = parseDuration(duration, `ctx.sleep('${String(stepName)}', duration) in workflow "${name}"`);
    return sleepUntil('sleep', stepName, () => clock.now() + ms);
  };
  const sleepUntilTime = (stepName: string, at: unknown) => {
    const time = at instanceof Date ? at.getTime() : at;
    if (typeof time !== 'number' || !Number.isFinite(time)) {
      return Promise.reject(new TypeError(`ctx.sleepUntil('${String(stepName)}', until) in workflow "${name}": until must be a Date or epoch milliseconds.`));
    }
    return sleepUntil('sleepUntil', stepName, () => time);
  };
  const waitForEvent = async (stepName: string, event: unknown, options: { match?: unknown; timeout?: unknown } = {}): Promise<WaitResult> => {
    const where = `ctx.waitForEvent('${String(stepName)}', '${String(event)}') in workflow "${name}"`;
    if (typeof event !== 'string' || event.length === 0) throw new TypeError(`${where}: the event must be the name given to ctx.signal(name, payload).`);
    const match = options.match ?? {};
    if (typeof match !== 'object' || match === null || Array.isArray(match)) throw new TypeError(`${where}: match must be an object of payload fields, e.g. { orderId }.`);
    const timeoutMs = options.timeout === undefined ? undefined : parseDuration(options.timeout, where);
    begin('waitForEvent', stepName);
    if (done.has(stepName)) return waitResult(done.get(stepName));
    await stopIfCancelled();
    // When the wait times out: fixed the first time the run gets here (a step of its own), as a sleep's.
    const deadlineStep = `${stepName}#deadline`;
    const deadline = done.has(deadlineStep)
      ? (done.get(deadlineStep) as { until: string | null }).until
      : ((await saveStep(db.admin, {
          runId,
          name: deadlineStep,
          json: JSON.stringify({ value: { until: timeoutMs === undefined ? null : new Date(clock.now() + timeoutMs).toISOString() } }),
          attempt: row.attempts,
          durationMs: 0,
        })) as { until: string | null }).until;
    const waitingFor: WaitingFor = { kind: 'event', step: stepName, event, match: match as Record<string, unknown>, until: deadline };
    // Announced before looking: a signal that finds the run waiting stores its outcome, and one that
    // came before this point is not for this wait.
    await announceWait(db.admin, runId, waitingFor);
    const outcome = await readStep(db.admin, runId, stepName);
    if (outcome !== undefined) return waitResult(outcome);
    if (deadline !== null && clock.now() >= Date.parse(deadline)) {
      return waitResult(await saveStep(db.admin, { runId, name: stepName, json: JSON.stringify({ value: { timedOut: true } }), attempt: row.attempts, durationMs: 0 }));
    }
    sleeping = { waitingFor, resumeAt: deadline === null ? NEVER : Date.parse(deadline) };
    throw new RunSleeping(`Workflow run ${runId} waits for event "${event}" (ctx.waitForEvent('${stepName}')).`);
  };
  const step = async <T>(stepName: string, fn: (info: StepInfo) => T | Promise<T>): Promise<Awaited<T>> => {
    if (typeof fn !== 'function') throw new TypeError(`ctx.step('${String(stepName)}', fn) in workflow "${name}": fn must be a function.`);
    begin('step', stepName);
    if (done.has(stepName)) return done.get(stepName) as Awaited<T>;
    await stopIfCancelled();
    const began = performance.now();
    const value = await inSpan(`fw.workflow.step ${stepName}`, { attributes: { 'fw.workflow': name, 'fw.workflow.step': stepName, 'fw.workflow.attempt': row.attempts } }, async () =>
      fn({ idempotencyKey: `${runId}:${stepName}`, attempt: row.attempts }),
    );
    const json = stepJson(name, stepName, value);
    // The stored value, not `value`: a resumed run gets JSON back, so the first run must too.
    return (await saveStep(db.admin, { runId, name: stepName, json, attempt: row.attempts, durationMs: performance.now() - began })) as Awaited<T>;
  };

  let result: unknown;
  try {
    result = await invokeEntry(services, entry, { ...call, args, admitted: true, context: { run: { id: runId, attempt: row.attempts }, step, sleep, sleepUntil: sleepUntilTime, waitForEvent } });
  } catch (error) {
    if (sleeping) return rest(runId, sleeping);
    if (cancelled) {
      await endRun(db.admin, runId, { status: 'cancelled' });
      return { ok: true, note: `Workflow run ${runId} was cancelled; it stopped before its next step.` };
    }
    return failedDelivery(name, error, false);
  }
  if (sleeping) return rest(runId, sleeping);
  await endRun(db.admin, runId, { status: 'completed', json: JSON.stringify(result ?? null) });
  return { ok: true };

  /** The run gives its worker back: `sleeping` until the time (or an event), its start row due then (not an attempt). */
  async function rest(id: string, wait: { waitingFor: WaitingFor; resumeAt: number }): Promise<DeliveryResult> {
    await waitRun(db.admin, id, wait.waitingFor);
    return { ok: true, resumeAt: wait.resumeAt };
  }
}

/** A run's state follows its start row: `retrying` while the outbox retries it, `failed` once dead. */
export async function settleWorkflowRun(services: EntryServices, row: OutboxRow, status: 'retrying' | 'failed', error: string): Promise<void> {
  const runId = (row.payload as { runId?: unknown } | null)?.runId;
  if (typeof runId !== 'string') return;
  const run = { runId, workflow: workflowOfEvent(row.event), outboxId: row.id, attempt: row.attempts, tenantId: row.tenantId, userId: row.userId, traceId: row.traceId };
  await settleFailedRun(services.db.admin, run, { status, error });
}

function stepJson(workflow: string, stepName: string, value: unknown): string {
  try {
    return JSON.stringify({ value });
  } catch (error) {
    throw new TypeError(
      `ctx.step('${stepName}') in workflow "${workflow}" returned a value that is not JSON (${error instanceof Error ? error.message : String(error)}): steps store their result to resume from it; return plain data.`,
    );
  }
}
