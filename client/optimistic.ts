import type { ApiShape, InputOf, LiveQueryRefOf, LiveQueryTarget, PageItemOf, PaginatedArgsOf, PaginatedLiveQueryTarget, QueryRefOf, QueryTarget, ResultOf } from './api-types.ts';
import { canonicalJson } from '../runtime/core/canonical-json.ts';
import type { LiveStore } from './live-store.ts';
import type { PageArgs, PageResult } from './paginated-live.ts';
import type { QueryStore } from './query-store.ts';
import { resolveEntry } from './resolve-entry.ts';

/** A new value, or a function of the current one (re-applied to every new server result while the command is in flight). */
export type Updater<T> = T | ((current: T) => T);

/**
 * What an optimistic update sees and changes: the results on the page (of this provider), never the
 * server. Only results that are loaded can change; `get*` answers undefined for the others.
 *
 * @example
 *   (store, args) => store.setLive('liveNotes', {}, (notes) => [...notes, { title: args.title }])
 */
export interface OptimisticLocalStore<A extends ApiShape> {
  getLive<T extends LiveQueryTarget<A>>(target: T, args: InputOf<LiveQueryRefOf<A, T>>): ResultOf<LiveQueryRefOf<A, T>> | undefined;
  setLive<T extends LiveQueryTarget<A>>(target: T, args: InputOf<LiveQueryRefOf<A, T>>, update: Updater<ResultOf<LiveQueryRefOf<A, T>>>): void;
  getQuery<T extends QueryTarget<A>>(target: T, args: InputOf<QueryRefOf<A, T>>): ResultOf<QueryRefOf<A, T>> | undefined;
  setQuery<T extends QueryTarget<A>>(target: T, args: InputOf<QueryRefOf<A, T>>, update: Updater<ResultOf<QueryRefOf<A, T>>>): void;
  /**
   * Changes every loaded page of a paginated liveQuery (args without `page`): `update` gets each page's
   * rows and its bounds — `page.cursor === null` is the first page, `isLast` the one loaded last.
   *
   * @example
   *   store.setPages('listTickets', { board }, (rows, { page }) => (page.cursor === null ? [ticket, ...rows] : rows))
   */
  setPages<T extends PaginatedLiveQueryTarget<A>>(
    target: T,
    args: PaginatedArgsOf<LiveQueryRefOf<A, T>>,
    update: (rows: PageItemOf<LiveQueryRefOf<A, T>>[], info: { page: PageArgs; isDone: boolean }) => PageItemOf<LiveQueryRefOf<A, T>>[],
  ): void;
}

/** `(store, args) => …`: applied at once when the command is called. */
export type OptimisticUpdate<A extends ApiShape, I> = (store: OptimisticLocalStore<A>, args: I) => void;

export interface OptimisticTargets {
  api: ApiShape;
  /** Runtime URL and identity, as the hooks key their entries. */
  identity: string;
  liveStore: LiveStore;
  store: QueryStore;
  /**
   * How long after the command's answer a live layer may wait for a snapshot carrying the command's
   * revision (default 3000 ms), see {@link OptimisticLayer.succeeded}.
   */
  settleMs?: number;
}

/** The layers one command call laid over the page; the command's outcome removes them. */
export interface OptimisticLayer {
  /**
   * The command failed: every layer goes now (rolled back to the server's data).
   */
  rollback(): void;
  /**
   * The command committed. `revisions` are the log revisions its transaction wrote, as the streams
   * show them (the answer's `liveRevisions`). A live layer goes with the first snapshot that includes
   * one of them — labelled with it, or listing it in `covers` (the writes that woke the rerun) — in
   * the same update, so the screen never shows the old state in between; at once if such a snapshot
   * came before the answer. A layer that sees none — the write did not change that result (an
   * unchanged result is not sent), or a slow client's snapshot was superseded before it was sent —
   * goes `settleMs` after the answer: the server's data shows then, which by that time includes the
   * write. Query layers go with the reload
   * `invalidate` starts (call {@link settleQueries} before it) and, for queries it does not reload,
   * when {@link settled} is called after it.
   */
  succeeded(revisions: readonly number[] | undefined): void;
  /** Marks query layers to go with their next load (call right before `store.invalidate(writes)`). */
  settleQueries(): void;
  /** After `invalidate`: query layers still there (queries that do not read the writes) go. */
  settled(): void;
}

let nextLayerId = 1;

/**
 * Runs an optimistic update against the loaded results and lays its changes over them, one layer per
 * result it changed, on top of the layers of earlier calls still in flight (call order).
 *
 * @example
 *   const layer = applyOptimistic(targets, (store) => store.setLive('liveNotes', {}, (notes) => [...notes, note]), args);
 *   try { const revisions = …; layer.succeeded(revisions); } catch { layer.rollback(); }
 */
