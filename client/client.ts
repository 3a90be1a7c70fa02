import type {
  ApiShape,
  CommandRefOf,
  CommandTarget,
  EntryRef,
  ExternalArgsOf,
  ExternalCommandRefOf,
  ExternalCommandTarget,
  ExternalQueryRefOf,
  ExternalQueryTarget,
  ExternalRef,
  ExternalRefKind,
  ExternalResultOf,
  InputOf,
  LiveQueryRefOf,
  LiveQueryTarget,
  QueryRefOf,
  QueryTarget,
  ResultOf,
} from './api-types.ts';
import { readEnvelope } from './envelope.ts';
import { FwError, unreachable } from './errors.ts';
import {
  createLiveConnection,
  type LiveConnection,
  type LiveHandlers,
  type LiveOptions,
  type LiveRetryOptions,
  type LiveSubscription,
} from './live.ts';
import { type DevAuth, type GetToken, requestHeaders } from './request-headers.ts';
import { resolveEntry } from './resolve-entry.ts';
import { resolveExternal } from './resolve-external.ts';

export type { DevAuth, GetToken } from './request-headers.ts';

export interface ClientOptions<A extends ApiShape> {
  /**
   * The runtime's base URL, e.g. `http://127.0.0.1:3100`. `''`, `'/'` or a path such as `'/api'`
   * means the page's own origin (browsers only; Node needs an absolute URL).
   */
  apiUrl: string;
  /** The generated `api` object: names, routes and types of the entries. */
  api: A;
  devAuth?: DevAuth;
  /** Called before every call and every live (re)connect; its token is sent as `Authorization: Bearer <token>`. */
  getToken?: GetToken;
  /** The fetch to use (default: the global one), e.g. a server-side fetch that forwards cookies. */
  fetch?: typeof globalThis.fetch;
  /** Headers sent with every call. */
  headers?: Record<string, string>;
  /** Reconnection backoff of the live stream (default: 250 ms doubling to 15 s, with full jitter). */
  live?: LiveRetryOptions;
}

export interface CallOptions {
  /** Aborts the call; it then rejects with FwError `aborted`. */
  signal?: AbortSignal;
  /**
   * Commands only: asks the runtime which live log revisions the command's transaction wrote (as this
   * caller's live streams show them) and calls this with them before the call resolves. It costs the
   * command one more statement, so only callers that use it (optimistic updates) ask.
   */
  onLiveRevisions?: (revisions: readonly number[]) => void;
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
  /**
   * Runs a command of an external service (`POST /external/:service/commands/:name`), by its
   * qualified name or its ExternalRef; args are typed by the service manifest's argsSchema.
   *
   * @example
   *   const ticket = await client.externalCommand('tickets.createTicket', { subject: 'Printer on fire' });
   */
  externalCommand<T extends ExternalCommandTarget<A>>(
    target: T,
    args: ExternalArgsOf<ExternalCommandRefOf<A, T>>,
    options?: CallOptions,
  ): Promise<ExternalResultOf<ExternalCommandRefOf<A, T>>>;
  /**
   * Reads a query of an external service (`POST /external/:service/queries/:name`), by its ExternalRef
   * or its qualified name.
   *
   * @example
   *   const tickets = await client.externalQuery(api.external.tickets.queries.listTickets, {});
   */
  externalQuery<T extends ExternalQueryTarget<A>>(
    target: T,
    args: ExternalArgsOf<ExternalQueryRefOf<A, T>>,
    options?: CallOptions,
  ): Promise<ExternalResultOf<ExternalQueryRefOf<A, T>>>;
  /**
   * Subscribes to a liveQuery: `onData` gets its result now and after every write it depends on.
   * All subscriptions of a client share one `POST /live` stream; identical ones (same liveQuery and
   * args) share one entry on it. The stream reconnects by itself (see {@link LiveStatus}); call
   * `close()` when done: the last close ends the stream.
   *
   * @example
   *   const subscription = client.live('liveNotes', {}, {
   *     onData: (notes, revision) => render(notes),
   *     onError: (error) => console.warn(error.code, error.message),
   *     onStatus: (status) => showBadge(status), // 'connecting' | 'live' | 'reconnecting' | 'closed'
   *   });
   *   subscription.close();
   */
  live<T extends LiveQueryTarget<A>>(
    target: T,
    args: InputOf<LiveQueryRefOf<A, T>>,
    handlers: LiveHandlers<ResultOf<LiveQueryRefOf<A, T>>>,
    options?: LiveOptions,
  ): LiveSubscription;
}

