/**
 * The app's entries as MCP tools (docs/mcp.md), over Streamable HTTP on the official SDK
 * (`@modelcontextprotocol/server`, `@modelcontextprotocol/node`), protocol 2025-11-25:
 *
 * - `POST /mcp` (and `GET` / `DELETE` of a session), authenticated as every HTTP call is (a bearer JWT; dev headers in dev). Without a
 *   credential it is a 401 with `WWW-Authenticate: Bearer resource_metadata=…` (RFC 9728), so a client
 *   finds how to sign in at `GET /.well-known/oauth-protected-resource/mcp`, which names the issuer.
 *   A browser `Origin` must be one the app allows (CORS), or this machine's in dev: a page that
 *   rebinds a name to the server cannot talk to it. The body is limited as every body is.
 * - `tools/list`: the commands, queries and liveQueries this caller's policies let in, never `system`
 *   ones nor `tool: false` ones, with their args as JSON Schema 2020-12, a description and read-only /
 *   destructive hints. `tools/call` runs the entry through the one entry pipeline as the caller (its
 *   policy, its args, its tenant under row-level security), and a failure is a tool error carrying
 *   fw's code and the trace id, told exactly as an HTTP answer tells it (5xx: code and trace id only
 *   outside dev).
 * - A command that needs approval (every command outside dev unless its `tool.needsApproval` says
 *   false; any entry that says true) does not run until a human approved this caller's call with these
 *   args, on a channel the agent does not hold (approval-ledger.ts); the approval is used once.
 * - Every call is audited (db/mcp-audit.ts): a committed command in its own transaction, the rest by
 *   the owner after the call.
 *
 * - Sessions (mcp-sessions.ts): a client that initializes gets an `Mcp-Session-Id`, bound to its
 *   caller; its server and transport serve all its requests, and it may subscribe to liveQueries'
 *   resources (mcp-subscriptions.ts), notified on its `GET /mcp` stream when the live hub sees their
 *   result change. A request without a session (not an `initialize`) is served statelessly.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AuthInfo, CallToolResult, ReadResourceResult, Resource, ServerContext, Tool } from '@modelcontextprotocol/server';
import type { AuthOption } from '../auth/authenticator.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import type { Auth } from '../core/entry-types.ts';
import { type EntryDefinition, hasDeclaredArgs } from '../core/entries.ts';
import { FwError, toFwError } from '../core/errors.ts';
import { publicError } from '../core/public-error.ts';
import { fwVersion } from '../core/version.ts';
import type { Clock } from '../core/clock.ts';
import type { FwDatabase } from '../db/database.ts';
import { argsDigest, auditInTransaction, createOwnerAudit, type McpAuditRow, type OwnerAudit } from '../db/mcp-audit.ts';
import { admitEntry, type EntryServices, invokeEntry } from '../entry/pipeline.ts';
import { allowedBy } from '../entry/policy.ts';
import { askMcpApproval, useMcpApproval } from '../ai/approval-ledger.ts';
import { type CatalogTool, entryTool, toolInputJsonSchema } from '../ai/catalog.ts';
import { parseJsonText, readBody } from './body.ts';
import type { ResolvedCors } from './cors.ts';
import type { LiveHub } from '../live/hub.ts';
import { jsonText } from '../core/json-text.ts';
import { createMcpSessions, type McpSessions, sessionOwner } from './mcp-sessions.ts';
import { createResourceSubscriptions, type ResourceSubscriptions } from './mcp-subscriptions.ts';
import { callerOf, type Reply, type Route, type RouteCall } from './route.ts';

export const MCP_PATH = '/mcp';
export const MCP_METADATA_PATH = '/.well-known/oauth-protected-resource';

export interface McpContext {
  app: AppDefinition;
  db: FwDatabase;
  dev: boolean;
  services: EntryServices;
  /** How callers are identified: the issuer the metadata names; `none` lets anonymous callers in (public entries only). */
  auth: AuthOption;
  cors: ResolvedCors;
  bodyLimit: number;
  clock: Clock;
  /** How long a human has to approve (FW_AI_APPROVAL_TTL_MS). */
  approvalTtlMs: number;
  /** How many proxies in front are ours (FW_TRUST_PROXY): whether `x-forwarded-proto` says the scheme. */
  trustedProxies: number;
  /** Requests per minute per caller (FW_MCP_RATE_LIMIT); 0: no limit. */
  rateLimitPerMinute: number;
  onError: (error: FwError, traceId: string) => void;
  /** The live hub: with it, a session may subscribe to liveQueries' resources. */
  live: LiveHub | undefined;
}

