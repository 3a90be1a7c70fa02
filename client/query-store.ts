import { FwError } from './errors.ts';
import { applyLayers } from './live-store.ts';

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
  /** Lays `apply` over the key's data (optimistic-layers.ts); false when the key has no entry. Layers apply in `id` order. */
  addLayer(key: string, id: number, apply: (data: unknown) => unknown): boolean;
  /** The layer's command succeeded: it goes with the next load that ends (in the same update as its data). */
  settleLayer(key: string, id: number): void;
  removeLayer(key: string, id: number): void;
}

interface Layer {
  readonly id: number;
  readonly apply: (data: unknown) => unknown;
  /** Dropped by the next load that settles after this was set. */
  settled: boolean;
}

interface Entry {
  readonly source: QuerySource;
  /** What the server answered; `snapshot` is it with the layers applied. */
  base: QuerySnapshot;
  layers: Layer[];
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
    entry.base = snapshot;
    // A load that ends after a command succeeded includes its write: its layer goes in this same update.
    entry.layers = entry.layers.filter((layer) => !layer.settled);
    render(entry);
  }

  function render(entry: Entry): void {
    const { base, layers } = entry;
    const data = base.data === undefined || layers.length === 0 ? base.data : applyLayers(layers, base.data);
    entry.snapshot = data === base.data ? base : Object.freeze({ ...base, data });
    for (const { listener } of [...entry.subscriptions]) listener();
  }

  function load(entry: Entry): Promise<void> {
    entry.inFlight?.controller.abort();
    const controller = new AbortController();
    const done = entry.source.load(controller.signal).then(
      (data) => settle(entry, controller, { data, error: undefined, isLoading: false }),
      (error: unknown) => settle(entry, controller, { data: entry.base.data, error: FwError.from(error), isLoading: false }),
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
        entry = { source, base: loadingSnapshot, layers: [], snapshot: loadingSnapshot, subscriptions: new Set(), inFlight: undefined, gcTimer: undefined };
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

    addLayer(key, id, apply) {
      const entry = entries.get(key);
      if (!entry) return false;
      entry.layers = [...entry.layers, { id, apply, settled: false }].sort((a, b) => a.id - b.id);
      render(entry);
      return true;
    },

    settleLayer(key, id) {
      const layer = entries.get(key)?.layers.find((candidate) => candidate.id === id);
      if (layer) layer.settled = true;
    },

    removeLayer(key, id) {
      const entry = entries.get(key);
      if (!entry || !entry.layers.some((layer) => layer.id === id)) return;
      entry.layers = entry.layers.filter((layer) => layer.id !== id);
      render(entry);
    },
  };
}
