import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AuthOption, createAuthenticator } from '../auth/authenticator.ts';
import { type Clock, systemClock } from '../core/clock.ts';
import { jsonText } from '../core/json-text.ts';
import { parseAuthConfig } from '../auth/config.ts';
import { type FwConfig, resolveConfig } from '../config/resolve-config.ts';
import type { FwDatabase } from '../db/database.ts';
import { printable, printableFrames } from '../core/printable.ts';
import { publicError } from '../core/public-error.ts';
import { FwError, toFwError } from '../core/errors.ts';
import { assembleEntryServices } from '../app/entry-services.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { endServerSpan, startServerSpan, withContext } from '../telemetry/tracing.ts';
import { noteFailedExecution } from '../telemetry/recent-logs.ts';
import { activeTraceId, noteCaller, noteFailure } from '../telemetry/trace-notes.ts';
import { recordRequest } from '../telemetry/metrics.ts';
import type { LiveHub } from '../live/hub.ts';
import type { AiRuntimeOptions } from '../ai/ai-runtime.ts';
import type { BridgeLimits } from '../external/bridge.ts';
import { ADMIN_PREFIX, type AdminDatabase, authorizeAdmin, hasAdminToken } from './admin-routes.ts';
import { endpointRoutes } from './endpoint-routes.ts';
import { fwRoutes } from './fw-routes.ts';
import { clientAddressOf } from './client-address.ts';
import { type Reply, type Route, type RouteCall } from './route.ts';
import { createRouteTable, type RouteLookup } from './route-table.ts';
import { corsFromConfig, type CorsOptions, corsHeaders, preflightHeaders, resolveCorsOptions } from './cors.ts';
import { resolveTraceId, TRACE_HEADER, wellFormedTraceId } from '../core/trace.ts';
import { failureNote } from './failure-note.ts';

export { listEntries } from './fw-routes.ts';

export interface RuntimeHandlerOptions {
  app: AppDefinition;
  db: FwDatabase;
  /** Dev mode: error details in responses, dev-headers auth allowed. */
  dev: boolean;
  /**
   * How callers are identified (docs/auth.md): `{ kind: 'jwt', issuer, audience, … }` verifies
   * `Authorization: Bearer <JWT>`; `dev-headers` is refused outside dev mode. Default: from
   * `FW_AUTH`/`FW_JWT_*` when set, else dev-headers in dev and none otherwise.
   */
  auth?: AuthOption;
  cors?: CorsOptions;
  /** Largest accepted request body in bytes (default `FW_BODY_LIMIT_BYTES`, 1 MiB). */
  bodyLimit?: number;
  /** Where server-side errors are reported (default: stderr). */
  onError?: (error: FwError, traceId: string) => void;
  /** The live-query hub serving `GET /live/:name` and `POST /live`; without it those routes answer 404. */
  live?: LiveHub;
  /** Opens the admin routes (`/_fw/…`) outside dev mode to callers sending it in `x-fw-admin-token`. */
  adminToken?: string;
  /** Agents (`POST /ai/agents/run`, `POST /ai/agents/chat`): models, approval secret, content recording. */
  ai?: Omit<AiRuntimeOptions, 'app' | 'db'>;
  /** Timeout and response size limit of calls to external services (default 5 s, 1 MiB). */
  external?: { limits?: Partial<BridgeLimits> };
  /** The clock tokens and the live streams opened with them expire by: for tests (default the system clock). */
  clock?: Clock;
  /** fw's environment variables, resolved (default: from the process environment). */
  config?: FwConfig;
  /**
   * Asked on every request: while it returns an error, every route but `GET /health` and the admin
   * routes (`/_fw/…`) answers it. `fw dev` holds the app this way while its schema and the database
   * disagree (`schema_blocked`), so no request runs against a schema the database does not have.
   */
  hold?: () => FwError | undefined;
  /** The database admin routes of a runtime that edits its app as it runs (fw dev; admin-routes.ts). */
  database?: AdminDatabase;
  /**
   * Serve the MCP endpoint (`POST /mcp`, docs/mcp.md); default: in dev mode, else `FW_MCP`. An object
   * serves it with its own per-caller limit (requests per minute; default `FW_MCP_RATE_LIMIT`).
   */
  mcp?: boolean | { rateLimitPerMinute?: number };
}

/** A connect-style handler; with `next`, requests that are not fw's go on to the next middleware. */
export type RuntimeHandler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

/**
 * The runtime's HTTP surface: `POST /commands/:name`, `POST /queries/:name`, `GET /health`,
 * `GET /entries`, the app's endpoints, with fw's envelope, statuses and trace ids.
 */
