import { type Kysely, sql } from 'kysely';
import { type Clock, systemClock } from '../core/clock.ts';
import type { AiContext } from '../core/ai-context.ts';
import type { Auth } from '../core/entry-types.ts';
import { FwError } from '../core/errors.ts';
import type { OutboxEntry } from '../db/outbox.ts';
import { proofOf } from '../db/proof-request.ts';

/** Who a handler runs for. */
export interface Caller {
  auth: Auth;
  traceId: string;
}

/**
 * How a command's `ctx.startWorkflow` plans a start in the caller's tenant (a run belongs to it): the
 * workflow and its args are checked now, the row written before commit.
 */
export type PlanWorkflowStart = (tenantId: string | null, workflow: unknown, args: unknown, options: { idempotencyKey?: unknown }) => Promise<OutboxEntry & { runId: string }>;

/** How a command's `ctx.scheduler` plans a call: the target and its args are checked now, the row written before commit. */
export type PlanScheduledCall = (name: unknown, args: unknown, at: Date, where: string) => Promise<OutboxEntry & { id: string; idempotencyKey: string }>;

/** What a command's ctx needs beyond its transaction: how to plan workflow starts and scheduled calls, and the time. */
export interface CommandServices {
  planWorkflowStart?: PlanWorkflowStart | undefined;
  planScheduledCall?: PlanScheduledCall | undefined;
  clock?: Clock | undefined;
}

/** The ctx of a query or liveQuery: its transaction and caller, the runtime's time, and no AI (see {@link aiRefusal}). */
export function queryContext(kind: string, db: Kysely<any>, caller: Caller, clock: Clock = systemClock): Record<string, unknown> {
  const ctx: Record<string, unknown> = Object.create(aiRefusal(kind));
  ctx.db = db;
  ctx.auth = caller.auth;
  ctx.traceId = caller.traceId;
  ctx.now = nowOf(clock);
  return ctx;
}

/** The ctx of an agent's `aiTool`: its transaction and caller, what the agent adds (its secrets), and the runtime's time. */
export function toolContext(db: Kysely<any>, caller: Caller, context: Record<string, unknown> | undefined, clock: Clock = systemClock): Record<string, unknown> {
  return { db, ...caller, ...context, now: nowOf(clock) };
}

/**
 * `ctx.now()`: the runtime's clock (tests move it with `advanceTime`; SQL's now() is the database's), read
 * once per handler invocation — as Convex freezes `Date.now()` in a mutation — so a handler sees one
 * instant however long it runs: `runAfter(due - ctx.now())` cannot go negative between two reads.
 */
function nowOf(clock: Clock): () => Date {
  const at = clock.now();
  return () => new Date(at);
}

/**
 * The ctx of a command: a query's, plus `ctx.emit` and `ctx.startWorkflow`, which collect rows into
 * `outbox` — written in the command's transaction just before it commits.
 */
export function commandContext(db: Kysely<any>, caller: Caller, outbox: OutboxEntry[], services: CommandServices): Record<string, unknown> {
  const planStart = services.planWorkflowStart;
  const ctx = queryContext('command', db, caller, services.clock);
  const now = ctx.now as () => Date;
  ctx.emit = (event: string, payload?: unknown) => {
    if (typeof event !== 'string' || event.length === 0) throw new TypeError('ctx.emit(event, payload): event must be a non-empty string');
    if (event.startsWith('fw.')) throw new TypeError(`ctx.emit('${event}'): event names starting with "fw." are fw's own; start workflows with ctx.startWorkflow(name, args).`);
    outbox.push({ event, payload: payload ?? null });
  };
  ctx.startWorkflow = async (name: string, args?: unknown, options?: { idempotencyKey?: string }) => {
    if (!planStart) throw new FwError('internal', 'ctx.startWorkflow is not available here: this runtime was assembled without workflows.');
    const { runId, ...start } = await planStart(caller.auth.tenantId, name, args, options ?? {});
    outbox.push(start);
    return { runId };
  };
  ctx.signal = (name: string, payload?: unknown) => {
    if (typeof name !== 'string' || name.length === 0 || name.length > 200) throw new TypeError('ctx.signal(name, payload): name must be a string of 1 to 200 characters.');
    if (payload !== undefined && payload !== null && (typeof payload !== 'object' || Array.isArray(payload))) {
      throw new TypeError(`ctx.signal('${name}', payload): the payload is an object (waiting runs match its fields), or nothing.`);
    }
    // `fw.signal:` rows are delivered to the workflow runs waiting for them (workflows/signals.ts).
    outbox.push({ event: `fw.signal:${name}`, payload: payload ?? null });
  };
  ctx.scheduler = scheduler(db, outbox, services, now);
  return ctx;
}

/**
 * A command's `ctx.scheduler`: calls planned now and written with the command's other outbox rows just
 * before it commits (scheduled exactly when it commits), their delays counted from the handler's
 * `ctx.now()`; `cancel` of a call planned in this same command drops it from that list, any other goes
 * through `_fw.cancel_call` in this transaction, proven by fw (handler SQL cannot cancel anything):
 * the caller's own calls, or with `{ anyCaller: true }` any call of its tenant.
 */
function scheduler(db: Kysely<any>, outbox: OutboxEntry[], services: CommandServices, now: () => Date) {
  const plan = async (where: string, at: Date, name: unknown, args: unknown): Promise<string> => {
    if (!services.planScheduledCall) throw new FwError('internal', `${where} is not available here: this runtime was assembled without scheduled calls.`);
    const { id, ...call } = await services.planScheduledCall(name, args, at, where);
    outbox.push(call);
    return id;
  };
  return Object.freeze({
    runAfter(delayMs: number, name: string, args?: unknown): Promise<string> {
      const where = `ctx.scheduler.runAfter(${String(delayMs)}, '${String(name)}')`;
      if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) {
        return Promise.reject(new TypeError(`${where}: the delay must be a number of milliseconds ≥ 0.`));
      }
      return plan(where, new Date(now().getTime() + delayMs), name, args);
    },
    runAt(at: Date | number, name: string, args?: unknown): Promise<string> {
      const where = `ctx.scheduler.runAt(…, '${String(name)}')`;
      return plan(where, typeof at === 'number' ? new Date(at) : at, name, args);
    },
    async cancel(id: string, options?: { anyCaller?: boolean }): Promise<boolean> {
      if (typeof id !== 'string' || id.length === 0) throw new TypeError('ctx.scheduler.cancel(id): id must be the string runAfter or runAt returned.');
      const key = `call:${id}`;
      const planned = outbox.findIndex((row) => row.idempotencyKey === key);
      if (planned >= 0) {
        outbox.splice(planned, 1);
        return true;
      }
      const scope = options?.anyCaller === true ? 'tenant' : 'own';
      const result = await sql<{ cancelled: boolean }>`select "_fw"."cancel_call"(${key}, ${scope}, ${proofOf('cancel_call', `${key}|${scope}`)}) as cancelled`.execute(db);
      return result.rows[0]?.cancelled === true;
    },
  });
}

/**
 * The ctx of actions, workflows and endpoints: statement-level `db` as the caller, the AI surface,
 * and what only the caller knows (an action's `event`, a workflow's `run` and `step`, an endpoint's
 * request parts).
 */
export function serverContext(db: Kysely<any>, caller: Caller, ai: AiContext | undefined, extras: Record<string, unknown>, clock: Clock = systemClock): Record<string, unknown> {
  return Object.assign(Object.create(ai ? Object.prototype : noAi), ai, { db, auth: caller.auth, traceId: caller.traceId, now: nowOf(clock) }, extras);
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
