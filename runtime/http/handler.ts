import type { IncomingMessage, ServerResponse } from 'node:http';
import { sql } from 'kysely';
import { type AuthOption, createAuthenticator } from '../auth/authenticator.ts';
import { type Clock, systemClock } from '../auth/clock.ts';
import { parseAuthConfig } from '../auth/config.ts';
import { type FwConfig, resolveConfig } from '../config/resolve-config.ts';
import type { FwDatabase } from '../db/database.ts';
import type { Auth, EntryDefinition } from '../core/entry-types.ts';
import { printable, printableFrames } from '../core/printable.ts';
import { publicError } from '../core/public-error.ts';
import { FwError, toFwError } from '../core/errors.ts';
import { invokeEntry } from '../entry/pipeline.ts';
import { allowedBy } from '../entry/policy.ts';
import { assembleEntryServices } from '../app/entry-services.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { endServerSpan, startServerSpan, withContext } from '../telemetry/tracing.ts';
import { recordRequest } from '../telemetry/metrics.ts';
import { entryRoute } from '../core/entry-routes.ts';
import { fwVersion } from '../core/version.ts';
import type { LiveHub } from '../live/hub.ts';
import type { AiRuntimeOptions } from '../ai/ai-runtime.ts';
import type { BridgeLimits } from '../external/bridge.ts';
import { callExternalEntry, findExternalEntry } from '../external/services.ts';
import { ADMIN_PREFIX, hasAdminToken, serveAdmin } from './admin-routes.ts';
import { createEndpointRouter, serveEndpoint } from './endpoint-routes.ts';
import { parseArgsEnvelope, parseJsonBody, readBody } from './body.ts';
import { serveMultiplexedStream, servePerNameStream } from './live-routes.ts';
import { type CorsOptions, corsHeaders, preflightHeaders, resolveCorsOptions } from './cors.ts';
import { resolveTraceId, TRACE_HEADER } from '../core/trace.ts';

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
  /** Largest accepted request body in bytes (default 1 MiB). */
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
}

/** A connect-style handler; with `next`, requests that are not fw's go on to the next middleware. */
export type RuntimeHandler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

type Route =
  | { kind: 'entry'; methods: readonly string[]; prefix: '/commands/' | '/queries/'; name: string }
  | { kind: 'live'; methods: readonly string[]; name: string }
  | { kind: 'admin'; methods: readonly string[]; path: string }
  | { kind: 'agent-run' | 'agent-chat'; methods: readonly string[] }
  | { kind: 'external'; methods: readonly string[]; service: string; entryKind: 'command' | 'query'; name: string }
  | { kind: 'health' | 'entries' | 'live-multiplexed'; methods: readonly string[] }
  | { kind: 'endpoint'; methods: readonly string[]; entry?: EntryDefinition; name?: string; params: Record<string, string> };

function matchRoute(path: string): Route | null {
  if (path === '/health') return { kind: 'health', methods: ['GET', 'HEAD'] };
  if (path === '/entries') return { kind: 'entries', methods: ['GET', 'HEAD'] };
  if (path === '/live') return { kind: 'live-multiplexed', methods: ['POST'] };
  if (path === '/ai/agents/run') return { kind: 'agent-run', methods: ['POST'] };
  if (path === '/ai/agents/chat') return { kind: 'agent-chat', methods: ['POST'] };
  if (path.startsWith('/live/')) return { kind: 'live', methods: ['GET'], name: decodeName(path.slice('/live/'.length)) };
  const external = /^\/external\/([^/]+)\/(commands|queries)\/([^/]+)$/.exec(path);
  if (external) {
    return { kind: 'external', methods: ['POST'], service: decodeName(external[1]!), entryKind: external[2] === 'commands' ? 'command' : 'query', name: decodeName(external[3]!) };
  }
  if (path.startsWith(ADMIN_PREFIX)) return { kind: 'admin', methods: ['GET', 'POST'], path };
  for (const prefix of ['/commands/', '/queries/'] as const) {
    if (path.startsWith(prefix)) return { kind: 'entry', methods: ['POST'], prefix, name: path.slice(prefix.length) };
  }
  return null;
}

