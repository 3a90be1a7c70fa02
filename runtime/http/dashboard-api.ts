import type { IncomingMessage } from 'node:http';
import type { AppDefinition } from '../core/app-definition.ts';
import { argsJsonSchema } from '../core/args-schema.ts';
import type { Auth } from '../core/entry-types.ts';
import { FwError } from '../core/errors.ts';
import type { FwDatabase } from '../db/database.ts';
import { invokeEntry, type EntryServices } from '../entry/pipeline.ts';
import { approvalsOfTrace } from '../ai/approval-ledger.ts';
import { readTrace } from '../ai/traces.ts';
import { discardOutboxRow, listOutboxRows, type OutboxFilter, retryOutboxRow } from '../outbox/admin.ts';
import { nextCronTicks } from '../schedule/cron-ticks.ts';
import { cancelCall, listCalls } from '../schedule/store.ts';
import { cancelRun, readRun, readRunData } from '../workflows/store.ts';
import { serveTimeControl, TIME_CONTROL } from './dashboard-time.ts';
import { logsOfTrace, recentLogs } from '../telemetry/recent-logs.ts';
import { recentTrace, recentTraces } from '../telemetry/recent-spans.ts';
import { activeTraceId, noteCaller, noteFailure } from '../telemetry/trace-notes.ts';
import { failureNote } from './failure-note.ts';
import { parseJsonBody, readBody } from './body.ts';
import { listTables, readRows } from './dashboard-data.ts';
import { dashboardIdentities } from './dashboard-identities.ts';
import { listEntries } from './list-entries.ts';

export const DASHBOARD_API = '/_fw/dashboard/api/';

export interface DashboardApiContext {
  app: AppDefinition;
  db: FwDatabase;
  dev: boolean;
  services: EntryServices;
  bodyLimit: number;
  traceId: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The dashboard's own read routes (entries, identities to act as, tables and rows, outbox rows, scheduled
 * calls with their args, a workflow run with its data, crons, AI traces, recent traces and one trace, log
 * lines) and its writes (run an entry, retry or discard an outbox row, cancel a scheduled call or a
 * workflow run, and in dev the controls for time: dashboard-time.ts), behind the admin check (dev mode or
 * `FW_ADMIN_TOKEN`). Every write is a POST with a JSON body, so a page of another origin cannot send one
 * without a CORS preflight, and each is logged on the server. The cancels are the admin routes' own
 * (`fw schedule cancel`, `fw workflows cancel`).
 */