export function createRuntimeHandler(options: RuntimeHandlerOptions): RuntimeHandler {
  const clock = options.clock ?? systemClock;
  const config = options.config ?? resolveConfig();
  const authOption = options.auth ?? parseAuthConfig(config) ?? (options.dev ? 'dev-headers' : 'none');
  const authenticator = createAuthenticator(authOption, options.dev, clock);
  const cors = resolveCorsOptions(options.cors ?? corsFromConfig(config.get('FW_CORS_ORIGINS')));
  const bodyLimit = options.bodyLimit ?? config.get('FW_BODY_LIMIT_BYTES');
  const trustedProxies = config.get('FW_TRUST_PROXY');
  const onError = options.onError ?? logServerError;
  const { app, db } = options;
  const { services, ai } = assembleEntryServices(app, db, { ...(options.ai ? { ai: options.ai } : {}), traceTenant: config.get('FW_TRACE_TENANT'), clock });

  // One table per app, built here once: fw's own routes, then the app's endpoints.
  const table = createRouteTable<Route>();
  const mcpOption = options.mcp ?? (options.dev || config.get('FW_MCP'));
  const mcp = mcpOption
    ? {
        auth: authOption,
        trustedProxies,
        approvalTtlMs: options.ai?.approvalTtlMs ?? config.get('FW_AI_APPROVAL_TTL_MS'),
        rateLimitPerMinute: (typeof mcpOption === 'object' ? mcpOption.rateLimitPerMinute : undefined) ?? config.get('FW_MCP_RATE_LIMIT'),
        onError,
      }
    : undefined;
  const ownRoutes = fwRoutes({ app, db, dev: options.dev, services, ai, live: options.live, adminToken: options.adminToken, externalLimits: options.external?.limits, cors, clock, bodyLimit, database: options.database, dashboard: options.dev || (config.get('FW_DASHBOARD') && options.adminToken !== undefined), mcp });
  for (const { methods, path, route } of ownRoutes) for (const method of methods) table.add(method, path, route);
  for (const { method, path, route } of endpointRoutes(app, services, bodyLimit)) table.add(method, path, route);

  /** Settles who the route needs to know, in one place: the caller's identity, the admin token, or nobody. */
  async function authenticate(req: IncomingMessage, route: Route): Promise<Pick<RouteCall, 'caller' | 'admin'>> {
    switch (route.auth) {
      case 'none':
        return { admin: false };
      case 'admin':
        authorizeAdmin(req, { dev: options.dev, adminToken: options.adminToken });
        return { admin: true };
      case 'admin-or-caller':
        if (options.dev || hasAdminToken(req, options.adminToken)) return { admin: true };
        return { admin: false, caller: await authenticator(req.headers) };
      case 'caller':
        return { admin: false, caller: await authenticator(req.headers) };
    }
  }

  /** Handles one request the table found a route for: preflight, method, authentication, then the route. */
  async function handle(req: IncomingMessage, res: ServerResponse, found: RouteLookup<Route>, traceId: string): Promise<Reply | 'streamed'> {
    const method = req.method ?? 'GET';
    if (method === 'OPTIONS' && cors && req.headers.origin && cors.origins.has(req.headers.origin)) {
      return { status: 204, headers: { ...preflightHeaders() } };
    }
    // Refused before any authentication: the method says nothing about the caller.
    if ('allowed' in found) {
      throw new FwError('method_not_allowed', `${method} is not allowed here; use ${found.allowed.join(' or ')}.`, {
        headers: { allow: found.allowed.join(', ') },
      });
    }
    const held = options.hold?.();
    if (held && !isHoldExempt(req)) throw held;
    const identity = await authenticate(req, found.route).catch((error: unknown) => {
      // A route that says how to sign in (MCP's WWW-Authenticate) says it on every 401, a bad token's too.
      const fw = toFwError(error);
      if (fw.status !== 401 || !found.route.challenge) throw fw;
      throw new FwError(fw.code, fw.message, { diagnostics: fw.diagnostics, cause: fw, headers: { ...fw.headers, ...found.route.challenge(req) }, ...(fw.reason ? { reason: fw.reason } : {}), ...(fw.redacted ? { redacted: fw.redacted } : {}) });
    });
    // fw dev's dashboard lists who made each request (a flag check when it is not keeping them).
    if (identity.caller) noteCaller(activeTraceId() ?? traceId, identity.caller.auth);
    return found.route.serve({ req, res, params: found.params, traceId, ...identity, clientAddress: () => clientAddressOf(req, trustedProxies) });
  }

  return (req, res, next) => {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const method = req.method ?? 'GET';
    const found = table.lookup(method, path);
    if (!found) {
      if (next) return next();
      const traceId = resolveTraceId(req.headers[TRACE_HEADER]);
      return void send(res, req, { status: 404, body: errorBody(new FwError('not_found', `Nothing at ${path}.`), traceId, false) }, cors, traceId);
    }
    const template = found.route.template(found.params);
    const started = performance.now();
    const inbound = wellFormedTraceId(req.headers[TRACE_HEADER]);
    const request = startServerSpan(req.headers, `${method} ${template}`, { 'http.request.method': method, 'http.route': template, 'url.scheme': 'http' }, inbound);
    const measured = (status: number, errorType?: string) =>
      recordRequest(performance.now() - started, { 'http.request.method': method, 'http.route': template, 'http.response.status_code': status, ...(errorType ? { 'error.type': errorType } : {}) });
    // Traced, fw's trace id is the trace's own: one id in the answer, the log and the tracing backend —
    // the caller's x-fw-trace-id when it sent one (and no traceparent), echoed as it came.
    const traceId = inbound !== undefined && !req.headers.traceparent ? inbound : request.span.isRecording() ? request.span.spanContext().traceId : resolveTraceId(undefined);
    // Every answer carries the trace id in the headers it is written with (send(), the streams' own):
    // a header set ahead with setHeader would be kept on the response for as long as a stream lives.
    withContext(request.context, () => handle(req, res, found, traceId))
      .then((reply) => {
        if (reply !== 'streamed') {
          send(res, req, reply, cors, traceId);
          measured(reply.status);
        }
        endServerSpan(request.span, reply === 'streamed' ? res.statusCode : reply.status);
      })
      .catch((thrown: unknown) => {
        const error = toFwError(thrown);
        // A held runtime's answer is reported once, by whoever holds it, not once per request.
        if (error.status >= 500 && error.code !== 'schema_blocked') onError(error, traceId);
        send(res, req, { status: error.status, headers: error.headers, body: errorBody(error, traceId, options.dev) }, cors, traceId);
        request.span.setAttribute('error.type', error.code);
        // fw dev's dashboard: the failure beside the trace, and a line of its own in Logs (4xx ones print nothing).
        // (By the span's own id: an inbound x-fw-trace-id that is no W3C id is hashed into one.)
        const spanTraceId = request.span.isRecording() ? request.span.spanContext().traceId : traceId;
        noteFailure(spanTraceId, failureNote(error));
        if (!path.startsWith(ADMIN_PREFIX)) noteFailedExecution({ what: `${method} ${path}`, outcome: `${error.status} ${error.code}`, level: error.status >= 500 ? 'error' : 'warn', durationMs: performance.now() - started, message: error.message, traceId: spanTraceId });
        endServerSpan(request.span, error.status);
        measured(error.status, error.code);
      });
  };
}