/** The routes: `POST /mcp`, and the protected-resource metadata (RFC 9728) at its two addresses. */
export function mcpRoutes(context: McpContext): { methods: readonly string[]; path: string; route: Route }[] {
  const limiter = callerLimiter(context.rateLimitPerMinute, context.clock);
  const sessions = createMcpSessions<McpSession>(() => context.clock.now());
  const serving: McpServing = { ...context, audit: createOwnerAudit(context.db.admin) };
  const metadata: Route = {
    auth: 'none',
    template: () => MCP_METADATA_PATH,
    serve: async (call) => ({ status: 200, headers: { 'access-control-allow-origin': '*' }, body: protectedResourceMetadata(call.req, context) }),
  };
  const endpoint: Route = {
    auth: 'caller',
    template: () => MCP_PATH,
    challenge: (req) => ({ 'www-authenticate': challenge(req, context) }),
    async serve(call) {
      checkOrigin(call.req, context);
      const { auth } = callerOf(call);
      if (auth.kind === 'anonymous' && context.auth !== 'none') {
        throw new FwError('unauthenticated', `Sign in to use this MCP server: send "Authorization: Bearer <token>"${context.dev ? ' (in dev, or x-fw-user-id and x-fw-tenant-id)' : ''}; ${MCP_METADATA_PATH}${MCP_PATH} names the issuer.`, {
          headers: { 'www-authenticate': challenge(call.req, context) },
        });
      }
      limiter(auth.kind === 'anonymous' ? `address:${call.clientAddress()}` : `${auth.tenantId ?? ''}|${auth.userId ?? ''}`);
      const { expiresAt } = callerOf(call);
      return serveMcp(call, { caller: auth, expiresAt, traceId: call.traceId, client: clientName(call.req), clientAddress: call.clientAddress }, serving, sessions);
    },
  };
  return [
    { methods: ['GET', 'HEAD'], path: MCP_METADATA_PATH, route: metadata },
    { methods: ['GET', 'HEAD'], path: `${MCP_METADATA_PATH}${MCP_PATH}`, route: metadata },
    { methods: ['POST', 'GET', 'DELETE'], path: MCP_PATH, route: endpoint },
  ];
}

/**
 * At most `perMinute` requests per caller in each minute of the clock (a fixed window: the counts start
 * again every minute, so memory holds only this minute's callers); past it, 429 with `Retry-After`.
 * Per process: behind several processes a caller gets the limit of each.
 */
function callerLimiter(perMinute: number, clock: Clock): (caller: string) => void {
  let window = -1;
  let counts = new Map<string, number>();
  return (caller) => {
    if (perMinute <= 0) return;
    const now = clock.now();
    const current = Math.floor(now / 60_000);
    if (current !== window) {
      window = current;
      counts = new Map();
    }
    const count = (counts.get(caller) ?? 0) + 1;
    counts.set(caller, count);
    if (count > perMinute) {
      const retryAfter = Math.max(1, Math.ceil(((current + 1) * 60_000 - now) / 1000));
      throw new FwError('too_many_requests', `More than ${perMinute} MCP requests this minute; try again in ${retryAfter} s.`, {
        headers: { 'retry-after': String(retryAfter) },
        diagnostics: [{ path: 'headers', code: 'rate_limited', message: `At most ${perMinute} requests per minute per caller (FW_MCP_RATE_LIMIT).` }],
      });
    }
  };
}

