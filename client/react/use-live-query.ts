import { useCallback, useSyncExternalStore } from 'react';
import type { ApiShape, InputOf, LiveQueryRefOf, LiveQueryTarget, ResultOf } from '../api-types.ts';
import { canonicalJson } from '../../runtime/core/canonical-json.ts';
import type { FwError } from '../errors.ts';
import type { LiveStatus } from '../live.ts';
import type { LiveSnapshot } from '../live-store.ts';
import { resolveEntry } from '../resolve-entry.ts';
import type { FwContext } from './context.ts';

export interface UseLiveQueryOptions {
  /** `false` holds the subscription back (nothing sent, status `closed`), e.g. until an id is known. Default true. */
  enabled?: boolean;
}

export interface UseLiveQueryResult<R> {
  /** The latest result, kept while reconnecting; undefined before the first snapshot. */
  data: R | undefined;
  /** The last failure: passing while status is not `closed` (a failed re-run, a lost connection), final when it is. */
  error: FwError | undefined;
  /** `connecting` → `live`; `reconnecting` while the stream is re-established; `closed` when ended or disabled. */
  status: LiveStatus;
  /** The log revision `data` reflects. */
  revision: number | undefined;
  /**
   * Reopens a subscription the server ended (status `closed`, e.g. refused with 403): status goes back
   * to `connecting`, the error clears once it is live. Does nothing while it is open or disabled.
   */
  retry(): void;
}

export type UseLiveQuery<A extends ApiShape> = <T extends LiveQueryTarget<A>>(
  target: T,
  args: InputOf<LiveQueryRefOf<A, T>>,
  options?: UseLiveQueryOptions,
) => UseLiveQueryResult<ResultOf<LiveQueryRefOf<A, T>>>;

const disabledSnapshot: LiveSnapshot = Object.freeze({ data: undefined, error: undefined, status: 'closed', revision: undefined });
const noSubscription = () => () => {};

/** Builds `useLiveQuery` for one api. */
export function createUseLiveQuery<A extends ApiShape>(api: A, { useFwContext }: FwContext<A>): UseLiveQuery<A> {
  return function useLiveQuery(target, args, options = {}) {
    const { client, liveStore, identity } = useFwContext('useLiveQuery');
    const ref = resolveEntry(api, 'liveQuery', target);
    const argsJson = canonicalJson(args ?? {});
    const enabled = options.enabled ?? true;
    // Keyed by value: inline `args` literals and inline refs give the same key on every render.
    const key = `${identity}\u0000${ref.name}\u0000${argsJson}`;
    const subscribe = useCallback(
      (listener: () => void) =>
        liveStore.subscribe(key, { open: (handlers) => client.live(ref, JSON.parse(argsJson) as never, handlers) }, listener),
      // ref and argsJson are captured by key; client by identity, which key contains.
      [liveStore, key],
    );
    const getSnapshot = () => (enabled ? liveStore.getSnapshot(key) : disabledSnapshot);
    const snapshot = useSyncExternalStore(enabled ? subscribe : noSubscription, getSnapshot, getSnapshot);
    const retry = useCallback(() => liveStore.retry(key), [liveStore, key]);
    return { data: snapshot.data as never, error: snapshot.error, status: snapshot.status, revision: snapshot.revision, retry };
  };
}
