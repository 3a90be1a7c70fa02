/**
 * fw's React bindings: a provider and hooks bound to one app's generated api.
 *
 * @example
 *   // web/src/lib/fw.ts
 *   import { createFwReact } from 'fw/react';
 *   import { api } from '../../../src/fw/_generated/api.ts';
 *   export const { FwProvider, useCommand, useQuery } = createFwReact(api);
 */
import type { ReactElement } from 'react';
import type { ApiShape } from '../api-types.ts';
import type { FwClient } from '../client.ts';
import { createFwContext } from './context.ts';
import { createFwProvider, type FwProviderProps } from './provider.ts';
import { createUseCommand, type UseCommand } from './use-command.ts';
import { createUseQuery, type UseQuery } from './use-query.ts';

export interface FwReact<A extends ApiShape> {
  /** Mount once in the app layout: `<FwProvider apiUrl="http://127.0.0.1:3100" devAuth={…}>`. */
  FwProvider: (props: FwProviderProps) => ReactElement;
  /** `const { mutate, error, isPending } = useCommand('createNote')`; queries reading its writes refresh on success. */
  useCommand: UseCommand<A>;
  /** `const { data, error, isLoading } = useQuery('listNotes', {})`; identical queries share one request. */
  useQuery: UseQuery<A>;
  /** The provider's typed client, for calls outside the hooks (`await client.query(…)`). */
  useFwClient: () => FwClient<A>;
}

/**
 * Binds the provider and hooks to an api object. Each call has its own context, so apps and tests
 * never share state.
 *
 * @example
 *   const { FwProvider, useQuery } = createFwReact(api);
 *   function Notes() { const { data } = useQuery('listNotes', {}); return data?.map((n) => n.title).join(', '); }
 */
export function createFwReact<A extends ApiShape>(api: A): FwReact<A> {
  const context = createFwContext<A>();
  return {
    FwProvider: createFwProvider(api, context),
    useCommand: createUseCommand(api, context),
    useQuery: createUseQuery(api, context),
    useFwClient: () => context.useFwContext('useFwClient').client,
  };
}

export { FwError } from '../errors.ts';
export type { DevAuth, FwClient, GetToken } from '../client.ts';
export type { FwProviderProps } from './provider.ts';
export type { UseCommand, UseCommandResult } from './use-command.ts';
export type { UseQuery, UseQueryOptions, UseQueryResult } from './use-query.ts';
