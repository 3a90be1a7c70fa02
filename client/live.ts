/**
 * The live connection of one client: every live subscription travels on one multiplexed
 * `POST /live` stream (docs/live.md), reopened when the set of subscriptions changes and
 * reconnected with backoff when it breaks, each subscription resuming from its revision.
 */
import { backoffDelay } from '../runtime/core/backoff.ts';
import { canonicalJson } from '../runtime/core/canonical-json.ts';
import { logServerFailure } from './dev-console.ts';
import { FwError, unreachable } from './errors.ts';
import { type LiveEvent, type LiveRequestSubscription, parseLiveEvent } from './live-protocol.ts';
import { readEventStream } from './sse.ts';

/**
 * Where a live subscription stands:
 * - `connecting`: opened, waiting for its first snapshot (or `up-to-date` when resuming);
 * - `live`: receiving updates as they commit;
 * - `reconnecting`: it was live, then the stream broke or ended; the client reconnects with
 *   backoff and resumes from its revision, and the last data stays valid meanwhile;
 * - `closed`: it ended and receives nothing more: `close()` was called, the runtime ended it with a
 *   fatal error, or refused the whole request (a 4xx other than 408/429); the error went to `onError`.
 */
export type LiveStatus = 'connecting' | 'live' | 'reconnecting' | 'closed';

/** What a live subscription calls back with; every callback is optional except `onData`. */
export interface LiveHandlers<R> {
  /** The query's current result: on subscribing (as soon as it is known), then after every change. */
  /**
   * `covers`: revision tokens of the writes that woke the run which made this result (it includes
   * them), as a command's `liveRevisions` lists them; an optimistic update goes with the first result
   * that covers its write.
   */
  onData(result: R, revision: number, covers?: readonly number[]): void;
  /**
   * The runtime cannot resume from the revision held (older than its retained log): drop the data
   * you have, a fresh snapshot follows.
   */
  onReset?(): void;
  /**
   * A failure. When the status stays `connecting`/`live`/`reconnecting` it is passing: a re-run failed
   * (the next snapshot supersedes it) or the connection dropped (the client reconnects). With status
   * `closed` it ended the subscription.
   */
  onError?(error: FwError): void;
  /** The status changed (see {@link LiveStatus}); every subscription starts `connecting`. */
  onStatus?(status: LiveStatus): void;
}

export interface LiveOptions {
  /**
   * The revision of data you already hold (e.g. rendered on the server): when nothing it reads has
   * changed since, the runtime answers `up-to-date` instead of running the query, and `onData` waits
   * for the next change. Ignored when an identical subscription is already open on this client.
   */
  lastRevision?: number;
}

/** One open live subscription. */
export interface LiveSubscription {
  /** Ends it; when it was the connection's last subscription, the stream is closed. Idempotent. */
  close(): void;
  readonly status: LiveStatus;
  /** The revision of the last snapshot or `up-to-date`; undefined before the first one and after a reset. */
  readonly revision: number | undefined;
}

/** Reconnection backoff: full jitter, the ceiling doubling from `minRetryMs` to `maxRetryMs`. */
export interface LiveRetryOptions {
  /** The ceiling of the first reconnection delay (ms, default 250). */
  minRetryMs?: number;
  /** The largest reconnection delay (ms, default 15 000). */
  maxRetryMs?: number;
}

export interface LiveConnectionOptions extends LiveRetryOptions {
  /** The `POST /live` URL. */
  url: string;
  /** The request headers, computed for every (re)connect (tokens may have been refreshed). */
  headers(): Promise<Record<string, string>>;
  /** The fetch to use, looked up for every (re)connect. */
  fetch(): typeof globalThis.fetch;
  /** For tests: the jitter source (default `Math.random`). */
  random?: () => number;
}

/** The multiplexed live stream of one client. */
export interface LiveConnection {
  /** Adds a subscription to liveQuery `name`; identical ones (same name and args) share one stream entry. */
  subscribe(name: string, args: unknown, handlers: LiveHandlers<unknown>, options?: LiveOptions): LiveSubscription;
}

