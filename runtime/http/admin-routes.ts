import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FwDatabase } from '../db/database.ts';
import { migrationStatus } from '../db/migrate.ts';
import type { Schema } from '../core/schema.ts';
import { FwError } from '../core/errors.ts';
import { parseJsonBody, readBody } from './body.ts';
import type { LiveHub } from '../live/hub.ts';
import { listInvalidations, logBounds } from '../live/log.ts';
import { listTraces, readTrace } from '../ai/traces.ts';
import { outboxOverview } from '../outbox/overview.ts';
import { cancelRun, listRuns, readRun } from '../workflows/store.ts';
import { cancelCall, listCalls } from '../schedule/store.ts';
import { decideMcpApproval, listMcpApprovals } from '../ai/approval-ledger.ts';
import { readMcpAudit } from '../db/mcp-audit.ts';
import { resolveTraceId, TRACE_HEADER } from '../core/trace.ts';

export const ADMIN_PREFIX = '/_fw/';
export const ADMIN_TOKEN_HEADER = 'x-fw-admin-token';

export interface AdminContext {
  dev: boolean;
  /** The admin credential outside dev mode; without one, admin routes answer nothing in production. */
  adminToken: string | undefined;
  db: FwDatabase;
  live: LiveHub | undefined;
  /** The app's schema, which `/_fw/db/status` compares the database with. */
  schema: Schema;
  /** Answers the database routes instead (fw dev's, which also migrates); see AdminDatabase. */
  database?: AdminDatabase | undefined;
}

/**
 * The database routes of a runtime that edits its app as it runs (fw dev): `GET /_fw/db/status`
 * compares the database with the app as last loaded (which may be held, not served, while its
 * schema is blocked), and `POST /_fw/db/migrate` applies changes, because the embedded database
 * admits one process and `fw db` must go through the one that holds it. A runtime without one
 * answers status for the app it serves and has no migrate route.
 */
export interface AdminDatabase {
  status(): Promise<Record<string, unknown>>;
  migrate(options: { acceptDataLoss: boolean; dryRun: boolean }): Promise<Record<string, unknown>>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Ops and debug routes (`/_fw/live/status`, `/_fw/live/invalidations`, `/_fw/live/subscriptions/:id`,
 * `/_fw/ai/traces`, `/_fw/ai/traces/:traceId`, `/_fw/outbox`, `/_fw/db/status`, `/_fw/workflows`, `/_fw/workflows/:runId`,
 * `POST /_fw/workflows/:runId/cancel`, `/_fw/schedule`, `POST /_fw/schedule/:id/cancel`): open in dev mode, otherwise only with the admin token in
 * `x-fw-admin-token`. The POSTs need a JSON content type, so a browser page cannot send it
 * without a CORS preflight (which the allow-list refuses). The caller has passed `authorizeAdmin`.
 */
export async function serveAdmin(req: IncomingMessage, path: string, context: AdminContext): Promise<unknown> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const workflows = await serveWorkflows(req, path, url, context);
  if (workflows !== undefined) return workflows;
  const schedule = await serveSchedule(req, path, url, context);
  if (schedule !== undefined) return schedule;
  const mcp = await serveMcp(req, path, url, context);
  if (mcp !== undefined) return mcp;
  if (path === '/_fw/db/migrate') return serveMigrate(req, context);
  if (req.method !== 'GET') throw new FwError('method_not_allowed', `${path} answers GET only.`, { headers: { allow: 'GET' } });
  if (path === '/_fw/ai/traces') return { traces: await listTraces(context.db) };
  if (path === '/_fw/outbox') return outboxOverview(context.db.admin);
  // `fw db status` asks here when the running fw dev holds the embedded database (PGlite admits one process).
  if (path === '/_fw/db/status') return { database: context.db.dialect, ...(await (context.database?.status() ?? migrationStatus(context.db, context.schema))) };
  const trace = /^\/_fw\/ai\/traces\/([^/]+)$/.exec(path);
  if (trace) return { traceId: decodeURIComponent(trace[1]!), runs: await readTrace(context.db, decodeURIComponent(trace[1]!)) };
  const live = context.live;
  if (!live) throw new FwError('not_found', 'Live queries are not enabled in this runtime.');
  if (path === '/_fw/live/status') {
    return { ...live.status(), log: await logBounds(context.db.admin) };
  }
  if (path === '/_fw/live/invalidations') {
    const limit = url.searchParams.get('limit');
    const tenant = url.searchParams.get('tenant');
    const table = url.searchParams.get('table');
    if (limit !== null && !/^\d{1,5}$/.test(limit)) {
      throw new FwError('validation_failed', `limit must be a whole number, got "${limit.slice(0, 20)}".`, {
        diagnostics: [{ path: 'query.limit', code: 'invalid_limit', message: 'e.g. ?limit=50' }],
      });
    }
    if (tenant !== null && tenant !== 'null' && !/^[0-9a-f-]{36}$/i.test(tenant)) {
      throw new FwError('validation_failed', 'tenant must be a UUID (or "null" for writes that concern every tenant).', {
        diagnostics: [{ path: 'query.tenant', code: 'invalid_tenant', message: `Got "${tenant.slice(0, 40)}".` }],
      });
    }
    const invalidations = await listInvalidations(context.db.admin, {
      ...(table ? { table } : {}),
      ...(tenant !== null ? { tenantId: tenant === 'null' ? null : tenant } : {}),
      limit: limit === null ? 50 : Math.min(Number(limit), 1000),
    });
    return { invalidations };
  }
  const subscription = /^\/_fw\/live\/subscriptions\/([^/]+)$/.exec(path);
  if (subscription) {
    const id = decodeURIComponent(subscription[1]!);
    const debug = live.debug(id);
    if (!debug) {
      throw new FwError('not_found', `No live subscription "${id}" in this process.`, {
        diagnostics: [{ path: 'url', code: 'unknown_subscription', message: 'fw live status --json lists the live queries; ids appear in each event as subscriptionId.' }],
      });
    }
    return debug;
  }
  throw new FwError('not_found', `No admin route ${path}.`);
}

