import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { AiContext } from './ai-context.ts';
import {
  type AppDatabase,
  type ArgsInput,
  type Auth,
  type Command,
  type CallArgsParameter,
  type CallName,
  type EmitPayload,
  type EntryDefinition,
  type EntryKind,
  type EntryTypes,
  entryBrand,
  type EventName,
  type InferArgs,
  type InferArgsInput,
  type PolicyCheck,
  type PolicyName,
  type Query,
  type WorkflowName,
} from './entry-types.ts';

export type { AppDatabase, ArgsInput, Auth, CallArgs, CallArgsParameter, CallName, EmitPayload, EntryDefinition, EntryInput, EntryKind, EntryResult, EntryTypes, EventName, EventPayload, InferArgs, InferArgsInput, PolicyCheck, PolicyName, Register, WorkflowName } from './entry-types.ts';
export type { Command, Query } from './entry-types.ts';

export interface QueryContext {
  /** Kysely bound to this request's transaction (read-only for queries). */
  db: Kysely<AppDatabase>;
  auth: Auth;
  traceId: string;
  /**
   * The runtime's time, the clock scheduled calls, crons and workflow sleeps fall due by: the system
   * time, or under `fwjs/testing` the clock `advanceTime` moves. Use it instead of `new Date()` for
   * decisions a test should control ("pending more than 7 days"). SQL's `now()` is the database's clock,
   * which `advanceTime` does not move: pass `ctx.now()` as a bound parameter instead.
   *
   * @example
   *   const cutoff = new Date(ctx.now().getTime() - 7 * 86_400_000);
   *   await ctx.db.updateTable('tickets').set({ status: 'closed' }).where('status', '=', 'pending').where('updated_at', '<', cutoff).execute();
   */
  now(): Date;
}

export interface CommandContext extends QueryContext {
  /** Records a domain event in the outbox, in this command's transaction (delivered after commit). */
  emit<N extends EventName>(event: N, ...payload: EmitPayload<N>): void;
  /**
   * Starts the workflow named `workflow` (its file name in `src/workflows/`) with `args`, after this
   * command commits (nothing starts when it rolls back). The args are validated now. With an
   * `idempotencyKey`, starting the same workflow with the same key again starts nothing new and returns
   * the first run's id. See docs/workflows.md.
   *
   * @example
   *   const { runId } = await ctx.startWorkflow('onboardCustomer', { customerId }, { idempotencyKey: customerId });
   */
  startWorkflow(workflow: WorkflowName, args?: unknown, options?: { idempotencyKey?: string }): Promise<{ runId: string }>;
  /** Calls of commands and actions later, scheduled in this command's transaction. See docs/scheduling.md. */
  scheduler: Scheduler;
  /**
   * Sends signal `name` after this command commits: it wakes the workflow runs of this tenant that wait
   * for it (`ctx.waitForEvent(step, name, { match })`) and whose `match` the payload's fields contain.
   * See docs/workflows.md.
   */
  signal(name: string, payload?: Record<string, unknown>): void;
}

/**
 * A command's `ctx.scheduler`. A call is scheduled if and only if the command commits; it runs once,
 * as this command's caller (tenant, user, role, and the target's policy), through the same pipeline
 * as a request; its args are checked against the target's `args` now. See docs/scheduling.md.
 *
 * @example
 *   const id = await ctx.scheduler.runAfter(24 * 3600_000, 'sendReminder', { ticketId });
 *   // later, in another command of the same tenant:
 *   await ctx.scheduler.cancel(id);
 */
