import { computed, type ComputedRef, type MaybeRefOrGetter, shallowRef, type ShallowRef, toValue, watch } from 'vue';
import type {
  ApiShape,
  CommandRefOf,
  CommandTarget,
  ExternalArgsOf,
  ExternalCommandRefOf,
  ExternalCommandTarget,
  ExternalQueryRefOf,
  ExternalQueryTarget,
  ExternalResultOf,
  InputOf,
  LiveQueryRefOf,
  LiveQueryTarget,
  QueryRefOf,
  QueryTarget,
  ResultOf,
} from '../api-types.ts';
import { canonicalJson } from '../../runtime/core/canonical-json.ts';
import { FwError } from '../errors.ts';
import { applyOptimistic, type OptimisticUpdate } from '../optimistic.ts';
import type { LiveStatus } from '../live.ts';
import type { LiveSnapshot } from '../live-store.ts';
import type { QuerySnapshot, QuerySource, QueryStore } from '../query-store.ts';
import { externalTable } from '../external-keys.ts';
import { resolveExternal } from '../resolve-external.ts';
import { resolveEntry } from '../resolve-entry.ts';
import { useFwContext } from './context.ts';

/** Args as a composable takes them: a value, a ref, a getter or a reactive object; changes re-run the query. */
export type ReactiveArgs<T> = MaybeRefOrGetter<T>;

export interface UseFwCommandResult<I, R> {
  /** Runs the command; never throws or rejects: the outcome goes to `data` / `error`. */
  mutate(args: I): void;
  /** Runs the command; resolves with its result once dependent queries are refreshed, rejects with FwError. */
  mutateAsync(args: I): Promise<R>;
  /** The result of the latest successful call. */
  data: Readonly<ShallowRef<R | undefined>>;
  /** The error of the latest failed call (with `diagnostics` for validation failures). */
  error: Readonly<ShallowRef<FwError | undefined>>;
  isPending: Readonly<ShallowRef<boolean>>;
  /** Back to the idle state; a call still in flight no longer updates it. */
  reset(): void;
}

export interface UseFwQueryOptions {
  /** `false` holds the query back (no request, `isLoading` false), e.g. until an id is known. Default true. */
  enabled?: MaybeRefOrGetter<boolean>;
}

export interface UseFwQueryResult<R> {
  /** The last result (kept while refetching), undefined before the first one. */
  data: ComputedRef<R | undefined>;
  error: ComputedRef<FwError | undefined>;
  /** True until the first result or error arrives. */
  isLoading: ComputedRef<boolean>;
  /** Loads the query again (or joins the request in flight); errors go to `error`. */
  refetch(): Promise<void>;
}

export interface UseFwLiveQueryOptions {
  /** `false` holds the subscription back (nothing sent, status `closed`). Default true. */
  enabled?: MaybeRefOrGetter<boolean>;
}

export interface UseFwLiveQueryResult<R> {
  /** The latest result, kept while reconnecting; undefined before the first snapshot. */
  data: ComputedRef<R | undefined>;
  /** The last failure: passing while status is not `closed`, final when it is. */
  error: ComputedRef<FwError | undefined>;
  /** `connecting` → `live`; `reconnecting` while the stream is re-established; `closed` when ended or disabled. */
  status: ComputedRef<LiveStatus>;
  /** The log revision `data` reflects. */
  revision: ComputedRef<number | undefined>;
  /**
   * Reopens a subscription the server ended (status `closed`, e.g. refused with 403): status goes back
   * to `connecting`, the error clears once it is live. Does nothing while it is open or disabled.
   */
  retry(): void;
}

export interface UseFwCommandOptions<A extends ApiShape, I> {
  /**
   * Changes loaded results at once, before the server answers (docs/live.md "Optimistic updates"):
   * rolled back if the command fails, replaced by the server's data once it includes the write.
   */
  optimistic?: OptimisticUpdate<A, I>;
  /** How long a live layer waits, after the answer, for the snapshot with the command's write (default 3000 ms). */
  optimisticSettleMs?: number;
}

export type UseFwCommand<A extends ApiShape> = <T extends CommandTarget<A>>(
  target: T,
  options?: UseFwCommandOptions<A, InputOf<CommandRefOf<A, T>>>,
) => UseFwCommandResult<InputOf<CommandRefOf<A, T>>, ResultOf<CommandRefOf<A, T>>>;

export type UseFwQuery<A extends ApiShape> = <T extends QueryTarget<A>>(
  target: T,
  args: ReactiveArgs<InputOf<QueryRefOf<A, T>>>,
  options?: UseFwQueryOptions,
) => UseFwQueryResult<ResultOf<QueryRefOf<A, T>>>;

export type UseFwExternalQuery<A extends ApiShape> = <T extends ExternalQueryTarget<A>>(
  target: T,
  args: ReactiveArgs<ExternalArgsOf<ExternalQueryRefOf<A, T>>>,
  options?: UseFwQueryOptions,
) => UseFwQueryResult<ExternalResultOf<ExternalQueryRefOf<A, T>>>;

