/**
 * fw's React bindings: a provider and hooks bound to one app's generated api.
 *
 * @example
 *   // web/src/lib/fw.ts
 *   import { createFwReact } from 'fwjs/react';
 *   import { api } from '../../../src/fw/_generated/api.ts';
 *   export const { FwProvider, useCommand, useQuery, useLiveQuery, useFwRuntime } = createFwReact(api);
 */
import type { ReactElement } from 'react';
import type { ApiShape } from '../api-types.ts';
import type { FwClient } from '../client.ts';
import { createFwContext } from './context.ts';
import { createFwProvider, type FwProviderProps } from './provider.ts';
import { createUseCommand, type UseCommand } from './use-command.ts';
import { createUseExternalCommand, createUseExternalQuery, type UseExternalCommand, type UseExternalQuery } from './use-external.ts';
import { createUseFwRuntime, type UseFwRuntime } from './use-fw-runtime.ts';
import { createUseLiveQuery, type UseLiveQuery } from './use-live-query.ts';
import { createUsePaginatedLiveQuery, type UsePaginatedLiveQuery } from './use-paginated-live-query.ts';
import { createUseQuery, type UseQuery } from './use-query.ts';

export interface FwReact<A extends ApiShape> {
  /** Mount once in the app layout: `<FwProvider apiUrl="http://127.0.0.1:3100" devAuth={…}>`. */
  FwProvider: (props: FwProviderProps) => ReactElement;
  /** `const { mutate, error, isPending } = useCommand('createNote')`; queries reading its writes refresh on success. */
  useCommand: UseCommand<A>;
  /** `const { data, error, isLoading } = useQuery('listNotes', {})`; identical queries share one request. */
  useQuery: UseQuery<A>;
  /**
   * `const { data, error, status, revision } = useLiveQuery('liveNotes', {})`: data pushed by the
   * runtime whenever a write it depends on commits. Identical live queries share one subscription, and
   * every subscription under the provider shares one stream.
   */
  useLiveQuery: UseLiveQuery<A>;
  /** `const { data, error, isLoading } = useExternalQuery('tickets.listTickets', {})`: an external service's query, typed by its manifest. */
  useExternalQuery: UseExternalQuery<A>;
  /** `const { mutate } = useExternalCommand('tickets.createTicket')`; the service's queries refresh on success. */
  useExternalCommand: UseExternalCommand<A>;
  /**
   * `const { results, loadMore, isDone, status } = usePaginatedLiveQuery('listTickets', { board }, { pageSize: 20 })`
   * for a liveQuery that returns `paginate(…)`: every loaded page stays live, with no row twice or
   * missing at page boundaries (docs/live.md "Pagination").
   */
  usePaginatedLiveQuery: UsePaginatedLiveQuery<A>;
  /** The provider's typed client, for calls outside the hooks (`await client.query(…)`). */
  useFwClient: () => FwClient<A>;
  /**
   * The provider's runtime URL and identity headers, for requests the hooks do not make, e.g. an AI SDK chat:
   * `const runtime = useFwRuntime(); new DefaultChatTransport({ api: runtime.apiUrl + '/ai/agents/chat', headers: () => runtime.headers() })`.
   */
  useFwRuntime: UseFwRuntime;
}

/**
 * Binds the provider and hooks to an api object. Each call has its own context, so apps and tests
 * never share state.
 *
 * @example
 *   const { FwProvider, useQuery, useLiveQuery } = createFwReact(api);
 *   function Notes() { const { data } = useQuery('listNotes', {}); return data?.map((n) => n.title).join(', '); }
 *   function LiveNotes() {
 *     const { data, status } = useLiveQuery('liveNotes', {});
 *     if (data === undefined) return status === 'closed' ? 'unavailable' : 'loading…';
 *     return `${data.map((n) => n.title).join(', ')}${status === 'reconnecting' ? ' (reconnecting)' : ''}`;
 *   }
 */
export function createFwReact<A extends ApiShape>(api: A): FwReact<A> {
  const context = createFwContext<A>();
  return {
    FwProvider: createFwProvider(api, context),
    useCommand: createUseCommand(api, context),
    useQuery: createUseQuery(api, context),
    useLiveQuery: createUseLiveQuery(api, context),
    useExternalQuery: createUseExternalQuery(api, context),
    useExternalCommand: createUseExternalCommand(api, context),
    usePaginatedLiveQuery: createUsePaginatedLiveQuery(api, context),
    useFwClient: () => context.useFwContext('useFwClient').client,
    useFwRuntime: createUseFwRuntime(context),
  };
}

export { FwError } from '../errors.ts';
export type { DevAuth, FwClient, GetToken } from '../client.ts';
export type { LiveRetryOptions, LiveStatus } from '../live.ts';
export type { FwProviderProps } from './provider.ts';
export type { UseExternalCommand, UseExternalQuery } from './use-external.ts';
export type { UseCommand, UseCommandOptions, UseCommandResult } from './use-command.ts';
export type { OptimisticLocalStore, OptimisticUpdate, Updater } from '../optimistic.ts';
export type { FwRuntime, UseFwRuntime } from './use-fw-runtime.ts';
export type { UseLiveQuery, UseLiveQueryOptions, UseLiveQueryResult } from './use-live-query.ts';
export type { UsePaginatedLiveQuery, UsePaginatedLiveQueryOptions, UsePaginatedLiveQueryResult } from './use-paginated-live-query.ts';
export type { PaginationStatus } from '../paginated-live.ts';
export type { UseQuery, UseQueryOptions, UseQueryResult } from './use-query.ts';