/** What stays open while the runtime is held: the health probe and the admin routes (`fw db status`, `fw db migrate`). */
function isHoldExempt(req: IncomingMessage): boolean {
  const path = (req.url ?? '/').split('?', 1)[0]!;
  return path === '/health' || path.startsWith(ADMIN_PREFIX);
}

/**
 * The default `onError`: the whole story goes to the log (the caller of a 5xx gets only its code and
 * the trace id), with caller-controlled text made printable.
 */
export function logServerError(error: FwError, traceId: string): void {
  const cause = error.cause instanceof Error ? error.cause : error;
  const diagnostics = error.diagnostics.length > 0 ? ` diagnostics=${printable(JSON.stringify(error.diagnostics))}` : '';
  const causeMessage = cause !== error && cause.message !== error.message ? ` cause=${printable(cause.message)}` : '';
  console.error(`fw: ${error.code} [trace ${traceId}] ${printable(error.message)}${causeMessage}${diagnostics}\n${printableFrames(cause)}`);
}

function errorBody(error: FwError, traceId: string, dev: boolean) {
  return { ok: false, error: publicError(error, traceId, dev), traceId };
}

function send(res: ServerResponse, req: IncomingMessage, reply: Reply, cors: ReturnType<typeof resolveCorsOptions>, traceId: string): void {
  if (res.headersSent) return;
  const payload = reply.body === undefined ? '' : jsonText(reply.body, `${req.method} ${(req.url ?? '/').split('?', 1)[0]}`);
  res.writeHead(reply.status, {
    [TRACE_HEADER]: traceId,
    ...corsHeaders(cors, req),
    ...reply.headers,
    ...(reply.body === undefined
      ? {}
      : { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(payload)) }),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.end(req.method === 'HEAD' ? undefined : payload);
}
