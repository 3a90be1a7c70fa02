import { computed, type ComputedRef, type MaybeRefOrGetter, shallowRef, toValue, watch } from 'vue';
import type { ApiShape, LiveQueryRefOf, PageItemOf, PaginatedArgsOf, PaginatedLiveQueryTarget } from '../api-types.ts';
import { canonicalJson } from '../../runtime/core/canonical-json.ts';
import type { FwError } from '../errors.ts';
import type { LiveStatus } from '../live.ts';
import { createPaginatedLive, type PaginatedLive, type PaginatedSnapshot, type PaginationStatus } from '../paginated-live.ts';
import { resolveEntry } from '../resolve-entry.ts';
import type { ReactiveArgs } from './composables.ts';
import { useFwContext } from './context.ts';

export interface UseFwPaginatedLiveQueryOptions {
  /** Rows of the first page, and of each `loadMore()` without a count. Default 20. */
  pageSize?: number;
  /** `false` holds the subscriptions back. Default true. */
  enabled?: MaybeRefOrGetter<boolean>;
}

export interface UseFwPaginatedLiveQueryResult<T> {
  /** The rows of every loaded page, in order; every page stays live. */
  results: ComputedRef<T[]>;
  status: ComputedRef<PaginationStatus>;
  isDone: ComputedRef<boolean>;
  /** True until the first page arrives. */
  isLoading: ComputedRef<boolean>;
  /** Loads the next page; false when a page is loading or nothing is left. */
  loadMore(numItems?: number): boolean;
  /** A page's failure; an `invalid_cursor` is answered by starting over from the first page. */
  error: ComputedRef<FwError | undefined>;
  liveStatus: ComputedRef<LiveStatus>;
  /** Reopens the pages whose subscription the server ended (`liveStatus` `closed`), as `useFwLiveQuery`'s `retry`. */
  retry(): void;
}

export type UseFwPaginatedLiveQuery<A extends ApiShape> = <T extends PaginatedLiveQueryTarget<A>>(
  target: T,
  args: ReactiveArgs<PaginatedArgsOf<LiveQueryRefOf<A, T>>>,
  options?: UseFwPaginatedLiveQueryOptions,
) => UseFwPaginatedLiveQueryResult<PageItemOf<LiveQueryRefOf<A, T>>>;

const loading: PaginatedSnapshot = Object.freeze({ results: Object.freeze([]), status: 'loadingFirstPage', isDone: false, error: undefined, liveStatus: 'connecting' });
const closed: PaginatedSnapshot = Object.freeze({ ...loading, liveStatus: 'closed' });

/**
 * `const { results, loadMore, isDone } = useFwPaginatedLiveQuery('listTickets', () => ({ board: board.value }), { pageSize: 20 })`:
 * the pages of a liveQuery that returns `paginate(…)`, every one live; new args start from the first page.
 */
export function useFwPaginatedLiveQueryOf(
  target: PaginatedLiveQueryTarget<ApiShape>,
  args: ReactiveArgs<unknown>,
  options: UseFwPaginatedLiveQueryOptions = {},
): UseFwPaginatedLiveQueryResult<any> {
  const { api, client, liveStore, identity, server } = useFwContext('useFwPaginatedLiveQuery');
  const ref = resolveEntry(api, 'liveQuery', target);
  const pageSize = options.pageSize ?? 20;
  const argsJson = computed(() => canonicalJson(toValue(args) ?? {}));
  const enabled = computed(() => toValue(options.enabled) ?? true);
  const snapshot = shallowRef<PaginatedSnapshot>(enabled.value ? loading : closed);
  let current: PaginatedLive | undefined;

  if (!server) {
    watch(
      [argsJson, enabled],
      ([json, on], _previous, onCleanup) => {
        current = undefined;
        if (!on) {
          snapshot.value = closed;
          return;
        }
        const pages = createPaginatedLive({
          liveStore,
          args: JSON.parse(json) as Record<string, unknown>,
          pageSize,
          keyOf: (pageArgs) => `${identity}\u0000${ref.name}\u0000${canonicalJson(pageArgs)}`,
          sourceOf: (pageArgs) => ({ open: (handlers) => client.live(ref, pageArgs as never, handlers) }),
        });
        current = pages;
        const stop = pages.subscribe(() => (snapshot.value = pages.getSnapshot()));
        snapshot.value = pages.getSnapshot();
        onCleanup(stop);
      },
      { immediate: true },
    );
  }

  return {
    results: computed(() => snapshot.value.results as unknown[]),
    status: computed(() => snapshot.value.status),
    isDone: computed(() => snapshot.value.isDone),
    isLoading: computed(() => snapshot.value.status === 'loadingFirstPage'),
    loadMore: (numItems) => current?.loadMore(numItems) ?? false,
    error: computed(() => snapshot.value.error),
    liveStatus: computed(() => snapshot.value.liveStatus),
    retry: () => current?.retry(),
  };
}
