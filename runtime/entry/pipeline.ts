/**
 * The one way anything an app defines runs, whoever calls it — an HTTP command or query, an endpoint,
 * the outbox worker (actions, workflow runs), an agent's tool, a live rerun — in the same steps:
 *
 *   admit (the kind may be called this way; the policy lets the caller in) → read and validate the args
 *   → build the kind's ctx → run the handler in the kind's transaction mode → map what it threw to an FwError.
 *
 * A guarantee added here holds for every caller. What differs between kinds is data ({@link lifecycleOf}):
 * who may call it, which transaction it runs in, what its ctx holds.
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { type Kysely, type KyselyPlugin, sql } from 'kysely';
import type { AiContext } from '../core/ai-context.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { hasDeclaredArgs } from '../core/entries.ts';
import type { EntryKind } from '../core/entry-types.ts';
import { FwError, toFwError } from '../core/errors.ts';
import { isSuspension } from '../core/suspension.ts';
import { placeFailure } from './failure-place.ts';
import { jsonText } from '../core/json-text.ts';
import { validateArgs } from '../core/validate-args.ts';
import { createAutocommitKysely } from '../db/autocommit.ts';
import { type FwDatabase, withTransactionPlugins } from '../db/database.ts';
import { enqueueInTransaction, type OutboxEntry } from '../db/outbox.ts';
import { type Attributes, inSpan } from '../telemetry/tracing.ts';
import { keepingTraceNotes, noteInvocation } from '../telemetry/trace-notes.ts';
import { type Caller, commandContext, type PlanScheduledCall, type PlanWorkflowStart, queryContext, serverContext, toolContext } from './contexts.ts';
import type { Clock } from '../core/clock.ts';
import { authorizePolicy } from './policy.ts';

export type { Caller, PlanScheduledCall, PlanWorkflowStart } from './contexts.ts';

/** What the pipeline runs: an entry, or an agent's `aiTool` seen as one. */
export interface Invocable {
  kind: EntryKind | 'aiTool';
  policy: string;
  args: StandardSchemaV1;
  handler: (ctx: any, args: any) => unknown;
  /** aiTools: run read-only (`risk: 'read'`). */
  readOnly?: boolean;
  /** aiTools: what the output must match; a mismatch is an error, never passed on. */
  outputSchema?: StandardSchemaV1;
}

/** What every invocation may use, given by whoever assembled the runtime. */
export interface EntryServices {
  app: AppDefinition;
  db: FwDatabase;
  /** `ctx.ai` / `ctx.agent` of actions, workflows and endpoints, for their caller. */
  ai?: (caller: Caller) => AiContext;
  /** A command's `ctx.startWorkflow`. */
  planWorkflowStart?: PlanWorkflowStart;
  /** A command's `ctx.scheduler.runAfter` / `runAt`. */
  planScheduledCall?: PlanScheduledCall;
  /** The time `ctx.now()` reads and `ctx.scheduler.runAfter` counts from (default the system clock; tests move one). */
  clock?: Clock;
  /** Entry spans carry the tenant (`FW_TRACE_TENANT=1`; off: a tenant id can be personal data). */
  traceTenant?: boolean;
}

/** One call of one invocable. */
export interface Invocation extends Caller {
  /** Its name: spans, logs, and errors about its SQL (`query search sent several SQL statements …`). */
  name: string;
  /** Arrived over the network: `system` policies refuse, and so do kinds only fw itself runs. */
  external: boolean;
  /** The args as received. */
  args?: unknown;
  /** Reads the args once the caller is admitted (an HTTP body is not read for a caller who may not call). */
  readArgs?: () => Promise<unknown>;
  /** `args` went through {@link admitEntry} already (an event's actions are all admitted before the first runs). */
  admitted?: boolean;
  /** What the thing is called in refusals (default `this entry`): `GET /api/tickets/:id`, a tool's name. */
  what?: string;
  /** The parts of ctx only this caller knows: an action's `event`, a workflow's `run` and `step`, an endpoint's request, a tool's `secrets`. */
  context?: Record<string, unknown>;
  /** Kysely plugins for `ctx.db` (the live read recorder). */
  plugins?: readonly KyselyPlugin[];
  /** Read-only kinds: the transaction to run in (a live batch shares one), instead of one of their own. */
  within?: Kysely<any>;
  /**
   * Read-only kinds: called with the result before the transaction ends, so a live rerun fans out
   * without waiting for a COMMIT that cannot change what was read. What it throws fails the run.
   */
  onReadResult?: (result: unknown) => void;
  /**
   * Read-write kinds: runs in the transaction after the handler, before COMMIT (a scheduled command
   * marks its outbox row delivered there, so both commit together). What it throws rolls back.
   */
  beforeCommit?: (trx: Kysely<any>) => Promise<void>;
  /**
   * Read-write kinds: called, before COMMIT, with the live log revisions the transaction wrote (one per
   * table × tenant; empty when it wrote nothing). One more statement, so only for callers that ask.
   */
  onLiveRevisions?: (revisions: number[]) => void;
  /** Its own span (default true); a live rerun has one already. */
  span?: boolean;
}