export interface Scheduler {
  /** Calls the command or action `name` with `args` after `delayMs` milliseconds; resolves to the call's id. */
  runAfter<N extends CallName>(delayMs: number, name: N, ...args: CallArgsParameter<N>): Promise<string>;
  /** Calls the command or action `name` with `args` at `at` (a Date or epoch ms); resolves to the call's id. */
  runAt<N extends CallName>(at: Date | number, name: N, ...args: CallArgsParameter<N>): Promise<string>;
  /**
   * Cancels a call that has not started: true when it did (and the cancel commits with this command),
   * false when the call ran, is running, was cancelled, or is not the caller's to cancel. A caller
   * cancels the calls it scheduled; with `{ anyCaller: true }` any call of its tenant — for a command
   * whose policy already says who may (an admin's "cancel reminder"). Cron ticks belong to the scheduler.
   */
  cancel(id: string, options?: { anyCaller?: boolean }): Promise<boolean>;
}

/**
 * The context of actions, workflows and endpoints: a query context plus the AI surface
 * (`ctx.agent.run`, `ctx.ai.runAgent`, `ctx.ai.generateText`, `ctx.ai.generateStructured`). Commands,
 * queries and liveQueries do not have it: they run in a database transaction, where a model call
 * has no place.
 */
export interface ServerContext extends QueryContext, AiContext {}

/** The event an action is handling, as the outbox worker delivers it. */
export interface ActionEvent {
  /** The event name given to `ctx.emit`. */
  name: string;
  /** The payload given to `ctx.emit`, as stored (JSON). */
  payload: unknown;
  /** The outbox row's id. */
  id: string;
  /**
   * The same on every attempt to deliver this event: delivery is at-least-once, so use it to make
   * the handler's effects happen once (a unique key in your own table, an `Idempotency-Key` header).
   */
  idempotencyKey: string;
  /** 1 on the first attempt, then 2, 3, … */
  attempt: number;
}

/**
 * The context of an action: the server context plus the event. `ctx.db` is not one transaction: each
 * statement commits on its own, as the event's user and tenant (so a model call never holds a
 * transaction open); group statements with `ctx.db.transaction().execute(async (trx) => …)`.
 */
export interface ActionContext extends ServerContext {
  event: ActionEvent;
}



interface EntryConfig<A extends ArgsInput | undefined, C, R> {
  args?: A;
  policy?: PolicyName;
  description?: string;
  handler: (ctx: C, args: InferArgs<A>) => R | Promise<R>;
}

/**
 * How a command, query or liveQuery appears to agents as an auto-tool: `false` keeps it away from
 * every agent; `needsApproval` overrides the default (commands need approval, reads do not).
 */
export type EntryToolOption = false | { needsApproval?: boolean; description?: string };

interface CallableEntryConfig<A extends ArgsInput | undefined, C, R> extends EntryConfig<A, C, R> {
  tool?: EntryToolOption;
}

const emptyArgs = z.object({}).strict();

function toArgsSchema(args: ArgsInput | undefined): StandardSchemaV1 {
  if (args === undefined) return emptyArgs;
  if ('~standard' in args) return args as StandardSchemaV1;
  return z.object(args as z.ZodRawShape).strict();
}

function define<K extends EntryKind>(kind: K, config: EntryConfig<any, any, any>): EntryDefinition<K> {
  if (typeof config?.handler !== 'function') {
    throw new TypeError(`fw: ${kind}({...}) needs a handler: ${kind}({ args, handler: async (ctx, args) => … })`);
  }
  const { args, policy, description, handler, ...options } = config as EntryConfig<any, any, any> & Record<string, unknown>;
  return Object.freeze({
    [entryBrand]: true as const,
    kind,
    args: toArgsSchema(args),
    policy: policy ?? 'user',
    ...(description === undefined ? {} : { description }),
    handler,
    options,
  });
}

export function isEntry(value: unknown): value is EntryDefinition {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[entryBrand] === true;
}

/**
 * A transactional write. Runs read-write in its own transaction; commits when the handler returns,
 * rolls back when it throws.
 *
 * @example
 *   export default command({
 *     args: { title: z.string().min(1) },
 *     handler: (ctx, args) => ctx.db.insertInto('notes').values(args).returningAll().executeTakeFirstOrThrow(),
 *   });
 */