export async function serveDashboardApi(req: IncomingMessage, path: string, context: DashboardApiContext): Promise<unknown> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const route = path.slice(DASHBOARD_API.length);
  const outbox = /^outbox\/(\d{1,19})\/(retry|discard)$/.exec(route);
  const cancel = /^(schedule|workflows)\/([^/]{1,100})\/cancel$/.exec(route);
  const time = TIME_CONTROL.exec(route);
  const method = route === 'run' || outbox || cancel || time ? 'POST' : 'GET';
  if (req.method !== method) throw new FwError('method_not_allowed', `${path} answers ${method} only.`, { headers: { allow: method } });
  if (method === 'POST' && !/^application\/json\b/i.test(String(req.headers['content-type'] ?? ''))) {
    throw new FwError('unsupported_media_type', `POST ${path} needs Content-Type: application/json.`);
  }
  if (route === 'functions') return { functions: describeFunctions(context.app), dev: context.dev };
  if (route === 'run') return runEntry(req, context);
  if (route === 'identities') return dashboardIdentities(context.app, context.db, context.dev);
  if (route === 'tables') return { tables: await listTables(context.db, context.app.schema) };
  if (route === 'rows') {
    const column = url.searchParams.get('column');
    const value = url.searchParams.get('value');
    const asTenant = url.searchParams.get('asTenant');
    const tenant = url.searchParams.get('tenant');
    const sort = url.searchParams.get('sort');
    return readRows(context.db, context.app.schema, {
      ...(sort ? { sort: { column: sort, descending: url.searchParams.get('dir') === 'desc' } } : {}),
      table: url.searchParams.get('table') ?? '',
      ...(asTenant ? { asTenant } : {}),
      ...(tenant ? { tenant } : {}),
      ...(column && value ? { filter: { column, value } } : {}),
      limit: wholeParam(url, 'limit', 50, 500),
      offset: wholeParam(url, 'offset', 0, 1_000_000_000),
    });
  }
  if (route === 'outbox') {
    const status = url.searchParams.get('status') ?? 'pending';
    if (status !== 'pending' && status !== 'failed' && status !== 'dead') {
      throw new FwError('validation_failed', 'status is pending, failed or dead.', { diagnostics: [{ path: 'query.status', code: 'invalid_status', message: `Got "${status.slice(0, 20)}".` }] });
    }
    return { rows: await listOutboxRows(context.db.admin, status as OutboxFilter, wholeParam(url, 'limit', 50, 500)) };
  }
  if (outbox) {
    const [, id, what] = outbox;
    const changed = what === 'retry' ? await retryOutboxRow(context.db.admin, id!) : await discardOutboxRow(context.db.admin, id!);
    if (!changed) {
      throw new FwError('conflict', `Outbox row ${id} cannot be ${what === 'retry' ? 'retried' : 'discarded'}: it is delivered, gone, or a worker holds it now.`, {
        diagnostics: [{ path: 'url', code: 'outbox_row_busy', message: 'Reload the outbox view and try again.' }],
      });
    }
    console.info(`fw dashboard: ${what === 'retry' ? 'retried' : 'discarded'} outbox row ${id} [trace ${context.traceId}]`);
    return { id, [what === 'retry' ? 'retried' : 'discarded']: true };
  }
  if (time) return serveTimeControl(req, time, context);
  // Scheduled calls with their args, and a run with its args, result and step outputs: app data the
  // admin routes (`fw schedule list`, `fw workflows show`) leave out.
  if (route === 'schedule') {
    return { calls: await listCalls(context.db.admin, { status: url.searchParams.get('status') ?? 'pending', limit: wholeParam(url, 'limit', 50, 500), withArgs: true }) };
  }
  const workflowRun = /^workflows\/([0-9a-f-]{36})$/i.exec(route);
  if (workflowRun) {
    const run = await readRun(context.db.admin, workflowRun[1]!);
    if (!run) throw new FwError('not_found', `No workflow run ${workflowRun[1]}.`, { diagnostics: [{ path: 'url', code: 'unknown_run', message: 'The Outbox view lists the runs.' }] });
    return { ...run, ...(await readRunData(context.db.admin, run.runId)) };
  }
  if (cancel) return cancelFromDashboard(cancel[1] as 'schedule' | 'workflows', decodeURIComponent(cancel[2]!), context);
  // The crons of src/crons.ts with their next tick (`fw inspect crons`), by this process's clock.
  if (route === 'crons') return { crons: nextCronTicks(context.app, Date.now()) };
  const ai = /^ai\/([^/]{1,200})$/.exec(route);
  if (ai) {
    // A trace's AI runs (`/_fw/ai/traces/:traceId`) with the approvals it asked for or decided, from the ledger.
    const traceId = decodeURIComponent(ai[1]!);
    return { traceId, runs: await readTrace(context.db, traceId), approvals: await approvalsOfTrace(context.db, traceId) };
  }
  if (route === 'traces') return { traces: recentTraces() };
  const traceRoute = /^traces\/([0-9a-f]{16,32})$/.exec(route);
  if (traceRoute) {
    const trace = recentTrace(traceRoute[1]!);
    if (!trace) throw new FwError('not_found', `Trace ${traceRoute[1]} is not among the traces this process keeps.`, { diagnostics: [{ path: 'url', code: 'unknown_trace', message: 'The Requests view lists them.' }] });
    return { trace: { ...trace, logs: logsOfTrace(trace.traceId) } };
  }
  if (route === 'logs') return { lines: recentLogs(wholeParam(url, 'since', 0, Number.MAX_SAFE_INTEGER)) };
  throw new FwError('not_found', `No dashboard route ${path}.`);
}

/**
 * Cancels a scheduled call or a workflow run with the functions the admin routes use, and logs it:
 * a call that had not started is `cancelled`; a run between attempts is cancelled at once, a running one
 * stops before its next step.
 */
async function cancelFromDashboard(what: 'schedule' | 'workflows', id: string, context: DashboardApiContext) {
  const noun = what === 'schedule' ? 'scheduled call' : 'workflow run';
  if (!UUID.test(id)) {
    throw new FwError('validation_failed', `A ${noun}'s id is a UUID, got "${id.slice(0, 40)}".`, { diagnostics: [{ path: 'url', code: what === 'schedule' ? 'invalid_call_id' : 'invalid_run_id', message: 'The Outbox view lists them.' }] });
  }
  if (what === 'schedule') {
    const result = await cancelCall(context.db.admin, id);
    if (!result) throw new FwError('not_found', `No scheduled call ${id}.`, { diagnostics: [{ path: 'url', code: 'unknown_call', message: 'The Outbox view lists the calls.' }] });
    if (!result.cancelled) {
      throw new FwError('conflict', `Scheduled call ${id} is ${result.status}: only a call that has not started can be cancelled.`, { diagnostics: [{ path: 'url', code: 'call_not_pending', message: 'Reload the outbox view.' }] });
    }
    console.info(`fw dashboard: cancelled scheduled call ${id} [trace ${context.traceId}]`);
    return result;
  }
  const result = await cancelRun(context.db.admin, id);
  if (!result) throw new FwError('not_found', `No workflow run ${id}.`, { diagnostics: [{ path: 'url', code: 'unknown_run', message: 'The Outbox view lists the runs.' }] });
  if (!result.cancelRequested) {
    throw new FwError('conflict', `Workflow run ${id} has ended (${result.status}); nothing to cancel.`, { diagnostics: [{ path: 'url', code: 'run_ended', message: 'Reload the outbox view.' }] });
  }
  console.info(`fw dashboard: ${result.status === 'cancelled' ? 'cancelled' : 'asked to cancel (stops before its next step)'} workflow run ${result.workflow} ${id} [trace ${context.traceId}]`);
  return result;
}