/** Where this server is, as its callers reach it: the scheme (from the first proxy when it is ours) and the Host. */
function origin(req: IncomingMessage, context: McpContext): string {
  const forwarded = context.trustedProxies > 0 ? String(req.headers['x-forwarded-proto'] ?? '').split(',')[0]!.trim() : '';
  const scheme = forwarded === 'https' || forwarded === 'http' ? forwarded : (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  return `${scheme}://${req.headers.host ?? 'localhost'}`;
}

/** RFC 9728: the resource, and the authorization server (the configured issuer) that signs its tokens. */
function protectedResourceMetadata(req: IncomingMessage, context: McpContext) {
  const issuer = typeof context.auth === 'object' ? context.auth.issuer : undefined;
  return {
    resource: `${origin(req, context)}${MCP_PATH}`,
    authorization_servers: issuer ? [issuer] : [],
    bearer_methods_supported: ['header'],
    resource_name: 'fw app',
  };
}

function challenge(req: IncomingMessage, context: McpContext): string {
  return `Bearer resource_metadata="${origin(req, context)}${MCP_METADATA_PATH}${MCP_PATH}"`;
}

const LOCAL_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A browser sends `Origin`: it must be one the app allows (its CORS list), or this machine's in dev.
 * A page on a name rebound to this server sends its own origin and is refused before anything runs.
 * (Clients that are not browsers send none.)
 */
function checkOrigin(req: IncomingMessage, context: McpContext): void {
  const sent = req.headers.origin;
  if (sent === undefined) return;
  if (context.cors?.origins.has(sent)) return;
  let hostname = '';
  try {
    hostname = new URL(sent).hostname;
  } catch {
    // not an origin: refused below
  }
  if (context.dev && (LOCAL_HOSTNAMES.has(hostname) || hostname.endsWith('.localhost'))) return;
  throw new FwError('forbidden', `Origin ${sent.slice(0, 200)} may not call this MCP server.`, {
    reason: 'origin_not_allowed',
    diagnostics: [{ path: 'headers.origin', code: 'origin_not_allowed', message: 'Browsers may call it only from an origin the app allows (cors.origins).' }],
  });
}

/** One request's part of a call: who sent it, under which trace, from which client. */
interface McpRequest {
  caller: Auth;
  /** When the caller's credential stops being accepted (epoch ms): its subscriptions end then. */
  expiresAt: number | undefined;
  traceId: string;
  client: string | null;
  clientAddress: () => string;
}

/** What every request of this endpoint shares: the settings, and the audit's writer. */
type McpServing = McpContext & { audit: OwnerAudit };

type McpCall = McpServing & McpRequest & { sdk: Sdk };

/** The SDK, loaded on the first MCP request: a runtime that serves none (fw start without FW_MCP) never loads it. */
type Sdk = Pick<typeof import('@modelcontextprotocol/server'), 'Server' | 'ProtocolError' | 'ResourceNotFoundError' | 'isInitializeRequest'> & Pick<typeof import('@modelcontextprotocol/node'), 'NodeStreamableHTTPServerTransport'>;
type McpServer = InstanceType<Sdk['Server']>;
type McpTransport = InstanceType<Sdk['NodeStreamableHTTPServerTransport']>;
let sdk: Promise<Sdk> | undefined;
function loadSdk(): Promise<Sdk> {
  sdk ??= Promise.all([import('@modelcontextprotocol/server'), import('@modelcontextprotocol/node')]).then(([server, node]) => ({
    Server: server.Server,
    ProtocolError: server.ProtocolError,
    ResourceNotFoundError: server.ResourceNotFoundError,
    isInitializeRequest: server.isInitializeRequest,
    NodeStreamableHTTPServerTransport: node.NodeStreamableHTTPServerTransport,
  }));
  return sdk;
}

/** A session's state (mcp-sessions.ts): its server and transport, and its subscriptions. */
interface McpSession {
  server: McpServer;
  transport: McpTransport;
  subscriptions: ResourceSubscriptions | undefined;
  close(): Promise<void>;
}

/**
 * Serves one request: of its session when it names one (the caller's own, else 404 as for an unknown
 * id), else an `initialize` opens a session, and anything else is answered statelessly, by a server
 * made for this request alone.
 */
async function serveMcp(call: RouteCall, request: McpRequest, context: McpServing, sessions: McpSessions<McpSession>): Promise<Reply | 'streamed'> {
  const { req, res } = call;
  const sessionId = req.headers['mcp-session-id'];
  const owner = sessionOwner(request.caller, request.clientAddress);
  const body = req.method === 'POST' ? await readJsonRpc(req, context.bodyLimit) : undefined;
  if (body && 'reply' in body) return body.reply;
  const loaded = await loadSdk();
  if (typeof sessionId === 'string') {
    const session = sessions.find(sessionId, owner);
    if (!session) return jsonRpcError(404, -32001, 'Session not found: it ended, or it is not yours. Initialize a new one.');
    res.on('close', sessions.use(sessionId));
    await session.transport.handleRequest(withRequest(req, request), res, body?.parsed);
    return 'streamed';
  }
  if (req.method !== 'POST') return jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required (initialize first).');
  if (loaded.isInitializeRequest(body!.parsed)) {
    const session = await openSession({ ...context, ...request, sdk: loaded }, sessions, owner);
    await session.transport.handleRequest(withRequest(req, request), res, body!.parsed);
    return 'streamed';
  }
  const server = createServer(context, loaded, undefined);
  const transport = new loaded.NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    await transport.handleRequest(withRequest(req, request), res, body!.parsed);
  } finally {
    await server.close();
  }
  return 'streamed';
}