/**
 * `POST /_fw/db/migrate` with `{ "acceptDataLoss"?: boolean, "dryRun"?: boolean }`, JSON only (so a
 * page in a browser cannot send it without a preflight the CORS allow-list refuses).
 */
async function serveMigrate(req: IncomingMessage, context: AdminContext): Promise<unknown> {
  if (req.method !== 'POST') throw new FwError('method_not_allowed', '/_fw/db/migrate answers POST only.', { headers: { allow: 'POST' } });
  if (!context.database) {
    throw new FwError('not_found', 'This runtime applies no migrations over HTTP (only fw dev does, for the embedded database it holds).', {
      diagnostics: [{ path: 'url', code: 'no_dev_migrate', message: 'Run fw db migrate with DATABASE_URL set to this database instead.' }],
    });
  }
  const body = parseJsonBody(await readBody(req, 4096, { raise: false }), req.headers['content-type']);
  const options = (body ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(options)) {
    if ((key !== 'acceptDataLoss' && key !== 'dryRun') || typeof options[key] !== 'boolean') {
      throw new FwError('validation_failed', 'The body is { "acceptDataLoss"?: boolean, "dryRun"?: boolean }.', {
        diagnostics: [{ path: `body.${key}`, code: 'invalid_option', message: `Unexpected ${JSON.stringify(key)}.` }],
      });
    }
  }
  return { database: context.db.dialect, ...(await context.database.migrate({ acceptDataLoss: options.acceptDataLoss === true, dryRun: options.dryRun === true })) };
}