export function command<A extends ArgsInput | undefined = undefined, R = unknown>(
  config: CallableEntryConfig<A, CommandContext, R>,
): Command<InferArgsInput<A>, InferArgs<A>, Awaited<R>> {
  return define('command', config);
}

/** A one-shot read, in a read-only transaction (a write inside it is refused by the database). */
export function query<A extends ArgsInput | undefined = undefined, R = unknown>(
  config: CallableEntryConfig<A, QueryContext, R>,
): Query<InferArgsInput<A>, InferArgs<A>, Awaited<R>, 'query'> {
  return define('query', config);
}

/** The shortest refresh a liveQuery may declare: a rerun a second per group at most. */
export const MIN_REFRESH_MS = 1000;

/**
 * A read that clients can subscribe to (`useLiveQuery`, `GET /live/:name`); same rules as `query`.
 * fw records the tables it reads from its Kysely queries and re-runs it when one of them changes.
 * Raw SQL statements (`sql\`…\`.execute(ctx.db)`) hide their tables: declare them in `reads`.
 * An answer that changes with time alone (`where due < now()`) needs `refreshMs`: how often to rerun it
 * while anyone subscribes (at least 1000); fw refuses a liveQuery whose SQL reads the clock without it.
 *
 * @example
 *   export default liveQuery({ handler: (ctx) => ctx.db.selectFrom('notes').selectAll().execute() });
 */
export function liveQuery<A extends ArgsInput | undefined = undefined, R = unknown>(
  config: CallableEntryConfig<A, QueryContext, R> & { reads?: readonly string[]; refreshMs?: number },
): Query<InferArgsInput<A>, InferArgs<A>, Awaited<R>, 'liveQuery'> {
  const reads: unknown = (config as { reads?: unknown }).reads;
  if (reads !== undefined && (!Array.isArray(reads) || !reads.every((t) => typeof t === 'string' && t.length > 0))) {
    throw new TypeError("fw: liveQuery({ reads }) must be a list of table names, e.g. reads: ['notes'].");
  }
  const refreshMs: unknown = (config as { refreshMs?: unknown }).refreshMs;
  if (refreshMs !== undefined && (typeof refreshMs !== 'number' || !Number.isInteger(refreshMs) || refreshMs < MIN_REFRESH_MS)) {
    throw new TypeError(`fw: liveQuery({ refreshMs }) must be a whole number of milliseconds ≥ ${MIN_REFRESH_MS}, e.g. refreshMs: 60_000.`);
  }
  return define('liveQuery', config);
}

/**
 * Who durable work runs as: `caller` (the default) — the one who caused it (the command's caller, the
 * event's emitter), with their tenant, user, auth kind and role, so their policies and row-level
 * security apply to everything it does — or `system`: the system, in that caller's tenant.
 */
export type RunAs = 'caller' | 'system';

function checkRunAs(kind: string, config: { runAs?: unknown }): void {
  const runAs = config.runAs;
  if (runAs !== undefined && runAs !== 'caller' && runAs !== 'system') {
    throw new TypeError(`fw: ${kind}({ runAs }) must be 'caller' (the default: as whoever caused it) or 'system' (as the system, in the caller's tenant).`);
  }
}

/**
 * Work that runs after a commit (network, AI, secrets allowed): the outbox worker calls it for every
 * event named `on`, with the event's payload as args, as the caller who emitted it (its tenant, user,
 * auth kind and role; `runAs: 'system'` for the system in that tenant). Delivery is at-least-once — make
 * the handler idempotent with `ctx.event.idempotencyKey` (docs/events.md). Never callable over HTTP,
 * whatever its `policy`.
 *
 * @example
 *   export default action({
 *     on: 'ticket.created',
 *     args: { ticketId: z.uuid() },
 *     handler: async (ctx, args) => { … ctx.ai.generateStructured({ … }) … },
 *   });
 */