interface Entry {
  /** The wire key: the subscription's name in requests and events. */
  readonly key: string;
  /** Name and canonical args: identical subscriptions share the entry. */
  readonly identity: string;
  readonly name: string;
  readonly args: unknown;
  revision: number | undefined;
  /** The last result, boxed so that `null` results count as data. */
  result: { value: unknown } | undefined;
  status: LiveStatus;
  readonly listeners: Set<{ handlers: LiveHandlers<unknown> }>;
}

interface Stream {
  readonly controller: AbortController;
  /** The entries this request carries (a fatal error removes one). */
  readonly entries: Set<Entry>;
}

/** A callback that throws must not break the stream, nor go unnoticed: it is rethrown on its own. */
function safely(call: () => void): void {
  try {
    call();
  } catch (thrown) {
    queueMicrotask(() => {
      throw thrown;
    });
  }
}

/** Whether a request failure may clear up by itself: no response, a timeout, rate limits, server errors. */
function isRetryable(error: FwError): boolean {
  return error.status === 0 || error.status === 408 || error.status === 429 || error.status >= 500;
}

/**
 * Creates the live connection of one client. Nothing is sent until the first subscription; changes
 * made in the same tick are applied with one reopen, and the stream is aborted (no timers left) once
 * the last subscription closes.
 *
 * @example
 *   const live = createLiveConnection({ url: `${apiUrl}/live`, headers: async () => ({ 'content-type': 'application/json' }), fetch: () => fetch });
 *   const subscription = live.subscribe('liveNotes', {}, { onData: (notes, revision) => render(notes) });
 *   subscription.close();
 */
