import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { type Auth, type EntryDefinition, isEndpointResponse } from '../core/entries.ts';
import { FwError } from '../core/errors.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { type EntryServices, invokeEntry } from '../entry/pipeline.ts';
import { parseJsonBody, readBody } from './body.ts';

/** An endpoint route matched against a request path. */
export interface EndpointMatch {
  /** Every method some endpoint serves at this path (the `Allow` header of a 405). */
  methods: readonly string[];
  /** The endpoint for the request's method, with its params; absent when none serves that method. */
  entry?: EntryDefinition;
  /** That endpoint's name. */
  name?: string;
  params: Record<string, string>;
}

interface CompiledEndpoint {
  name: string;
  entry: EntryDefinition;
  method: string;
  segments: string[];
}

/** Matches request paths to the app's endpoints; static segments win over params (`/api/t/new` before `/api/t/:id`). */
export function createEndpointRouter(app: AppDefinition): (method: string, path: string) => EndpointMatch | null {
  const endpoints: CompiledEndpoint[] = [...app.entries]
    .filter(([, e]) => e.kind === 'endpoint')
    .map(([name, entry]) => ({ name, entry, method: String(entry.options.method), segments: String(entry.options.path).slice(1).split('/') }));
  if (endpoints.length === 0) return () => null;

  return (method, path) => {
    const parts = path.slice(1).split('/');
    const matching = endpoints.filter((e) => e.segments.length === parts.length && e.segments.every((s, i) => s.startsWith(':') || s === parts[i]));
    if (matching.length === 0) return null;
    const methods = [...new Set(matching.map((e) => e.method))];
    const best = matching.filter((e) => e.method === method).sort((a, b) => specificity(b) - specificity(a))[0];
    if (!best) return { methods, params: {} };
    const params: Record<string, string> = {};
    best.segments.forEach((s, i) => {
      if (s.startsWith(':')) params[s.slice(1)] = decode(parts[i]!);
    });
    return { methods, entry: best.entry, name: best.name, params };
  };
}

/** Earlier static segments weigh more, so the most literal route wins. */
function specificity(endpoint: CompiledEndpoint): number {
  return endpoint.segments.reduce((score, s, i) => score + (s.startsWith(':') ? 0 : 2 ** (endpoint.segments.length - i)), 0);
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
    context: { params: call.params, query, headers: safeHeaders(req.headers) },
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