export function applyOptimistic<A extends ApiShape, I>(targets: OptimisticTargets, update: OptimisticUpdate<A, I>, args: I): OptimisticLayer {
  const { api, identity, liveStore, store } = targets;
  const id = nextLayerId++;
  const liveKeys = new Set<string>();
  const queryKeys = new Set<string>();
  const keyOf = (name: string, entryArgs: unknown) => `${identity}\u0000${name}\u0000${canonicalJson(entryArgs ?? {})}`;
  const asFunction = (value: unknown) => (typeof value === 'function' ? (value as (current: unknown) => unknown) : () => value);
  const layOverLive = (key: string, apply: (data: unknown) => unknown) => {
    // One layer per key and call: a second change of the same result composes with the first.
    if (liveKeys.has(key)) liveStore.removeLayer(key, id);
    const before = layerFunctions.get(key);
    const composed = before ? (data: unknown) => apply(before(data)) : apply;
    layerFunctions.set(key, composed);
    if (liveStore.addLayer(key, id, composed)) liveKeys.add(key);
  };
  const layerFunctions = new Map<string, (data: unknown) => unknown>();
  const queryFunctions = new Map<string, (data: unknown) => unknown>();

  const local: OptimisticLocalStore<ApiShape> = {
    getLive: (target, entryArgs) => liveStore.getSnapshot(keyOf(resolveEntry(api, 'liveQuery', target).name, entryArgs)).data as never,
    setLive(target, entryArgs, value) {
      layOverLive(keyOf(resolveEntry(api, 'liveQuery', target).name, entryArgs), asFunction(value));
    },
    getQuery: (target, entryArgs) => store.getSnapshot(keyOf(resolveEntry(api, 'query', target).name, entryArgs)).data as never,
    setQuery(target, entryArgs, value) {
      const key = keyOf(resolveEntry(api, 'query', target).name, entryArgs);
      if (queryKeys.has(key)) store.removeLayer(key, id);
      const before = queryFunctions.get(key);
      const apply = asFunction(value);
      const composed = before ? (data: unknown) => apply(before(data)) : apply;
      queryFunctions.set(key, composed);
      if (store.addLayer(key, id, composed)) queryKeys.add(key);
    },
    setPages(target, pageArgs, change) {
      const name = resolveEntry(api, 'liveQuery', target).name;
      const prefix = `${identity}\u0000${name}\u0000`;
      const wanted = canonicalJson(pageArgs ?? {});
      for (const key of liveStore.keys()) {
        if (!key.startsWith(prefix)) continue;
        let full: Record<string, unknown>;
        try {
          full = JSON.parse(key.slice(prefix.length)) as Record<string, unknown>;
        } catch {
          continue;
        }
        const { page, ...rest } = full;
        if (page === undefined || canonicalJson(rest) !== wanted) continue;
        layOverLive(key, (data) => {
          const result = data as PageResult;
          return { ...result, page: change(result.page as never[], { page: page as PageArgs, isDone: result.isDone }) };
        });
      }
    },
  };

  try {
    update(local as unknown as OptimisticLocalStore<A>, args);
  } catch (error) {
    // A broken optimistic update must not stop the command: it runs, its result shows when it lands.
    console.warn('fw: the optimistic update threw; the command runs without it.', error);
  }

  const removeLive = () => {
    for (const key of liveKeys) liveStore.removeLayer(key, id);
  };
  // Snapshots are held while the command has not answered; a command that hangs must not freeze the
  // page: after settleMs they flow again (the layer stays on top until the answer).
  const unhold = setTimeout(() => {
    for (const key of liveKeys) liveStore.settleLayer(key, id, new Set());
  }, targets.settleMs ?? 3000);
  if (typeof unhold === 'object') unhold.unref?.();
  const removeQueries = () => {
    for (const key of queryKeys) store.removeLayer(key, id);
  };
  return {
    rollback() {
      clearTimeout(unhold);
      removeLive();
      removeQueries();
    },
    succeeded(revisions) {
      clearTimeout(unhold);
      const tokens = new Set(revisions ?? []);
      // Nothing written (or a runtime without live queries): no snapshot will bring the change.
      if (tokens.size === 0) return removeLive();
      for (const key of liveKeys) liveStore.settleLayer(key, id, tokens);
      // Bounded: a result the write never changes gets no snapshot at all.
      const timer = setTimeout(removeLive, targets.settleMs ?? 3000);
      if (typeof timer === 'object') timer.unref?.();
    },
    settleQueries() {
      for (const key of queryKeys) store.settleLayer(key, id);
    },
    settled: removeQueries,
  };
}