export function action<A extends ArgsInput | undefined = undefined, R = unknown>(
  config: Omit<EntryConfig<A, ActionContext, R>, 'handler'> & { on?: EventName; runAs?: RunAs; handler: (ctx: ActionContext, args: ActionArgs<A>) => R | Promise<R> },
): EntryDefinition<'action'> {
  const on: unknown = (config as { on?: unknown }).on;
  if (on !== undefined && (typeof on !== 'string' || on.length === 0)) {
    throw new TypeError("fw: action({ on }) must be the event name given to ctx.emit, e.g. on: 'ticket.created'.");
  }
  checkRunAs('action', config);
  // Events carry payloads the action did not choose (an external effect's is {service, entry, external}):
  // an action that declares no args takes the payload as it is, rather than refusing every event.
  return define('action', config.args === undefined ? { ...config, args: anyPayload } : (config as EntryConfig<A, ActionContext, R>));
}

/** What an action's handler gets: its declared args, or the event's payload, unchecked, when it declares none. */
export type ActionArgs<A> = [A] extends [undefined] ? unknown : InferArgs<A>;

const anyPayload = z.unknown();

/** The run a workflow handler is executing. */
export interface WorkflowRun {
  /** The run's id (a UUID): the same on every attempt. */
  id: string;
  /** 1 on the first attempt, then 2, 3, … (a retry after a failure, or after a worker died). */
  attempt: number;
}

/** What a step's function gets: a key that stays the same across every attempt at this step. */
export interface StepInfo {
  /** `<runId>:<step name>`: pass it to services as their idempotency key. */
  idempotencyKey: string;
  /** The run's attempt that is running the step. */
  attempt: number;
}

/**
 * The context of a workflow: the server context plus durable steps. `ctx.db` commits each statement
 * on its own (as in actions).
 */
export interface WorkflowContext extends ServerContext {
  run: WorkflowRun;
  /**
   * Runs `fn` once per run: its result (JSON) is stored when it returns, and a later attempt of the
   * run — after a failure, a crash or a restart — gets the stored result instead of running `fn` again.
   * Step names are unique within a run. A cancelled run stops before its next step.
   */
  step<T>(name: string, fn: (step: StepInfo) => T | Promise<T>): Promise<Awaited<T>>;
  /**
   * A durable pause, a step named `name`: the run gives its worker back and resumes — in any process,
   * after a restart too — once `duration` has passed (milliseconds, or `'30s'`, `'15m'`, `'2h'`, `'7d'`).
   * The wake-up time is stored when the sleep is first reached, so a resumed run does not sleep again.
   */
  sleep(name: string, duration: number | Duration): Promise<void>;
  /** As {@link sleep}, until `until` (a Date or epoch ms); a time already past returns at once. */
  sleepUntil(name: string, until: Date | number): Promise<void>;
  /**
   * A durable wait, a step named `name`, for the signal `event` (`ctx.signal(event, payload)` in a
   * command of the run's tenant) whose payload contains every field of `match`. The run gives its
   * worker back while it waits. Resolves to `{ ok: true, payload }`, or — once `timeout` (ms or text)
   * has passed — `{ ok: false, timedOut: true }`. Only signals sent after the run started waiting count.
   */
  waitForEvent<P = unknown>(name: string, event: string, options?: { match?: Record<string, unknown>; timeout?: number | Duration }): Promise<{ ok: true; payload: P } | { ok: false; timedOut: true }>;
}

/** A duration as text: a whole number and a unit — `ms`, `s`, `m`, `h` or `d` (e.g. `'90s'`, `'2h'`). */
export type Duration = `${number}${'ms' | 's' | 'm' | 'h' | 'd'}`;

