/**
 * How a workflow run is started: one `_fw_outbox` row, event `fw.workflow:<name>`, payload
 * `{ runId, args }`, idempotency key `workflow:<runId>`. Written in a command's transaction
 * (`ctx.startWorkflow`, through `_fw.enqueue` as the command's verified caller) or by the worker when it
 * delivers an event a workflow listens `on` (as the event's caller); either way the insert skips a row
 * whose key exists, so a start repeated with the same key (a retried delivery, a repeated idempotency
 * key) starts nothing new. A run belongs to the tenant that started it: its id is derived from the
 * tenant too, so two tenants' equal keys name two runs.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { EntryDefinition } from '../core/entry-types.ts';
import { FwError, isFwError } from '../core/errors.ts';
import { validateArgs } from '../core/validate-args.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { enqueueAsOwner, type OutboxEntry, type OutboxRow } from '../db/outbox.ts';

export const WORKFLOW_EVENT_PREFIX = 'fw.workflow:';

export function isWorkflowEvent(event: string): boolean {
  return event.startsWith(WORKFLOW_EVENT_PREFIX);
}

export function workflowOfEvent(event: string): string {
  return event.slice(WORKFLOW_EVENT_PREFIX.length);
}

export function runOutboxKey(runId: string): string {
  return `workflow:${runId}`;
}

/** What a start row carries. */
export interface WorkflowStartPayload {
  runId: string;
  /** The args as the starter gave them; validated again (with transforms) when the run executes. */
  args: unknown;
}

/** The outbox row that starts one run, and the run's id. */
export interface WorkflowStart extends OutboxEntry {
  event: string;
  payload: WorkflowStartPayload;
  idempotencyKey: string;
  runId: string;
}

/**
 * A run id: random, or — given an idempotency key — derived from the tenant, the workflow and the key,
 * so the same start in the same tenant always names the same run, and another tenant's equal key
 * another run (a UUID made of their SHA-256, version nibble 8).
 */
export function workflowRunId(workflow: string, idempotencyKey: string | undefined, tenantId: string | null): string {
  if (idempotencyKey === undefined) return randomUUID();
  const hex = createHash('sha256').update(`${tenantId ?? ''}\0${workflow}\0${idempotencyKey}`).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The workflow named `name`, or an error that lists the ones there are. */
export function findWorkflow(app: AppDefinition, name: string): EntryDefinition<'workflow'> {
  const entry = app.entries.get(name);
  if (entry?.kind === 'workflow') return entry as EntryDefinition<'workflow'>;
  const known = [...app.entries].filter(([, e]) => e.kind === 'workflow').map(([n]) => n);
  throw new FwError('internal', `No workflow named "${name}". ${known.length ? `Workflows: ${known.sort().join(', ')}.` : 'Add one in src/workflows/<name>.ts.'}`);
}

/**
 * Plans a start: checks the workflow exists and the args pass its schema now (so the start fails at
 * once, rather than the run later: a 400 `validation_failed` naming the argument), and names the run.
 */
export async function planWorkflowStart(app: AppDefinition, tenantId: string | null, name: unknown, args: unknown, options: { idempotencyKey?: unknown } = {}): Promise<WorkflowStart> {
  if (typeof name !== 'string' || name.length === 0) throw new TypeError('ctx.startWorkflow(workflow, args): workflow must be the workflow’s name, e.g. ctx.startWorkflow(\'onboard\', { … }).');
  const key = options.idempotencyKey;
  if (key !== undefined && (typeof key !== 'string' || key.length === 0 || key.length > 200)) {
    throw new TypeError('ctx.startWorkflow(…, { idempotencyKey }) must be a string of 1 to 200 characters.');
  }
  const entry = findWorkflow(app, name);
  const given = args ?? {};
  await validateArgs(entry.args, given);
  const runId = workflowRunId(name, key as string | undefined, tenantId);
  return { event: `${WORKFLOW_EVENT_PREFIX}${name}`, payload: { runId, args: given }, idempotencyKey: runOutboxKey(runId), runId };
}

/**
 * A command's `ctx.startWorkflow`: as {@link planWorkflowStart}, but args the workflow refuses are the
 * command's bug — its caller sent nothing wrong — so they fail the command as `internal`, naming the call.
 */
export async function planCommandStart(app: AppDefinition, tenantId: string | null, name: unknown, args: unknown, options: { idempotencyKey?: unknown } = {}): Promise<WorkflowStart> {
  try {
    return await planWorkflowStart(app, tenantId, name, args, options);
  } catch (error) {
    if (!isFwError(error) || error.code !== 'validation_failed') throw error;
    throw new FwError('internal', `ctx.startWorkflow('${String(name)}'): ${error.message}`, { cause: error });
  }
}

/** The workflows that start on `event`, by name. */
export function workflowsOn(app: AppDefinition, event: string): string[] {
  return [...app.entries]
    .filter(([, entry]) => entry.kind === 'workflow' && entry.options.on === event)
    .map(([name]) => name)
    .sort();
}

/**
 * Starts the workflows listening `on` a delivered event: one run per event and workflow, whose id
 * comes from the event's idempotency key, so a redelivery names the same runs and starts nothing new.
 * Written as the owner (the worker), as the event's caller: the runs run as the one who emitted it.
 * Throws before writing anything when a workflow refuses the payload (retrying cannot fix that).
 */
export async function startEventWorkflows(admin: Kysely<any>, app: AppDefinition, row: OutboxRow, names: readonly string[]): Promise<void> {
  const starts: WorkflowStart[] = [];
  for (const name of names) starts.push(await planWorkflowStart(app, row.tenantId, name, row.payload ?? {}, { idempotencyKey: `event:${row.idempotencyKey}` }));
  const caller = { tenantId: row.tenantId, userId: row.userId, traceId: row.traceId, kind: row.callerKind, role: row.callerRole };
  await enqueueAsOwner(admin, caller, starts.map(({ runId: _, ...start }) => start));
}
