import type { StandardSchemaV1 } from '@standard-schema/spec';
import { type Kysely, type KyselyPlugin, sql } from 'kysely';
import { withTransactionPlugins, type FwDatabase } from '../db/database.ts';
import type { Auth, EntryDefinition } from '../core/entry-types.ts';
import { type Diagnostic, FwError, toFwError } from '../core/errors.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { validateArgs } from '../core/validate-args.ts';
import { type Attributes, inSpan } from '../telemetry/tracing.ts';
import { callerOf, outboxValues, planWorkflowStart, type WorkflowStartRow } from '../workflows/start.ts';

export interface CallOptions {
  auth: Auth;
  traceId: string;
  /** The raw, unvalidated args as received. */
  args: unknown;
  /** True when the call arrives over the network (then `system` entries are refused). */
  external: boolean;
  /** The entry's name, for its span (`fw.entry`). */
  name?: string;
}

/**
 * The one path by which an entry runs, whoever calls it (HTTP, AI tools, the CLI): policy check,
 * args validation, then the handler in a transaction of its own under the caller's identity.
 */
export async function callEntry(app: AppDefinition, db: FwDatabase, entry: EntryDefinition, call: CallOptions): Promise<unknown> {
  return inSpan(`fw.entry ${call.name ?? entry.kind}`, { attributes: entrySpanAttributes(entry, call) }, async () => {
    const args = await admitCall(app, entry, call);
    try {
      return await runEntry(db, entry, { auth: call.auth, traceId: call.traceId, args, app, ...(call.name ? { name: call.name } : {}) });
    } catch (error) {
      // Here the args are known, so a value PostgreSQL rejected can be traced to the argument that sent it.
      throw toFwError(error, args);
    }
  });
}

/** What an entry's span says: its name, kind and policy; the tenant only when the app opts in (FW_TRACE_TENANT=1). */
function entrySpanAttributes(entry: EntryDefinition, call: CallOptions): Attributes {
  return {
    ...(call.name ? { 'fw.entry': call.name } : {}),
    'fw.entry.kind': entry.kind,
    'fw.policy': entry.policy,
    ...(process.env.FW_TRACE_TENANT === '1' && call.auth.tenantId ? { 'fw.tenant_id': call.auth.tenantId } : {}),
  };
}

/** The checks before an entry runs: a callable kind, the policy, then the args. Returns the validated args. */
export async function admitCall(app: AppDefinition, entry: EntryDefinition, call: CallOptions): Promise<unknown> {
  if (entry.kind !== 'command' && entry.kind !== 'query' && entry.kind !== 'liveQuery') {
    throw new FwError('not_found', `${entry.kind} entries are not callable this way.`);
  }
  await authorize(app, entry, call);
  return validateArgs(entry.args, call.args);
}

export interface RunOptions {
  auth: Auth;
  traceId: string;
  /** Already validated (see {@link admitCall}). */
  args: unknown;
  /** Kysely plugins for `ctx.db` in this run, e.g. the live read recorder. */
  plugins?: readonly KyselyPlugin[];
  /** The entry's name, for errors about its SQL (`query search sent several SQL statements …`). */
  name?: string;
  /** The app, for a command's `ctx.startWorkflow` (which looks the workflow up and checks its args). */
  app?: AppDefinition;
  /**
   * Read-only entries only: called with the handler's result before the transaction's COMMIT, so a
   * live rerun can fan out without waiting for it (a read-only COMMIT cannot change what was read).
   * What it throws fails the run (the transaction rolls back).
   */
  onReadResult?: (result: unknown) => void;
}

/**
 * Runs an admitted entry's handler in its own transaction: read-only for queries and liveQueries,
 * read-write for commands (whose `ctx.emit` events are written to the outbox before commit).
 */