function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

function isEntryForPrefix(entry: EntryDefinition, prefix: string): boolean {
  return prefix === '/commands/' ? entry.kind === 'command' : entry.kind === 'query' || entry.kind === 'liveQuery';
}

/**
 * The runtime's HTTP surface: `POST /commands/:name`, `POST /queries/:name`, `GET /health`,
 * `GET /entries`, the app's endpoints, with fw's envelope, statuses and trace ids.
 */
export function createRuntimeHandler(options: RuntimeHandlerOptions): RuntimeHandler {
  const clock = options.clock ?? systemClock;
  const config = options.config ?? resolveConfig();
  const authenticator = createAuthenticator(options.auth ?? parseAuthConfig(config) ?? (options.dev ? 'dev-headers' : 'none'), options.dev, clock);
  const cors = resolveCorsOptions(options.cors);
  const bodyLimit = options.bodyLimit ?? 1024 * 1024;
  const onError =
    options.onError ??
    ((error: FwError, traceId: string) => {
      // The whole story goes to the log (the caller of a 5xx gets only its code and the trace id),
      // with caller-controlled text made printable.
      const cause = error.cause instanceof Error ? error.cause : error;
      const diagnostics = error.diagnostics.length > 0 ? ` diagnostics=${printable(JSON.stringify(error.diagnostics))}` : '';
      const causeMessage = cause !== error && cause.message !== error.message ? ` cause=${printable(cause.message)}` : '';
      console.error(`fw: ${error.code} [trace ${traceId}] ${printable(error.message)}${causeMessage}${diagnostics}\n${printableFrames(cause)}`);
    });
  const { app, db } = options;

  const authenticate = (req: IncomingMessage) => authenticator(req.headers);
  const matchEndpoint = createEndpointRouter(app);
  const endpointRoute = (method: string, path: string): Route | null => {
    const match = matchEndpoint(method, path);
    return match && { kind: 'endpoint', ...match };
  };

  const { services, ai } = assembleEntryServices(app, db, { ...(options.ai ? { ai: options.ai } : {}), traceTenant: config.get('FW_TRACE_TENANT') });

  const liveHub = (): LiveHub => {
    if (!options.live) throw new FwError('not_found', 'Live queries are not enabled in this runtime (createRuntimeHandler({ live: createLiveHub(db) })).');
    return options.live;
  };

  /** Handles one request; `'streamed'` when the route wrote the response itself (live streams). */
  async function handle(req: IncomingMessage, res: ServerResponse, route: Route, traceId: string): Promise<Reply | 'streamed'> {
    const method = req.method ?? 'GET';
    if (method === 'OPTIONS' && cors && req.headers.origin && cors.origins.has(req.headers.origin)) {
      return { status: 204, headers: { ...preflightHeaders() } };
    }
    if (!route.methods.includes(method)) {
      throw new FwError('method_not_allowed', `${method} is not allowed here; use ${route.methods.join(' or ')}.`, {
        headers: { allow: route.methods.join(', ') },
      });
    }
    switch (route.kind) {
      case 'health': {
        await sql`select 1`.execute(db.admin);
        // Serving, but worse than it should (live updates only polled): said by code, with the fix in dev.
        const problem = options.live?.status().reader.wakeups.problem;
        const warnings = problem ? [options.dev ? problem : { code: problem.code }] : undefined;
        return { status: 200, body: { status: 'ok', version: fwVersion, database: db.dialect, ...(warnings ? { warnings } : {}) } };
      }
      case 'entries': {
        // Dev and the admin token see every entry; anyone else only what its policies let it call.
        if (options.dev || hasAdminToken(req, options.adminToken)) return { status: 200, body: { entries: listEntries(app) } };
        const { auth } = await authenticate(req);
        if (auth.kind === 'anonymous') throw new FwError('unauthenticated', 'Sign in to list entries.');
        return { status: 200, body: { entries: await callableEntries(app, auth) } };
      }
      case 'live': {
        const context = { hub: liveHub(), ...(await authenticate(req)), clock, traceId, bodyLimit, headers: { ...corsHeaders(cors, req), [TRACE_HEADER]: traceId } };
        await servePerNameStream(req, res, route.name, context);
        return 'streamed';
      }
      case 'live-multiplexed': {
        const context = { hub: liveHub(), ...(await authenticate(req)), clock, traceId, bodyLimit, headers: { ...corsHeaders(cors, req), [TRACE_HEADER]: traceId } };
        await serveMultiplexedStream(req, res, context);
        return 'streamed';
      }
      case 'admin': {
        const body = await serveAdmin(req, route.path, { dev: options.dev, adminToken: options.adminToken, db, live: options.live, schema: app.schema });
        return { status: 200, body };
      }
      case 'agent-run': {
        const { auth } = await authenticate(req);
        const body = await readBody(req, bodyLimit);
        const result = await ai.run(parseJsonBody(body, req.headers['content-type']), { auth, traceId });
        return { status: 200, body: { ok: true, result, traceId } };
      }
      case 'agent-chat': {
        const { auth } = await authenticate(req);
        const body = await readBody(req, bodyLimit);
        await ai.chat(parseJsonBody(body, req.headers['content-type']), { auth, traceId }, res, {
          ...corsHeaders(cors, req),
          [TRACE_HEADER]: traceId,
          'cache-control': 'no-cache, no-transform',
          'x-accel-buffering': 'no',
        });
        return 'streamed';
      }
      case 'external': {
        // Authenticated first: a bad token is a 401 whatever it asks for.
        const { auth } = await authenticate(req);
        const { service, entry } = findExternalEntry(app, route.service, route.entryKind, route.name, { listKnown: options.dev });
        const body = await readBody(req, bodyLimit);
        const args = parseArgsEnvelope(body, req.headers['content-type']);
        const authorization = req.headers.authorization;
        const result = await callExternalEntry(app, db, service, entry, {
          auth,
          traceId,
          args,
          ...(authorization ? { authorization } : {}),
          ...(options.external?.limits ? { limits: options.external.limits } : {}),
        });
        return { status: 200, body: { ok: true, result: result === undefined ? null : result, traceId } };
      }
      case 'endpoint': {
        // The method check above guarantees an endpoint for this method.
        const { auth } = await authenticate(req);
        return serveEndpoint(req, route.entry!, { services, name: route.name!, auth, traceId, params: route.params, bodyLimit });
      }
      case 'entry': {
        const { auth } = await authenticate(req);
        const entry = app.entries.get(route.name);
        if (!entry || !isEntryForPrefix(entry, route.prefix)) {
          // The names there are help in dev; in production they are the app's surface, not for whoever asks.
          throw new FwError('not_found', `No ${route.prefix === '/commands/' ? 'command' : 'query'} named "${route.name}".`, {
            diagnostics: [{ path: 'url', code: 'unknown_entry', message: options.dev ? `Known: ${knownNames(app, route.prefix)}` : 'No such entry.' }],
          });
        }
        const readArgs = async () => parseArgsEnvelope(await readBody(req, bodyLimit), req.headers['content-type']);
        const result = await invokeEntry(services, entry, { name: route.name, auth, traceId, external: true, readArgs });
        return { status: 200, body: { ok: true, result: result === undefined ? null : result, traceId } };
      }
    }
  }

  return (req, res, next) => {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    // Endpoint paths cannot start like fw's own routes (entries.ts), so the order does not matter.
    const route = matchRoute(path) ?? endpointRoute(req.method ?? 'GET', path);
    if (!route) {
      if (next) return next();
      return void send(res, req, { status: 404, body: errorBody(new FwError('not_found', `Nothing at ${path}.`), resolveTraceId(req.headers[TRACE_HEADER]), false) }, cors);
    }
    const method = req.method ?? 'GET';
    const template = routeTemplate(route, app);
    const started = performance.now();
    const request = startServerSpan(req.headers, `${method} ${template}`, { 'http.request.method': method, 'http.route': template, 'url.scheme': 'http' });
    const measured = (status: number, errorType?: string) =>
      recordRequest(performance.now() - started, { 'http.request.method': method, 'http.route': template, 'http.response.status_code': status, ...(errorType ? { 'error.type': errorType } : {}) });
    // Traced, fw's trace id is the trace's own: one id in the answer, the log and the tracing backend.
    const traceId = request.span.isRecording() ? request.span.spanContext().traceId : resolveTraceId(req.headers[TRACE_HEADER]);
    res.setHeader(TRACE_HEADER, traceId);
    withContext(request.context, () => handle(req, res, route, traceId))
      .then((reply) => {
        if (reply !== 'streamed') {
          send(res, req, reply, cors);
          measured(reply.status);
        }
        endServerSpan(request.span, reply === 'streamed' ? res.statusCode : reply.status);
      })
      .catch((thrown: unknown) => {
        const error = toFwError(thrown);
        if (error.status >= 500) onError(error, traceId);
        if (error.code === 'payload_too_large') {
          // Stop reading: the rest of an oversized body is not worth receiving.
          res.setHeader('connection', 'close');
        }
        send(res, req, { status: error.status, headers: error.headers, body: errorBody(error, traceId, options.dev) }, cors);
        request.span.setAttribute('error.type', error.code);
        endServerSpan(request.span, error.status);
        measured(error.status, error.code);
      });
  };
}

