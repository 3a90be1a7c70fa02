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
  /**
   * Subscribes to `key`, opening it with `source` unless it is open already. A key whose subscription
   * ended (status `closed`, e.g. the server refused it) is reopened; one still connecting or live is
   * shared (StrictMode's second subscribe keeps it).
   */
  subscribe(key: string, source: LiveSource, listener: () => void): () => void;
  /**
   * Reopens the key's subscription when it ended (status `closed`: the server refused or ended it), with
   * the source it was opened with: status goes back to `connecting`; data and error are kept until the
   * new one answers (the error clears once live). Nothing happens while it is open (`connecting`, `live`,
   * `reconnecting`: the client reconnects by itself) or when no one is subscribed to `key`.
   */
  retry(key: string): void;
  /** The key's server data with every optimistic layer applied on top, in the order they were added. */
  getSnapshot(key: string): LiveSnapshot;
  /** The keys open now (optimistic updates look for the pages of a paginated liveQuery). */
  keys(): string[];
  /**
   * Lays `apply` over the key's data until removed or settled (optimistic-layers.ts); false when the
   * key is not open, so there is nothing on screen to change. Layers apply in `id` order.
   */
  addLayer(key: string, id: number, apply: (data: unknown) => unknown): boolean;
  /**
   * The layer's command committed with these revisions (tokens as the stream shows them): the layer
   * goes, in the same update as the data, with the first snapshot carrying or covering one of them —
   * at once if one came already since the layer was added.
   */
  settleLayer(key: string, id: number, revisions: ReadonlySet<number>): void;
  removeLayer(key: string, id: number): void;
}

/** One optimistic change over a key's data. */
interface Layer {
  readonly id: number;
  readonly apply: (data: unknown) => unknown;
  /** Revisions of the snapshots received since it was added. */
  readonly seen: Set<number>;
  /** Set when the command committed: the revisions whose snapshot includes its write. Until then it is pending. */
  settledBy: ReadonlySet<number> | undefined;
}

