import type { Kysely } from 'kysely';
import type { AiContext } from '../core/ai-context.ts';
import type { Auth } from '../core/entry-types.ts';
import { FwError } from '../core/errors.ts';
import type { OutboxEntry } from '../db/outbox.ts';

/** Who a handler runs for. */
export interface Caller {
  auth: Auth;
  traceId: string;
}

/** How a command's `ctx.startWorkflow` plans a start: the workflow and its args are checked now, the row written before commit. */
export type PlanWorkflowStart = (workflow: unknown, args: unknown, options: { idempotencyKey?: unknown }) => Promise<OutboxEntry & { runId: string }>;

/** The ctx of a query or liveQuery: its transaction and caller, and no AI (see {@link aiRefusal}). */
export function queryContext(kind: string, db: Kysely<any>, caller: Caller): Record<string, unknown> {
  const ctx: Record<string, unknown> = Object.create(aiRefusal(kind));
  ctx.db = db;
  ctx.auth = caller.auth;
  ctx.traceId = caller.traceId;
  return ctx;
}

/**
 * The ctx of a command: a query's, plus `ctx.emit` and `ctx.startWorkflow`, which collect rows into
 * `outbox` — written in the command's transaction just before it commits.
 */
export function commandContext(db: Kysely<any>, caller: Caller, outbox: OutboxEntry[], planStart: PlanWorkflowStart | undefined): Record<string, unknown> {
  const ctx = queryContext('command', db, caller);
  ctx.emit = (event: string, payload?: unknown) => {
    if (typeof event !== 'string' || event.length === 0) throw new TypeError('ctx.emit(event, payload): event must be a non-empty string');
    if (event.startsWith('fw.')) throw new TypeError(`ctx.emit('${event}'): event names starting with "fw." are fw's own; start workflows with ctx.startWorkflow(name, args).`);
    outbox.push({ event, payload: payload ?? null });
  };
  ctx.startWorkflow = async (name: string, args?: unknown, options?: { idempotencyKey?: string }) => {
    if (!planStart) throw new FwError('internal', 'ctx.startWorkflow is not available here: this runtime was assembled without workflows.');
    const { runId, ...start } = await planStart(name, args, options ?? {});
    outbox.push(start);
    return { runId };
  };
  return ctx;
}

/**
 * The ctx of actions, workflows and endpoints: statement-level `db` as the caller, the AI surface,
 * and what only the caller knows (an action's `event`, a workflow's `run` and `step`, an endpoint's
 * request parts).
 */
export function serverContext(db: Kysely<any>, caller: Caller, ai: AiContext | undefined, extras: Record<string, unknown>): Record<string, unknown> {
  return Object.assign(Object.create(ai ? Object.prototype : noAi), ai, { db, auth: caller.auth, traceId: caller.traceId }, extras);
}

// A runtime assembled without models (a bare test runtime): ctx.ai says so instead of being undefined.
const noAi: object = Object.freeze(
  Object.create(Object.prototype, {
    ai: { get: () => fail('ai') },
    agent: { get: () => fail('agent') },
  }),
);

function fail(name: string): never {
  throw new FwError('internal', `ctx.${name} is not available: this runtime was assembled without an AI runtime.`);
}

/**
 * `ctx.ai` and `ctx.agent` do not exist in commands, queries and liveQueries (their types say so); a
 * handler that reaches for them anyway (plain JS, a cast) gets an error that says where AI belongs.
 * One prototype per kind, made once: a request only creates its ctx object.
 */
function aiRefusal(kind: string): object {
  const known = aiRefusals.get(kind);
  if (known) return known;
  const reason = kind === 'command' ? 'commands run inside a database transaction' : 'queries stay fast, read-only and repeatable';
  const refuse = (name: string) => () => {
    throw new FwError('internal', `ctx.${name} is not available in a ${kind}: ${reason}. Run agents and models in an action, workflow or endpoint.`);
  };
  const proto: object = Object.freeze(Object.create(Object.prototype, { ai: { get: refuse('ai') }, agent: { get: refuse('agent') } }));
  aiRefusals.set(kind, proto);
  return proto;
}

const aiRefusals = new Map<string, object>();