export async function runEntry(db: FwDatabase, entry: EntryDefinition, run: RunOptions): Promise<unknown> {
  const readOnly = entry.kind !== 'command';
  const events: Array<{ event: string; payload: unknown }> = [];
  const starts: WorkflowStartRow[] = [];

  const label = run.name ? `${entry.kind} ${run.name}` : entry.kind;
  return db.transaction({ readOnly, auth: run.auth, traceId: run.traceId, plugins: run.plugins, label }, async (trx) => {
    // The prototype carries the ctx.ai / ctx.agent refusal (see aiRefusal).
    const ctx: Record<string, unknown> = Object.create(aiRefusal(entry.kind));
    Object.assign(ctx, { db: trx, auth: run.auth, traceId: run.traceId });
    if (!readOnly) {
      ctx.emit = (event: string, payload?: unknown) => {
        if (typeof event !== 'string' || event.length === 0) throw new TypeError('ctx.emit(event, payload): event must be a non-empty string');
        if (event.startsWith('fw.')) throw new TypeError(`ctx.emit('${event}'): event names starting with "fw." are fw's own; start workflows with ctx.startWorkflow(name, args).`);
        events.push({ event, payload: payload ?? null });
      };
      ctx.startWorkflow = async (name: string, args?: unknown, options?: { idempotencyKey?: string }) => {
        if (!run.app) throw new FwError('internal', 'ctx.startWorkflow is not available here: this command was run without its app (call it through callEntry).');
        const start = await planWorkflowStart(run.app, name, args, options);
        starts.push(start);
        return { runId: start.payload.runId };
      };
    }
    const result = await entry.handler(ctx, run.args);
    if (readOnly) run.onReadResult?.(result);
    if (events.length > 0) await writeOutbox(trx, run, events);
    if (starts.length > 0) {
      // `on conflict do nothing`: a start with an idempotency key already used starts nothing new.
      await trx.insertInto('_fw_outbox').values(starts.map((start) => outboxValues(start, callerOf(run.auth, run.traceId)))).onConflict((oc) => oc.doNothing()).execute();
    }
    return result;
  });
}

/**
 * Runs a query's or liveQuery's handler inside a read-only request transaction the caller holds (its
 * identity must be `run.auth`'s): live reruns of one identity share one transaction (hub.ts).
 */
export async function runReadOnlyIn(trx: Kysely<any>, entry: EntryDefinition, run: RunOptions): Promise<unknown> {
  if (entry.kind === 'command') throw new FwError('internal', 'runReadOnlyIn runs read-only entries only.');
  const ctx: Record<string, unknown> = Object.create(aiRefusal(entry.kind));
  Object.assign(ctx, { db: withTransactionPlugins(trx, run.plugins ?? []), auth: run.auth, traceId: run.traceId });
  const result = await entry.handler(ctx, run.args);
  run.onReadResult?.(result);
  return result;
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

async function writeOutbox(trx: FwDatabase['admin'], call: { auth: Auth; traceId: string }, events: Array<{ event: string; payload: unknown }>) {
  const rows = events.map((e) => ({
    event: e.event,
    payload: JSON.stringify(e.payload),
    tenant_id: call.auth.tenantId,
    user_id: call.auth.userId,
    trace_id: call.traceId,
  }));
  await trx
    .insertInto('_fw_outbox')
    .values(rows.map((r) => ({ ...r, payload: sql`${r.payload}::jsonb` })))
    .execute();
}

async function authorize(app: AppDefinition, entry: EntryDefinition, call: CallOptions): Promise<void> {
  await authorizePolicy(app, entry.policy, call.auth, call.external, 'this entry');
}

/**
 * Whether `auth` passes `policy`: `public` always, `system` only for internal calls with system auth,
 * `user` for any signed-in caller, a named policy when its check says so. An unknown policy refuses
 * (fail closed). `what` names the thing being called in the messages.
 */
export async function authorizePolicy(app: AppDefinition, policy: string, auth: Auth, external: boolean, what: string): Promise<void> {
  if (policy === 'public') return;
  if (policy === 'system') {
    if (external || auth.kind !== 'system') {
      throw new FwError('forbidden', `${capitalise(what)} is for the system only and cannot be called over HTTP.`);
    }
    return;
  }
  if (auth.kind === 'anonymous') {
    throw new FwError('unauthenticated', `Sign in to call ${what} (in dev, send x-fw-user-id and x-fw-tenant-id).`);
  }
  if (policy === 'user') return;
  const check = app.policies[policy];
  if (!check) throw new FwError('internal', `Policy "${policy}" is not defined.`);
  if (!(await check({ auth }))) {
    throw new FwError('forbidden', `Policy "${policy}" does not allow this caller.`);
  }
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export { validateArgs };