export type UseFwExternalCommand<A extends ApiShape> = <T extends ExternalCommandTarget<A>>(
  target: T,
) => UseFwCommandResult<ExternalArgsOf<ExternalCommandRefOf<A, T>>, ExternalResultOf<ExternalCommandRefOf<A, T>>>;

export type UseFwLiveQuery<A extends ApiShape> = <T extends LiveQueryTarget<A>>(
  target: T,
  args: ReactiveArgs<InputOf<LiveQueryRefOf<A, T>>>,
  options?: UseFwLiveQueryOptions,
) => UseFwLiveQueryResult<ResultOf<LiveQueryRefOf<A, T>>>;

const idleQuery: QuerySnapshot = Object.freeze({ data: undefined, error: undefined, isLoading: false });
const loadingQuery: QuerySnapshot = Object.freeze({ data: undefined, error: undefined, isLoading: true });
const closedLive: LiveSnapshot = Object.freeze({ data: undefined, error: undefined, status: 'closed', revision: undefined });
const connectingLive: LiveSnapshot = Object.freeze({ data: undefined, error: undefined, status: 'connecting', revision: undefined });

/**
 * `const { mutate, data, error, isPending } = useFwCommand(api.commands.createNote)`: queries reading
 * what the command writes refresh on success.
 */
export function useFwCommandOf(target: CommandTarget<ApiShape>, options: UseFwCommandOptions<ApiShape, any> = {}): UseFwCommandResult<any, any> {
  const { api, client, store, liveStore, identity } = useFwContext('useFwCommand');
  const ref = resolveEntry(api, 'command', target);
  const { optimistic, optimisticSettleMs } = options;
  return useCommandCall(
    (args, onLiveRevisions) => client.command(ref, args as never, onLiveRevisions ? { onLiveRevisions } : undefined),
    // Every query reading what this command wrote is refreshed before the call counts as done.
    () => store.invalidate(ref.writes),
    optimistic
      ? (args) => applyOptimistic({ api, identity, liveStore, store, ...(optimisticSettleMs === undefined ? {} : { settleMs: optimisticSettleMs }) }, optimistic, args)
      : undefined,
  );
}

/** `const { mutate } = useFwExternalCommand('tickets.createTicket')`: the service's queries refresh on success. */
export function useFwExternalCommandOf(target: ExternalCommandTarget<ApiShape>): UseFwCommandResult<any, any> {
  const { api, client, store } = useFwContext('useFwExternalCommand');
  const ref = resolveExternal(api, 'command', target);
  return useCommandCall((args) => client.externalCommand(ref as never, args as never), () => store.invalidate([externalTable(ref)]));
}

/**
 * A command call's state: `run`, then `refresh` what it changed before the call counts as done; with
 * `layerOf`, an optimistic layer laid over the page's results at once (client/optimistic.ts), settled
 * by the revisions the command wrote and the refresh, rolled back when it fails.
 */
function useCommandCall(
  run: (args: unknown, onLiveRevisions?: (written: readonly number[]) => void) => Promise<unknown>,
  refresh: () => Promise<void>,
  layerOf?: (args: unknown) => ReturnType<typeof applyOptimistic>,
): UseFwCommandResult<any, any> {
  const data = shallowRef<unknown>();
  const error = shallowRef<FwError>();
  const isPending = shallowRef(false);
  // Only the latest call (or reset) may set state: an earlier call finishing late must not win.
  let latestCall = 0;
  const set = (call: number, next: { data: unknown; error: FwError | undefined; isPending: boolean }) => {
    if (call !== latestCall) return;
    data.value = next.data;
    error.value = next.error;
    isPending.value = next.isPending;
  };

  async function mutateAsync(args: unknown): Promise<unknown> {
    const call = ++latestCall;
    set(call, { data: undefined, error: undefined, isPending: true });
    const layer = layerOf?.(args);
    try {
      let revisions: readonly number[] | undefined;
      const result = await run(args, layer ? (written) => (revisions = written) : undefined);
      layer?.succeeded(revisions);
      layer?.settleQueries();
      await refresh();
      layer?.settled();
      set(call, { data: result, error: undefined, isPending: false });
      return result;
    } catch (thrown) {
      layer?.rollback();
      const failure = FwError.from(thrown);
      set(call, { data: undefined, error: failure, isPending: false });
      throw failure;
    }
  }

  return {
    mutate: (args) => void mutateAsync(args).catch(() => {}),
    mutateAsync,
    data,
    error,
    isPending,
    reset() {
      set(++latestCall, { data: undefined, error: undefined, isPending: false });
    },
  };
}

/**
 * `const { data, error, isLoading } = useFwQuery(api.queries.listNotes, () => ({ prefix: search.value }))`:
 * identical queries share one request; new args (by value) load again.
 */
