import { useCallback, useSyncExternalStore } from 'react';
import type { ApiShape, InputOf, QueryRefOf, QueryTarget, ResultOf } from '../api-types.ts';
import { canonicalJson } from '../../runtime/core/canonical-json.ts';
import type { FwError } from '../errors.ts';
import type { QuerySnapshot, QuerySource, QueryStore } from '../query-store.ts';
import { resolveEntry } from '../resolve-entry.ts';
import type { FwContext } from './context.ts';

export interface UseQueryOptions {
  /** `false` holds the query back (no request, `isLoading` false), e.g. until an id is known. Default true. */
  enabled?: boolean;
}

export interface UseQueryResult<R> {
  /** The last result (kept while refetching), undefined before the first one. */
  data: R | undefined;
  error: FwError | undefined;
  /** True until the first result or error arrives. */
  isLoading: boolean;
  /** Loads the query again (or joins the request in flight); errors go to `error`. */
  refetch(): Promise<void>;
}

export type UseQuery<A extends ApiShape> = <T extends QueryTarget<A>>(
  target: T,
  args: InputOf<QueryRefOf<A, T>>,
  options?: UseQueryOptions,
) => UseQueryResult<ResultOf<QueryRefOf<A, T>>>;

const idleSnapshot: QuerySnapshot = Object.freeze({ data: undefined, error: undefined, isLoading: false });
const noSubscription = () => () => {};

/** Builds `useQuery` for one api. */
export function createUseQuery<A extends ApiShape>(api: A, { useFwContext }: FwContext<A>): UseQuery<A> {
  return function useQuery(target, args, options = {}) {
    const { client, store, identity } = useFwContext('useQuery');
    const ref = resolveEntry(api, 'query', target);
    const argsJson = canonicalJson(args);
    // Keyed by value: inline `args` literals and inline refs give the same key on every render.
    return useStoreQuery(store, `${identity}\u0000${ref.name}\u0000${argsJson}`, options.enabled ?? true, () => ({
      reads: ref.reads,
      load: (signal) => client.query(ref, JSON.parse(argsJson) as never, { signal }),
    }));
  };
}

/**
 * One entry of the query store under `key`, for a hook: subscribed while `enabled`, loaded with the
 * source `sourceOf` makes (read once per key: whatever it captures must be part of the key).
 */
export function useStoreQuery<R>(store: QueryStore, key: string, enabled: boolean, sourceOf: () => QuerySource): UseQueryResult<R> {
  const subscribe = useCallback(
    (listener: () => void) => store.subscribe(key, sourceOf(), listener),
    // The source is captured by key (and the client by the identity in it).
    [store, key],
  );
  const getSnapshot = () => (enabled ? store.getSnapshot(key) : idleSnapshot);
  const snapshot = useSyncExternalStore(enabled ? subscribe : noSubscription, getSnapshot, getSnapshot);
  const refetch = useCallback(() => store.refetch(key), [store, key]);
  return { data: snapshot.data as R | undefined, error: snapshot.error, isLoading: snapshot.isLoading, refetch };
}