/** The workflow routes, or undefined when `path` is none of them. */
async function serveWorkflows(req: IncomingMessage, path: string, url: URL, context: AdminContext): Promise<unknown> {
  const match = /^\/_fw\/workflows(?:\/([^/]+)(\/cancel)?)?$/.exec(path);
  if (!match) return undefined;
  const [, rawId, cancel] = match;
  const method = cancel ? 'POST' : 'GET';
  if (req.method !== method) throw new FwError('method_not_allowed', `${path} answers ${method} only.`, { headers: { allow: method } });
  if (rawId === undefined) {
    const limit = url.searchParams.get('limit');
    if (limit !== null && !/^\d{1,4}$/.test(limit)) {
      throw new FwError('validation_failed', `limit must be a whole number, got "${limit.slice(0, 20)}".`, {
        diagnostics: [{ path: 'query.limit', code: 'invalid_limit', message: 'e.g. ?limit=50' }],
      });
    }
    const status = url.searchParams.get('status') ?? undefined;
    const workflow = url.searchParams.get('workflow') ?? undefined;
    return { runs: await listRuns(context.db.admin, { limit: limit === null ? 50 : Math.min(Number(limit), 1000), ...(status ? { status } : {}), ...(workflow ? { workflow } : {}) }) };
  }
  const runId = decodeURIComponent(rawId);
  if (!UUID.test(runId)) {
    throw new FwError('validation_failed', `A workflow run id is a UUID, got "${runId.slice(0, 40)}".`, {
      diagnostics: [{ path: 'url', code: 'invalid_run_id', message: 'fw workflows list --json shows the runs and their ids.' }],
    });
  }
  if (cancel) {
    const type = String(req.headers['content-type'] ?? '');
    if (!/^application\/json\b/i.test(type)) {
      throw new FwError('unsupported_media_type', 'POST /_fw/workflows/:runId/cancel needs Content-Type: application/json.');
    }
  }
  const result = cancel ? await cancelRun(context.db.admin, runId) : await readRun(context.db.admin, runId);
  if (!result) {
    throw new FwError('not_found', `No workflow run ${runId}.`, {
      diagnostics: [{ path: 'url', code: 'unknown_run', message: 'fw workflows list --json shows the runs and their ids.' }],
    });
  }
  return result;
}

/** Whether the request carries the configured admin token (never true without one). */
export function hasAdminToken(req: IncomingMessage, adminToken: string | undefined): boolean {
  const given = req.headers[ADMIN_TOKEN_HEADER];
  const token = Array.isArray(given) ? given[0] : given;
  if (!adminToken || !token) return false;
  // Hashing first gives equal lengths for the constant-time comparison.
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(token), digest(adminToken));
}

/** Admits dev mode and the configured admin token; refuses anyone else (403 when no token is configured or it is wrong, 401 when none is sent). */
export function authorizeAdmin(req: IncomingMessage, context: Pick<AdminContext, 'dev' | 'adminToken'>): void {
  if (context.dev) return;
  const given = req.headers[ADMIN_TOKEN_HEADER];
  const token = Array.isArray(given) ? given[0] : given;
  if (!context.adminToken) {
    throw new FwError('forbidden', 'Admin routes are closed: this runtime is not in dev mode and has no admin token configured (FW_ADMIN_TOKEN).');
  }
  if (!token) throw new FwError('unauthenticated', `Admin routes need the admin token in the ${ADMIN_TOKEN_HEADER} header.`);
  // Hashing first gives equal lengths for the constant-time comparison.
  const digest = (value: string) => createHash('sha256').update(value).digest();
  if (!timingSafeEqual(digest(token), digest(context.adminToken))) {
    throw new FwError('forbidden', 'The admin token is not valid.');
  }
}

const CALL_STATUSES = new Set(['pending', 'running', 'delivered', 'dead', 'cancelled']);

