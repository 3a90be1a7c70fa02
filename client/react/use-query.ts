import { useCallback, useSyncExternalStore } from 'react';
import type { ApiShape, InputOf, QueryRefOf, QueryTarget, ResultOf } from '../api-types.ts';
import { canonicalJson } from '../../runtime/core/canonical-json.ts';
import type { FwError } from '../errors.ts';
import type { QuerySnapshot } from '../query-store.ts';
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
    const enabled = options.enabled ?? true;
    // Keyed by value: inline `args` literals and inline refs give the same key on every render.
    const key = `${identity}\u0000${ref.name}\u0000${argsJson}`;
    const subscribe = useCallback(
      (listener: () => void) =>
        store.subscribe(key, { reads: ref.reads, load: (signal) => client.query(ref, JSON.parse(argsJson) as never, { signal }) }, listener),
      // ref and argsJson are captured by key; client by identity, which key contains.
      [store, key],
    );
    const getSnapshot = () => (enabled ? store.getSnapshot(key) : idleSnapshot);
    const snapshot = useSyncExternalStore(enabled ? subscribe : noSubscription, getSnapshot, getSnapshot);
    const refetch = useCallback(() => store.refetch(key), [store, key]);
    return { data: snapshot.data as never, error: snapshot.error, isLoading: snapshot.isLoading, refetch };
  };
}
