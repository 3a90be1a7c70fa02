import { inSpan } from '../telemetry/tracing.ts';
import { performance } from 'node:perf_hooks';
import type { AiRuntime } from '../ai/ai-runtime.ts';
import { createAutocommitKysely } from '../db/autocommit.ts';
import type { FwDatabase } from '../db/database.ts';
import type { Auth, StepInfo, WorkflowContext } from '../core/entries.ts';
import { isFwError } from '../core/errors.ts';
import { validateArgs } from '../core/validate-args.ts';
import { resolveTraceId } from '../core/trace.ts';
import type { DeliveryResult } from '../outbox/deliver.ts';
import type { OutboxRow } from '../outbox/store.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { type WorkflowStartPayload, workflowOfEvent } from './start.ts';
import { beginRun, cancelRequested, endRun, finishedSteps, saveStep } from './store.ts';

/** Thrown by `ctx.step` when the run was cancelled: ends the attempt without a retry. */
class RunCancelled extends Error {}

const MAX_MESSAGE = 1000;

/**
 * Runs one attempt of a workflow run (the outbox row that started it). Steps finished by an earlier
 * attempt return their stored output without running; each new step is stored as it finishes. The
 * result tells the outbox worker how the attempt ended: delivered (completed, cancelled, or nothing
 * left to do), or failed — permanently when retrying cannot help (unknown workflow, invalid args).
 */
export async function runWorkflowAttempt(row: OutboxRow, services: { app: AppDefinition; db: FwDatabase; ai: AiRuntime }): Promise<DeliveryResult> {
  const { app, db, ai } = services;
  const name = workflowOfEvent(row.event);
  const { runId, args: given } = (row.payload ?? {}) as Partial<WorkflowStartPayload>;
  if (typeof runId !== 'string') return permanent(name, new Error(`The start row of workflow "${name}" has no runId.`));
  const entry = app.entries.get(name);
  if (entry?.kind !== 'workflow') {
    return permanent(name, new Error(`No workflow named "${name}" in this app (was it renamed or removed?). Restore it, or cancel the run: fw workflows cancel ${runId}.`));
  }

  const run = await beginRun(db.admin, { runId, workflow: name, outboxId: row.id, attempt: row.attempts, tenantId: row.tenantId, userId: row.userId, traceId: row.traceId });
  if (run.status === 'completed' || run.status === 'cancelled') {
    return { ok: true, note: `Workflow run ${runId} had already ended (${run.status}); nothing ran.` };
  }
  if (run.cancelRequested) {
    await endRun(db.admin, runId, { status: 'cancelled' });
    return { ok: true, note: `Workflow run ${runId} was cancelled before attempt ${row.attempts}.` };
  }

  let args: unknown;
  try {
    args = await validateArgs(entry.args, given ?? {});
  } catch (error) {
    return permanent(name, error);
  }

  const auth: Auth = { kind: 'system', userId: row.userId, tenantId: row.tenantId, role: null };
  const traceId = row.traceId || resolveTraceId(undefined);
  const done = await finishedSteps(db.admin, runId);
  const started = new Set<string>();

  const step = async <T>(stepName: string, fn: (info: StepInfo) => T | Promise<T>): Promise<Awaited<T>> => {
    if (typeof stepName !== 'string' || stepName.length === 0 || stepName.length > 200) {
      throw new TypeError(`ctx.step(name, fn) in workflow "${name}": name must be a string of 1 to 200 characters.`);
    }
    if (typeof fn !== 'function') throw new TypeError(`ctx.step('${stepName}', fn) in workflow "${name}": fn must be a function.`);
    if (started.has(stepName)) {
      throw new TypeError(`ctx.step('${stepName}') ran twice in one run of workflow "${name}": give each step its own name (e.g. '${stepName}-2', or include the loop index).`);
    }
    started.add(stepName);
    if (done.has(stepName)) return done.get(stepName) as Awaited<T>;
    if (await cancelRequested(db.admin, runId)) throw new RunCancelled();
    const began = performance.now();
    const value = await inSpan(`fw.workflow.step ${stepName}`, { attributes: { 'fw.workflow': name, 'fw.workflow.step': stepName, 'fw.workflow.attempt': row.attempts } }, async () =>
      fn({ idempotencyKey: `${runId}:${stepName}`, attempt: row.attempts }),
    );
    const json = stepJson(name, stepName, value);
    // The stored value, not `value`: a resumed run gets JSON back, so the first run must too.
    return (await saveStep(db.admin, { runId, name: stepName, json, attempt: row.attempts, durationMs: performance.now() - began })) as Awaited<T>;
  };

  const ctx: WorkflowContext = {
    db: createAutocommitKysely(db, { auth, traceId, label: `workflow ${name}` }),
    auth,
    traceId,
    run: { id: runId, attempt: row.attempts },
    step,
    ...ai.context({ auth, traceId }),
  };
  let result: unknown;
  try {
    result = await entry.handler(ctx, args);
  } catch (error) {
    if (error instanceof RunCancelled) {
      await endRun(db.admin, runId, { status: 'cancelled' });
      return { ok: true, note: `Workflow run ${runId} was cancelled; it stopped before its next step.` };
    }
    return { ok: false, permanent: false, action: name, error, message: message(name, error) };
  }
  await endRun(db.admin, runId, { status: 'completed', json: JSON.stringify(result ?? null) });
  return { ok: true };
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

function permanent(workflow: string, error: unknown): DeliveryResult {
  return { ok: false, permanent: true, action: workflow, error, message: message(workflow, error) };
}

function message(workflow: string, error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const code = isFwError(error) ? ` (${error.code})` : '';
  return `${workflow}${code}: ${text.trim()}`.slice(0, MAX_MESSAGE);
}
