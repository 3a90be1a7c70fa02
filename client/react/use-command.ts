import { useCallback, useRef, useState } from 'react';
import type { ApiShape, CommandRefOf, CommandTarget, InputOf, ResultOf } from '../api-types.ts';
import { FwError } from '../errors.ts';
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

export type UseCommand<A extends ApiShape> = <T extends CommandTarget<A>>(
  target: T,
) => UseCommandResult<InputOf<CommandRefOf<A, T>>, ResultOf<CommandRefOf<A, T>>>;

interface CommandState {
  data: unknown;
  error: FwError | undefined;
  isPending: boolean;
}

const idle: CommandState = { data: undefined, error: undefined, isPending: false };

/** Builds `useCommand` for one api. */
export function createUseCommand<A extends ApiShape>(api: A, { useFwContext }: FwContext<A>): UseCommand<A> {
  return function useCommand(target) {
    const { client, store } = useFwContext('useCommand');
    const ref = resolveEntry(api, 'command', target);
    const [state, setState] = useState(idle);
    // Only the latest call (or reset) may set state: an earlier call finishing late must not win.
    const latestCall = useRef(0);

    const mutateAsync = useCallback(
      async (args: unknown) => {
        const call = ++latestCall.current;
        const update = (next: CommandState) => {
          if (latestCall.current === call) setState(next);
        };
        update({ data: undefined, error: undefined, isPending: true });
        try {
          const result: unknown = await client.command(ref, args as never);
          // Every query reading what this command wrote is refreshed before the call counts as done.
          await store.invalidate(ref.writes);
          update({ data: result, error: undefined, isPending: false });
          return result;
        } catch (thrown) {
          const error = FwError.from(thrown);
          update({ data: undefined, error, isPending: false });
          throw error;
        }
      },
      [client, store, ref],
    );
    const mutate = useCallback((args: unknown) => void mutateAsync(args).catch(() => {}), [mutateAsync]);
    const reset = useCallback(() => {
      latestCall.current++;
      setState(idle);
    }, []);

    return { ...state, mutate, mutateAsync, reset } as never;
  };
}
