import { sql } from 'kysely';
import type { Clock } from '../core/clock.ts';
import type { FwDatabase } from '../db/database.ts';
import type { Auth, EntryDefinition } from '../core/entry-types.ts';
import { FwError } from '../core/errors.ts';
import { invokeEntry, type EntryServices } from '../entry/pipeline.ts';
import { allowedBy } from '../entry/policy.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { fwVersion } from '../core/version.ts';
import type { LiveHub } from '../live/hub.ts';
import type { AiRuntime } from '../ai/ai-runtime.ts';
import type { BridgeLimits } from '../external/bridge.ts';
import { callExternalEntry, findExternalEntry } from '../external/services.ts';
import { TRACE_HEADER } from '../core/trace.ts';
import { ADMIN_PREFIX, type AdminDatabase, serveAdmin } from './admin-routes.ts';
import { parseArgsEnvelope, parseJsonBody, readBody } from './body.ts';
import { serveMultiplexedStream, servePerNameStream } from './live-routes.ts';
import { corsHeaders, type ResolvedCors } from './cors.ts';
import { callerOf, type Route, type RouteCall } from './route.ts';
import { listEntries } from './list-entries.ts';
import { dashboardRoutes } from './dashboard-routes.ts';
import { type McpContext, mcpRoutes } from './mcp.ts';

export { listEntries } from './list-entries.ts';

/** What fw's own routes serve with, assembled once per app by the handler. */
export interface FwRoutesContext {
  app: AppDefinition;
  db: FwDatabase;
  dev: boolean;
  services: EntryServices;
  ai: AiRuntime;
  live: LiveHub | undefined;
  adminToken: string | undefined;
  externalLimits: Partial<BridgeLimits> | undefined;
  cors: ResolvedCors;
  clock: Clock;
  bodyLimit: number;
  /** Serve the dashboard (`/_fw/dashboard/`): dev mode, or `FW_DASHBOARD` with an admin token. Off, its routes are not registered. */
  dashboard?: boolean;
  database: AdminDatabase | undefined;
  /** Serve MCP (`POST /mcp`, mcp.ts) with these settings; off when absent. */
  mcp?: Pick<McpContext, 'auth' | 'trustedProxies' | 'approvalTtlMs' | 'rateLimitPerMinute' | 'onError'> | undefined;
}

/**
 * fw's own routes (docs: the spec's HTTP surface), in the order an `Allow` header lists their methods.
 * A trailing `*` takes the rest of the path, so `/commands/a/b` still reaches the entry route (as an
 * unknown name) and `/live/` the live one. Endpoint paths cannot start like these (RESERVED_PATH_SEGMENTS).
 */