/**
 * A durable multi-step process, run by the outbox worker: started by a command
 * (`ctx.startWorkflow(name, args)`) or by every event named `on`, and run as the one who started it
 * (the command's caller, the event's emitter; `runAs: 'system'` for the system in their tenant): its
 * `ctx.auth`, its policies and row-level security are theirs. Each `ctx.step(name, fn)` is
 * persisted when it finishes, so a retried or restarted run resumes after its last finished step.
 * Failures are retried with backoff; `fw workflows cancel <runId>` stops a run. See docs/workflows.md.
 *
 * @example
 *   export default workflow({
 *     on: 'ticket.created',
 *     args: { ticketId: z.uuid() },
 *     handler: async (ctx, args) => {
 *       const triage = await ctx.step('triage', () => ctx.ai.generateStructured({ … }));
 *       await ctx.step('notify', ({ idempotencyKey }) => sendMail({ idempotencyKey, … }));
 *     },
 *   });
 */
export function workflow<A extends ArgsInput | undefined = undefined, R = unknown>(
  config: EntryConfig<A, WorkflowContext, R> & { on?: EventName; runAs?: RunAs },
): EntryDefinition<'workflow'> {
  const on: unknown = (config as { on?: unknown }).on;
  if (on !== undefined && (typeof on !== 'string' || on.length === 0)) {
    throw new TypeError("fw: workflow({ on }) must be the event name given to ctx.emit, e.g. on: 'ticket.created'.");
  }
  checkRunAs('workflow', config);
  return define('workflow', config);
}

/** The HTTP methods an endpoint may declare. */
export type EndpointMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The context of an endpoint: the server context plus the request's path params, query and headers. */
export interface EndpointContext extends ServerContext {
  /** Path params by name: `{ id }` for `/api/tickets/:id` (URL-decoded). */
  params: Record<string, string>;
  /** The query string, one value per name (the first when repeated). */
  query: Record<string, string>;
  /** Request headers, lower-case, without credentials (`authorization`, `cookie`, …). */
  headers: Record<string, string>;
  /**
   * Who sent the request: the socket's peer, or behind `FW_TRUST_PROXY` proxies of yours the client
   * they saw (never a header the client could write). What to limit an anonymous caller by, such as a
   * sign-in's tries per address; an IPv6 client may hold many addresses of one /64.
   */
  clientAddress: string;
  /**
   * Runs the command or query `name` — one declared with `policy: 'system'` — as the system inside
   * `tenantId` (a UUID, or `null`), in its own transaction, and resolves to its result: how trusted code
   * acts in a tenant before a caller is known (a sign-in looking a user up). `ctx.db` stays the caller's.
   * Its args are validated by the entry; treat them as the caller's input. See docs/endpoints.md.
   *
   * @example
   *   const user = await ctx.runAsSystem<SignInUser | null>('findSignInUser', { email }, { tenantId });
   */
  runAsSystem<R = unknown>(name: string, args: unknown, options: { tenantId: string | null }): Promise<R>;
}

const endpointResponseBrand = Symbol.for('fw.endpointResponse');

/** A response with its own status and headers, made by {@link respond}. */
export interface EndpointResponse<B = unknown> {
  readonly [endpointResponseBrand]: true;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Sent as JSON exactly as given (no fw envelope); `undefined` sends no body. */
  readonly body: B;
}

/**
 * Lets an endpoint answer with its own status (and headers): the body is sent as JSON as given,
 * without fw's `{ ok, result, traceId }` envelope; no body for `undefined` (e.g. 204).
 *
 * @example
 *   handler: async (ctx, args) => respond(201, await createTicket(ctx, args), { location: `/api/tickets/${id}` })
 */
export function respond<B = undefined>(status: number, body?: B, headers: Record<string, string> = {}): EndpointResponse<B> {
  if (!Number.isInteger(status) || status < 200 || status > 599) {
    throw new TypeError(`fw: respond(status) needs an HTTP status from 200 to 599, got ${String(status)}; e.g. respond(201, ticket).`);
  }
  return Object.freeze({ [endpointResponseBrand]: true as const, status, headers: { ...headers }, body: body as B });
}

export function isEndpointResponse(value: unknown): value is EndpointResponse {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[endpointResponseBrand] === true;
}