/** Every entry with what the Functions view shows: kind, policy, route, description, args as JSON Schema, source file. */
export function describeFunctions(app: AppDefinition) {
  return listEntries(app).map((listed) => {
    const entry = app.entries.get(listed.name)!;
    const args = argsJsonSchema(entry.args);
    const file = app.sources?.files.get(listed.name);
    return {
      ...listed,
      runnable: entry.kind === 'command' || entry.kind === 'query' || entry.kind === 'liveQuery',
      args: args.kind === 'json-schema' ? args.schema : null,
      ...(file ? { file } : {}),
    };
  });
}

/**
 * Runs a command, query or liveQuery (once) as the identity the developer picked, through the entry
 * pipeline as an HTTP call would (policy, args, transaction, row-level security). Dev mode only: with
 * the admin token in production it would let the token holder act as any user.
 */
async function runEntry(req: IncomingMessage, context: DashboardApiContext) {
  if (!context.dev) throw new FwError('forbidden', 'Running entries from the dashboard is for dev mode only.');
  const body = parseJsonBody(await readBody(req, context.bodyLimit), req.headers['content-type']) as { name?: unknown; args?: unknown; identity?: { userId?: unknown; tenantId?: unknown; role?: unknown } } | null;
  const name = typeof body?.name === 'string' ? body.name : '';
  const entry = context.app.entries.get(name);
  if (!entry || (entry.kind !== 'command' && entry.kind !== 'query' && entry.kind !== 'liveQuery')) {
    throw new FwError('not_found', `No command, query or liveQuery named "${name.slice(0, 60)}".`, { diagnostics: [{ path: 'body.name', code: 'unknown_entry', message: 'The Functions view lists them.' }] });
  }
  const identity = body?.identity ?? {};
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);
  const tenantId = text(identity.tenantId);
  if (tenantId !== null && !UUID.test(tenantId)) {
    throw new FwError('validation_failed', 'The tenant id is a UUID.', { diagnostics: [{ path: 'body.identity.tenantId', code: 'invalid_tenant', message: `Got "${tenantId.slice(0, 40)}".` }] });
  }
  const userId = text(identity.userId);
  const auth: Auth = { kind: userId === null ? 'anonymous' : 'user', userId, tenantId: userId === null ? null : tenantId, role: userId === null ? null : text(identity.role) };
  noteCaller(activeTraceId() ?? context.traceId, auth);
  const started = performance.now();
  const who = userId === null ? 'anonymous' : `user ${userId}${tenantId ? ` tenant ${tenantId}` : ''}${auth.role ? ` role ${auth.role}` : ''}`;
  try {
    const result = await invokeEntry(context.services, entry, { name, auth, traceId: context.traceId, external: true, args: body?.args ?? {} });
    const ms = Math.round(performance.now() - started);
    console.info(`fw dashboard: ran ${entry.kind} ${name} as ${who}: ok in ${ms} ms [trace ${context.traceId}]`);
    return { ok: true, result: result === undefined ? null : result, durationMs: ms, traceId: context.traceId };
  } catch (error) {
    const ms = Math.round(performance.now() - started);
    const failure = error instanceof FwError ? error : new FwError('internal', error instanceof Error ? error.message : String(error), { cause: error });
    console.warn(`fw dashboard: ran ${entry.kind} ${name} as ${who}: ${failure.code} in ${ms} ms [trace ${context.traceId}]`);
    const location = locate(failure, context.app);
    noteFailure(activeTraceId() ?? context.traceId, { ...failureNote(failure), ...(location ? { location } : {}) });
    return {
      ok: false,
      error: { code: failure.code, status: failure.status, message: failure.message, diagnostics: failure.diagnostics, ...(location ? { location } : {}) },
      durationMs: ms,
      traceId: context.traceId,
    };
  }
}

/** Where in the app's sources an error was thrown: the first stack frame in one of its entry files (`src/commands/x.ts:12:7`). */
function locate(error: FwError, app: AppDefinition): string | undefined {
  const stack = (error.cause instanceof Error ? error.cause.stack : undefined) ?? error.stack ?? '';
  const files = [...(app.sources?.files.values() ?? [])];
  for (const line of stack.split('\n')) {
    const frame = /\(?((?:file:\/\/)?[^\s()]+):(\d+):(\d+)\)?\s*$/.exec(line.trim());
    if (!frame) continue;
    const file = files.find((f) => frame[1]!.endsWith(`/${f}`));
    if (file) return `${file}:${frame[2]}:${frame[3]}`;
  }
  return undefined;
}

function wholeParam(url: URL, name: string, fallback: number, max: number): number {
  const value = url.searchParams.get(name);
  if (value === null || value === '') return fallback;
  if (!/^\d{1,10}$/.test(value)) {
    throw new FwError('validation_failed', `${name} must be a whole number, got "${value.slice(0, 20)}".`, { diagnostics: [{ path: `query.${name}`, code: `invalid_${name}`, message: 'e.g. 50' }] });
  }
  return Math.min(Number(value), max);
}