export function fwRoutes(context: FwRoutesContext): { methods: readonly string[]; path: string; route: Route }[] {
  const { app, db, dev, services, ai, live, cors, clock, bodyLimit } = context;
  const streamHeaders = (call: RouteCall) => ({ ...corsHeaders(cors, call.req), [TRACE_HEADER]: call.traceId });

  const health: Route = {
    auth: 'none',
    template: () => '/health',
    async serve() {
      await sql`select 1`.execute(db.admin);
      // Serving, but worse than it should (live updates only polled): said by code, with the fix in dev.
      const problem = live?.status().reader.wakeups.problem;
      const warnings = problem ? [dev ? problem : { code: problem.code }] : undefined;
      return { status: 200, body: { status: 'ok', version: fwVersion, database: db.dialect, ...(warnings ? { warnings } : {}) } };
    },
  };

  // Dev and the admin token see every entry; anyone else only what its policies let it call.
  const entries: Route = {
    auth: 'admin-or-caller',
    template: () => '/entries',
    async serve(call) {
      if (call.admin) return { status: 200, body: { entries: listEntries(app) } };
      const { auth } = callerOf(call);
      if (auth.kind === 'anonymous') throw new FwError('unauthenticated', 'Sign in to list entries.');
      return { status: 200, body: { entries: await callableEntries(app, auth) } };
    },
  };

  // Without a hub the live routes answer 404, before any authentication.
  const liveDisabled = (template: string): Route => ({
    auth: 'none',
    template: () => template,
    serve: () => Promise.reject(new FwError('not_found', 'Live queries are not enabled in this runtime (createRuntime turns them on unless given live: false).')),
  });
  const liveContext = (hub: LiveHub, call: RouteCall) => ({ hub, ...callerOf(call), clock, traceId: call.traceId, bodyLimit, headers: streamHeaders(call), clientAddress: call.clientAddress });
  const livePerName: Route = live
    ? {
        auth: 'caller',
        template: (params) => liveTemplate(app, decodeName(params['*']!)),
        async serve(call) {
          await servePerNameStream(call.req, call.res, decodeName(call.params['*']!), liveContext(live, call));
          return 'streamed';
        },
      }
    : { ...liveDisabled('/live/:name'), template: (params) => liveTemplate(app, decodeName(params['*']!)) };
  const liveMultiplexed: Route = live
    ? {
        auth: 'caller',
        template: () => '/live',
        async serve(call) {
          await serveMultiplexedStream(call.req, call.res, liveContext(live, call));
          return 'streamed';
        },
      }
    : liveDisabled('/live');

  const agentRun: Route = {
    auth: 'caller',
    template: () => '/ai/agents/run',
    async serve(call) {
      const { auth } = callerOf(call);
      const body = await readBody(call.req, bodyLimit);
      const result = await ai.run(parseJsonBody(body, call.req.headers['content-type']), { auth, traceId: call.traceId });
      return { status: 200, body: { ok: true, result, traceId: call.traceId } };
    },
  };
  const agentChat: Route = {
    auth: 'caller',
    template: () => '/ai/agents/chat',
    async serve(call) {
      const { auth } = callerOf(call);
      const body = await readBody(call.req, bodyLimit);
      await ai.chat(parseJsonBody(body, call.req.headers['content-type']), { auth, traceId: call.traceId }, call.res, {
        ...streamHeaders(call),
        'cache-control': 'no-cache, no-transform',
        'x-accel-buffering': 'no',
      });
      return 'streamed';
    },
  };

  // Authenticated first (the record says so): a bad token is a 401 whatever it asks for.
  const external = (entryKind: 'command' | 'query'): Route => ({
    auth: 'caller',
    template: () => `/external/:service/${entryKind === 'command' ? 'commands' : 'queries'}/:name`,
    async serve(call) {
      const { auth } = callerOf(call);
      const { req, traceId } = call;
      const { service, entry } = findExternalEntry(app, decodeName(call.params.service!), entryKind, decodeName(call.params.name!), { listKnown: dev });
      const args = parseArgsEnvelope(await readBody(req, bodyLimit), req.headers['content-type']);
      const authorization = req.headers.authorization;
      const result = await callExternalEntry(app, db, service, entry, {
        auth,
        traceId,
        args,
        ...(authorization ? { authorization } : {}),
        ...(context.externalLimits ? { limits: context.externalLimits } : {}),
      });
      return { status: 200, body: { ok: true, result: result === undefined ? null : result, traceId } };
    },
  });

  const admin: Route = {
    auth: 'admin',
    template: () => `${ADMIN_PREFIX}*`,
    async serve(call) {
      const path = `${ADMIN_PREFIX}${call.params['*']!}`;
      return { status: 200, body: await serveAdmin(call.req, path, { dev, adminToken: context.adminToken, db, live, schema: app.schema, database: context.database }) };
    },
  };

  // The name is the rest of the path as sent (not decoded): an unknown one is a 404 after authentication.
  const entry = (prefix: EntryPrefix): Route => ({
    auth: 'caller',
    template: (params) => (app.entries.has(params['*']!) ? `${prefix}${params['*']!}` : `${prefix}:name`),
    async serve(call) {
      const { auth } = callerOf(call);
      const { req, traceId } = call;
      const name = call.params['*']!;
      const entry = app.entries.get(name);
      if (!entry || !isEntryForPrefix(entry, prefix)) {
        // The names there are help in dev; in production they are the app's surface, not for whoever asks.
        throw new FwError('not_found', `No ${prefix === '/commands/' ? 'command' : 'query'} named "${name}".`, {
          diagnostics: [{ path: 'url', code: 'unknown_entry', message: dev ? `Known: ${knownNames(app, prefix)}` : 'No such entry.' }],
        });
      }
      const readArgs = async () => parseArgsEnvelope(await readBody(req, bodyLimit), req.headers['content-type']);
      // `x-fw-live-revision: 1` (a command that carries an optimistic update): the answer says which log
      // revisions its transaction wrote, as the caller's live streams show them. A UI hint, never trusted.
      let written: number[] | undefined;
      const wantsRevisions = live !== undefined && entry.kind === 'command' && req.headers['x-fw-live-revision'] === '1';
      const onLiveRevisions = wantsRevisions ? (revisions: number[]) => void (written = revisions) : undefined;
      const result = await invokeEntry(services, entry, { name, auth, traceId, external: true, readArgs, ...(onLiveRevisions ? { onLiveRevisions } : {}) });
      const liveRevisions = written && live ? { liveRevisions: await live.revisionTokens(auth, written) } : {};
      return { status: 200, body: { ok: true, result: result === undefined ? null : result, ...liveRevisions, traceId } };
    },
  });

  return [
    { methods: ['GET', 'HEAD'], path: '/health', route: health },
    { methods: ['GET', 'HEAD'], path: '/entries', route: entries },
    { methods: ['POST'], path: '/live', route: liveMultiplexed },
    { methods: ['POST'], path: '/ai/agents/run', route: agentRun },
    { methods: ['POST'], path: '/ai/agents/chat', route: agentChat },
    { methods: ['GET'], path: '/live/*', route: livePerName },
    // `(.+)`: a service or a name is never empty (`/external//commands/x` is nothing fw serves).
    { methods: ['POST'], path: '/external/:service(.+)/commands/:name(.+)', route: external('command') },
    { methods: ['POST'], path: '/external/:service(.+)/queries/:name(.+)', route: external('query') },
    { methods: ['GET', 'POST'], path: `${ADMIN_PREFIX}*`, route: admin },
    ...(context.dashboard ? dashboardRoutes({ app, db, dev, services, bodyLimit }) : []),
    ...(context.mcp ? mcpRoutes({ app, db, dev, services, cors, bodyLimit, clock, live, ...context.mcp }) : []),
    { methods: ['POST'], path: '/commands/*', route: entry('/commands/') },
    { methods: ['POST'], path: '/queries/*', route: entry('/queries/') },
  ];
}

type EntryPrefix = '/commands/' | '/queries/';

function liveTemplate(app: AppDefinition, name: string): string {
  return app.entries.has(name) ? `/live/${name}` : '/live/:name';
}

function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

function isEntryForPrefix(entry: EntryDefinition, prefix: EntryPrefix): boolean {
  return prefix === '/commands/' ? entry.kind === 'command' : entry.kind === 'query' || entry.kind === 'liveQuery';
}

function knownNames(app: AppDefinition, prefix: EntryPrefix): string {
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
