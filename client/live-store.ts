import type { FwError } from './errors.ts';
import type { LiveHandlers, LiveStatus, LiveSubscription } from './live.ts';

/** What a subscriber sees of one live subscription; a new object whenever something changed. */
export interface LiveSnapshot {
  /** The last result, kept while reconnecting; undefined before the first snapshot and after a reset. */
  readonly data: unknown;
  /** The last failure; cleared by the next snapshot or when the subscription is live again. */
  readonly error: FwError | undefined;
  readonly status: LiveStatus;
  readonly revision: number | undefined;
}

/** How to open one live subscription (e.g. `client.live(ref, args, handlers)`). */
export interface LiveSource {
  open(handlers: LiveHandlers<unknown>): LiveSubscription;
}

/**
 * The live subscriptions of every component under one provider, shaped for `useSyncExternalStore`:
 * one subscription per key, shared by its subscribers.
 */
export interface LiveStore {
  /** Subscribes to `key`, opening it with `source` unless it is open already. */
  subscribe(key: string, source: LiveSource, listener: () => void): () => void;
  getSnapshot(key: string): LiveSnapshot;
}

interface Entry {
  snapshot: LiveSnapshot;
  // Tokens rather than listeners: the same listener may subscribe twice (StrictMode), each counts once.
  readonly subscriptions: Set<{ listener: () => void }>;
  subscription: LiveSubscription | undefined;
}

const connectingSnapshot: LiveSnapshot = Object.freeze({ data: undefined, error: undefined, status: 'connecting', revision: undefined });

/**
 * Creates a live store; a provider owns one. A key whose last subscriber leaves is closed at the end
 * of the tick, so StrictMode's unsubscribe/resubscribe keeps the one subscription it had.
 *
 * @example
 *   const store = createLiveStore();
 *   const stop = store.subscribe(key, { open: (handlers) => client.live('liveNotes', {}, handlers) }, render);
 */
export function createLiveStore(): LiveStore {
  const entries = new Map<string, Entry>();

  function update(entry: Entry, change: Partial<LiveSnapshot>): void {
    entry.snapshot = Object.freeze({ ...entry.snapshot, ...change });
    for (const { listener } of [...entry.subscriptions]) listener();
  }

  function open(entry: Entry, source: LiveSource): LiveSubscription {
    return source.open({
      onData: (data, revision) => update(entry, { data, revision, error: undefined }),
      onReset: () => update(entry, { data: undefined, revision: undefined }),
      onError: (error) => update(entry, { error }),
      onStatus: (status) => update(entry, status === 'live' ? { status, error: undefined } : { status }),
    });
  }

  return {
    subscribe(key, source, listener) {
      let entry = entries.get(key);
      if (!entry) {
        entry = { snapshot: connectingSnapshot, subscriptions: new Set(), subscription: undefined };
        entries.set(key, entry);
      }
      const subscribed = entry;
      const token = { listener };
      subscribed.subscriptions.add(token);
      subscribed.subscription ??= open(subscribed, source);
      return () => {
        if (!subscribed.subscriptions.delete(token) || subscribed.subscriptions.size > 0) return;
        queueMicrotask(() => {
          if (subscribed.subscriptions.size > 0 || entries.get(key) !== subscribed) return;
          entries.delete(key);
          subscribed.subscription?.close();
        });
      };
    },

    getSnapshot: (key) => entries.get(key)?.snapshot ?? connectingSnapshot,
  };
}
