import type {
  ApiShape,
  CommandRefOf,
  CommandTarget,
  EntryRef,
  InputOf,
  QueryRefOf,
  QueryTarget,
  ResultOf,
} from './api-types.ts';
import { readEnvelope } from './envelope.ts';
import { FwError } from './errors.ts';
import { resolveEntry } from './resolve-entry.ts';

/** Dev-headers identity (development only): sent as `x-fw-user-id`, `x-fw-tenant-id`, `x-fw-role`. */
export interface DevAuth {
  userId: string;
  /** A UUID. */
  tenantId: string;
  role: string;
}

/** Returns the bearer token for the next call, or nothing to call anonymously. */
export type GetToken = () => string | null | undefined | Promise<string | null | undefined>;

export interface ClientOptions<A extends ApiShape> {
  /**
   * The runtime's base URL, e.g. `http://127.0.0.1:3100`. `''`, `'/'` or a path such as `'/api'`
   * means the page's own origin (browsers only; Node needs an absolute URL).
   */
  apiUrl: string;
  /** The generated `api` object: names, routes and types of the entries. */
  api: A;
  devAuth?: DevAuth;
  /** Called before every call; its token is sent as `Authorization: Bearer <token>`. */
  getToken?: GetToken;
  /** The fetch to use (default: the global one), e.g. a server-side fetch that forwards cookies. */
  fetch?: typeof globalThis.fetch;
  /** Headers sent with every call. */
  headers?: Record<string, string>;
}

export interface CallOptions {
  /** Aborts the call; it then rejects with FwError `aborted`. */
  signal?: AbortSignal;
}

/** A typed client for one app's api: every method rejects with {@link FwError} on failure. */
export interface FwClient<A extends ApiShape> {
  /**
   * Runs a command (`POST /commands/:name`).
   *
   * @example
   *   const note = await client.command('createNote', { title: 'Hello' });
   */
  command<T extends CommandTarget<A>>(
    target: T,
    args: InputOf<CommandRefOf<A, T>>,
    options?: CallOptions,
  ): Promise<ResultOf<CommandRefOf<A, T>>>;
  /**
   * Reads a query, or a liveQuery once (`POST /queries/:name`).
   *
   * @example
   *   const notes = await client.query(api.queries.listNotes, {});
   */
  query<T extends QueryTarget<A>>(
    target: T,
    args: InputOf<QueryRefOf<A, T>>,
    options?: CallOptions,
  ): Promise<ResultOf<QueryRefOf<A, T>>>;
}

const routes = { command: '/commands/', query: '/queries/' } as const;

/**
 * Creates a typed client for the runtime at `apiUrl`; works in browsers and Node ≥ 22.
 *
 * @example
 *   const client = createClient({ apiUrl: 'http://127.0.0.1:3100', api, devAuth: { userId: 'dev', tenantId, role: 'admin' } });
 *   const notes = await client.query('listNotes', {});
 */
export function createClient<A extends ApiShape>(options: ClientOptions<A>): FwClient<A> {
  if (typeof options.apiUrl !== 'string') {
    throw new TypeError('fw: createClient needs apiUrl, e.g. "http://127.0.0.1:3100" (or "/" for the page\'s origin).');
  }
  const baseUrl = options.apiUrl.replace(/\/+$/, '');

  async function requestInit(args: unknown, signal: AbortSignal | undefined): Promise<RequestInit> {
    const headers: Record<string, string> = { ...options.headers, 'content-type': 'application/json', accept: 'application/json' };
    if (options.devAuth) {
      headers['x-fw-user-id'] = options.devAuth.userId;
      headers['x-fw-tenant-id'] = options.devAuth.tenantId;
      headers['x-fw-role'] = options.devAuth.role;
    }
    const token = await options.getToken?.();
    if (token) headers.authorization = `Bearer ${token}`;
    return { method: 'POST', headers, body: JSON.stringify({ args }), ...(signal ? { signal } : {}) };
  }

  async function send(url: string, args: unknown, signal: AbortSignal | undefined): Promise<unknown> {
    let init: RequestInit;
    try {
      init = await requestInit(args, signal);
    } catch (thrown) {
      throw FwError.from(thrown);
    }
    // Read at call time, and called detached: browsers refuse a fetch invoked on another object.
    const doFetch = options.fetch ?? globalThis.fetch;
    try {
      return await readEnvelope(await doFetch(url, init));
    } catch (thrown) {
      throw thrown instanceof FwError ? thrown : unreachable(thrown, url, signal);
    }
  }

  // Not async: a name the api does not have is a programming error and throws at the call site.
  function call(kind: keyof typeof routes, target: string | EntryRef, args: unknown, callOptions?: CallOptions): Promise<any> {
    const ref = resolveEntry(options.api, kind, target);
    return send(`${baseUrl}${routes[kind]}${encodeURIComponent(ref.name)}`, args, callOptions?.signal);
  }

  return {
    command: (target, args, callOptions) => call('command', target, args, callOptions),
    query: (target, args, callOptions) => call('query', target, args, callOptions),
  };
}

function unreachable(thrown: unknown, url: string, signal: AbortSignal | undefined): FwError {
  if (signal?.aborted) {
    return new FwError({ code: 'aborted', status: 0, message: `The call to ${url} was aborted.`, cause: signal.reason });
  }
  // Node's fetch says only "fetch failed"; the reason (ECONNREFUSED, a bad URL…) is in its cause.
  const reason = thrown instanceof Error && thrown.cause instanceof Error ? thrown.cause.message : undefined;
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return new FwError({
    code: 'network_error',
    status: 0,
    message: `Could not reach ${url}: ${reason ? `${message} (${reason})` : message}`,
    cause: thrown,
  });
}
