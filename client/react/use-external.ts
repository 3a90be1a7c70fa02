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
import { externalTable } from '../external-keys.ts';
import { resolveExternal } from '../resolve-external.ts';
import type { FwContext } from './context.ts';
import { type UseCommandResult, useCommandCall } from './use-command.ts';
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

/** Builds `useExternalCommand` for one api: `useCommand` for an external service's command; its service's queries refresh on success. */
export function createUseExternalCommand<A extends ApiShape>(api: A, { useFwContext }: FwContext<A>): UseExternalCommand<A> {
  return function useExternalCommand(target) {
    const { client, store } = useFwContext('useExternalCommand');
    const ref = resolveExternal(api, 'command', target as never);
    return useCommandCall((args) => client.externalCommand(ref as never, args as never), () => store.invalidate([externalTable(ref)])) as never;
  };
}