export function createLiveConnection(options: LiveConnectionOptions): LiveConnection {
  const backoff = { baseMs: options.minRetryMs ?? 250, capMs: options.maxRetryMs ?? 15_000, ...(options.random ? { random: options.random } : {}) };
  const entries = new Map<string, Entry>();
  const byKey = new Map<string, Entry>();
  let nextKey = 0;
  let stream: Stream | undefined;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let attempt = 0;
  let flushQueued = false;

  function emit(entry: Entry, call: (handlers: LiveHandlers<unknown>) => void): void {
    for (const { handlers } of [...entry.listeners]) safely(() => call(handlers));
  }

  function setStatus(entry: Entry, status: LiveStatus): void {
    if (entry.status === status) return;
    entry.status = status;
    emit(entry, (handlers) => handlers.onStatus?.(status));
  }

  function drop(entry: Entry): void {
    if (entries.get(entry.identity) === entry) entries.delete(entry.identity);
    byKey.delete(entry.key);
  }

  /** Ends a subscription for good: it is not sent again, and its listeners hear why. */
  function end(entry: Entry, error: FwError): void {
    drop(entry);
    emit(entry, (handlers) => handlers.onError?.(error));
    setStatus(entry, 'closed');
  }

  function scheduleFlush(): void {
    if (flushQueued) return;
    flushQueued = true;
    queueMicrotask(flush);
  }

  /** Brings the stream in line with the subscriptions: close, keep, or reopen it once. */
  function flush(): void {
    flushQueued = false;
    for (const entry of entries.values()) if (entry.listeners.size === 0) drop(entry);
    if (entries.size === 0) {
      stream?.controller.abort();
      stream = undefined;
      clearTimeout(retryTimer);
      retryTimer = undefined;
      attempt = 0;
      return;
    }
    // Waiting out a backoff: the reconnect carries the current set.
    if (retryTimer !== undefined) return;
    if (stream && stream.entries.size === entries.size && [...entries.values()].every((entry) => stream?.entries.has(entry))) return;
    stream?.controller.abort();
    const next: Stream = { controller: new AbortController(), entries: new Set(entries.values()) };
    stream = next;
    void run(next);
  }

  async function run(current: Stream): Promise<void> {
    const { signal } = current.controller;
    let headers: Record<string, string>;
    try {
      headers = await options.headers();
    } catch (thrown) {
      return finish(current, FwError.from(thrown));
    }
    if (signal.aborted) return;
    const subscriptions = [...current.entries].map(
      (entry): LiveRequestSubscription => ({
        key: entry.key,
        name: entry.name,
        args: entry.args,
        ...(entry.revision === undefined ? {} : { lastRevision: entry.revision }),
      }),
    );
    try {
      // Called detached: browsers refuse a fetch invoked on another object.
      const doFetch = options.fetch();
      const response = await doFetch(options.url, { method: 'POST', headers, body: JSON.stringify({ subscriptions }), signal });
      await readEventStream(response, { signal, onEvent: (event) => receive(current, parseLiveEvent(event)) });
      if (!signal.aborted) finish(current, undefined);
    } catch (thrown) {
      if (!signal.aborted) finish(current, thrown instanceof FwError ? thrown : unreachable(thrown, options.url, signal));
    }
  }

  function receive(current: Stream, event: LiveEvent | undefined): void {
    const entry = event && byKey.get(event.key);
    if (!event || !entry || !current.entries.has(entry)) return;
    // The stream works: the next failure starts the backoff from the bottom again.
    attempt = 0;
    switch (event.type) {
      case 'snapshot': {
        const result = { value: event.result };
        entry.revision = event.revision;
        entry.result = result;
        emit(entry, (handlers) => handlers.onData(result.value, event.revision, event.covers));
        setStatus(entry, 'live');
        return;
      }
      case 'up-to-date':
        entry.revision = event.revision;
        setStatus(entry, 'live');
        return;
      case 'reset':
        entry.revision = undefined;
        entry.result = undefined;
        emit(entry, (handlers) => handlers.onReset?.());
        return;
      case 'error':
        logServerFailure(event.error);
        if (event.fatal) {
          // The runtime already dropped it from this stream: no reopen needed.
          current.entries.delete(entry);
          end(entry, event.error);
        } else {
          emit(entry, (handlers) => handlers.onError?.(event.error));
        }
        return;
    }
  }

  /** The stream ended (`error` undefined) or failed: reconnect with backoff, or give up on a refusal. */
  function finish(current: Stream, error: FwError | undefined): void {
    if (stream !== current) return;
    stream = undefined;
    const carried = [...current.entries].filter((entry) => entries.get(entry.identity) === entry);
    if (error && !isRetryable(error)) {
      // The runtime refused this request (400, 401, 403…): the same request would fail the same way.
      for (const entry of carried) end(entry, error);
      scheduleFlush();
      return;
    }
    for (const entry of carried) {
      if (entry.status === 'live') setStatus(entry, 'reconnecting');
      if (error) emit(entry, (handlers) => handlers.onError?.(error));
    }
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      flush();
    }, backoffDelay(attempt++, backoff));
  }

  return {
    subscribe(name, args, handlers, subscribeOptions = {}) {
      const argsJson = canonicalJson(args ?? {});
      const identity = `${name}\u0000${argsJson}`;
      let entry = entries.get(identity);
      if (!entry) {
        const key = `s${(nextKey++).toString(36)}`;
        entry = {
          key,
          identity,
          name,
          // A copy: the caller may change its args object later.
          args: JSON.parse(argsJson) as unknown,
          revision: subscribeOptions.lastRevision,
          result: undefined,
          status: 'connecting',
          listeners: new Set(),
        };
        entries.set(identity, entry);
        byKey.set(key, entry);
      }
      const joined = entry;
      const listener = { handlers };
      joined.listeners.add(listener);
      scheduleFlush();
      // A late joiner gets the current result, after subscribe has returned.
      const known = joined.result;
      if (known && joined.revision !== undefined) {
        const revision = joined.revision;
        queueMicrotask(() => {
          if (joined.listeners.has(listener) && joined.result === known) safely(() => handlers.onData(known.value, revision));
        });
      }
      let closed = false;
      return {
        close() {
          if (closed) return;
          closed = true;
          joined.listeners.delete(listener);
          if (joined.listeners.size === 0) scheduleFlush();
        },
        get status() {
          return closed ? 'closed' : joined.status;
        },
        get revision() {
          return joined.revision;
        },
      };
    },
  };
}