interface Entry {
  /** What the server sent; `snapshot` is it with the layers applied. */
  base: LiveSnapshot;
  layers: Layer[];
  /**
   * The latest snapshot received while a layer's command had not answered: shown once it has (or
   * failed). Before the answer fw cannot tell whether a snapshot includes the write; shown at once,
   * one that does would show the change twice (data plus layer) until the answer.
   */
  held: { data: unknown; revision: number } | undefined;
  snapshot: LiveSnapshot;
  // Tokens rather than listeners: the same listener may subscribe twice (StrictMode), each counts once.
  readonly subscriptions: Set<{ listener: () => void }>;
  subscription: LiveSubscription | undefined;
  /** Identifies the subscription whose callbacks count (see `open`). */
  opened: object | undefined;
  /** How the key was opened last; `retry` opens it again with it. */
  source: LiveSource | undefined;
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
    entry.base = Object.freeze({ ...entry.base, ...change });
    render(entry);
  }

  function render(entry: Entry): void {
    const { base, layers } = entry;
    // Layers change data the server sent; before the first snapshot there is nothing to change.
    const data = base.data === undefined || layers.length === 0 ? base.data : applyLayers(layers, base.data);
    entry.snapshot = data === base.data ? base : Object.freeze({ ...base, data });
    for (const { listener } of [...entry.subscriptions]) listener();
  }

  function received(entry: Entry, data: unknown, revision: number, covers: readonly number[] = []): void {
    seen(entry, revision, covers);
    if (entry.layers.some((layer) => layer.settledBy === undefined)) {
      entry.held = { data, revision };
      return;
    }
    entry.held = undefined;
    // A snapshot that includes a layer's write replaces the layer in the same update: no flash of the old
    // state. Any snapshot since one carrying the write includes it too (a group's runs are in order), so
    // one seen while held and replaced by a later one counts.
    entry.layers = entry.layers.filter((layer) => !includesWrite(layer));
    update(entry, { data, revision, error: undefined });
  }

  /** A snapshot arrived: its revision and the writes it covers count as seen by every layer. */
  function seen(entry: Entry, revision: number, covers: readonly number[]): void {
    for (const layer of entry.layers) {
      layer.seen.add(revision);
      for (const covered of covers) layer.seen.add(covered);
    }
  }

  /** Shows the held snapshot once no layer waits for its answer (settled layers it includes go with it). */
  function release(entry: Entry, layersChanged: boolean): void {
    const { held } = entry;
    if (held && !entry.layers.some((layer) => layer.settledBy === undefined)) received(entry, held.data, held.revision);
    else if (layersChanged) render(entry);
  }

  function open(entry: Entry, source: LiveSource): LiveSubscription {
    // Callbacks of a subscription the entry no longer holds (replaced by a retry) are ignored; they may
    // come while `open` runs, before `entry.subscription` is set, hence the token.
    const token = {};
    entry.opened = token;
    const current = () => entry.opened === token;
    entry.source = source;
    return source.open({
      onData: (data, revision, covers) => current() && received(entry, data, revision, covers),
      onReset: () => {
        if (!current()) return;
        entry.held = undefined;
        update(entry, { data: undefined, revision: undefined });
      },
      onError: (error) => current() && update(entry, { error }),
      onStatus: (status) => current() && update(entry, status === 'live' ? { status, error: undefined } : { status }),
    });
  }

  /** Closes the entry's ended subscription (its callbacks are ignored from now on) and opens it again. */
  function reopen(entry: Entry, source: LiveSource): void {
    const ended = entry.subscription;
    entry.opened = undefined;
    entry.subscription = undefined;
    ended?.close();
    entry.held = undefined;
    update(entry, { status: 'connecting' });
    entry.subscription = open(entry, source);
  }

  return {
    subscribe(key, source, listener) {
      let entry = entries.get(key);
      if (!entry) {
        entry = {
          base: connectingSnapshot,
          layers: [],
          held: undefined,
          snapshot: connectingSnapshot,
          subscriptions: new Set(),
          subscription: undefined,
          opened: undefined,
          source: undefined,
        };
        entries.set(key, entry);
      }
      const subscribed = entry;
      const token = { listener };
      subscribed.subscriptions.add(token);
      // An ended subscription is reopened for a new subscriber (e.g. a remount after the server refused
      // it); a connecting or live one is shared.
      if (!subscribed.subscription) subscribed.subscription = open(subscribed, source);
      else if (subscribed.base.status === 'closed') reopen(subscribed, source);
      return () => {
        if (!subscribed.subscriptions.delete(token) || subscribed.subscriptions.size > 0) return;
        queueMicrotask(() => {
          if (subscribed.subscriptions.size > 0 || entries.get(key) !== subscribed) return;
          entries.delete(key);
          subscribed.subscription?.close();
        });
      };
    },

    retry(key) {
      const entry = entries.get(key);
      if (entry?.source && entry.subscriptions.size > 0 && entry.base.status === 'closed') reopen(entry, entry.source);
    },

    getSnapshot: (key) => entries.get(key)?.snapshot ?? connectingSnapshot,

    keys: () => [...entries.keys()],

    addLayer(key, id, apply) {
      const entry = entries.get(key);
      if (!entry) return false;
      entry.layers = [...entry.layers, { id, apply, seen: new Set<number>(), settledBy: undefined }].sort((a, b) => a.id - b.id);
      render(entry);
      return true;
    },

    settleLayer(key, id, revisions) {
      const layer = entries.get(key)?.layers.find((candidate) => candidate.id === id);
      if (!layer) return;
      const entry = entries.get(key)!;
      layer.settledBy = revisions;
      // A snapshot already shown that carries the write (snapshots flowed after settleMs): the layer goes now.
      const included = entry.held === undefined && includesWrite(layer);
      if (included) entry.layers = entry.layers.filter((other) => other !== layer);
      release(entry, included);
    },

    removeLayer(key, id) {
      const entry = entries.get(key);
      if (!entry || !entry.layers.some((layer) => layer.id === id)) return;
      entry.layers = entry.layers.filter((layer) => layer.id !== id);
      release(entry, true);
    },
  };
}

/** Whether a snapshot carrying one of the layer's command's revisions was received since it was added. */
function includesWrite(layer: Layer): boolean {
  const revisions = layer.settledBy;
  return revisions !== undefined && revisions.size > 0 && [...layer.seen].some((revision) => revisions.has(revision));
}

/** Applies layers in order; one whose update throws (it did not expect this data) is skipped, not fatal to the page. */
export function applyLayers(layers: ReadonlyArray<{ apply: (data: unknown) => unknown }>, data: unknown): unknown {
  let value = data;
  for (const layer of layers) {
    try {
      value = layer.apply(value);
    } catch (error) {
      console.warn('fw: an optimistic update threw; it is skipped for this data.', error);
    }
  }
  return value;
}