async function openSession(call: McpCall, sessions: McpSessions<McpSession>, owner: string): Promise<McpSession> {
  const { sdk: loaded, live, clock } = call;
  let id: string | undefined;
  const subscriptions = live ? createResourceSubscriptions(live, clock, (uri) => void server.notification({ method: 'notifications/resources/updated', params: { uri } }).catch(() => {})) : undefined;
  const server = createServer(call, loaded, subscriptions);
  const transport = new loaded.NodeStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: true,
    onsessioninitialized: (sessionId) => {
      id = sessionId;
      sessions.add(sessionId, owner, session);
    },
  });
  const session: McpSession = { server, transport, subscriptions, close: () => server.close() };
  server.onclose = () => {
    subscriptions?.close();
    if (id) sessions.remove(id);
  };
  await server.connect(transport);
  return session;
}

/** The request's part travels with it to the handlers, as the SDK carries a request's auth (`ctx.http.authInfo`). */
function withRequest(req: IncomingMessage, request: McpRequest): IncomingMessage & { auth: AuthInfo } {
  return Object.assign(req, { auth: { token: '', clientId: request.client ?? '', scopes: [], extra: { [REQUEST]: request } } });
}
const REQUEST = 'fw/request';

function requestOf(ctx: ServerContext): McpRequest {
  const request = ctx.http?.authInfo?.extra?.[REQUEST] as McpRequest | undefined;
  if (!request) throw new Error('fw: an MCP request reached its handler without its caller.');
  return request;
}

/** The body as JSON-RPC, or the parse error's answer. */
async function readJsonRpc(req: IncomingMessage, bodyLimit: number): Promise<{ parsed: unknown } | { reply: Reply }> {
  const body = await readBody(req, bodyLimit);
  try {
    return { parsed: parseJsonText(body.toString('utf8'), 'body') };
  } catch (error) {
    return { reply: jsonRpcError(400, -32700, toFwError(error).message) };
  }
}

function jsonRpcError(status: number, code: number, message: string): Reply {
  return { status, body: { jsonrpc: '2.0', id: null, error: { code, message } } };
}

/** A server whose handlers run each request as its own caller; with `subscriptions` it serves `resources/subscribe`. */
function createServer(context: McpServing, loaded: Sdk, subscriptions: ResourceSubscriptions | undefined): McpServer {
  const server = new loaded.Server(
    { name: 'fw', version: fwVersion },
    { capabilities: { tools: { listChanged: false }, resources: { subscribe: subscriptions !== undefined, listChanged: false }, logging: {} } },
  );
  const callOf = (ctx: ServerContext): McpCall => ({ ...context, ...requestOf(ctx), sdk: loaded });
  server.setRequestHandler('tools/list', async (_, ctx) => {
    const call = callOf(ctx);
    return { tools: (await permittedTools(call)).map((tool) => describeTool(tool, call.dev)) };
  });
  server.setRequestHandler('tools/call', async (request, ctx) => callTool(request.params.name, request.params.arguments ?? {}, callOf(ctx)));
  server.setRequestHandler('resources/list', async (_, ctx) => ({ resources: (await permittedLiveQueries(callOf(ctx))).filter(({ entry }) => !hasDeclaredArgs(entry)).map(describeResource) }));
  server.setRequestHandler('resources/templates/list', async (_, ctx) => ({ resourceTemplates: (await permittedLiveQueries(callOf(ctx))).filter(({ entry }) => hasDeclaredArgs(entry)).map(describeTemplate) }));
  server.setRequestHandler('resources/read', async (request, ctx) => readResource(request.params.uri, callOf(ctx)));
  if (subscriptions) {
    server.setRequestHandler('resources/subscribe', async (request, ctx) => subscribeResource(request.params.uri, subscriptions, callOf(ctx)));
    server.setRequestHandler('resources/unsubscribe', async (request) => {
      subscriptions.unsubscribe(request.params.uri);
      return {};
    });
  }
  return server;
}