/** The scheduled-call routes (`fw schedule`), or undefined when `path` is none of them. */
async function serveSchedule(req: IncomingMessage, path: string, url: URL, context: AdminContext): Promise<unknown> {
  const match = /^\/_fw\/schedule(?:\/([^/]+)\/cancel)?$/.exec(path);
  if (!match) return undefined;
  const [, rawId] = match;
  const method = rawId === undefined ? 'GET' : 'POST';
  if (req.method !== method) throw new FwError('method_not_allowed', `${path} answers ${method} only.`, { headers: { allow: method } });
  if (rawId === undefined) {
    const limit = url.searchParams.get('limit');
    const status = url.searchParams.get('status');
    if (limit !== null && !/^\d{1,4}$/.test(limit)) {
      throw new FwError('validation_failed', `limit must be a whole number, got "${limit.slice(0, 20)}".`, {
        diagnostics: [{ path: 'query.limit', code: 'invalid_limit', message: 'e.g. ?limit=50' }],
      });
    }
    if (status !== null && !CALL_STATUSES.has(status)) {
      throw new FwError('validation_failed', `status must be one of ${[...CALL_STATUSES].join(', ')}, got "${status.slice(0, 20)}".`, {
        diagnostics: [{ path: 'query.status', code: 'invalid_status', message: 'e.g. ?status=dead' }],
      });
    }
    return { calls: await listCalls(context.db.admin, { limit: limit === null ? 50 : Math.min(Number(limit), 1000), ...(status ? { status } : {}) }) };
  }
  const id = decodeURIComponent(rawId);
  if (!UUID.test(id)) {
    throw new FwError('validation_failed', `A scheduled call's id is a UUID, got "${id.slice(0, 40)}".`, {
      diagnostics: [{ path: 'url', code: 'invalid_call_id', message: 'fw schedule list --json shows the calls and their ids.' }],
    });
  }
  if (!/^application\/json\b/i.test(String(req.headers['content-type'] ?? ''))) {
    throw new FwError('unsupported_media_type', 'POST /_fw/schedule/:id/cancel needs Content-Type: application/json.');
  }
  const result = await cancelCall(context.db.admin, id);
  if (!result) {
    throw new FwError('not_found', `No scheduled call ${id}.`, {
      diagnostics: [{ path: 'url', code: 'unknown_call', message: 'fw schedule list --json shows the calls and their ids.' }],
    });
  }
  return result;
}

/**
 * MCP's operator routes (docs/mcp.md): `GET /_fw/mcp/approvals` (`?pending=1`: waiting ones only),
 * `POST /_fw/mcp/approvals/:id` with `{ "approved": boolean }` — a human's decision, on a channel the
 * agent does not hold (dev mode's dashboard, or the admin token) — and `GET /_fw/mcp/audit`
 * (`?limit=`, `?trace=`).
 */
async function serveMcp(req: IncomingMessage, path: string, url: URL, context: AdminContext): Promise<unknown> {
  if (!path.startsWith('/_fw/mcp/')) return undefined;
  const now = new Date();
  if (path === '/_fw/mcp/approvals' && req.method === 'GET') {
    return { approvals: await listMcpApprovals(context.db, { now, pendingOnly: url.searchParams.get('pending') === '1' }) };
  }
  if (path === '/_fw/mcp/audit' && req.method === 'GET') {
    const limit = url.searchParams.get('limit');
    const trace = url.searchParams.get('trace');
    if (limit !== null && !/^\d{1,4}$/.test(limit)) {
      throw new FwError('validation_failed', `limit must be a whole number, got "${limit.slice(0, 20)}".`, { diagnostics: [{ path: 'query.limit', code: 'invalid_limit', message: 'e.g. ?limit=50' }] });
    }
    return { calls: await readMcpAudit(context.db.admin, { ...(limit ? { limit: Number(limit) } : {}), ...(trace ? { traceId: trace } : {}) }) };
  }
  const decide = /^\/_fw\/mcp\/approvals\/([^/]+)$/.exec(path);
  if (decide) {
    if (req.method !== 'POST') throw new FwError('method_not_allowed', `${path} answers POST only.`, { headers: { allow: 'POST' } });
    const body = parseJsonBody(await readBody(req, 4096, { raise: false }), req.headers['content-type']) as Record<string, unknown> | null;
    if (!body || typeof body !== 'object' || typeof body.approved !== 'boolean' || Object.keys(body).some((key) => key !== 'approved')) {
      throw new FwError('validation_failed', 'The body is { "approved": boolean }.', { diagnostics: [{ path: 'body.approved', code: 'invalid_decision', message: 'Send { "approved": true } or { "approved": false }.' }] });
    }
    const approvalId = safeDecode(decide[1]!);
    await decideMcpApproval(context.db, approvalId, body.approved, { now, traceId: resolveTraceId(req.headers[TRACE_HEADER]) });
    return { approvalId, approved: body.approved };
  }
  throw new FwError('not_found', `No admin route ${path}.`);
}

function safeDecode(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