export function useFwQueryOf(target: QueryTarget<ApiShape>, args: ReactiveArgs<unknown>, options: UseFwQueryOptions = {}): UseFwQueryResult<any> {
  const context = useFwContext('useFwQuery');
  const ref = resolveEntry(context.api, 'query', target);
  return useStoreQuery(context, ref.name, args, options, (json) => ({ reads: ref.reads, load: (signal) => context.client.query(ref, JSON.parse(json) as never, { signal }) }));
}

/**
 * `const { data, error, isLoading } = useFwExternalQuery('tickets.listTickets', {})`: an external
 * service's query, typed by its manifest; the service's queries refresh after its commands.
 */
export function useFwExternalQueryOf(target: ExternalQueryTarget<ApiShape>, args: ReactiveArgs<unknown>, options: UseFwQueryOptions = {}): UseFwQueryResult<any> {
  const context = useFwContext('useFwExternalQuery');
  const ref = resolveExternal(context.api, 'query', target);
  // Its own key space: a service's entry never shares a cache entry with an app query of the same name.
  return useStoreQuery(context, `external\u0000${ref.qualifiedName}`, args, options, (json) => ({
    reads: [externalTable(ref)],
    load: (signal) => context.client.externalQuery(ref as never, JSON.parse(json) as never, { signal }),
  }));
}

/** One query-store entry per (identity, `name`, args by value), followed while enabled; new args load again. */
function useStoreQuery(
  { store, identity, server }: { store: QueryStore; identity: string; server: boolean },
  name: string,
  args: ReactiveArgs<unknown>,
  options: UseFwQueryOptions,
  sourceOf: (argsJson: string) => QuerySource,
): UseFwQueryResult<any> {
  // Keyed by value: a new object with the same args is the same query.
  const argsJson = computed(() => canonicalJson(toValue(args) ?? {}));
  const enabled = computed(() => toValue(options.enabled) ?? true);
  const key = computed(() => `${identity}\u0000${name}\u0000${argsJson.value}`);
  const snapshot = shallowRef<QuerySnapshot>(enabled.value ? loadingQuery : idleQuery);

  if (!server) {
    watch(
      [key, enabled],
      ([currentKey, on], _previous, onCleanup) => {
        if (!on) {
          snapshot.value = idleQuery;
          return;
        }
        const stop = store.subscribe(currentKey, sourceOf(argsJson.value), () => (snapshot.value = store.getSnapshot(currentKey)));
        snapshot.value = store.getSnapshot(currentKey);
        // Runs when the args change, and when the component unmounts or the effect scope is disposed.
        onCleanup(stop);
      },
      { immediate: true },
    );
  }

  return {
    data: computed(() => snapshot.value.data),
    error: computed(() => snapshot.value.error),
    isLoading: computed(() => snapshot.value.isLoading),
    refetch: () => (server || !enabled.value ? Promise.resolve() : store.refetch(key.value)),
  };
}

/**
 * `const { data, status } = useFwLiveQuery(api.liveQueries.liveNotes, {})`: data pushed by the runtime
 * whenever a write it depends on commits. Identical live queries share one subscription, and every
 * subscription of the app shares one `POST /live` stream.
 */
export function useFwLiveQueryOf(
  target: LiveQueryTarget<ApiShape>,
  args: ReactiveArgs<unknown>,
  options: UseFwLiveQueryOptions = {},
): UseFwLiveQueryResult<any> {
  const { api, client, liveStore, identity, server } = useFwContext('useFwLiveQuery');
  const ref = resolveEntry(api, 'liveQuery', target);
  const argsJson = computed(() => canonicalJson(toValue(args) ?? {}));
  const enabled = computed(() => toValue(options.enabled) ?? true);
  const key = computed(() => `${identity}\u0000${ref.name}\u0000${argsJson.value}`);
  const snapshot = shallowRef<LiveSnapshot>(enabled.value ? connectingLive : closedLive);

  if (!server) {
    watch(
      [key, enabled],
      ([currentKey, on], _previous, onCleanup) => {
        if (!on) {
          snapshot.value = closedLive;
          return;
        }
        const json = argsJson.value;
        const stop = liveStore.subscribe(
          currentKey,
          { open: (handlers) => client.live(ref, JSON.parse(json) as never, handlers) },
          () => (snapshot.value = liveStore.getSnapshot(currentKey)),
        );
        snapshot.value = liveStore.getSnapshot(currentKey);
        onCleanup(stop);
      },
      { immediate: true },
    );
  }

  return {
    data: computed(() => snapshot.value.data),
    error: computed(() => snapshot.value.error),
    status: computed(() => snapshot.value.status),
    revision: computed(() => snapshot.value.revision),
    retry: () => {
      if (!server && enabled.value) liveStore.retry(key.value);
    },
  };
}