/** The client as it names itself: informative only (anyone can send any User-Agent). */
function clientName(req: IncomingMessage): string | null {
  const agent = req.headers['user-agent'];
  return typeof agent === 'string' && agent.length > 0 ? agent.slice(0, 200) : null;
}

type EntryTool = Extract<CatalogTool, { source: 'entry' }>;

/** The tools this caller may see and call: the entries' auto-tools whose policy lets it in. */
async function permittedTools(call: McpCall): Promise<EntryTool[]> {
  const names = [...call.app.entries.keys()].sort((a, b) => a.localeCompare(b));
  const tools = await Promise.all(names.map((name) => permittedTool(name, call)));
  return tools.filter((tool) => tool !== undefined);
}

/** The tool `name` if it is one and this caller's policy lets it in: a call asks its own entry's policy, not every entry's. */
async function permittedTool(name: string, call: McpCall): Promise<EntryTool | undefined> {
  const entry = call.app.entries.get(name);
  const tool = entry && entryTool(name, entry);
  if (!tool || tool.source !== 'entry') return undefined;
  return (await allowedBy(call.app, tool.policy, call.caller, true)) ? tool : undefined;
}

/**
 * Whether a call needs a human's approval first: what the entry's `tool.needsApproval` says, else
 * every command outside dev mode (reads never, unless they say so).
 */
export function needsMcpApproval(tool: EntryTool, dev: boolean): boolean {
  const option = tool.entry.options.tool as { needsApproval?: boolean } | false | undefined;
  if (option && option.needsApproval !== undefined) return option.needsApproval;
  return tool.kind === 'command' && !dev;
}

function describeTool(tool: EntryTool, dev: boolean): Tool {
  const schema = toolInputJsonSchema(tool) ?? { type: 'object' };
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: { ...schema, type: 'object' } as Tool['inputSchema'],
    annotations: { readOnlyHint: tool.readOnly, destructiveHint: !tool.readOnly, idempotentHint: tool.readOnly, openWorldHint: false },
    _meta: { 'fw/kind': tool.kind, 'fw/needsApproval': needsMcpApproval(tool, dev) },
  };
}

/** JSON with its keys sorted: the same args hash the same however a client orders them. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]));
  }
  return value;
}

async function callTool(name: string, args: Record<string, unknown>, call: McpCall): Promise<CallToolResult> {
  const { caller: auth, traceId, services, db, client } = call;
  const row: McpAuditRow = { client, entry: name.slice(0, 200), kind: 'unknown', argsDigest: argsDigest(canonical(args)), outcome: 'ok', traceId, approvalId: null };
  const tool = await permittedTool(name, call);
  if (!tool) {
    // Unknown and refused look alike: what a caller may not call is no tool of its.
    await call.audit(auth, { ...row, outcome: 'not_found' }).catch((error: unknown) => call.onError(toFwError(error), traceId));
    throw new call.sdk.ProtocolError(-32602, `Unknown tool: ${name.slice(0, 200)}`);
  }
  row.kind = tool.kind;
  const invocation = { name, auth, traceId, external: true, args, what: `tool ${name}` };
  try {
    if (needsMcpApproval(tool, call.dev)) {
      // A call that could not run anyway (bad args, refused) asks nobody.
      await admitEntry(services, tool.entry, invocation);
      const binding = { userId: auth.userId, tenantId: auth.tenantId };
      const now = new Date(call.clock.now());
      const found = await useMcpApproval(db, binding, name, canonical(args), { now, traceId });
      if (found.state === 'refused') {
        await call.audit(auth, { ...row, outcome: 'approval_refused', approvalId: found.approvalId });
        return approvalRefused(name, found.approvalId, traceId);
      }
      if (found.state !== 'used') {
        const asked = found.state === 'pending' ? found : await askMcpApproval(db, binding, name, canonical(args), { now, ttlMs: call.approvalTtlMs, traceId });
        await call.audit(auth, { ...row, outcome: 'approval_required', approvalId: asked.approvalId });
        return approvalRequired(name, asked, traceId);
      }
      row.approvalId = found.approvalId;
    }
    const result = await invokeEntry(services, tool.entry, {
      ...invocation,
      // A command's record commits with its writes, in its transaction, as its verified caller.
      ...(tool.kind === 'command' ? { beforeCommit: (trx) => auditInTransaction(trx, row) } : {}),
    });
    const answer = succeeded(result, name, traceId);
    if (tool.kind !== 'command') await call.audit(auth, row);
    return answer;
  } catch (thrown) {
    const error = toFwError(thrown);
    if (error.status >= 500) call.onError(error, traceId);
    await call.audit(auth, { ...row, outcome: error.code }).catch((failure: unknown) => call.onError(toFwError(failure), traceId));
    return failed(error, traceId, call.dev);
  }
}

/** A liveQuery's resource: `fw://live/<name>`, its args (when it has some) as JSON in `?args=`. */
export const LIVE_RESOURCE_PREFIX = 'fw://live/';

