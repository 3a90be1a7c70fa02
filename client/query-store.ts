import { FwError } from './errors.ts';

/** What a subscriber sees of one query; a new object whenever something changed. */
export interface QuerySnapshot {
  readonly data: unknown;
  readonly error: FwError | undefined;
  /** True until the first result or error arrives. */
  readonly isLoading: boolean;
}

/** How to load one query, and the tables it reads. */
export interface QuerySource {
  readonly reads: readonly string[];
  load(signal: AbortSignal): Promise<unknown>;
}

export interface QueryStoreOptions {
  /** How long an entry with no subscribers is kept before it is dropped (ms, default 5 minutes). */
  gcTime?: number;
}

/**
 * A cache of query results shared by every component under one provider, shaped for
 * `useSyncExternalStore`. One entry per key: subscribers to the same key share one request.
 */
export interface QueryStore {
  /** Subscribes to `key`, loading it with `source` when it has no data or had no subscribers. */
  subscribe(key: string, source: QuerySource, listener: () => void): () => void;
  getSnapshot(key: string): QuerySnapshot;
  /** Loads `key` again, or joins the request already in flight. Never rejects. */
  refetch(key: string): Promise<void>;
  /** Reloads every subscribed query that reads one of `writes` (after a command). Never rejects. */
  invalidate(writes: readonly string[]): Promise<void>;
}

interface Entry {
  readonly source: QuerySource;
  snapshot: QuerySnapshot;
  // Tokens rather than listeners: the same listener may subscribe twice (StrictMode), each counts once.
  readonly subscriptions: Set<{ listener: () => void }>;
  inFlight: { controller: AbortController; done: Promise<void> } | undefined;
  gcTimer: ReturnType<typeof setTimeout> | undefined;
}

const loadingSnapshot: QuerySnapshot = Object.freeze({ data: undefined, error: undefined, isLoading: true });

/**
 * Creates a query store; a provider owns one, so nothing is shared between apps or tests.
 *
 * @example
 *   const store = createQueryStore();
 *   const stop = store.subscribe(key, { reads: ['notes'], load: (signal) => client.query('listNotes', {}, { signal }) }, render);
 */
export function createQueryStore(options: QueryStoreOptions = {}): QueryStore {
  const gcTime = options.gcTime ?? 5 * 60_000;
  const entries = new Map<string, Entry>();

  function settle(entry: Entry, controller: AbortController, snapshot: QuerySnapshot): void {
    // A superseded or collected request does not get the last word.
    if (entry.inFlight?.controller !== controller) return;
    entry.inFlight = undefined;
    entry.snapshot = snapshot;
    for (const { listener } of [...entry.subscriptions]) listener();
  }

  function load(entry: Entry): Promise<void> {
    entry.inFlight?.controller.abort();
    const controller = new AbortController();
    const done = entry.source.load(controller.signal).then(
      (data) => settle(entry, controller, { data, error: undefined, isLoading: false }),
      (error: unknown) => settle(entry, controller, { data: entry.snapshot.data, error: FwError.from(error), isLoading: false }),
    );
    entry.inFlight = { controller, done };
    return done;
  }

  function cancel(entry: Entry): void {
    entry.inFlight?.controller.abort();
    entry.inFlight = undefined;
  }

  function scheduleCollect(key: string, entry: Entry): void {
    entry.gcTimer = setTimeout(() => {
      if (entry.subscriptions.size > 0 || entries.get(key) !== entry) return;
      cancel(entry);
      entries.delete(key);
    }, gcTime);
    // An idle cache must not keep a Node process (SSR, scripts) alive.
    if (typeof entry.gcTimer === 'object') entry.gcTimer.unref?.();
  }

  return {
    subscribe(key, source, listener) {
      let entry = entries.get(key);
      if (!entry) {
        entry = { source, snapshot: loadingSnapshot, subscriptions: new Set(), inFlight: undefined, gcTimer: undefined };
        entries.set(key, entry);
      }
      clearTimeout(entry.gcTimer);
      entry.gcTimer = undefined;
      const subscription = { listener };
      entry.subscriptions.add(subscription);
      // First subscriber: load, or refresh what was cached while nobody watched. StrictMode's
      // unsubscribe/resubscribe finds the request in flight and joins it.
      if (entry.subscriptions.size === 1 && !entry.inFlight) void load(entry);
      const subscribed = entry;
      return () => {
        if (subscribed.subscriptions.delete(subscription) && subscribed.subscriptions.size === 0) {
          scheduleCollect(key, subscribed);
        }
      };
    },

    getSnapshot: (key) => entries.get(key)?.snapshot ?? loadingSnapshot,

    refetch(key) {
      const entry = entries.get(key);
      if (!entry) return Promise.resolve();
      return entry.inFlight?.done ?? load(entry);
    },

    async invalidate(writes) {
      const written = new Set(writes);
      const reloads: Promise<void>[] = [];
      for (const entry of entries.values()) {
        if (!entry.source.reads.some((table) => written.has(table))) continue;
        // Unwatched entries reload when next subscribed; a request that may predate the write is dropped.
        if (entry.subscriptions.size > 0) reloads.push(load(entry));
        else cancel(entry);
      }
      await Promise.all(reloads);
    },
  };
}
