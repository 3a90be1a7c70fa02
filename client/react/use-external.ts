import { useCallback, useRef, useState } from 'react';
import type {
  ApiShape,
  ExternalArgsOf,
  ExternalCommandRefOf,
  ExternalCommandTarget,
  ExternalQueryRefOf,
  ExternalQueryTarget,
  ExternalResultOf,
} from '../api-types.ts';
import { canonicalJson } from '../../runtime/core/canonical-json.ts';
import { FwError } from '../errors.ts';
import { externalTable } from '../external-keys.ts';
import { resolveExternal } from '../resolve-external.ts';
import type { FwContext } from './context.ts';
import type { UseCommandResult } from './use-command.ts';
import { type UseQueryOptions, type UseQueryResult, useStoreQuery } from './use-query.ts';

export type UseExternalQuery<A extends ApiShape> = <T extends ExternalQueryTarget<A>>(
  target: T,
  args: ExternalArgsOf<ExternalQueryRefOf<A, T>>,
  options?: UseQueryOptions,
) => UseQueryResult<ExternalResultOf<ExternalQueryRefOf<A, T>>>;

export type UseExternalCommand<A extends ApiShape> = <T extends ExternalCommandTarget<A>>(
  target: T,
) => UseCommandResult<ExternalArgsOf<ExternalCommandRefOf<A, T>>, ExternalResultOf<ExternalCommandRefOf<A, T>>>;

/** Builds `useExternalQuery` for one api: `useQuery` for an external service's query, typed by its manifest. */
export function createUseExternalQuery<A extends ApiShape>(api: A, { useFwContext }: FwContext<A>): UseExternalQuery<A> {
  return function useExternalQuery(target, args, options = {}) {
    const { client, store, identity } = useFwContext('useExternalQuery');
    const ref = resolveExternal(api, 'query', target as never);
    const argsJson = canonicalJson(args);
    // Its own key space: a service's entry never shares a cache entry with an app query of the same name.
    return useStoreQuery(store, `${identity}\u0000external\u0000${ref.qualifiedName}\u0000${argsJson}`, options.enabled ?? true, () => ({
      reads: [externalTable(ref)],
      load: (signal) => client.externalQuery(ref as never, JSON.parse(argsJson) as never, { signal }),
    }));
  };
}

interface CommandState {
  data: unknown;
  error: FwError | undefined;
  isPending: boolean;
}

const idle: CommandState = { data: undefined, error: undefined, isPending: false };

/** Builds `useExternalCommand` for one api: `useCommand` for an external service's command; its service's queries refresh on success. */
export function createUseExternalCommand<A extends ApiShape>(api: A, { useFwContext }: FwContext<A>): UseExternalCommand<A> {
  return function useExternalCommand(target) {
    const { client, store } = useFwContext('useExternalCommand');
    const ref = resolveExternal(api, 'command', target as never);
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
          const result: unknown = await client.externalCommand(ref as never, args as never);
          await store.invalidate([externalTable(ref)]);
          update({ data: result, error: undefined, isPending: false });
          return result;
        } catch (thrown) {
          const error = FwError.from(thrown);
          update({ data: undefined, error, isPending: false });
          throw error;
        }
      },
      [client, store, ref.qualifiedName],
    );
    const mutate = useCallback((args: unknown) => void mutateAsync(args).catch(() => {}), [mutateAsync]);
    const reset = useCallback(() => {
      latestCall.current++;
      setState(idle);
    }, []);
    return { ...state, mutate, mutateAsync, reset } as never;
  };
}