/** The liveQueries this caller's policies let in (never `system` ones, nor `tool: false` ones). */
async function permittedLiveQueries(call: McpCall): Promise<Array<{ name: string; entry: EntryDefinition; description: string }>> {
  return (await permittedTools(call)).filter((tool) => tool.kind === 'liveQuery').map((tool) => ({ name: tool.name, entry: tool.entry, description: tool.description }));
}

function describeResource(query: { name: string; description: string }): Resource {
  return { uri: `${LIVE_RESOURCE_PREFIX}${query.name}`, name: query.name, description: query.description, mimeType: 'application/json' };
}

function describeTemplate(query: { name: string; description: string }): { uriTemplate: string; name: string; description: string; mimeType: string } {
  return { uriTemplate: `${LIVE_RESOURCE_PREFIX}${query.name}{?args}`, name: query.name, description: `${query.description} (args: the query's args as JSON)`, mimeType: 'application/json' };
}

/**
 * Reads a liveQuery's resource: the query run once as the caller (read-only, its tenant), audited as a
 * call. Unknown or refused is the SDK's "resource not found" (-32602 with `data.uri`); a failure is a JSON-RPC error carrying
 * fw's public error and the trace id in its data, redacted as HTTP answers are.
 */
async function readResource(uri: string, call: McpCall): Promise<ReadResourceResult> {
  const { caller: auth, traceId, services, client } = call;
  const query = await resourceOf(uri, call);
  const row: McpAuditRow = { client, entry: query.name, kind: 'liveQuery', argsDigest: '', outcome: 'ok', traceId, approvalId: null };
  try {
    const args = query.args();
    row.argsDigest = argsDigest(canonical(args));
    const result = await invokeEntry(services, query.entry, { name: query.name, auth, traceId, external: true, args, what: `resource ${query.name}` });
    const text = jsonText(result === undefined ? null : result, `resource ${query.name}`, 'result');
    await call.audit(auth, row);
    return { contents: [{ uri, mimeType: 'application/json', text }], _meta: { 'fw/traceId': traceId } };
  } catch (thrown) {
    throw await resourceFailure(thrown, row, call);
  }
}

/**
 * Subscribes the session to a liveQuery's resource as the caller (mcp-subscriptions.ts): the hub
 * admits it as it admits a live stream (policy, args, limits) and runs it once; audited as a call.
 */
async function subscribeResource(uri: string, subscriptions: ResourceSubscriptions, call: McpCall): Promise<Record<string, never>> {
  const { caller, traceId, client } = call;
  const query = await resourceOf(uri, call);
  const row: McpAuditRow = { client, entry: query.name, kind: 'liveQuery', argsDigest: '', outcome: 'ok', traceId, approvalId: null };
  try {
    const args = query.args();
    row.argsDigest = argsDigest(canonical(args));
    await subscriptions.subscribe(uri, { name: query.name, args, caller, expiresAt: call.expiresAt, traceId, clientAddress: call.clientAddress });
    await call.audit(caller, row);
    return {};
  } catch (thrown) {
    throw await resourceFailure(thrown, row, call);
  }
}

