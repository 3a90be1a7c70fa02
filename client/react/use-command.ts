import { useCallback, useRef, useState } from 'react';
import type { ApiShape, CommandRefOf, CommandTarget, InputOf, ResultOf } from '../api-types.ts';
import { FwError } from '../errors.ts';
import { applyOptimistic, type OptimisticUpdate } from '../optimistic.ts';
import { resolveEntry } from '../resolve-entry.ts';
import type { FwContext } from './context.ts';

export interface UseCommandResult<I, R> {
  /** Runs the command; never throws or rejects: the outcome goes to `data` / `error`. */
  mutate(args: I): void;
  /** Runs the command; resolves with its result once dependent queries are refreshed, rejects with FwError. */
  mutateAsync(args: I): Promise<R>;
  /** The result of the latest successful call. */
  data: R | undefined;
  /** The error of the latest failed call (with `diagnostics` for validation failures). */
  error: FwError | undefined;
  isPending: boolean;
  /** Back to the idle state; a call still in flight no longer updates it. */
  reset(): void;
}

export interface UseCommandOptions<A extends ApiShape, I> {
  /**
   * Changes loaded results at once, before the server answers (docs/live.md "Optimistic updates"):
   * rolled back if the command fails, replaced by the server's data once it includes the write.
   *
   * @example
   *   useCommand('createNote', { optimistic: (store, args) => store.setLive('liveNotes', {}, (notes) => [...notes, { title: args.title }]) })
   */
  optimistic?: OptimisticUpdate<A, I>;
  /** How long a live layer waits, after the answer, for the snapshot with the command's write (default 3000 ms). */
  optimisticSettleMs?: number;
}

export type UseCommand<A extends ApiShape> = <T extends CommandTarget<A>>(
  target: T,
  options?: UseCommandOptions<A, InputOf<CommandRefOf<A, T>>>,
) => UseCommandResult<InputOf<CommandRefOf<A, T>>, ResultOf<CommandRefOf<A, T>>>;

interface CommandState {
  data: unknown;
  error: FwError | undefined;
  isPending: boolean;
}

const idle: CommandState = { data: undefined, error: undefined, isPending: false };

/** Builds `useCommand` for one api. */
export function createUseCommand<A extends ApiShape>(api: A, { useFwContext }: FwContext<A>): UseCommand<A> {
  return function useCommand(target, options = {}) {
    const { client, store, liveStore, identity } = useFwContext('useCommand');
    const ref = resolveEntry(api, 'command', target);
    const { optimistic, optimisticSettleMs } = options;
    return useCommandCall(
      (args, onLiveRevisions) => client.command(ref, args as never, onLiveRevisions ? { onLiveRevisions } : undefined),
      // Every query reading what this command wrote is refreshed before the call counts as done.
      () => store.invalidate(ref.writes),
      optimistic
        ? (args) => applyOptimistic({ api, identity, liveStore, store, ...(optimisticSettleMs === undefined ? {} : { settleMs: optimisticSettleMs }) }, optimistic, args as never)
        : undefined,
    ) as never;
  };
}

/**
 * A command call's state for a hook: `run`, then `refresh` what it changed before the call counts as
 * done; with `layerOf`, an optimistic layer laid over the page's results at once (client/optimistic.ts),
 * settled by the revisions the command wrote and the refresh, rolled back when it fails. `mutate` and
 * `mutateAsync` keep their identity across renders and call the latest functions given.
 */
export function useCommandCall(
  run: (args: unknown, onLiveRevisions?: (written: readonly number[]) => void) => Promise<unknown>,
  refresh: () => Promise<void>,
  layerOf?: (args: unknown) => ReturnType<typeof applyOptimistic>,
): UseCommandResult<any, any> {
  // The latest functions without re-creating mutate: inline functions are new on every render.
  const latest = useRef({ run, refresh, layerOf });
  latest.current = { run, refresh, layerOf };
  const [state, setState] = useState(idle);
  // Only the latest call (or reset) may set state: an earlier call finishing late must not win.
  const latestCall = useRef(0);

  const mutateAsync = useCallback(async (args: unknown) => {
    const call = ++latestCall.current;
    const update = (next: CommandState) => {
      if (latestCall.current === call) setState(next);
    };
    update({ data: undefined, error: undefined, isPending: true });
    const { run, refresh, layerOf } = latest.current;
    const layer = layerOf?.(args);
    try {
      let revisions: readonly number[] | undefined;
      const result = await run(args, layer ? (written) => (revisions = written) : undefined);
      layer?.succeeded(revisions);
      layer?.settleQueries();
      await refresh();
      layer?.settled();
      update({ data: result, error: undefined, isPending: false });
      return result;
    } catch (thrown) {
      layer?.rollback();
      const error = FwError.from(thrown);
      update({ data: undefined, error, isPending: false });
      throw error;
    }
  }, []);
  const mutate = useCallback((args: unknown) => void mutateAsync(args).catch(() => {}), [mutateAsync]);
  const reset = useCallback(() => {
    latestCall.current++;
    setState(idle);
  }, []);

  return { ...state, mutate, mutateAsync, reset };
}