/** How a kind runs: who may call it, and in which transaction. */
interface Lifecycle {
  /** `internal`: only fw itself runs it (the outbox worker); over the network it does not exist. */
  callers: 'policy' | 'internal';
  transaction: 'read-write' | 'read-only' | 'statement';
  /** The span name's prefix. */
  span: string;
}

const lifecycles: Record<Invocable['kind'], Lifecycle> = {
  command: { callers: 'policy', transaction: 'read-write', span: 'fw.entry' },
  query: { callers: 'policy', transaction: 'read-only', span: 'fw.entry' },
  liveQuery: { callers: 'policy', transaction: 'read-only', span: 'fw.entry' },
  endpoint: { callers: 'policy', transaction: 'statement', span: 'fw.entry' },
  action: { callers: 'internal', transaction: 'statement', span: 'fw.action' },
  workflow: { callers: 'internal', transaction: 'statement', span: 'fw.workflow' },
  aiTool: { callers: 'policy', transaction: 'read-write', span: 'fw.entry' },
};

export function lifecycleOf(entry: Invocable): Lifecycle {
  const lifecycle = lifecycles[entry.kind];
  return entry.kind === 'aiTool' && entry.readOnly ? { ...lifecycle, transaction: 'read-only' } : lifecycle;
}

/** Runs `entry` for `call` through every step; resolves to the handler's result, rejects with an FwError. */
export function invokeEntry(services: EntryServices, entry: Invocable, call: Invocation): Promise<unknown> {
  const run = async () => {
    let args: unknown;
    // fw dev's dashboard shows what each entry of a trace was given and gave back (kept beside the spans);
    // not a live rerun's (no span of its own: its rerun span says what it read), which may run often on big results.
    const noting = call.span !== false && keepingTraceNotes();
    const started = noting ? performance.now() : 0;
    const note = (outcome: { result: unknown } | { error: { code: string; message: string } } | { suspended: 'wait' | 'cancelled' }) =>
      noteInvocation({ entry: call.name, kind: entry.kind, args: args ?? call.args, durationMs: performance.now() - started, ...outcome });
    try {
      args = call.admitted ? call.args : await admitEntry(services, entry, call);
      const result = await runAdmitted(services, entry, call, args);
      if (noting) note({ result });
      return result;
    } catch (error) {
      // A workflow that waits or stops on a cancel ends its attempt on purpose: not a failure to map.
      if (isSuspension(error)) {
        if (noting) note({ suspended: error.outcome });
        throw error;
      }
      // With the args known, a value PostgreSQL rejected is traced to the argument that sent it; a
      // failure of the server's own (5xx) says which entry failed and where its code is.
      const failure = placeFailure(toFwError(error, args), entry, call.name, services.app);
      if (noting) note({ error: { code: failure.code, message: failure.message } });
      throw failure;
    }
  };
  if (call.span === false) return run();
  return inSpan(`${lifecycleOf(entry).span} ${call.name}`, { attributes: spanAttributes(services, entry, call) }, run);
}

/**
 * The first steps alone: the caller may call `entry` this way, and its args are valid. Resolves to
 * the validated args. A live subscription is admitted once and then rerun ({@link runAdmitted}).
 */
export async function admitEntry(services: EntryServices, entry: Invocable, call: Invocation): Promise<unknown> {
  if (lifecycleOf(entry).callers === 'internal') {
    if (call.external) throw new FwError('not_found', `${entry.kind} entries are not callable this way.`);
  } else {
    await authorizePolicy(services.app, entry.policy, call.auth, call.external, call.what ?? (entry.policy === 'system' ? internalEntry(services, entry, call.name) : 'this entry'));
  }
  const raw = call.readArgs ? await call.readArgs() : call.args;
  // An endpoint that declares no args gets the query or body as sent.
  if (entry.kind === 'endpoint' && !hasDeclaredArgs(entry)) return raw;
  return validateArgs(entry.args, raw);
}

