import { useCallback, useMemo, useSyncExternalStore } from 'react';
import type { ApiShape, LiveQueryRefOf, PageItemOf, PaginatedArgsOf, PaginatedLiveQueryTarget } from '../api-types.ts';
import { canonicalJson } from '../../runtime/core/canonical-json.ts';
import type { FwError } from '../errors.ts';
import type { LiveStatus } from '../live.ts';
import { createPaginatedLive, type PaginatedSnapshot, type PaginationStatus } from '../paginated-live.ts';
import { resolveEntry } from '../resolve-entry.ts';
import type { FwContext } from './context.ts';

export interface UsePaginatedLiveQueryOptions {
  /** Rows of the first page, and of each `loadMore()` without a count. Default 20. */
  pageSize?: number;
  /** `false` holds the subscriptions back (nothing sent). Default true. */
  enabled?: boolean;
}

export interface UsePaginatedLiveQueryResult<T> {
  /** The rows of every loaded page, in order; every page stays live. */
  results: T[];
  /** `loadingFirstPage` → `canLoadMore` ⇄ `loadingMore`, or `exhausted`. */
  status: PaginationStatus;
  isDone: boolean;
  /** True until the first page arrives. */
  isLoading: boolean;
  /** Loads the next page (`numItems` rows, default the page size); false when a page is loading or nothing is left. */
  loadMore(numItems?: number): boolean;
  /** A page's failure; an `invalid_cursor` is answered by starting over from the first page. */
  error: FwError | undefined;
  /** The stream's status, as `useLiveQuery` reports it. */
  liveStatus: LiveStatus;
  /** Reopens the pages whose subscription the server ended (`liveStatus` `closed`), as `useLiveQuery`'s `retry`. */
  retry(): void;
}

export type UsePaginatedLiveQuery<A extends ApiShape> = <T extends PaginatedLiveQueryTarget<A>>(
  target: T,
  // NoInfer: T comes from the target alone (args that do not fit must not widen it to any ref).
  args: NoInfer<PaginatedArgsOf<LiveQueryRefOf<A, T>>>,
  options?: UsePaginatedLiveQueryOptions,
) => UsePaginatedLiveQueryResult<PageItemOf<LiveQueryRefOf<A, T>>>;

const disabled: PaginatedSnapshot = Object.freeze({ results: Object.freeze([]), status: 'loadingFirstPage', isDone: false, error: undefined, liveStatus: 'closed' });
const noSubscription = () => () => {};

/** Builds `usePaginatedLiveQuery` for one api. */
export function createUsePaginatedLiveQuery<A extends ApiShape>(api: A, { useFwContext }: FwContext<A>): UsePaginatedLiveQuery<A> {
  return function usePaginatedLiveQuery(target, args, options = {}) {
    const { client, liveStore, identity } = useFwContext('usePaginatedLiveQuery');
    const ref = resolveEntry(api, 'liveQuery', target);
    const argsJson = canonicalJson(args ?? {});
    const pageSize = options.pageSize ?? 20;
    const enabled = options.enabled ?? true;
    // New args or page size: a new list from the first page (the old pages close with their last subscriber).
    const pages = useMemo(
      () =>
        createPaginatedLive({
          liveStore,
          args: JSON.parse(argsJson) as Record<string, unknown>,
          pageSize,
          keyOf: (pageArgs) => `${identity}\u0000${ref.name}\u0000${canonicalJson(pageArgs)}`,
          sourceOf: (pageArgs) => ({ open: (handlers) => client.live(ref, pageArgs as never, handlers) }),
        }),
      // ref is captured by its name; client by identity.
      [liveStore, identity, ref.name, argsJson, pageSize],
    );
    const subscribe = useCallback((listener: () => void) => pages.subscribe(listener), [pages]);
    const getSnapshot = () => (enabled ? pages.getSnapshot() : disabled);
    const snapshot = useSyncExternalStore(enabled ? subscribe : noSubscription, getSnapshot, getSnapshot);
    const loadMore = useCallback((numItems?: number) => pages.loadMore(numItems), [pages]);
    const retry = useCallback(() => pages.retry(), [pages]);
    return {
      results: snapshot.results as never,
      status: snapshot.status,
      isDone: snapshot.isDone,
      isLoading: snapshot.status === 'loadingFirstPage',
      loadMore,
      error: snapshot.error,
      liveStatus: snapshot.liveStatus,
      retry,
    };
  };
}
