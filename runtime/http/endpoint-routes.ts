import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { type Auth, type EntryDefinition, isEndpointResponse } from '../core/entries.ts';
import { FwError } from '../core/errors.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { type EntryServices, invokeEntry } from '../entry/pipeline.ts';
import { runAsSystem } from '../entry/run-as-system.ts';
import { parseJsonBody, readBody } from './body.ts';
import { callerOf, type Route } from './route.ts';

/**
 * The app's endpoints as routes of the table, each at its declared method and path (`:param` segments
 * for the table's params, so `/api/t/new` beats `/api/t/:id`). Each needs the caller.
 */
export function endpointRoutes(app: AppDefinition, services: EntryServices, bodyLimit: number): { method: string; path: string; route: Route }[] {
  return [...app.entries]
    .filter(([, entry]) => entry.kind === 'endpoint')
    .map(([name, entry]) => {
      const path = String(entry.options.path);
      const route: Route = {
        auth: 'caller',
        template: () => path,
        serve: (call) => {
          const params = Object.fromEntries(Object.entries(call.params).map(([param, raw]) => [param, decode(raw)]));
          return serveEndpoint(call.req, entry, { services, name, auth: callerOf(call).auth, traceId: call.traceId, params, bodyLimit, clientAddress: call.clientAddress() });
        },
      };
      return { method: String(entry.options.method), path, route };
    });
}

function decode(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new FwError('bad_request', `The path segment "${raw}" is not valid URL encoding.`);
  }
}

export interface EndpointCall {
  services: EntryServices;
  /** The endpoint's name (its file name), for its span and errors about its SQL. */
  name: string;
  auth: Auth;
  traceId: string;
  params: Record<string, string>;
  bodyLimit: number;
  /** Who sent it (client-address.ts): `ctx.clientAddress`. */
  clientAddress: string;
}

/** Runs one endpoint through the entry pipeline: policy, then the args (query, or JSON body), then the handler; returns the reply to send. */
export async function serveEndpoint(
  req: IncomingMessage,
  entry: EntryDefinition,
  call: EndpointCall,
): Promise<{ status: number; headers?: Record<string, string>; body?: unknown }> {
  const method = String(entry.options.method);
  const query = queryObject(req.url ?? '/');
  const readArgs = async (): Promise<unknown> => {
    if (method === 'GET' || method === 'DELETE') return query;
    const body = await readBody(req, call.bodyLimit);
    const raw: unknown = body.length === 0 ? {} : parseJsonBody(body, req.headers['content-type']);
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      throw new FwError('bad_request', 'The body must be a JSON object.', {
        diagnostics: [{ path: 'body', code: 'invalid_body', message: 'Expected a JSON object.' }],
      });
    }
    return raw;
  };
  const { auth, traceId } = call;
  const result = await invokeEntry(call.services, entry, {
    name: call.name,
    auth,
    traceId,
    external: true,
    readArgs,
    what: `${method} ${String(entry.options.path)}`,
    context: { params: call.params, query, headers: safeHeaders(req.headers), clientAddress: call.clientAddress, runAsSystem: runAsSystem(call.services, traceId) },
  });
  if (isEndpointResponse(result)) {
    return { status: result.status, headers: { ...result.headers }, ...(result.body === undefined ? {} : { body: result.body }) };
  }
  return { status: 200, body: { ok: true, result: result === undefined ? null : result, traceId } };
}

function queryObject(url: string): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of new URL(url, 'http://fw.invalid').searchParams) {
    if (name !== '__proto__' && !Object.hasOwn(query, name)) query[name] = value;
  }
  return query;
}

const credentialHeaders = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-fw-admin-token']);

function safeHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const safe: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name === '__proto__' || credentialHeaders.has(name)) continue;
    safe[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return safe;
}