/** An internal entry as its refusal names it: `command sendReminder (src/commands/sendReminder.ts)`. */
function internalEntry(services: EntryServices, entry: Invocable, name: string): string {
  const file = services.app.sources?.files.get(name);
  return `${entry.kind} ${name}${file ? ` (${file})` : ''}`;
}

/** The last steps: the kind's ctx, its transaction, the handler (args already admitted). Errors are not mapped here. */
export async function runAdmitted(services: EntryServices, entry: Invocable, call: Invocation, args: unknown): Promise<unknown> {
  const { db } = services;
  const caller: Caller = { auth: call.auth, traceId: call.traceId };
  const label = `${entry.kind} ${call.name}`;
  switch (lifecycleOf(entry).transaction) {
    case 'statement': {
      // Statement-level as the caller: these kinds may call models, which must not hold a transaction open.
      const ctx = serverContext(createAutocommitKysely(db, { ...caller, label }), caller, services.ai?.(caller), call.context ?? {}, services.clock);
      return entry.handler(ctx, args);
    }
    case 'read-only': {
      const inTransaction = async (trx: Kysely<any>) => {
        const ctx = entry.kind === 'aiTool' ? toolContext(trx, caller, call.context, services.clock) : queryContext(entry.kind, trx, caller, services.clock);
        const result = await entry.handler(ctx, args);
        call.onReadResult?.(result);
        return result;
      };
      const result = call.within
        ? await inTransaction(withTransactionPlugins(call.within, call.plugins ?? []))
        : await db.transaction({ readOnly: true, ...caller, plugins: call.plugins, label }, inTransaction);
      return checkOutput(entry, call, result);
    }
    case 'read-write': {
      const result = await db.transaction({ readOnly: false, ...caller, plugins: call.plugins, label }, async (trx) => {
        if (entry.kind === 'aiTool') return entry.handler(toolContext(trx, caller, call.context, services.clock), args);
        const outbox: OutboxEntry[] = [];
        const value = await entry.handler(commandContext(trx, caller, outbox, services), args);
        // An answer the caller cannot be sent must not leave its writes behind (the check at send time
        // comes after the commit). Only a caller over the network is sent it: a scheduled call or a
        // cron tick may return Kysely's insert result (a BigInt count), which nobody reads.
        if (call.external) jsonText(value === undefined ? null : value, label, 'result');
        await enqueueInTransaction(trx, caller.traceId, outbox);
        await call.beforeCommit?.(trx);
        if (call.onLiveRevisions) call.onLiveRevisions(await writtenRevisions(trx));
        return value;
      });
      return checkOutput(entry, call, result);
    }
  }
}

/** An aiTool's output against its `outputSchema`: the checked value, or an error that never shows the output. */
async function checkOutput(entry: Invocable, call: Invocation, output: unknown): Promise<unknown> {
  if (!entry.outputSchema) return output;
  const checked = await entry.outputSchema['~standard'].validate(output);
  if (!checked.issues) return checked.value;
  const where = checked.issues.map((i) => `${(i.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)).join('.') || '(root)'}: ${i.message}`).join('; ');
  throw new FwError('internal', `aiTool ${call.name} returned output that does not match its outputSchema (${where}).`);
}

/** What an invocation's span says: its name, kind and policy; the tenant only when the app opts in. */
function spanAttributes(services: EntryServices, entry: Invocable, call: Invocation): Attributes {
  const event = entry.kind === 'action' ? (call.context?.event as { name?: string } | undefined)?.name : undefined;
  return {
    'fw.entry': call.name,
    'fw.entry.kind': entry.kind,
    ...(entry.kind === 'action' ? (event ? { 'fw.event': event } : {}) : { 'fw.policy': entry.policy }),
    ...(services.traceTenant && call.auth.tenantId ? { 'fw.tenant_id': call.auth.tenantId } : {}),
  };
}

/** The live log revisions this transaction wrote so far (the capture trigger keeps them in `fw.live_revisions`). */
async function writtenRevisions(trx: Kysely<any>): Promise<number[]> {
  const { rows } = await sql<{ revisions: string | null }>`select current_setting('fw.live_revisions', true) as revisions`.execute(trx);
  return (rows[0]?.revisions ?? '').split(',').filter((part) => /^\d+$/.test(part)).map(Number);
}