/** The liveQuery a resource URI names, if this caller may read it; else the SDK's "resource not found" (unknown and refused look alike). */
async function resourceOf(uri: string, call: McpCall): Promise<{ name: string; entry: EntryDefinition; args: () => unknown }> {
  const parsed = URL.canParse(uri) ? new URL(uri) : undefined;
  const name = parsed && uri.startsWith(LIVE_RESOURCE_PREFIX) ? decodeURIComponent(parsed.pathname.replace(/^\/+/, '') || parsed.host) : '';
  const query = name ? await permittedTool(name, call) : undefined;
  if (!query || query.kind !== 'liveQuery') throw new call.sdk.ResourceNotFoundError(uri.slice(0, 200), `Resource not found: ${uri.slice(0, 200)}`);
  return {
    name,
    entry: query.entry,
    args: () => {
      const raw = parsed!.searchParams.get('args');
      return raw === null ? {} : parseJsonText(raw, 'args');
    },
  };
}

/**
 * A read or subscribe that failed: audited with its code, and a JSON-RPC error carrying fw's public
 * error and the trace id in its data, redacted as HTTP answers are.
 */
async function resourceFailure(thrown: unknown, row: McpAuditRow, call: McpCall): Promise<Error> {
  const { caller, traceId } = call;
  const error = toFwError(thrown);
  if (error.status >= 500) call.onError(error, traceId);
  await call.audit(caller, { ...row, argsDigest: row.argsDigest || argsDigest(null), outcome: error.code }).catch((failure: unknown) => call.onError(toFwError(failure), traceId));
  const told = publicError(error, traceId, call.dev);
  return new call.sdk.ProtocolError(error.status < 500 ? -32602 : -32603, `${told.code}: ${told.message} (trace id ${traceId})`, { error: told, traceId });
}

function succeeded(result: unknown, name: string, traceId: string): CallToolResult {
  const value = result === undefined ? null : result;
  const structured = value !== null && typeof value === 'object' && !Array.isArray(value);
  return {
    content: [{ type: 'text', text: jsonText(value, `tool ${name}`, 'result') }],
    ...(structured ? { structuredContent: value as Record<string, unknown> } : {}),
    _meta: { 'fw/traceId': traceId },
  };
}

/** A tool error as fw's HTTP answer tells it: the same public error, the same redaction. */
function failed(error: FwError, traceId: string, dev: boolean): CallToolResult {
  const told = publicError(error, traceId, dev);
  return {
    isError: true,
    content: [{ type: 'text', text: `${told.code}: ${told.message} (trace id ${traceId})` }],
    structuredContent: { ok: false, error: told, traceId },
    _meta: { 'fw/traceId': traceId },
  };
}

function approvalRefused(name: string, approvalId: string, traceId: string): CallToolResult {
  const message = `A person refused request ${approvalId}: ${name} did not run. Do not retry it unless the user asks you to (a new call asks them again).`;
  return {
    isError: true,
    content: [{ type: 'text', text: `forbidden: ${message} (trace id ${traceId})` }],
    structuredContent: { ok: false, error: { code: 'forbidden', reason: 'approval_refused', message, diagnostics: [], approvalId }, traceId },
    _meta: { 'fw/traceId': traceId },
  };
}

function approvalRequired(name: string, asked: { approvalId: string; expiresAt: string }, traceId: string): CallToolResult {
  const message = `${name} needs a person's approval before it runs. Ask the user to approve request ${asked.approvalId} (in the app, or fw's dashboard) before ${asked.expiresAt}, then call ${name} again with the same arguments. You cannot approve it yourself.`;
  return {
    isError: true,
    content: [{ type: 'text', text: `forbidden: ${message} (trace id ${traceId})` }],
    structuredContent: { ok: false, error: { code: 'forbidden', reason: 'approval_required', message, diagnostics: [], approvalId: asked.approvalId, expiresAt: asked.expiresAt }, traceId },
    _meta: { 'fw/traceId': traceId },
  };
}