/** The route as a span names it: known names as they are, anything a caller made up as a placeholder (bounded cardinality). */
function routeTemplate(route: Route, app: AppDefinition): string {
  switch (route.kind) {
    case 'entry':
      return app.entries.has(route.name) ? `${route.prefix}${route.name}` : `${route.prefix}:name`;
    case 'live':
      return app.entries.has(route.name) ? `/live/${route.name}` : '/live/:name';
    case 'external':
      return `/external/:service/${route.entryKind === 'command' ? 'commands' : 'queries'}/:name`;
    case 'admin':
      return `${ADMIN_PREFIX}*`;
    case 'endpoint':
      return route.entry ? String(route.entry.options.path) : '/*';
    case 'health':
      return '/health';
    case 'entries':
      return '/entries';
    case 'live-multiplexed':
      return '/live';
    case 'agent-run':
      return '/ai/agents/run';
    case 'agent-chat':
      return '/ai/agents/chat';
  }
}

function errorBody(error: FwError, traceId: string, dev: boolean) {
  return { ok: false, error: publicError(error, traceId, dev), traceId };
}

function send(res: ServerResponse, req: IncomingMessage, reply: Reply, cors: ReturnType<typeof resolveCorsOptions>): void {
  if (res.headersSent) return;
  const payload = reply.body === undefined ? '' : JSON.stringify(reply.body);
  res.writeHead(reply.status, {
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

function knownNames(app: AppDefinition, prefix: string): string {
  const names = [...app.entries].filter(([, e]) => isEntryForPrefix(e, prefix)).map(([n]) => n).sort();
  return names.length > 0 ? names.join(', ') : '(none)';
}

/** The entries `auth` may call over HTTP: commands, queries, liveQueries and endpoints whose policy admits it. */
async function callableEntries(app: AppDefinition, auth: Auth) {
  const admitted = await Promise.all(
    listEntries(app).map(async (listed) => {
      const entry = app.entries.get(listed.name)!;
      if (!listed.route && entry.kind !== 'liveQuery') return undefined;
      return (await allowedBy(app, entry.policy, auth, true)) ? listed : undefined;
    }),
  );
  return admitted.filter((listed) => listed !== undefined);
}

export function listEntries(app: AppDefinition) {
  return [...app.entries]
    .map(([name, entry]) => {
      const route = entryRoute(name, entry);
      return {
        name,
        kind: entry.kind,
        policy: entry.policy,
        ...(route ? { route } : {}),
        ...(entry.description ? { description: entry.description } : {}),
      };
    })
    .sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
}