const routes = { command: '/commands/', query: '/queries/' } as const;
const externalRoutes = { command: 'commands', query: 'queries' } as const;

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

  async function requestInit(args: unknown, signal: AbortSignal | undefined, wantsRevisions: boolean): Promise<RequestInit> {
    const headers = await requestHeaders(options, 'application/json');
    if (wantsRevisions) headers['x-fw-live-revision'] = '1';
    return { method: 'POST', headers, body: JSON.stringify({ args }), ...(signal ? { signal } : {}) };
  }

  async function send(url: string, args: unknown, signal: AbortSignal | undefined, onLiveRevisions?: (revisions: readonly number[]) => void): Promise<unknown> {
    let init: RequestInit;
    try {
      init = await requestInit(args, signal, onLiveRevisions !== undefined);
    } catch (thrown) {
      throw FwError.from(thrown);
    }
    // Read at call time, and called detached: browsers refuse a fetch invoked on another object.
    const doFetch = options.fetch ?? globalThis.fetch;
    try {
      return await readEnvelope(await doFetch(url, init), onLiveRevisions && ((body) => onLiveRevisions(liveRevisionsOf(body))));
    } catch (thrown) {
      throw thrown instanceof FwError ? thrown : unreachable(thrown, url, signal);
    }
  }

  // Not async: a name the api does not have is a programming error and throws at the call site.
  function call(kind: keyof typeof routes, target: string | EntryRef, args: unknown, callOptions?: CallOptions): Promise<any> {
    const ref = resolveEntry(options.api, kind, target);
    return send(`${baseUrl}${routes[kind]}${encodeURIComponent(ref.name)}`, args, callOptions?.signal, kind === 'command' ? callOptions?.onLiveRevisions : undefined);
  }

  // Not async either, for the same reason.
  function callExternal(kind: ExternalRefKind, target: string | ExternalRef, args: unknown, callOptions?: CallOptions): Promise<any> {
    const ref = resolveExternal(options.api, kind, target);
    const path = `/external/${encodeURIComponent(ref.service)}/${externalRoutes[kind]}/${encodeURIComponent(ref.name)}`;
    return send(`${baseUrl}${path}`, args, callOptions?.signal);
  }

  // Opened on the first live subscription: a client that never subscribes never connects.
  let liveConnection: LiveConnection | undefined;

  return {
    command: (target, args, callOptions) => call('command', target, args, callOptions),
    query: (target, args, callOptions) => call('query', target, args, callOptions),
    externalCommand: (target, args, callOptions) => callExternal('command', target, args, callOptions),
    externalQuery: (target, args, callOptions) => callExternal('query', target, args, callOptions),
    live(target, args, handlers, liveOptions) {
      const ref = resolveEntry(options.api, 'liveQuery', target);
      liveConnection ??= createLiveConnection({
        ...options.live,
        url: `${baseUrl}/live`,
        headers: () => requestHeaders(options, 'text/event-stream'),
        fetch: () => options.fetch ?? globalThis.fetch,
      });
      return liveConnection.subscribe(ref.name, args, handlers as LiveHandlers<unknown>, liveOptions);
    },
  };
}


/** The answer's `liveRevisions` (a runtime without a live hub sends none: empty). */
function liveRevisionsOf(body: Record<string, unknown>): number[] {
  return Array.isArray(body.liveRevisions) ? body.liveRevisions.filter((revision): revision is number => typeof revision === 'number') : [];
}