/** First path segments fw serves itself; an endpoint path may not start with one of them. */
export const RESERVED_PATH_SEGMENTS: readonly string[] = ['commands', 'queries', 'live', 'external', 'ai', '_fw', 'health', 'entries', 'mcp'];
const endpointMethods: readonly string[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const pathSegment = /^(?::[A-Za-z_][A-Za-z0-9_]*|[A-Za-z0-9._~-]+)$/;

function checkEndpointRoute(method: unknown, path: unknown): void {
  if (typeof method !== 'string' || !endpointMethods.includes(method)) {
    throw new TypeError(`fw: endpoint({ method }) must be one of ${endpointMethods.join(', ')} (upper case), got ${JSON.stringify(method)}.`);
  }
  const example = "e.g. path: '/api/tickets/:id'";
  if (typeof path !== 'string' || !path.startsWith('/') || path.length < 2) {
    throw new TypeError(`fw: endpoint({ path }) must be an absolute path, ${example}.`);
  }
  const segments = path.slice(1).split('/');
  const bad = segments.find((s) => !pathSegment.test(s));
  if (bad !== undefined) {
    throw new TypeError(
      `fw: endpoint({ path: '${path}' }) has an invalid segment "${bad}": use letters, digits, . _ ~ - or a param like :id, no trailing slash or query string (${example}).`,
    );
  }
  if (segments[0]!.startsWith(':') || RESERVED_PATH_SEGMENTS.includes(segments[0]!)) {
    throw new TypeError(
      `fw: endpoint({ path: '${path}' }) collides with fw's own routes (/${RESERVED_PATH_SEGMENTS.join(', /')}) or starts with a param. Serve it under /api/, e.g. '/api${path}'.`,
    );
  }
  const names = segments.filter((s) => s.startsWith(':'));
  if (new Set(names).size !== names.length) {
    throw new TypeError(`fw: endpoint({ path: '${path}' }) repeats a param name; give each param its own name.`);
  }
}

/**
 * A custom HTTP route under the runtime, authenticated like every entry and checked against its
 * `policy` (default `user`). Args are the query string (GET, DELETE; strings — use `z.coerce` for
 * numbers) or the JSON body (POST, PUT, PATCH; the body itself, not `{ args }`), validated when `args`
 * is given. Returns a value (sent as `{ ok: true, result, traceId }`) or `respond(status, body)`.
 * `ctx.db` commits each statement on its own, as the caller (like actions). See docs/endpoints.md.
 *
 * @example
 *   export default endpoint({
 *     method: 'GET',
 *     path: '/api/tickets/:id',
 *     handler: (ctx) => ctx.db.selectFrom('tickets').selectAll().where('id', '=', ctx.params.id).executeTakeFirst(),
 *   });
 */
export function endpoint<A extends ArgsInput | undefined = undefined, R = unknown>(
  config: EntryConfig<A, EndpointContext, R> & { method: EndpointMethod; path: string },
): EntryDefinition<'endpoint'> {
  checkEndpointRoute((config as { method?: unknown }).method, (config as { path?: unknown }).path);
  return define('endpoint', config);
}

/** Whether an entry declared `args` (endpoints without them take any query or body unvalidated). */
export function hasDeclaredArgs(entry: Pick<EntryDefinition, 'args'>): boolean {
  return entry.args !== emptyArgs;
}


/**
 * Named policies, referenced by entries as `policy: 'name'`. Export as the default of `src/policies.ts`.
 *
 * @example
 *   export default definePolicies({ admin: ({ auth }) => auth.role === 'admin' });
 */
export function definePolicies<P extends Record<string, PolicyCheck>>(policies: P): P {
  for (const name of Object.keys(policies)) {
    if (name === 'public' || name === 'user' || name === 'system') {
      throw new Error(`fw: policy name "${name}" is built in; choose another name.`);
    }
  }
  return policies;
}
